"""Websites as sources, against a real HTTP server on loopback: llms-full.txt, llms.txt,
sitemaps, single pages, robots.txt, retries, limits and failure modes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from web_fixtures import Request, Route, Site, other_host, serve

from context_cli.build import BuildOptions, build
from context_cli.errors import SourceError
from context_cli.package.reader import open_package
from context_cli.sources.http import FetchError, HttpClient, HttpOptions
from context_cli.sources.resolve import SourceOptions, fetch_source
from context_cli.sources.web import doc_path, site_name, split_llms_full

OPTS = SourceOptions(timeout=2)


def html(title: str, body: str) -> str:
    return (f"<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a></nav>"
            f"<main><h1>{title}</h1>{body}</main></body></html>")


def all_text(fetched) -> str:
    return "\n".join(f"{d.title}\n" + "\n".join(b.title + "\n" + b.text for b in d.blocks)
                     for d in fetched.documents)


def test_llms_txt_site(tmp_path: Path) -> None:
    site = Site()
    with serve(site) as base:
        site.add("/llms.txt", (
            "# Acme\n\n> Acme builds rockets for coyotes.\n\n## Docs\n\n"
            "- [Install](/docs/install.md): how to install\n"
            f"- [Guide]({base}/docs/guide): the guide\n"
            "- [Missing](/docs/missing.md)\n"
            f"- [Elsewhere]({other_host(base)}/docs/other.md)\n"
            "- [Mail](mailto:x@example.com)\n"), content_type="text/plain")
        site.add("/docs/install.md", "# Install\n\nRun `pip install acme` to install the rocket kit today.\n",
                 content_type="text/markdown")
        site.add("/docs/guide", html("Guide", "<h2>Launching</h2><p>Light the fuse and step well back from the rocket.</p>"))
        fetched = fetch_source(base + "/", OPTS)
        result = build(fetched, tmp_path / "acme.db", BuildOptions(embed=False))
    assert fetched.source_type == "web"
    assert fetched.name == "127.0.0.1" and fetched.version == "latest"
    paths = {d.path for d in fetched.documents}
    assert {"docs/install.md", "docs/guide"} <= paths
    assert fetched.skipped == 1  # the 404 link
    assert any("other sites" in n for n in fetched.notes)
    assert not any(r.host.startswith("localhost") for r in site.requests)  # other origin never fetched
    assert fetched.description == "Acme builds rockets for coyotes."
    text = all_text(fetched)
    assert "pip install acme" in text and "step well back" in text
    guide = next(d for d in fetched.documents if d.path == "docs/guide")
    assert guide.url == base + "/docs/guide"
    with open_package(result.path) as pkg:
        assert pkg.meta["source_type"] == "web"
        assert pkg.meta["source_url"] == base + "/"
        urls = {r[0] for r in pkg.db.execute("SELECT url FROM chunks")}
    assert base + "/docs/install.md" in urls


def test_llms_full_txt_is_split_into_pages() -> None:
    site = Site()
    with serve(site) as base:
        site.add("/docs/llms-full.txt", (
            "# Getting started\n\nSource: " + base + "/docs/start\n\nInstall the toolkit and run the first command.\n\n"
            "```md\n# not a page heading inside a fence\n```\n\n## Next steps\n\nRead the configuration page next.\n\n"
            "# Configuration\n\nEvery option lives in `acme.toml` under the `[rocket]` table.\n"), content_type="text/plain")
        fetched = fetch_source(base + "/docs/", OPTS)
    assert [d.title for d in fetched.documents] == ["Getting started", "Configuration"]
    first, second = fetched.documents
    assert first.path == "docs/start" and first.url == base + "/docs/start"
    assert second.path == "llms-full/configuration"
    assert "not a page heading" in all_text(fetched)
    assert not site.requested("/docs/llms.txt")  # llms-full.txt wins


def test_explicit_llms_txt_url_and_robots_disallowed_links() -> None:
    site = Site()
    site.add("/robots.txt", "User-agent: *\nDisallow: /private/\n", content_type="text/plain")
    site.add("/llms.txt", "# Site\n\n- [A](/a.md)\n- [Secret](/private/s.md)\n", content_type="text/plain")
    site.add("/a.md", "# A\n\nPage A explains the alpha feature in detail.\n", content_type="text/markdown")
    site.add("/private/s.md", "# S\n\nsecret\n", content_type="text/markdown")
    with serve(site) as base:
        fetched = fetch_source(base + "/llms.txt", OPTS)
    assert [d.path for d in fetched.documents if d.path != "llms.txt"] == ["a.md"]
    assert not site.requested("/private/s.md")
    assert fetched.skipped == 1 and any("robots.txt" in n for n in fetched.notes)
    assert not site.requested("/llms-full.txt")


def test_sitemap_index_followed_and_scoped() -> None:
    site = Site()
    with serve(site) as base:
        site.add("/robots.txt", f"User-agent: *\nDisallow: /docs/hidden\nSitemap: {base}/maps/index.xml\n",
                 content_type="text/plain")
        site.add("/maps/index.xml", (
            '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{base}/maps/docs.xml</loc></sitemap></sitemapindex>"), content_type="application/xml")
        site.add("/maps/docs.xml", (
            '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{base}/docs/one</loc></url><url><loc>{base}/docs/two/</loc></url>"
            f"<url><loc>{base}/docs/hidden</loc></url><url><loc>{base}/blog/post</loc></url>"
            f"<url><loc>{other_host(base)}/docs/three</loc></url></urlset>"), content_type="application/xml")
        site.add("/docs/one", html("One", "<p>The first page talks about orbital mechanics at length.</p>"))
        site.add("/docs/two/", html("Two", "<p>The second page covers re-entry heat shields thoroughly.</p>"))
        site.add("/docs/", html("Docs", "<p>Docs home with an overview of every rocket.</p>"))
        site.add("/blog/post", html("Post", "<p>Blog post.</p>"))
        fetched = fetch_source(base + "/docs/", OPTS)
    assert sorted(d.path for d in fetched.documents) == ["docs/one", "docs/two"]
    assert not site.requested("/docs/hidden") and not site.requested("/blog/post")
    assert not any(r.host.startswith("localhost") for r in site.requests)
    assert fetched.skipped == 1


def test_plain_page() -> None:
    site = Site()
    site.add("/guide.html", html("Solo", "<p>A single page about the solo launch procedure and checklists.</p>"))
    with serve(site) as base:
        fetched = fetch_source(base + "/guide.html", OPTS)
    assert [d.path for d in fetched.documents] == ["guide.html"]
    assert "solo launch" in all_text(fetched)
    assert any("single page" in n for n in fetched.notes)


def test_spa_fallback_html_is_not_taken_for_llms_txt() -> None:
    page = html("App", "<p>The app shell answers every path with this same page of text.</p>")
    site = Site()
    with serve(site) as base:
        for p in ("/", "/llms-full.txt", "/llms.txt", "/sitemap.xml"):
            site.add(p, page)
        fetched = fetch_source(base + "/", OPTS)
    assert [d.path for d in fetched.documents] == ["index"]


def test_robots_disallowing_the_url_is_refused() -> None:
    site = Site()
    site.add("/robots.txt", "User-agent: context-docs\nDisallow: /\n", content_type="text/plain")
    site.add("/page", html("P", "<p>text</p>"))
    with serve(site) as base, pytest.raises(SourceError) as e:
        fetch_source(base + "/page", OPTS)
    assert "robots.txt" in str(e.value)
    assert not site.requested("/page")


def test_404_site_is_one_line() -> None:
    site = Site()
    with serve(site) as base, pytest.raises(SourceError) as e:
        fetch_source(base + "/nothing/here", OPTS)
    assert "404" in str(e.value) and "\n" not in str(e.value)


def _site_with_root_llms_txt(base: str, site: Site) -> None:
    site.add("/llms.txt", "# Whole site\n\n- [Other](/other.md)\n", content_type="text/plain")
    site.add("/other.md", "# Other\n\nA page about something else entirely, the wrong docs.\n",
             content_type="text/markdown")
    site.add("/sitemap.xml", ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                              f"<url><loc>{base}/other.md</loc></url></urlset>"), content_type="application/xml")


def test_a_missing_url_is_an_error_not_the_whole_site(context_home: Path) -> None:
    """Issue 11 #15: a 404 must not fall back to the root's llms.txt and index the whole site."""
    from click.testing import CliRunner

    from context_cli.surfaces.cli import cli

    site = Site()
    with serve(site) as base:
        _site_with_root_llms_txt(base, site)
        with pytest.raises(FetchError) as e:
            fetch_source(base + "/missing/", OPTS)
        assert str(e.value) == f"{base}/missing/: HTTP 404 Not Found"
        assert not site.requested("/other.md")
        r = CliRunner().invoke(cli, ["add", base + "/missing/", "--name", "x", "--no-embed"])
    assert r.exit_code != 0 and r.output.count("\n") == 1 and "404" in r.output
    assert not (context_home / "packages").exists() or not any((context_home / "packages").glob("*.db"))


def test_the_root_llms_txt_stands_in_for_a_page_that_exists_and_says_so() -> None:
    site = Site()
    with serve(site) as base:
        _site_with_root_llms_txt(base, site)
        site.add("/guide/", html("Guide", "<p>The guide page exists, but the site only publishes a root llms.txt.</p>"))
        fetched = fetch_source(base + "/guide/", OPTS)
    assert fetched.notes[0] == f"{base}/guide/ has no llms.txt of its own; using the site root's {base}/llms.txt"
    assert "wrong docs" in all_text(fetched)


def test_slow_server_times_out_fast() -> None:
    site = Site()
    site.routes["/robots.txt"] = Route(b"", status=404)
    for p in ("/slow", "/llms-full.txt", "/llms.txt", "/sitemap.xml"):
        site.routes[p] = Route(b"late", delay=3)
    start = time.perf_counter()
    with serve(site) as base, pytest.raises(SourceError) as e:
        fetch_source(base + "/slow", SourceOptions(timeout=0.3))
    assert "timed out" in str(e.value)
    assert time.perf_counter() - start < 2.5


def test_binary_served_as_html_is_rejected() -> None:
    site = Site()
    site.add("/page", b"\x89PNG\r\n\x1a\n" + b"\x00" * 2000, content_type="text/html")
    with serve(site) as base, pytest.raises(SourceError) as e:
        fetch_source(base + "/page", OPTS)
    assert "binary" in str(e.value)


def test_retries_transient_failures() -> None:
    calls = []

    def flaky(req: Request) -> Route:
        calls.append(req)
        if len(calls) < 3:
            return Route(b"busy", status=503, content_type="text/plain")
        return Route(b"# Ok\n\nfine text here\n", content_type="text/markdown")

    site = Site()
    site.routes["/x.md"] = Route(handler=flaky)
    with serve(site) as base:
        client = HttpClient(HttpOptions(retries=2, backoff=0.01, connect_timeout=2, read_timeout=2))
        assert b"fine text" in client.get(base + "/x.md").body
        calls.clear()
        client = HttpClient(HttpOptions(retries=1, backoff=0.01, connect_timeout=2, read_timeout=2))
        with pytest.raises(FetchError) as e:
            client.get(base + "/x.md")
    assert e.value.status == 503


def test_body_size_cap() -> None:
    site = Site()
    site.add("/big.md", "x" * 5000, content_type="text/markdown")
    with serve(site) as base:
        client = HttpClient(HttpOptions(max_bytes=1000, retries=0))
        with pytest.raises(FetchError) as e:
            client.get(base + "/big.md")
    assert "larger than" in str(e.value)


def test_page_limit_is_bounded() -> None:
    site = Site()
    links = "\n".join(f"- [P{i}](/p{i}.md)" for i in range(6))
    site.add("/llms.txt", "# Many\n\n" + links + "\n", content_type="text/plain")
    for i in range(6):
        site.add(f"/p{i}.md", f"# Page {i}\n\nThis is page number {i} with enough words to keep.\n",
                 content_type="text/markdown")
    seen: list[tuple[str, int, int]] = []
    with serve(site) as base:
        fetched = fetch_source(base + "/", SourceOptions(timeout=2, max_pages=3,
                                                         progress=lambda *a: seen.append(a)))
    assert len([d for d in fetched.documents if d.path != "llms.txt"]) == 3
    assert seen[-1] == ("fetching", 3, 3)
    assert "skipped 3 pages: 3 beyond the cap of 3 pages (--max-pages)" in fetched.notes


def test_helpers() -> None:
    assert site_name("https://docs.python.org/3/") == "python"
    assert site_name("https://fastapi.tiangolo.com/") == "fastapi"
    assert site_name("https://developer.mozilla.org/en-US/") == "mozilla"
    assert site_name("https://react.dev") == "react"
    assert site_name("http://127.0.0.1:8000/") == "127.0.0.1"
    assert doc_path("https://x.dev/docs/guide/") == "docs/guide"
    assert doc_path("https://x.dev/") == "index"
    assert doc_path("https://x.dev/a/../../etc/passwd") == "etc/passwd"
    assert doc_path("https://x.dev/docs/index.html") == "docs"
    docs = split_llms_full("No heading at all, just a paragraph of text here.\n", "https://x.dev/llms-full.txt")
    assert [d.path for d in docs] == ["llms-full/page"]
