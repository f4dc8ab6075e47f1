"""`context serve --http`: many sessions over Streamable HTTP, held to limits a hostile
local client cannot outgrow (docs/security.md, "MCP server").

Every request's Host and Origin must be in an allow list (DNS rebinding), and with a token
(`--token`, `CONTEXT_MCP_TOKEN`) every request must carry `Authorization: Bearer TOKEN`.
The limits (`HttpLimits`, each a `serve` option):

* a request head must be complete within `header_timeout`, and a body must arrive within
  that plus its bytes at 16 KiB/s (the registry server's deadlines, `context_cli.http_guard`);
* at most `max_connections` connections are held (fewer when the descriptor limit is
  lower); one beyond is answered 503 and closed;
* a connection whose answers back up unread for `3 x header_timeout` is dropped;
* at most `max_sessions` sessions: opening one more closes the session idle longest, those
  that never got past their handshake first (`Sessions`); a session idle for `session_idle`
  ends anyway. Each session costs the SDK's per-session state (measured in
  docs/security.md), and its requests are bounded by the connections and the body limit;
* every refusal is logged, at most one line per kind every 10 s (`OncePer`).
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import resource
import socket
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio

from ..errors import ContextError
from ..http_guard import HEADER_TIMEOUT, BodyDeadline, guarded_protocol
from .server import build_server, say
from .tools import Catalog

log = logging.getLogger("context.mcp")
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
SPARE_DESCRIPTORS = 64  # kept free of connections: package files, the store, logs
LOG_EVERY = 10.0  # seconds: at most one log line of a kind this often
USED_REQUESTS = 1  # a session that made more requests than this after opening (its `initialized`) is in use


@dataclass(frozen=True)
class HttpLimits:
    """The bounds of `context serve --http`, with their defaults."""

    header_timeout: float = HEADER_TIMEOUT
    max_connections: int = 256
    max_sessions: int = 100
    session_idle: float = 1800.0
    max_body: int = 1024 * 1024  # a get_docs call is a few kilobytes; topics stop at 10,000 characters

    @property
    def write_timeout(self) -> float:
        return 3 * self.header_timeout

    def connections(self) -> int:
        """`max_connections`, or fewer when the process may open fewer descriptors."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        room = soft - SPARE_DESCRIPTORS if soft != resource.RLIM_INFINITY else self.max_connections
        return max(8, min(self.max_connections, room))


def run_http(catalog: Catalog, host: str, port: int, *, ready: Callable[[str], None] | None = None,
             token: str | None = None, allowed_hosts: Sequence[str] = (),
             limits: HttpLimits = HttpLimits()) -> None:
    """Serve many sessions over Streamable HTTP at http://HOST:PORT/mcp until interrupted.

    The socket is bound here, before uvicorn starts, so a busy port is one clear error and
    port 0 picks a free port that `ready` is told about. Requests must name an allowed Host
    (the bound address, plus localhost names on loopback, plus `allowed_hosts`) and, with a
    `token`, carry it as a bearer token.
    """
    import uvicorn

    configure_logging()
    sock = _bind(host, port)
    url = _url(host, sock.getsockname()[1])
    if not is_loopback(host):
        say(f"Warning: listening on {host}, beyond this machine"
            + ("" if token else "; anyone who can reach it can read your docs (set --token)"))
    app: Any = BodyDeadline(_app(catalog, host, allowed_hosts, limits), grace=limits.header_timeout,
                            limit=limits.max_body, log=log)
    if token:
        app = BearerToken(app, token)
    protocol = guarded_protocol(limits.header_timeout, max_connections=limits.connections(),
                                write_timeout=limits.write_timeout, log=log)
    config = uvicorn.Config(app, log_config=None, log_level="warning", lifespan="on", timeout_graceful_shutdown=2,
                            http=protocol)
    server = uvicorn.Server(config)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            while not server.started and not server.should_exit:
                await anyio.sleep(0.02)
            if server.started and ready is not None:
                ready(url)

    try:
        with _stop_quietly_on_sigterm(server):
            anyio.run(main)
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()


@contextmanager
def _stop_quietly_on_sigterm(server: Any) -> Iterator[None]:
    """SIGTERM ends the server the way a service manager expects: a graceful shutdown, no
    traceback, exit 0. uvicorn handles the signal while it serves and, once stopped, raises it
    again for the handler that was there before; that handler is this one, which only asks the
    server to stop (a SIGTERM before uvicorn takes over stops it too) instead of the CLI's
    exit 143 from inside the event loop."""
    import signal

    previous = signal.signal(signal.SIGTERM, lambda signum, frame: setattr(server, "should_exit", True))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _app(catalog: Catalog, host: str, allowed_hosts: Sequence[str], limits: HttpLimits) -> Any:
    """The Starlette app of the MCP SDK's `streamable_http_app`, with our session manager."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    names = allowed_host_names(host, allowed_hosts)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:*" for n in names] + list(names),
        allowed_origins=[f"{scheme}://{n}{port}" for n in names for scheme in ("http", "https")
                         for port in (":*", "")],
    )
    manager = sessions_manager(build_server(catalog), security, limits)
    return Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))],
                     lifespan=lambda app: manager.run())


def sessions_manager(server: Any, security: Any, limits: HttpLimits) -> Any:
    """The SDK's session manager, bounded by `limits` (see `Sessions`)."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    class Sessions(StreamableHTTPSessionManager):
        """At the session cap, opening a session closes the one idle longest, choosing first
        among those that made no request beyond their handshake (a flood opens sessions and
        leaves them; an agent uses its own). A session with a request in flight, its event
        stream included, is never closed this way; when every session has one, the SDK
        answers 503 as before.

        (This leans on the SDK's session table and its transports' idle scopes: private,
        and checked by tests/adversarial/test_hostile_mcp_http.py.)"""

        def __init__(self) -> None:
            super().__init__(server, security_settings=security, session_idle_timeout=limits.session_idle,
                             max_sessions=limits.max_sessions, max_request_body_size=limits.max_body)
            self.requests: dict[str, int] = {}  # requests made in each session after it opened

        async def _handle_stateful_request(self, scope: Any, receive: Any, send: Any) -> None:
            sid = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"mcp-session-id"), None)
            if sid is not None and sid in self._server_instances:
                self.requests[sid] = self.requests.get(sid, 0) + 1
            await super()._handle_stateful_request(scope, receive, send)

        def _admit_session(self, requestor: Any) -> Any:
            if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
                self._close_idlest()
            return super()._admit_session(requestor)

        def _close_idlest(self) -> None:
            idle = [(sid, t.idle_scope) for sid, t in self._server_instances.items()
                    if t.idle_scope is not None and not t.idle_scope.cancel_called and t._requests_in_flight == 0]
            if not idle:
                return
            sid, scope = min(idle, key=lambda it: (self.requests.get(it[0], 0) > USED_REQUESTS, it[1].deadline))
            self._server_instances.pop(sid, None)
            self._session_owners.pop(sid, None)
            self.requests.pop(sid, None)
            scope.cancel()  # its server task ends and terminates the transport
            log.info("closed the session idle longest to open another (%d sessions at most)", self.max_sessions)

        async def _discard_session(self, session_id: str, transport: Any) -> None:
            self.requests.pop(session_id, None)
            await super()._discard_session(session_id, transport)

    return Sessions()


def configure_logging() -> None:
    """Warnings and errors to stderr, one line of a kind per `LOG_EVERY` seconds at most:
    a client that is refused a thousand times costs a few lines, not a log per attempt."""
    from ..http_guard import OncePer

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(OncePer(LOG_EVERY))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_host_names(host: str, extra: Sequence[str] = ()) -> list[str]:
    """Host names a request may use: the bound address (bracketed if IPv6), the loopback
    names when it is loopback, and what the user added. A wildcard bind (0.0.0.0, ::) names
    no host, so only loopback names and the user's additions are accepted."""
    names = [f"[{host}]" if ":" in host else host]
    if is_loopback(host) or host in ("0.0.0.0", "::"):
        names += LOOPBACK_NAMES
    names += [h.strip() for h in extra if h.strip()]
    return [n for n in dict.fromkeys(names) if n not in ("0.0.0.0", "[::]")]


class BearerToken:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer TOKEN`."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = b'{"error": "missing or wrong bearer token (Authorization: Bearer TOKEN)"}'
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _bind(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as e:
        raise ContextError(f"cannot listen on {host}:{port}: {e.strerror or e}"
                           " (is another server using the port? try another --http PORT)") from None
    sock.set_inheritable(True)
    return sock


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/mcp"


