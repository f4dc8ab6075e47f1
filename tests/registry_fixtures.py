"""Shared helpers for the registry server and install tests (imported explicitly by them).

Real things only: package files written by the package writer, the Starlette app under
its test client, a real `context-registry-server` process on a loopback port, and a
tiny raw HTTP server for answers a correct server would never give.
"""

from __future__ import annotations

import os
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
from quiet_servers import QuietTCPServer
from starlette.testclient import TestClient

from context_cli.document import Chunk
from context_cli.package.writer import write_package
from registry_server.app import create_app

KEY = "test-publish-key"
UPLOAD_LIMIT = 4 * 1024 * 1024
AUTH = {"Authorization": f"Bearer {KEY}"}
REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
# A package written by Neuledge Context's own CLI (see tests/fixtures/neuledge/README.md).
PEER_PACKAGE = FIXTURES / "neuledge" / "anthropic-docs@2024.7.0.db"
NEULEDGE_REGISTRY = FIXTURES / "neuledge" / "registry"


def make_package(path: Path, name: str, version: str, *, registry: str | None = "npm",
                 description: str | None = None, text: str = "") -> Path:
    """A small real package; `text` changes its bytes without changing its identity."""
    meta = {"name": name, "version": version, "description": description or f"Docs for {name}"}
    if registry:
        meta["registry"] = registry
    chunks = [
        Chunk("guide/install.md", "Install", "From PyPI", f"Install {name} with pip. {text}", 12, False),
        Chunk("guide/usage.md", "Usage", "Basics", "```py\nimport x\n```\nCall the thing.", 10, True),
    ]
    return write_package(Path(path), meta, chunks)


def assert_error(resp: object, status: int) -> str:
    """Every error is `{"error": "<message>"}` and nothing else; returns the message."""
    assert resp.status_code == status, (resp.status_code, resp.text)  # type: ignore[attr-defined]
    assert resp.headers["content-type"].startswith("application/json")  # type: ignore[attr-defined]
    body = resp.json()  # type: ignore[attr-defined]
    assert set(body) == {"error"}, body
    assert isinstance(body["error"], str) and body["error"]
    return body["error"]


def package_url(registry: str, name: str, version: str) -> str:
    from urllib.parse import quote

    return "/packages/" + "/".join(quote(p, safe="") for p in (registry, name, version))


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[TestClient]:
    """The app over an empty data folder, publish key KEY, a 4 MiB upload limit."""
    app = create_app(tmp_path / "data", publish_key=KEY, max_upload_bytes=UPLOAD_LIMIT)
    with TestClient(app) as client:
        yield client


def publish(client: TestClient, path: Path, registry: str, name: str, version: str,
            headers: dict[str, str] | None = None):
    return client.post(package_url(registry, name, version), content=path.read_bytes(),
                       headers=AUTH if headers is None else headers)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """`context-registry-server` in a subprocess on a free loopback port; stderr kept in a file.

    `ServerProcess(data_dir)` serves one `--data` folder; `ServerProcess(args=[...], log=PATH)`
    takes any options (a database, a bucket, timeouts, workers) for the engine and ops tests.
    """

    def __init__(self, data_dir: Path | None = None, key: str | None = KEY, port: int | None = None,
                 *, args: list[str] | None = None, log: Path | None = None) -> None:
        if args is None:
            assert data_dir is not None, "give a data folder or the server's arguments"
            args = ["--data", str(data_dir), "--log-level", "warning"]
        self.data_dir = data_dir
        self.args = args
        self.key = key
        self.port = port or free_port()
        if log is None:
            assert data_dir is not None, "give a log file with args"
            log = data_dir.parent / f"server-{self.port}.log"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> ServerProcess:
        env = {k: v for k, v in os.environ.items() if k != "CONTEXT_REGISTRY_KEY"}
        if self.key:
            env["CONTEXT_REGISTRY_KEY"] = self.key
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "registry_server", *self.args, "--host", "127.0.0.1",
                 "--port", str(self.port)], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"registry server exited: {self.log.read_text()[-3000:]}")
            try:
                if requests.get(self.url + "/health", timeout=1).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"registry server did not answer /health: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def kill(self) -> None:
        """SIGKILL: no shutdown handlers run, as in a crash."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(5)


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(tmp_path / "server-data").start()
    try:
        yield server
    finally:
        server.stop()


# -- a raw HTTP server for misbehaving answers ------------------------------------------

Handler = Callable[[str, str], list[bytes]]
"""(method, raw path with query) -> byte strings to send; the connection closes after them."""


def http_response(status: int, body: bytes = b"", headers: dict[str, str] | None = None,
                  *, content_length: int | str | None = None) -> bytes:
    """A whole answer; `content_length=""` leaves the header out (the body ends at close)."""
    reason = {200: "OK", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error",
              503: "Service Unavailable"}.get(status, "Status")
    lines = [f"HTTP/1.1 {status} {reason}", "Connection: close"]
    if content_length != "":
        lines.append(f"Content-Length: {len(body) if content_length is None else content_length}")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class FakeServer:
    """A threaded loopback server whose answers are raw bytes chosen per request."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[tuple[str, str]] = []
        self.headers: list[dict[str, str]] = []  # each request's headers, names in lower case
        outer = self

        class RequestHandler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                line = self.rfile.readline().decode("latin-1").strip()
                headers = {}
                while (raw := self.rfile.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = raw.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                if not line:
                    return
                method, path, _ = line.split(" ", 2)
                outer.requests.append((method, path))
                outer.headers.append(headers)
                for part in outer.handler(method, path):
                    self.wfile.write(part)
                    self.wfile.flush()

        self.server = QuietTCPServer(("127.0.0.1", 0), RequestHandler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
