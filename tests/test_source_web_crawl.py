"""Websites without llms.txt or sitemap: the same-origin crawl, its bounds, versions, `.md` twins
and the browser for JavaScript-only pages, against a real HTTP server on loopback."""

from __future__ import annotations

import os
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from quiet_servers import QuietHTTPServer
from web_fixtures import SHELL, Request, Route, Site, fake_browser, other_host, serve

from context_cli.errors import SourceError
from context_cli.sources.resolve import SourceOptions, fetch_source
from context_cli.sources.site_browser import find_browser
from context_cli.sources.site_urls import normalise, recorded_version, variant

OPTS = SourceOptions(timeout=2)
WORDS = "This page explains one part of the rocket in enough words to be kept as a page of its own."


def page(title: str, *links: str, body: str = "") -> str:
    nav = "".join(f"<li><a href='{h}'>{h}</a></li>" for h in links)
    return (f"<html><head><title>{title} | Acme</title></head><body><nav><ul>{nav}</ul></nav>"
            f"<main><h1>{title}</h1><p>{WORDS} {body}</p></main><footer>© Acme</footer></body></html>")


def paths(fetched) -> list[str]:
    return sorted(d.path for d in fetched.documents)


def test_links_only_site_is_crawled_within_its_folder_and_origin() -> None:
    site = Site()
    with serve(site) as base:
        site.add("/docs/", page("Home", "/docs/a", "b/", "/blog/post", f"{other_host(base)}/docs/x",
                                "/docs/logo.png", "#top", "mailto:x@y.z"))
        site.add("/docs/a", page("A", "/docs/c?utm_source=nav#part", "/docs/"))
        site.add("/docs/b/", page("B", "/docs/c", "/docs/missing"))
        site.add("/docs/c", page("C", "/docs/a"))
        site.add("/blog/post", page("Blog"))
        fetched = fetch_source(base + "/docs/", OPTS)
    assert paths(fetched) == ["docs", "docs/a", "docs/b", "docs/c"]
    assert not site.requested("/blog/post") and not site.requested("/docs/logo.png")
    assert not any(r.host.startswith("localhost") for r in site.requests)
    assert site.paths().count("/docs/c") == 1  # one spelling per page
    assert fetched.skipped == 1 and any(n == "skipped 1 pages: 1 failed or had no text" for n in fetched.notes)
    assert any("crawled 4 pages" in n for n in fetched.notes)
    chrome = "\n".join(b.text for d in fetched.documents for b in d.blocks)
    assert "© Acme" not in chrome and "/blog/post" not in chrome


def test_robots_forbidden_folder_is_never_requested() -> None:
    site = Site()
    site.add("/robots.txt", "User-agent: *\nDisallow: /private/\n", content_type="text/plain")
    site.add("/", page("Home", "/guide", "/private/secret"))
    site.add("/guide", page("Guide", "/private/other"))
    site.add("/private/secret", page("Secret"))
    with serve(site) as base:
        fetched = fetch_source(base + "/", OPTS)
    assert paths(fetched) == ["guide", "index"]
    assert not any(p.startswith("/private/") for p in site.paths())
    assert "skipped 2 pages: 2 disallowed by robots.txt" in fetched.notes


def test_redirect_loop_is_one_skipped_page_and_a_looping_start_is_one_line() -> None:
    site = Site()
    site.add("/", page("Home", "/loop1", "/fine"))
    site.add("/fine", page("Fine"))
    site.routes["/loop1"] = Route(status=302, headers={"Location": "/loop2"})
    site.routes["/loop2"] = Route(status=302, headers={"Location": "/loop1"})
    with serve(site) as base:
        fetched = fetch_source(base + "/", OPTS)
        assert paths(fetched) == ["fine", "index"] and fetched.skipped == 1
        with pytest.raises(SourceError) as e:
            fetch_source(base + "/loop1", OPTS)
    assert "redirects" in str(e.value) and "\n" not in str(e.value)


def test_ten_thousand_page_sitemap_holds_the_cap() -> None:
    site = Site()
    with serve(site) as base:
        locs = "".join(f"<url><loc>{base}/p/{i}</loc></url>" for i in range(10_000))
        site.add("/sitemap.xml", '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                 + locs + "</urlset>", content_type="application/xml")
        for i in range(10_000):
            site.routes[f"/p/{i}"] = Route(page(f"P{i}").encode())
        fetched = fetch_source(base + "/", SourceOptions(timeout=2, max_pages=25))
    assert len(fetched.documents) == 25
    assert len([p for p in site.paths() if p.startswith("/p/") and not p.endswith(".md")]) == 25
    assert "skipped 9975 pages: 9975 beyond the cap of 25 pages (--max-pages)" in fetched.notes


def test_never_ending_site_stops_at_the_cap() -> None:
    site = Site()
    for i in range(2000):
        site.routes[f"/n/{i}"] = Route(page(f"N{i}", f"/n/{i + 1}", f"/n/{i + 2}", f"/n/{i}?page={i}").encode())
    with serve(site) as base:
        fetched = fetch_source(base + "/n/0", SourceOptions(timeout=2, max_pages=10))
    assert len(fetched.documents) <= 10
    pages = [p for p in site.paths() if p[3:].isdigit()]  # (`?page=` copies log as their path)
    assert len(pages) <= 11  # the cap, and the start page asked once more by the sitemap probe
    assert any("beyond the cap of 10" in n for n in fetched.notes)


def test_slow_page_is_skipped_within_the_timeout() -> None:
    site = Site()
    site.add("/", page("Home", "/slow", "/quick"))
    site.add("/quick", page("Quick"))
    site.routes["/slow"] = Route(page("Slow").encode(), delay=3)
    start = time.perf_counter()
    with serve(site) as base:
        fetched = fetch_source(base + "/", SourceOptions(timeout=0.5))
    assert paths(fetched) == ["index", "quick"] and fetched.skipped == 1
    assert time.perf_counter() - start < 2.8


def test_a_page_that_trickles_is_cut_at_the_page_deadline() -> None:
    """Each byte comes well within the read timeout, so only the whole-page deadline stops it."""
    from context_cli.sources.http import HttpClient, HttpOptions
    from context_cli.sources.web import WebLimits, fetch_website

    site = Site()
    site.add("/", page("Home", "/trickle", "/quick"))
    site.add("/quick", page("Quick"))
    site.routes["/trickle"] = Route(page("Trickle", body="x" * 5000).encode(), trickle=0.02)  # 100 s in all
    start = time.perf_counter()
    with serve(site) as base, HttpClient(HttpOptions(connect_timeout=2, read_timeout=2)) as client:
        fetched = fetch_website(base + "/", client, WebLimits(page_seconds=0.5))
    assert paths(fetched) == ["index", "quick"] and fetched.skipped == 1
    assert "/trickle" in site.paths() and time.perf_counter() - start < 2.5
    assert "skipped 1 pages: 1 failed or had no text" in fetched.notes


class _Huge(BaseHTTPRequestHandler):
    """`/` links to two 5 GB pages: one that says so, one that just keeps streaming."""

    protocol_version = "HTTP/1.0"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200 if self.path in ("/", "/declared", "/endless") else 404)
        self.send_header("Content-Type", "text/html")
        if self.path == "/":
            body = page("Home", "/declared", "/endless").encode()
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path == "/declared":
            self.send_header("Content-Length", str(5 * 1024**3))
        self.end_headers()
        chunk = b"<p>" + b"a" * 65536 + b"</p>"
        for _ in range(5 * 1024**3 // len(chunk)):
            self.wfile.write(chunk)


def test_five_gigabyte_pages_are_streamed_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    server = QuietHTTPServer(("127.0.0.1", 0), _Huge)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    start = time.perf_counter()
    try:
        fetched = fetch_source(f"http://127.0.0.1:{server.server_address[1]}/", OPTS)
    finally:
        server.shutdown()
        server.server_close()
    assert paths(fetched) == ["index"] and fetched.skipped == 2
    assert time.perf_counter() - start < 20


def test_versioned_and_localised_copies_collapse_to_the_version_asked() -> None:
    site = Site()
    site.add("/", "", status=302, headers={"Location": "/en/5.1/"})
    site.add("/en/5.1/", page("Home 5.1", "/en/5.1/topics/", "/en/4.2/", "/fr/5.1/", "/en/dev/"))
    site.add("/en/5.1/topics/", page("Topics 5.1"))
    site.add("/en/4.2/", page("Home 4.2", "/en/4.2/topics/"))
    site.add("/en/4.2/topics/", page("Topics 4.2"))
    site.add("/fr/5.1/", page("Accueil"))
    site.add("/en/dev/", page("Dev"))
    with serve(site) as base:
        current = fetch_source(base + "/", OPTS)
        older = fetch_source(base + "/en/5.1/", SourceOptions(timeout=2, tag="4.2"))
        with pytest.raises(SourceError) as e:
            fetch_source(base + "/en/5.1/", SourceOptions(timeout=2, tag="9.9"))
    assert paths(current) == ["en/5.1", "en/5.1/topics"] and current.version == "5.1"
    assert paths(older) == ["en/4.2", "en/4.2/topics"] and older.version == "4.2"
    assert "no version 9.9" in str(e.value)


def test_sites_versioned_by_query_or_by_v_segment_give_the_version_asked() -> None:
    from urllib.parse import parse_qs

    from context_cli.sources.web import fetch_site

    def by_query(title: str, *links: str) -> Route:
        def answer(req: Request) -> Route:
            return Route(page(f"{title} {parse_qs(req.query).get('version', ['2.0'])[0]}", *links).encode())
        return Route(handler=answer)

    site = Site()
    site.routes["/docs/"] = by_query("Home", "guide", "setup?version=1.0", "/docs/guide?version=2.0")
    site.routes["/docs/guide"] = by_query("Guide")
    site.routes["/docs/setup"] = by_query("Setup")
    for v, other in (("18", "17"), ("17", "18")):
        site.add(f"/v{v}/", page(f"Home {v}", f"/v{v}/a", f"/v{other}/"))
        site.add(f"/v{v}/a", page(f"A {v}"))
    with serve(site) as base:
        by_q = fetch_site(base + "/docs/", version="1.0")
        by_v = fetch_site(base + "/v18/", version="17")
    assert sorted(d.title for d in by_q.documents) == ["Guide 1.0", "Home 1.0", "Setup 1.0"] and by_q.version == "1.0"
    assert sorted(d.title for d in by_v.documents) == ["A 17", "Home 17"] and by_v.version == "17"
    asked = [r for r in site.requests if r.path in ("/docs/guide", "/docs/setup")]
    assert asked and all(r.query == "version=1.0" for r in asked)  # never the current docs under 1.0's name
    assert not any(r.path.startswith("/v18/") for r in site.requests)


def test_md_twins_and_markdown_negotiation_are_read_as_markdown() -> None:
    site = Site()
    site.add("/", page("Home", "/guide/", "/api"))
    site.add("/index.md", "# Home\n\nThe home page, as Markdown from its twin file.\n", content_type="text/markdown")
    site.add("/guide/", page("Guide"))
    site.add("/guide/index.md", "# Guide\n\n```python\nimport acme\n```\n\nThe guide, as Markdown.\n",
             content_type="text/markdown")

    def negotiated(req) -> Route:
        if "text/markdown" in req.headers.get("Accept", ""):
            return Route(b"# API\n\nNegotiated Markdown for the API page.\n", content_type="text/markdown")
        return Route(page("API").encode())

    site.routes["/api"] = Route(handler=negotiated)
    with serve(site) as base:
        fetched = fetch_source(base + "/", OPTS)
    text = {d.path: "\n".join(b.text for b in d.blocks) for d in fetched.documents}
    assert set(text) == {"index", "guide", "api"}
    assert "as Markdown from its twin" in text["index"] and "```python\nimport acme" in text["guide"]
    assert "Negotiated Markdown" in text["api"]
    assert next(d for d in fetched.documents if d.path == "guide").url == base + "/guide/"


def test_js_only_page_goes_through_the_browser_and_is_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTEXT_BROWSER", fake_browser(tmp_path))
    site = Site()
    site.add("/app", SHELL)
    with serve(site) as base:
        fetched = fetch_source(base + "/app", OPTS)
        with pytest.raises(SourceError) as e:
            fetch_source(base + "/app", SourceOptions(timeout=2, browser="never"))
    assert "only exists after the script ran" in "\n".join(b.text for b in fetched.documents[0].blocks)
    assert "1 pages needed a browser to render (chromium)" in fetched.notes
    assert "no documentation text" in str(e.value)


def test_no_browser_installed_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTEXT_BROWSER", "none")
    site = Site()
    site.add("/app", SHELL)
    with serve(site) as base, pytest.raises(SourceError) as e:
        fetch_source(base + "/app", OPTS)
    assert "install chromium" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.skipif(find_browser() is None and not os.environ.get("CONTEXT_BROWSER"),
                    reason="chromium is not installed (apt install chromium); the project never downloads one")
def test_real_chromium_renders_a_js_only_page() -> None:
    assert shutil.which(find_browser() or "")
    site = Site()
    site.add("/app", SHELL)
    with serve(site) as base:
        fetched = fetch_source(base + "/app", SourceOptions(timeout=5))
    assert "only exists after the script ran" in "\n".join(b.text for b in fetched.documents[0].blocks)
    assert any("needed a browser" in n for n in fetched.notes)


def test_url_helpers() -> None:
    assert normalise("HTTP://Ex.com:80//a/b/../index.html?utm_source=x&b=2&a=1#frag") == "http://ex.com/a/?a=1&b=2"
    assert variant("https://d.com/en/5.1/topics/").version == "5.1"
    assert variant("https://d.com/api/v1/users").version is None  # a page name, not a site version
    assert variant("https://d.com/docs/next/intro").version == "next"
    assert recorded_version("https://d.com/v18/a", None) == "18"
    assert recorded_version("https://d.com/en/stable/", None) == "latest"


def test_cli_flags_reach_the_crawl_and_the_summary_counts_rendered_pages(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from context_cli.surfaces.cli import cli

    monkeypatch.setenv("CONTEXT_BROWSER", fake_browser(tmp_path))
    site = Site()
    site.add("/", page("Home", "/app", "/b", "/c", "/d"))
    site.add("/app", SHELL)
    for p in ("/b", "/c", "/d"):
        site.add(p, page(p[1:].upper()))
    with serve(site) as base:
        r = CliRunner().invoke(cli, ["add", base + "/", "--name", "shop", "--no-embed", "--max-pages", "3"])
        assert r.exit_code == 0, r.output
        assert "1 pages needed a browser to render (chromium)" in r.output
        assert "skipped 2 pages: 2 beyond the cap of 3 pages (--max-pages)" in r.output
        r = CliRunner().invoke(cli, ["add", base + "/app", "--name", "app", "--no-embed", "--no-browser"])
    assert r.exit_code != 0 and "no documentation text" in r.output
