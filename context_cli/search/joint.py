"""Every package's candidates ranked together, as arrays.

A search over ten packages once ranked each package's hundred candidates in Python, one
package after another (≈ 0.2 ms of dicts and lists each). The same steps run here once
over all the packages' candidates as numpy arrays: fusion (`fuse`), then, once each
package has told its candidates' pages, headings and coverage (`Evidence`), page evidence,
the extra pages, the damping across packages and the final order (`order`). A numpy call
costs a few microseconds whatever its size, so each step is a handful of calls for all the
packages, never one per package or per candidate.

Each step adds the same floats in the same order as the per-section rules of
docs/search.md, and ties fall as they always have: within a package by the order its
candidates were found in (BM25's order, then the cosines'), across packages by package
and then chunk id. So the ranking is the one those rules give, to the last bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .pages import more_pages, page_scores
from .runs import grouped, ranks_in

if TYPE_CHECKING:
    import numpy as np

    from .options import RankingParams


@dataclass
class Found:
    """One package's two rankings of a query, best first: BM25 and cosine z-scores."""

    lex_ids: np.ndarray  # int64 chunk ids
    lex_scores: np.ndarray  # float64
    dense_ids: np.ndarray  # int64, each once
    dense_z: np.ndarray  # float64


@dataclass
class Fused:
    """All packages' fused candidates: package `p`'s are `[bounds[p], bounds[p + 1])`, in the
    order their ties fall (the order they were found in; best first where `fuse` cut them)."""

    pkg: np.ndarray  # int64 package index
    cid: np.ndarray  # int64
    score: np.ndarray  # float64
    bounds: list[int]

    def of(self, p: int) -> np.ndarray:
        """Package `p`'s candidate chunk ids."""
        return self.cid[self.bounds[p]:self.bounds[p + 1]]

    def places(self, packages: Sequence[int]) -> np.ndarray:
        """Where these packages' candidates are in the arrays, in order."""
        import numpy as np

        return _joined([np.arange(self.bounds[p], self.bounds[p + 1]) for p in packages], np.int64)


@dataclass
class PackageEvidence:
    """What one package says of its fused candidates (arrays in `Fused` order): each one's
    page (numbered from 0 within the package; pages are told apart by path), whether the
    package has the section at all, its text's length, its heading's gain and its coverage
    of the query; and each page's path and title match (`pages.title_matcher`)."""

    page: np.ndarray  # int64
    found: np.ndarray  # bool
    chars: np.ndarray  # int64
    gain: np.ndarray  # float64
    coverage: np.ndarray  # float64
    paths: list[str]
    title: np.ndarray  # float64, per page


@dataclass
class Evidence:
    """The same of all packages' candidates at once: the candidates `at` (indices into `Fused`:
    those of the packages that answered), each one's page numbered across the packages, and
    every page's path and title match."""

    at: np.ndarray  # int64
    page: np.ndarray  # int64
    found: np.ndarray  # bool
    chars: np.ndarray  # int64
    gain: np.ndarray  # float64
    coverage: np.ndarray  # float64
    paths: list[str]  # per page
    title: np.ndarray  # float64, per page

    @classmethod
    def joined(cls, fused: Fused, parts: Sequence[PackageEvidence | None]) -> Evidence:
        """The packages' evidence one after another (a package without any failed: its
        candidates are left out)."""
        import numpy as np

        at = fused.places([p for p, e in enumerate(parts) if e is not None])
        es = [e for e in parts if e is not None]
        base = np.cumsum([0] + [len(e.paths) for e in es])
        page = _joined([e.page for e in es], np.int64) + np.repeat(base[:-1], [len(e.page) for e in es])
        return cls(at=at, page=page, found=_joined([e.found for e in es], np.bool_),
                   chars=_joined([e.chars for e in es], np.int64), gain=_joined([e.gain for e in es], np.float64),
                   coverage=_joined([e.coverage for e in es], np.float64), paths=[p for e in es for p in e.paths],
                   title=_joined([e.title for e in es], np.float64))


@dataclass
class Ranked:
    """The judged candidates of all packages, best first: indices into `Fused`, and each
    one's final score, page path, text length and coverage."""

    at: np.ndarray  # int64 indices into the fused arrays
    score: np.ndarray
    path: list[str]
    chars: np.ndarray
    coverage: np.ndarray


def fuse(found: Sequence[Found], cap: int, params: RankingParams) -> Fused:
    """Each package's BM25 (scaled by its best score) mixed with its cosine z-scores (capped
    at `z_cap`, scaled), all packages at once; a package with more than `cap` candidates keeps
    its `cap` best.

    Measured against reciprocal rank fusion on three question sets, this score fusion was
    the only variant that beat BM25 alone on all of them: the static model is much weaker
    than BM25, and RRF gives its ranks as much say as BM25's. A package with only one
    ranking gets that ranking at full weight, so it competes fairly in a mixed search.
    """
    import numpy as np

    n_lex = [len(f.lex_ids) for f in found]
    n_dense = [len(f.dense_ids) for f in found]
    w_lex = [params.lexical_weight if a and b else 1.0 for a, b in zip(n_lex, n_dense, strict=True)]
    w_dense = [1.0 - w if a else 1.0 for w, a in zip(w_lex, n_lex, strict=True)]
    top = [(float(f.lex_scores[0]) or 1.0) if len(f.lex_scores) else 1.0 for f in found]
    one = len(found) == 1  # (one package: no package keys to carry or group by)
    if one:
        lex_ids, dense_ids, z = found[0].lex_ids, found[0].dense_ids, found[0].dense_z
        lex = w_lex[0] * found[0].lex_scores / top[0]
        pkg_lex = pkg_dense = np.zeros(0, dtype=np.int64)
    else:
        packages = np.arange(len(found))
        pkg_lex, pkg_dense = packages.repeat(n_lex), packages.repeat(n_dense)
        lex_ids, dense_ids = _joined([f.lex_ids for f in found], np.int64), _joined([f.dense_ids for f in found], np.int64)
        lex = np.array(w_lex).repeat(n_lex) * _joined([f.lex_scores for f in found], np.float64) / np.array(top).repeat(n_lex)
        z = _joined([f.dense_z for f in found], np.float64)
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
        return Fused(pkg=np.zeros(len(cid), dtype=np.int64), cid=cid, score=value, bounds=[0, len(cid)])
    pkg = np.concatenate((pkg_lex, pkg_dense[alone]))
    o = grouped(pkg, groups=len(found))
    pkg, cid, value = pkg[o], cid[o], value[o]
    counts = np.bincount(pkg, minlength=len(found))
    cut = counts > cap
    if cut.any():  # those packages keep their `cap` best, best first (ties in the order found)
        best = grouped(pkg, (-value).argsort(kind="stable"), len(found))
        kept = best[cut[pkg[best]] & (ranks_in(pkg[best], counts) < cap)]
        o = grouped(pkg, np.concatenate((kept, (~cut[pkg]).nonzero()[0])), len(found))
        pkg, cid, value = pkg[o], cid[o], value[o]
        counts = np.minimum(counts, cap)
    return Fused(pkg=pkg, cid=cid, score=value, bounds=[0, *counts.cumsum().tolist()])


def order(fused: Fused, evidence: Evidence, head: int, weights: Sequence[float] | None, params: RankingParams
          ) -> Ranked:
    """The candidates with their pages' evidence, each package's best `head` and the best
    section of up to `more_pages` more pages, damped across packages when `weights` are given
    (`damp`), best first."""
    import numpy as np

    keep, page = evidence.at, evidence.page
    pkg, score, cid = fused.pkg[keep], fused.score[keep], fused.cid[keep]
    groups = len(fused.bounds) - 1
    total = page_scores(score, page, evidence.title[page], evidence.gain, params)
    # Each package's best first (ties: the order found), then the judged of those.
    best = grouped(pkg, (-total).argsort(kind="stable"), groups)
    chosen = best[more_pages(pkg[best], page[best], head, params.more_pages)]
    chosen = chosen[evidence.found[chosen]]  # (a vector or index row without a section)
    # Each package's in chunk id order, so that ties across the whole ranking fall as always.
    chosen = grouped(pkg, chosen[cid[chosen].argsort(kind="stable")], groups)
    coverage = evidence.coverage
    final = total[chosen]
    if weights is not None:
        final = final * damp(page[chosen], coverage[chosen], np.asarray(weights)[pkg[chosen]])
    final = np.where(np.isfinite(final), final, 0.0)  # a hostile package's NaN must not scramble the ranking
    o = (-final).argsort(kind="stable")
    ranked = chosen[o]
    paths = evidence.paths
    return Ranked(at=keep[ranked], score=final[o], path=[paths[p] for p in page[ranked].tolist()],
                  chars=evidence.chars[ranked], coverage=coverage[ranked])


def damp(page: np.ndarray, coverage: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Each candidate's factor in a search over several packages: (0.5 + 0.5 x the coverage of
    its page's best section, to 3 places, as this rule was tuned) x its package's weight
    (`engine._package_prior`).

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
