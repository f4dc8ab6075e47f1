"""A small world for the ladder's site step (imported explicitly by its tests): an npm stand-in
on loopback whose tarballs carry only a README, a docs site with a build of version 1.2.0
(`/v1.2.0/docs/llms-full.txt`) beside its latest llms-full.txt, an unversioned site with an
llms.txt and `.md` pages, and a catalogue naming them (CONTEXT_DEFINITIONS)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import targz
from route_server import Routes, serving
from web_fixtures import Site, serve

LATEST = "# Guide\n\n## Streams\n\nCall `stream.open()` (new in 2.0) to read lazily.\n"
EXACT = "# Guide\n\n## Streams\n\nCall `stream.read()` to read lazily; version 1.2.0 of the guide.\n"


@dataclass
class World:
    index: Routes
    site: Site
    bare: Site  # an unversioned site with llms.txt and .md pages


def _npm(index: Routes, name: str, homepage: str | None = None) -> None:
    tarball = targz({"package/package.json": f'{{"name": "{name}"}}', "package/README.md": f"# {name}\n\nInstall it.\n"})
    index.add(f"/tarballs/{name}-1.2.0.tgz", tarball)
    meta = {"dist": {"tarball": f"{index.url}/tarballs/{name}-1.2.0.tgz", "shasum": hashlib.sha1(tarball).hexdigest()}}
    if homepage:
        meta["homepage"] = homepage
    index.add(f"/{name}", {"name": name, "dist-tags": {"latest": "1.2.0"}, "versions": {"1.2.0": meta}})


@pytest.fixture(scope="module")
def world_parts() -> Iterator[World]:
    site, bare = Site(), Site()
    site.add("/docs/llms-full.txt", LATEST, content_type="text/plain")
    site.add("/v1.2.0/docs/", "<html><body><h1>Docs 1.2.0</h1></body></html>")
    site.add("/v1.2.0/docs/llms-full.txt", EXACT, content_type="text/plain")
    bare.add("/llms.txt", "# Acme\n\n- [Guide](/guide.md): the guide\n- [API](/api.md): the API\n",
             content_type="text/plain")
    bare.add("/guide.md", LATEST, content_type="text/markdown")
    bare.add("/api.md", "# API\n\n## open\n\n`stream.open(path)` opens a stream.\n", content_type="text/markdown")
    bare.add("/", "<html><body><h1>Acme</h1></body></html>")
    with serving(Routes()) as index, serve(site), serve(bare):
        for name in ("exact", "latest-ok", "strict", "meta-site", "looping"):
            _npm(index, name, homepage="https://127.0.0.1/docs/" if name == "meta-site" else None)
        yield World(index, site, bare)


@pytest.fixture
def world(world_parts: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = world_parts
    w.site.add("/loop/", b"", status=302, headers={"Location": "/loop/"})
    (tmp_path / "packages.yaml").write_text(f"""npm:
  - name: exact
    source: {{type: npm}}
    site: "{w.site.base}/docs/"
  - name: latest-ok
    source: {{type: npm}}
    site: {{url: "{w.bare.base}/", latest: true}}
  - name: strict
    source: {{type: npm}}
    site: "{w.bare.base}/"
  - name: looping
    source: {{type: npm}}
    site: {{url: "{w.site.base}/loop/", latest: true}}
""")
    monkeypatch.setenv("CONTEXT_DEFINITIONS", str(tmp_path / "packages.yaml"))
    monkeypatch.setenv("CONTEXT_NPM_REGISTRY_URL", w.index.url)
    monkeypatch.setenv("CONTEXT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CONTEXT_HTTP_RETRIES", "0")
    return w


