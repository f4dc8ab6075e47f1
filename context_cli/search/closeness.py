"""How close a page as a whole is to the question (`closeness`): the mean of its sections'
cosine deviations, as a z-score among the package's pages.

A section is ranked on its own words and vector, and the page it sits on may be about
something else: a settings reference or a tutorial step that mentions the question's words in
one section, against the page about it, whose sections all speak of it and none best alone.
How near a page's sections are on the whole tells them apart. Standardised among the
package's pages and counted up to `z_cap`, as the cosines are in fusion, it adds
`page_closeness_weight` x it to the page's bonus (docs/search.md, "The ranking rules", 2).

A page's mean is taken over its run of chunk ids (`PageSpans`; our builder writes a page's
sections one after another), from the deviations the dense side has for every section
anyway: one `np.add.reduceat` over every package searched, and a dozen array steps in all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._memo import LastMade

if TYPE_CHECKING:
    import numpy as np

    from .dense import DenseHits
    from .quality import MixedHits


@dataclass(eq=False, repr=False)
class PageRows:
    """A package's pages as runs of its vectors' rows: those whose run lies among the rows,
    in order of their first row."""

    bounds: np.ndarray  # int64: where `np.add.reduceat` sums from, each page's first row among them
    pick: np.ndarray  # int64 per page: the place of its first row among `bounds`
    count: np.ndarray  # float64 per page: its sections
    at: Mapping[str, int]  # path -> its place among these pages
    reach: int  # one past the last row a page has (where a tiled package's last page ends)


class PageSpans:
    """Each page's sections as one run of chunk ids."""

    __slots__ = ("paths", "first", "count", "_rows")

    def __init__(self, paths: list[str], first: np.ndarray, count: np.ndarray) -> None:
        self.paths, self.first, self.count = paths, first, count  # int64 per page: its first section's chunk id, its sections
        self._rows: dict[tuple[int, int], PageRows | None] = {}

    @classmethod
    def of(cls, rows: Sequence[Sequence[Any]]) -> PageSpans | None:
        """From (path, lowest id, highest id, count) rows, one a page; None when there are none,
        or a row is not one run of ids (another builder's package, or a damaged one)."""
        import numpy as np

        if not rows or not all(len(r) == 4 and isinstance(r[0], str) and all(type(v) is int for v in r[1:])
                               and r[2] - r[1] + 1 == r[3] > 0 for r in rows):
            return None
        return cls(paths=[r[0] for r in rows], first=np.array([r[1] for r in rows], dtype=np.int64),
                   count=np.array([r[3] for r in rows], dtype=np.int64))

    def rows(self, first: int, rows: int) -> PageRows | None:
        """These pages as runs of a vector set's rows (row 0 is chunk id `first`, `rows` of
        them), made once per vector set. None when no run lies among the rows, or the pages
        have fewer than two sections on average (an OpenAPI reference, an operation a page):
        there a page's mean is mostly its one section's cosine, which fusion has counted
        already, and counting it again only weighs the cosines above BM25 (the docker-api
        set: page MRR -0.023)."""
        key = (first, rows)
        if key not in self._rows:
            self._rows[key] = self._made_rows(first, rows)
        return self._rows[key]

    def _made_rows(self, first: int, rows: int) -> PageRows | None:
        import numpy as np

        if int(self.count.sum()) < 2 * len(self.paths):
            return None
        start = self.first - first  # (ids far apart may wrap: such a run is dropped or misplaced, never read outside)
        inside = ((start >= 0) & (start < rows) & (self.count <= rows - start)).nonzero()[0]
        if not len(inside):
            return None
        inside = inside[start[inside].argsort(kind="stable")]
        begin, end = start[inside], start[inside] + self.count[inside]
        reach = int(end.max())
        if (begin[1:] == end[:-1]).all():  # (our builder's pages: each run ends where the next begins)
            bounds, pick = np.append(begin, reach), np.arange(len(begin))
        else:  # each page's first row and one past its last
            bounds, pick = np.empty(2 * len(begin), dtype=np.int64), np.arange(0, 2 * len(begin), 2)
            bounds[0::2], bounds[1::2] = begin, end
        return PageRows(bounds=bounds, pick=pick, count=self.count[inside].astype(np.float64),
                        at={self.paths[k]: i for i, k in enumerate(inside.tolist())}, reach=reach)


def page_rows(spans: PageSpans | None, hits: DenseHits | MixedHits) -> tuple[PageRows, np.ndarray] | None:
    """A package's pages as runs of its rows, and every row's cosine deviation (None: no
    spans, no usable z-scores by row, or no closeness for these pages: `PageSpans.rows`)."""
    found = hits.row_deviations() if spans is not None else None
    if found is None or spans is None:
        return None
    dev, first = found
    rows = spans.rows(first, len(dev))
    return (rows, dev) if rows is not None else None


@dataclass(eq=False, repr=False)
class _Together:
    """Several packages' `PageRows` laid end to end, for one pass over all their rows."""

    bounds: np.ndarray  # each package's shifted past the rows of those before it
    pick: np.ndarray  # per page: the place of its sum among the sums at `bounds`
    per_section: np.ndarray  # per page: 1 / its sections
    start: np.ndarray  # per package: its first page's place
    per_page: np.ndarray  # per package: 1 / its pages
    package: np.ndarray  # per page: its package's place

    @classmethod
    def of(cls, parts: list[PageRows]) -> _Together:
        import numpy as np

        pages = np.array([len(p.count) for p in parts], dtype=np.int64)
        rows = np.array([p.reach for p in parts], dtype=np.int64)
        sums = np.array([len(p.bounds) for p in parts], dtype=np.int64)
        return cls(bounds=np.concatenate([p.bounds + shift for p, shift in zip(parts, np.cumsum(rows) - rows, strict=True)]),
                   pick=np.concatenate([p.pick + shift for p, shift in zip(parts, np.cumsum(sums) - sums, strict=True)]),
                   per_section=1.0 / np.concatenate([p.count for p in parts]), start=np.cumsum(pages) - pages,
                   per_page=1.0 / pages, package=np.repeat(np.arange(len(parts)), pages))


_together: LastMade[PageRows, _Together] = LastMade(_Together.of)


def closeness(found: Sequence[tuple[PageRows, np.ndarray]], cap: float) -> tuple[np.ndarray, list[int]]:
    """Every package's pages' closeness, one package after another (each in its `PageRows`
    order), and where each package's begin: between 0 and 1, the z-score of the mean of a
    page's rows' deviations among its package's pages' means, counted between 0 and `cap` and
    divided by it (all 0 for a package whose means are alike). One pass over every package's
    rows (those its pages reach, joined)."""
    import numpy as np

    if not found:
        return np.zeros(0), []
    t = _together([rows for rows, _ in found])
    joined = np.concatenate([*(dev[:rows.reach] for rows, dev in found), [0.0]])
    mean = np.add.reduceat(joined, t.bounds)[t.pick] * t.per_section  # (the 0 past the end: a run that ends at the last row)
    centre = np.add.reduceat(mean, t.start) * t.per_page
    spread = np.sqrt(np.maximum(np.add.reduceat(mean * mean, t.start) * t.per_page - centre * centre, 0.0))
    spread = np.where(spread > 1e-12, spread * cap, np.inf)  # (alike, or NaN: all 0)
    z = (mean - centre[t.package]) / spread[t.package]
    return np.clip(z, 0.0, 1.0, out=z), t.start.tolist()
