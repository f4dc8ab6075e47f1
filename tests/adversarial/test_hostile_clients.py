"""The registry server against hostile clients: a real `context-registry-server` process on
loopback, spoken to with raw sockets and requests. Every answer is `{"error": ...}` (never
a 500), nothing half-published is ever visible, and slow clients are cut off.
"""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from engine_fixtures import pg_cluster, pg_url  # noqa: F401 - fixtures (a PostgreSQL cluster of the session)
from registry_fixtures import AUTH, KEY, ServerProcess, assert_error, package_url

from . import hostile_packages as hp


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the read-mostly checks of this module."""
    srv = ServerProcess(tmp_path_factory.mktemp("adv-registry") / "data").start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[ServerProcess]:
    srv = ServerProcess(tmp_path / "data").start()
    try:
        yield srv
    finally:
        srv.stop()


def post(srv: ServerProcess, path: Path, registry: str, name: str, version: str,
         headers: dict[str, str] | None = None) -> requests.Response:
    return requests.post(srv.url + package_url(registry, name, version), data=path.read_bytes(),
                         headers=AUTH if headers is None else headers, timeout=30)


def listed(srv: ServerProcess, registry: str, name: str) -> list[dict]:
    resp = requests.get(f"{srv.url}/search", params={"registry": registry, "name": name}, timeout=10)
    assert resp.status_code == 200
    return resp.json()


@pytest.mark.parametrize("raw_path", [
    "/packages/npm/..%2F..%2Fetc%2Fpasswd/1.0.0/download",
    "/packages/npm/%2e%2e/1.0.0/download",
    "/packages/npm/a%00b/1.0.0",
    "/packages/npm/a/..%2F..%2Fregistry.sqlite/download",
    "/packages/NPM/a/1.0.0",
    "/packages/npm/a/1.0.0%0Aevil",
    "/packages/npm/" + "a" * 3000 + "/1.0.0",
    "/packages/npm/%ff%fe/1.0.0",
    "/api/packages/npm/..%2F..",
    "/docs/npm/%2e%2e%2f%2e%2e",
], ids=lambda p: p if len(p) < 100 else "very_long_name")
def test_path_tricks_get_errors_and_leak_nothing(raw_path: str, server: ServerProcess) -> None:
    """API paths answer the JSON error shape; the HTML pages under /docs/ an HTML error page."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(f"GET {raw_path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    assert status in (400, 404), answer[:300]
    assert b"root:" not in answer and b"SQLite format" not in answer
    if raw_path.startswith("/docs/"):
        assert b"text/html" in answer.split(b"\r\n\r\n", 1)[0]
    else:
        assert b'"error"' in answer


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": "Bearer wrong"},
    {"Authorization": f"Basic {KEY}"},
    {"Authorization": f"Bearer {KEY}x"},
    {"Authorization": f"Bearer {KEY[:-1]}"},
    {"Authorization": "Bearer "},
], ids=["none", "wrong", "basic_scheme", "key_plus_one", "key_minus_one", "empty_bearer"])
def test_publish_needs_the_exact_key(headers: dict[str, str], server: ServerProcess, tmp_path: Path) -> None:
    pkg = hp.base_package(tmp_path / "p.db", name="keyed", registry="npm")
    assert_error(post(server, pkg, "npm", "keyed", "1.0.0", headers=headers), 401)
    assert listed(server, "npm", "keyed") == []


@pytest.mark.parametrize("trick", ["wrong_types", "truncated", "traversal_name", "chunks_is_view", "no_fts"])
def test_hostile_upload_refused(trick: str, server: ServerProcess, tmp_path: Path) -> None:
    bad = hp.REFUSED[trick](tmp_path / f"{trick}.db")
    resp = post(server, bad, "npm", "evil", "1.0.0")
    assert 400 <= resp.status_code < 500, resp.text
    assert listed(server, "npm", "evil") == []


def test_upload_whose_meta_names_another_package_refused(server: ServerProcess, tmp_path: Path) -> None:
    pkg = hp.base_package(tmp_path / "p.db", name="alpha", registry="npm")
    resp = post(server, pkg, "npm", "beta", "1.0.0")
    assert 400 <= resp.status_code < 500, resp.text
    assert listed(server, "npm", "beta") == []


def test_endless_fts_view_refused_at_publish(server: ServerProcess, tmp_path: Path) -> None:
    bad = hp.fts_endless_view(tmp_path / "endless.db")
    resp = post(server, bad, "npm", "evil", "1.0.0")
    assert 400 <= resp.status_code < 500, resp.text


def test_unicode_digit_content_length_on_upload(server: ServerProcess) -> None:
    """`Content-Length: ²` on a publish is refused before the app sees it (400)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(f"POST {package_url('npm', 'cl', '1.0.0')} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  f"Authorization: Bearer {KEY}\r\n".encode() + b"Content-Length: \xb2\r\n\r\nab")
        answer = s.recv(4096)
    assert answer.startswith(b"HTTP/1.1 400"), answer
    assert listed(server, "npm", "cl") == []


def test_unicode_digit_query_parameter(server: ServerProcess) -> None:
    resp = requests.get(f"{server.url}/api/search", params={"q": "x", "limit": "\u00b2"}, timeout=10)
    assert_error(resp, 400)


def test_concurrent_publishes_of_one_version(server: ServerProcess, tmp_path: Path) -> None:
    """Eight uploads of npm/race@1.0.0 with different bytes at once: one wins, the rest 409."""
    files = [hp.base_package(tmp_path / f"r{i}.db", name="race", registry="npm", sections=[
        ("r.md", "Race", "Run", f"variant {i} streaming")]) for i in range(8)]
    statuses: list[int] = []

    def one(p: Path) -> None:
        statuses.append(post(server, p, "npm", "race", "1.0.0").status_code)

    threads = [threading.Thread(target=one, args=(p,)) for p in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(statuses) == [201] + [409] * 7, statuses
    entries = listed(server, "npm", "race")
    assert len(entries) == 1
    served = requests.get(server.url + package_url("npm", "race", "1.0.0") + "/download", timeout=10).content
    assert served in {p.read_bytes() for p in files}


def _raw_upload(port: int, name: str, total: int, sent: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall((f"POST {package_url('npm', name, '1.0.0')} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               f"Authorization: Bearer {KEY}\r\nContent-Length: {total}\r\n\r\n").encode() + sent)
    return s


def _tmp_files(data: Path) -> list[str]:
    return sorted(p.name for p in (data / "tmp").iterdir()) if (data / "tmp").is_dir() else []


def test_client_gone_mid_upload_publishes_nothing(fresh_server: ServerProcess, tmp_path: Path) -> None:
    body = hp.base_package(tmp_path / "p.db", name="gone", registry="npm").read_bytes()
    s = _raw_upload(fresh_server.port, "gone", len(body), body[: len(body) // 2])
    time.sleep(0.5)
    s.close()  # the publisher was killed
    deadline = time.monotonic() + 10
    while _tmp_files(fresh_server.data_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _tmp_files(fresh_server.data_dir) == []
    assert listed(fresh_server, "npm", "gone") == []


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill9", "sigterm"])
def test_server_killed_mid_upload_loses_nothing(sig: int, fresh_server: ServerProcess, tmp_path: Path) -> None:
    """kill -9 or SIGTERM during an upload that stalls halfway: the server exits within its
    graceful-shutdown bound, and after a restart the half upload is gone and what was
    published before is intact and downloadable."""
    good = hp.base_package(tmp_path / "good.db", name="kept", registry="npm")
    assert post(fresh_server, good, "npm", "kept", "1.0.0").status_code == 201
    body = hp.base_package(tmp_path / "p.db", name="half", registry="npm").read_bytes()
    s = _raw_upload(fresh_server.port, "half", len(body), body[: len(body) // 2])
    time.sleep(0.5)
    assert fresh_server.proc is not None
    fresh_server.proc.send_signal(sig)
    fresh_server.proc.wait(20)  # uvicorn's graceful shutdown gives in-flight requests 10 s
    s.close()
    restarted = ServerProcess(fresh_server.data_dir, port=fresh_server.port).start()
    try:
        assert _tmp_files(fresh_server.data_dir) == []
        assert listed(restarted, "npm", "half") == []
        served = requests.get(restarted.url + package_url("npm", "kept", "1.0.0") + "/download", timeout=10)
        assert served.content == good.read_bytes()
        assert post(restarted, tmp_path / "p.db", "npm", "half", "1.0.0").status_code == 201
    finally:
        restarted.stop()


def _dripping(port: int, opening: bytes, seconds: float, closed_at: dict[str, float], key: str) -> None:
    """Send `opening`, then one byte a second; note when the server hangs up."""
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(opening)
            while time.monotonic() - start < seconds:
                try:
                    if s.recv(4096) == b"":
                        break
                except TimeoutError:
                    pass
                except OSError:
                    break
                try:
                    s.sendall(b"a")
                except OSError:
                    break
    finally:
        closed_at[key] = time.monotonic() - start


def test_slow_clients_are_cut_off(fresh_server: ServerProcess) -> None:
    """Headers at a byte a second, and an authenticated upload at a byte a second: both
    connections are closed by the server within 15 s, and no temp file stays."""
    closed_at: dict[str, float] = {}
    bound = 15.0
    headers = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
    upload = (f"POST {package_url('npm', 'slow', '1.0.0')} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              f"Authorization: Bearer {KEY}\r\nContent-Length: 100000000\r\n\r\nSQLite").encode()
    threads = [threading.Thread(target=_dripping, args=(fresh_server.port, opening, bound + 3, closed_at, key))
               for key, opening in (("headers", headers), ("body", upload))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(bound + 10)
    assert closed_at["headers"] < bound and closed_at["body"] < bound, closed_at
    assert _tmp_files(fresh_server.data_dir) == []


# -- issue 32 #12: query lengths bounded before either index -------------------------------

@pytest.fixture(params=["sqlite", "postgresql"])
def either_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    """The server over its SQLite index, and over PostgreSQL (a cluster of its own)."""
    if request.param == "sqlite":
        srv = ServerProcess(tmp_path / "data")
    else:
        pg_url = request.getfixturevalue("pg_url")
        srv = ServerProcess(tmp_path / "data", args=["--data", str(tmp_path / "data"), "--database", pg_url,
                                                     "--log-level", "warning"])
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.mark.parametrize("query", ["a" * 2100, "word " * 200, "é" * 1500], ids=["2KB_word", "1KB_query", "multibyte_word"])
@pytest.mark.parametrize("path", ["/api/search", "/"])
def test_long_queries_get_400_from_either_index(query: str, path: str, either_index: ServerProcess) -> None:
    """Before: PostgreSQL answered 503 "storage unavailable" for a 2 KB word (SQLite: 200)."""
    resp = requests.get(either_index.url + path, params={"q": query}, timeout=10)
    assert_error(resp, 400)
    healthy = requests.get(either_index.url + "/api/search", params={"q": "word"}, timeout=10)
    assert healthy.status_code == 200, healthy.text


# -- issue 32 #13: a full disk while publishing --------------------------------------------

def test_publish_onto_a_full_disk_is_507(fresh_server: ServerProcess, tmp_path: Path) -> None:
    """The server may write no file past 16 KiB (RLIMIT_FSIZE, as a full disk): the upload
    is refused with 507 and one line, nothing is listed, no temp file stays, and the server
    stays healthy and publishes again once there is room."""
    import resource

    assert fresh_server.proc is not None
    pkg = hp.base_package(tmp_path / "full.db", name="full", registry="npm")
    assert pkg.stat().st_size > 16 * 1024
    resource.prlimit(fresh_server.proc.pid, resource.RLIMIT_FSIZE, (16 * 1024, resource.RLIM_INFINITY))
    resp = post(fresh_server, pkg, "npm", "full", "1.0.0")
    assert_error(resp, 507)
    assert "\n" not in resp.json()["error"] and "no room" in resp.json()["error"]
    assert listed(fresh_server, "npm", "full") == []
    assert _tmp_files(fresh_server.data_dir) == []
    assert requests.get(fresh_server.url + "/health", timeout=10).status_code == 200
    resource.prlimit(fresh_server.proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert post(fresh_server, pkg, "npm", "full", "1.0.0").status_code == 201
