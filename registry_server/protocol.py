"""uvicorn's HTTP/1.1 protocols with a deadline for request headers.

uvicorn's keep-alive timeout is cancelled by the first byte a client sends, so a client
that sends its headers one byte a second holds a connection forever. Here a timer starts
when a connection opens (and again after each response) and closes the connection if no
complete request head has arrived by then. Bodies are bounded in the app (`app.receive_body`).

The deadline is added to httptools' protocol when httptools is installed (it parses several
times faster than h11, which matters for search throughput), else to h11's.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0
HEADER_TIMEOUT_ENV = "CONTEXT_REGISTRY_HEADER_TIMEOUT"  # for worker processes (`--workers N`)


class HeaderDeadline:
    """Mixin: closes connections whose request head is not complete `header_timeout` seconds in.

    Both uvicorn protocols parse synchronously in `data_received` and set `self.cycle` when a
    request head is complete, so checking after it is enough.
    """

    header_timeout = HEADER_TIMEOUT
    _header_timer: asyncio.TimerHandle | None = None
    cycle: Any
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)  # type: ignore[misc]
        if self._in_request():
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self._in_request():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
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
            self.transport.close()


def with_header_timeout(seconds: float) -> type[asyncio.Protocol]:
    """A protocol class for `uvicorn.run(http=...)` with this header deadline."""
    base: type[asyncio.Protocol] = H11Protocol
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = HttpToolsProtocol
    except ImportError:  # httptools is optional
        pass
    return type("HeaderDeadlineProtocol", (HeaderDeadline, base), {"header_timeout": seconds})


def __getattr__(name: str) -> Any:
    """`registry_server.protocol:EnvironmentProtocol`, the import string uvicorn's worker
    processes load: the deadline comes from the parent through `HEADER_TIMEOUT_ENV`."""
    if name == "EnvironmentProtocol":
        return with_header_timeout(float(os.environ.get(HEADER_TIMEOUT_ENV, HEADER_TIMEOUT)))
    raise AttributeError(name)
