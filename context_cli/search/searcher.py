"""Open installed packages for searching, once per process (`open_searcher`).

A long-running MCP server searches the same packages many times: the connection, the
decoded vector matrix and the embedding model are kept per file (keyed by path, size and
mtime, so a reinstalled package is reopened). A server also makes each package warm
(`PackageSearcher.warm`): what new questions would otherwise read row by row is read once.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from ..document import Chunk
from ..errors import InvalidPackage, ModelUnavailable
from ..package.bm25 import MalformedIndex
from ..package.deadline import DEFAULT_DEADLINE_S, LOAD_DEADLINE_S, PackageTooSlow
from ..package.reader import Package, SectionMap, open_package

if TYPE_CHECKING:
    import numpy as np

    from ..embed.model import Embedder
    from ..embed.quality import TextEmbedder
    from ..store.store import Installed
    from .bm25 import Bm25Index, Posting
    from .closeness import PageSpans
    from .dense import VectorIndex
    from .lexical import LexicalHits, Postings
    from .query import Query
    from .sections import SectionTable
    from .spelling import Vocabulary


# A bad row of our BM25 index met at search time: that package falls back to FTS5.
INDEX_FAULTS = (MalformedIndex, sqlite3.Error, ValueError, IndexError)
T = TypeVar("T")


class PackageSearcher:
    """One open package and what searching it needs, kept per process. It takes its own lock
    around what it reads and keeps (a server searches from several threads).

    Every read runs under the package's deadline (`deadline()`); a package that runs past
    it raises PackageTooSlow, which the engine reports as that package skipped. A one-time
    load (vectors, BM25 index, `warm`) that runs past its limit is not tried again: the
    package is searched without it, so it never stalls a search twice.
    """

    def __init__(self, pkg: Package) -> None:
        self.pkg = pkg
        self.lock = threading.RLock()
        self.note: str | None = None  # why this package is searched lexically only
        self.quality_note: str | None = None  # why its quality vectors are not used (it carries them)
        self._vectors: VectorIndex | None = None
        self._model: Embedder | None = None
        self._dense_checked = False
        self._quality: tuple[TextEmbedder, VectorIndex] | Literal[False] | None = None  # (None: not loaded yet)
        self._postings: Postings | None = None
        self._bm25: Bm25Index | None = None
        self._bm25_checked = False
        self._sections = SectionMap({}, {}, {})
        self._absent: set[int] = set()
        self._warm_tried = False
        self._table: SectionTable | None = None  # every section's, once warm
        self._title_tokens: dict[str, frozenset[str]] = {}
        self._heading_tokens: dict[int, tuple[frozenset[str], bool]] = {}
        self._page_tokens: dict[str, int] = {}
        self._page_kinds: Mapping[str, str] | None = None
        self._mean_tokens: float | None = None
        self._spans: PageSpans | Literal[False] | None = None  # (None: not read yet; False: none)
        self._vocabulary: dict[str, Vocabulary] = {}  # by first letter

    @property
    def label(self) -> str:
        return self.pkg.label

    @property
    def name(self) -> str:
        return self.pkg.id.name

    @property
    def is_warm(self) -> bool:
        """Has `warm` loaded the whole section map (a search then reads no section map)?"""
        return self._table is not None

    def deadline(self, seconds: float = DEFAULT_DEADLINE_S) -> AbstractContextManager[None]:
        """`with s.deadline(seconds):` every query on this package in the block aborts once
        `seconds` have passed, raising PackageTooSlow (a ContextError naming the package)."""
        return self.pkg.deadline(seconds)

    def warm(self) -> None:
        """Read, once, what new questions would otherwise read row by row: the map of every
        section (as one table), every page's token total (for savedPercent) and the BM25
        postings (`Bm25Index.preload`). For a package that is served: a cold search reads only
        the hundred sections it ranks. The section map too slow or damaged raises (that
        search skips the package) and is not tried again; the totals or postings too slow or
        damaged are left out, and read as before."""
        if self._warm_tried:  # (every search of a served package asks)
            return
        with self.lock:
            if self._warm_tried:
                return
            self._warm_tried = True
            found = self.pkg.section_map(None)
            known = self._sections
            known.pages.update(found.pages)
            known.titles.update(found.titles)
            known.chars.update(found.chars)
            from .sections import SectionTable

            self._table = SectionTable.of(known.pages, known.chars, self._titles_tokens)
            try:
                self._page_tokens.update(self.pkg.tokens_per_page(None))
            except InvalidPackage:  # (too slow)
                pass
            try:
                index = self.bm25
                if index is not None:
                    with self.pkg.deadline(LOAD_DEADLINE_S):
                        index.preload()
            except (*INDEX_FAULTS, InvalidPackage):
                pass

    # --- lexical ---------------------------------------------------------------------------

    @property
    def bm25(self) -> Bm25Index | None:
        """The package's own BM25 index, or None (searched through FTS5)."""
        with self.lock:
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

    def bm25_postings(self, query: Query, with_phrases: bool = True) -> tuple[int, list[Posting | None]] | None:
        """The package's section count and our index's postings of the query's terms, then of
        its phrases, for scoring with other packages' (`bm25.score_packages`); None: the
        package is searched through FTS5 (`fts_hits`)."""
        with self.lock, self.pkg.deadline():
            index = self.bm25
            if index is None:
                return None
            try:
                return index.n, index.units(query, with_phrases)
            except INDEX_FAULTS:
                self._index_failed()
                return None

    def fts_hits(self, query: Query, limit: int) -> LexicalHits:
        """FTS5's BM25 top `limit` (none for 0) and the query's term statistics, for a package
        without a sound index of ours."""
        from .lexical import lexical, term_statistics

        with self.lock:
            with self.pkg.deadline():
                top = lexical(self.pkg.db, query, limit)
            with self.pkg.deadline():
                return term_statistics(self.postings, query, top)

    @property
    def postings(self) -> Postings | Bm25Index:
        """Which sections hold each term: our index, else FTS5's (`lexical.Postings`)."""
        with self.lock:
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
        a sound one, else FTS5)."""
        from .lexical import lexical

        with self.lock, self.pkg.deadline():
            index = self.bm25
            if index is not None:
                try:
                    return lexical(self.pkg.db, query, limit, index)
                except INDEX_FAULTS:
                    self._index_failed()
            return lexical(self.pkg.db, query, limit)

    def query_terms(self, query: Query) -> LexicalHits:
        """The query's term statistics (no hits), from the same data as `lexical`."""
        import numpy as np

        from .lexical import term_statistics

        none = (np.zeros(0, dtype=np.int64), np.zeros(0))
        with self.lock, self.pkg.deadline():
            try:
                return term_statistics(self.postings, query, none)
            except INDEX_FAULTS:
                if self._bm25 is None:
                    raise
                self._index_failed()
                return term_statistics(self.postings, query, none)

    def _index_failed(self) -> None:
        """A bad row of our index was met: FTS5 from now on, unless the deadline caused it."""
        if self.pkg.timed_out:
            raise PackageTooSlow(f"{self.label}: too slow to search; skipped")
        self._bm25 = None

    # --- sections ----------------------------------------------------------------------------

    def section_table(self, chunk_ids: np.ndarray) -> SectionTable:
        """A table of at least these sections (`sections.SectionTable`): every section's once
        warm, else these, read from the section map (each read once per process)."""
        with self.lock:
            if self._table is not None:
                return self._table
            from .sections import SectionTable

            cids = chunk_ids.tolist()
            known = self._sections_of(cids)
            pages = known.pages
            return SectionTable.of({cid: pages[cid] for cid in cids if cid in pages}, known.chars, self._titles_tokens)

    def _sections_of(self, cids: Iterable[int]) -> SectionMap:
        """The page, own title and text length of at least these sections (unknown ids are
        absent): each read once per process, all of them once warm."""
        known, absent = self._sections, self._absent
        if self._table is not None:
            return known
        todo = [cid for cid in cids if cid not in known.pages and cid not in absent]
        if todo:
            found = self.pkg.section_map(todo)
            known.pages.update(found.pages)
            known.titles.update(found.titles)
            known.chars.update(found.chars)
            absent.update(cid for cid in todo if cid not in found.pages)  # a vector or index row without a section
        return known

    def _titles_tokens(self, pages: Iterable[tuple[str, str]]) -> Mapping[str, frozenset[str]]:
        """Index tokens of pages' titles and path words: a mapping from path that has at least
        these (path, title) pages, each computed once per page (those new to it stemmed
        together)."""
        known = self._title_tokens
        todo = {path: title for path, title in pages if path not in known}
        if todo:
            from ..package.bm25 import stemmer
            from .evidence import title_words

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
        index, every section is computed)."""
        with self.lock:
            known = self._heading_tokens
            todo = [cid for cid in cids if cid not in known] if need else []
            if todo:
                todo = self.in_titles(need, todo)
            if todo:
                from ..package.bm25 import stemmer
                from .evidence import heading_words

                titles = self._sections_of(todo).titles
                words = {cid: heading_words(titles.get(cid, "")) for cid in todo}
                stems = stemmer().tokens(w for ws in words.values() for w in ws)
                for cid, ws in words.items():
                    known[cid] = (frozenset(t for w in ws for t in stems[w]), any("_" in w for w in ws))
            return known

    def in_titles(self, tokens: frozenset[str], cids: list[int]) -> list[int]:
        """Those of `cids` whose title may hold all these index tokens (all of them, without an
        index): the only ones whose heading can."""
        with self.lock:
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

    def page_kinds(self) -> Mapping[str, str]:
        """Path -> kind of each page that is not a guide (release notes, API reference), read
        once per process; none for a package without our pages table, or one that cannot be
        read (its pages are then all weighed as guides)."""
        if self._page_kinds is None:
            none: dict[str, str] = {}
            self._page_kinds = self._read_or(
                lambda: {p.doc_path: p.kind for p in self.pkg.pages() if p.kind != "guide"}, none)
        return self._page_kinds

    def vocabulary(self, first: str) -> Vocabulary | None:
        """The package's terms that start with the letter `first` and their section counts,
        for spelling corrections (`spelling.Vocabulary`: a correction keeps the first letter),
        read once per letter and process from our BM25 index's terms (0.9 ms and 433 terms for
        Django's "p"; all 6,792 would take 20 ms); None without our index."""
        with self.lock:
            if first not in self._vocabulary and self.bm25 is not None:
                from .spelling import Vocabulary

                with self.pkg.deadline():
                    rows = self.pkg.db.execute("SELECT term, df FROM bm25_terms WHERE term >= ? AND term < ?",
                                               (first, chr(ord(first) + 1))).fetchall()
                self._vocabulary[first] = Vocabulary.of((t, df) for t, df in rows if isinstance(t, str)
                                                        and isinstance(df, int))
            return self._vocabulary.get(first)

    def page_spans(self) -> PageSpans | None:
        """Each page's run of chunk ids (`closeness.PageSpans`), read once per process from our
        packages' covering index, one row a page; None when the package cannot say, or a
        page's sections are not one run of ids (its pages then have no closeness)."""
        if self._spans is None:
            self._spans = self._read_or(self._read_spans, False)
        return self._spans or None

    def _read_spans(self) -> PageSpans | Literal[False]:
        from .closeness import PageSpans

        with self.pkg.deadline():
            rows = self.pkg.db.execute("SELECT doc_path, min(id), max(id), count(*) FROM chunks "
                                       "GROUP BY doc_path").fetchall()
        return PageSpans.of(rows) or False

    def mean_section_tokens(self) -> float | None:
        """Tokens of the package's mean section, read once per process (our packages' covering
        index answers it without reading a section; 0.2 ms on Django's 2,941); None when the
        package cannot say (the package prior then leaves its vocabulary out)."""
        if self._mean_tokens is None:
            self._mean_tokens = self._read_or(self._read_mean_tokens, 0.0)
        return self._mean_tokens or None

    def _read_mean_tokens(self) -> float:
        with self.pkg.deadline():
            total, count = self.pkg.db.execute("SELECT total(tokens), count(*) FROM chunks").fetchone()
        mean = float(total) / count if count else 0.0
        return mean if 0 < mean < math.inf else 0.0

    def _read_or(self, read: Callable[[], T], fallback: T) -> T:
        """`read()` under the lock, or `fallback` where the package cannot answer it (a damaged
        or foreign one); a package too slow still ends this search (`run.guard`)."""
        with self.lock:
            try:
                return read()
            except PackageTooSlow:
                raise
            except (InvalidPackage, sqlite3.Error):
                return fallback

    def texts(self, ids: list[int]) -> list[tuple[int, Chunk]]:
        """(chunk id, section) for these ids, in id order."""
        with self.lock:
            return self.pkg.chunks(ids)

    def page_tokens(self, doc_paths: list[str]) -> int:
        """Tokens of these pages read whole (for savedPercent), each page's total read once
        per process (all of them at once for a warm package)."""
        with self.lock:
            totals = self._page_tokens
            todo = {p for p in doc_paths if p not in totals}
            if todo:
                found = self.pkg.tokens_per_page(todo)
                totals.update((p, found.get(p, 0)) for p in todo)
            return sum(totals[p] for p in set(doc_paths))

    # --- vectors -----------------------------------------------------------------------------

    @property
    def vector_rows(self) -> int | None:
        """How many vectors a search multiplies (0: searched lexically; None: not loaded yet)."""
        if not self._dense_checked:
            return None
        return len(self._vectors.ids) if self._vectors is not None and self._model is not None else 0

    def dense(self) -> tuple[Embedder, VectorIndex] | None:
        """The package's model and vectors, or None (with `note` saying why)."""
        if not self._dense_checked:
            with self.lock:  # one load: a second thread waits for it, not loading its own copy
                if not self._dense_checked:
                    try:
                        self._load_dense()
                    except PackageTooSlow:  # tried once: that search skips the package, later ones lexical
                        self.note = "its vectors took too long to load; searched lexically"
                        raise
                    finally:
                        self._dense_checked = True
        if self._model is None or self._vectors is None:
            return None
        return self._model, self._vectors

    def quality(self) -> tuple[TextEmbedder, VectorIndex] | None:
        """The package's quality set (docs/quality-vectors.md) and the model that embeds
        queries for it, when it carries one this machine can use; else None, with
        `quality_note` saying why when it carries one. Loaded once: onnxruntime is imported
        only for a package that carries the set."""
        if self._quality is None:
            with self.lock:
                if self._quality is None:
                    self._quality = self._load_quality() or False
        return self._quality or None

    def use_static(self, why: str) -> None:
        """Its quality set failed a query (an endpoint that stopped answering): the static
        vectors alone from now on, with `quality_note` saying why."""
        with self.lock:
            self.quality_note = f"{why}; searched with the static vectors"
            self._quality = False

    def _load_quality(self) -> tuple[TextEmbedder, VectorIndex] | None:
        pkg = self.pkg
        if not (pkg.has_quality or any(k.startswith("quality_") for k in pkg.meta)):
            return None
        from ..package.quality import load_quality
        from .dense import VectorIndex

        found, self.quality_note = load_quality(pkg)
        return (found.model, VectorIndex.of(found.ids, found.matrix)) if found is not None else None

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


_CACHE: dict[Path, tuple[tuple[int, int], PackageSearcher]] = {}
_CACHE_LOCK = threading.Lock()


def open_searcher(installed: Installed) -> PackageSearcher:
    """The package's searcher, opened once per process (again when its file has changed)."""
    path = installed.path
    st = path.stat()
    key = (st.st_size, st.st_mtime_ns)
    with _CACHE_LOCK:
        hit = _CACHE.get(path)
        if hit and hit[0] == key:
            return hit[1]
        pkg = open_package(path, registry=installed.id.registry)
        s = PackageSearcher(pkg)  # a replaced entry is left to the GC: another thread may hold it
        _CACHE[path] = (key, s)
        return s


def clear_cache() -> None:
    """Close every cached package, each once no thread is reading it: every read of a
    searcher's package holds its lock, and closing a connection while another thread's
    statement runs crashes CPython 3.11 (that thread's next call on the closed connection
    then fails with InvalidPackage instead)."""
    with _CACHE_LOCK:
        searchers = [s for _, s in _CACHE.values()]
        _CACHE.clear()
    for s in searchers:
        with s.lock:
            s.pkg.close()
