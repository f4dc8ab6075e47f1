"""Hostile repositories (issue 32, item 1): links in the documentation tree that lead to files
of the building machine. Every source the builder reads (a folder, a git URL through
`context add`, an archive of a repository, a released artefact, `context-registry build` of
a git or zip definition) is built by the real CLI in a child process; the package built must
not contain the secret that lives only outside, and the build says what it skipped (or, for
an archive whose links leave it, refuses it in one line).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from . import hostile_http as web
from . import hostile_repos as hr
from .runner import REGISTRY, Outcome, assert_ok, assert_one_line_error, run
from .test_hostile_sources import npm_routes


def assert_no_secret(db: Path) -> None:
    """Neither the file's bytes nor any section's text holds the secret."""
    assert hr.SECRET.encode() not in db.read_bytes(), f"{db.name} holds text from outside the repository"
    with closing(sqlite3.connect(db)) as con:
        paths = [r[0] for r in con.execute("SELECT DISTINCT doc_path FROM chunks")]
    assert not any("secret" in p or "leak" in p for p in paths), paths


def installed(home: Path, name: str) -> Path:
    found = list((home / "packages").glob(f"local__{name}__*.db"))
    assert len(found) == 1, found
    return found[0]


# Tricks whose link lies outside what is read: the README beside the docs/ folder a project is
# narrowed to, and (for git, whose clone is sparse: root files and docs/ only) the gallery folder.
UNREAD = {"readme_link"}
UNREAD_BY_GIT = UNREAD | {"gallery_header"}


def assert_built_without_secret(o: Outcome, db: Path, trick: str, unread: set[str] = UNREAD) -> None:
    """Built, without the secret, and (for a link in the tree that was read) saying so."""
    assert_ok(o)
    assert_no_secret(db)
    if trick not in unread:
        assert "symbolic link" in o.stderr and "never followed" in o.stderr, f"no note about the links: {o}"


def registry_build(home: Path, tmp_path: Path, kind: str, url: str) -> tuple[Outcome, list[Path]]:
    """`context-registry build npm/hostile` of a one-definition packages.yaml: (outcome, files built)."""
    defs = tmp_path / "packages.yaml"
    defs.write_text(f"npm:\n  - name: hostile\n    source: {{type: {kind}, url: \"{url}\"}}\n", "utf-8")
    out = tmp_path / "out"
    o = run(["build", "npm/hostile", "--out", str(out), "-d", str(defs), "--no-embed"], home, timeout=90,
            program=REGISTRY)
    return o, list(out.glob("*.db"))


@pytest.mark.parametrize("trick", list(hr.TRICKS))
def test_folder(trick: str, home: Path, tmp_path: Path) -> None:
    repo = hr.repository(tmp_path / "repo", trick, hr.outside(tmp_path))
    o = run(["add", str(repo), "--name", "hostile", "--no-embed"], home, timeout=60)
    assert_built_without_secret(o, installed(home, "hostile"), trick)


@pytest.mark.parametrize("trick", list(hr.TRICKS))
def test_git_url(trick: str, home: Path, tmp_path: Path) -> None:
    repo = hr.git_repository(tmp_path / "repo", trick, hr.outside(tmp_path))
    o = run(["add", repo.as_uri(), "--name", "hostile", "--no-embed"], home, timeout=60)
    assert_built_without_secret(o, installed(home, "hostile"), trick, UNREAD_BY_GIT)


@pytest.mark.parametrize("trick", list(hr.TRICKS))
def test_registry_build_of_a_git_definition(trick: str, home: Path, tmp_path: Path) -> None:
    """`context-registry build` would publish what it built: the same promise."""
    repo = hr.git_repository(tmp_path / "repo", trick, hr.outside(tmp_path))
    o, built = registry_build(home, tmp_path, "git", repo.as_uri())
    assert len(built) == 1, o
    assert_built_without_secret(o, built[0], trick, UNREAD_BY_GIT)


@pytest.mark.parametrize("trick", list(hr.TRICKS))
def test_registry_build_of_a_zip_of_the_repository(trick: str, home: Path, tmp_path: Path) -> None:
    """An archive of the repository (as GitHub serves one) keeps the links as members: a link
    that leaves the archive refuses it in one line; one that stays inside is skipped, said so."""
    repo = hr.repository(tmp_path / "repo", trick, hr.outside(tmp_path))
    archive = tmp_path / "repo.zip"
    archive.write_bytes(hr.zip_of(repo))
    o, built = registry_build(home, tmp_path, "zip", archive.as_uri())
    if o.rc != 0:
        assert "outside" in assert_one_line_error(o) and not built
        return
    assert len(built) == 1, o
    assert_no_secret(built[0])
    assert "link" in o.stderr and "never created" in o.stderr, o


def test_released_artefact_with_a_link(home: Path, tmp_path: Path) -> None:
    """An npm tarball whose docs link to another page: built, the link never created, said
    so. (Links that leave a tarball refuse it: test_hostile_sources.py.)"""
    tarball = hr.tgz_with_inside_link()
    routes = npm_routes(tarball)
    with web.HostileServer(routes) as srv:
        o = run(["add", "npm:evil", "--no-embed"], home, timeout=60, env={"CONTEXT_NPM_REGISTRY_URL": srv.url})
    assert_ok(o)
    assert "1 symbolic or hard link" in o.stderr, o
    db = next((home / "packages").glob("npm__evil__1.0.0.db"))
    with closing(sqlite3.connect(db)) as con:
        assert {r[0] for r in con.execute("SELECT DISTINCT doc_path FROM chunks")} == {"docs/guide.md"}
