"""Hybrid search over one or many installed packages, answered as a context pack.

Per package: BM25 (lexical) and cosine over the package's own vectors (dense), fused by
a measured score mix (`joint.fuse`); packages without usable vectors are searched lexically
and the answer says so. Candidates from all packages are then ranked together, judged, and
packed into the token budget. Each step runs once for all the packages searched, on arrays
(`joint.py`); this module gathers what each package says and makes the answer. The answer
is typed (`answer.Answer`); docs/search.md describes every step and the JSON shape.
"""

from __future__ import annotations

import functools
import math
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..document import Chunk
from ..errors import ContextError, InvalidPackage
from .answer import Answer, Hit, Json, Page
from .index import Searchable, open_searchable
from .joint import Evidence, Found, Fused, PackageEvidence, Ranked, fuse, order
from .options import DEFAULT_BUDGET, DEFAULT_LIMIT, DEFAULT_PARAMS, MAX_QUERY_CHARS, RankingParams, SearchOptions
from .pack import Candidate, choose, pack
from .pages import heading_matcher, title_matcher
from .query import STOPWORDS, EmptyQuery, Query, check_text
from .verdict import Signals, judge, overall

if TYPE_CHECKING:
    import numpy as np

    from ..embed.model import Embedder
    from ..store.store import Installed
    from .bm25 import Posting
    from .dense import Spread, VectorIndex
    from .lexical import QueryTerms
    from .sections import Shelf

__all__ = ["DEFAULT_BUDGET", "DEFAULT_LIMIT", "MAX_QUERY_CHARS", "EmptyQuery", "RankingParams", "SearchOptions",
           "answer", "check_text", "rank", "search"]
# What one package's search may fail with: its own fault, answered by skipping it.
PACKAGE_FAULTS = (InvalidPackage, sqlite3.Error, UnicodeDecodeError)
_NOWHERE = ("", "")
_NO_TOKENS: frozenset[str] = frozenset()


def answer(text: str, packages: Iterable[Installed], opts: SearchOptions | None = None) -> Answer:
    """Search `packages` for `text` and pack the best sections into the budget."""
    opts = opts or SearchOptions()
    query = Query.parse(text)
    if opts.budget < 1 or opts.limit < 1:
        raise ContextError("budget and limit must be positive")
    searchables = [open_searchable(p) for p in packages]
    if not searchables:
        raise ContextError("no packages to search; install one with `context add` or `context install`")
    scored, run = _ranking(query, searchables, opts.mode, opts.params)
    while True:
        try:
            chosen = _pack(query, scored, opts)
            break
        except _Unreadable as e:  # that package is skipped, as if it had failed while ranking
            run.skip(e.searchable, e.error)
            scored = scored.without(e.searchable)
    return _answer(query, searchables, chosen, opts, run.notes, run.modes)


def search(text: str, packages: Iterable[Installed], opts: SearchOptions | None = None) -> Json:
    """The answer in its JSON form (what `context search --format json` prints)."""
    return answer(text, packages, opts).to_dict()


def rank(text: str, searchables: list[Searchable], mode: str = "hybrid", params: RankingParams = DEFAULT_PARAMS
         ) -> tuple[list[Candidate], list[str], dict[str, str]]:
    """All judged candidates across packages, best first, plus notes and per-package modes
    (the text searched as it is: benchmarks and tests ask this)."""
    query = Query.of(text)
    scored, run = _ranking(query, searchables, mode, params)
    while True:
        try:
            return _read(query, scored.all()), run.notes, run.modes
        except _Unreadable as e:
            run.skip(e.searchable, e.error)
            scored = scored.without(e.searchable)


@dataclass(slots=True)
class _Scored:
    """A ranked section before its text is read (`_read_in_order` reads what is needed)."""

    s: Searchable
    chunk_id: int
    doc_path: str
    score: float
    coverage: float
    z: float | None
    missing: list[str]
    chars: int  # length of its text, to plan the pack before reading it


class _Unreadable(ContextError):
    """A package failed while its sections were read for the answer (caught in this module)."""

    def __init__(self, searchable: Searchable, error: Exception) -> None:
        super().__init__(f"{searchable.label}: {error}")
        self.searchable, self.error = searchable, error


@dataclass
class _Run:
    """What one search notes on the way: per-package modes, notes, and the packages skipped."""

    searchables: list[Searchable]
    notes: list[str] = field(default_factory=list)
    modes: dict[str, str] = field(default_factory=dict)
    skipped: list[InvalidPackage] = field(default_factory=list)

    def skip(self, s: Searchable, e: Exception) -> None:
        """Note a package that failed as skipped; when every one has failed, the first error is the answer."""
        problem = _as_package_error(s.label, e)
        self.skipped.append(problem)
        self.modes[s.label] = "skipped"
        self.notes.append(f"{problem}; skipped" if "skipped" not in str(problem) else str(problem))
        if len(self.skipped) == len(self.searchables):
            raise self.skipped[0]


def _ranking(query: Query, searchables: list[Searchable], mode: str, params: RankingParams) -> tuple[_Ranking, _Run]:
    """Every package's best sections, scored and ranked together, before any text is read."""
    run = _Run(searchables)
    if not query.terms:
        run.notes.append("the query has no searchable words")
        return _NOTHING, run
    # With many vectors the cosines run in a helper thread (a matrix product releases the GIL)
    # while this one ranks each package by BM25: on a second core they cost no time.
    cosines = _cosines_of(searchables, query, mode, params)
    lexical = _score_lexically([_lexical(s, query, mode, params.pool) for s in searchables], mode, params.pool)
    per_package = params.judged_per_package(len(searchables))
    dense_all = cosines()
    prior = _package_prior(dense_all, params)
    # Each query against a package runs under its own deadline (2 s; one-time loads 10 s), and
    # one bad or pathological package never breaks the others' answer: it is skipped.
    faults: dict[int, Exception] = {}
    inputs: list[_Input] = []
    for i, (s, lex, dense) in enumerate(zip(searchables, lexical, dense_all, strict=True)):
        if isinstance(lex, Exception) or isinstance(dense, Exception):
            faults[i] = lex if isinstance(lex, Exception) else dense  # type: ignore[assignment]
        else:
            inputs.append(_Input(i, s, query.without_library(s.pkg.id.name), lex[1], dense))
    fused = fuse([_found(lexical[x.at], x.dense, params.pool) for x in inputs],  # type: ignore[arg-type]
                 params.page_pool * per_package, params)
    evidence, failed = _evidence(inputs, query, fused, params)
    faults.update((inputs[p].at, e) for p, e in failed.items())
    reached = {x.at for x in inputs}  # (those whose BM25 and cosines came back)
    for i, s in enumerate(searchables):  # notes in the packages' order, as each was searched
        if i in faults and i not in reached:
            run.skip(s, faults[i])
            continue
        dense = dense_all[i]
        if dense is not None:
            run.modes[s.label] = "hybrid" if mode != "dense" else "dense"
        else:
            run.modes[s.label] = "lexical"
            if s.note and mode != "lexical":
                run.notes.append(f"{s.label}: {s.note}")
        if i in faults:
            run.skip(s, faults[i])
    several = len(searchables) > 1
    ranked = order(fused, evidence, per_package, [prior[x.at] for x in inputs] if several else None, params)
    return _Ranking.of(inputs, fused, ranked), run


@dataclass(slots=True)
class _Input:
    """One package searched for the question: its place in the search, the query's words
    that choose among its pages, their statistics in it and its cosines."""

    at: int
    s: Searchable
    query: Query
    terms: QueryTerms
    dense: _ZScores | None


def _found(lexical: tuple[tuple[np.ndarray, np.ndarray], QueryTerms], dense: _ZScores | None, pool: int) -> Found:
    """The package's two rankings for the fusion (no cosines: searched lexically)."""
    (lex_ids, lex_scores), _ = lexical
    dense_ids, dense_z = dense.top(pool) if dense is not None else _no_hits()
    return Found(lex_ids, lex_scores, dense_ids, dense_z)


def _evidence(inputs: list[_Input], query: Query, fused: Fused, params: RankingParams
              ) -> tuple[Evidence, dict[int, Exception]]:
    """What the packages say of their fused candidates (`joint.Evidence`), and the packages that
    failed, by place, with their error: all packages at once when each has its whole section
    map as a table (`sections.Shelf`: a package searched before), else package by package."""
    from .sections import shelf

    tables = []
    for x in inputs:
        with x.s.lock:
            tables.append(x.s.section_table())
    if inputs and all(t is not None for t in tables):
        return _evidence_together(inputs, query, fused, shelf(tables), params)  # type: ignore[arg-type]
    parts: list[PackageEvidence | None] = []
    failed: dict[int, Exception] = {}
    for p, x in enumerate(inputs):
        try:
            parts.append(_package_evidence(x, query, fused.of(p), params))
        except PACKAGE_FAULTS as e:
            failed[p] = e
            parts.append(None)
    return Evidence.joined(fused, parts), failed


def _evidence_together(inputs: list[_Input], query: Query, fused: Fused, books: Shelf, params: RankingParams
                       ) -> tuple[Evidence, dict[int, Exception]]:
    """The evidence of every package's candidates, their pages and sizes read off one shelf."""
    import numpy as np

    page, found, chars = books.lookup(fused.pkg, fused.cid)
    n = len(fused.cid)
    joint = _coverage_together(inputs, fused)
    gain, coverage, title = np.zeros(n), joint if joint is not None else np.zeros(n), np.zeros(len(books.paths))
    matchers: list[Callable[[frozenset[str]], float] | None] = []
    failed: dict[int, Exception] = {}
    for p, x in enumerate(inputs):
        a, b = fused.bounds[p], fused.bounds[p + 1]
        try:
            with x.s.lock:
                matchers.append(_heading_and_title(x, query, fused.cid[a:b], gain[a:b],
                                                   coverage[a:b] if joint is None else None, params))
        except PACKAGE_FAULTS as e:
            failed[p] = e
            matchers.append(None)
    tokens, owner = books.tokens, books.owner
    for at in set(page.tolist()):
        match = matchers[owner[at]]
        if match is not None and (value := match(tokens[at])):  # (most pages: none of the query's words)
            title[at] = value
    if failed:
        keep = fused.places([p for p in range(len(inputs)) if p not in failed])
        return Evidence(at=keep, page=page[keep], found=found[keep], chars=chars[keep], gain=gain[keep],
                        coverage=coverage[keep], paths=books.paths, title=title), failed
    return Evidence(at=np.arange(n), page=page, found=found, chars=chars, gain=gain, coverage=coverage,
                    paths=books.paths, title=title), failed


def _coverage_together(inputs: list[_Input], fused: Fused) -> np.ndarray | None:
    """Every candidate's coverage of the query (`QueryTerms.coverage`), all packages' at once
    when all were scored together (None: package by package)."""
    import numpy as np

    joint = [x.terms.joint for x in inputs]
    if not joint or any(j is None for j in joint) or len({id(j[0]) for j in joint}) > 1:  # type: ignore[index]
        return None
    together = joint[0][0]  # type: ignore[index]
    totals = np.array([sum(x.terms.idf.values()) for x in inputs])[fused.pkg]
    rows = np.array([j[1] for j in joint])[fused.pkg]  # type: ignore[index]
    sums = together.presence_at(rows, fused.cid)
    return np.divide(sums, totals, out=np.zeros(len(sums)), where=totals > 0)  # type: ignore[no-any-return]


def _heading_and_title(x: _Input, query: Query, cids: np.ndarray, gain: np.ndarray, coverage: np.ndarray | None,
                       params: RankingParams) -> Callable[[frozenset[str]], float]:
    """Fill in the package's candidates' heading gains and coverage of the query (None: it is
    known); its title matcher. Call under the package's lock."""
    stems = x.query.stems
    term_stems, all_stems, query_stems = stems.per_term, stems.every, stems.terms
    if len(cids) and coverage is not None:
        coverage[:] = x.terms.coverage(cids)
    if query_stems and len(cids):  # only a section whose title holds every query term can have it as its heading
        ids = cids.tolist()
        heading = x.s.in_titles(query_stems, ids)
        if heading:
            gains = heading_matcher(query_stems, all_stems, x.s.heading_tokens(heading, query_stems), _filler_tokens(),
                                    params.definition_weight if query.asks_definition else params.heading_weight)
            at = {cid: i for i, cid in enumerate(ids)}
            for cid in heading:
                gain[at[cid]] = gains(cid)
    return title_matcher(x.terms.idf, term_stems)


def _package_evidence(x: _Input, query: Query, cids: np.ndarray, params: RankingParams) -> PackageEvidence:
    """What one package says of its fused candidates, read from its section map (a package
    searched for the first time, or beside one: `_evidence`)."""
    import numpy as np

    s, ids, n = x.s, cids.tolist(), len(cids)
    gain, coverage = np.zeros(n), np.zeros(n)
    with s.lock:
        known = s.sections_of(ids)  # (first: the headings below are of these sections)
        where, sizes = known.pages, known.chars
        match = _heading_and_title(x, query, cids, gain, coverage, params)
        tokens = s.title_tokens(where[cid] for cid in ids if cid in where)
        number: dict[str, int] = {}
        page = np.fromiter((number.setdefault(where.get(cid, _NOWHERE)[0], len(number)) for cid in ids), np.int64, n)
        paths = list(number)
        return PackageEvidence(page=page, found=np.fromiter(map(where.__contains__, ids), bool, n),
                               chars=np.fromiter((sizes.get(cid, 0) for cid in ids), np.int64, n), gain=gain,
                               coverage=coverage, paths=paths,
                               title=np.fromiter((match(tokens.get(path, _NO_TOKENS)) for path in paths), np.float64,
                                                 len(paths)))


class _Ranking:
    """The judged candidates of all packages, best first, as columns: made into `_Scored` only
    when they are taken (a pack plans from sizes and takes a dozen of the couple of hundred)."""

    def __init__(self, inputs: list[_Input], pkg: list[int], cid: list[int], score: list[float], coverage: list[float],
                 path: list[str], chars: list[int]) -> None:
        self._inputs = inputs
        self._labels = [x.s.label for x in inputs]
        self._pkg, self._cid, self._score, self._coverage = pkg, cid, score, coverage
        self._path, self._chars = path, chars
        self.tokens = [(c + 3) // 4 for c in chars]  # its text's tokens, as `estimate_tokens` counts them

    @classmethod
    def of(cls, inputs: list[_Input], fused: Fused, ranked: Ranked) -> _Ranking:
        return cls(inputs, fused.pkg[ranked.at].tolist(), fused.cid[ranked.at].tolist(), ranked.score.tolist(),
                   ranked.coverage.tolist(), ranked.path, ranked.chars.tolist())

    def page_of(self, k: int) -> tuple[str, str]:
        """The candidate's page, as the pack tells pages apart: (library, path)."""
        return self._labels[self._pkg[k]], self._path[k]

    def __len__(self) -> int:
        return len(self._cid)

    def take(self, at: Iterable[int]) -> list[_Scored]:
        """These candidates (by rank) as `_Scored`, in that order."""
        out = []
        for k in at:
            x = self._inputs[self._pkg[k]]
            cid = self._cid[k]
            out.append(_Scored(x.s, cid, self._path[k], self._score[k], self._coverage[k],
                               x.dense.z_at(cid) if x.dense is not None else None, x.terms.missing, self._chars[k]))
        return out

    def all(self) -> list[_Scored]:
        return self.take(range(len(self)))

    def without(self, s: Searchable) -> _Ranking:
        """The ranking less one package's candidates (it failed while its text was read)."""
        keep = [k for k, p in enumerate(self._pkg) if self._inputs[p].s is not s]
        return _Ranking(self._inputs, *([col[k] for k in keep] for col in (self._pkg, self._cid, self._score,  # type: ignore[arg-type]
                        self._coverage, self._path, self._chars)))


_NOTHING = _Ranking([], [], [], [], [], [], [])


def _package_prior(cosines: list[_ZScores | None | Exception], params: RankingParams) -> list[float]:
    """Each package's weight in a search over several: exp(package_prior x (its best cosine
    with the query - the best package's)), when all of them were searched with the same model.

    Every package's scores are relative to its own best hit, so each one offers a "best"
    section, whether it is about the question or not. The cosines are not relative: a
    question about Flask comes closer to some Flask section than to any of Click's. BM25
    scores, whose IDF is each package's own, cannot say this. (The nine question sets, each
    searched over all nine packages: page MRR 0.69 without it, 0.72 with it, 0.82 for each
    package searched alone; bench/retrieval.py --together.) All 1.0 when a package has no
    usable vectors or the models differ."""
    zs = [z for z in cosines if isinstance(z, _ZScores) and z.usable]
    if len(cosines) < 2 or len(zs) < len(cosines) or len({id(z.model) for z in zs}) > 1:
        return [1.0] * len(cosines)
    top = max(z.peak for z in zs)
    return [math.exp(params.package_prior * (z.peak - top)) for z in zs]


def _as_package_error(label: str, e: Exception) -> InvalidPackage:
    """What went wrong with one package, as one line naming it."""
    if isinstance(e, InvalidPackage):
        return e if label in str(e) else InvalidPackage(f"{label}: {e}")
    return InvalidPackage(f"{label}: unreadable ({type(e).__name__}: {str(e)[:200]})")


def _cosines_of(searchables: list[Searchable], query: Query, mode: str, params: RankingParams
                ) -> Callable[[], list[_ZScores | None | Exception]]:
    """Every package's cosines with the query (see `_cosines`): call the result to have them.

    Many vectors are multiplied in a helper thread as one stacked matrix (`_stacked`); a
    search that still has packages to load loads them there, overlapping the BM25 loads."""
    rows = [s.vector_rows for s in searchables]
    if mode != "lexical" and (None in rows or sum(r or 0 for r in rows) >= params.thread_rows):
        from .background import submit

        if None in rows:
            return submit(functools.partial(_all_cosines, searchables, query, mode))
        stacked = _stacked(searchables, query, params)
        if stacked is not None:
            return stacked
    done = _all_cosines(searchables, query, mode)
    return lambda: done


def _stacked(searchables: list[Searchable], query: Query, params: RankingParams
             ) -> Callable[[], list[_ZScores | None | Exception]] | None:
    """The loaded packages' cosines as one product in a helper thread (None: their models differ)."""
    from .background import submit
    from .dense import stacked

    dense = [s.dense() for s in searchables]
    models = {id(d[0]): d[0] for d in dense if d is not None}
    if len(models) != 1:
        return None
    (model,) = models.values()
    stack = stacked([d[1] for d in dense if d is not None])
    qv = model.encode([query.text])[0].astype("float32")

    pending = submit(lambda: stack.matrix @ qv)  # the one step that releases the GIL throughout
    pending.begun(params.start_wait_s)

    def finish() -> list[_ZScores | None | Exception]:
        # (A package's best cosines are its best z-scores: they are scaled by its mean and deviation.)
        found = iter(stack.tops(pending(), params.pool))
        out: list[_ZScores | None | Exception] = []
        for d in dense:
            if d is None:
                out.append(None)
                continue
            top = next(found)
            out.append(_ZScores(d[1], top.spread, model, top.peak, top.first, (params.pool, top.ids, top.z)))
        return out

    return finish


def _all_cosines(searchables: list[Searchable], query: Query, mode: str) -> list[_ZScores | None | Exception]:
    query_vectors: dict[int, np.ndarray] = {}
    return [_cosines(s, query, mode, query_vectors) for s in searchables]


def _cosines(s: Searchable, query: Query, mode: str, query_vectors: dict[int, np.ndarray]
             ) -> _ZScores | None | Exception:
    """The query's cosine with every section of the package (None: searched lexically), or
    what went wrong, raised when the package's turn comes (`_ranking`)."""
    if mode == "lexical":
        return None
    try:
        dense = s.dense()
    except PACKAGE_FAULTS as e:
        return e
    if dense is None:
        return None
    model, index = dense
    qv = query_vectors.get(id(model))
    if qv is None:
        qv = query_vectors[id(model)] = model.encode([query.text])[0].astype("float32")
    from .dense import standardise

    scores = index.scores(qv)
    return _ZScores(index, standardise(scores, [(0, len(scores))])[0], model, float(scores.max()) if len(scores) else 0.0,
                    index.first)


@dataclass(slots=True)
class _Units:
    """A package's query units from our own index, to be scored with the others' at once."""

    n: int  # its sections
    query: Query
    units: list[Posting | None]  # the terms', then the phrases'


_Lexical = tuple[tuple["np.ndarray", "np.ndarray"], "QueryTerms"]  # the BM25 top and the query's terms


def _lexical(s: Searchable, query: Query, mode: str, pool: int) -> _Units | _Lexical | Exception:
    """What BM25 needs of the package for the query (the postings of our index, or FTS5's
    top when it has none; nothing ranked in dense mode), or what went wrong, raised at its turn."""
    words = query.without_library(s.pkg.id.name)  # the words that choose among its pages
    try:
        with s.lock:
            units = s.bm25_units(words, with_phrases=mode != "dense")
            if units is not None and s.bm25 is not None:
                return _Units(s.bm25.n, words, units)
            return (s.lexical(words, pool) if mode != "dense" else _no_hits()), s.query_terms(words)
    except PACKAGE_FAULTS as e:
        return e


def _score_lexically(found: list[_Units | _Lexical | Exception], mode: str, pool: int) -> list[_Lexical | Exception]:
    """Every package's BM25 top and query terms: those with our index scored together, in one
    pass over all their postings (`bm25.score_together`), the others as FTS5 ranked them."""
    from .bm25 import score_together
    from .lexical import QueryTerms, term_weights

    ours = [(k, f) for k, f in enumerate(found) if isinstance(f, _Units)]
    if not ours:
        return found  # type: ignore[return-value]
    weights = [term_weights(f.n, f.query.terms, [u.df if u is not None else 0 for u in f.units[:len(f.query.terms)]])
               for _, f in ours]
    together = score_together([(f.n, f.units, list(idf.values())) for (_, f), (idf, _) in zip(ours, weights, strict=True)],
                              pool if mode != "dense" else 0)
    bounds = together.row.searchsorted(range(len(ours) + 1)).tolist()
    scored: dict[int, _Lexical] = {}
    for j, ((k, _), (idf, missing)) in enumerate(zip(ours, weights, strict=True)):
        top = (together.cid[bounds[j]:bounds[j + 1]], together.score[bounds[j]:bounds[j + 1]])
        scored[k] = (top, QueryTerms(idf=idf, missing=missing, presence=together.presence_of(j), joint=(together, j)))
    return [scored[k] if k in scored else f for k, f in enumerate(found)]  # type: ignore[misc]


def _no_hits() -> tuple[np.ndarray, np.ndarray]:
    """An empty ranking: (chunk ids, scores)."""
    import numpy as np

    return np.zeros(0, dtype=np.int64), np.zeros(0)


@functools.cache
def _filler_tokens() -> frozenset[str]:
    """The stopwords as index tokens: words a heading may have beyond the query's."""
    from ..package.bm25 import stemmer

    return frozenset(t for toks in stemmer().tokens(sorted(STOPWORDS)).values() for t in toks)


class _ZScores:
    """Chunk ids -> their cosine z-scores within this query's distribution over the package
    (`dense.standardise`: a search asks for the top ones and then for a few more). Not
    `usable`: no z-scores at all (see `standardise`)."""

    def __init__(self, index: VectorIndex, spread: Spread, model: Embedder, peak: float, first: int | None,
                 best: tuple[int, np.ndarray, np.ndarray] | None = None) -> None:
        self.spread, self.usable, self.index = spread, spread.usable, index
        self.first = first  # (`index.first`, known)
        self.model, self.peak = model, peak  # what made the cosines, and the best of them
        self.best = best  # (k, chunk ids, z) of the k best cosines, best first, when a stack found them

    def top(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, z) of the `k` best cosines, best first."""
        if not self.usable:
            rows = self.spread.dev[:0].astype("int64")
        elif self.best is not None and k == self.best[0]:
            return self.best[1:]
        else:
            rows = self.index.top_rows(self.spread.z(), k)
        ids = rows + self.first if self.first is not None else self.index.ids[rows]
        return ids, self.spread.z(rows)

    def z_at(self, cid: int) -> float | None:
        """The section's z (None: it has no vector, or there are no z-scores)."""
        if not self.usable:
            return None
        first = self.first
        if first is not None:  # the usual package: a section's row is its id less the first
            row = cid - first
            return self.spread.z_at(row) if 0 <= row < len(self.spread.dev) else None
        at = int(self.index.positions([cid])[0])
        return self.spread.z_at(at) if at >= 0 else None


class _NeedsText(ContextError):
    """The pack cannot be planned from sizes alone: a section must be trimmed (caught in this module)."""


def _needs_text(x: int, budget: int) -> int | None:
    raise _NeedsText


def _pack(query: Query, ranking: _Ranking, opts: SearchOptions) -> list[Candidate]:
    """The pack, planned from the sections' sizes and then made from the text of the chosen
    ones only. The pack reads ranked sections until one rule stops it, usually all of them;
    reading the text of only those it keeps gives the same pack, unless one must be trimmed or
    a text is not as long as its size said: then it is made from every ranked section's text."""
    try:
        plan = ranking.take(choose(range(len(ranking)), opts.budget, opts.limit, size=ranking.tokens.__getitem__,
                                   page=ranking.page_of, shrink=_needs_text))
    except _NeedsText:
        return pack(_read(query, ranking.all()), opts.budget, opts.limit)
    ranked = _read(query, plan)
    if any(len(c.content) != x.chars for c, x in zip(ranked, plan, strict=False)):
        ranked = _read(query, ranking.all())
    return pack(ranked, opts.budget, opts.limit)


def _read(query: Query, scored: Sequence[_Scored]) -> list[Candidate]:
    """The ranked sections with their text and verdict (one query per package), in rank
    order. A package that fails raises `_Unreadable`."""
    identifier = query.identifier
    n_terms = len(query.terms)
    texts: dict[tuple[int, int], Chunk] = {}
    for s in {id(c.s): c.s for c in scored}.values():
        try:
            with s.lock:
                texts.update(((id(s), cid), c) for cid, c in s.sections([x.chunk_id for x in scored if x.s is s]))
        except PACKAGE_FAULTS as e:
            raise _Unreadable(s, e) from None
    out = []
    for x in scored:
        c = texts.get((id(x.s), x.chunk_id))
        if c is None:
            continue  # a section that vanished between ranking and reading
        signals = Signals(
            coverage=x.coverage, z=x.z, missing=x.missing, n_terms=n_terms,
            exact_phrase=bool(identifier and (identifier in c.content or identifier in c.section_title)),
        )
        out.append(Candidate(
            library=x.s.label, chunk_id=x.chunk_id, doc_path=c.doc_path, doc_title=c.doc_title,
            section_title=c.section_title, content=c.content, tokens=c.tokens, url=c.url,
            score=x.score, verdict=judge(signals), signals=signals.as_dict(),
        ))
    return out


def _answer(query: Query, searchables: list[Searchable], chosen: list[Candidate], opts: SearchOptions,
            notes: list[str], modes: dict[str, str]) -> Answer:
    tokens = sum(c.tokens for c in chosen)
    one = searchables[0] if len(searchables) == 1 else None
    return Answer(
        query=query.text, budget=opts.budget, tokens=tokens,
        saved_percent=_saved(searchables, chosen, tokens),
        verdict=overall([c.verdict for c in chosen]),
        results=[Hit(rank=i, library=c.library, title=c.title, content=c.content, source=c.doc_path,
                     url=c.url, tokens=c.tokens, score=c.score, verdict=c.verdict, signals=c.signals, page=page)
                 for i, (c, page) in enumerate(_reading_order(chosen), start=1)],
        searched=dict(modes), notes=notes,
        library=one.label if one else None, version=one.pkg.version if one else None,
    )


def _reading_order(chosen: list[Candidate]) -> list[tuple[Candidate, Page]]:
    """The packed sections grouped by page: pages in the order of their best section, and a
    page's sections in the order the page has them, so an agent reads coherent excerpts."""
    pages: dict[tuple[str, str], list[Candidate]] = {}
    for c in chosen:
        pages.setdefault((c.library, c.doc_path), []).append(c)
    out: list[tuple[Candidate, Page]] = []
    for rank, sections in enumerate(pages.values(), start=1):
        first = sections[0]
        url = first.url.split("#", 1)[0] if first.url else None
        page = Page(rank=rank, title=first.doc_title, source=first.doc_path, url=url)
        out.extend((c, page) for c in sorted(sections, key=lambda c: c.chunk_id))
    return out


def _saved(searchables: list[Searchable], chosen: list[Candidate], tokens: int) -> float:
    """How much smaller the pack is than reading every page it draws from, whole."""
    by_label = {s.label: s for s in searchables}
    whole = 0
    for library in {c.library for c in chosen}:
        s = by_label[library]
        paths = sorted({c.doc_path for c in chosen if c.library == library})
        with s.lock:
            whole += s.page_tokens(paths)
    if whole <= 0:
        return 0.0
    return round(max(0.0, 1 - tokens / whole), 2)
