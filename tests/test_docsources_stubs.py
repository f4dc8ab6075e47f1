"""Type-only packages get their runtime library's docs (the ladder's `runtime` step), at the
release their version tracks, built under their own name and labelled with whose docs they are;
against the sync world's real local index, artefacts and git repository (tests/sync_fixtures.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import targz
from sync_fixtures import World, world, world_parts  # noqa: F401 - fixtures

from context_cli.api import open as open_package
from context_cli.api import search
from context_cli.sources.docsources.ladder import resolve
from context_cli.sources.docsources.stubs import Runtime, runtime_of, tracked_release
from context_cli.store.store import Store
from context_cli.surfaces.cli import cli


@pytest.mark.parametrize("registry,name,version,runtime", [
    ("npm", "@types/react", "19.2.18", Runtime("react", "19.2")),
    ("npm", "@types/babel__core", "7.20.5", Runtime("@babel/core", "7.20")),
    ("npm", "@types/lodash.throttle", "4.1.7", Runtime("lodash.throttle", "4.1")),
    ("npm", "@types/numeral", "0.0.28", Runtime("numeral", "0.0")),
    ("pip", "types-requests", "2.28.11.8", Runtime("requests", "2.28")),
    ("pip", "types-python-dateutil", "2.8.19.6", Runtime("python-dateutil", "2.8")),
    ("pip", "sqlalchemy-stubs", "0.4", None),  # a third party's numbering, not SQLAlchemy's
    ("npm", "react", "19.2.0", None),  # no stubs package
    ("npm", "types-react", "1.0.0", None),  # typeshed's naming is PyPI's only
    ("pip", "types", "1.0.0", None),
    ("npm", "@types/react", "latest", None),  # no release series to track
])
def test_stubs_names_map_to_their_runtime_library(registry: str, name: str, version: str, runtime: Runtime | None):
    assert runtime_of(registry, name, version) == runtime


def test_a_readme_only_stubs_package_is_retried_once_its_library_has_a_definition(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from context_cli.sources.docsources.catalogue import ENV
    from context_cli.sync.actions import definition_stamp

    catalogue = tmp_path / "packages.yaml"
    catalogue.write_text("npm:\n  - name: widget\n    source: {type: npm}\n"
                         "pip:\n  - name: requests\n    source: {type: pypi}\n")
    monkeypatch.setenv(ENV, str(catalogue))
    first = definition_stamp("npm", "@types/widget")
    assert first and definition_stamp("pip", "types-requests") and definition_stamp("npm", "widget")
    assert definition_stamp("npm", "@types/gadget") == "" and definition_stamp("npm", "@types/..") == ""
    catalogue.write_text("npm:\n  - name: widget\n    description: moved\n    source: {type: npm}\n")
    assert definition_stamp("npm", "@types/widget") not in ("", first)  # a changed definition: tried again


def test_the_newest_release_of_the_tracked_series_is_taken():
    doc = {"versions": {v: {} for v in ("19.1.9", "19.2.0", "19.2.3", "19.2.10-rc.1", "19.20.0", "2.19.0", "19.3.0")}}
    assert tracked_release("npm", doc, Runtime("react", "19.2")) == "19.2.3"
    assert tracked_release("npm", doc, Runtime("react", "0.0")) is None
    assert tracked_release("pip", {"releases": {"2.28.2": [], "2.28.10": [], "2.29.0": []}},
                           Runtime("requests", "2.28")) == "2.28.10"
    assert tracked_release("npm", {"versions": ["19.2.0"]}, Runtime("react", "19.2")) is None


def _types_package(world: World, name: str) -> None:
    """An @types package as DefinitelyTyped publishes it: declarations and a generated README."""
    short = name.rsplit("/", 1)[-1]
    tarball = targz({"package/package.json": json.dumps({"name": name, "types": "index.d.ts"}),
                     "package/README.md": f"# Installation\n> `npm install --save {name}`\n\n# Summary\n"
                                          f"This package contains type definitions for {short}.\n",
                     "package/index.d.ts": "export declare function parse(text: string): unknown;\n"})
    world.index.add(f"/tarballs/types-{short}.tgz", tarball)
    world.index.add(f"/{name.replace('/', '%2F')}", {"name": name, "versions": {v: {
        "repository": {"type": "git", "url": "https://github.com/acme/DefinitelyTyped.git",
                       "directory": f"types/{short}"},
        "dist": {"tarball": f"{world.index.url}/tarballs/types-{short}.tgz",
                 "shasum": hashlib.sha1(tarball).hexdigest()}} for v in ("1.0.3", "2.1.4")}})


def test_an_at_types_package_gets_its_librarys_docs_at_the_tracked_release(world: World):
    _types_package(world, "@types/readme-only")
    got = resolve("npm", "@types/readme-only", "1.0.3")
    try:
        assert got.step == "runtime" and not got.readme_only, got.tried()
        fetched = got.fetched
        assert (fetched.registry, fetched.name, fetched.version) == ("npm", "@types/readme-only", "1.0.3")
        assert fetched.meta["docs_version"] == "readme-only@1.0.0"
        assert fetched.meta["docs_ref"] == "https://github.com/acme/readme-only.git#v1.0.0"
        assert fetched.meta["docs_source"] == "runtime" and fetched.docs_path == "docs"
        assert (fetched.folder / "docs" / "guide.md").read_text().startswith("# Guide")
        assert "readme-only 1.0.0 (repository)" in got.attempts[-1].reason
    finally:
        got.fetched.cleanup()
    assert "/@types%2Freadme-only" not in world.index.log  # the runtime answered first


def test_a_typeshed_stub_gets_the_artefacts_docs_of_its_library(world: World):
    got = resolve("pip", "types-demo-lib", "1.0.0.5")
    try:
        assert got.step == "runtime" and got.fetched.name == "types-demo-lib"
        assert got.fetched.meta["docs_version"] == "demo-lib@1.0.0"
        assert got.fetched.meta["docs_ref"] == "pypi:demo-lib==1.0.0"
    finally:
        got.fetched.cleanup()


def test_a_library_with_only_a_readme_leaves_the_stubs_as_they_were(world: World):
    _types_package(world, "@types/readme-big")
    got = resolve("npm", "@types/readme-big", "2.1.4")
    try:
        assert got.step == "readme" and got.readme_only and "docs_version" not in got.fetched.meta
        assert "runtime: readme-big 2.1.0 has only a README" in got.tried()
        assert got.fetched.source_url == "npm:@types/readme-big@2.1.4"
    finally:
        got.fetched.cleanup()
    got = resolve("npm", "@types/readme-big", "1.0.3")  # readme-big has no 1.0 release
    got.fetched.cleanup()
    assert "runtime: readme-big has no release 1.0.x" in got.tried()


def test_sync_builds_stubs_under_their_own_name_and_says_whose_docs(world: World, tmp_path: Path):
    _types_package(world, "@types/readme-only")
    root = tmp_path / "app"
    root.mkdir()
    deps = {"@types/readme-only": "1.0.3"}
    (root / "package.json").write_text(json.dumps({"name": "app", "devDependencies": deps}))
    (root / "package-lock.json").write_text(json.dumps({"name": "app", "lockfileVersion": 3, "packages": {
        "": {"name": "app", "devDependencies": deps},
        "node_modules/@types/readme-only": {"version": "1.0.3", "dev": True}}}))
    result = CliRunner().invoke(cli, ["sync", str(root), "--json"], catch_exceptions=False)
    [row] = json.loads(result.output)["rows"]
    assert result.exit_code == 0 and row["docs"] == "docs" and row["docs_version"] == "readme-only@1.0.0"
    assert row["source"] == "https://github.com/acme/readme-only.git#v1.0.0"
    assert any("these docs cover readme-only@1.0.0" in n and "not exactly 1.0.3" in n for n in row["notes"])
    [entry] = json.loads((root / ".context" / "docs.lock").read_text())["packages"]
    assert (entry["name"], entry["version"], entry.get("docs")) == ("@types/readme-only", "1.0.3", None)
    with Store().open("npm/@types/readme-only@1.0.3") as pkg:  # the library's guide, the stubs' own API
        assert {c[0] for c in pkg.db.execute("SELECT doc_path FROM chunks")} == {"docs/guide.md", "index.d.ts"}
    info = CliRunner().invoke(cli, ["info", "npm/@types/readme-only@1.0.3"], catch_exceptions=False)
    assert "runtime: @types/readme-only@1.0.3: these docs cover readme-only@1.0.0" in info.output
    [inst] = [i for i in Store().installed() if i.id.qualified == "npm/@types/readme-only@1.0.3"]
    found = search("how do I parse text into a tree", [open_package(inst.path)])  # an answer says it too
    assert found.results and any("these docs cover readme-only@1.0.0" in n for n in found.notes), found.notes
