"""A same-origin crawl from a start page, for sites that publish no llms.txt and no sitemap.

Breadth first, level by level, `workers` pages at a time, within the start's folder, its
origin, its language (English otherwise) and its version (or the asked one, or the current
one). Bounded four ways: depth, a page cap, a wall-clock deadline for the whole crawl, and the
HTTP client's own per-page limits (timeouts, body size, redirects). robots.txt is asked
before a URL is queued, so a forbidden folder is never requested. What was left out is
counted and reported in one line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..document import Document
from .http import origin
from .site_pages import Page, PageReader
from .site_urls import acceptable, carry_version, scope_prefix, variant


@dataclass
class CrawlLimits:
    max_pages: int = 500
    workers: int = 4
    max_depth: int = 8
    deadline: float = 900.0  # seconds for the whole crawl; pages not started by then are left out
    version: str | None = None  # a version the user asked for (else the start page's)
    progress: Callable[[str, int, int], None] | None = None


@dataclass
class Skipped:
    """Why pages were left out; `line()` is the one line the user sees."""

    failed: int = 0
    robots: int = 0
    beyond_cap: int = 0
    too_deep: int = 0
    out_of_time: int = 0
    offsite: int = 0
    duplicates: int = 0

    def total(self) -> int:
        return self.failures() + self.beyond_cap + self.too_deep + self.out_of_time

    def failures(self) -> int:
        """Pages asked for that gave nothing (`Fetched.skipped`); the bounds are not failures."""
        return self.failed + self.robots + self.offsite

    def line(self, cap: int) -> str | None:
        parts = [(self.failed, "failed or had no text"), (self.robots, "disallowed by robots.txt"),
                 (self.beyond_cap, f"beyond the cap of {cap} pages (--max-pages)"),
                 (self.too_deep, "too deep"), (self.out_of_time, "left when the crawl ran out of time"),
                 (self.offsite, "redirected to another site")]
        said = [f"{n} {why}" for n, why in parts if n]
        return f"skipped {self.total()} pages: " + ", ".join(said) if said else None


@dataclass
class Crawl:
    documents: list[Document] = field(default_factory=list)
    skipped: Skipped = field(default_factory=Skipped)


def crawl(start: Page, reader: PageReader, limits: CrawlLimits) -> Crawl:
    """Follow links from `start` (already read) and return the pages with text."""
    site, prefix, want = origin(start.url), scope_prefix(start.url), variant(start.url)
    out = Crawl()
    seen = {start.url}
    taken: set[str] = set()
    deadline = time.monotonic() + limits.deadline

    def keep(link: str) -> bool:
        return (origin(link) == site and urlsplit(link).path.startswith(prefix)
                and acceptable(link, want, limits.version))

    def add(page: Page) -> list[str]:
        if page.url in taken:  # two links redirected to one page
            out.skipped.duplicates += 1
            return []
        taken.add(page.url)
        if page.doc is not None and page.doc.blocks:
            out.documents.append(page.doc)
        else:
            out.skipped.failed += 1
        links = dict.fromkeys(carry_version(u, start.url) for u in page.links)
        fresh = [u for u in links if u not in seen and keep(u)]
        seen.update(fresh)
        return fresh

    frontier = add(start)
    depth, requested = 0, 1
    with ThreadPoolExecutor(max_workers=max(1, limits.workers)) as pool:
        while frontier:
            if depth >= limits.max_depth:
                out.skipped.too_deep += len(frontier)
                break
            room = limits.max_pages - requested
            if room <= 0:
                out.skipped.beyond_cap += len(frontier)
                break
            allowed = [u for u in frontier if reader.client.allowed(u)]
            out.skipped.robots += len(frontier) - len(allowed)
            batch, rest = allowed[:room], allowed[room:]
            out.skipped.beyond_cap += len(rest)
            depth, requested = depth + 1, requested + len(batch)
            frontier = []
            for page in pool.map(lambda u: _read(reader, u, deadline), batch):
                if page is None:
                    out.skipped.failed += 1
                elif isinstance(page, str):  # "late"
                    out.skipped.out_of_time += 1
                elif origin(page.url) != site:
                    out.skipped.offsite += 1
                else:
                    frontier += add(page)
                if limits.progress:
                    limits.progress("fetching", len(taken), len(taken) + len(frontier))
    return out


def _read(reader: PageReader, url: str, deadline: float) -> Page | str | None:
    if time.monotonic() > deadline:
        return "late"
    try:
        return reader.read(url)
    except Exception:  # noqa: BLE001 - one bad page must never abort the crawl
        return None
