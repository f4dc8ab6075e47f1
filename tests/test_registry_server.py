"""The registry server's HTTP API: Context's endpoints, ours, and every refusal in one shape."""

from __future__ import annotations

import hashlib
import socket
import time
from pathlib import Path

import pytest
import requests
from registry_fixtures import (  # noqa: F401
    AUTH,
    KEY,
    PEER_PACKAGE,
    UPLOAD_LIMIT,
    ServerProcess,
    app_client,
    assert_error,
    live_server,
    make_package,
    package_url,
    publish,
)
from starlette.testclient import TestClient

from registry_server.app import create_app


@pytest.fixture
def flask_pkg(tmp_path: Path) -> Path:
    return make_package(tmp_path / "flask.db", "flask", "3.0.0", registry="pip",
                        description="A micro web framework")


# -- Context's API ----------------------------------------------------------------------

def test_publish_then_search_metadata_download(app_client, flask_pkg):
    r = publish(app_client, flask_pkg, "pip", "flask", "3.0.0")
    assert r.status_code == 201 and r.json()["status"] == "created"
    sha = hashlib.sha256(flask_pkg.read_bytes()).hexdigest()

    found = app_client.get("/search", params={"registry": "pip", "name": "flask"}).json()
    assert found == [{"name": "flask", "registry": "pip", "version": "3.0.0",
                      "description": "A micro web framework", "size": flask_pkg.stat().st_size,
                      "sizeBytes": flask_pkg.stat().st_size, "sha256": sha}]

    meta = app_client.get("/packages/pip/flask/3.0.0")
    assert meta.status_code == 200 and meta.headers["x-content-sha256"] == sha
    body = meta.json()
    assert (body["registry"], body["name"], body["version"], body["sha256"]) == ("pip", "flask", "3.0.0", sha)
    assert body["sectionCount"] == 2 and body["format_version"] == "1"

    dl = app_client.get("/packages/pip/flask/3.0.0/download")
    assert dl.status_code == 200 and dl.content == flask_pkg.read_bytes()
    assert dl.headers["content-type"] == "application/octet-stream"
    assert dl.headers["content-length"] == str(flask_pkg.stat().st_size)
    assert dl.headers["x-content-sha256"] == sha
    assert dl.headers["etag"] == f'"{sha}"'


def test_search_empty_and_version_filter(app_client, tmp_path):
    assert app_client.get("/search", params={"registry": "npm", "name": "zod"}).json() == []
    for v in ["3.9.0", "3.10.0", "4.0.0"]:
        publish(app_client, make_package(tmp_path / f"{v}.db", "zod", v), "npm", "zod", v)
    versions = [e["version"] for e in app_client.get("/search?registry=npm&name=zod").json()]
    assert versions == ["4.0.0", "3.10.0", "3.9.0"]
    one = app_client.get("/search?registry=npm&name=zod&version=3.10.0").json()
    assert [e["version"] for e in one] == ["3.10.0"]
    assert app_client.get("/search?registry=npm&name=zod&version=9.9.9").json() == []


def test_search_needs_registry_and_name(app_client):
    assert_error(app_client.get("/search?name=zod"), 400)
    assert_error(app_client.get("/search?registry=npm"), 400)


def test_unknown_package_is_404_with_error_shape(app_client):
    assert_error(app_client.get("/packages/npm/zod/1.0.0"), 404)
    assert_error(app_client.get("/packages/npm/zod/1.0.0/download"), 404)
    assert app_client.head("/packages/npm/zod/1.0.0").status_code == 404


def test_scoped_names_percent_encoded_and_plain(app_client, tmp_path):
    pkg = make_package(tmp_path / "t.db", "@trpc/server", "10.0.0")
    assert publish(app_client, pkg, "npm", "@trpc/server", "10.0.0").status_code == 201
    for path in ["/packages/npm/%40trpc%2Fserver/10.0.0", "/packages/npm/@trpc/server/10.0.0",
                 "/packages/npm/%40trpc%2fserver/10.0.0"]:
        assert app_client.get(path).json()["name"] == "@trpc/server"
        assert app_client.get(path + "/download").content == pkg.read_bytes()
    assert app_client.get("/search?registry=npm&name=%40trpc%2Fserver").json()[0]["version"] == "10.0.0"
    versions = app_client.get("/api/packages/npm/%40trpc%2Fserver").json()["versions"]
    assert [v["version"] for v in versions] == ["10.0.0"]


def test_peer_package_publishes_and_downloads(app_client):
    r = publish(app_client, PEER_PACKAGE, "npm", "anthropic-docs", "2024.7.0")
    assert r.status_code == 201, r.text
    dl = app_client.get("/packages/npm/anthropic-docs/2024.7.0/download")
    assert dl.content == PEER_PACKAGE.read_bytes()


# -- downloads: HEAD and conditional requests -----------------------------------------------

def test_head_and_if_none_match(app_client, flask_pkg):
    publish(app_client, flask_pkg, "pip", "flask", "3.0.0")
    url = "/packages/pip/flask/3.0.0/download"
    sha = hashlib.sha256(flask_pkg.read_bytes()).hexdigest()
    head = app_client.head(url)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(flask_pkg.stat().st_size)
    assert head.headers["x-content-sha256"] == sha
    for tag in [f'"{sha}"', f'W/"{sha}"', f'"other", "{sha}"', "*"]:
        r = app_client.get(url, headers={"If-None-Match": tag})
        assert r.status_code == 304 and r.content == b"" and r.headers["etag"] == f'"{sha}"'
    assert app_client.get(url, headers={"If-None-Match": '"stale"'}).status_code == 200
    assert app_client.head("/packages/pip/flask/3.0.0").status_code == 200


def test_range_requests_get_the_whole_file(app_client, flask_pkg):
    publish(app_client, flask_pkg, "pip", "flask", "3.0.0")
    r = app_client.get("/packages/pip/flask/3.0.0/download", headers={"Range": "bytes=garbage"})
    assert r.status_code == 200 and r.content == flask_pkg.read_bytes()


# -- publishing rules -----------------------------------------------------------------------

def test_publish_needs_the_key(app_client, flask_pkg):
    url = package_url("pip", "flask", "3.0.0")
    r = app_client.post(url, content=flask_pkg.read_bytes())
    assert "Bearer" in assert_error(r, 401) and r.headers["www-authenticate"] == "Bearer"
    assert_error(app_client.post(url, content=b"x", headers={"Authorization": "Bearer wrong"}), 401)
    assert_error(app_client.post(url, content=b"x", headers={"Authorization": f"Basic {KEY}"}), 401)
    assert_error(app_client.post(url, content=b"x", headers={"Authorization": "Bearer "}), 401)
    assert app_client.get("/search?registry=pip&name=flask").json() == []


def test_publishing_disabled_without_a_key(tmp_path, flask_pkg):
    with TestClient(create_app(tmp_path / "data")) as client:
        r = publish(client, flask_pkg, "pip", "flask", "3.0.0")
        assert "disabled" in assert_error(r, 403)
        r = publish(client, flask_pkg, "pip", "flask", "3.0.0", headers={"Authorization": "Bearer "})
        assert_error(r, 403)


def test_republish_same_bytes_is_a_no_op(app_client, flask_pkg):
    first = publish(app_client, flask_pkg, "pip", "flask", "3.0.0").json()
    again = publish(app_client, flask_pkg, "pip", "flask", "3.0.0")
    assert again.status_code == 200 and again.json()["status"] == "unchanged"
    assert again.json()["published_at"] == first["published_at"]


def test_different_bytes_for_a_version_is_409(app_client, flask_pkg, tmp_path):
    publish(app_client, flask_pkg, "pip", "flask", "3.0.0")
    other = make_package(tmp_path / "other.db", "flask", "3.0.0", registry="pip", text="rebuilt")
    assert "immutable" in assert_error(publish(app_client, other, "pip", "flask", "3.0.0"), 409)
    assert app_client.get("/packages/pip/flask/3.0.0/download").content == flask_pkg.read_bytes()


def test_latest_may_move(app_client, tmp_path):
    a = make_package(tmp_path / "a.db", "docs", "latest", text="one")
    b = make_package(tmp_path / "b.db", "docs", "latest", text="two")
    assert publish(app_client, a, "npm", "docs", "latest").status_code == 201
    r = publish(app_client, b, "npm", "docs", "latest")
    assert r.status_code == 201 and r.json()["status"] == "replaced"
    dl = app_client.get("/packages/npm/docs/latest/download")
    assert dl.content == b.read_bytes() and dl.headers["cache-control"] == "no-cache"


def test_upload_too_large_is_413(app_client, tmp_path):
    url = package_url("npm", "big", "1.0.0")
    big = b"\0" * (UPLOAD_LIMIT + 1)
    assert_error(app_client.post(url, content=big, headers=AUTH), 413)

    def chunks():  # no Content-Length: counted while streaming
        for _ in range(50):
            yield b"\0" * 100_000

    assert_error(app_client.post(url, content=chunks(), headers=AUTH), 413)
    assert list((tmp_path / "data" / "tmp").iterdir()) == []


def test_not_a_package_is_422(app_client, tmp_path):
    assert "not a package" in assert_error(
        app_client.post(package_url("npm", "x", "1.0.0"), content=b"hello", headers=AUTH), 422)
    assert_error(app_client.post(package_url("npm", "x", "1.0.0"), content=b"", headers=AUTH), 422)
    assert list((tmp_path / "data" / "tmp").iterdir()) == []


@pytest.mark.parametrize("registry,name,version", [
    ("npm", "other", "1.0.0"), ("npm", "pkg", "1.0.1"), ("pip", "pkg", "1.0.0")])
def test_meta_mismatch_is_422(app_client, tmp_path, registry, name, version):
    pkg = make_package(tmp_path / "p.db", "pkg", "1.0.0", registry="npm")
    assert_error(publish(app_client, pkg, registry, name, version), 422)


# -- hostile paths and unknown routes ---------------------------------------------------

TRICKS = [
    "/packages/npm/%2e%2e/1.0.0",
    "/packages/npm/%2E%2E%2F%2E%2E/1.0.0",
    "/packages/npm/x/%2e%2e",
    "/packages/%2e%2e/x/1.0.0",
    "/packages/npm/a/b/1.0.0",            # a slash outside an @scope
    "/packages/npm/a%2Fb/1.0.0",
    "/packages/npm/x%00y/1.0.0",
    "/packages/npm/x/1.0%00",
    "/packages/npm/x%0Ay/1.0.0",
    "/packages/npm/x%1b/1.0.0",
    "/packages/npm/" + "a" * 300 + "/1.0.0",
    "/packages/npm/x/" + "1" * 100,
    "/packages/npm/%ff%fe/1.0.0",
    "/packages/npm/.hidden/1.0.0",
    "/packages/npm/@/x/1.0.0",
    "/packages/npm//1.0.0",
    "/packages/NPM/x/1.0.0",
]


@pytest.mark.parametrize("path", TRICKS)
def test_path_tricks_are_refused(app_client, flask_pkg, path):
    for resp in (app_client.get(path), app_client.get(path + "/download"),
                 app_client.post(path, content=flask_pkg.read_bytes(), headers=AUTH)):
        assert resp.status_code in (400, 404)
        assert_error(resp, resp.status_code)
    assert app_client.get("/health").json()["packages"] == 0


@pytest.mark.parametrize("params", [
    {"registry": "npm", "name": "../etc"}, {"registry": "npm", "name": "x\x00"},
    {"registry": "../x", "name": "x"}, {"registry": "npm", "name": "x", "version": "../1"},
    {"registry": "npm", "name": "a/b"}])
def test_search_refuses_path_tricks(app_client, params):
    assert_error(app_client.get("/search", params=params), 400)


def test_unknown_routes_and_methods_have_the_error_shape(app_client):
    assert_error(app_client.get("/nope"), 404)
    assert_error(app_client.get("/packages/npm"), 404)
    assert_error(app_client.get("/api/packages/npm/zod"), 404)
    assert_error(app_client.get("/api/packages/npm/%2e%2e"), 400)
    assert_error(app_client.delete("/packages/npm/zod/1.0.0"), 405)
    assert_error(app_client.post("/packages/npm/zod/1.0.0/download", headers=AUTH), 405)
    assert_error(app_client.post("/search"), 405)
    assert_error(app_client.get("/api/search?q=x&limit=0"), 400)


# -- ours: full-text search, versions, health, HTML ----------------------------------------

@pytest.fixture
def catalogue(app_client, tmp_path):
    items = [("npm", "@trpc/server", "10.0.0", "End-to-end typesafe APIs"),
             ("npm", "@trpc/server", "11.0.0", "End-to-end typesafe APIs made easy"),
             ("pip", "flask", "3.0.0", "A micro web framework"),
             ("npm", "zod", "3.22.0", "TypeScript-first schema validation"),
             ("npm", "evil", "1.0.0", '<script>alert("x")</script> & friends'),
             ("npm", "cafe", "1.0.0", "naïve café 日本語 docs")]
    for registry, name, version, description in items:
        pkg = make_package(tmp_path / f"{name.replace('/', '_')}-{version}.db", name, version,
                           registry=registry, description=description)
        assert publish(app_client, pkg, registry, name, version).status_code == 201
    return app_client


def test_fts_search_over_names_and_descriptions(catalogue):
    def names(q: str) -> list[str]:
        r = catalogue.get("/api/search", params={"q": q})
        assert r.status_code == 200
        return [e["name"] for e in r.json()["results"]]

    assert names("trpc") == ["@trpc/server"]
    assert names("typesafe") == ["@trpc/server"]
    assert names("schema validation") == ["zod"]
    assert names("web") == ["flask"]
    assert names("café") == ["cafe"] and names("日本語") == ["cafe"]
    top = catalogue.get("/api/search?q=trpc").json()["results"][0]
    assert top["version"] == "11.0.0" and top["versions"] == ["11.0.0", "10.0.0"]


@pytest.mark.parametrize("q", ['"', '""', "NOT", "NOT flask", "(((", ")", "*", "flask*", "a AND",
                               "OR OR", "NEAR(flask web)", "name:flask", "^flask", "-flask", "+",
                               "'; DROP TABLE packages; --", "\u202e", "🐍", "x" * 100, ""])
def test_fts_search_with_hostile_strings(catalogue, q):
    """(Longer queries and words are a 400: tests/adversarial/test_hostile_clients.py.)"""
    r = catalogue.get("/api/search", params={"q": q})
    assert r.status_code == 200 and isinstance(r.json()["results"], list)
    assert catalogue.get("/", params={"q": q}).status_code == 200


def test_all_versions_of_a_package(catalogue):
    body = catalogue.get("/api/packages/npm/@trpc/server").json()
    assert [v["version"] for v in body["versions"]] == ["11.0.0", "10.0.0"]
    assert all(len(v["sha256"]) == 64 for v in body["versions"])


def test_health(catalogue):
    assert catalogue.get("/health").json() == {"status": "ok", "packages": 6, "database": "ok",
                                                "blobs": "ok"}


def test_html_page_lists_searches_and_escapes(catalogue):
    page = catalogue.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    html = page.text
    assert "@trpc/server" in html and "flask" in html and "<form" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "/packages/npm/%40trpc%2Fserver/11.0.0/download" in html
    found = catalogue.get("/", params={"q": "micro"}).text
    assert "flask" in found and "zod" not in found
    hostile = catalogue.get("/", params={"q": '"><script>x</script>'}).text
    assert "<script>x" not in hostile


# -- a real server process -------------------------------------------------------------

def test_restart_keeps_everything(live_server, tmp_path):
    pkgs = {v: make_package(tmp_path / f"{v}.db", "zod", v) for v in ("3.0.0", "3.1.0")}
    for v, pkg in pkgs.items():
        r = requests.post(live_server.url + package_url("npm", "zod", v), data=pkg.read_bytes(),
                          headers=AUTH, timeout=10)
        assert r.status_code == 201, r.text
    live_server.stop()
    live_server.start()
    found = requests.get(live_server.url + "/search?registry=npm&name=zod", timeout=5).json()
    assert [e["version"] for e in found] == ["3.1.0", "3.0.0"]
    for v, pkg in pkgs.items():
        dl = requests.get(live_server.url + package_url("npm", "zod", v) + "/download", timeout=5)
        assert dl.content == pkg.read_bytes()
    assert requests.get(live_server.url + "/api/search?q=zod", timeout=5).json()["results"]


def test_kill_mid_upload_keeps_the_old_version(tmp_path):
    server = ServerProcess(tmp_path / "data").start()
    try:
        old = make_package(tmp_path / "old.db", "docs", "latest", text="old")
        new = make_package(tmp_path / "new.db", "docs", "latest", text="new " * 20000)
        url = package_url("npm", "docs", "latest")
        assert requests.post(server.url + url, data=old.read_bytes(), headers=AUTH).status_code == 201

        body = new.read_bytes()
        with socket.create_connection(("127.0.0.1", server.port)) as s:  # half a body, then hang up
            s.sendall((f"POST {url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
                       f"Content-Length: {len(body)}\r\n\r\n").encode() + body[: len(body) // 2])
            time.sleep(0.3)
        time.sleep(0.3)
        assert list((tmp_path / "data" / "tmp").iterdir()) == []  # the server cleaned up at once
        dl = requests.get(server.url + url + "/download", timeout=5)
        assert dl.content == old.read_bytes()

        with socket.create_connection(("127.0.0.1", server.port)) as s:  # and now die mid-upload
            s.sendall((f"POST {url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
                       f"Content-Length: {len(body)}\r\n\r\n").encode() + body[: len(body) // 2])
            time.sleep(0.3)
            server.kill()
        assert list((tmp_path / "data" / "tmp").iterdir())  # the kill left a partial upload...
        server.start()
        assert list((tmp_path / "data" / "tmp").iterdir()) == []  # ...which start-up removed
        dl = requests.get(server.url + url + "/download", timeout=5)
        assert dl.content == old.read_bytes()
        assert dl.headers["x-content-sha256"] == hashlib.sha256(old.read_bytes()).hexdigest()
    finally:
        server.stop()
