"""A small world for `context sync` tests (imported explicitly by them), all real and local:

* the real registry server on a loopback port, holding a few npm and pip packages;
* a stand-in for PyPI and npm on loopback (`CONTEXT_PYPI_URL`, `CONTEXT_NPM_REGISTRY_URL`)
  serving real sdists and tarballs made here;
* a real git repository with a version tag, named as the source repository of an npm package
  whose tarball carries only a README, and of a Hex package: the metadata says
  `https://github.com/acme/...`, and git's `url.<folder>.insteadOf` (a global config of the
  test's own) serves it from the local folder, as a `fetch` snapshot would be served;
* a Hex API stand-in (`CONTEXT_HEX_URL`) on the same loopback server.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from helpers import targz
from registry_fixtures import AUTH, ServerProcess, make_package, package_url
from route_server import Routes, serving

from context_cli.remote import client as remote_client

ON_SERVER = [("hex", "jason", "1.4.1"), ("npm", "zod", "3.22.4"), ("npm", "zod", "3.23.8"), ("npm", "@tanstack/react-query", "5.40.0"),
             ("pip", "httpx", "0.27.2"), ("pip", "httpx", "0.28.1")]




def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


Index = Routes  # the PyPI / npm / Hex stand-in
FORGE = "https://github.com/acme"  # what the metadata names; git reads it from the local folders


def serve_forge(monkeypatch: pytest.MonkeyPatch, folder: Path, config: Path) -> None:
    """Make git fetch `FORGE/<name>` from `folder/<name>`: a global config of the test's own
    with `url.<folder>.insteadOf`, and the file transport allowed for metadata URLs."""
    config.write_text(f'[url "{folder.as_uri()}/"]\n\tinsteadOf = {FORGE}/\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("CONTEXT_GIT_ALLOW_PROTOCOL", "file")


@dataclass
class World:
    server: ServerProcess
    index: Index
    repo: Path


def _fill_index(index: Index, repo: Path) -> None:
    sdist = targz({"demo-lib-1.0.0/PKG-INFO": "Name: demo-lib\nVersion: 1.0.0\n",
                   "demo-lib-1.0.0/README.md": "# demo-lib\n",
                   "demo-lib-1.0.0/docs/index.md": "# Demo lib\n\n## Streams\n\nUse `demo.stream()` to read lazily.\n"})
    index.add("/files/demo-lib-1.0.0.tar.gz", sdist)
    files = {"1.0.0": [{"filename": "demo-lib-1.0.0.tar.gz", "packagetype": "sdist", "yanked": False,
                        "url": f"{index.url}/files/demo-lib-1.0.0.tar.gz",
                        "digests": {"sha256": hashlib.sha256(sdist).hexdigest()}}],
             "1.1.0": [], "2.0.0": []}
    index.add("/pypi/demo-lib/json", {"info": {"name": "demo-lib", "summary": "A demo", "version": "2.0.0",
                                               "project_urls": {"Homepage": "https://example.com"}},
                                      "releases": files})
    tarball = targz({"package/package.json": '{"name": "readme-only", "version": "1.0.0"}',
                     "package/README.md": "# readme-only\n\nInstall it.\n"})
    index.add("/tarballs/readme-only-1.0.0.tgz", tarball)
    index.add("/readme-only", {
        "name": "readme-only", "dist-tags": {"latest": "1.0.0"},
        "versions": {"1.0.0": {"name": "readme-only", "version": "1.0.0",
                               "repository": {"type": "git", "url": f"git+{FORGE}/readme-only.git"},
                               "dist": {"tarball": f"{index.url}/tarballs/readme-only-1.0.0.tgz",
                                        "shasum": hashlib.sha1(tarball).hexdigest()}}}})


    readme = ("# readme-big\n\nA parser for config files.\n\n## Usage\n\nCall `load(path)` to read a file "
              "and `dump(data)` to write one back; both keep comments in place.\n")
    big = targz({"package/package.json": '{"name": "readme-big"}', "package/README.md": readme})
    index.add("/tarballs/readme-big-2.1.0.tgz", big)
    index.add("/readme-big", {"name": "readme-big", "versions": {"2.1.0": {
        "dist": {"tarball": f"{index.url}/tarballs/readme-big-2.1.0.tgz", "shasum": hashlib.sha1(big).hexdigest()}}}})
    scoped = targz({"package/package.json": '{"name": "@acme/widgets"}', "package/README.md": readme})
    index.add("/tarballs/widgets-2.0.0.tgz", scoped)
    index.add("/@acme%2Fwidgets", {"name": "@acme/widgets", "versions": {"2.0.0": {
        "repository": {"type": "git", "url": f"git+{FORGE}/mono.git",
                       "directory": "packages/widgets"},
        "dist": {"tarball": f"{index.url}/tarballs/widgets-2.0.0.tgz", "shasum": hashlib.sha1(scoped).hexdigest()}}}})
    index.add("/api/packages/tiny_ex", {"name": "tiny_ex", "releases": [{"version": "1.0.0"}, {"version": "0.9.0"}],
                                        "meta": {"links": {"GitHub": f"{FORGE}/readme-only"}}})


# A page is more than a title and a line (the ladder refuses a docs tree of stubs).
MORE = ("\nEach call reads the whole input first, so a file that is still being written is read again "
        "later. Errors name the line and the column where the input stopped making sense.\n")


def _make_repo(root: Path) -> Path:
    repo = root / "readme-only"
    git(root, "init", "-q", "-b", "main", str(repo))
    (repo / "docs").mkdir()
    (repo / "README.md").write_text("# readme-only\n")
    (repo / "package.json").write_text('{"name": "readme-only"}')
    (repo / "docs" / "guide.md").write_text("# Guide\n\n## Parsing\n\nCall `parse(text)` to get a tree; "
                                            "version 1.0.0 of the guide.\n" + MORE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs")
    git(repo, "tag", "v1.0.0")
    mono = root / "mono"  # a monorepo: tags named `<package>@<version>`, docs under the package
    git(root, "init", "-q", "-b", "main", str(mono))
    (mono / "packages" / "widgets" / "docs").mkdir(parents=True)
    (mono / "packages" / "widgets" / "package.json").write_text('{"name": "@acme/widgets"}')
    (mono / "packages" / "widgets" / "docs" / "usage.md").write_text(
        "# Widgets\n\n## Rendering\n\nCall `render(widget)` to draw a widget; version 2.0.0.\n" + MORE)
    (mono / "README.md").write_text("# acme monorepo\n")
    git(mono, "add", "-A")
    git(mono, "commit", "-q", "-m", "widgets")
    git(mono, "tag", "@acme/widgets@2.0.0")
    for folder in (repo, mono):  # forge URLs end in .git, and git's file transport keeps the name
        folder.with_name(folder.name + ".git").symlink_to(folder.name)
    return repo


def push(server: ServerProcess, tmp: Path, registry: str, name: str, version: str) -> None:
    pkg = make_package(tmp / f"{registry}-{name.replace('/', '_')}-{version}.db", name, version, registry=registry)
    r = requests.post(server.url + package_url(registry, name, version), data=pkg.read_bytes(),
                      headers=AUTH, timeout=10)
    assert r.status_code in (200, 201), r.text


@pytest.fixture(scope="module")
def world_parts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("sync-world")
    server = ServerProcess(tmp / "server-data").start()
    with serving(Index(), not_found=b'{"message": "Not Found"}') as index:
        for registry, name, version in ON_SERVER:
            push(server, tmp, registry, name, version)
        repo = _make_repo(tmp)
        _fill_index(index, repo)
        yield World(server, index, repo)
        server.stop()


@pytest.fixture
def world(world_parts: World, monkeypatch: pytest.MonkeyPatch) -> World:
    """The world, made the default registry server and package indexes for this test."""
    monkeypatch.setenv("CONTEXT_REGISTRY_URL", world_parts.server.url)
    monkeypatch.setenv("CONTEXT_PYPI_URL", world_parts.index.url)
    monkeypatch.setenv("CONTEXT_NPM_REGISTRY_URL", world_parts.index.url)
    monkeypatch.setenv("CONTEXT_HEX_URL", world_parts.index.url)
    monkeypatch.setattr(remote_client, "BACKOFF", 0.01)
    serve_forge(monkeypatch, world_parts.repo.parent, world_parts.repo.parent / "gitconfig")
    world_parts.index.log.clear()
    return world_parts
