"""`context doctor`: real packages, a real loopback registry, a real project lock; each finding
comes with its fix, and only broken things make the exit status non-zero."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from click.testing import CliRunner
from quiet_servers import QuietHTTPServer

from context_cli.surfaces.cli import cli


def doctor(*args: str):
    r = CliRunner().invoke(cli, ["doctor", "--json", "--timeout", "1", *args])
    return r, json.loads(r.output)


def by_check(report: dict) -> dict[str, dict]:
    return {c["check"]: c for c in report["checks"]}


class _Ok(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "widgets"
    folder.mkdir()
    (folder / "guide.md").write_text("# Widgets\n\nMake a widget with `make_widget(size)`; sizes go up to ten.\n")
    return folder


def test_healthy_setup_passes_with_the_model_and_server_found(context_home: Path, docs: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(docs)
    assert CliRunner().invoke(cli, ["add", str(docs), "--name", "widgets", "--pkg-version", "1.0"]).exit_code == 0
    server = QuietHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert CliRunner().invoke(cli, ["server", "add", "here", f"http://127.0.0.1:{server.server_address[1]}",
                                        "--default"]).exit_code == 0
        r, report = doctor()
    finally:
        server.shutdown()
        server.server_close()
    checks = by_check(report)
    assert r.exit_code == 0 and report["ok"] is True
    assert checks["packages"]["detail"].startswith("1 installed in ")
    assert checks["package local/widgets@1.0"]["status"] == "ok" and "model" in checks["package local/widgets@1.0"]["detail"]
    here = next(c for name, c in checks.items() if name.startswith("server here"))
    assert here["status"] == "ok"
    assert checks["project"]["status"] == "ok"


def test_broken_things_fail_with_their_fixes(context_home: Path, docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(docs)
    assert CliRunner().invoke(cli, ["add", str(docs), "--name", "widgets", "--pkg-version", "1.0"]).exit_code == 0
    packages = context_home / "packages"
    [built] = list(packages.glob("*.db"))
    with sqlite3.connect(built) as db:  # vectors from a model this machine does not have
        db.execute("UPDATE meta SET value = 'someone/absent-model' WHERE key = 'embedding_model'")
    (packages / "pip__broken@1.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    stale = packages / ".building-x.partial"
    stale.write_bytes(b"x" * 10)
    old = time.time() - 7200
    os.utime(stale, (old, old))
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    assert CliRunner().invoke(cli, ["server", "add", "gone", f"http://127.0.0.1:{dead}", "--default"]).exit_code == 0
    lock = docs / ".context" / "docs.lock"
    lock.parent.mkdir()
    lock.write_text(json.dumps({"format": 1, "packages": [{"registry": "pip", "name": "absent", "version": "2.0",
                                                           "sha256": "0" * 64, "size": 1, "source": "x"}]}))
    r, report = doctor()
    checks = by_check(report)
    assert r.exit_code == 1 and report["ok"] is False
    assert checks["package pip__broken@1.db"]["status"] == "fail" and "rm " in checks["package pip__broken@1.db"]["fix"]
    model = checks["package local/widgets@1.0"]
    assert model["status"] == "warn" and "someone/absent-model" in model["detail"] and "CONTEXT_EMBED_MODEL" in model["fix"]
    assert checks["temp files"]["status"] == "warn" and checks["temp files"]["fix"].startswith("context list")
    gone = next(c for name, c in checks.items() if name.startswith("server gone"))
    assert gone["status"] == "warn" and "context server remove gone" in gone["fix"]
    assert checks["project"]["status"] == "fail" and "pip/absent@2.0" in checks["project"]["detail"]
    assert checks["project"]["fix"].startswith("context sync")
    assert stale.exists()  # doctor changes nothing
    text = CliRunner().invoke(cli, ["doctor", "--timeout", "1"])
    assert text.exit_code == 1 and "FAIL package pip__broken@1.db" in text.output and "     fix: rm " in text.output
    assert text.output.rstrip().endswith("2 problems to fix (4 warnings).") or "problems to fix" in text.output


def test_web_cache_is_measured_against_its_bound(context_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shard = context_home / "cache" / "web" / "ab"
    shard.mkdir(parents=True)
    (shard / "cdef.json").write_bytes(b"x" * 3 * 1024 * 1024)
    r, report = doctor()
    assert by_check(report)["web cache"] == {"check": "web cache", "status": "ok", "fix": None,
                                             "detail": f"3.0 MB of 256 MB in {context_home / 'cache' / 'web'}"}
    monkeypatch.setenv("CONTEXT_WEB_CACHE_MB", "2")
    r, report = doctor()
    over = by_check(report)["web cache"]
    assert r.exit_code == 0 and over["status"] == "warn" and "over its bound" in over["detail"]
    monkeypatch.setenv("CONTEXT_WEB_CACHE_MB", "two")
    r, report = doctor()
    bad = by_check(report)["web cache"]
    assert r.exit_code == 1 and bad["status"] == "fail" and bad["fix"].startswith("unset CONTEXT_WEB_CACHE_MB")
    assert (shard / "cdef.json").exists()  # doctor changes nothing
