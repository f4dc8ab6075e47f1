"""Loopback test servers that stay quiet when a client hangs up on them.

Many tests make the client give up mid-answer on purpose. socketserver prints the handler's
BrokenPipeError to sys.stderr from its own thread, and under click's CliRunner (which swaps
sys.stderr) that traceback landed in the output a test counts lines of: a test that failed
about once in three runs. A client going away is the expected end; anything else still prints.
"""

from __future__ import annotations

import socketserver
import sys
from http.server import ThreadingHTTPServer


class _Quiet:
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False  # a handler still writing to a gone client must not hold up the test

    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)  # type: ignore[misc]


class QuietTCPServer(_Quiet, socketserver.ThreadingTCPServer):
    """A threaded TCP server for raw-bytes handlers."""


class QuietHTTPServer(_Quiet, ThreadingHTTPServer):
    """A threaded HTTP server for BaseHTTPRequestHandler subclasses."""
