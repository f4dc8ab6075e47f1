"""Operating the registry server: shared data folders, timeouts, strict numbers, metrics, logs."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
import requests
from registry_fixtures import AUTH, KEY, ServerProcess, app_client, assert_error, make_package, package_url, publish  # noqa: F401
from test_registry_replicas import race


@pytest.fixture
def two_on_one_folder(tmp_path: Path):
    """Two server processes over one `--data` folder (SQLite + files)."""
    started = [ServerProcess(tmp_path / "data", log=tmp_path / f"p{i}.log").start() for i in range(2)]
    try:
        yield started
    finally:
        for r in started:
            r.stop()


def test_two_processes_share_one_data_folder(two_on_one_folder, tmp_path):
    a, b = two_on_one_folder
    for round_ in range(3):
        version = f"1.0.{round_}"
        one = make_package(tmp_path / f"one{round_}.db", "race", version, text="one")
        two = make_package(tmp_path / f"two{round_}.db", "race", version, text="two")
        answers = race([(a, one), (b, two)], "race", version)
        assert sorted(r.status_code for r in answers) == [201, 409], [r.text for r in answers]
    same = make_package(tmp_path / "same.db", "same", "1.0.0")
    assert sorted(r.status_code for r in race([(a, same), (b, same)], "same", "1.0.0")) == [200, 201]
    assert len(list((tmp_path / "data" / "blobs").glob("*/*.db"))) == 4
    listed = requests.get(b.url + "/search?registry=npm&name=race", timeout=5).json()
    assert [e["version"] for e in listed] == ["1.0.2", "1.0.1", "1.0.0"]


def test_starting_a_second_process_keeps_the_first_ones_upload(two_on_one_folder, tmp_path):
    a, _ = two_on_one_folder
    pkg = make_package(tmp_path / "p.db", "slow", "1.0.0", text="x " * 20000)
    body = pkg.read_bytes()
    with socket.create_connection(("127.0.0.1", a.port)) as s:
        s.sendall((f"POST {package_url('npm', 'slow', '1.0.0')} HTTP/1.1\r\nHost: x\r\n"
                   f"Authorization: Bearer {KEY}\r\nContent-Length: {len(body)}\r\n\r\n").encode()
                  + body[:1000])
        time.sleep(0.3)
        third = ServerProcess(tmp_path / "data", log=tmp_path / "p3.log").start()  # its start-up sweep must spare a live upload
        try:
            s.sendall(body[1000:])
            answer = s.recv(4096).decode()
        finally:
            third.stop()
    assert answer.startswith("HTTP/1.1 201"), answer


def slow_server(tmp_path: Path) -> ServerProcess:
    return ServerProcess(args=["--data", str(tmp_path / "data"), "--log-level", "warning", "--header-timeout", "1",
                               "--min-upload-rate", "1"], log=tmp_path / "slow.log").start()


def closed_within(s: socket.socket, seconds: float, trickle: bytes = b"") -> tuple[bool, bytes]:
    """Send `trickle` one byte every 0.2 s until the server closes the connection or time is up."""
    s.settimeout(0.2)
    deadline, got, i = time.monotonic() + seconds, b"", 0
    while time.monotonic() < deadline:
        try:
            if i < len(trickle):
                s.sendall(trickle[i:i + 1])
                i += 1
            chunk = s.recv(4096)
            if not chunk:
                return True, got
            got += chunk
        except TimeoutError:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True, got
    return False, got


def test_slow_headers_are_cut_off(tmp_path):
    server = slow_server(tmp_path)
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            closed, _ = closed_within(s, 5, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100)
            assert closed
        with socket.create_connection(("127.0.0.1", server.port)) as s:  # a keep-alive idler too
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            closed, got = closed_within(s, 5)
            assert closed and got.startswith(b"HTTP/1.1 200")
        assert requests.get(server.url + "/health", timeout=5).status_code == 200
    finally:
        server.stop()


def test_a_trickling_upload_is_cut_off_and_its_file_removed(tmp_path):
    server = slow_server(tmp_path)
    try:
        url = package_url("npm", "slow", "1.0.0")
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            s.sendall((f"POST {url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
                       "Content-Length: 100000\r\n\r\n").encode())
            closed, got = closed_within(s, 8, b"x" * 100)
        assert closed and b" 408 " in got.split(b"\r\n", 1)[0] and b"too slow" in got
        assert list((tmp_path / "data" / "tmp").iterdir()) == []
        assert_error(requests.get(server.url + url, timeout=5), 404)
    finally:
        server.stop()


@pytest.mark.parametrize("value", ["²", "١٢", "1²", "+5", " 5", "-1", "0x10", "9" * 40, "５"])
def test_numbers_are_ascii_digits_only(app_client, value):
    assert "whole number" in assert_error(app_client.get("/api/search", params={"q": "x", "limit": value}), 400)


def test_metrics_count_requests_bytes_and_packages(app_client, tmp_path):
    pkg = make_package(tmp_path / "p.db", "zod", "3.0.0")
    assert publish(app_client, pkg, "npm", "zod", "3.0.0").status_code == 201
    app_client.get("/packages/npm/zod/3.0.0/download")
    app_client.get("/search?registry=npm&name=zod")
    app_client.get("/nope")
    text = app_client.get("/metrics").text
    lines = set(text.splitlines())
    size = pkg.stat().st_size
    assert 'registry_http_requests_total{route="publish",method="POST",status="201"} 1' in lines
    assert 'registry_http_requests_total{route="download",method="GET",status="200"} 1' in lines
    assert 'registry_http_requests_total{route="other",method="GET",status="404"} 1' in lines
    assert f"registry_upload_bytes_total {size}" in lines
    assert f"registry_download_bytes_total {size}" in lines
    assert "registry_packages 1" in lines
    assert 'registry_http_request_duration_seconds_count{route="search"} 1' in lines
    assert 'registry_http_request_duration_seconds_bucket{route="search",le="+Inf"} 1' in lines


def test_one_json_access_line_per_request(tmp_path):
    server = ServerProcess(args=["--data", str(tmp_path / "data"), "--log-level", "info"],
                           log=tmp_path / "log").start()
    try:
        requests.get(server.url + "/search?registry=npm&name=zod", timeout=5)
        requests.get(server.url + "/packages/npm/zod/1.0.0", timeout=5)
    finally:
        server.stop()
    entries = [json.loads(line) for line in server.log.read_text().splitlines() if line.startswith("{")]
    ours = [e for e in entries if e["route"] in ("search", "package")]
    assert [(e["method"], e["path"], e["status"]) for e in ours] == [
        ("GET", "/search", 200), ("GET", "/packages/npm/zod/1.0.0", 404)]
    assert all(e["ms"] >= 0 and e["client"] == "127.0.0.1" and e["bytes_out"] > 0 for e in ours)


def test_the_plain_server_needs_no_database_or_s3_library(tmp_path):
    """`--data` alone must never import psycopg or boto3 (they are an optional extra)."""
    import subprocess
    import sys

    from registry_fixtures import REPO

    code = ("import sys; from starlette.testclient import TestClient; "
            "from registry_server.app import create_app; "
            f"c = TestClient(create_app({str(tmp_path / 'd')!r})); c.__enter__(); "
            "assert c.get('/health').status_code == 200; c.__exit__(None, None, None); "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('psycopg', 'psycopg_pool', 'boto3', 'botocore')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)


def test_workers_share_the_port_and_the_storage(tmp_path):
    server = ServerProcess(args=["--data", str(tmp_path / "data"), "--workers", "2", "--log-level", "warning",
                                 "--header-timeout", "1"], log=tmp_path / "w.log").start()
    try:
        pkg = make_package(tmp_path / "p.db", "zod", "3.0.0")
        r = requests.post(server.url + package_url("npm", "zod", "3.0.0"), data=pkg.read_bytes(),
                          headers=AUTH, timeout=10)
        assert r.status_code == 201
        for _ in range(6):  # new connections land on either worker; each sees the version
            found = requests.get(server.url + "/search?registry=npm&name=zod", timeout=5,
                                 headers={"Connection": "close"}).json()
            assert [e["version"] for e in found] == ["3.0.0"]
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            assert closed_within(s, 5, b"GET /health HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 100)[0]
    finally:
        server.stop()
