"""Documentation websites: llms-full.txt, then llms.txt, then sitemap.xml, then a crawl.

The order prefers what a site publishes for machines: `llms-full.txt` is the whole docs as
Markdown in one file (split into pages at its `# ` headings); `llms.txt` lists the pages
worth reading; a sitemap (`sitemap.xml`, those robots.txt names, Astro's `sitemap-index.xml`)
lists every page; failing all three, the start page's same-origin
links are followed (`site_crawl.py`). Each file is looked for at the given URL's path and
at the site root. Pages are fetched from the same origin only, at most `max_pages`, on
`workers` threads, as Markdown where the site offers it and through a headless browser where
they only render with JavaScript (`site_pages.py`); a page that fails is skipped and counted,
never fatal. robots.txt is honoured throughout (see `http.py`). An unreachable site
(timeout, refused, unknown host) stops at once with one line instead of probing every fallback.

Versions (`site_urls.py`): a URL with a version segment (`/en/5.1/`, `/v18/`) builds and
records that version, and a crawl or sitemap keeps to it; `version=` asks for one the URL
does not name (its segment replaced, or `/en/V/`, `/V/`, `/vV/`, `?version=V` tried in turn;
a version asked by query is carried to every page link). Localised and other-version copies
of pages are left out.

Names: `docs.python.org` -> `python`, `fastapi.tiangolo.com` -> `fastapi` (the first host
label after generic ones such as www/docs/developer); IP hosts keep the address. Version
`latest`. Document paths are URL paths relative to the site root (`docs/guide.md`,
`docs/intro` for `/docs/intro/`, `index` for `/`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

from ..document import Document
from ..errors import SourceError
from .base import Fetched
from .http import FetchError, HttpClient, Response, origin, safe_url
from .site_doc import doc_path
from .site_pages import PAGE_SECONDS

MAX_PAGES = 500
WORKERS = 4
MAX_SITEMAPS = 50
GENERIC_LABELS = {"www", "docs", "doc", "documentation", "developer", "developers", "dev", "api",
                  "learn", "help", "support", "wiki", "guide", "guides", "manual", "reference"}
_MD_LINK_RE = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_VERSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")
_SOURCE_LINE_RE = re.compile(r"^(?:source|url|link|canonical):\s*(https?://\S+)\s*$", re.I)


@dataclass
class WebLimits:
    max_pages: int = MAX_PAGES
    workers: int = WORKERS
    progress: Callable[[str, int, int], None] | None = None  # ("fetching", done, total)
    browser: str = "auto"  # auto: render pages that need JavaScript; never; always
    version: str | None = None  # the docs version to build (see the module docstring)
    max_depth: int = 8  # link hops from the start page, when crawling
    deadline: float = 900.0  # seconds for a whole crawl
    cache: bool = True  # conditional requests and parsed pages from the last fetch (site_cache.py)
    page_seconds: float = PAGE_SECONDS  # one page in all, however steadily it trickles


def fetch_site(url: str, *, version: str | None = None, client: HttpClient | None = None,
               limits: WebLimits | None = None) -> Fetched:
    """A docs site at `url`, of `version` when given (recorded as the package version).

    The entry point for callers outside `context add` (the coverage resolver): it makes its
    own HTTP client when none is given.
    """
    limits = limits or WebLimits()
    if version is not None:
        limits.version = version
    if client is not None:
        return fetch_website(url, client, limits)
    with HttpClient() as own:
        return fetch_website(url, own, limits)


def fetch_website(url: str, client: HttpClient, limits: WebLimits | None = None) -> Fetched:
    """Fetch a docs site as Documents; raises SourceError (one line) when nothing is usable."""
    from .site_cache import PageCache
    from .site_pages import PageReader
    from .site_urls import recorded_version

    limits = limits or WebLimits()
    p = urlsplit(url)
    if p.scheme not in ("http", "https") or not p.hostname:
        raise SourceError(f"{url}: not an http(s) URL")
    if limits.version:
        url = _versioned_url(url, limits.version, client)
        p = urlsplit(url)
    base: dict[str, Any] = dict(source_type="web", source_url=safe_url(url), name=site_name(url),
                                version=recorded_version(url, limits.version))
    if not client.allowed(url):
        raise SourceError(f"{safe_url(url)}: robots.txt disallows fetching this URL")
    cache = PageCache.default() if limits.cache else None
    reader = PageReader(client, limits.browser, cache, limits.page_seconds)
    try:
        return _discover(url, reader, limits, base)
    finally:
        if cache is not None:
            cache.prune()


def _discover(url: str, reader: Any, limits: WebLimits, base: dict[str, Any]) -> Fetched:
    """The cascade of the module docstring, from llms-full.txt to a crawl."""
    client = reader.client
    p = urlsplit(url)
    path = p.path.lower()
    exists = _existence(client, url)

    if not path.endswith("llms.txt"):
        for cand in _candidates(url, "llms-full.txt"):
            if _borrowed(url, cand) and not exists():
                continue
            resp = _probe(client, cand)
            if resp is not None:
                docs = split_llms_full(resp.text, resp.url)
                if docs:
                    notes = _borrowed_note(url, resp) + [f"read {len(docs)} pages from {safe_url(resp.url)}"]
                    return Fetched(**base, documents=docs, notes=notes)
    if not path.endswith("llms-full.txt"):
        for cand in _candidates(url, "llms.txt"):
            if _borrowed(url, cand) and not exists():
                continue
            resp = _probe(client, cand)
            if resp is not None:
                fetched = _from_llms_txt(resp, reader, limits, base, url)
                if fetched is not None:
                    fetched.notes[:0] = _borrowed_note(url, resp)
                    return fetched
    if path.endswith(("llms.txt", "llms-full.txt")):
        raise SourceError(f"{safe_url(url)}: no usable {p.path.rsplit('/', 1)[-1]} there")

    fetched = _from_sitemap(url, reader, limits, base, exists)
    if fetched is not None:
        return fetched
    resp = client.get(url, deadline=limits.page_seconds)  # raises the real error (404, binary, ...) as one line
    if _is_openapi(resp):
        from .openapi import fetched_from_spec, load_spec

        spec = load_spec(resp.text)
        if spec is not None:
            return fetched_from_spec(spec, safe_url(resp.url))
    return _from_crawl(resp, reader, limits, base)


def _from_crawl(resp: Response, reader: Any, limits: WebLimits, base: dict[str, Any]) -> Fetched:
    from .site_crawl import CrawlLimits, crawl
    from .site_urls import recorded_version

    start = reader.page(resp)
    found = crawl(start, reader, CrawlLimits(max_pages=limits.max_pages, workers=limits.workers,
                                             max_depth=limits.max_depth, deadline=limits.deadline,
                                             version=limits.version, progress=limits.progress))
    if not found.documents:
        raise SourceError(f"{safe_url(resp.url)}: no documentation text on the page"
                          + ("; " + "; ".join(reader.notes()) if reader.notes() else ""))
    base = {**base, "version": recorded_version(resp.url, limits.version)}
    if len(found.documents) == 1:
        notes = ["no llms.txt, sitemap or linked pages found; indexed this single page"]
    else:
        notes = [f"no llms.txt or sitemap found; crawled {len(found.documents)} pages from {safe_url(resp.url)}"]
    line = found.skipped.line(limits.max_pages)
    notes += ([line] if line else []) + reader.notes()
    return Fetched(**base, documents=found.documents, skipped=found.skipped.failures(), notes=notes)


def _versioned_url(url: str, version: str, client: HttpClient) -> str:
    """The URL serving `version` of the site at `url` (see the module docstring)."""
    from .site_urls import variant, versioned_candidates

    if not _VERSION_RE.fullmatch(version):
        raise SourceError(f"{version[:40]!r} is not a version (letters, digits and . _ + - only)")
    have = variant(url).version
    if have is not None and have.removeprefix("v") == version.removeprefix("v"):
        return url
    tried = versioned_candidates(url, version)
    for cand in tried:
        try:
            resp = client.get(cand)
        except FetchError as e:
            if e.network:
                raise
            continue
        if variant(resp.url).version in (version, "v" + version.removeprefix("v")) or cand == resp.url:
            return cand
    raise SourceError(f"{safe_url(url)}: no version {version} found (tried {', '.join(safe_url(c) for c in tried)})")


def site_name(url: str) -> str:
    """A short package name from the host (see the module docstring)."""
    host = (urlsplit(url).hostname or "site").lower()
    if re.fullmatch(r"[\d.]+|[0-9a-f:]+", host):
        return host.replace(":", "-")
    labels = host.split(".")
    if len(labels) > 1:
        labels = labels[:-1]  # the TLD
    meaningful = [x for x in labels if x not in GENERIC_LABELS]
    name = meaningful[0] if meaningful else labels[0]
    return re.sub(r"[^a-z0-9._-]+", "-", name).strip("-.") or "site"


def split_llms_full(text: str, url: str) -> list[Document]:
    """Cut an llms-full.txt at its top-level `# ` headings (outside code fences), one page each.

    A `Source: https://…` line right under a heading names the page's real URL and path.
    """
    from ..parse import parse_markdown

    pages: list[list[str]] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
        if fence is None and line.startswith("# ") and any(x.strip() for x in current):
            pages.append(current)
            current = []
        current.append(line)
    if any(x.strip() for x in current):
        pages.append(current)
    docs: list[Document] = []
    used: set[str] = set()
    site = origin(url)
    for lines in pages:
        page_url, title = None, ""
        if lines and lines[0].startswith("# "):
            title = lines[0][2:].strip()
        for line in lines[1:6]:
            m = _SOURCE_LINE_RE.match(line.strip())
            if m and origin(m.group(1)) == site:
                page_url = safe_url(m.group(1))
                break
        rel = doc_path(page_url) if page_url else "llms-full/" + (_slug(title) or "page")
        rel = _unique(rel, used)
        doc = parse_markdown(rel, "\n".join(lines), url=page_url or safe_url(url))
        if doc is not None and doc.blocks:
            docs.append(doc)
    return docs


def llms_links(text: str, base_url: str) -> tuple[list[str], int]:
    """Same-origin page URLs linked from an llms.txt, in order, and how many were off-site."""
    site = origin(base_url)
    seen: set[str] = set()
    links: list[str] = []
    offsite = 0
    for m in _MD_LINK_RE.finditer(text):
        target = urldefrag(urljoin(base_url, m.group(1)))[0]
        if urlsplit(target).scheme not in ("http", "https"):
            continue
        if origin(target) != site:
            offsite += 1
            continue
        if urlsplit(target).path.endswith(("llms.txt", "llms-full.txt")):
            continue
        if target not in seen and target != base_url:
            seen.add(target)
            links.append(target)
    return links, offsite


def _from_llms_txt(resp: Response, reader: Any, limits: WebLimits, base: dict[str, Any],
                   start: str) -> Fetched | None:
    from ..parse import parse_markdown

    links, offsite = llms_links(resp.text, resp.url)
    if not links:
        return None
    notes = [f"read llms.txt at {safe_url(resp.url)}: {len(links)} linked pages"]
    if offsite:
        notes.append(f"{offsite} links to other sites not followed")
    docs, skipped, extra = _fetch_pages(links, reader, limits, start)
    if not docs:
        raise SourceError(f"{safe_url(resp.url)}: none of the {len(links)} linked pages could be fetched")
    notes += extra
    index = parse_markdown("llms.txt", resp.text, url=safe_url(resp.url))
    quote = re.search(r"^>\s*(\S.*)$", resp.text, re.M)  # llms.txt puts its summary in a blockquote
    description = quote.group(1).strip()[:300] if quote else (index.description if index else None)
    if index is not None and index.blocks and "llms.txt" not in {d.path for d in docs}:
        docs.insert(0, index)
    return Fetched(**base, documents=docs, skipped=skipped, notes=notes, description=description or None)


def _from_sitemap(url: str, reader: Any, limits: WebLimits, base: dict[str, Any],
                  exists: Callable[[], bool]) -> Fetched | None:
    from .site_urls import acceptable, variant

    client = reader.client
    candidates = _candidates(url, "sitemap.xml")
    candidates += [s for s in client.sitemaps_from_robots(url) if origin(s) == origin(url) and s not in candidates]
    candidates += [s for s in _candidates(url, "sitemap-index.xml") if s not in candidates]  # Astro's name
    for cand in candidates:
        resp = _probe(client, cand, xml=True)
        if resp is None:
            continue
        urls = sitemap_urls(resp, client, cap=max(10 * limits.max_pages, 10_000))
        scope = urlsplit(url).path
        notes = []
        if scope not in ("", "/"):
            prefix = scope if scope.endswith("/") else scope.rsplit("/", 1)[0] + "/"
            in_scope = [u for u in urls if urlsplit(u).path.startswith(prefix)]
            if not in_scope:  # the whole site only stands in for a page that exists
                if not exists():
                    return None
                notes.append(f"the sitemap lists nothing under {prefix}; indexing every page it lists")
            urls = in_scope or urls
        want = variant(url)
        urls = [u for u in urls if origin(u) == origin(url) and acceptable(u, want, limits.version)]
        if not urls:
            continue
        docs, skipped, extra = _fetch_pages(urls, reader, limits, url)
        if not docs:
            raise SourceError(f"{safe_url(resp.url)}: none of the {len(urls)} listed pages could be fetched")
        notes = notes + [f"read sitemap {safe_url(resp.url)}: {len(urls)} pages"] + extra
        return Fetched(**base, documents=docs, skipped=skipped, notes=notes)
    return None


def sitemap_urls(resp: Response, client: HttpClient, cap: int = 50_000) -> list[str]:
    """Page URLs of a sitemap, at most `cap`; a sitemap index is followed one level (bounded)."""
    kind, locs = _parse_sitemap(resp.body)
    if kind != "sitemapindex":
        return locs[:cap]
    urls: list[str] = []
    for loc in locs[:MAX_SITEMAPS]:
        if len(urls) >= cap:
            break
        if origin(loc) != origin(resp.url):
            continue
        sub = _probe(client, loc, xml=True)
        if sub is None:
            continue
        sub_kind, sub_locs = _parse_sitemap(sub.body)
        if sub_kind == "urlset":
            urls.extend(sub_locs)
    return urls[:cap]


def _parse_sitemap(body: bytes) -> tuple[str, list[str]]:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=False)
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError:
        return "", []
    kind = etree.QName(root).localname if isinstance(root.tag, str) else ""
    locs = [(el.text or "").strip() for el in root.iter() if isinstance(el.tag, str)
            and etree.QName(el).localname == "loc"]
    return kind, [u for u in locs if u]


def _fetch_pages(urls: list[str], reader: Any, limits: WebLimits, start: str) -> tuple[list[Document], int, list[str]]:
    """Fetch and parse listed pages concurrently, in the version `start` asked for; failures
    and robots refusals are counted, not raised, and said in one line."""
    from .site_crawl import Skipped
    from .site_urls import carry_version

    client = reader.client
    urls = list(dict.fromkeys(carry_version(u, start) for u in urls))
    skipped = Skipped(beyond_cap=max(0, len(urls) - limits.max_pages))
    urls = urls[: limits.max_pages]
    allowed = [u for u in urls if client.allowed(u)]
    skipped.robots = len(urls) - len(allowed)

    def one(u: str) -> Document | None:
        try:
            doc: Document | None = reader.read(u).doc
            return doc
        except Exception:  # noqa: BLE001 - one bad page must never abort the crawl
            return None

    results: list[Document | None] = []
    with ThreadPoolExecutor(max_workers=max(1, limits.workers)) as pool:
        for doc in pool.map(one, allowed):
            results.append(doc)
            if limits.progress:
                limits.progress("fetching", len(results), len(allowed))
    docs: list[Document] = []
    used: set[str] = set()
    for doc in results:
        if doc is None or not doc.blocks:
            skipped.failed += 1
            continue
        if doc.path in used:
            doc.path = _unique(doc.path, used)
        used.add(doc.path)
        docs.append(doc)
    line = skipped.line(limits.max_pages)
    return docs, skipped.failures(), ([line] if line else []) + reader.notes()


def _existence(client: HttpClient, url: str) -> Callable[[], bool]:
    """Whether the URL itself answers (asked once, on first need): the site root's llms.txt or
    whole sitemap may stand in for a page that exists, never for one that does not (a 404
    must not silently build the whole site under the name the user gave)."""
    known: list[bool] = []

    def exists() -> bool:
        if not known:
            try:
                client.get(url)
                known.append(True)
            except FetchError as e:
                if e.network:
                    raise
                known.append(e.status is None)  # there, but not a text page (binary, too big)
        return known[0]

    return exists


def _borrowed(url: str, cand: str) -> bool:
    """A candidate at the site root standing in for a URL below it."""
    return urlsplit(url).path not in ("", "/") and urlsplit(cand).path.count("/") == 1


def _borrowed_note(url: str, resp: Response) -> list[str]:
    if not _borrowed(url, resp.url):
        return []
    name = urlsplit(resp.url).path.lstrip("/")
    return [f"{safe_url(url)} has no {name} of its own; using the site root's {safe_url(resp.url)}"]


def _candidates(url: str, filename: str) -> list[str]:
    """`filename` at the URL itself (if it names it), beside the URL's path, and at the root."""
    p = urlsplit(url)
    if p.path.lower().endswith(filename):
        return [urldefrag(url)[0]]
    root = f"{p.scheme}://{p.netloc}"
    folder = p.path if p.path.endswith("/") else p.path.rsplit("/", 1)[0] + "/"
    out = []
    if folder not in ("", "/"):
        out.append(root + folder + filename)
    out.append(root + "/" + filename)
    return out


def _probe(client: HttpClient, url: str, xml: bool = False) -> Response | None:
    """A resource that may not exist: None for 4xx/5xx, robots refusals and HTML stand-ins
    (single-page apps answer every path with their index page); unreachable hosts raise."""
    try:
        resp = client.get(url)
    except FetchError as e:
        if e.network:
            raise
        return None
    head = resp.body[:512].lstrip().lower()
    if resp.content_type in ("text/html", "application/xhtml+xml") or head.startswith((b"<!doctype html", b"<html")):
        return None
    if xml and not (head.startswith(b"<?xml") or b"<urlset" in head or b"<sitemapindex" in head):
        return None
    return resp


def _is_openapi(resp: Response) -> bool:
    if resp.content_type in ("text/html", "application/xhtml+xml"):
        return False
    head = resp.body[:4096].decode("utf-8", "replace")
    return bool(re.search(r"""(^|[{,\s])["']?(openapi|swagger)["']?\s*:""", head))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80]


def _unique(path: str, used: set[str]) -> str:
    cand, n = path, 2
    while cand in used:
        cand = f"{path}-{n}"
        n += 1
    used.add(cand)
    return cand
