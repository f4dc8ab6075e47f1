"""What a site's pages were last time: validators for conditional requests, and the parsed page.

Re-adding a website asks each page with `If-None-Match` / `If-Modified-Since` from the last
fetch; a `304 Not Modified` costs no body and no parse. A page that does come back whole but
hashes the same as before (servers without validators) is not parsed again either. Only the
pages whose bytes changed are parsed; the builder then reuses the chunks and vectors of every
page whose text is unchanged (`BuildOptions.previous`). One small JSON file per URL under
`$CONTEXT_HOME/cache/web/`, written atomically; a release of context re-parses everything
(the parsers may have changed), and a damaged entry is just a miss.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..document import Block, Document
from ..version import __version__


@dataclass
class Entry:
    url: str
    sha256: str  # of the body as fetched
    doc: Document | None
    links: list[str] = field(default_factory=list)
    etag: str | None = None
    last_modified: str | None = None


class PageCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def default(cls) -> PageCache:
        from ..home import context_home

        return cls(context_home() / "cache" / "web")

    def _file(self, url: str) -> Path:
        key = hashlib.sha256(url.encode("utf-8")).hexdigest()
        return self.root / key[:2] / f"{key[2:34]}.json"

    def get(self, url: str) -> Entry | None:
        try:
            data = json.loads(self._file(url).read_text("utf-8"))
            if data.get("builder") != __version__ or data.get("url") != url:
                return None
            raw = data.get("doc")
            doc = None if raw is None else Document(
                path=raw["path"], title=raw["title"], description=raw.get("description", ""), url=raw.get("url"),
                embed_hint=raw.get("embed_hint"), kind=raw.get("kind", "guide"),
                blocks=[Block(int(b["level"]), str(b["title"]), str(b["text"])) for b in raw["blocks"]])
            return Entry(url=url, sha256=str(data["sha256"]), doc=doc, links=[str(x) for x in data.get("links", [])],
                         etag=data.get("etag"), last_modified=data.get("last_modified"))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, entry: Entry) -> None:
        from ..atomic import write_text

        data = {"builder": __version__, **asdict(entry)}
        try:
            write_text(self._file(entry.url), json.dumps(data, ensure_ascii=False))
        except OSError:
            pass  # a cache that cannot be written only costs the next add some time


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
