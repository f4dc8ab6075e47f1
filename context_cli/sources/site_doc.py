"""One fetched web page as a document, and the path it is filed under.

Apart from `web.py` so that the page reader (`site_pages.py`), which `web.py` uses through
the crawler, can parse pages without importing `web.py` back.
"""

from __future__ import annotations

from posixpath import normpath
from urllib.parse import unquote, urlsplit

from ..document import Document
from .http import Response, safe_url

MD_SUFFIXES = (".md", ".markdown", ".mdx", ".txt")
MD_TYPES = ("text/markdown", "text/x-markdown", "text/plain")


def doc_path(url: str) -> str:
    """`https://x.dev/docs/guide/` -> `docs/guide`; `/` -> `index`; never absolute."""
    path = unquote(urlsplit(url).path)
    path = normpath("/" + path).lstrip("/") if path.strip("/") else ""
    path = path.rstrip("/")
    for suffix in ("/index.html", "/index.htm"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
    return path or "index"


def page_document(resp: Response) -> Document | None:
    """Parse a fetched page: Markdown by suffix or content type, else HTML."""
    from ..parse import parse_html, parse_markdown

    rel = doc_path(resp.url)
    suffix_path = urlsplit(resp.url).path.lower()
    if suffix_path.endswith(MD_SUFFIXES) or resp.content_type in MD_TYPES:
        return parse_markdown(rel, resp.text, url=safe_url(resp.url), mdx=suffix_path.endswith(".mdx"))
    if resp.content_type in ("text/html", "application/xhtml+xml", ""):
        return parse_html(rel, resp.text, url=safe_url(resp.url))
    return None
