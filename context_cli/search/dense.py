"""Cosine search over packages' vectors: each package's held as one float32 matrix per
process, several packages' stacked into one for a search over them all (`VectorStack`), and
the cosines turned into z-scores per package (`standardise`, `DenseHits`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._memo import LastMade

if TYPE_CHECKING:
    import numpy as np

    from ..embed.model import Embedder
    from ..package.reader import Package


class VectorIndex:
    """One package's vectors: its chunk `ids` (ascending) and the (n, dim) float32 `matrix` of
    their unit rows, aligned."""

    __slots__ = ("ids", "matrix")

    def __init__(self, ids: np.ndarray, matrix: np.ndarray) -> None:
        self.ids, self.matrix = ids, matrix

    @classmethod
    def load(cls, pkg: Package) -> VectorIndex:
        """The package's vectors (finite unit rows, or MalformedVectors: never NaN at scoring),
        one per chunk id."""
        return cls.of(*pkg.vectors())

    @classmethod
    def of(cls, ids: np.ndarray, matrix: np.ndarray) -> VectorIndex:
        """The index of these rows (ids ascending): a hostile table may repeat an id, and its
        first row counts."""
        import numpy as np

        if len(ids) > 1 and not (ids[1:] > ids[:-1]).all():
            first = np.concatenate(([True], ids[1:] != ids[:-1]))
            ids, matrix = ids[first], matrix[first]
        return cls(ids=ids, matrix=matrix)

    @property
    def first(self) -> int | None:
        """The first chunk id when the ids run without gaps (row = id - first), else None."""
        ids = self.ids
        if len(ids) and int(ids[-1]) - int(ids[0]) == len(ids) - 1:
            return int(ids[0])
        return None

    def positions(self, chunk_ids: list[int]) -> np.ndarray:
        """Row of each chunk id, -1 where it has no vector (ids are sorted: binary search)."""
        import numpy as np

        want = np.asarray(chunk_ids, dtype=np.int64)
        rows = np.searchsorted(self.ids, want)
        rows[rows >= len(self.ids)] = 0
        found = self.ids[rows] == want if len(self.ids) else np.zeros(len(want), dtype=bool)
        return np.where(found, rows, -1)

    def scores(self, query: np.ndarray) -> np.ndarray:
        return self.matrix @ query  # type: ignore[no-any-return]

    @staticmethod
    def top_rows(scores: np.ndarray, k: int) -> np.ndarray:
        """Rows of the `k` best scores, best first."""
        import numpy as np

        if not len(scores):
            return np.zeros(0, dtype=np.int64)
        cut = len(scores) - min(k, len(scores))
        idx = np.argpartition(scores, cut)[cut:]
        return idx[np.argsort(-scores[idx])]


class VectorStack:
    """Several packages' vectors as one matrix, so that one product scores them all.

    A search over many packages multiplies their matrices in a helper thread while it ranks
    by BM25. One product releases the GIL once; a product per package would take it back
    each time and stall the ranking thread's own GIL-free steps behind it. The packages'
    matrices become views into this one, so the vectors are held once, not twice.
    """

    def __init__(self, indexes: list[VectorIndex]) -> None:
        import numpy as np

        self.matrix = np.vstack([i.matrix for i in indexes])
        self.cuts: list[tuple[int, int]] = []
        start = 0
        for i in indexes:
            end = start + len(i.matrix)
            i.matrix = self.matrix[start:end]
            self.cuts.append((start, end))
            start = end
        self.firsts = [i.first for i in indexes]  # (worked out once: a search reads them for every package)
        self._ids = [i.ids for i in indexes]
        # Packages of one size: `best_rows` lays their scores out as the rows of one matrix.
        sizes = [b - a for a, b in self.cuts]
        self.width = max(sizes, default=0)
        self._even = len(set(sizes)) <= 1

    def best_rows(self, scores: np.ndarray, k: int) -> list[np.ndarray]:
        """Each package's rows of its `k` best `scores` (one per stacked row), best first: one
        partition for all packages, not one each (ten small calls cost five times as much)."""
        best = self._best(scores, k)
        return [rows[:min(k, b - a)] for rows, (a, b) in zip(best, self.cuts, strict=True)]

    def _best(self, scores: np.ndarray, k: int) -> np.ndarray:
        """(packages, min(k, width)): each package's best rows, best first (a package shorter
        than `k` ends its row with zeros, past its own).

        Packages of different sizes are partitioned one by one: laid out as one matrix, the
        shorter ones' rows would end in equal pads, and numpy partitions many equal values
        slowly (Django and five 2,000-section packages: 4.8 ms, against 0.2 ms one by one)."""
        import numpy as np

        n, width = len(self.cuts), self.width
        k = min(k, width)
        if not n or not k:
            return np.zeros((n, 0), dtype=np.int64)
        if not self._even:
            out = np.zeros((n, k), dtype=np.int64)
            for p, (a, b) in enumerate(self.cuts):
                best = VectorIndex.top_rows(scores[a:b], k)
                out[p, :len(best)] = best
            return out
        grid = scores.reshape(n, width)
        part = np.argpartition(grid, width - k, axis=1)[:, width - k:]
        rows = np.arange(n)[:, None]  # (indexing as `take_along_axis` does, without its Python steps)
        return part[rows, np.argsort(-grid[rows, part], axis=1)]

    def top_k_per_package(self, scores: np.ndarray, k: int) -> list[PackageTop]:
        """Each package's statistics of `scores` (`standardise`), its `k` best rows, their chunk
        ids and z-scores, and its best score: all packages' in a few array steps, not a few each."""
        import numpy as np

        stats, s = _standardised(scores, self.cuts)
        rows_of = self._best(scores, k)
        if not rows_of.shape[1]:
            empty = np.zeros(0, dtype=np.int64)
            return [PackageTop(st, empty, empty, np.zeros(0), 0.0, first) for st, first in zip(stats, self.firsts, strict=True)]
        at = np.minimum(np.array([a for a, _ in self.cuts])[:, None] + rows_of, max(len(scores) - 1, 0))
        z = s[at] / np.array([st.scale for st in stats])[:, None]
        ids = rows_of + np.array([f or 0 for f in self.firsts])[:, None]
        best = scores[at[:, 0]].tolist()
        out = []
        for p, (st, (a, b), first) in enumerate(zip(stats, self.cuts, self.firsts, strict=True)):
            m = min(k, b - a)
            rows = rows_of[p, :m]
            out.append(PackageTop(st, rows, ids[p, :m] if first is not None else self._ids[p][rows], z[p, :m],
                                  best[p] if m else 0.0, first))
        return out


@dataclass(slots=True, eq=False, repr=False)
class PackageTop:
    """One package's part of a stack's cosines (`VectorStack.top_k_per_package`)."""

    stats: CosineStats
    rows: np.ndarray  # its best rows, best first
    ids: np.ndarray  # their chunk ids
    z: np.ndarray  # their z-scores (meaningless where the statistics are not usable)
    best_cosine: float
    first: int | None  # its vectors' first chunk id (`VectorIndex.first`)


class CosineStats:
    """One package's cosines with a query as deviations from their mean, and the scale that
    makes them z-scores (its deviation; 1.0 where there are none: not `usable`). A search
    reads the z-scores of a hundred rows of thousands, so they are divided out when read."""

    __slots__ = ("dev", "scale", "usable")

    def __init__(self, dev: np.ndarray, scale: float, usable: bool) -> None:
        self.dev, self.scale, self.usable = dev, scale, usable  # dev: float64

    def z(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The z-scores of these rows (all when None)."""
        return (self.dev if rows is None else self.dev[rows]) / self.scale

    def z_at(self, row: int) -> float:
        return float(self.dev[row]) / self.scale


def standardise(scores: np.ndarray, cuts: list[tuple[int, int]]) -> list[CosineStats]:
    """Each segment of `scores` as deviations from its mean and its scale (float64), and whether
    they are usable: a segment whose mean or deviation is not finite (NaN in a hostile
    package's vectors) or whose cosines are all alike gives none. All segments in a handful of
    array operations, so that many packages cost what one does."""
    return _standardised(scores, cuts)[0]


def _standardised(scores: np.ndarray, cuts: list[tuple[int, int]]) -> tuple[list[CosineStats], np.ndarray]:
    """`standardise`, and the deviations of all segments as one array (each segment's are a
    view of it)."""
    import numpy as np

    s = scores.astype(np.float64)
    live = [(a, b) for a, b in cuts if b > a]  # the segments cover `scores`, end to end
    found: dict[tuple[int, int], CosineStats] = {}
    if live:
        starts, sizes = [a for a, _ in live], np.array([b - a for a, b in live])
        with np.errstate(invalid="ignore", over="ignore"):  # non-finite sums: not usable, no warning
            mean = np.add.reduceat(s, starts) / sizes
            s -= np.repeat(mean, sizes)
            std = np.sqrt(np.add.reduceat(s * s, starts) / sizes)
            usable = np.isfinite(mean) & np.isfinite(std) & (std > 1e-9) & (sizes > 1)
        scale = np.where(usable, std, 1.0).tolist()
        found = {(a, b): CosineStats(s[a:b], k, ok) for (a, b), k, ok in zip(live, scale, usable.tolist(), strict=True)}
    return [found.get((a, b), CosineStats(s[a:b], 1.0, False)) for a, b in cuts], s


# The stack of the last set of packages searched.
stacked: LastMade[VectorIndex, VectorStack] = LastMade(VectorStack)


class DenseHits:
    """One package's cosines with the query, as z-scores within this query's distribution over
    the package (`standardise`): a search asks for the best ones (`top`) and then for a few
    more (`z_of`). Not `usable`: no z-scores at all."""

    def __init__(self, index: VectorIndex, stats: CosineStats, model: Embedder, best_cosine: float, first: int | None,
                 top: tuple[int, np.ndarray, np.ndarray] | None = None) -> None:
        self.stats, self.usable, self.index = stats, stats.usable, index
        self.first = first  # (`index.first`, known)
        self.model, self.best_cosine = model, best_cosine  # what made the cosines, and the best of them
        self._top = top  # (k, chunk ids, z) of the k best cosines, best first, when a stack found them

    def top(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, z) of the `k` best cosines, best first."""
        if not self.usable:
            rows = self.stats.dev[:0].astype("int64")
        elif self._top is not None and k == self._top[0]:
            return self._top[1:]
        else:
            rows = self.index.top_rows(self.stats.z(), k)
        ids = rows + self.first if self.first is not None else self.index.ids[rows]
        return ids, self.stats.z(rows)

    def row_deviations(self) -> tuple[np.ndarray, int] | None:
        """Every row's cosine deviation from the mean and the chunk id of row 0: a row's
        section is that id plus the row (None: no z-scores, or rows that are not one run of
        ids). For what depends on every section, as a page's mean (`closeness`)."""
        if not self.usable or self.first is None:
            return None
        return self.stats.dev, self.first

    def z_of(self, cid: int) -> float | None:
        """The section's z (None: it has no vector, or there are no z-scores)."""
        if not self.usable:
            return None
        first = self.first
        if first is not None:  # the usual package: a section's row is its id less the first
            row = cid - first
            return self.stats.z_at(row) if 0 <= row < len(self.stats.dev) else None
        at = int(self.index.positions([cid])[0])
        return self.stats.z_at(at) if at >= 0 else None
