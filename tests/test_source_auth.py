"""Credentials for private docs: auth.json handling, domain matching, the `context auth` CLI,
and what the HTTP fetcher does (and never does) with them."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from web_fixtures import Route, Site, other_host, serve

from context_cli.sources.auth import AuthError, AuthStore, mask
from context_cli.sources.http import FetchError, HttpClient, HttpOptions
from context_cli.surfaces.cli import cli

FAST = HttpOptions(connect_timeout=2, read_timeout=2, retries=0, backoff=0.01)


def test_add_writes_mode_0600_and_reloads(context_home: Path) -> None:
    store = AuthStore.load()
    store.add("https://Docs.Example.com/guide", cookies="session=abc123; theme=dark",
              headers=["Authorization: Bearer tok"])
    store.save()
    path = context_home / "auth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = AuthStore.load()
    creds = again.entries["docs.example.com"]
    assert creds.cookies == {"session": "abc123", "theme": "dark"}
    assert creds.headers == {"Authorization": "Bearer tok"}
    assert creds.as_headers()["Cookie"] == "session=abc123; theme=dark"


def test_domain_matching_covers_one_parent_level_only() -> None:
    store = AuthStore()
    store.add("example.com", cookies="a=parent")
    store.add("docs.example.com", cookies="a=own")
    assert store.for_url("https://example.com/x").cookies == {"a": "parent"}
    assert store.for_url("https://api.example.com/").cookies == {"a": "parent"}
    assert store.for_url("https://docs.example.com/").cookies == {"a": "own"}  # most specific wins
    assert store.for_url("https://a.b.example.com/") is None  # two levels down
    assert store.for_url("https://example.org/") is None
    assert store.for_url("https://notexample.com/") is None
    store.add("127.0.0.1", cookies="ip=1")
    assert store.for_url("https://127.0.0.1/") is not None
    assert store.for_url("https://localhost/") is None


def test_credentials_are_scoped_to_scheme_and_port_like_an_origin() -> None:
    store = AuthStore()
    assert store.add("https://docs.example.com:8443/guide", cookies="a=1") == "docs.example.com:8443"
    store.add("example.com", headers=["Authorization: Bearer t"])
    assert store.for_url("https://docs.example.com:8443/x").cookies == {"a": "1"}
    assert store.for_url("https://docs.example.com:9443/x") is None  # the parent covers :443 only
    assert store.for_url("https://docs.example.com/x").headers == {"Authorization": "Bearer t"}
    assert store.for_url("https://example.com:443/").headers  # the default port, written out
    assert store.for_url("http://example.com/") is None  # never over plain http by default
    assert store.for_url("http://docs.example.com:8443/x") is None
    assert store.for_url("ftp://example.com/") is None
    store.add("example.com", cookies="s=2", allow_http=True)
    assert store.for_url("http://example.com/").cookies == {"s": "2"}
    assert store.for_url("http://example.com:8080/") is None
    assert store.add("http://127.0.0.1:8000", cookies="x=1") == "127.0.0.1:8000"  # an http URL says so
    assert store.for_url("http://127.0.0.1:8000/p").cookies == {"x": "1"}
    assert store.for_url("http://127.0.0.1:8001/p") is None


def test_allow_http_survives_a_save(context_home: Path) -> None:
    store = AuthStore.load()
    store.add("http://127.0.0.1:8000", cookies="x=1")
    store.add("example.com", cookies="y=2")
    store.save()
    again = AuthStore.load()
    assert again.entries["127.0.0.1:8000"].allow_http and not again.entries["example.com"].allow_http
    assert again.for_url("http://127.0.0.1:8000/").cookies == {"x": "1"}


def test_rejects_malformed_input() -> None:
    store = AuthStore()
    with pytest.raises(AuthError):
        store.add("not a domain", cookies="a=b")
    with pytest.raises(AuthError):
        store.add("example.com", cookies="novalue")
    with pytest.raises(AuthError):
        store.add("example.com", headers=["NoColon"])
    with pytest.raises(AuthError):
        store.add("example.com")
    assert store.entries == {}


def test_mask_hides_values() -> None:
    assert mask("abc") == "***"
    assert "secretvalue123" not in mask("secretvalue123")


def test_cli_add_list_remove(context_home: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(cli, ["auth", "add", "docs.example.com", "--cookies", "sid=supersecretcookie",
                            "--header", "X-Token: hunter2hunter2", "--header", "X-Other: v"])
    assert r.exit_code == 0, r.output
    assert "docs.example.com" in r.output
    assert stat.S_IMODE((context_home / "auth.json").stat().st_mode) == 0o600

    r = runner.invoke(cli, ["auth", "list"])
    assert r.exit_code == 0
    assert "docs.example.com" in r.output and "sid=" in r.output and "X-Token" in r.output
    assert "supersecretcookie" not in r.output and "hunter2hunter2" not in r.output

    r = runner.invoke(cli, ["auth", "list", "--json"])
    data = json.loads(r.output)
    assert set(data["docs.example.com"]["headers"]) == {"X-Token", "X-Other"}

    r = runner.invoke(cli, ["auth", "remove", "docs.example.com"])
    assert r.exit_code == 0
    assert AuthStore.load().entries == {}
    r = runner.invoke(cli, ["auth", "remove", "docs.example.com"])
    assert r.exit_code != 0 and "no credentials" in r.output


def test_cli_bad_header_is_one_line() -> None:
    r = CliRunner().invoke(cli, ["auth", "add", "example.com", "--header", "bad"])
    assert r.exit_code != 0
    assert "Traceback" not in r.output and "Name: value" in r.output


def test_credentials_sent_only_to_their_domain() -> None:
    site = Site()
    site.add("/private", "<html><body><h1>Secret</h1><p>text</p></body></html>", cookie="sid=ok")
    with serve(site) as base:
        store = AuthStore()
        with HttpClient(FAST, auth=store) as client:
            with pytest.raises(FetchError) as e:
                client.get(base + "/private")
            assert e.value.status == 401 and "context auth add" in str(e.value)
        store.add("127.0.0.1", cookies="sid=ok", headers=["X-Api-Key: k1"])  # https only, port 443
        with HttpClient(FAST, auth=store) as client:
            with pytest.raises(FetchError):
                client.get(base + "/private")
        store.add(base, cookies="sid=ok", headers=["X-Api-Key: k1"])  # this http origin, said so
        with HttpClient(FAST, auth=store) as client:
            assert b"Secret" in client.get(base + "/private").body
            with pytest.raises(FetchError):
                client.get(other_host(base) + "/private")
    sent = [r for r in site.requests if r.path == "/private"]
    to_ip = [r for r in sent if r.host.startswith("127.0.0.1")]
    to_other = [r for r in sent if r.host.startswith("localhost")]
    assert "sid=ok" in to_ip[-1].headers.get("Cookie", "")
    assert to_ip[-1].headers.get("X-Api-Key") == "k1"
    assert to_other and all("Cookie" not in r.headers and "X-Api-Key" not in r.headers for r in to_other)


def test_redirect_to_another_domain_drops_credentials() -> None:
    site = Site()
    with serve(site) as base:
        site.add("/start", status=302, headers={"Location": other_host(base) + "/landing"}, cookie="sid=ok")
        site.add("/landing", "<html><body><h1>Landing</h1><p>public page text</p></body></html>")
        store = AuthStore()
        store.add(base, cookies="sid=ok", headers=["Authorization: Bearer t"])
        with HttpClient(FAST, auth=store) as client:
            resp = client.get(base + "/start")
    assert b"Landing" in resp.body
    landing = [r for r in site.requests if r.path == "/landing"]
    assert landing and "Cookie" not in landing[0].headers and "Authorization" not in landing[0].headers


def test_redirect_to_another_port_of_the_same_host_drops_credentials() -> None:
    first, second = Site(), Site()
    with serve(first) as base, serve(second) as other:
        first.add("/start", status=302, headers={"Location": other + "/landing"}, cookie="sid=ok")
        second.add("/landing", "<html><body><h1>Landing</h1><p>public page text</p></body></html>")
        store = AuthStore()
        store.add(base, cookies="sid=ok", headers=["Authorization: Bearer t"])
        with HttpClient(FAST, auth=store) as client:
            assert b"Landing" in client.get(base + "/start").body
    start = [r for r in first.requests if r.path == "/start"]
    landing = [r for r in second.requests if r.path == "/landing"]
    assert "sid=ok" in start[0].headers.get("Cookie", "")
    assert landing and "Cookie" not in landing[0].headers and "Authorization" not in landing[0].headers


def test_private_site_added_after_auth(context_home: Path) -> None:
    from context_cli.sources.resolve import SourceOptions, fetch_source

    site = Site()
    page = "<html><head><title>Private guide</title></head><body><main><h1>Private guide</h1>" \
           "<p>Only members can read how to rotate the signing keys every ninety days.</p></main></body></html>"
    site.add("/guide", page, cookie="sid=member")
    site.add("/llms.txt", status=404, cookie="sid=member")
    with serve(site) as base:
        with pytest.raises(FetchError) as e:
            fetch_source(base + "/guide", SourceOptions(timeout=2))
        assert "401" in str(e.value)
        r = CliRunner().invoke(cli, ["auth", "add", base, "--cookies", "sid=member"])
        assert r.exit_code == 0, r.output
        fetched = fetch_source(base + "/guide", SourceOptions(timeout=2))
    assert fetched.documents and "signing keys" in json.dumps([b.text for d in fetched.documents for b in d.blocks])
    assert "sid" not in fetched.source_url


def test_route_helper_smoke() -> None:
    assert Route().status == 200
