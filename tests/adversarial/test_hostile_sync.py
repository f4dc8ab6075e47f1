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


# -- item 2: repository URLs from package metadata reach public hosts only ----------------------

def test_metadata_repositories_never_reach_internal_addresses(home: Path, tmp_path: Path) -> None:
    """An npm packument naming `file://` and loopback repositories: neither is fetched (the
    inner server sees no request), the dependency is README-only with one line saying why."""
    import hashlib
    import io
    import tarfile

    with web.HostileServer({}) as inner:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            readme = b"# evil\n\nA parser.\n\n## Usage\n\nCall `load(path)` to read a file.\n"
            info = tarfile.TarInfo("package/README.md")
            info.size = len(readme)
            tar.addfile(info, io.BytesIO(readme))
        tarball = buf.getvalue()
        repos = {"evil-file": f"git+{(tmp_path / 'secret-repo').as_uri()}",
                 "evil-inner": f"git+{inner.url}/acme/secret.git",
                 "evil-https-inner": inner.url.replace("http://", "https://") + "/acme/secret.git"}
        routes: dict[str, web.Handler] = {"/t.tgz": lambda r: web.reply(tarball)}

        def packument(repo: str) -> web.Handler:
            return lambda r: web.json_reply({"name": "x", "versions": {"1.0.0": {
                "repository": {"type": "git", "url": repo}, "homepage": f"{inner.url}/docs",
                "dist": {"tarball": f"{index_url[0]}/t.tgz", "shasum": hashlib.sha1(tarball).hexdigest()}}}})

        for name, repo in repos.items():
            routes[f"/{name}"] = packument(repo)
        with web.HostileServer(routes) as index:
            index_url = [index.url]
            root = project(tmp_path)
            deps = {n: "1.0.0" for n in repos}
            (root / "package.json").write_text(json.dumps({"name": "app", "dependencies": deps}))
            packages = {"": {"name": "app", "dependencies": deps},
                        **{f"node_modules/{n}": {"version": "1.0.0"} for n in repos}}
            (root / "package-lock.json").write_text(json.dumps({"lockfileVersion": 3, "packages": packages}))
            env = {"CONTEXT_REGISTRY_URL": "http://127.0.0.1:9", "CONTEXT_NPM_REGISTRY_URL": index.url}
            o = run(["sync", str(root), "--json"], home, timeout=60, env=env)
        assert_bounded(o)
        assert inner.requests == [], "a metadata URL reached an internal address"
    rows = {r["name"]: r for r in json.loads(o.stdout)["rows"]}
    for name in repos:
        assert rows[name]["docs"] == "readme", rows[name]
        assert any("refused" in n or "only https://" in n or "loopback" in n for n in rows[name]["notes"]), rows[name]


# -- item 9: every field of docs.lock --------------------------------------------------------------

@pytest.mark.parametrize("value", ["Infinity", "-Infinity", "NaN", "1e999", '"9"', "-5"])
def test_a_docs_lock_with_a_bad_size_is_one_line_everywhere(value: str, home: Path, tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "requirements.txt").write_text("httpx==0.27.2\n")
    (root / ".context").mkdir()
    (root / ".context" / "docs.lock").write_text(
        '{"format": 1, "packages": [{"registry": "pip", "name": "httpx", "version": "0.27.2", '
        f'"sha256": "{"a" * 64}", "size": {value}, "source": "x"}}]}}')
    for args in (["sync", str(root), "--dry-run"], ["search", "streams"], ["list"]):
        o = run(args, home, timeout=30, cwd=root)
        if args[0] == "list":
            assert o.rc == 0, o  # listing installed packages needs no project
            continue
        line = assert_one_line_error(o)
        assert "docs.lock" in line and "entry 1" in line or "holds" in line, line


# -- item 14: the sync table of a large project ------------------------------------------------------

def test_a_project_of_20000_dependencies_prints_a_bounded_table(home: Path, tmp_path: Path) -> None:
    root = project(tmp_path)
    deps = {f"pkg-{i}": "1.0.0" for i in range(20_000)}
    (root / "package.json").write_text(json.dumps({"name": "app", "dependencies": deps}))
    packages = {"": {"name": "app", "dependencies": deps},
                **{f"node_modules/{n}": {"version": "1.0.0"} for n in deps}}
    (root / "package-lock.json").write_text(json.dumps({"lockfileVersion": 3, "packages": packages}))
    o = sync(root, home, "--dry-run", "--no-build", timeout=120)
    assert_bounded(o, rss_mb=600)
    assert o.stdout.count("\n") < 1000 and "--json lists every row" in o.stdout, o
    assert "20000 dependencies" in o.stdout
