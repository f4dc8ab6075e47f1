"""Re-adding a website: conditional requests, pages not parsed again, only changed pages rebuilt."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from web_fixtures import SHELL, Request, Route, Site, fake_browser, serve

from context_cli.adding import AddRequest, add_source
from context_cli.errors import SourceError
from context_cli.sources.base import Fetched
from context_cli.sources.resolve import SourceOptions, fetch_source
from context_cli.sources.site_cache import Entry, PageCache

WORDS = "with enough words about the rocket to be kept as a page of its own in the package."


def page(title: str, *links: str) -> str:
    nav = "".join(f"<a href='{h}'>{h}</a> " for h in links)
    return f"<html><body><nav>{nav}</nav><main><h1>{title}</h1><p>{title} {WORDS}</p></main></body></html>"


def etagged(site: Site, path: str, body: str) -> None:
    """A page with an ETag that answers 304 to a matching If-None-Match."""
    tag = f'"{abs(hash(body))}"'

    def answer(req: Request) -> Route:
        if req.headers.get("If-None-Match") == tag:
            return Route(b"", status=304, headers={"ETag": tag})
        return Route(body.encode(), headers={"ETag": tag})

    site.routes[path] = Route(handler=answer)


def test_readding_asks_conditionally_and_parses_only_what_changed() -> None:
    site = Site()
    site.add("/", page("Home", "/a", "/b", "/c"))
    etagged(site, "/a", page("Alpha"))
    etagged(site, "/b", page("Bravo"))
    site.add("/c", page("Charlie"), headers={"Last-Modified": "Wed, 01 Jan 2025 00:00:00 GMT"})
    with serve(site) as base:
        first = fetch_source(base + "/", SourceOptions(timeout=2))
        assert not any("unchanged" in n for n in first.notes)
        site.requests.clear()
        second = fetch_source(base + "/", SourceOptions(timeout=2))
        asked = {r.path: r.headers for r in site.requests}
        assert asked["/a"].get("If-None-Match") and asked["/c"].get("If-Modified-Since")
        assert "3 pages unchanged since the last fetch, not parsed again (2 answered 304 Not Modified)" in second.notes
        etagged(site, "/b", page("Bravo changed"))
        third = fetch_source(base + "/", SourceOptions(timeout=2))
    assert "2 pages unchanged since the last fetch, not parsed again (1 answered 304 Not Modified)" in third.notes
    text = {d.path: d.blocks[0].text for d in third.documents}
    assert "Bravo changed" in text["b"] and "Alpha" in text["a"]
    assert [(d.path, d.title) for d in first.documents] == [(d.path, d.title) for d in second.documents]


def test_readding_a_site_rebuilds_only_the_changed_page() -> None:
    site = Site()
    site.add("/", page("Home", "/a", "/b"))
    etagged(site, "/a", page("Alpha"))
    etagged(site, "/b", page("Bravo"))
    with serve(site) as base:
        req = AddRequest(source=base + "/", name="rockets", version="1", embed=False)
        add_source(req)
        etagged(site, "/b", page("Bravo changed"))
        again = add_source(req)
    assert again.build is not None and again.build.pages == 3 and again.build.reused_pages == 2


def test_the_browser_setting_is_part_of_what_the_cache_remembers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An add builds what it would build on a fresh machine with the same flags: a page rendered
    by the browser is not served to a `--no-browser` add, nor a shell read without one to an add
    that may render it."""
    monkeypatch.setenv("CONTEXT_BROWSER", fake_browser(tmp_path))
    site = Site()
    site.add("/", page("Home", "/app"))
    etagged(site, "/app", SHELL)
    never, auto = SourceOptions(timeout=2, browser="never"), SourceOptions(timeout=2)

    def app_text(fetched: Fetched) -> str:
        return "\n".join(b.text for d in fetched.documents if d.path == "app" for b in d.blocks)

    with serve(site) as base:
        plain = fetch_source(base + "/", never)
        rendered = fetch_source(base + "/", auto)
        plain_again = fetch_source(base + "/", never)
        rendered_again = fetch_source(base + "/", auto)
    assert app_text(plain) == app_text(plain_again) == "" and plain.skipped == plain_again.skipped == 1
    assert "only exists after the script ran" in app_text(rendered) == app_text(rendered_again)
    assert "1 pages needed a browser to render (chromium)" in rendered.notes
    assert "1 pages needed a browser to render (chromium; 1 of them unchanged since the last fetch)" in rendered_again.notes
    assert not any("browser" in n for n in plain.notes + plain_again.notes)
    assert [r.headers.get("If-None-Match") is not None for r in site.requests if r.path == "/app"] == [
        False, False, True, True]  # each setting's own entry: first fetched whole, then asked conditionally


def test_cache_keeps_to_its_bound_by_dropping_what_was_used_longest_ago(tmp_path: Path) -> None:
    cache = PageCache(tmp_path, max_bytes=3000)
    for i, url in enumerate(["https://d.dev/a", "https://d.dev/b", "https://d.dev/c"]):
        cache.put(Entry(url, "0" * 64, None, ["x" * 900]), "auto")
        for f in tmp_path.glob("*/*"):  # written a minute apart, a first
            if f.stat().st_mtime > 10_000:
                os.utime(f, (1000.0 + i * 60, 1000.0 + i * 60))
    assert cache.get("https://d.dev/a", "auto") is not None  # used now: the newest
    cache.put(Entry("https://d.dev/d", "0" * 64, None, ["x" * 900]), "auto")
    assert cache.prune() == 2
    kept = {u for u in ("a", "b", "c", "d") if cache.get(f"https://d.dev/{u}", "auto") is not None}
    assert kept == {"a", "d"} and sum(f.stat().st_size for f in tmp_path.glob("*/*")) <= 3000
    (tmp_path / "zz").mkdir()
    (tmp_path / "zz" / ".tmp-left-by-a-crash.tmp").write_bytes(b"x" * 5000)  # a stray temp file goes too
    os.utime(tmp_path / "zz" / ".tmp-left-by-a-crash.tmp", (1.0, 1.0))
    assert cache.prune() == 1 and kept == {u for u in "ad" if cache.get(f"https://d.dev/{u}", "auto")}


def test_adding_a_site_prunes_the_cache_to_the_bound_it_is_given(context_home: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTEXT_WEB_CACHE_MB", "0.003")  # about two pages' entries
    site = Site()
    site.add("/", page("Home", "/a", "/b", "/c"))
    for p in ("a", "b", "c"):
        site.add(f"/{p}", page(p.upper() + " " + WORDS * 8))
    with serve(site) as base:
        fetch_source(base + "/", SourceOptions(timeout=2))
    files = list((context_home / "cache" / "web").glob("*/*"))
    assert 0 < len(files) < 3 and sum(f.stat().st_size for f in files) <= 0.003 * 1024 * 1024
    monkeypatch.setenv("CONTEXT_WEB_CACHE_MB", "lots")
    with pytest.raises(SourceError) as e:
        fetch_source(base + "/", SourceOptions(timeout=2))
    assert str(e.value) == "CONTEXT_WEB_CACHE_MB='lots' is not a number of megabytes"
