"""What our HTTP servers (the registry server, `context serve --http`) need from uvicorn and
it does not give: deadlines for request heads and bodies, a bound on connections, a deadline
for clients that stop reading, and log lines that an attacker cannot multiply.

uvicorn's keep-alive timeout is cancelled by the first byte a client sends, so a client
that sends its headers one byte a second holds a connection forever; nothing bounds the
connections either, so a thousand such clients take every file descriptor. `guarded_protocol`
adds to uvicorn's HTTP/1.1 protocol (httptools' when installed, it parses several times
faster than h11; else h11's):

* a head deadline: a timer starts when a connection opens (and again after each response)
  and closes the connection if no complete request head has arrived by then;
* a connection cap: a connection beyond it is answered 503 and closed at once;
* a write deadline: a connection whose answers have backed up (the transport paused writing)
  for that long is dropped (a client that sends requests and never reads them).

`BodyDeadline` bounds request bodies the same way the registry server bounds uploads: a grace
period plus the bytes received at a minimum rate. Each refusal is logged (`log`, a logger)
as one line whose text names its kind; `OncePer` on the handler keeps that to one line of a
kind per interval, counting the rest.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

HEADER_TIMEOUT = 10.0  # seconds for a complete request head
MIN_BODY_RATE = 16 * 1024  # bytes a second, averaged, after the head deadline's grace
REJECTION_LOG_SECONDS = 10.0  # at most one log line per reason this often


class OncePer(logging.Filter):
    """A log filter that lets through the first record of a kind (its logger and message
    template), then at most one per `seconds`, telling how many it held back meanwhile."""

    MAX_KINDS = 1000  # messages formatted before logging make a kind each: forget them all past this

    def __init__(self, seconds: float = REJECTION_LOG_SECONDS) -> None:
        super().__init__()
        self.seconds = seconds
        self._last: dict[tuple[str, str], float] = {}
        self._held: dict[tuple[str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self.seconds:
            self._held[key] = self._held.get(key, 0) + 1
            return False
        if len(self._last) >= self.MAX_KINDS:
            self._last.clear()
            self._held.clear()
        self._last[key] = now
        held = self._held.pop(key, 0)
        if held:
            record.msg = f"{record.msg} ({held} more like it held back)"
        return True


def refused(log: logging.Logger, reason: str, peer: object = None) -> None:
    """One warning for a refused client; the reason is the message's kind (see `OncePer`)."""
    where = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else str(peer or "?")
    log.warning("refused a client: " + reason.replace("%", "%%") + " (%s)", where)


class GuardedConnection:
    """Mixin for a uvicorn HTTP/1.1 protocol: the head deadline, the connection cap and the
    write deadline of the module docstring.

    Both uvicorn protocols parse synchronously in `data_received` and set `self.cycle` when a
    request head is complete, so checking after it is enough.
    """

    header_timeout = HEADER_TIMEOUT
    max_connections: int | None = None
    write_timeout: float | None = None
    log: logging.Logger | None = None
    _header_timer: asyncio.TimerHandle | None = None
    _write_timer: asyncio.TimerHandle | None = None
    cycle: Any
    connections: set[Any]
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        if self.max_connections is not None and len(self.connections) > self.max_connections:
            self._refuse(f"over {self.max_connections} open connections")
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)  # type: ignore[misc]
        if self._in_request():
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self._in_request():
            self._arm()

    def pause_writing(self) -> None:
        super().pause_writing()  # type: ignore[misc]
        if self.write_timeout is not None and self._write_timer is None:
            self._write_timer = self.loop.call_later(self.write_timeout, self._stalled)

    def resume_writing(self) -> None:
        super().resume_writing()  # type: ignore[misc]
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        super().connection_lost(exc)  # type: ignore[misc]

    def _in_request(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout, self._expired)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _expired(self) -> None:
        self._header_timer = None
        if not self._in_request() and not self.transport.is_closing():
            self._note(f"no complete request head in {self.header_timeout:g} s")
            self.transport.close()

    def _stalled(self) -> None:
        self._write_timer = None
        if not self.transport.is_closing():
            self._note(f"did not read its answers for {self.write_timeout:g} s")
            self.transport.abort()

    def _refuse(self, reason: str) -> None:
        body = json.dumps({"error": f"the server is busy ({reason}); try again shortly"}).encode()
        self.transport.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                             b"Retry-After: 5\r\nConnection: close\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body)
        self._note(reason)
        self.transport.close()

    def _note(self, reason: str) -> None:
        if self.log is not None:
            refused(self.log, reason, self.transport.get_extra_info("peername"))


def guarded_protocol(header_timeout: float = HEADER_TIMEOUT, *, max_connections: int | None = None,
                     write_timeout: float | None = None,
                     log: logging.Logger | None = None) -> type[asyncio.Protocol]:
    """A protocol class for `uvicorn.Config(http=...)` with these limits."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    base: type[asyncio.Protocol] = H11Protocol
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = HttpToolsProtocol
    except ImportError:  # httptools is optional
        pass
    return type("GuardedProtocol", (GuardedConnection, base), {
        "header_timeout": header_timeout, "max_connections": max_connections,
        "write_timeout": write_timeout, "log": log})


class BodyDeadline:
    """ASGI middleware: a request body must arrive within `grace` seconds plus its bytes at
    `min_rate` bytes a second, and be at most `limit` bytes; else 408 or 413, and the
    connection is closed. The body is read whole before the app runs (MCP bodies are small
    JSON), then handed to it as one message; later `receive` calls reach the client (so the
    app still hears of a disconnect)."""

    def __init__(self, app: Any, *, grace: float = HEADER_TIMEOUT, min_rate: int = MIN_BODY_RATE,
                 limit: int = 4 * 1024 * 1024, log: logging.Logger | None = None) -> None:
        self.app, self.grace, self.min_rate, self.limit = app, grace, min_rate, limit
        self.log = log

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "DELETE", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        start, body, ended = loop.time(), bytearray(), False
        while not ended:
            remaining = start + self.grace + len(body) / self.min_rate - loop.time()
            try:
                async with asyncio.timeout(max(remaining, 0.0)):
                    message = await receive()
            except TimeoutError:
                await self._answer(send, 408, f"the request body is too slow: send at least {self.min_rate} "
                                              "bytes a second", scope)
                return
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            if len(body) > self.limit:
                await self._answer(send, 413, f"the request body is over {self.limit} bytes", scope)
                return
            ended = not message.get("more_body", False)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _answer(self, send: Callable[..., Any], status: int, message: str, scope: dict[str, Any]) -> None:
        if self.log is not None:
            refused(self.log, message, scope.get("client"))
        data = json.dumps({"error": message}).encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
            (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": data})
