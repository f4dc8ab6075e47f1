"""Download progress (bytes and rate) on a terminal, for sdists and registry packages, and
nothing at all when stderr is piped: `context add pypi:…` and `context install` as
subprocesses, their stderr on a real pty."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from helpers import run_on_pty, targz
from mcp_fixtures import build_package, publish, registry_server
from quiet_servers import QuietHTTPServer

SDIST = targz({
    "demo-1.0/PKG-INFO": "Name: demo\nVersion: 1.0\n",
    "demo-1.0/docs/index.md": "# Demo docs\n\nStreaming and cancellation.\n",
    "demo-1.0/data.bin": os.urandom(1_500_000),  # random: the archive stays this large
})


@pytest.fixture
def pypi() -> Iterator[str]:
    """A PyPI JSON API with one sdist, sent in 64 KiB pieces 10 ms apart (about 0.25 s)."""
    routes: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body = routes.get(self.path)
            self.send_response(200 if body is not None else 404)
            body = body if body is not None else b"{}"
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for i in range(0, len(body), 65536):
                self.wfile.write(body[i:i + 65536])
                self.wfile.flush()
                time.sleep(0.01 if len(body) > 65536 else 0)

        def log_message(self, *args: object) -> None:
            pass

    httpd = QuietHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    sdist = {"filename": "demo-1.0.tar.gz", "packagetype": "sdist", "url": f"{url}/files/demo-1.0.tar.gz",
             "size": len(SDIST), "yanked": False, "digests": {"sha256": hashlib.sha256(SDIST).hexdigest()}}
    routes["/pypi/demo/json"] = json.dumps({"info": {"name": "demo", "summary": "Demo", "version": "1.0"},
                                            "releases": {"1.0": [sdist]}, "urls": [sdist]}).encode()
    routes["/files/demo-1.0.tar.gz"] = SDIST
    yield url
    httpd.shutdown()
    httpd.server_close()


def _run(args: list[str], env: dict[str, str], *, terminal: bool) -> tuple[int, str]:
    """Run `context ARGS`; its stderr on a pty (120 columns wide) or a pipe. Returns (exit, stderr)."""
    env = {**os.environ, **env, "COLUMNS": "120", "TERM": "xterm"}
    if terminal:
        return run_on_pty(args, stream="stderr", env=env)
    done = subprocess.run([sys.executable, "-m", "context_cli", *args], env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    return done.returncode, done.stderr


def test_an_sdist_download_shows_its_size_and_rate_on_a_terminal(pypi: str, tmp_path: Path) -> None:
    env = {"CONTEXT_HOME": str(tmp_path / "home"), "CONTEXT_PYPI_URL": pypi}
    code, shown = _run(["add", "pypi:demo==1.0", "--no-embed"], env, terminal=True)
    assert code == 0, shown
    assert "demo-1.0.tar.gz" in shown
    assert f"of {len(SDIST) / 1e6:.1f} MB" in shown and ("MB/s" in shown or "kB/s" in shown)


def test_nothing_is_drawn_when_stderr_is_piped(pypi: str, tmp_path: Path) -> None:
    env = {"CONTEXT_HOME": str(tmp_path / "home"), "CONTEXT_PYPI_URL": pypi}
    code, err = _run(["add", "pypi:demo==1.0", "--no-embed"], env, terminal=False)
    assert code == 0, err
    assert "demo-1.0.tar.gz" not in err and "/s" not in err and "\x1b" not in err


def test_a_registry_download_shows_its_rate_on_a_terminal(tmp_path: Path) -> None:
    sections = [("p.md", "Page", f"S{i}", os.urandom(6000).hex()) for i in range(100)]
    pkg = build_package(tmp_path / "big.db", "big", "1.0.0", sections, registry="npm")
    with registry_server(tmp_path / "registry") as url:
        publish(url, pkg, "npm", "big", "1.0.0")
        code, shown = _run(["install", "npm/big@1.0.0"], {"CONTEXT_HOME": str(tmp_path / "home"),
                                                        "CONTEXT_REGISTRY_URL": url}, terminal=True)
    assert code == 0, shown
    assert "npm/big@1.0.0" in shown and f"of {pkg.stat().st_size / 1e6:.1f} MB" in shown and "B/s" in shown


def test_a_sync_download_shows_its_size_and_rate_on_a_terminal(pypi: str, tmp_path: Path) -> None:
    """`context sync` builds a locked dependency from its sdist: the download gets its own line
    (file, size, rate) under the sync's bar, as `add pypi:` shows it; piped, nothing is drawn."""
    project = tmp_path / "app"
    project.mkdir()
    (project / "requirements.txt").write_text("demo==1.0\n", "utf-8")
    env = {"CONTEXT_HOME": str(tmp_path / "home"), "CONTEXT_PYPI_URL": pypi, "CONTEXT_REGISTRY_URL": pypi}
    code, shown = _run(["sync", str(project)], env, terminal=True)
    assert code == 0, shown
    assert "demo-1.0.tar.gz" in shown
    assert f"of {len(SDIST) / 1e6:.1f} MB" in shown and ("MB/s" in shown or "kB/s" in shown)
    code, err = _run(["sync", str(project), "--rebuild", "demo"], {**env, "CONTEXT_HOME": str(tmp_path / "h2")},
                     terminal=False)
    assert code == 0, err
    assert "demo-1.0.tar.gz" not in err and "/s" not in err and "\x1b" not in err
