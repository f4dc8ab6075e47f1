"""Every package's candidate sections for one query, as one table of columns.

`fuse` makes the table from each package's two rankings (BM25's and the cosines'): one row
per candidate, with its package, chunk id and fused score. `attach_evidence` then adds what
the packages say of their candidates: each one's page, whether the package has it, its
text's length, its share of the query (coverage) and its heading's gain, and each page's
path and title match. `rank.rank_candidates` reads the table and orders it; nothing copies it.

Rows are grouped by package, each package's in the order its candidates were found in (its
BM25 ranking, then the cosines' new ones; best first where `fuse` cut them): ties fall in
that order, as the rules (`reference.py`) have them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .groups import rank_within_group, stable_group_order

if TYPE_CHECKING:
    import numpy as np

    from .options import RankingParams
    from .query import Query
    from .run import PackageQuery, SearchRun
    from .searcher import PackageSearcher

# One package's two rankings of a query, best first: BM25's (chunk ids, scores) and the
# cosines' (chunk ids, each once, and their z-scores).
Rankings = tuple["np.ndarray", "np.ndarray", "np.ndarray", "np.ndarray"]


@dataclass(eq=False, repr=False)
class Candidates:
    """One row per candidate: package `p`'s rows are `[bounds[p], bounds[p + 1])`."""

    packages: Sequence[Any]  # the packages fused (`run.PackageQuery`): `package` indexes them
    package: np.ndarray  # int64
    chunk_id: np.ndarray  # int64
    fused: np.ndarray  # float64: the fused score
    bounds: list[int]
    # Filled in by `attach_evidence`:
    page: np.ndarray = field(default=None)  # type: ignore[arg-type]  # int64, numbered across the packages
    in_package: np.ndarray = field(default=None)  # type: ignore[arg-type]  # bool: the package has the section
    chars: np.ndarray = field(default=None)  # type: ignore[arg-type]  # int64: its text's length
    coverage: np.ndarray = field(default=None)  # type: ignore[arg-type]  # float64: its share of the query's IDF
    heading_gain: np.ndarray = field(default=None)  # type: ignore[arg-type]  # float64 (`evidence.heading_matcher`)
    paths: list[str] = field(default_factory=list)  # per page
    title_match: np.ndarray = field(default=None)  # type: ignore[arg-type]  # float64 per page (`evidence.title_matcher`)
    page_weight: np.ndarray | None = None  # float64 per page: its kind's weight (`reference.page_kind(_weight)`)
    closeness: np.ndarray | None = None  # float64 per page: how close it is as a whole (`closeness.closeness`)

    def chunk_ids_of(self, p: int) -> np.ndarray:
        """Package `p`'s candidates' chunk ids."""
        return self.chunk_id[self.bounds[p]:self.bounds[p + 1]]

    def rows_of(self, packages: Sequence[int]) -> np.ndarray:
        """Where these packages' candidates are in the table, in order."""
        import numpy as np

        return _joined([np.arange(self.bounds[p], self.bounds[p + 1]) for p in packages], np.int64)


def pin(ids: np.ndarray, scores: np.ndarray, pinned: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """A BM25 ranking with the sections an identifier question names in front, at its best
    score (`reference.identifier_first`)."""
    import numpy as np

    if not pinned:
        return ids, scores
    first = np.asarray(pinned, dtype=np.int64)
    rest = ~np.isin(ids, first)
    top = float(scores[0]) if len(scores) else 1.0
    return np.concatenate((first, ids[rest])), np.concatenate((np.full(len(first), top), scores[rest]))


def identifier_gains(cids: np.ndarray, pinned: Sequence[int], weight: float) -> np.ndarray:
    """What each of a package's candidates gains for showing an entry the identifier question
    names: `weight` x (their count - its place among them)."""
    import numpy as np

    gain = np.zeros(len(cids))
    for k, cid in enumerate(pinned):
        gain[cids == cid] = weight * (len(pinned) - k)
    return gain


def fuse(packages: Sequence[PackageQuery], cap: int, params: RankingParams) -> Candidates:
    """The candidates of these packages (their `lexical` and `dense` hits), each package's
    `cap` best by fused score (`fuse_rankings`)."""
    import numpy as np

    rankings = []
    for pq in packages:
        dense_ids, dense_z = pq.dense.top(params.pool) if pq.dense is not None else (np.zeros(0, dtype=np.int64),
                                                                                    np.zeros(0))
        lexical = pq.lexical
        assert lexical is not None
        rankings.append((lexical.ids, lexical.scores, dense_ids, dense_z))
    return fuse_rankings(rankings, packages, cap, params)


def fuse_rankings(rankings: Sequence[Rankings], packages: Sequence[Any], cap: int, params: RankingParams) -> Candidates:
    """Each package's BM25 (scaled by its best score) mixed with its cosine z-scores (capped
    at `z_cap`, scaled), all packages at once; a package with more than `cap` candidates keeps
    its `cap` best.

    Measured against reciprocal rank fusion on three question sets, this score fusion was
    the only variant that beat BM25 alone on all of them: the static model is much weaker
    than BM25, and RRF gives its ranks as much say as BM25's. A package with only one
    ranking gets that ranking at full weight, so it competes fairly in a mixed search.
    """
    import numpy as np

    n_lex = [len(r[0]) for r in rankings]
    n_dense = [len(r[2]) for r in rankings]
    w_lex = [params.lexical_weight if a and b else 1.0 for a, b in zip(n_lex, n_dense, strict=True)]
    w_dense = [1.0 - w if a else 1.0 for w, a in zip(w_lex, n_lex, strict=True)]
    top = [(float(r[1][0]) or 1.0) if len(r[1]) else 1.0 for r in rankings]
    one = len(rankings) == 1  # (one package: no package keys to carry or group by)
    if one:
        lex_ids, lex_scores, dense_ids, z = rankings[0]
        lex = w_lex[0] * lex_scores / top[0]
        pkg_lex = pkg_dense = np.zeros(0, dtype=np.int64)
    else:
        every = np.arange(len(rankings))
        pkg_lex, pkg_dense = every.repeat(n_lex), every.repeat(n_dense)
        lex_ids, dense_ids = _joined([r[0] for r in rankings], np.int64), _joined([r[2] for r in rankings], np.int64)
        lex = np.array(w_lex).repeat(n_lex) * _joined([r[1] for r in rankings], np.float64) / np.array(top).repeat(n_lex)
        z = _joined([r[3] for r in rankings], np.float64)
    z_cap = params.z_cap
    z = np.where(z > z_cap, z_cap, np.where(z > 0.0, z, 0.0))  # (NaN: 0, as `z > 0` is false)
    dense = (w_dense[0] if one else np.array(w_dense).repeat(n_dense)) * z / z_cap
    # A chunk both rankings found gets the cosine's part added to its BM25 part.
    lex_key, dense_key = (lex_ids, dense_ids) if one else _keys(pkg_lex, lex_ids, pkg_dense, dense_ids)
    by_key = lex_key.argsort()
    at = lex_key[by_key].searchsorted(dense_key).clip(0, max(len(lex_key) - 1, 0))
    both = lex_key[by_key][at] == dense_key if len(lex_key) else np.zeros(len(dense_key), dtype=bool)
    lex[by_key[at[both]]] += dense[both]
    alone = ~both
    # Each package's candidates in the order found: its BM25 ranking, then the cosines' new ones.
    cid = np.concatenate((lex_ids, dense_ids[alone]))
    value = np.concatenate((lex, dense[alone]))
    if one:
        if len(cid) > cap:  # its `cap` best, best first (ties in the order found)
            best = (-value).argsort(kind="stable")[:cap]
            cid, value = cid[best], value[best]
        return Candidates(packages, np.zeros(len(cid), dtype=np.int64), cid, value, [0, len(cid)])
    pkg = np.concatenate((pkg_lex, pkg_dense[alone]))
    o = stable_group_order(pkg, groups=len(rankings))
    pkg, cid, value = pkg[o], cid[o], value[o]
    counts = np.bincount(pkg, minlength=len(rankings))
    cut = counts > cap
    if cut.any():  # those packages keep their `cap` best, best first (ties in the order found)
        best = stable_group_order(pkg, (-value).argsort(kind="stable"), len(rankings))
        kept = best[cut[pkg[best]] & (rank_within_group(pkg[best], counts) < cap)]
        o = stable_group_order(pkg, np.concatenate((kept, (~cut[pkg]).nonzero()[0])), len(rankings))
        pkg, cid, value = pkg[o], cid[o], value[o]
        counts = np.minimum(counts, cap)
    return Candidates(packages, pkg, cid, value, [0, *counts.cumsum().tolist()])


def attach_evidence(c: Candidates, run: SearchRun, params: RankingParams) -> Candidates:
    """The candidates with what their packages say of them: each package's section table
    (`PackageSearcher.section_table`: all its sections when warm, these when cold), heading
    gains, title matcher, pages' kinds and pages' closeness, then every candidate's page and
    size looked up at once. The rows of a package that fails are left out (it is dropped from
    the run)."""
    import numpy as np

    from .closeness import closeness, page_rows
    from .evidence import title_matcher
    from .reference import page_kind_weight, upgrade_guides
    from .sections import no_sections, section_tables

    gain = np.zeros(len(c.chunk_id))
    tables, matchers, kinds, near = [], [], [], []
    for p, pq in enumerate(c.packages):
        a, b = c.bounds[p], c.bounds[p + 1]
        table, match, kind, rows = no_sections(), None, {}, None
        with run.guard(pq):
            table = pq.searcher.section_table(c.chunk_id[a:b])
            _heading_gains(pq.searcher, pq.query, c.chunk_id[a:b], gain[a:b], params)
            if pq.pinned:
                gain[a:b] += identifier_gains(c.chunk_id[a:b], pq.pinned, params.identifier_weight)
            kind = pq.searcher.page_kinds()
            if params.page_closeness_weight and pq.dense is not None:
                rows = page_rows(pq.searcher.page_spans(), pq.dense)
            match = title_matcher(pq.lexical.idf, pq.query.stems.per_term)
        tables.append(table if match is not None else no_sections())
        matchers.append(match)
        kinds.append(kind)
        near.append(rows)
    every = section_tables(tables)
    values, starts = closeness([rows for rows in near if rows is not None], params.z_cap)  # (all packages at once)
    begins = iter(starts)
    near_pages = [None if rows is None else (rows[0].at, next(begins)) for rows in near]
    page, found, chars = every.lookup(c.package, c.chunk_id)
    title, weight, near_page = np.zeros(len(every.paths)), np.ones(len(every.paths)), np.zeros(len(every.paths))
    close_pages: list[int] = []
    close_rows: list[int] = []
    tokens, owner, paths = every.tokens, every.owner, every.paths
    found_pages = set(page.tolist())
    upgrades = upgrade_guides(map(paths.__getitem__, found_pages))  # (nearly always none)
    for at in found_pages:
        match = matchers[owner[at]]
        if match is not None and (value := match(tokens[at])):  # (most pages: none of the query's words)
            title[at] = value
        found_kinds = kinds[owner[at]]
        if ((found_kinds and (weighed := found_kinds.get(paths[at])) is not None)  # (a package of guides only, a guide)
                or (upgrades and (weighed := upgrades.get(paths[at])) is not None)):
            q = c.packages[owner[at]].query
            weight[at] = page_kind_weight(weighed, q.asks_changes, q.names_symbol, params)
        if (pages := near_pages[owner[at]]) is not None and (k := pages[0].get(paths[at])) is not None:
            close_pages.append(at)
            close_rows.append(pages[1] + k)
    near_page[close_pages] = values[close_rows]
    out = replace(c, page=page, in_package=found, chars=chars, coverage=_coverage(c), heading_gain=gain,
                  paths=every.paths, title_match=title, page_weight=weight, closeness=near_page)
    failed = [p for p, match in enumerate(matchers) if match is None]
    return out if not failed else _without(out, failed)


def _heading_gains(searcher: PackageSearcher, query: Query, cids: np.ndarray, gain: np.ndarray,
                   params: RankingParams) -> None:
    """Fill in what each of the package's candidates gains for its own heading:
    `definition_weight` when the query asks what something is, else `heading_weight`, for a
    heading that is exactly the query's subject (`evidence.heading_matcher`)."""
    from .evidence import filler_tokens, heading_matcher

    stems = query.stems
    if not stems.terms or not len(cids):
        return
    ids = cids.tolist()
    heading = searcher.in_titles(stems.terms, ids)  # only a section whose title holds every term can
    if heading:
        weight = params.definition_weight if query.asks_definition else params.heading_weight
        gains = heading_matcher(stems.terms, stems.every, searcher.heading_tokens(heading, stems.terms), filler_tokens(),
                                weight)
        at = {cid: i for i, cid in enumerate(ids)}
        for cid in heading:
            gain[at[cid]] = gains(cid)


def _coverage(c: Candidates) -> np.ndarray:
    """Every candidate's share of its package's query IDF (`LexicalHits.coverage`): all at
    once when every package was scored in one pass (`scoring.score_lexical`)."""
    import numpy as np

    hits = [pq.lexical for pq in c.packages]
    scored = [h.scored for h in hits]
    if scored and all(s is not None and s[0] is scored[0][0] for s in scored):
        totals = np.array([sum(h.idf.values()) for h in hits])[c.package]
        rows = np.array([s[1] for s in scored])[c.package]
        sums = scored[0][0].matched_idf_at(rows, c.chunk_id)
        return np.divide(sums, totals, out=np.zeros(len(sums)), where=totals > 0)  # type: ignore[no-any-return]
    return _joined([h.coverage(c.chunk_ids_of(p)) for p, h in enumerate(hits)], np.float64)


def _without(c: Candidates, packages: list[int]) -> Candidates:
    """The table less these packages' rows (their bounds left empty)."""
    import numpy as np

    keep = c.rows_of([p for p in range(len(c.packages)) if p not in packages])
    counts = np.bincount(c.package[keep], minlength=len(c.packages))
    return replace(c, package=c.package[keep], chunk_id=c.chunk_id[keep], fused=c.fused[keep],
                   bounds=[0, *counts.cumsum().tolist()], in_package=c.in_package[keep], page=c.page[keep],
                   chars=c.chars[keep], coverage=c.coverage[keep], heading_gain=c.heading_gain[keep])


def _keys(pkg_a: np.ndarray, cid_a: np.ndarray, pkg_b: np.ndarray, cid_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One int64 per (package, chunk id) of two sets of candidates, equal where both are."""
    import numpy as np

    cids = np.concatenate((cid_a, cid_b))
    if not len(cids):
        return cid_a, cid_b
    low, high = int(cids.min()), int(cids.max())
    span = high - low + 1
    if span * (int(max(pkg_a.max(initial=0), pkg_b.max(initial=0))) + 1) >= 2 ** 62:  # (ids no package of ours has)
        _, cids = np.unique(cids, return_inverse=True)
        low, span = 0, len(cids)
        cid_a, cid_b = cids[:len(cid_a)], cids[len(cid_a):]
    return pkg_a * span + (cid_a - low), pkg_b * span + (cid_b - low)


def _joined(parts: Sequence[np.ndarray], dtype: type) -> np.ndarray:
    """The arrays one after another, as `dtype` (an empty array of it when there are none)."""
    import numpy as np

    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)
