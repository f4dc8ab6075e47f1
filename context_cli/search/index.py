"""Open installed packages for searching, once per process.

A long-running MCP server searches the same packages many times: the connection, the
decoded vector matrix and the embedding model are kept per file (keyed by path, size and
mtime, so a reinstalled package is reopened).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..document import Chunk
from ..errors import InvalidPackage, ModelUnavailable
from ..package.bm25 import MalformedIndex
from ..package.deadline import DEFAULT_DEADLINE_S, LOAD_DEADLINE_S, PackageTooSlow
from ..package.reader import Package, SectionMap, open_package

if TYPE_CHECKING:
    import numpy as np

    from ..embed.model import Embedder
    from ..store.store import Installed
    from .bm25 import Bm25Index, Posting
    from .dense import VectorIndex
    from .lexical import Postings, QueryTerms
    from .query import Query
    from .sections import SectionTable


# A bad row of our BM25 index met at search time: that package falls back to FTS5.
INDEX_FAULTS = (MalformedIndex, sqlite3.Error, ValueError, IndexError)
# The search of a package that reads the map of all its sections at once (see `sections_of`).
WHOLE_MAP_AFTER = 2


@dataclass
class Searchable:
    """One open package and what searching it needs, kept per process.

    Every read runs under the package's deadline (`deadline()`); a package that runs past
    it raises PackageTooSlow, which the engine reports as that package skipped. A one-time
    load (vectors, BM25 index, the whole section map) that runs past its limit is not tried
    again: the package is searched without it, so it never stalls a search twice.
    """

    pkg: Package
    lock: threading.Lock = field(default_factory=threading.Lock)
    _vectors: VectorIndex | None = None
    _model: Embedder | None = None
    _dense_checked: bool = False
    note: str | None = None  # why this package is searched lexically only
    _postings: Postings | None = None
    _bm25: Bm25Index | None = None
    _bm25_checked: bool = False
    _sections: SectionMap = field(default_factory=lambda: SectionMap({}, {}, {}))
    _absent: set[int] = field(default_factory=set)
    _section_reads: int = 0  # reads of some sections' map; the whole map is read at WHOLE_MAP_AFTER
    _whole_map: bool = False
    _title_tokens: dict[str, frozenset[str]] = field(default_factory=dict)
    _heading_tokens: dict[int, tuple[frozenset[str], bool]] = field(default_factory=dict)
    _page_tokens: dict[str, int] = field(default_factory=dict)
    _table: SectionTable | None = None
    _table_made: bool = False

    def deadline(self, seconds: float = DEFAULT_DEADLINE_S) -> AbstractContextManager[None]:
        """`with s.deadline(seconds):` every query on this package in the block aborts once
        `seconds` have passed, raising PackageTooSlow (a ContextError naming the package)."""
        return self.pkg.deadline(seconds)

    @property
    def bm25(self) -> Bm25Index | None:
        """The package's own BM25 index, or None (searched through FTS5). Call under `lock`."""
        if not self._bm25_checked:
            if self.pkg.has_bm25:
                from .bm25 import Bm25Index
                from .lexical import WEIGHTS

                try:
                    with self.pkg.deadline(LOAD_DEADLINE_S):
                        index = Bm25Index.load(self.pkg.db, WEIGHTS, self.pkg.has_bm25_phrases)
                    self._bm25 = index if index.n >= 1 else None
                except PackageTooSlow:
                    raise
                except (*INDEX_FAULTS, InvalidPackage):
                    self._bm25 = None
            self._bm25_checked = True
        return self._bm25

    @property
    def postings(self) -> Postings | Bm25Index:
        index = self.bm25
        if index is not None:
            return index
        if self._postings is None:
            from .lexical import Postings

            with self.pkg.deadline():
                self._postings = Postings(self.pkg.db)
        return self._postings

    def lexical(self, query: Query, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """BM25 top `limit` as (chunk ids, scores), best first (our index when the package has
        a sound one, else FTS5). Call under `lock`."""
        from .lexical import lexical

        with self.pkg.deadline():
            index = self.bm25
            if index is not None:
                try:
                    return lexical(self.pkg.db, query, limit, index)
                except INDEX_FAULTS:
                    self._index_failed()
            return lexical(self.pkg.db, query, limit)

    def bm25_units(self, query: Query, with_phrases: bool = True) -> list[Posting | None] | None:
        """Our index's postings of the query's terms, then of its phrases (None: the package
        is searched through FTS5), for scoring with other packages' (`bm25.score_together`).
        Call under `lock`."""
        with self.pkg.deadline():
            index = self.bm25
            if index is None:
                return None
            try:
                return index.units(query, with_phrases)
            except INDEX_FAULTS:
                self._index_failed()
                return None

    def query_terms(self, query: Query) -> QueryTerms:
        """The verdict's term statistics, from the same data as `lexical`. Call under `lock`."""
        from .lexical import query_terms

        with self.pkg.deadline():
            try:
                return query_terms(self.postings, query)
            except INDEX_FAULTS:
                if self._bm25 is None:
                    raise
                self._index_failed()
                return query_terms(self.postings, query)

    def _index_failed(self) -> None:
        """A bad row of our index was met: FTS5 from now on, unless the deadline caused it."""
        if self.pkg.timed_out:
            raise PackageTooSlow(f"{self.label}: too slow to search; skipped")
        self._bm25 = None

    def sections(self, ids: list[int]) -> list[tuple[int, Chunk]]:
        """(chunk id, section) for these ids, in id order. Call under `lock`."""
        return self.pkg.chunks(ids)

    def sections_of(self, cids: Iterable[int]) -> SectionMap:
        """The page, own title and text length of at least these sections (unknown ids are
        absent): each read once per process. A first search reads the hundred sections it
        ranks rather than the whole table (a cold `context query` searches once); a package
        searched again is being served, and its second read is of the whole map, in one scan,
        so that new questions read no section again. Call under `lock`."""
        known, absent = self._sections, self._absent
        if self._whole_map:
            return known
        todo = [cid for cid in cids if cid not in known.pages and cid not in absent]
        if todo:
            self._section_reads += 1
            whole = self._section_reads == WHOLE_MAP_AFTER  # tried once: a package too slow for it keeps to parts
            found = self.pkg.section_map(None if whole else todo)
            known.pages.update(found.pages)
            known.titles.update(found.titles)
            known.chars.update(found.chars)
            absent.update(cid for cid in todo if cid not in found.pages)  # a vector or index row without a section
            self._whole_map = whole
            if whole:
                self._keep_served()
        return known

    def _keep_served(self) -> None:
        """A package being served keeps, once, what new questions would otherwise read row by
        row: every page's tokens (for savedPercent) and its BM25 postings. Either one too slow
        or damaged is left out, and read as before."""
        try:
            self._page_tokens.update(self.pkg.tokens_per_page(None))
        except InvalidPackage:  # (too slow)
            pass
        if self._bm25 is not None:
            try:
                with self.pkg.deadline(LOAD_DEADLINE_S):
                    self._bm25.keep_postings()
            except (*INDEX_FAULTS, InvalidPackage):
                pass

    def section_table(self) -> SectionTable | None:
        """The whole section map as arrays (`sections.SectionTable`), once it is read; None
        before, or when the package's chunk ids are too sparse for it. Call under `lock`."""
        if self._whole_map and not self._table_made:
            from .sections import SectionTable

            known = self._sections
            self._table = SectionTable.of(known.pages, known.chars, self.title_tokens)
            self._table_made = True
        return self._table

    def title_tokens(self, pages: Iterable[tuple[str, str]]) -> Mapping[str, frozenset[str]]:
        """Index tokens of pages' titles and path words: a mapping from path that has at least
        these (path, title) pages, each computed once per page (those new to it stemmed
        together). Call under `lock`."""
        known = self._title_tokens
        todo = {path: title for path, title in pages if path not in known}
        if todo:
            from ..package.bm25 import stemmer
            from .pages import title_words

            words = {path: title_words(title, path) for path, title in todo.items()}
            stems = stemmer().tokens(w for ws in words.values() for w in ws)
            for path, ws in words.items():
                known[path] = frozenset(t for w in ws for t in stems[w])
        return known

    def heading_tokens(self, cids: Iterable[int], need: frozenset[str]) -> Mapping[int, tuple[frozenset[str], bool]]:
        """Index tokens of sections' own headings (a breadcrumb's last part, without a "(part
        n)" suffix) and whether each holds an identifier (`from_queryset`): a mapping that has
        at least those of `cids` whose heading may hold every token of `need`, each computed
        once per section (those new to it stemmed together). A section left out cannot: its
        title lacks one of them, as the BM25 index says without reading the title (without an
        index, every section is computed). Call under `lock`."""
        known = self._heading_tokens
        todo = [cid for cid in cids if cid not in known] if need else []
        if todo:
            todo = self.in_titles(need, todo)
        if todo:
            from ..package.bm25 import stemmer
            from .pages import heading_words

            titles = self.sections_of(todo).titles
            words = {cid: heading_words(titles.get(cid, "")) for cid in todo}
            stems = stemmer().tokens(w for ws in words.values() for w in ws)
            for cid, ws in words.items():
                known[cid] = (frozenset(t for w in ws for t in stems[w]), any("_" in w for w in ws))
        return known

    def in_titles(self, tokens: frozenset[str], cids: list[int]) -> list[int]:
        """Those of `cids` whose title may hold all these index tokens (all of them, without an
        index): the only ones whose heading can. Call under `lock`."""
        index = self._bm25
        if index is not None:
            known = index.in_titles_known(tokens, cids)  # (the search has just looked the tokens up: no query)
            if known is not None:
                return known
        with self.pkg.deadline():
            index = self.bm25
            if index is None:
                return cids
            try:
                return index.in_titles(tokens, cids)
            except INDEX_FAULTS:
                self._index_failed()
                return cids

    def page_tokens(self, doc_paths: list[str]) -> int:
        """Tokens of these pages read whole (for savedPercent), each page's total read once
        per process (all of them at once for a package being served: `_keep_served`). Call
        under `lock`."""
        totals = self._page_tokens
        todo = {p for p in doc_paths if p not in totals}
        if todo:
            found = self.pkg.tokens_per_page(todo)
            totals.update((p, found.get(p, 0)) for p in todo)
        return sum(totals[p] for p in set(doc_paths))

    @property
    def label(self) -> str:
        return self.pkg.label

    @property
    def vector_rows(self) -> int | None:
        """How many vectors a search multiplies (0: searched lexically; None: not loaded yet)."""
        if not self._dense_checked:
            return None
        return len(self._vectors.ids) if self._vectors is not None and self._model is not None else 0

    def dense(self) -> tuple[Embedder, VectorIndex] | None:
        """The package's model and vectors, or None (with `note` saying why)."""
        if not self._dense_checked:
            try:
                self._load_dense()
            except PackageTooSlow:  # tried once: that search skips the package, later ones search it lexically
                self.note = "its vectors took too long to load; searched lexically"
                raise
            finally:
                self._dense_checked = True
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
        except (ModelUnavailable, OSError, ValueError) as e:
            model, self.note = None, f"searched lexically only: embedding model {name!r} unavailable ({e})"
        if model is None:
            self.note = self.note or (f"searched lexically only: embedding model {name!r} is not on this machine "
                                      "(set CONTEXT_EMBED_MODEL to its folder or hub id)")
            return
        from .dense import VectorIndex

        try:
            with self.lock:
                index = VectorIndex.load(self.pkg)
        except PackageTooSlow:
            raise
        except InvalidPackage as e:
            self.note = f"vectors unusable ({e}); searched lexically"
            return
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
