"""Hybrid search over one or many installed packages, answered as a context pack.

`answer` is the whole pipeline, one step a line: the question becomes a `Query`; each
package's BM25 and cosine z-scores are made, for all packages at once (`scoring.py`); they
are fused into one table of candidates (`candidates.py`), which the packages'
page and heading evidence fills in; the ranking rules order it (`rank.py`, stated plainly in
`reference.py` and docs/search.md); the pack is planned from sizes and made from the text of
the sections it takes (`pack.py`). A package that fails on the way is skipped (`run.py`).
The answer is typed (`answer.Answer`); docs/search.md describes every step and the JSON shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import ContextError
from .answer import Answer, Hit, Json
from .candidates import attach_evidence, fuse
from .options import DEFAULT_BUDGET, DEFAULT_LIMIT, DEFAULT_PARAMS, MAX_QUERY_CHARS, RankingParams, SearchOptions
from .pack import FILL_FLOOR, Candidate, pack, plan, read_sections, reading_order
from .query import EmptyQuery, Query, check_text
from .rank import Ranking, package_priors, rank_candidates
from .run import READING, SearchRun
from .scoring import pin_identifiers, score_lexical, start_dense
from .verdict import nothing_matched, overall

if TYPE_CHECKING:
    from ..store.store import Installed
    from .searcher import PackageSearcher

__all__ = ["DEFAULT_BUDGET", "DEFAULT_LIMIT", "MAX_QUERY_CHARS", "EmptyQuery", "RankingParams", "SearchOptions",
           "answer", "check_text", "rank", "search"]


def answer(text: str, packages: Iterable[Installed], opts: SearchOptions | None = None) -> Answer:
    """Search `packages` for `text` and pack the best sections into the budget."""
    opts = opts or SearchOptions()
    query = Query.parse(text)  # EmptyQuery, text that is not Unicode; cut at MAX_QUERY_CHARS
    if opts.budget < 1 or opts.limit < 1:
        raise ContextError("budget and limit must be positive")
    run = SearchRun.open(packages, query, warm=opts.warm)  # one searcher a package, each one's question
    ranking = ranked(query, run, opts)
    chosen = [] if nothing_matched(run) else build_pack(ranking.without_filler(FILL_FLOOR), query, run, opts)
    run.note_docs_cover({c.library for c in chosen})  # docs not exact to the version say so
    return make_answer(query, run, chosen, opts)


def ranked(query: Query, run: SearchRun, opts: SearchOptions) -> Ranking:
    """Every package's judged candidates, ranked together, before any text is read."""
    params, mode = opts.params, opts.mode
    if not query.terms:
        run.note("the query has no searchable words")
        return Ranking.empty()
    dense = start_dense(query, run.live(), mode, params)  # past `thread_rows` vectors: in a helper thread
    score_lexical(run, mode, params.pool)  # meanwhile, BM25: every package's `lexical`
    if mode != "dense":
        pin_identifiers(run, query.text)  # an identifier question: its entries' sections in front
    for pq in run.live():
        with run.guard(pq):
            pq.dense = dense(pq)  # each package's cosines as z-scores (None: searched lexically)
        run.searched(pq, mode)
    head = params.judged_per_package(len(run.packages))
    candidates = fuse(run.live(), params.page_pool * head, params)
    candidates = attach_evidence(candidates, run, params)  # pages, sizes, coverage, headings, titles
    priors = package_priors(candidates.packages, len(run.packages), params) if len(run.packages) > 1 else None
    return rank_candidates(candidates, priors, head, params)


def build_pack(ranking: Ranking, query: Query, run: SearchRun, opts: SearchOptions) -> list[Candidate]:
    """The pack, planned from the sections' sizes and made from the text of the chosen ones
    only. Reading only those gives the pack that every ranked section's text gives, unless
    the first must be trimmed or a text is not as long as its size said: then it is made
    from every ranked section's text. A package that fails while its text is read is dropped,
    and the pack planned again without it."""
    run.phase = READING
    live = len(run.live())
    ranks = plan(ranking, query, opts.budget, opts.limit)
    chosen = read_sections(ranking, ranks if ranks is not None else range(len(ranking)), query, run)
    chars = ranking.column("chars")
    if ranks is not None and len(run.live()) == live and any(
            len(c.content) != chars[k] for c, k in zip(chosen, ranks, strict=False)):
        chosen = read_sections(ranking, range(len(ranking)), query, run)
    if len(run.live()) < live:
        return build_pack(ranking.without_skipped(), query, run, opts)
    return pack(chosen, opts.budget, opts.limit)


def make_answer(query: Query, run: SearchRun, chosen: list[Candidate], opts: SearchOptions) -> Answer:
    tokens = sum(c.tokens for c in chosen)
    one = run.packages[0].searcher if len(run.packages) == 1 else None
    return Answer(
        query=query.text, budget=opts.budget, tokens=tokens,
        saved_percent=_saved(run, chosen, tokens),
        verdict=overall([c.verdict for c in chosen]),
        results=[Hit(rank=i, library=c.library, title=c.title, content=c.content, source=c.doc_path,
                     url=c.url, tokens=c.tokens, score=c.score, verdict=c.verdict, signals=c.signals, page=page)
                 for i, (c, page) in enumerate(reading_order(chosen), start=1)],
        searched=run.modes, notes=run.notes,
        library=one.label if one else None, version=one.pkg.version if one else None,
    )


def search(text: str, packages: Iterable[Installed], opts: SearchOptions | None = None) -> Json:
    """The answer in its JSON form (what `context search --format json` prints)."""
    return answer(text, packages, opts).to_dict()


def rank(text: str, searchers: list[PackageSearcher], mode: str = "hybrid", params: RankingParams = DEFAULT_PARAMS
         ) -> tuple[list[Candidate], list[str], dict[str, str]]:
    """All judged candidates across packages with their text, best first, plus notes and
    per-package modes (the text searched as it is: benchmarks and tests ask this)."""
    query = Query.of(text)
    run = SearchRun.of(searchers, query)
    ranking = ranked(query, run, SearchOptions(mode=mode, params=params))
    run.phase = READING
    return read_sections(ranking, range(len(ranking)), query, run), run.notes, run.modes


def _saved(run: SearchRun, chosen: list[Candidate], tokens: int) -> float:
    """How much smaller the pack is than reading every page it draws from, whole."""
    by_label = {pq.label: pq.searcher for pq in run.packages}
    whole = 0
    for library in {c.library for c in chosen}:
        paths = sorted({c.doc_path for c in chosen if c.library == library})
        whole += by_label[library].page_tokens(paths)
    if whole <= 0:
        return 0.0
    return round(max(0.0, 1 - tokens / whole), 2)
