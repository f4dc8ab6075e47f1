"""Every package's scores for a query: BM25 (`score_lexical`) and cosine z-scores
(`start_dense`), the first two steps of a search, each run once for all its packages.

BM25: the packages with our index are scored in one pass over all their postings
(`bm25.score_packages`), the others as FTS5 ranks them. Cosines: with many vectors they run
in a helper thread (a matrix product releases the GIL) while this thread ranks by BM25; on a
second core they cost no time. A package that fails in either is dropped from the run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import ModelUnavailable
from .dense import DenseHits, stacked, standardise
from .lexical import LexicalHits, term_weights
from .quality import MixedHits
from .spelling import corrections

if TYPE_CHECKING:
    import numpy as np

    from ..embed.model import Embedder
    from ..embed.quality import TextEmbedder
    from .bm25 import Posting
    from .dense import VectorIndex
    from .options import RankingParams
    from .query import Query
    from .run import PackageQuery, SearchRun
    from .searcher import PackageSearcher


def score_lexical(run: SearchRun, mode: str, pool: int) -> None:
    """Every live package's `lexical` hits for its question: those with our index scored
    together, in one pass over all their postings, the others as FTS5 ranks them (nothing
    ranked in dense mode, but the term statistics still made)."""
    from .bm25 import score_packages

    ours: list[tuple[PackageQuery, int, list[Posting | None]]] = []
    postings: list[tuple[PackageQuery, tuple[int, list[Posting | None]] | None]] = []
    for pq in run.live():
        with run.guard(pq):
            postings.append((pq, pq.searcher.bm25_postings(pq.query, with_phrases=mode != "dense")))
    held = {t for pq, found in postings if found is not None  # (a word some package holds is no typo)
            for t, unit in zip(pq.query.terms, found[1], strict=False) if unit is not None}
    for pq, found in postings:
        if pq.mode == "skipped":
            continue
        with run.guard(pq):
            if found is not None and (fixes := corrections(pq.query, found[1], pq.searcher.vocabulary, held)):
                pq.query = pq.query.with_words([fix for _, fix in fixes])  # (beside the words they correct)
                run.note_about(pq, "also searched for " + ", ".join(f"{fix!r} (for {word!r})" for word, fix in fixes))
                found = pq.searcher.bm25_postings(pq.query, with_phrases=mode != "dense")
            if found is not None:
                ours.append((pq, *found))
            else:
                pq.lexical = pq.searcher.fts_hits(pq.query, pool if mode != "dense" else 0)
    if not ours:
        return
    every = [[u.df if u is not None else 0 for u in units] for _, _, units in ours]
    dfs = [df[:len(pq.query.terms)] for (pq, _, _), df in zip(ours, every, strict=True)]
    weights = [term_weights(n, pq.query.terms, df) for (pq, n, _), df in zip(ours, dfs, strict=True)]
    scores = score_packages([(n, units, list(idf.values())) for (_, n, units), (idf, _) in zip(ours, weights, strict=True)],
                            pool if mode != "dense" else 0)
    bounds = scores.row.searchsorted(range(len(ours) + 1)).tolist()
    for k, ((pq, n, _), (idf, missing), df) in enumerate(zip(ours, weights, every, strict=True)):
        a, b = bounds[k], bounds[k + 1]
        # The prior reads the terms' and phrases' counts (`df` may also hold the joined words').
        units = [*pq.query.terms, *(" ".join(p) for p in pq.query.phrases)][:len(df)]
        pq.lexical = LexicalHits(scores.cid[a:b], scores.score[a:b], idf, missing, scores.matched_idf_of(k), (scores, k),
                                 dict(zip(units, df[:len(units)], strict=True)), n)


def pin_identifiers(run: SearchRun, text: str) -> None:
    """When the question is an identifier (`send_file`, `z.string`, `Session.request`), put
    the sections showing the entries it names in front of each package's BM25 ranking
    (`package.identifiers.identifier_chunks`: one indexed read of the package's symbols;
    nothing at all for a question of words)."""
    from ..package.identifiers import identifier, identifier_chunks
    from .candidates import pin

    if identifier(text) is None:
        return
    for pq in run.live():
        with run.guard(pq), pq.searcher.lock:
            pq.pinned = identifier_chunks(text, pq.searcher.pkg)
            hits = pq.lexical
            if pq.pinned and hits is not None:
                hits.ids, hits.scores = pin(hits.ids, hits.scores, pq.pinned)


def start_dense(query: Query, packages: list[PackageQuery], mode: str, params: RankingParams
                ) -> Callable[[PackageQuery], DenseHits | MixedHits | None]:
    """Start every package's cosines with the query; the result gives a package's (None: it
    is searched lexically), raising what went wrong with it.

    From `params.thread_rows` vectors in all, the packages' matrices are multiplied as one
    stack in a helper thread; a search that still has packages to load loads them there,
    one after another, overlapping the BM25 loads. Otherwise each package's are computed
    when asked."""
    if mode == "lexical":
        return lambda pq: None
    vectors: dict[int, np.ndarray] = {}  # the query's vector, per model
    rows = [pq.searcher.vector_rows for pq in packages]
    if None in rows:
        from .background import Pending, submit

        jobs = {id(pq): Pending(functools.partial(_dense_hits, pq.searcher, query, vectors, params.quality_share))
                for pq in packages}

        def load_all() -> None:
            for job in jobs.values():
                job.run()

        submit(load_all)
        return lambda pq: jobs[id(pq)]()
    if sum(r or 0 for r in rows) >= params.thread_rows and not any(pq.searcher.quality() for pq in packages):
        stack = _stacked(packages, query, params)
        if stack is not None:
            return stack
    return lambda pq: _dense_hits(pq.searcher, query, vectors, params.quality_share)


def _stacked(packages: list[PackageQuery], query: Query, params: RankingParams
             ) -> Callable[[PackageQuery], DenseHits | None] | None:
    """The loaded packages' cosines as one product in a helper thread (None: their models differ)."""
    from .background import submit

    dense = [pq.searcher.dense() for pq in packages]
    models = {id(d[0]): d[0] for d in dense if d is not None}
    if len(models) != 1:
        return None
    (model,) = models.values()
    stack = stacked([d[1] for d in dense if d is not None])
    qv = model.encode([query.text])[0].astype("float32")

    pending = submit(lambda: stack.matrix @ qv)  # the one step that releases the GIL throughout
    pending.begun(params.start_wait_s)

    @functools.cache
    def hits() -> dict[int, DenseHits | None]:
        # (A package's best cosines are its best z-scores: they are scaled by its mean and deviation.)
        found = iter(stack.top_k_per_package(pending(), params.pool))
        out: dict[int, DenseHits | None] = {}
        for pq, d in zip(packages, dense, strict=True):
            top = next(found) if d is not None else None
            out[id(pq)] = None if d is None or top is None else DenseHits(
                d[1], top.stats, model, top.best_cosine, top.first, (params.pool, top.ids, top.z))
        return out

    return lambda pq: hits()[id(pq)]


def _dense_hits(s: PackageSearcher, query: Query, vectors: dict[int, np.ndarray], share: float
                ) -> DenseHits | MixedHits | None:
    """The query's cosines with every section of the package (None: it is searched lexically),
    mixed with its quality set's when it carries one this machine can use (`quality.py`). A
    quality model that fails the query (an endpoint that stopped answering) is dropped for
    good, and the static cosines answer."""
    static = _cosines(s.dense(), query, vectors)
    found = s.quality()
    if found is None:
        return static
    try:
        quality = _cosines(found, query, vectors)
    except ModelUnavailable as e:
        s.use_static(str(e))
        return static
    return quality if static is None else MixedHits(static, quality, share)  # type: ignore[arg-type]


def _cosines(dense: tuple[Embedder | TextEmbedder, VectorIndex] | None, query: Query,
             vectors: dict[int, np.ndarray]) -> DenseHits | None:
    """One model's cosines of the query with its vectors, as z-scores (the query embedded
    once per model and search, in `vectors`)."""
    if dense is None:
        return None
    model, index = dense
    qv = vectors.get(id(model))
    if qv is None:
        qv = vectors[id(model)] = model.encode([query.text])[0].astype("float32")
    scores = index.scores(qv)
    return DenseHits(index, standardise(scores, [(0, len(scores))])[0], model,  # type: ignore[arg-type]
                     float(scores.max()) if len(scores) else 0.0, index.first)
