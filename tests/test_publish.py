"""Publishing: one file and the whole catalogue, against the real server on loopback.

`publish-all` runs end to end: versions discovered from a loopback PyPI/npm, sources built
from sdists, tarballs, zips and git repositories made here, uploaded to a real
`context-registry-server` process. Retry and stop rules are checked against a scripted
server that answers what a real one rarely does (5xx, 401, 422).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner
from quiet_servers import QuietHTTPServer
from registry_fixtures import KEY, ServerProcess, live_server, make_package  # noqa: F401
from test_registry_build import (  # noqa: F401
    Artefacts,
    artefacts,
    commit_change,
    git,
    make_repo,
    serve_npm,
    serve_pypi,
    serve_zip,
    write_yaml,
)

from registry import publish
from registry.cli import main
from registry.definitions import load_definitions
from registry.publish import PublishAllOptions, Target, publish_all


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """No server or key leaks in from the environment; retries never wait (waits recorded)."""
    for name in ("REGISTRY_SERVER_URL", "REGISTRY_PUBLISH_KEY", "CONTEXT_REGISTRY_KEY",
                 "CONTEXT_REGISTRY_URL"):
        monkeypatch.delenv(name, raising=False)
    waits: list[float] = []
    monkeypatch.setattr(publish, "_sleep", waits.append)
    return waits


def use_server(monkeypatch: pytest.MonkeyPatch, url: str, key: str = KEY) -> None:
    monkeypatch.setenv("REGISTRY_SERVER_URL", url)
    monkeypatch.setenv("REGISTRY_PUBLISH_KEY", key)


def run(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output
    return result


def server_meta(server: ServerProcess, registry: str, name: str, version: str) -> dict | None:
    from urllib.parse import quote

    path = "/".join(quote(p, safe="") for p in (registry, name, version))
    r = requests.get(f"{server.url}/packages/{path}", timeout=10)
    return r.json() if r.status_code == 200 else None


CATALOGUE = """
pip:
  - name: demo
    source: {{type: pypi, exclude_paths: ["internal/**"]}}
npm:
  - name: gizmo
    source: {{type: npm}}
  - name: gadgets
    description: Gadgets from the default branch
    source: {{type: git, url: "{repo}", docs_path: docs}}
python:
  - name: pydocs
    versions:
      - versions: ["3.12"]
        source: {{type: zip, url: "{base}/archives/pydocs-{{version}}.zip", docs_path: "pydocs-{{version}}-html"}}
"""


def test_publish_all_publishes_then_skips_everything(
        artefacts: Artefacts, live_server: ServerProcess, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    serve_pypi(artefacts, ("1.0", "1.1"))
    serve_npm(artefacts, "gizmo", ("2.0.0", "2.1.0"))
    serve_zip(artefacts, "3.12")
    repo = make_repo(tmp_path / "gadgets")
    defs = write_yaml(tmp_path / "packages.yaml",
                      CATALOGUE.format(repo=repo.as_uri(), base=artefacts.url))
    use_server(monkeypatch, live_server.url)

    first = run("publish-all", "-d", str(defs), "--no-embed")
    assert first.exit_code == 0, first.output
    assert "Summary: 6 published, 0 skipped, 0 failed" in first.output
    for line in ("published pip/demo@1.1", "published pip/demo@1.0", "published npm/gizmo@2.1.0",
                 "published npm/gadgets@latest", "published python/pydocs@3.12"):
        assert line in first.output
    demo = server_meta(live_server, "pip", "demo", "1.1")
    assert demo and demo["registry"] == "pip" and demo["source_url"] == "pypi:demo==1.1"
    gadgets = server_meta(live_server, "npm", "gadgets", "latest")
    assert gadgets and gadgets["source_commit"] == git(repo, "rev-parse", "HEAD").strip()

    artefacts.log.clear()
    second = run("publish-all", "-d", str(defs), "--no-embed")
    assert second.exit_code == 0, second.output
    assert "Summary: 0 published, 6 skipped, 0 failed" in second.output
    assert "skipped   npm/gadgets@latest: unchanged (commit" in second.output
    assert "skipped   pip/demo@1.0: already on the server" in second.output
    downloads = [p for p in artefacts.log if p.startswith(("/files/", "/tarballs/", "/archives/"))]
    assert downloads == []  # nothing was fetched, let alone built

    head = commit_change(repo, "A new page about sprocket tuning.")
    third = run("publish-all", "-d", str(defs), "--no-embed", "--only", "npm/gadgets")
    assert third.exit_code == 0, third.output
    assert "Summary: 1 published, 0 skipped, 0 failed" in third.output
    moved = server_meta(live_server, "npm", "gadgets", "latest")
    assert moved and moved["source_commit"] == head


def test_latest_and_since_narrow_the_releases(artefacts: Artefacts, live_server: ServerProcess,
                                              tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    serve_pypi(artefacts, ("1.0", "1.1"))
    defs = write_yaml(tmp_path / "p.yaml", "pip:\n  - name: demo\n    source: {type: pypi}\n")
    use_server(monkeypatch, live_server.url)
    r = run("publish-all", "-d", str(defs), "--no-embed", "--latest", "1")
    assert r.exit_code == 0 and "Summary: 1 published" in r.output
    assert server_meta(live_server, "pip", "demo", "1.0") is None
    r = run("publish-all", "-d", str(defs), "--no-embed", "--since", "1")  # releases are from 2024
    assert r.exit_code == 0 and "Summary: 0 published, 0 skipped, 0 failed" in r.output


def test_missing_git_tag_is_skipped_not_failed(live_server: ServerProcess, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "gadgets", tags=("v1.0.0",))
    defs = write_yaml(tmp_path / "p.yaml", f"""
npm:
  - name: gadgets
    versions:
      - versions: ["1.0.0", "1.1.0"]
        source: {{type: git, url: "{repo.as_uri()}", docs_path: docs}}
""")
    use_server(monkeypatch, live_server.url)
    r = run("publish-all", "-d", str(defs), "--no-embed")
    assert r.exit_code == 0, r.output
    assert "Summary: 1 published, 1 skipped, 0 failed" in r.output
    assert "skipped   npm/gadgets@1.1.0: source tag missing" in r.output
    assert "no tag 'v1.1.0'" in r.output


def test_a_failing_build_fails_the_run_after_the_others(
        artefacts: Artefacts, live_server: ServerProcess, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    serve_pypi(artefacts, ("1.0",))
    defs = write_yaml(tmp_path / "p.yaml", """
npm:
  - name: ghost
    source: {type: npm}
pip:
  - name: broken
    source: {type: pypi, package: demo, docs_path: manual}
  - name: demo
    source: {type: pypi}
""")
    use_server(monkeypatch, live_server.url)
    r = run("publish-all", "-d", str(defs), "--no-embed")
    assert r.exit_code == 1
    assert "Summary: 1 published, 0 skipped, 2 failed" in r.output
    assert "Failures:" in r.output
    assert "  npm/ghost: version discovery: no such package on npm: ghost" in r.output
    # the definition's failure is said first among the docs-source steps tried after it
    assert "  pip/broken@1.0: no docs for pip/broken@1.0: tried definition: demo 1.0 sdist has no 'manual' folder" \
        in r.output
    assert server_meta(live_server, "pip", "demo", "1.0") is not None


def test_dry_run_needs_no_key_and_changes_nothing(
        artefacts: Artefacts, live_server: ServerProcess, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    serve_pypi(artefacts, ("1.0", "1.1"))
    defs = write_yaml(tmp_path / "p.yaml", "pip:\n  - name: demo\n    source: {type: pypi}\n")
    monkeypatch.setenv("REGISTRY_SERVER_URL", live_server.url)
    r = run("publish-all", "-d", str(defs), "--dry-run")
    assert r.exit_code == 0, r.output
    assert "Summary: 2 to publish (dry run), 0 published, 0 skipped, 0 failed" in r.output
    assert "planned   pip/demo@1.1: not on the server" in r.output
    assert not [p for p in artefacts.log if p.startswith("/files/")]
    assert server_meta(live_server, "pip", "demo", "1.1") is None


def test_publish_all_without_a_key_or_server_says_what_to_set(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    defs = write_yaml(tmp_path / "p.yaml", "pip:\n  - name: demo\n    source: {type: pypi}\n")
    r = run("publish-all", "-d", str(defs))
    assert r.exit_code == 1 and "REGISTRY_SERVER_URL" in r.output
    monkeypatch.setenv("REGISTRY_SERVER_URL", "http://127.0.0.1:9")
    r = run("publish-all", "-d", str(defs))
    assert r.exit_code == 1 and "no publish key: set REGISTRY_PUBLISH_KEY" in r.output


# ---- one file ------------------------------------------------------------------------------


def test_publish_with_a_wrong_key_is_a_clear_error(live_server: ServerProcess, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = make_package(tmp_path / "lib.db", "lib", "1.0.0", registry="npm")
    use_server(monkeypatch, live_server.url, key="not-the-key")
    r = run("publish", str(pkg))
    assert r.exit_code == 1
    assert r.output.strip() == (f"Error: {live_server.url} refused the publish key "
                                "(401 invalid publish key); check REGISTRY_PUBLISH_KEY")


def test_publish_uses_config_server_and_context_key(live_server: ServerProcess, tmp_path: Path,
                                                    context_home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (context_home / "config.json").write_text(json.dumps(
        {"servers": [{"name": "home", "url": live_server.url}]}))
    monkeypatch.setenv("CONTEXT_REGISTRY_KEY", KEY)
    pkg = make_package(tmp_path / "lib.db", "lib", "1.0.0", registry="npm")
    r = run("publish", str(pkg), "--server", "home")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("Published npm/lib@1.0.0 to home")
    r = run("publish", str(pkg), "--server", "home")
    assert r.exit_code == 0 and r.output.startswith("Already published (same bytes): npm/lib@1.0.0")
    other = make_package(tmp_path / "other.db", "lib", "1.0.0", registry="npm", text="changed")
    r = run("publish", str(other), "--server", "home")
    assert r.exit_code == 1
    assert "npm/lib@1.0.0 is already on home with different content" in r.output
    r = run("publish", str(pkg), "--server", "nowhere")
    assert r.exit_code == 1 and "no registry server named 'nowhere'" in r.output


def test_publish_registry_comes_from_the_file_or_the_option(live_server: ServerProcess,
                                                            tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    use_server(monkeypatch, live_server.url)
    local = make_package(tmp_path / "local.db", "notes", "2.0.0", registry="local")
    r = run("publish", str(local))
    assert r.exit_code == 1 and "local.db was built as a local package: it does not say which registry" in r.output
    assert "`context-registry publish local.db --registry pip`" in " ".join(r.output.split())
    r = run("publish", str(local), "--registry", "pip")
    assert r.exit_code == 0 and "Published pip/notes@2.0.0" in r.output
    npm = make_package(tmp_path / "npm.db", "lib", "1.0.0", registry="npm")
    r = run("publish", str(npm), "--registry", "pip")
    assert r.exit_code == 1 and "built for registry 'npm', not 'pip'" in r.output
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database")
    r = run("publish", str(junk))
    assert r.exit_code == 1 and "junk.db" in r.output


# ---- retries and stops, against a scripted server ------------------------------------------


class Scripted:
    """GET /packages/... answers 404; POST answers the next status scripted for its path
    (201 once the script runs out). Every request is logged as (method, path)."""

    def __init__(self) -> None:
        self.posts: dict[str, list[int]] = {}
        self.log: list[tuple[str, str]] = []
        self.url = ""


@pytest.fixture
def scripted() -> Iterator[Scripted]:
    srv = Scripted()

    class Handler(BaseHTTPRequestHandler):
        def answer(self, status: int, body: dict) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:  # noqa: N802
            srv.log.append(("GET", self.path))
            self.answer(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            srv.log.append(("POST", self.path))
            script = srv.posts.get(self.path, [])
            status = script.pop(0) if script else 201
            self.answer(status, {"error": f"scripted {status}"} if status >= 400
                        else {"status": "created"})

        def log_message(self, *args: object) -> None:
            pass

    httpd = QuietHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                     daemon=True).start()
    srv.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield srv
    httpd.shutdown()
    httpd.server_close()


TWO_PACKAGES = """
pip:
  - name: demo
    source: {type: pypi}
npm:
  - name: gizmo
    source: {type: npm}
"""


def posts(srv: Scripted) -> list[str]:
    return [p for m, p in srv.log if m == "POST"]


def test_5xx_is_retried_with_backoff(artefacts: Artefacts, scripted: Scripted, tmp_path: Path,
                                     clean_env: list[float]) -> None:
    serve_pypi(artefacts, ("1.0",))
    serve_npm(artefacts, "gizmo", ("2.0.0",))
    scripted.posts["/packages/pip/demo/1.0"] = [503, 502]
    defs = load_definitions(write_yaml(tmp_path / "p.yaml", TWO_PACKAGES))
    summary = publish_all(defs, Target(scripted.url, "scripted", "k"),
                          PublishAllOptions(embed=False))
    assert summary.ok, summary.lines()
    assert summary.count("published") == 2
    assert posts(scripted).count("/packages/pip/demo/1.0") == 3
    assert clean_env == [1.0, 2.0]


def test_5xx_that_persists_fails_that_release_only(artefacts: Artefacts, scripted: Scripted,
                                                   tmp_path: Path) -> None:
    serve_pypi(artefacts, ("1.0",))
    serve_npm(artefacts, "gizmo", ("2.0.0",))
    scripted.posts["/packages/pip/demo/1.0"] = [500] * publish.ATTEMPTS
    defs = load_definitions(write_yaml(tmp_path / "p.yaml", TWO_PACKAGES))
    summary = publish_all(defs, Target(scripted.url, "scripted", "k"),
                          PublishAllOptions(embed=False))
    assert (summary.count("published"), summary.count("failed")) == (1, 1)
    failed = next(o for o in summary.outcomes if o.status == "failed")
    assert failed.label == "pip/demo@1.0"
    assert "answered 500 (scripted 500) 4 times" in failed.reason
    assert posts(scripted).count("/packages/pip/demo/1.0") == publish.ATTEMPTS


def test_4xx_is_not_retried_and_a_refused_key_stops_the_run(
        artefacts: Artefacts, scripted: Scripted, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    serve_pypi(artefacts, ("1.0",))
    serve_npm(artefacts, "gizmo", ("2.0.0",))
    scripted.posts["/packages/npm/gizmo/2.0.0"] = [401]
    defs = write_yaml(tmp_path / "p.yaml", TWO_PACKAGES)
    use_server(monkeypatch, scripted.url, key="wrong")
    r = run("publish-all", "-d", str(defs), "--no-embed")
    assert r.exit_code == 1
    assert posts(scripted) == ["/packages/npm/gizmo/2.0.0"]  # once, and nothing after it
    assert not any("/pip/demo" in p for _, p in scripted.log)
    assert "Stopped early:" in r.output and "refused the publish key (401 scripted 401)" in r.output
    assert "Summary: 0 published, 0 skipped, 1 failed" in r.output


def test_other_4xx_fails_one_release_and_the_run_goes_on(
        artefacts: Artefacts, scripted: Scripted, tmp_path: Path) -> None:
    serve_pypi(artefacts, ("1.0",))
    serve_npm(artefacts, "gizmo", ("2.0.0",))
    scripted.posts["/packages/npm/gizmo/2.0.0"] = [422]
    defs = load_definitions(write_yaml(tmp_path / "p.yaml", TWO_PACKAGES))
    summary = publish_all(defs, Target(scripted.url, "scripted", "k"),
                          PublishAllOptions(embed=False))
    assert [(o.label, o.status) for o in summary.outcomes] == [
        ("npm/gizmo@2.0.0", "failed"), ("pip/demo@1.0", "published")]
    assert summary.outcomes[0].reason == "scripted refused npm/gizmo@2.0.0: 422 scripted 422"
    assert posts(scripted).count("/packages/npm/gizmo/2.0.0") == 1
    assert not summary.ok


def test_an_unreachable_server_stops_the_run(artefacts: Artefacts, tmp_path: Path) -> None:
    from registry_fixtures import free_port

    serve_pypi(artefacts, ("1.0", "1.1"))
    serve_npm(artefacts, "gizmo", ("2.0.0",))
    defs = load_definitions(write_yaml(tmp_path / "p.yaml", TWO_PACKAGES))
    summary = publish_all(defs, Target(f"http://127.0.0.1:{free_port()}", "down", "k"),
                          PublishAllOptions(embed=False))
    assert len(summary.outcomes) == 1 and summary.stopped
    assert "cannot reach registry server" in summary.stopped
    assert "choose the server with --server NAME" in summary.stopped and "REGISTRY_SERVER_URL" in summary.stopped
