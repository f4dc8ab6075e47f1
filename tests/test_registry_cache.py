"""The read caches: bounded by bytes, emptied when the index generation moves, and never
serving an answer another process (or a publish in this one) has since replaced."""

from __future__ import annotations

import hashlib

import requests
from registry_fixtures import AUTH, KEY, ServerProcess, app_client, assert_error, make_package, package_url, publish  # noqa: F401
from starlette.testclient import TestClient

from registry_server.app import create_app
from registry_server.cache import Cache


def test_least_recently_used_entries_make_room():
    cache = Cache(400)
    cache.put("a", b"a", 100)
    cache.put("b", b"b", 100)
    cache.put("c", b"c", 100)
    assert cache.get("a") == b"a"  # now the most recently used
    cache.put("d", b"d", 100)
    cache.put("e", b"e", 100)
    assert cache.get("b") is None and cache.get("a") == b"a" and cache.get("e") == b"e"
    assert cache.size <= 400


def test_an_entry_larger_than_a_quarter_is_not_kept():
    cache = Cache(400)
    cache.put("small", 1, 100)
    cache.put("big", 2, 101)
    assert cache.get("big") is None and cache.get("small") == 1
    assert Cache(0).get("x") is None


def test_a_new_generation_empties_it_and_stale_answers_are_dropped():
    cache = Cache(1000)
    cache.sync(1)
    cache.put("k", "old", 10, generation=1)
    cache.sync(2)
    assert cache.get("k") is None and cache.size == 0
    cache.put("k", "computed before the change", 10, generation=1)
    assert cache.get("k") is None
    cache.put("k", "new", 10, generation=2)
    assert cache.get("k") == "new"


def test_answers_follow_publishes_in_process(app_client, tmp_path):
    first = make_package(tmp_path / "a.db", "docs", "latest", text="one")
    second = make_package(tmp_path / "b.db", "docs", "latest", text="two")
    assert app_client.get("/search?registry=npm&name=docs").json() == []
    assert app_client.get("/api/search?q=docs").json()["results"] == []
    assert app_client.get("/packages/npm/docs/latest/download").status_code == 404
    publish(app_client, first, "npm", "docs", "latest")
    for _ in range(2):  # the second time from the caches
        assert [e["sha256"] for e in app_client.get("/search?registry=npm&name=docs").json()] == [
            hashlib.sha256(first.read_bytes()).hexdigest()]
        assert app_client.get("/packages/npm/docs/latest/download").content == first.read_bytes()
    publish(app_client, second, "npm", "docs", "latest")
    assert app_client.get("/packages/npm/docs/latest/download").content == second.read_bytes()
    assert app_client.get("/search?registry=npm&name=docs").json()[0]["sha256"] == hashlib.sha256(
        second.read_bytes()).hexdigest()


def test_one_process_sees_what_another_published_at_once(tmp_path):
    """B answers (and caches) every read, A publishes, B's very next answers are new."""
    a, b = (ServerProcess(tmp_path / "data", log=tmp_path / f"p{i}.log").start() for i in range(2))
    try:
        old = make_package(tmp_path / "old.db", "moving", "latest", description="first words", text="old")
        new = make_package(tmp_path / "new.db", "moving", "latest", description="second words", text="new")
        url = package_url("npm", "moving", "latest")
        assert requests.post(a.url + url, data=old.read_bytes(), headers=AUTH, timeout=10).status_code == 201
        for _ in range(3):
            assert requests.get(b.url + url + "/download", timeout=10).content == old.read_bytes()
            assert requests.get(b.url + "/api/search?q=first", timeout=10).json()["results"]
            assert requests.get(b.url + "/search?registry=npm&name=moving", timeout=10).json()[0][
                "description"] == "first words"
        assert requests.post(a.url + url, data=new.read_bytes(), headers=AUTH, timeout=10).status_code == 201
        assert requests.get(b.url + url + "/download", timeout=10).content == new.read_bytes()
        assert requests.get(b.url + "/api/search?q=first", timeout=10).json()["results"] == []
        assert requests.get(b.url + "/search?registry=npm&name=moving", timeout=10).json()[0][
            "description"] == "second words"
    finally:
        a.stop()
        b.stop()


def test_downloads_without_caches_and_a_damaged_file(tmp_path):
    pkg = make_package(tmp_path / "p.db", "docs", "1.0.0")
    app = create_app(tmp_path / "data", publish_key=KEY, blob_cache_bytes=0, answer_cache_bytes=0)
    with TestClient(app) as client:
        publish(client, pkg, "npm", "docs", "1.0.0")
        url = "/packages/npm/docs/1.0.0/download"
        for _ in range(2):
            assert client.get(url).content == pkg.read_bytes()
        sha = hashlib.sha256(pkg.read_bytes()).hexdigest()
        blob = tmp_path / "data" / "blobs" / sha[:2] / f"{sha}.db"
        blob.write_bytes(pkg.read_bytes()[:100])
        assert "damaged" in assert_error(client.get(url), 500)
        blob.unlink()
        assert "missing" in assert_error(client.get(url), 500)


def test_a_kept_answer_is_the_same_answer_and_still_counted(app_client, tmp_path):
    pkg = make_package(tmp_path / "p.db", "docs", "1.0.0")
    publish(app_client, pkg, "npm", "docs", "1.0.0")
    sha = hashlib.sha256(pkg.read_bytes()).hexdigest()
    for url in ["/search?registry=npm&name=docs", "/api/search?q=docs", "/packages/npm/docs/1.0.0",
                "/packages/npm/docs/1.0.0/download"]:
        first, again = app_client.get(url), app_client.get(url)
        assert (again.status_code, again.content) == (first.status_code, first.content) == (200, first.content)
        assert again.headers == first.headers
    r = app_client.get("/packages/npm/docs/1.0.0/download", headers={"If-None-Match": f'"{sha}"'})
    assert r.status_code == 304 and r.content == b""
    metrics = app_client.get("/metrics").text
    assert 'registry_http_requests_total{route="download",method="GET",status="200"} 2' in metrics
    assert 'registry_http_requests_total{route="search",method="GET",status="200"} 2' in metrics
