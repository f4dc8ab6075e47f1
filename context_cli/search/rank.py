"""The ranking's rules, applied to every package's candidates at once, as arrays.

The rules are stated once in plain Python in `reference.py` (and in prose in docs/search.md);
this module must give exactly their ranking, to the last bit (tests/test_search_rank.py
draws rankings full of ties, and bench/dump_answers.py holds the whole search to its dumped
answers). A change to a rule changes `reference.py`, docs/search.md and the function here
named for it, in one commit.

A section's final score, in a search over packages P (`Candidates` holds its inputs):

    total   = (fused + page_bonus(page) + heading_gain) x kind_weight(page)   (`page_scores`)
    final   = total x cross_package_factor(page, package)           (`cross_package_factor`; only when |P| > 1)

    fused   = w_lex x bm25 / best bm25 + w_dense x min(max(z, 0), z_cap) / z_cap   (`candidates.fuse`)
    page_bonus(page) = 0.25 x its 2nd best fused + 0.1 x its 3rd + 0.4 x its title match + 0.4 x its closeness
    kind_weight(page) = 0.5 for release notes and upgrade guides unless the question asks about changes, else 1
    cross_package_factor = (0.5 + 0.5 x round(best coverage on the page, 3)) x package_prior(package)
    package_prior = exp(3 x (the package's best cosine - the best package's))      (`package_priors`)

Which sections are judged: each package's best `head` by total, then the best section of up
to `more_pages` pages not among them (`more_pages`); a candidate the package lacks is dropped.
The judged are ordered by final score; ties fall by package, then chunk id.

A numpy call costs a few microseconds whatever its size, so each rule is a handful of calls
for all the packages, never one per package or per candidate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .groups import rank_within_group, stable_group_order

if TYPE_CHECKING:
    import numpy as np

    from .candidates import Candidates
    from .options import RankingParams
    from .run import PackageQuery


def rank_candidates(c: Candidates, priors: Sequence[float] | None, head: int, params: RankingParams) -> Ranking:
    """The judged candidates, best first: each package's best `head` and the best section of up
    to `more_pages` more pages, weighed across packages by `priors` when given (one per
    package of `c`)."""
    import numpy as np

    pkg, cid, page = c.package, c.chunk_id, c.page
    groups = len(c.packages)
    total = page_scores(c.fused, page, c.title_match[page], c.heading_gain, params,
                        c.page_weight[page] if c.page_weight is not None else None,
                        c.closeness[page] if c.closeness is not None else None)
    # Each package's best first (ties: the order found), then the judged of those.
    best = stable_group_order(pkg, (-total).argsort(kind="stable"), groups)
    chosen = best[more_pages(pkg[best], page[best], head, params.more_pages)]
    chosen = chosen[c.in_package[chosen]]  # (a vector or index row without a section)
    # Each package's in chunk id order, so that ties across the whole ranking fall as always.
    chosen = stable_group_order(pkg, chosen[cid[chosen].argsort(kind="stable")], groups)
    final = total[chosen]
    if priors is not None:
        final = final * cross_package_factor(page[chosen], c.coverage[chosen], np.asarray(priors)[pkg[chosen]])
    final = np.where(np.isfinite(final), final, 0.0)  # a hostile package's NaN must not scramble the ranking
    o = (-final).argsort(kind="stable")
    return Ranking(c, chosen[o], final[o])


class Ranking:
    """The judged candidates, best first: rows of `candidates` and their final scores. Read as
    columns of plain values (`column`), since a pack plans from sizes and takes a dozen of the
    couple of hundred."""

    __slots__ = ("candidates", "rows", "score", "_columns")

    def __init__(self, candidates: Candidates | None, rows: np.ndarray, score: np.ndarray) -> None:
        self.candidates, self.rows, self.score = candidates, rows, score  # int64 rows, best first; float64 scores
        self._columns: dict[str, list] = {}  # type: ignore[type-arg]

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> list:  # type: ignore[type-arg]
        """A column of the candidates (`package`, `chunk_id`, `chars`, `coverage`), or `score` or
        `path`, in rank order, as a list."""
        found = self._columns.get(name)
        if found is None:
            c = self.candidates
            if name == "score":
                found = self.score.tolist()
            elif name == "path":
                found = [c.paths[p] for p in c.page[self.rows].tolist()] if c is not None else []
            else:
                found = getattr(c, name)[self.rows].tolist() if c is not None else []
            self._columns[name] = found
        return found

    def without_skipped(self) -> Ranking:
        """The ranking less the candidates of packages skipped since it was made."""
        import numpy as np

        c = self.candidates
        if c is None:
            return self
        gone = [p for p, pq in enumerate(c.packages) if pq.mode == "skipped"]
        keep = ~np.isin(c.package[self.rows], gone)
        return Ranking(c, self.rows[keep], self.score[keep])

    def without_filler(self, fraction: float) -> Ranking:
        """The ranking less the candidates that hold none of the question's words and score
        under `fraction` of the best."""
        c = self.candidates
        if c is None or not len(self.rows) or self.score.max() <= 0:
            return self
        keep = (self.score >= fraction * self.score.max()) | (c.coverage[self.rows] > 0)
        return self if keep.all() else Ranking(c, self.rows[keep], self.score[keep])

    @classmethod
    def empty(cls) -> Ranking:
        import numpy as np

        return cls(None, np.zeros(0, dtype=np.int64), np.zeros(0))


def package_priors(packages: Sequence[PackageQuery], searched: int, params: RankingParams) -> list[float]:
    """Each package's weight in a search over several: exp(package_prior x (its best cosine
    with the query - the best package's)), when every package searched (`searched` of them;
    one that failed has none) has usable vectors of one model; else all 1.0.

    Every package's scores are relative to its own best hit, so each one offers a "best"
    section, whether it is about the question or not. The cosines are not relative: a
    question about Flask comes closer to some Flask section than to any of Click's. BM25
    scores, whose IDF is each package's own, cannot say this. (The nine question sets, each
    searched over all nine packages: page MRR 0.69 without it, 0.72 with it, 0.82 for each
    package searched alone; bench/retrieval.py --together.)"""
    from .prior import log_weights, weights

    lexical = [pq.lexical for pq in packages]
    found = [pq.searcher.mean_section_tokens() for pq in packages] if params.vocabulary_prior else []
    lengths = [n for n in found if n is not None]
    prior = [1.0] * len(packages) if any(h is None for h in lexical) else weights(log_weights(
        [pq.named for pq in packages], [h.df for h in lexical if h is not None],
        [h.sections for h in lexical if h is not None], lengths if len(lengths) == len(found) else None,
        params.name_prior, params.vocabulary_prior))
    dense = [pq.dense for pq in packages]
    usable = [d for d in dense if d is not None and d.usable]
    if searched < 2 or len(usable) < searched or len({id(d.model) for d in usable}) > 1:
        return prior
    top = max(d.best_cosine for d in usable)
    return [math.exp(params.package_prior * (d.best_cosine - top)) * w for d, w in zip(usable, prior, strict=True)]


def page_scores(score: np.ndarray, page: np.ndarray, title: np.ndarray, gain: np.ndarray, params: RankingParams,
                kind: np.ndarray | None = None, closeness: np.ndarray | None = None) -> np.ndarray:
    """Every candidate section's score with its page's evidence added, times its page's kind
    weight (`kind`, per candidate: `reference.page_kind_weight` of its page's `page_kind`).

    A page scores its best section, a share of its next ones (`next_sections`), how much of
    the query its title and path carry (`title`, each candidate's page's `title_matcher`
    value) and how close the page is as a whole (`closeness`, each candidate's page's
    `closeness.closeness`; none when None); each section keeps its own score plus what
    its page offers beyond its best section, so a section of a page about the topic rises
    above a stray mention while sections of different pages stay comparable. `gain` is what each section gains for its
    own heading (`heading_matcher`). All arrays are per candidate; `page` numbers the pages
    from 0 (a page of one package is one number).
    """
    import numpy as np

    counts = np.bincount(page)
    o = stable_group_order(page, (-score).argsort(kind="stable"), len(counts))  # each page's sections, best first
    by_page, ranked = page[o], score[o]
    place = rank_within_group(by_page, counts)
    extra = np.zeros(len(counts))
    for k, weight in enumerate(params.next_sections, start=1):  # the 2nd's share, then the 3rd's added to it
        at = place == k
        extra[by_page[at]] += weight * ranked[at]  # (each page once: no repeated index)
    bonus = extra[page] + params.title_weight * title
    if closeness is not None:
        bonus += params.page_closeness_weight * closeness
    total = score + bonus + gain
    return total if kind is None else total * kind  # type: ignore[no-any-return]


def more_pages(pkg: np.ndarray, page: np.ndarray, head: int, extra: int) -> np.ndarray:
    """Which candidates are judged, of each package's best first (`pkg` and `page` of each, so
    grouped by package): its best `head`, then the best section of up to `extra` pages not
    among them.

    One long page with many matching sections (a 120-section API reference whose every
    section names the query's word) can fill every judged slot, and the page about the topic,
    second best, then never reaches the answer. Its best section, after the others, keeps it
    in the ranking without reordering what came before.
    """
    import numpy as np

    judged = rank_within_group(pkg, np.bincount(pkg)) < head
    pages = int(page.max()) + 1 if len(page) else 0
    seen = np.zeros(pages, dtype=bool)
    seen[page[judged]] = True
    rest = (~judged).nonzero()[0]
    rest_pages = page[rest]
    first = np.full(pages, len(page))
    np.minimum.at(first, rest_pages, rest)
    new = (first[rest_pages] == rest) & ~seen[rest_pages]  # a page's best among the rest, not judged yet
    so_far = new.cumsum()
    before = np.concatenate(([0], so_far))[pkg[rest].searchsorted(pkg[rest])]  # (at its package's first)
    judged[rest[new & (so_far - before <= extra)]] = True
    return judged


def cross_package_factor(page: np.ndarray, coverage: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Each candidate's factor in a search over several packages: (0.5 + 0.5 x the highest
    coverage among its page's judged sections, to 3 places, as this rule was tuned) x its
    package's weight (`package_priors`).

    Fused scores are scaled per package (its best BM25 hit is 1.0), so across packages they
    are damped by how much of the query a page actually covers."""
    import numpy as np

    pages = int(page.max()) + 1 if len(page) else 0
    best = np.zeros(pages)
    np.fmax.at(best, page, coverage)  # (fmax: a NaN coverage counts as none, as `max` skips it)
    used = np.zeros(pages, dtype=bool)
    used[page] = True
    at = used.nonzero()[0]
    rounded = np.zeros(pages)
    rounded[at] = round3(best[at])
    return (0.5 + 0.5 * rounded[page]) * weight  # type: ignore[no-any-return]


def round3(values: np.ndarray) -> np.ndarray:
    """Python's `round(x, 3)` of each value (correctly rounded: the double nearest the exact
    value's 3-place decimal, ties to even), without a Python call each.

    numpy's `rint(x * 1000) / 1000` is that same double unless x * 1000 lies within 1e-6 of
    a half, where its product's error (< 1e-13) could put it on the other side: those few
    are rounded by Python. (A call each cost 2,000 instructions of `snprintf` a page.)"""
    import numpy as np

    scaled = values * 1000
    out = np.rint(scaled) / 1000
    with np.errstate(invalid="ignore"):  # (an infinite or NaN value: numpy's is Python's)
        near = np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6
    if near.any():
        out[near] = [round(x, 3) for x in values[near].tolist()]
    return out  # type: ignore[no-any-return]
