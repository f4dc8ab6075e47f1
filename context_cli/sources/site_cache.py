"""What a site's pages were last time: validators for conditional requests, and the parsed page.

Re-adding a website asks each page with `If-None-Match` / `If-Modified-Since` from the last
fetch; a `304 Not Modified` costs no body and no parse. A page that does come back whole but
hashes the same as before (servers without validators) is not parsed again either. Only the
pages whose bytes changed are parsed; the builder then reuses the chunks and vectors of every
page whose text is unchanged (`BuildOptions.previous`). One small JSON file per URL under
`$CONTEXT_HOME/cache/web/`, written atomically; a release of context re-parses everything
(the parsers may have changed), and a damaged entry is just a miss.

The cache is bounded (256 MB, or `CONTEXT_WEB_CACHE_MB`): after each site is fetched the
entries used longest ago are removed until it fits. Reading an entry marks it used, so the
site just fetched is the last to go.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..document import Block, Document
from ..environment import WEB_CACHE_MB
from ..errors import SourceError
from ..version import __version__

MAX_MB = 256


@dataclass
class Entry:
    url: str
    sha256: str  # of the body as fetched
    doc: Document | None
    links: list[str] = field(default_factory=list)
    etag: str | None = None
    last_modified: str | None = None
    browser: str = ""  # as `site_pages.Page.browser`: "rendered", "wanted" or ""


class PageCache:
    def __init__(self, root: Path, max_bytes: int = MAX_MB * 1024 * 1024) -> None:
        self.root = root
        self.max_bytes = max_bytes

    @classmethod
    def default(cls) -> PageCache:
        """The user's cache, bounded by `CONTEXT_WEB_CACHE_MB` when set (SourceError if not a number)."""
        from ..home import context_home

        return cls(context_home() / "cache" / "web", bound())

    def files(self) -> list[tuple[float, int, Path]]:
        """(last used, bytes, path) of every file in the cache; links are never followed out of it."""
        found = []
        for shard in _entries(self.root):
            if not shard.is_dir(follow_symlinks=False):
                continue
            for f in _entries(Path(shard.path)):
                try:
                    st = f.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not f.is_dir(follow_symlinks=False):
                    found.append((st.st_mtime, st.st_size, Path(f.path)))
        return found

    def prune(self) -> int:
        """Remove the entries used longest ago (and stray temp files) until the cache fits its
        bound; how many files went."""
        files = self.files()
        total = sum(size for _, size, _ in files)
        removed = 0
        for _, size, f in sorted(files, key=lambda x: x[0]):
            if total <= self.max_bytes:
                break
            try:
                f.unlink()
            except OSError:
                continue
            total -= size
            removed += 1
        return removed

    def _file(self, url: str, rendering: str) -> Path:
        key = hashlib.sha256(f"{rendering}\n{url}".encode()).hexdigest()
        return self.root / key[:2] / f"{key[2:34]}.json"

    def get(self, url: str, rendering: str) -> Entry | None:
        """The entry for `url` read with the browser `rendering` ("auto", "always", "never"),
        marked as used now; None when missing, stale or damaged."""
        try:
            path = self._file(url, rendering)
            data = json.loads(path.read_text("utf-8"))
            if not isinstance(data, dict) or data.get("builder") != __version__ or data.get("url") != url:
                return None
            raw = data.get("doc")
            doc = None if raw is None else Document(
                path=raw["path"], title=raw["title"], description=raw.get("description", ""), url=raw.get("url"),
                embed_hint=raw.get("embed_hint"), kind=raw.get("kind", "guide"),
                blocks=[Block(int(b["level"]), str(b["title"]), str(b["text"])) for b in raw["blocks"]])
            entry = Entry(url=url, sha256=str(data["sha256"]), doc=doc, links=[str(x) for x in data.get("links", [])],
                          etag=data.get("etag"), last_modified=data.get("last_modified"),
                          browser=str(data.get("browser", "")))
            os.utime(path)
            return entry
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, entry: Entry, rendering: str) -> None:
        from ..atomic import write_text

        data = {"builder": __version__, **asdict(entry)}
        try:
            write_text(self._file(entry.url, rendering), json.dumps(data, ensure_ascii=False), durable=False)
        except OSError:
            pass  # a cache that cannot be written only costs the next add some time


def bound() -> int:
    """The cache's bound in bytes: `CONTEXT_WEB_CACHE_MB` megabytes, else 256 MB."""
    raw = (WEB_CACHE_MB.value() or "").strip()
    if raw and not re.fullmatch(r"[0-9]{1,9}(\.[0-9]{1,6})?", raw):
        raise SourceError(f"{WEB_CACHE_MB.name}={raw[:20]!r} is not a number of megabytes")
    return int((float(raw) if raw else MAX_MB) * 1024 * 1024)


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def conditional_headers(entry: Entry | None) -> dict[str, str]:
    if entry is None:
        return {}
    headers = {}
    if entry.etag:
        headers["If-None-Match"] = entry.etag
    if entry.last_modified:
        headers["If-Modified-Since"] = entry.last_modified
    return headers


def body_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()
