"""The test servers' own promise: a client hanging up mid-answer prints nothing."""

from __future__ import annotations

import socket
import time

import pytest
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
