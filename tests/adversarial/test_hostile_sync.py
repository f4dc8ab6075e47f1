"""`context sync` on hostile projects and against hostile indexes (issue 32, items 3, 9, 11):
the real CLI in a child process, a scripted registry server and package index on loopback.

The promises: a lockfile that expands (YAML aliases) or is too large is refused in one line,
bounded; a version of 5,000 digits, from a lockfile or an index, is an unusable version and
never an internal error; sync reads no file outside the project, so its lines can never be
shown; and no credential from a dependency URL reaches its output, table or JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from context_cli.sync.model import MAX_LOCKFILE_BYTES

from . import hostile_http as web
from . import hostile_projects as hpj
from .runner import Outcome, assert_bounded, assert_one_line_error, run

LONG = "1" * 5000


@pytest.fixture
def index() -> Iterator[web.HostileServer]:
    """A registry server and package indexes (PyPI, npm, Hex) that know only 5,000-digit versions."""
    routes: dict[str, web.Handler] = {
        "/search": lambda r: web.json_reply([{"name": "httpx", "registry": "pip", "version": LONG},
                                             {"name": "zod", "registry": "npm", "version": LONG}]),
        "/pypi/httpx/json": lambda r: web.json_reply({"info": {"name": "httpx", "version": LONG},
                                                      "releases": {LONG: [], "0.27.2": []}}),
        "/zod": lambda r: web.json_reply({"name": "zod", "dist-tags": {"latest": LONG}, "versions": {LONG: {}}}),
    }
    with web.HostileServer(routes) as srv:
        yield srv


def sync(project: Path, home: Path, *args: str, url: str = "http://127.0.0.1:9", timeout: float = 30) -> Outcome:
    """`context sync PROJECT --dry-run` with every server on loopback (port 9: nothing listens)."""
    env = {"CONTEXT_REGISTRY_URL": url, "CONTEXT_PYPI_URL": url, "CONTEXT_NPM_REGISTRY_URL": url,
           "CONTEXT_HEX_URL": url}
    return run(["sync", str(project), *(args or ("--dry-run",))], home, timeout=timeout, env=env)


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


# -- item 3: billion laughs, and a size cap on every lockfile --------------------------------

@pytest.mark.parametrize("make", [hpj.pnpm_laughs, hpj.yarn_berry_laughs], ids=["pnpm-lock.yaml", "yarn.lock"])
def test_yaml_aliases_refused(make, home: Path, tmp_path: Path) -> None:
    """Nine levels of nine aliases: 387 million strings. Before: minutes and gigabytes."""
    root = make(project(tmp_path))
    line = assert_one_line_error(sync(root, home, timeout=20), rss_mb=300)
    assert "alias" in line


@pytest.mark.parametrize("name", ["pnpm-lock.yaml", "yarn.lock", "package-lock.json", "bun.lock", "uv.lock",
                                  "poetry.lock", "Pipfile.lock", "requirements.txt", "mix.lock", "package.json"])
def test_oversized_lockfile_refused(name: str, home: Path, tmp_path: Path) -> None:
    root = hpj.oversized_lockfile(project(tmp_path), name, MAX_LOCKFILE_BYTES + 1)
    line = assert_one_line_error(sync(root, home, timeout=20), rss_mb=200)
    assert "limit" in line and name in line


# -- item 9: versions of 5,000 digits --------------------------------------------------------

def _no_internal_error(o: Outcome) -> None:
    assert_bounded(o)
    assert o.rc in (0, 1), o
    assert "internal error" not in o.stderr and "Traceback" not in o.stderr, o
    assert LONG not in o.stdout + o.stderr, "a 5,000-digit version was printed whole"


def test_long_versions_in_lockfiles(home: Path, tmp_path: Path, index: web.HostileServer) -> None:
    root = hpj.long_version_lockfiles(project(tmp_path))
    o = sync(root, home, "--dry-run", "--json", url=index.url)
    _no_internal_error(o)
    rows = {r["name"]: r for r in o.json()["rows"]}  # type: ignore[index]
    assert rows["httpx"]["action"] == "skip" and "characters" in rows["httpx"]["notes"][0]
    assert rows["jason"]["action"] == "skip"


@pytest.mark.parametrize("wanted", ["httpx>=0.1", "httpx==0.27.2"])
def test_long_versions_from_the_index(wanted: str, home: Path, tmp_path: Path, index: web.HostileServer) -> None:
    """The registry server and PyPI both list a 5,000-digit version: it is no candidate."""
    root = project(tmp_path)
    (root / "requirements.txt").write_text(wanted + "\n", "utf-8")
    (root / "package.json").write_text(json.dumps({"name": "app", "dependencies": {"zod": ">=3"}}), "utf-8")
    _no_internal_error(sync(root, home, url=index.url))


# -- item 11: the project's own files only, and no credentials in the output -------------------

@pytest.mark.parametrize("trick", ["linked_requirements", "include_absolute", "include_relative",
                                   "linked_workspace_member"])
def test_files_outside_the_project_are_not_read(trick: str, home: Path, tmp_path: Path) -> None:
    root = project(tmp_path)
    secret = hpj.outside_file(tmp_path / "elsewhere")
    {"linked_requirements": lambda: hpj.linked_requirements(root, secret),
     "include_absolute": lambda: hpj.include_outside(root, secret, relative=False),
     "include_relative": lambda: hpj.include_outside(root, secret, relative=True),
     "linked_workspace_member": lambda: hpj.linked_workspace_member(root, tmp_path / "elsewhere")}[trick]()
    for args in (("--check",), ("--check", "--json")):
        o = sync(root, home, *args)
        assert hpj.SECRET not in o.stdout + o.stderr, f"a line from outside the project was shown: {o}"
        line = assert_one_line_error(o)
        assert "outside the project" in line


def test_credentials_never_printed(home: Path, tmp_path: Path) -> None:
    root = hpj.credentials_in_requirements(project(tmp_path))
    for args in (("--check",), ("--check", "--json"), ("--dry-run",)):
        o = sync(root, home, *args)
        assert_bounded(o)
        assert "internal error" not in o.stderr, o
        assert hpj.TOKEN not in o.stdout + o.stderr, f"a credential was printed: {o}"
    assert "***" in o.stdout  # the URLs are still shown, masked
