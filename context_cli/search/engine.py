"""Hybrid search over one or many installed packages, answered as a context pack.

Per package: BM25 (lexical) and cosine over the package's own vectors (dense), fused by
a measured score mix (see `fuse`); packages without usable vectors are searched lexically
and the answer says so. Candidates from all packages are then ranked together, judged, and
packed into the token budget. The answer is typed (`answer.Answer`); docs/search.md
describes every step and the JSON shape.
"""

from __future__ import annotations

import functools
import math
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..document import Chunk
from ..errors import ContextError, InvalidPackage
from .answer import Answer, Hit, Json, Page, finite
from .fts import STOPWORDS, terms, without_library_name
from .fts import words as query_words
from .index import Searchable, open_searchable
from .pack import Candidate, choose, pack
from .pages import heading_matcher, heading_weight, more_pages, title_matcher, with_page_evidence
from .verdict import Signals, judge, overall

if TYPE_CHECKING:
    import numpy as np

    from ..embed.model import Embedder
    from ..store.store import Installed
    from .dense import VectorIndex
    from .lexical import QueryTerms, TermStats

DEFAULT_BUDGET = 2000
DEFAULT_LIMIT = 10
MAX_QUERY_CHARS = 10_000
# What one package's search may fail with: its own fault, answered by skipping it.
PACKAGE_FAULTS = (InvalidPackage, sqlite3.Error, UnicodeDecodeError)
POOL = 50  # candidates taken from each ranking
PAGE_POOL = 3  # x the candidates judged per package: how many get page evidence (all, for one package)
JUDGED = 30  # candidates that get signals and may enter the pack, shared among the packages
MIN_JUDGED_PER_PACKAGE = 8
# Fusion (chosen with bench/retrieval.py; see docs/search.md): a convex mix of BM25 scaled
# by the query's best BM25 score and the cosine z-score capped at Z_CAP.
LEXICAL_WEIGHT = 0.7
Z_CAP = 6.0
# Across packages, each package's scores are weighed by how close its best section comes to
# the query (`_package_prior`; chosen with bench/retrieval.py --together: 2 to 7 all gain).
PACKAGE_PRIOR = 3.0
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$.:-]*[\w$]\Z")


class EmptyQuery(ContextError):
    """A query with nothing to search for."""


@dataclass
class SearchOptions:
    budget: int = DEFAULT_BUDGET
    limit: int = DEFAULT_LIMIT
    mode: str = "hybrid"  # hybrid | lexical | dense (the last two for benchmarks)


def answer(query: str, packages: Iterable[Installed], opts: SearchOptions | None = None) -> Answer:
    """Search `packages` for `query` and pack the best sections into the budget."""
    opts = opts or SearchOptions()
    if not isinstance(query, str) or not query.strip():
        raise EmptyQuery("the query is empty; ask a question or name an API")
    check_text(query, "the query")
    query = query[:MAX_QUERY_CHARS]
    if opts.budget < 1 or opts.limit < 1:
        raise ContextError("budget and limit must be positive")
    searchables = [open_searchable(p) for p in packages]
    if not searchables:
        raise ContextError("no packages to search; install one with `context add` or `context install`")
    scored, run = _ranking(query, searchables, opts.mode)
    while True:
        try:
            chosen = _pack(query, scored, opts)
            break
        except _Unreadable as e:  # that package is skipped, as if it had failed while ranking
            run.skip(e.searchable, e.error)
            scored = [c for c in scored if c.s is not e.searchable]
    return _answer(query, searchables, chosen, opts, run.notes, run.modes)


def search(query: str, packages: Iterable[Installed], opts: SearchOptions | None = None) -> Json:
    """The answer in its JSON form (what `context search --format json` prints)."""
    return answer(query, packages, opts).to_json()


def check_text(text: str, what: str) -> None:
    """Refuse text that is not valid Unicode (a lone surrogate from a JSON `\\ud800` escape):
    it cannot be encoded into any answer, so it gets one clear error instead."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ContextError(f"{what} is not valid text (it contains a lone surrogate)") from None


def rank(query: str, searchables: list[Searchable], mode: str = "hybrid"
         ) -> tuple[list[Candidate], list[str], dict[str, str]]:
    """All judged candidates across packages, best first, plus notes and per-package modes."""
    scored, run = _ranking(query, searchables, mode)
    while True:
        try:
            return _read(query, scored), run.notes, run.modes
        except _Unreadable as e:
            run.skip(e.searchable, e.error)
            scored = [c for c in scored if c.s is not e.searchable]


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


def _ranking(query: str, searchables: list[Searchable], mode: str) -> tuple[list[_Scored], _Run]:
    """Every package's best sections, scored and ranked together, before any text is read."""
    run = _Run(searchables)
    if not terms(query):
        run.notes.append("the query has no searchable words")
        return [], run
    # With many vectors the cosines run in a helper thread (a matrix product releases the GIL)
    # while this one ranks each package by BM25: on a second core they cost no time.
    cosines = _cosines_of(searchables, query, mode)
    lexical = [_lexical(s, query, mode) for s in searchables]
    candidates: list[_Scored] = []
    per_package = max(MIN_JUDGED_PER_PACKAGE, JUDGED // len(searchables))
    dense_all = cosines()
    prior = _package_prior(dense_all)
    for s, lex, dense, weight in zip(searchables, lexical, dense_all, prior, strict=True):
        try:  # each query against the package runs under its own deadline (2 s; one-time loads 10 s)
            ranked = _rank_one(s, query, mode, per_package, lex, dense, run.notes, run.modes)
        except PACKAGE_FAULTS as e:  # one bad or pathological package never breaks the others' answer
            run.skip(s, e)
            continue
        if len(searchables) > 1:
            _damp(ranked, weight)
        for c in ranked:
            c.score = finite(c.score)  # a hostile package's NaN must not scramble the ranking
        candidates.extend(ranked)
    candidates.sort(key=lambda c: c.score, reverse=True)
    return candidates, run


def _damp(ranked: list[_Scored], weight: float) -> None:
    """Scale one package's candidates for a search over several packages.

    Fused scores are scaled per package (its best BM25 hit is 1.0), so across packages
    they are damped by how much of the query a page actually covers (its best section)
    (the coverage as the answer shows it, to 3 places, as this rule was tuned), and by the
    package's `weight` (`_package_prior`)."""
    best: dict[str, float] = {}
    for c in ranked:  # (rounding each page's best is rounding each: `round` keeps order)
        best[c.doc_path] = max(best.get(c.doc_path, 0.0), c.coverage)
    damping = {path: (0.5 + 0.5 * round(coverage, 3)) * weight for path, coverage in best.items()}
    for c in ranked:
        c.score *= damping[c.doc_path]


def _package_prior(cosines: list[_ZScores | None | Exception]) -> list[float]:
    """Each package's weight in a search over several: exp(PACKAGE_PRIOR x (its best cosine
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
    return [math.exp(PACKAGE_PRIOR * (z.peak - top)) for z in zs]


def _as_package_error(label: str, e: Exception) -> InvalidPackage:
    """What went wrong with one package, as one line naming it."""
    if isinstance(e, InvalidPackage):
        return e if label in str(e) else InvalidPackage(f"{label}: {e}")
    return InvalidPackage(f"{label}: unreadable ({type(e).__name__}: {str(e)[:200]})")


# From this many vectors in all, the products run in a helper thread while this one ranks by
# BM25 (below, the hand-over costs more than it hides).
THREAD_ROWS = 16384


def _cosines_of(searchables: list[Searchable], query: str, mode: str) -> Callable[[], list[_ZScores | None | Exception]]:
    """Every package's cosines with the query (see `_cosines`): call the result to have them.

    Many vectors are multiplied in a helper thread as one stacked matrix (`_stacked`); a
    search that still has packages to load loads them there, overlapping the BM25 loads."""
    rows = [s.vector_rows for s in searchables]
    if mode != "lexical" and (None in rows or sum(r or 0 for r in rows) >= THREAD_ROWS):
        from .background import submit

        if None in rows:
            return submit(functools.partial(_all_cosines, searchables, query, mode))
        stacked = _stacked(searchables, query)
        if stacked is not None:
            return stacked
    done = _all_cosines(searchables, query, mode)
    return lambda: done


def _stacked(searchables: list[Searchable], query: str) -> Callable[[], list[_ZScores | None | Exception]] | None:
    """The loaded packages' cosines as one product in a helper thread (None: their models differ)."""
    from .background import submit
    from .dense import stacked

    dense = [s.dense() for s in searchables]
    models = {id(d[0]): d[0] for d in dense if d is not None}
    if len(models) != 1:
        return None
    (model,) = models.values()
    stack = stacked([d[1] for d in dense if d is not None])
    qv = model.encode([query])[0].astype("float32")

    pending = submit(lambda: stack.matrix @ qv)  # the one step that releases the GIL throughout

    def finish() -> list[_ZScores | None | Exception]:
        from .dense import standardise

        cosines = pending()
        # (A package's best cosines are its best z-scores: they are scaled by its mean and deviation.)
        found = iter(zip(standardise(cosines, stack.cuts), stack.best_rows(cosines, POOL), stack.cuts, strict=True))
        out: list[_ZScores | None | Exception] = []
        for d in dense:
            if d is None:
                out.append(None)
                continue
            scored, best, (start, _) = next(found)
            out.append(_ZScores(d[1], scored, model, float(cosines[start + best[0]]) if len(best) else 0.0, best))
        return out

    return finish


def _all_cosines(searchables: list[Searchable], query: str, mode: str) -> list[_ZScores | None | Exception]:
    query_vectors: dict[int, np.ndarray] = {}
    return [_cosines(s, query, mode, query_vectors) for s in searchables]


def _cosines(s: Searchable, query: str, mode: str, query_vectors: dict[int, np.ndarray]
             ) -> _ZScores | None | Exception:
    """The query's cosine with every section of the package (None: searched lexically), or
    what went wrong, raised when the package's turn comes (`_rank_one`)."""
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
        qv = query_vectors[id(model)] = model.encode([query])[0].astype("float32")
    from .dense import standardise

    scores = index.scores(qv)
    return _ZScores(index, standardise(scores, [(0, len(scores))])[0], model, float(scores.max()) if len(scores) else 0.0)


def _lexical(s: Searchable, query: str, mode: str) -> tuple[list[tuple[int, float]], QueryTerms] | Exception:
    """The package's BM25 top (empty in dense mode) and the query's term statistics in it,
    or what went wrong, raised at its turn."""
    words = without_library_name(query, s.pkg.id.name)  # the words that choose among its pages
    try:
        with s.lock:
            return (s.lexical(words, POOL) if mode != "dense" else []), s.query_terms(words)
    except PACKAGE_FAULTS as e:
        return e


def _rank_one(s: Searchable, query: str, mode: str, per_package: int,
              lexical: tuple[list[tuple[int, float]], QueryTerms] | Exception,
              dense: _ZScores | None | Exception, notes: list[str], modes: dict[str, str]) -> list[_Scored]:
    """One package's best candidates (fused, with page evidence and signals); notes its search mode."""
    words = without_library_name(query, s.pkg.id.name)
    if isinstance(lexical, Exception):
        raise lexical
    if isinstance(dense, Exception):
        raise dense
    lex, query_terms = lexical
    dense_hits: list[tuple[int, float]] = []
    z_of = dense
    if z_of is not None:
        dense_hits = z_of.top(POOL)
        modes[s.label] = "hybrid" if mode != "dense" else "dense"
    else:
        modes[s.label] = "lexical"
        if s.note and mode != "lexical":
            notes.append(f"{s.label}: {s.note}")
    fused = fuse(lex, dense_hits)
    if not fused:
        return []
    if len(fused) > PAGE_POOL * per_package:  # many packages: page evidence for each one's best
        # (A stable sort: ties keep their order, as heapq.nlargest keeps it.)
        fused = dict(sorted(fused.items(), key=itemgetter(1), reverse=True)[:PAGE_POOL * per_package])
    with s.lock:
        stats = query_terms.stats(list(fused))  # for page evidence and for the verdicts
        known = s.sections_of(fused)
        where, chars = known.pages, known.chars
        ordered = more_pages(_by_page(s, query, words, stats, fused, where), where, per_package)
    coverage = dict(zip(stats.candidates.tolist(), stats.coverages().tolist(), strict=True))
    z_map = z_of([cid for cid, _ in ordered]) if z_of else {}
    missing = stats.missing
    # In chunk id order, so that ties across the whole ranking fall as they always have.
    return [_Scored(s, cid, where[cid][0], score, coverage[cid], z_map.get(cid), missing, chars[cid])
            for cid, score in sorted(ordered) if cid in where]


def _by_page(s: Searchable, query: str, words: str, stats: TermStats, fused: dict[int, float],
             where: Mapping[int, tuple[str, str]]) -> list[tuple[int, float]]:
    """Fused candidates with their page's and their own heading's evidence added (see
    `pages`), best first. `words` is the query without the library's name; `where` maps
    them to their (path, title). Call under `s.lock`."""
    term_stems, all_stems, query_stems = _query_stems(words)
    match = title_matcher(stats.idf, term_stems, s.title_tokens(where[cid] for cid in fused if cid in where))
    gain = heading_matcher(query_stems, all_stems, s.heading_tokens(fused, query_stems), _filler_tokens(),
                           heading_weight(query))
    return with_page_evidence(fused, where, match, gain)


@functools.lru_cache(maxsize=64)  # the same for every package searched with these words
def _query_stems(words: str) -> tuple[Mapping[str, frozenset[str]], frozenset[str], frozenset[str]]:
    """The index tokens of each of the query's terms, all the tokens of its words (stopwords
    included), and the terms' tokens together: what titles and headings are matched against."""
    from ..package.bm25 import stemmer

    tokens = stemmer().tokens
    every = tokens(query_words(words))
    per_term = tokens(terms(words))
    return (MappingProxyType({t: frozenset(toks) for t, toks in per_term.items()}),
            frozenset(t for toks in every.values() for t in toks), frozenset(t for toks in per_term.values() for t in toks))


@functools.cache
def _filler_tokens() -> frozenset[str]:
    """The stopwords as index tokens: words a heading may have beyond the query's."""
    from ..package.bm25 import stemmer

    return frozenset(t for toks in stemmer().tokens(sorted(STOPWORDS)).values() for t in toks)


def fuse(lex: list[tuple[int, float]], dense: list[tuple[int, float]]) -> dict[int, float]:
    """Mix BM25 (scaled by this query's best BM25) with cosine z-scores (capped, scaled).

    Measured against reciprocal rank fusion on three question sets, this score fusion was
    the only variant that beat BM25 alone on all of them: the static model is much weaker
    than BM25, and RRF gives its ranks as much say as BM25's. A package with only one
    ranking gets that ranking at full weight, so it competes fairly in a mixed search.
    """
    w_lex = LEXICAL_WEIGHT if lex and dense else 1.0
    fused: dict[int, float] = {}
    if lex:
        top = lex[0][1] or 1.0
        fused = {cid: w_lex * score / top for cid, score in lex}
    if dense:
        w_dense = 1.0 - w_lex if lex else 1.0
        get = fused.get
        for cid, z in dense:  # z capped to 0..Z_CAP
            fused[cid] = get(cid, 0.0) + w_dense * (Z_CAP if z > Z_CAP else z if z > 0.0 else 0.0) / Z_CAP
    return fused


class _ZScores:
    """Chunk ids -> their cosine z-scores within this query's distribution over the package
    (every row's, computed at once by `dense.standardise`: a search asks for the top ones and
    then for a few more). Not `usable`: no z-scores at all (see `standardise`)."""

    def __init__(self, index: VectorIndex, scored: tuple[np.ndarray, bool], model: Embedder, peak: float,
                 best: np.ndarray | None = None) -> None:
        (self.z, self.usable), self.index = scored, index
        self.first = index.first
        self.model, self.peak = model, peak  # what made the cosines, and the best of them
        self.best = best  # rows of the best cosines, best first, when a stack found them

    def top(self, k: int) -> list[tuple[int, float]]:
        """(chunk id, z) of the `k` best cosines, best first."""
        if not self.usable:
            return []
        best = self.best
        rows = best[:k] if best is not None and len(best) >= min(k, len(self.z)) else self.index.top_rows(self.z, k)
        ids = rows + self.first if self.first is not None else self.index.ids[rows]
        return list(zip(ids.tolist(), self.z[rows].tolist(), strict=True))

    def __call__(self, ids: list[int]) -> dict[int, float]:
        """Chunk id -> z for those of `ids` with a vector."""
        if not self.usable or not ids:
            return {}
        z, first = self.z, self.first
        if first is not None:  # the usual package: a section's row is its id less the first
            n = len(z)
            return {cid: float(z[cid - first]) for cid in ids if 0 <= cid - first < n}
        rows = self.index.positions(ids)
        found = rows >= 0
        return dict(zip((i for i, ok in zip(ids, found.tolist(), strict=True) if ok),
                        z[rows[found]].tolist(), strict=True))


class _NeedsText(ContextError):
    """The pack cannot be planned from sizes alone: a section must be trimmed (caught in this module)."""


def _needs_text(x: _Scored, budget: int) -> _Scored | None:
    raise _NeedsText


def _pack(query: str, scored: list[_Scored], opts: SearchOptions) -> list[Candidate]:
    """The pack, planned from the sections' sizes and then made from the text of the chosen
    ones only. The pack reads ranked sections until one rule stops it, usually all of them;
    reading the text of only those it keeps gives the same pack, unless one must be trimmed or
    a text is not as long as its size said: then it is made from every ranked section's text."""
    try:
        plan = choose(scored, opts.budget, opts.limit, size=lambda x: (x.chars + 3) // 4,  # = estimate_tokens
                      page=lambda x: (x.s.label, x.doc_path), shrink=_needs_text)
    except _NeedsText:
        plan = scored
    ranked = _read(query, plan)
    if plan is not scored and any(len(c.content) != x.chars for c, x in zip(ranked, plan, strict=False)):
        ranked = _read(query, scored)
    return pack(ranked, opts.budget, opts.limit)


def _read(query: str, scored: list[_Scored]) -> list[Candidate]:
    """The ranked sections with their text and verdict (one query per package), in rank
    order. A package that fails raises `_Unreadable`."""
    q = query.strip()
    identifier = q if _IDENTIFIER.match(q) else None
    n_terms = len(terms(query))
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


def _answer(query: str, searchables: list[Searchable], chosen: list[Candidate], opts: SearchOptions,
            notes: list[str], modes: dict[str, str]) -> Answer:
    tokens = sum(c.tokens for c in chosen)
    one = searchables[0] if len(searchables) == 1 else None
    return Answer(
        query=query, budget=opts.budget, tokens=tokens,
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
