"""A GET-only HTTP server on loopback serving fixed bodies by path: a stand-in for package
indexes (PyPI, npm, Hex) and file hosts. It records every path asked for."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from quiet_servers import QuietHTTPServer


@dataclass
class Routes:
    routes: dict[str, bytes] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    url: str = ""

    def add(self, path: str, body: bytes | dict) -> None:
        self.routes[path] = json.dumps(body).encode() if isinstance(body, dict) else body


@contextmanager
def serving(routes: Routes, not_found: bytes = b'{"error": "not found"}') -> Iterator[Routes]:
    """Serve `routes` until the block ends (unknown paths: 404 with `not_found`)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            routes.log.append(self.path)
            body = routes.routes.get(self.path)
            self.send_response(200 if body is not None else 404)
            body = body if body is not None else not_found
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with serve(Handler) as routes.url:
        yield routes


@contextmanager
def serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Run `handler` on a loopback port until the block ends; yields the server's base URL."""
    httpd = QuietHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
