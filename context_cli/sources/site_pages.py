"""Reading one page of a docs site: Markdown when the site offers it, a browser when it must.

Each page is asked for with `Accept: text/markdown` first (sites that negotiate answer with
Markdown). A site that publishes `.md` twins (`/guide/intro` beside `/guide/intro.md`) is
found from its first page and read from the twins from then on. An HTML page that comes back
empty, as a challenge or as boilerplate only is rendered by the installed Chromium
(`site_browser.py`) unless the browser is off; `always` renders every HTML page.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit, urlunsplit

from ..document import Document
from .http import FetchError, HttpClient, Response, safe_url
from .site_cache import Entry, PageCache, body_hash, conditional_headers
from .site_urls import is_page_link, normalise

ACCEPT = "text/markdown;q=1.0, text/html;q=0.9, */*;q=0.5"
PAGE_SECONDS = 30.0  # one page of a site, however steadily it trickles (llms-full.txt keeps the client's)
BROWSER_MODES = ("auto", "never", "always")
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_MD_LINK_RE = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


@dataclass
class Page:
    url: str  # normalised, after redirects
    doc: Document | None
    links: list[str] = field(default_factory=list)  # normalised absolute page links, in order
    browser: str = ""  # "rendered" by the browser; "wanted" it, but none ran; "" plain


class PageReader:
    """Fetches and parses pages for one site; thread-safe. Counts pages the browser rendered."""

    def __init__(self, client: HttpClient, browser: str = "auto", cache: PageCache | None = None,
                 page_seconds: float = PAGE_SECONDS) -> None:
        from .site_browser import find_browser

        if browser not in BROWSER_MODES:
            raise ValueError(f"browser must be one of {BROWSER_MODES}")
        self.client = client
        self.mode = browser
        self.browser = find_browser() if browser != "never" else None
        self.rendering = "never" if self.browser is None else browser  # part of the cache key
        self.rendered = 0
        self.rendered_before = 0  # of those, rendered on an earlier fetch and unchanged since
        self.wanted_browser = 0  # pages that looked unrendered while no browser was available
        self.twins: bool | None = None  # None: not known yet
        self.cache = cache
        self.page_seconds = page_seconds
        self.not_modified = 0  # answered 304 to a conditional request
        self.same_bytes = 0  # fetched whole, but byte for byte what the cache holds
        self._lock = threading.Lock()

    def read(self, url: str) -> Page:
        """Fetch and parse `url` (see `site_cache.py` for what is not parsed again); FetchError
        (one line) when it cannot be fetched."""
        entry = self.cache.get(url, self.rendering) if self.cache else None
        resp = self.client.get(url, headers={"Accept": ACCEPT, **conditional_headers(entry)},
                               deadline=self.page_seconds)
        if resp.status == 304 and entry is not None:
            return self._reuse(normalise(url), entry, not_modified=True)
        digest = body_hash(resp.body)
        if entry is not None and entry.sha256 == digest:
            return self._reuse(normalise(resp.url), entry, not_modified=False)
        page = self.page(resp)
        if self.cache is not None:
            self.cache.put(Entry(url, digest, page.doc, page.links, resp.headers.get("etag"),
                                 resp.headers.get("last-modified"), page.browser), self.rendering)
        return page

    def _reuse(self, url: str, entry: Entry, *, not_modified: bool) -> Page:
        with self._lock:
            self.not_modified += not_modified
            self.same_bytes += not not_modified
            self.rendered_before += entry.browser == "rendered"
        self._count(entry.browser)
        return Page(url, entry.doc, entry.links, entry.browser)

    def _count(self, browser: str) -> None:
        with self._lock:
            self.rendered += browser == "rendered"
            self.wanted_browser += browser == "wanted"

    def page(self, resp: Response) -> Page:
        """Parse a response that was already fetched (the start page)."""
        from .site_doc import page_document

        doc = page_document(resp)
        if resp.content_type not in _HTML_TYPES:
            return Page(normalise(resp.url), doc, markdown_links(resp.text, resp.url))
        html = resp.text
        links = html_links(html, resp.url)
        twin = self._twin(resp.url)
        browser = ""
        if twin is not None:
            doc = twin
        elif self.mode == "always" or _unrendered(html, doc):
            rendered = self._render(resp.url)
            if rendered is not None:
                html, doc = rendered
                links = list(dict.fromkeys(links + html_links(html, resp.url)))
                browser = "rendered"
            elif self.browser is None:
                browser = "wanted"
        self._count(browser)
        return Page(normalise(resp.url), doc, links, browser)

    def _twin(self, url: str) -> Document | None:
        """The page's `.md` twin, once the site is known to publish them (decided on first use)."""
        from ..parse import parse_markdown
        from .site_doc import doc_path

        if self.twins is False:
            return None
        try:
            resp = self.client.get(twin_url(url), deadline=self.page_seconds)
        except FetchError:
            if self.twins is None:
                self.twins = False
            return None
        head = resp.body[:256].lstrip()
        if resp.content_type in _HTML_TYPES or head.startswith(b"<"):
            self.twins = False if self.twins is None else self.twins
            return None
        doc = parse_markdown(doc_path(url), resp.text, url=safe_url(url))
        if doc is None or not doc.blocks:
            return None
        self.twins = True
        return doc

    def _render(self, url: str) -> tuple[str, Document] | None:
        from ..parse import parse_html
        from .site_browser import render
        from .site_doc import doc_path

        if self.browser is None:
            return None
        dom = render(url, self.browser)
        if dom is None:
            return None
        doc = parse_html(doc_path(url), dom, url=safe_url(url))
        if doc is None or not doc.blocks:
            return None
        return dom, doc

    def notes(self) -> list[str]:
        """What to tell the user about the browser, if anything."""
        out = []
        if self.not_modified or self.same_bytes:
            out.append(f"{self.not_modified + self.same_bytes} pages unchanged since the last fetch, not parsed again "
                       f"({self.not_modified} answered 304 Not Modified)")
        if self.rendered:
            before = f"; {self.rendered_before} of them unchanged since the last fetch" if self.rendered_before else ""
            out.append(f"{self.rendered} pages needed a browser to render (chromium{before})")
        if self.wanted_browser and self.mode != "never":
            out.append(f"{self.wanted_browser} pages look like they need JavaScript; install chromium "
                       "(apt install chromium) and add again to render them")
        return out


def twin_url(url: str) -> str:
    """`/guide/intro` -> `/guide/intro.md`; `/guide/` -> `/guide/index.md`; `/a.html` -> `/a.md`;
    the query stays (a site versioned by `?version=` serves that version's twin)."""
    p = urlsplit(url)
    path = p.path or "/"
    if path.endswith("/"):
        path += "index.md"
    elif path.endswith((".html", ".htm")):
        path = path.rsplit(".", 1)[0] + ".md"
    else:
        path += ".md"
    return urlunsplit((p.scheme, p.netloc, path, p.query, ""))


def html_links(html: str, base: str) -> list[str]:
    """Page links of an HTML page (`<a href>`, `<link rel=next>`), normalised, honouring `<base>`."""
    from lxml import etree
    from lxml import html as lhtml

    try:
        tree = lhtml.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return []
    for b in tree.xpath("//base[@href]")[:1]:
        base = urljoin(base, b.get("href"))
    hrefs = tree.xpath("//a/@href | //link[@rel='next']/@href | //area/@href")
    return _absolute((str(h) for h in hrefs), base)


def markdown_links(text: str, base: str) -> list[str]:
    return _absolute((m.group(1) for m in _MD_LINK_RE.finditer(text)), base)


def _absolute(hrefs: object, base: str) -> list[str]:
    out: dict[str, None] = {}
    for href in hrefs:  # type: ignore[attr-defined]
        href = href.strip()
        if not href or href.startswith(("#", "javascript:", "mailto:", "tel:", "data:")):
            continue
        try:
            url = normalise(urljoin(base, href))
        except ValueError:
            continue
        if is_page_link(url):
            out[url] = None
    return list(out)


def _unrendered(html: str, doc: Document | None) -> bool:
    from .site_browser import looks_unrendered

    chars = sum(len(b.text) + len(b.title) for b in doc.blocks) if doc is not None else 0
    return looks_unrendered(html, chars)
