"""Re-adding a website: conditional requests, pages not parsed again, only changed pages rebuilt."""

from __future__ import annotations

from web_fixtures import Request, Route, Site, serve

from context_cli.adding import AddRequest, add_source
from context_cli.sources.resolve import SourceOptions, fetch_source

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
