"""Generators of hostile clients of `context serve --http`, on raw sockets (the SDK's client
is too polite to be one): heads and bodies sent a byte at a time, floods of sessions that
are opened and never used, and clients that send requests and never read the answers.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "adv", "version": "0"}}}
ACCEPT = "application/json, text/event-stream"


def request_bytes(port: int, body: dict[str, Any] | bytes, *, session: str | None = None,
                  length: int | None = None, close: bool = False) -> bytes:
    """One POST /mcp as a client sends it (`length` may lie about the body)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
             f"Accept: {ACCEPT}", f"Content-Length: {len(data) if length is None else length}",
             "MCP-Protocol-Version: 2025-06-18"]
    if session:
        lines.append(f"Mcp-Session-Id: {session}")
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def exchange(port: int, body: dict[str, Any], session: str | None = None, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    """Send one request on its own connection; (status, lower-case headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request_bytes(port, body, session=session, close=True))
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    head, _, rest = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return int(lines[0].split(" ", 2)[1]), headers, rest


@dataclass
class Dripping:
    """Connections that each send an opening and then one byte every `every` seconds, for
    ever; `closed_after` records how long the server took to close each."""

    port: int
    opening: bytes
    count: int
    every: float = 1.0
    sockets: list[socket.socket] = field(default_factory=list)
    closed_after: list[float] = field(default_factory=list)
    refused: int = 0  # connections the server would not even take (connect failed)

    def __enter__(self) -> Dripping:
        self.start = time.monotonic()
        for _ in range(self.count):
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
                s.sendall(self.opening)
            except OSError:
                self.refused += 1
                continue
            s.setblocking(False)
            self.sockets.append(s)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drip, daemon=True)
        self._thread.start()
        return self

    def _drip(self) -> None:
        alive = list(self.sockets)
        while alive and not self._stop.wait(self.every):
            for s in list(alive):
                try:
                    if s.recv(65536) == b"":
                        raise ConnectionError
                except BlockingIOError:
                    pass
                except OSError:
                    self._gone(s, alive)
                    continue
                try:
                    s.send(b"a")
                except BlockingIOError:
                    pass
                except OSError:
                    self._gone(s, alive)

    def _gone(self, s: socket.socket, alive: list[socket.socket]) -> None:
        alive.remove(s)
        self.closed_after.append(time.monotonic() - self.start)
        s.close()

    def wait_all_closed(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.closed_after) >= len(self.sockets):
                return True
            time.sleep(0.1)
        return False

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        for s in self.sockets:
            s.close()


def slow_heads(port: int, count: int, every: float = 1.0) -> Dripping:
    """Request heads that never end: the header block grows a byte a second."""
    return Dripping(port, f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode(), count, every)


def slow_body(port: int, every: float = 1.0) -> Dripping:
    """A complete head that declares a 100,000-byte body, then a byte a second of it."""
    return Dripping(port, request_bytes(port, b'{"jsonrpc": "2.0", ', length=100_000), 1, every)


def session_flood(port: int, count: int) -> tuple[list[str], dict[int, int]]:
    """`count` sessions opened with `initialize` and never used again: (their ids, statuses seen)."""
    ids, statuses = [], {}
    for _ in range(count):
        status, headers, _ = exchange(port, INIT)
        statuses[status] = statuses.get(status, 0) + 1
        if "mcp-session-id" in headers:
            ids.append(headers["mcp-session-id"])
    return ids, statuses


def open_session(port: int) -> str:
    """A session an agent uses: initialized and confirmed."""
    status, headers, body = exchange(port, INIT)
    assert status == 200, (status, body[:300])
    sid = headers["mcp-session-id"]
    status, _, _ = exchange(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    assert status in (200, 202), status
    return sid


def never_reading(port: int, session: str, requests: int, args: dict[str, Any]) -> socket.socket:
    """One connection that pipelines `requests` get_docs calls and never reads an answer
    (a small receive buffer, so the answers back up into the server)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    payload = b"".join(request_bytes(port, {"jsonrpc": "2.0", "id": i + 10, "method": "tools/call",
                                            "params": {"name": "get_docs", "arguments": args}}, session=session)
                       for i in range(requests))
    view = memoryview(payload)
    deadline = time.monotonic() + 10
    while view and time.monotonic() < deadline:
        try:
            view = view[s.send(view):]
        except BlockingIOError:
            time.sleep(0.01)
        except OSError:
            break
    return s


def is_closed(s: socket.socket) -> bool:
    """Whether the server has closed (or reset) the connection, reading nothing of it."""
    try:
        s.send(b"\r\n")
        return False
    except BlockingIOError:
        return False
    except OSError:
        return True
