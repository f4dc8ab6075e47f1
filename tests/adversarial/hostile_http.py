"""A hostile web server on 127.0.0.1: registry, npm registry or docs site, as an attacker runs it.

Routes map an exact path (or `*`) to a handler `(request) -> iterable of parts`. A part
is bytes to send, or a float: seconds to wait first (a slow drip). Handlers may be endless
generators; they stop when the client goes away or the server closes. Every request is
recorded with its headers, so tests can see what a client sent where (credentials).
"""

from __future__ import annotations

import gzip
import json
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from quiet_servers import QuietTCPServer

Part = bytes | float
Handler = Callable[["Request"], Iterable[Part]]
REASONS = {200: "OK", 302: "Found", 404: "Not Found", 500: "Internal Server Error"}


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    port: int


def head(status: int = 200, headers: dict[str, str] | None = None, *, length: int | str | None = None,
         close: bool = True) -> bytes:
    """A status line and headers; `length` may be any text, `²` included (sent as Latin-1)."""
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
    if close:
        lines.append("Connection: close")
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def reply(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> list[Part]:
    return [head(status, headers, length=len(body)), body]


def json_reply(data: object, status: int = 200) -> list[Part]:
    return reply(json.dumps(data).encode(), status, {"Content-Type": "application/json"})


def not_found() -> list[Part]:
    return json_reply({"error": "not found"}, 404)


def endless(headers: dict[str, str] | None = None, block: int = 64 * 1024, pause: float = 0.0,
            fill: bytes = b"\0") -> Iterator[Part]:
    """200 without Content-Length, then `block` bytes of `fill` for ever (`pause` s apart)."""
    yield head(200, {"Content-Type": "application/octet-stream", **(headers or {})})
    data = fill * (block // len(fill))
    while True:
        if pause:
            yield pause
        yield data


def drip(body: bytes, every: float = 2.0, headers: dict[str, str] | None = None) -> Iterator[Part]:
    """The right Content-Length, then one byte every `every` seconds."""
    yield head(200, {"Content-Type": "application/octet-stream", **(headers or {})}, length=len(body))
    for i in range(len(body)):
        yield every
        yield body[i:i + 1]


def stall_after(body: bytes, sent: int, headers: dict[str, str] | None = None) -> Iterator[Part]:
    """Declares the whole body, sends the first `sent` bytes, then goes silent for a long time."""
    yield head(200, {"Content-Type": "application/octet-stream", **(headers or {})}, length=len(body))
    yield body[:sent]
    yield 3600.0


def gzip_bomb(unpacked: int = 200 * 1024 * 1024) -> bytes:
    """A gzip stream of `unpacked` zero bytes, about 1/1000 of that: one 1 MiB member repeated."""
    member = gzip.compress(b"\0" * (1024 * 1024), compresslevel=9)
    return member * (unpacked // (1024 * 1024))


def redirect(location: str) -> list[Part]:
    return [head(302, {"Location": location}, length=0)]


class HostileServer:
    """Threaded loopback HTTP/1.1 server; one response per connection."""

    def __init__(self, routes: dict[str, Handler]) -> None:
        self.routes = routes
        self.requests: list[Request] = []
        self.sent = 0  # body and header bytes written, all connections together
        self.closed = threading.Event()
        outer = self

        class RequestHandler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                outer._handle(self.rfile, self.connection)

        self.server = QuietTCPServer(("127.0.0.1", 0), RequestHandler)  # a client hanging up is the expected end
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _handle(self, rfile: object, conn: socket.socket) -> None:
        line = rfile.readline(65536).decode("latin-1").strip()  # type: ignore[attr-defined]
        headers: dict[str, str] = {}
        while True:
            raw = rfile.readline(65536)  # type: ignore[attr-defined]
            if raw in (b"\r\n", b"\n", b""):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if not line:
            return
        method, path, _ = (line.split(" ", 2) + ["", ""])[:3]
        request = Request(method, path, headers, self.port)
        self.requests.append(request)
        handler = self.routes.get(path.split("?")[0]) or self.routes.get("*")
        parts = handler(request) if handler else not_found()
        for part in parts:
            if self.closed.is_set():
                return
            if isinstance(part, float):
                if self.closed.wait(part):
                    return
                continue
            conn.sendall(part)
            self.sent += len(part)

    def __enter__(self) -> HostileServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed.set()
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, path: str, timeout: float = 20.0) -> Request:
        """The first request for `path`, once it has arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for r in list(self.requests):
                if r.path.split("?")[0] == path:
                    return r
            time.sleep(0.02)
        raise AssertionError(f"no request for {path}; got {[r.path for r in self.requests]}")
