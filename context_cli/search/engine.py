"""Hybrid search over one or many installed packages, answered as a context pack.

Per package: BM25 (lexical) and cosine over the package's own vectors (dense), fused by
a measured score mix (see `fuse`); packages without usable vectors are searched lexically
and the answer says so. Candidates from all packages are then ranked together, judged, and
packed into the token budget. The answer is typed (`answer.Answer`); docs/search.md
describes every step and the JSON shape.
"""

from __future__ import annotations

import heapq
import math
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ContextError, InvalidPackage
from .answer import Answer, Hit, Json, Page, finite
from .fts import terms, without_library_name
from .index import Searchable, open_searchable
from .pack import Candidate, pack
from .pages import title_matcher, with_page_evidence
from .verdict import Signals, judge, overall

if TYPE_CHECKING:
    import numpy as np

    from ..store.store import Installed
    from .dense import VectorIndex
    from .lexical import TermStats

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
    ranked, notes, modes = rank(query, searchables, opts.mode)
    chosen = pack(ranked, opts.budget, opts.limit)
    return _answer(query, searchables, chosen, opts, notes, modes)


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
    notes: list[str] = []
    modes: dict[str, str] = {}
    if not terms(query):
        notes.append("the query has no searchable words")
        return [], notes, modes
    query_vectors: dict[int, np.ndarray] = {}
    candidates: list[Candidate] = []
    per_package = max(MIN_JUDGED_PER_PACKAGE, JUDGED // len(searchables))
    skipped: list[ContextError] = []
    for s in searchables:
        try:  # each query against the package runs under its own deadline (2 s; one-time loads 10 s)
            candidates.extend(_rank_one(s, query, mode, per_package, query_vectors, notes, modes))
        except PACKAGE_FAULTS as e:  # one bad or pathological package never breaks the others' answer
            problem = _as_package_error(s.label, e)
            skipped.append(problem)
            modes[s.label] = "skipped"
            notes.append(f"{problem}; skipped" if "skipped" not in str(problem) else str(problem))
    if skipped and len(skipped) == len(searchables):
        raise skipped[0]
    if len(searchables) > 1:
        # Fused scores are scaled per package (its best BM25 hit is 1.0), so across packages
        # they are damped by how much of the query a page actually covers (its best section).
        coverage: dict[tuple[str, str], float] = {}
        for c in candidates:
            key = (c.library, c.doc_path)
            coverage[key] = max(coverage.get(key, 0.0), c.signals["coverage"])
        for c in candidates:
            c.score *= 0.5 + 0.5 * coverage[(c.library, c.doc_path)]
    for c in candidates:
        c.score = finite(c.score)  # a hostile package's NaN must not scramble the ranking
    candidates.sort(key=lambda c: c.score, reverse=True)
    return candidates, notes, modes


def _as_package_error(label: str, e: Exception) -> InvalidPackage:
    """What went wrong with one package, as one line naming it."""
    if isinstance(e, InvalidPackage):
        return e if label in str(e) else InvalidPackage(f"{label}: {e}")
    return InvalidPackage(f"{label}: unreadable ({type(e).__name__}: {str(e)[:200]})")


def _rank_one(s: Searchable, query: str, mode: str, per_package: int, query_vectors: dict[int, np.ndarray],
              notes: list[str], modes: dict[str, str]) -> list[Candidate]:
    """One package's judged candidates (fused, with page evidence); notes its search mode."""
    words = without_library_name(query, s.pkg.id.name)  # the words that choose among its pages
    with s.lock:
        lex = s.lexical(words, POOL) if mode != "dense" else []
    dense_hits: list[tuple[int, float]] = []
    z_of = None
    dense = s.dense() if mode != "lexical" else None
    if dense is not None:
        model, index = dense
        qv = query_vectors.get(id(model))
        if qv is None:
            qv = query_vectors[id(model)] = model.encode([query])[0].astype("float32")
        scores = index.scores(qv)
        z_of = _zscores(index, scores)
        hits = index.top(scores, POOL)
        dense_hits = list(z_of([cid for cid, _ in hits]).items())
        modes[s.label] = "hybrid" if mode != "dense" else "dense"
    else:
        modes[s.label] = "lexical"
        if s.note and mode != "lexical":
            notes.append(f"{s.label}: {s.note}")
    fused = fuse(lex, dense_hits)
    if not fused:
        return []
    if len(fused) > PAGE_POOL * per_package:  # many packages: page evidence for each one's best
        fused = dict(heapq.nlargest(PAGE_POOL * per_package, fused.items(), key=lambda kv: kv[1]))
    with s.lock:
        stats = s.term_stats(words, list(fused))  # for page evidence and for the verdicts
    ordered = _by_page(s, stats, fused)[:per_package]
    return _judge(s, query, stats, [cid for cid, _ in ordered], dict(ordered), z_of)


def _by_page(s: Searchable, stats: TermStats, fused: dict[int, float]) -> list[tuple[int, float]]:
    """Fused candidates with their page's evidence added (see `pages`), best first."""
    from ..package.bm25 import stemmer

    with s.lock:
        where = s.pages_of(list(fused))
        match = title_matcher(stats.idf, stemmer().tokens, s.title_tokens)
        return with_page_evidence(fused, where, match)


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
        for cid, score in lex:
            fused[cid] = w_lex * score / top
    if dense:
        w_dense = 1.0 - w_lex if lex else 1.0
        for cid, z in dense:
            fused[cid] = fused.get(cid, 0.0) + w_dense * max(0.0, min(z, Z_CAP)) / Z_CAP
    return fused


def _zscores(index: VectorIndex, scores: np.ndarray) -> Callable[[list[int]], dict[int, float]]:
    """A function from chunk ids to their cosine z-scores within this query's distribution.

    Vectors with NaN or infinities (a hostile package) give no z-scores at all."""
    mean = float(scores.mean()) if len(scores) else 0.0
    std = float(scores.std()) if len(scores) > 1 else 0.0
    usable = math.isfinite(mean) and math.isfinite(std) and std > 1e-9

    def z_of(ids: list[int]) -> dict[int, float]:
        if not usable or not ids:
            return {}
        rows = index.positions(ids)
        z = ((cid, (float(scores[r]) - mean) / std) for cid, r in zip(ids, rows, strict=False) if r >= 0)
        return {cid: v for cid, v in z if math.isfinite(v)}

    return z_of


def _judge(s: Searchable, query: str, stats: TermStats, ids: list[int], fused: dict[int, float],
           z_of: Callable[[list[int]], dict[int, float]] | None) -> list[Candidate]:
    if not ids:
        return []
    with s.lock:
        sections = s.sections(ids)
    q = query.strip()
    identifier = q if _IDENTIFIER.match(q) else None
    n_terms = len(terms(query))
    z_map = z_of(ids) if z_of else {}
    out = []
    for cid, c in sections:
        signals = Signals(
            coverage=stats.coverage(cid), z=z_map.get(cid), missing=stats.missing,
            n_terms=n_terms, exact_phrase=bool(identifier and (identifier in c.content or identifier in c.section_title)),
        )
        out.append(Candidate(
            library=s.label, chunk_id=cid, doc_path=c.doc_path, doc_title=c.doc_title,
            section_title=c.section_title, content=c.content, tokens=c.tokens, url=c.url,
            score=fused[cid], verdict=judge(signals), signals=signals.as_dict(),
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
