"""The test servers' own promise: a client hanging up mid-answer prints nothing."""

from __future__ import annotations

import io
import re
import socket
import threading
import time
import tokenize
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from quiet_servers import QuietHTTPServer
from registry_fixtures import FakeServer, http_response


def test_a_client_hanging_up_mid_body_leaves_no_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    done: list[bool] = []

    def endless(method: str, path: str) -> list[bytes]:
        def parts():
            yield http_response(200, b"", content_length=str(1 << 30))
            try:
                for _ in range(1 << 14):
                    yield b"x" * 65536
            finally:
                done.append(True)
        return parts()  # type: ignore[return-value]

    with FakeServer(endless) as fake:
        port = int(fake.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
            s.recv(1024)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        deadline = time.monotonic() + 10
        while not done and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # the server's error handling runs after the handler's generator closes
    assert done
    assert capfd.readouterr().err == ""


def _reset_after_head(port: int) -> None:
    """A client that reads the start of an answer, then hangs up with a reset (SO_LINGER 0)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
        s.recv(1024)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def _http_server(body: Callable[[BaseHTTPRequestHandler], None]) -> QuietHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body(self)

        def log_message(self, *args: object) -> None:
            pass

    httpd = QuietHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return httpd


def test_the_http_server_is_quiet_when_a_client_hangs_up_but_not_about_bugs(
        capfd: pytest.CaptureFixture[str]) -> None:
    done = threading.Event()

    def endless(handler: BaseHTTPRequestHandler) -> None:
        try:
            handler.send_response(200)
            handler.send_header("Content-Length", str(1 << 30))
            handler.end_headers()
            for _ in range(1 << 14):
                handler.wfile.write(b"x" * 65536)  # no try: the server's handle_error sees it
        finally:
            done.set()

    httpd = _http_server(endless)
    try:
        _reset_after_head(httpd.server_address[1])
        assert done.wait(10)
        time.sleep(0.1)  # handle_error runs after the handler returns
        assert capfd.readouterr().err == ""
    finally:
        httpd.shutdown()
        httpd.server_close()

    def buggy(handler: BaseHTTPRequestHandler) -> None:
        done.set()
        raise ValueError("a bug in the fixture")

    done.clear()
    httpd = _http_server(buggy)
    try:
        with socket.create_connection(("127.0.0.1", httpd.server_address[1])) as s:
            s.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
            s.recv(1024)
        assert done.wait(10)
        time.sleep(0.1)
        assert "ValueError: a bug in the fixture" in capfd.readouterr().err
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_every_loopback_test_server_is_a_quiet_one() -> None:
    """A server built straight from http.server or socketserver prints a client's hang-up
    as a traceback into captured output: the flaky-test shape of issue 31. Names in code count
    (built, subclassed or imported), not the same words inside a string."""
    tests = Path(__file__).parent
    loud = re.compile(r"(?:Threading)?(?:HTTP|TCP)Server")
    found = [f"{path.relative_to(tests)}:{tok.start[0]}" for path in sorted(tests.rglob("*.py"))
             if path.name != "quiet_servers.py"
             for tok in tokenize.generate_tokens(io.StringIO(path.read_text("utf-8")).readline)
             if tok.type == tokenize.NAME and loud.fullmatch(tok.string)]
    assert found == []
