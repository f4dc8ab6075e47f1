"""What the index stores about one published version, and the errors a store can raise.

Shared by every index (SQLite, PostgreSQL) and blob store (files, S3), so each backend
builds the same `Record` and the app maps the same exceptions to the same HTTP answers.
"""

from __future__ import annotations

import errno
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from context_cli.package.identity import PackageId
from context_cli.versions import version_key

MUTABLE_VERSIONS = frozenset({"latest"})
MAX_DESCRIPTION = 1000
MAX_META_VALUE = 2000
MAX_QUERY_TERMS = 16
MAX_QUERY_CHARS = 500  # a full-text query; names and descriptions are searched, not documents
MAX_TERM_CHARS = 100  # one word: PostgreSQL refuses tsquery words over 2,047 bytes (a 503 before)
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})  # no room: 507, not 500
SHA256 = re.compile(r"[0-9a-f]{64}")


class Conflict(Exception):
    """A published version re-sent with different bytes (versions are immutable)."""


class Rejected(Exception):
    """An upload that is not a package, or whose meta does not match its URL."""


class QueryTooLong(ValueError):
    """A full-text query longer than any index should be asked (400)."""


def check_query(text: str) -> None:
    """Refuse a query, or a word of it, over the bounds, before either index sees it."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryTooLong(f"the query is {len(text)} characters; at most {MAX_QUERY_CHARS} are searched")
    longest = max(search_terms(text), key=len, default="")
    if len(longest) > MAX_TERM_CHARS:
        raise QueryTooLong(f"a word of the query is {len(longest)} characters; at most {MAX_TERM_CHARS} are searched")


class Unavailable(Exception):
    """The database or the bucket cannot be reached now; the request may be retried (503)."""


class BlobMissing(Exception):
    """An indexed version whose file is gone from the blob store."""


@dataclass(frozen=True)
class Record:
    """One published package version as the index knows it.

    `built_at`, `source_url`, `source_commit` and `embedding_model` are copied from the
    package's meta at publish time (empty when the package does not say).
    """

    registry: str
    name: str
    version: str
    sha256: str
    size: int
    chunks: int
    description: str
    published_at: str
    meta: dict[str, str] = field(default_factory=dict, compare=False)
    built_at: str = ""
    source_url: str = ""
    source_commit: str = ""
    embedding_model: str = ""

    @classmethod
    def build(cls, registry: str, name: str, version: str, sha256: str, size: int, chunks: int,
              description: str, published_at: str, meta: Mapping[str, str]) -> Record:
        """One constructor for every backend: the meta-derived fields come from `meta`."""
        m = dict(meta)
        return cls(registry, name, version, sha256, int(size), int(chunks), description,
                   published_at, m, m.get("built_at", ""), m.get("source_url", ""),
                   m.get("source_commit", ""), m.get("embedding_model", ""))

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Record:
        """From an index row with columns named as the fields (meta as JSON text)."""
        try:
            meta = json.loads(row["meta"])
        except (TypeError, ValueError):
            meta = {}
        if not isinstance(meta, dict):
            meta = {}
        return cls.build(row["registry"], row["name"], row["version"], row["sha256"], row["size"],
                         row["chunks"], row["description"], row["published_at"],
                         {str(k): str(v) for k, v in meta.items()})

    @property
    def id(self) -> PackageId:
        return PackageId(self.registry, self.name, self.version)

    @property
    def section_count(self) -> int:
        return self.chunks

    @property
    def meta_json(self) -> str:
        return json.dumps(self.meta, ensure_ascii=False, sort_keys=True)

    def summary(self) -> dict[str, Any]:
        """A `/search` entry: Context's fields (`size` and SERVER_API's `sizeBytes`) plus ours."""
        entry: dict[str, Any] = {"name": self.name, "registry": self.registry, "version": self.version}
        if self.description:
            entry["description"] = self.description
        entry.update(size=self.size, sizeBytes=self.size, sha256=self.sha256)
        return entry

    def metadata(self) -> dict[str, Any]:
        """`GET /packages/R/N/V`: the package's own meta keys, then the server's facts on top."""
        out: dict[str, Any] = dict(self.meta)
        out.update(self.summary())
        out.update(sectionCount=self.chunks, published_at=self.published_at)
        return out


@dataclass(frozen=True)
class Outcome:
    """What a publish did: `created`, `replaced` (a mutable version moved) or `unchanged`."""

    record: Record
    status: str


def newest_first(records: Iterable[Record]) -> list[Record]:
    return sorted(records, key=lambda r: version_key(r.version), reverse=True)


def group(records: Iterable[Record], key: Callable[[list[Record]], Any]) -> list[list[Record]]:
    """One list per (registry, name), each newest first, ordered by `key`."""
    groups: dict[tuple[str, str], list[Record]] = {}
    for r in records:
        groups.setdefault((r.registry, r.name), []).append(r)
    return sorted((newest_first(g) for g in groups.values()), key=key)


def by_name(g: list[Record]) -> tuple[str, str]:
    return (g[0].name.lower(), g[0].registry)


def ranked_groups(records: list[Record], limit: int) -> list[list[Record]]:
    """Group search hits by package, keeping the order of each package's best hit."""
    rank: dict[tuple[str, str], int] = {}
    for i, r in enumerate(records):
        rank.setdefault((r.registry, r.name), i)
    return group(records, key=lambda g: rank[(g[0].registry, g[0].name)])[:limit]


def search_terms(text: str) -> list[str]:
    """User words as index terms: case- and accent-folded, split like SQLite's unicode61."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text or "")
                     if not unicodedata.combining(c)).lower()
    return re.findall(r"[^\W_]+", folded)
