"""The registry's HTML pages: package list, package and version pages, search through the form.

Real parts only: packages built by `context add` from Markdown, published over HTTP to the
app under Starlette's test client; search answers compared with the client's own engine.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from page_fixtures import HOSTILE, HOSTILE_MD, build_docs_package
from registry_fixtures import AUTH, KEY, make_package, package_url
from starlette.testclient import TestClient

from context_cli.package.writer import write_package
from context_cli.search.engine import SearchOptions, answer
from context_cli.store.store import Store
from context_cli.surfaces.render import section_title, to_markdown
from registry_server import page_markdown, page_search
from registry_server.app import create_app

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("page-packages")
    built = build_docs_package(work)
    older = build_docs_package(work, version="1.1.0", embed=False, description="Older docs")
    scoped = make_package(work / "scoped.db", "@scope/pkg", "1.0.0", description="Scoped <b>thing</b>")
    return {"1.2.0": built, "1.1.0": older, "scoped": scoped}


@pytest.fixture(scope="module")
def client(files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app = create_app(tmp_path_factory.mktemp("page-data"), publish_key=KEY)
    with TestClient(app) as c:
        for version in ("1.1.0", "1.2.0"):
            r = c.post(package_url("pip", "mylib", version), content=files[version].read_bytes(), headers=AUTH)
            assert r.status_code == 201, r.text
        r = c.post(package_url("npm", "@scope/pkg", "1.0.0"), content=files["scoped"].read_bytes(), headers=AUTH)
        assert r.status_code == 201, r.text
        yield c


class Outline(HTMLParser):
    """Headings, landmarks, labels and inputs of a page, to check its structure."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[int] = []
        self.tags: list[str] = []
        self.label_for: set[str] = set()
        self.input_ids: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append(tag)
        if re.fullmatch(r"h[1-6]", tag):
            self.headings.append(int(tag[1]))
        if tag == "label" and a.get("for"):
            self.label_for.add(str(a["for"]))
        if tag == "input" and a.get("type") != "hidden":
            self.input_ids.append(a.get("id"))


def outline(html: str) -> Outline:
    o = Outline()
    o.feed(html)
    return o


def assert_accessible(html: str, *, form: bool = True) -> None:
    """One h1, no skipped heading levels, landmarks, every input labelled, no script."""
    o = outline(html)
    assert o.headings.count(1) == 1 and o.headings[0] == 1, o.headings
    assert all(b - a <= 1 for a, b in zip(o.headings, o.headings[1:], strict=False)), o.headings
    assert {"header", "main", "footer"} <= set(o.tags)
    assert bool(o.input_ids) == form and all(i in o.label_for for i in o.input_ids), o.input_ids
    assert "<script" not in html.lower()
    assert '<html lang="en">' in html and 'name="viewport"' in html


def assert_page(resp: object, status: int = 200) -> str:
    assert resp.status_code == status, (resp.status_code, resp.text[:500])  # type: ignore[attr-defined]
    headers = resp.headers  # type: ignore[attr-defined]
    assert headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in headers["content-security-policy"]
    return str(resp.text)  # type: ignore[attr-defined]


# -- the index ------------------------------------------------------------------------

def test_index_links_every_package_to_its_page(client: TestClient) -> None:
    html = assert_page(client.get("/"))
    assert_accessible(html)
    assert 'href="/docs/pip/mylib"' in html and 'href="/docs/pip/mylib/1.2.0"' in html
    assert 'href="/docs/npm/%40scope%2Fpkg"' in html and 'href="/docs/pip/mylib/1.1.0"' in html
    assert "/packages/pip/mylib/1.2.0/download" in html
    assert HOSTILE not in html and "&lt;script&gt;" in html and "Scoped &lt;b&gt;thing" in html


def test_index_search_form(client: TestClient) -> None:
    html = assert_page(client.get("/", params={"q": "scoped"}))
    assert "1 package matching" in html and "%40scope%2Fpkg" in html and "/docs/pip/mylib" not in html
    assert 'value="scoped"' in html


# -- a package's page -----------------------------------------------------------------

def test_package_page_shows_versions_and_facts(client: TestClient, files: dict[str, Path]) -> None:
    html = assert_page(client.get("/docs/pip/mylib"))
    assert_accessible(html)
    meta = client.get(package_url("pip", "mylib", "1.2.0")).json()
    assert "<pre class=\"install\"" in html and "context install pip/mylib@1.2.0" in html
    assert meta["sha256"] in html and client.get(package_url("pip", "mylib", "1.1.0")).json()["sha256"] in html
    assert meta["built_at"][:10] in html and "context-minilm-distilled-256" in html
    assert f"{meta['sectionCount']}</dd>" in html
    assert "(latest)" in html and 'aria-current="page"' in html
    assert "noindex" not in html
    assert 'action="/docs/pip/mylib/1.2.0"' in html and '<label for="q">' in html
    assert HOSTILE not in html and "&lt;script&gt;" in html


def test_version_page_shows_that_version(client: TestClient) -> None:
    html = assert_page(client.get("/docs/pip/mylib/1.1.0"))
    assert "context install pip/mylib@1.1.0" in html and "(latest)" not in html
    assert "none (searched lexically)" in html and "Older docs" in html
    current = re.search(r'<tr class="current"[^>]*>(.*?)</tr>', html, re.S)
    assert current and ">1.1.0</a>" in current.group(1)


def test_docs_root_leads_to_the_index(client: TestClient) -> None:
    r = client.get("/docs", follow_redirects=False)
    assert r.status_code == 308 and r.headers["location"] == "/"


def test_source_url_and_commit(client: TestClient, tmp_path: Path) -> None:
    from context_cli.document import Chunk

    chunks = [Chunk("a.md", "A", "Intro", "hello source", 3, False)]
    evil = write_package(tmp_path / "src.db", {
        "name": "srcpkg", "version": "2.0.0", "source_url": "https://example.org/repo?a=1&b=\"2\"",
        "source_commit": COMMIT, "built_at": "2026-01-02T03:04:05Z"}, chunks)
    js = write_package(tmp_path / "js.db", {"name": "srcpkg", "version": "1.0.0",
                                            "source_url": "javascript:alert(1)"}, chunks)
    for path, version in ((evil, "2.0.0"), (js, "1.0.0")):
        assert client.post(package_url("pip", "srcpkg", version), content=path.read_bytes(),
                           headers=AUTH).status_code == 201
    html = assert_page(client.get("/docs/pip/srcpkg/2.0.0"))
    assert 'href="https://example.org/repo?a=1&amp;b=&quot;2&quot;"' in html
    assert f'title="{COMMIT}">{COMMIT[:12]}</code>' in html and "2026-01-02" in html
    assert 'href="javascript' not in html and "javascript:alert(1)" in html


@pytest.mark.parametrize("path", ["/docs/npm/%40scope%2Fpkg", "/docs/npm/@scope/pkg", "/docs/npm/@scope/pkg/",
                                  "/docs/npm/%40scope%2Fpkg/1.0.0", "/docs/npm/@scope/pkg/1.0.0"])
def test_scoped_names(client: TestClient, path: str) -> None:
    html = assert_page(client.get(path))
    assert "context install npm/@scope/pkg@1.0.0" in html


@pytest.mark.parametrize("path", [
    "/docs/", "/docs/pip", "/docs/pip/", "/docs/pip/nope", "/docs/pip/mylib/9.9.9", "/docs/npm/mylib",
    "/docs/Bad!/mylib", "/docs/pip/%2e%2e/1.0", "/docs/pip/mylib/%00", "/docs/pip/%ff%fe",
    "/docs/pip/mylib//1.2.0", "/docs/pip/mylib/1.2.0/extra", "/docs/pip/" + "a" * 3000,
    "/docs/pip/%3Cscript%3E", "/docs/pip/mylib/%3Cscript%3Ealert(1)%3C%2Fscript%3E"])
def test_unknown_or_invalid_is_an_html_error_page(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code in (400, 404), (path, r.status_code)
    html = assert_page(r, r.status_code)
    assert_accessible(html, form=False)
    assert "<script>" not in html


# -- searching a package through the page ---------------------------------------------

def test_search_renders_the_clients_context_pack(client: TestClient, files: dict[str, Path]) -> None:
    query = "how do I cancel a running pipeline"
    html = assert_page(client.get("/docs/pip/mylib/1.2.0", params={"q": query}))
    assert_accessible(html)
    installed = Store().install(files["1.2.0"], registry="pip")
    found = answer(query, [installed], SearchOptions())
    expected = found.to_dict()
    assert expected["results"], expected
    pages = re.findall(r'<article class="result"><h3>\d+\. (.*?)</h3>', html)  # grouped by page, as the CLI
    assert pages == list(dict.fromkeys(escape(r["page"]["title"]) for r in expected["results"]))
    sections = re.findall(r"<h4>(.*?)</h4>", html)
    assert sections == [escape(section_title(h)) for h in found.results]
    assert pages[0] == "Cancelling a pipeline" and '<meta name="robots" content="noindex">' in html
    assert f'verdict <span class="verdict {expected["verdict"]}">{expected["verdict"]}</span>' in html
    assert f'{expected["tokens"]} tokens of 2000' in html
    first = expected["results"][0]
    assert f'{first["tokens"]} tokens</p>' in html and first["source"] in html
    md = re.search(r"<details>.*?<pre>(.*?)</pre>", html, re.S)
    assert md and md.group(1) == escape(to_markdown(found))


def test_search_escapes_hostile_content(client: TestClient) -> None:
    html = assert_page(client.get("/docs/pip/mylib", params={"q": "escape markup sinks"}))
    assert "Escaping &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; in sinks" in html
    assert "```html\n" + escape(HOSTILE) in html  # the Markdown copy
    assert f'<pre><code class="language-html">{escape(HOSTILE)}' in html  # rendered, as text
    assert HOSTILE not in html and "a &lt; b &amp;&amp; c &gt; d" in html


def test_rendered_markdown_keeps_only_http_links_and_no_html() -> None:
    html = page_markdown.render(HOSTILE_MD, below=4)
    assert re.findall(r"<a [^>]*>", html) == ['<a href="https://example.com/a" rel="nofollow noopener noreferrer">']
    assert "<img" not in html and "javascript:alert(1)" not in html and "[image: pic]" in html
    assert '&lt;a href=&quot;javascript:alert(2)&quot;&gt;raw&lt;/a&gt;' in html
    assert "<h5>A heading</h5>" in html  # under the result's h4, whatever level the author used


def test_budget(client: TestClient) -> None:
    small = assert_page(client.get("/docs/pip/mylib", params={"q": "pipeline", "budget": "1"}))
    assert " tokens of 1 " in small and 'name="budget" value="1"' in small
    for bad in ("0", "-5", "abc", "100001", "1e9", "9" * 400):
        html = assert_page(client.get("/docs/pip/mylib", params={"q": "pipeline", "budget": bad}))
        assert "The token budget must be a whole number" in html and " tokens of 2000 " in html


@pytest.mark.parametrize("q", [
    '"', '""', "NOT", "NOT pipeline", "(((", ")", "*", "pipe*", "a AND", "OR OR", "NEAR(pipe sink)",
    "content:pipeline", "^pipeline", "-pipeline", "+", "'; DROP TABLE chunks; --", "\u202e", "🐍",
    "Pipeline.cancel()", "naïve café 管道", "\ufffd\ufeff", "a\x00b\x1b[31m", "   ", HOSTILE,
    "x" * 60_000, "pipeline " * 6_000])  # httpx refuses longer URLs; the browser test sends 100 KB
def test_hostile_queries_give_a_normal_page(client: TestClient, q: str) -> None:
    r = client.get("/docs/pip/mylib", params={"q": q})
    html = assert_page(r)
    assert HOSTILE not in html and "\x00" not in html


def asgi_get(client: TestClient, path: str, query_string: bytes) -> tuple[int, str]:
    """One GET straight into the app (httpx refuses URLs over 64 KB; the app must not care)."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": query_string,
             "root_path": "", "headers": [(b"host", b"testserver")], "client": ("127.0.0.1", 1),
             "server": ("testserver", 80)}
    assert client.portal is not None
    client.portal.call(client.app, scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], body.decode()


@pytest.mark.parametrize("query", [b"q=" + b"x" * 100_000, b"q=" + b"%E7%AE%A1" * 12_000,
                                   b"q=" + b"%22NOT%20" * 12_000, b"q=%ED%A0%80" * 10_000])
def test_100_kb_queries(client: TestClient, query: bytes) -> None:
    status, html = asgi_get(client, "/docs/pip/mylib", query)
    assert status == 200 and "<h1>mylib" in html and len(query) >= 100_000


def test_clean_query_leaves_printable_text() -> None:
    assert page_search.clean_query("x\udfffy\ud800 a\x00b\u202e c\t d") == "x y a b c d"
    assert page_search.clean_query("  naïve   管道 ") == "naïve 管道"
    assert len(page_search.clean_query("x" * 100_000)) == 10_000


def test_surrogate_bytes_in_raw_url(client: TestClient) -> None:
    r = client.get("/docs/pip/mylib?q=" + "%ED%A0%80" + "%FF" * 10 + "pipeline")
    assert "Results for" in assert_page(r)


def test_lexical_package_is_searched(client: TestClient) -> None:
    html = assert_page(client.get("/docs/npm/@scope/pkg", params={"q": "install pip"}))
    assert "Install" in html and "no vectors in this package; searched lexically" in html


def test_cached_answer_and_a_missing_file(files: dict[str, Path], tmp_path: Path) -> None:
    """A repeated search is answered from the cache; a file gone or damaged gives a notice, not a 500."""
    app = create_app(tmp_path / "data", publish_key=KEY)
    with TestClient(app) as c:
        meta = c.post(package_url("pip", "mylib", "1.2.0"), content=files["1.2.0"].read_bytes(),
                      headers=AUTH).json()
        first = assert_page(c.get("/docs/pip/mylib", params={"q": "timeouts"}))
        assert "Results for" in first
        blob = tmp_path / "data" / "blobs" / meta["sha256"][:2] / f"{meta['sha256']}.db"
        blob.unlink()
        assert assert_page(c.get("/docs/pip/mylib", params={"q": "timeouts"})) == first
        gone = assert_page(c.get("/docs/pip/mylib", params={"q": "cancel"}))
        assert "cannot be searched on the server" in gone and "Results for" not in gone
        blob.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
        damaged = assert_page(c.get("/docs/pip/mylib", params={"q": "sinks"}))
        assert "cannot be searched on the server" in damaged and meta["sha256"] not in damaged.split("<dl")[0]


def test_search_past_its_deadline(files: dict[str, Path], tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_search, "DEADLINE_S", 0.0)
    app = create_app(tmp_path / "data", publish_key=KEY)
    with TestClient(app) as c:
        c.post(package_url("pip", "mylib", "1.2.0"), content=files["1.2.0"].read_bytes(), headers=AUTH)
        html = assert_page(c.get("/docs/pip/mylib", params={"q": "a slow question"}))
        assert "took too long" in html and "Results for" not in html


def test_cache_stays_small(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_search, "CACHE_SIZE", 3)
    for i in range(6):
        assert_page(client.get("/docs/pip/mylib", params={"q": f"pipeline {i}"}))
    assert len(page_search._cache) <= 3
