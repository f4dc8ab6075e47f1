"""Open installed packages for searching, once per process.

A long-running MCP server searches the same packages many times: the connection, the
decoded vector matrix and the embedding model are kept per file (keyed by path, size and
mtime, so a reinstalled package is reopened).
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ModelUnavailable
from ..package.reader import Package, open_package

if TYPE_CHECKING:
    from ..embed.model import Embedder
    from ..store.store import Installed
    from .bm25 import Bm25Index
    from .dense import VectorIndex
    from .lexical import Postings, TermStats


@dataclass
class Searchable:
    pkg: Package
    lock: threading.Lock = field(default_factory=threading.Lock)
    _vectors: VectorIndex | None = None
    _model: Embedder | None = None
    _dense_checked: bool = False
    note: str | None = None  # why this package is searched lexically only
    _postings: Postings | None = None
    _bm25: Bm25Index | None = None
    _bm25_checked: bool = False

    @property
    def bm25(self) -> Bm25Index | None:
        """The package's own BM25 index, or None (searched through FTS5). Call under `lock`."""
        if not self._bm25_checked:
            self._bm25_checked = True
            if self.pkg.has_bm25:
                from ..package.bm25 import MalformedIndex
                from .bm25 import Bm25Index
                from .lexical import WEIGHTS

                try:
                    index = Bm25Index.load(self.pkg.db, WEIGHTS)
                    self._bm25 = index if index.n >= 1 else None
                except (MalformedIndex, sqlite3.Error, ValueError):
                    self._bm25 = None
        return self._bm25

    @property
    def postings(self) -> Postings | Bm25Index:
        index = self.bm25
        if index is not None:
            return index
        if self._postings is None:
            from .lexical import Postings

            self._postings = Postings(self.pkg.db)
        return self._postings

    def lexical(self, query: str, limit: int) -> list[tuple[int, float]]:
        """BM25 top `limit` (our index when the package has a sound one, else FTS5). Call under `lock`."""
        from ..package.bm25 import MalformedIndex
        from .lexical import lexical

        index = self.bm25
        if index is not None:
            try:
                return lexical(self.pkg.db, query, limit, index)
            except (MalformedIndex, sqlite3.Error, ValueError, IndexError):
                self._bm25 = None  # a bad row found late: this package falls back to FTS5
        return lexical(self.pkg.db, query, limit)

    def term_stats(self, query: str, candidates: list[int]) -> TermStats:
        """The verdict's term statistics, from the same data as `lexical`. Call under `lock`."""
        from ..package.bm25 import MalformedIndex
        from .lexical import term_stats

        try:
            return term_stats(self.postings, query, candidates)
        except (MalformedIndex, sqlite3.Error, ValueError, IndexError):
            if self._bm25 is None:
                raise
            self._bm25 = None
            return term_stats(self.postings, query, candidates)

    @property
    def label(self) -> str:
        return self.pkg.label

    def dense(self) -> tuple[Embedder, VectorIndex] | None:
        """The package's model and vectors, or None (with `note` saying why)."""
        if not self._dense_checked:
            self._dense_checked = True
            self._load_dense()
        if self._model is None or self._vectors is None:
            return None
        return self._model, self._vectors

    def _load_dense(self) -> None:
        meta = self.pkg.meta
        if not self.pkg.has_vectors:
            self.note = "no vectors in this package; searched lexically"
            return
        name = meta.get("embedding_model", "")
        try:
            from ..embed.model import find_model

            model = find_model(name, meta.get("embedding_fingerprint"))
        except (ModelUnavailable, ImportError, OSError, ValueError) as e:
            model, self.note = None, f"embedding model {name!r} unavailable ({e}); searched lexically"
        if model is None:
            self.note = self.note or f"embedding model {name!r} is not available here; searched lexically"
            return
        from .dense import VectorIndex

        with self.lock:
            index = VectorIndex.load(self.pkg.db, int(meta["embedding_dim"]), meta.get("embedding_dtype", "int8"))
        if index.matrix.shape[1] != model.dim:
            self.note = f"vectors do not match model {name!r}; searched lexically"
            return
        self._model, self._vectors = model, index


_CACHE: dict[Path, tuple[tuple[int, int], Searchable]] = {}
_CACHE_LOCK = threading.Lock()


def open_searchable(installed: Installed) -> Searchable:
    path = installed.path
    st = path.stat()
    key = (st.st_size, st.st_mtime_ns)
    with _CACHE_LOCK:
        hit = _CACHE.get(path)
        if hit and hit[0] == key:
            return hit[1]
        pkg = open_package(path, registry=installed.id.registry)
        s = Searchable(pkg)  # a replaced entry is left to the GC: another thread may hold it
        _CACHE[path] = (key, s)
        return s


def clear_cache() -> None:
    with _CACHE_LOCK:
        for _, s in _CACHE.values():
            s.pkg.close()
        _CACHE.clear()
