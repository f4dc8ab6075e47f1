"""`fetch_source` dispatch, and `context add` end to end for every source kind, including
failures that must print one line and install nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import make_package
from web_fixtures import Route, Site, serve

from context_cli.errors import SourceError
from context_cli.sources.resolve import SourceOptions, fetch_source
from context_cli.store.store import Store
from context_cli.surfaces.cli import cli

OPTS = SourceOptions(timeout=2)


@pytest.fixture(autouse=True)
def fast_http(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTEXT_HTTP_TIMEOUT", "2")
    monkeypatch.setenv("CONTEXT_HTTP_BACKOFF", "0.01")


def add(*args: str):
    return CliRunner().invoke(cli, ["add", *args, "--no-embed"])


def installed() -> list[str]:
    return sorted(i.id.qualified for i in Store().installed())


def one_line_error(result) -> str:
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def git_repo(root: Path) -> Path:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "usage.md").write_text(
        "# Usage\n\n## Frobnicate\n\nCall `frob()` to frobnicate the gizmo at maximum speed.\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "d"], ["tag", "v0.4.2"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)
    return root


# -- dispatch ------------------------------------------------------------------------------

def test_local_db_and_folder(tmp_path: Path, docs_folder: Path) -> None:
    db = make_package(tmp_path / "x.db")
    f = fetch_source(str(db))
    assert (f.source_type, f.db_file, f.source_url) == ("db", db, "x.db")
    f = fetch_source(str(docs_folder))
    assert f.source_type == "folder" and f.source_url == "mylib-docs"
    assert f.registry is None  # only released artefacts name a registry


def test_unknown_forms(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file or folder"):
        fetch_source(str(tmp_path / "missing"))
    with pytest.raises(SourceError, match="unsupported URL scheme"):
        fetch_source("ftp://example.com/docs")
    (tmp_path / "notes.pdf").write_bytes(b"%PDF-1.4")
    with pytest.raises(SourceError, match="not a docs file, .db package or OpenAPI spec"):
        fetch_source(str(tmp_path / "notes.pdf"))


def test_single_docs_file(tmp_path: Path) -> None:
    from context_cli.build import BuildOptions, build

    (tmp_path / "other.md").write_text("# Other\n\nThis page must not be indexed with the single file.\n")
    f = tmp_path / "Cheat Sheet.md"
    f.write_text("# Cheats\n\n## Keys\n\nPress `ctrl-k` twice to open the command palette anywhere.\n")
    fetched = fetch_source(str(f))
    assert (fetched.name, fetched.source_url) == ("cheat-sheet", "Cheat Sheet.md")
    result = build(fetched, tmp_path / "c.db", BuildOptions(embed=False))
    assert result.pages == 1


def test_artefact_specs_dispatch_to_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    site = Site()
    with serve(site) as base:
        monkeypatch.setenv("CONTEXT_PYPI_URL", base)
        monkeypatch.setenv("CONTEXT_NPM_REGISTRY_URL", base)
        with pytest.raises(SourceError):
            fetch_source("pypi:nosuchpkg==1.0")
        with pytest.raises(SourceError):
            fetch_source("npm:@scope/nosuch@1.0.0")
    assert any("nosuchpkg" in p for p in site.paths())
    assert any("nosuch" in p and "scope" in p for p in site.paths())


def test_db_url_is_downloaded(tmp_path: Path) -> None:
    db = make_package(tmp_path / "remote.db", name="remote", version="3.1.0")
    site = Site()
    site.add("/pkgs/remote.db", db.read_bytes(), content_type="application/octet-stream")
    site.add("/pkgs/fake.db", b"<html>nope</html>")
    with serve(site) as base:
        f = fetch_source(base + "/pkgs/remote.db?token=secret", OPTS)
        try:
            assert f.source_type == "db" and f.db_file.read_bytes() == db.read_bytes()
            assert f.source_url == base + "/pkgs/remote.db"  # query tokens stripped
            tmp = f.db_file.parent
        finally:
            f.cleanup()
        assert not tmp.exists()
        with pytest.raises(SourceError, match="not a package"):
            fetch_source(base + "/pkgs/fake.db", OPTS)


# -- end to end through the CLI -------------------------------------------------------------

def test_add_git_url(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "gizmo")
    r = add(repo.as_uri())
    assert r.exit_code == 0, r.output
    assert "v0.4.2" in r.output
    assert installed() == ["local/gizmo@0.4.2"]
    pkg = Store().open("gizmo")
    try:
        assert pkg.meta["source_url"] == "gizmo"
        assert str(tmp_path) not in json.dumps(pkg.meta)
    finally:
        pkg.close()


def test_add_website_and_search_it() -> None:
    site = Site()
    site.add("/llms.txt", "# Docs\n\n- [Config](/config.md)\n", content_type="text/plain")
    site.add("/config.md", "# Config\n\n## Retries\n\nSet `max_retries = 7` to retry failed uploads seven times.\n",
             content_type="text/markdown")
    with serve(site) as base:
        r = add(base + "/", "--name", "uploader")
    assert r.exit_code == 0, r.output
    assert installed() == ["local/uploader@latest"]
    q = CliRunner().invoke(cli, ["query", "uploader", "retry failed uploads"])
    assert q.exit_code == 0 and "max_retries" in q.output


def test_add_openapi_file(tmp_path: Path) -> None:
    spec = {"openapi": "3.1.0", "info": {"title": "Mini", "version": "0.9"},
            "paths": {"/ping": {"get": {"summary": "Health check", "operationId": "ping",
                                        "responses": {"200": {"description": "pong"}}}}}}
    f = tmp_path / "mini.yaml"
    f.write_text(yaml.safe_dump(spec))
    r = add(str(f))
    assert r.exit_code == 0, r.output
    assert installed() == ["local/mini@0.9"]


def test_add_db_url(tmp_path: Path) -> None:
    db = make_package(tmp_path / "remote.db", name="remote", version="3.1.0")
    site = Site()
    site.add("/remote.db", db.read_bytes(), content_type="application/octet-stream")
    with serve(site) as base:
        r = add(base + "/remote.db")
    assert r.exit_code == 0, r.output
    assert installed() == ["local/remote@3.1.0"]


@pytest.mark.parametrize("kind", ["404", "timeout", "binary", "not-a-repo", "no-docs", "bad-form"])
def test_failures_are_one_line_and_install_nothing(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = Site()
    site.routes["/robots.txt"] = Route(b"", status=404)
    site.add("/bin", b"\x7fELF" + b"\x00" * 3000, content_type="text/html")
    for p in ("/slow", "/llms-full.txt", "/llms.txt", "/sitemap.xml"):
        site.routes[p] = Route(b"late", delay=2)
    with serve(site) as base:
        if kind == "404":
            source = base + "/missing/page"
            site.routes.pop("/llms-full.txt"), site.routes.pop("/llms.txt"), site.routes.pop("/sitemap.xml")
        elif kind == "timeout":
            monkeypatch.setenv("CONTEXT_HTTP_TIMEOUT", "0.3")
            source = base + "/slow"
        elif kind == "binary":
            site.routes.pop("/llms-full.txt"), site.routes.pop("/llms.txt"), site.routes.pop("/sitemap.xml")
            source = base + "/bin"
        elif kind == "not-a-repo":
            (tmp_path / "plain").mkdir()
            source = (tmp_path / "plain").as_uri()
        elif kind == "no-docs":
            repo = tmp_path / "code"
            git_repo(repo)
            subprocess.run(["git", "rm", "-q", "-r", "docs"], cwd=repo, check=True)
            subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "x"],
                           cwd=repo, check=True)
            subprocess.run(["git", "tag", "v0.5.0"], cwd=repo, check=True)
            source = repo.as_uri()
        else:
            source = "gopher://old.example/docs"
        r = add(source)
    line = one_line_error(r)
    expected = {"404": "404", "timeout": "timed out", "binary": "binary", "not-a-repo": "not a git repository",
                "no-docs": "no documentation", "bad-form": "unsupported URL scheme"}[kind]
    assert expected in line
    assert installed() == []
    assert str(tmp_path) not in line
