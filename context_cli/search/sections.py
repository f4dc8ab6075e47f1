"""Sections as arrays: each one's page and size, each page's path and title tokens.

Ranking a question's candidates (two dozen a package) needs each one's page, its text's
length and whether the package has the section at all, and each page's title tokens. A
`SectionTable` holds these for a set of sections sorted by chunk id: a warm package has one
of all its sections, made once (`PackageSearcher.warm`); a cold one, a table of the
sections this search ranks, made from what it read of its section map. One search's tables
are laid end to end (`SectionTables`), so every package's candidates are looked up at once,
whatever state each package is in. Pages are numbered by path; a candidate the package
lacks (a vector or index row without a section) is on the page of path "", as the ranking
rules have it (`reference.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._memo import LastMade

if TYPE_CHECKING:
    import numpy as np

# Tables laid end to end are looked up by one key per (package, chunk id), in an array as long
# as their ids' spans; past this many keys a row and this many more (ids far apart: a hostile
# or patched file) each package is looked up on its own.
MAX_KEYS_PER_ROW = 16
MIN_KEYS = 1 << 20
_NO_TOKENS: frozenset[str] = frozenset()


@dataclass(eq=False, repr=False)
class SectionTable:
    ids: np.ndarray  # int64, ascending: the sections' chunk ids
    page: np.ndarray  # int64 per section: its page number
    chars: np.ndarray  # int64 per section: the length of its text
    paths: list[str]  # per page number (path "" among them, if only as the page of missing sections)
    tokens: list[frozenset[str]]  # per page number: its title and path tokens (`evidence.title_words`)
    nowhere: int  # the page number of path ""

    @classmethod
    def of(cls, pages: Mapping[int, tuple[str, str]], chars: Mapping[int, int],
           tokens: Callable[[Iterable[tuple[str, str]]], Mapping[str, frozenset[str]]]) -> SectionTable:
        """The table of these sections (chunk id -> (path, page title), chunk id -> length),
        with `tokens` giving pages' title tokens by path (a page's title is its first section's)."""
        import numpy as np

        ids = sorted(pages)
        number: dict[str, int] = {}
        title: dict[str, str] = {}
        for cid in ids:
            path, doc_title = pages[cid]
            if path not in number:
                number[path] = len(number)
                title[path] = doc_title
        nowhere = number.setdefault("", len(number))
        found = tokens(title.items())
        return cls(ids=np.asarray(ids, dtype=np.int64),
                   page=np.fromiter((number[pages[cid][0]] for cid in ids), np.int64, len(ids)),
                   chars=np.fromiter((chars.get(cid, 0) for cid in ids), np.int64, len(ids)),
                   paths=list(number), tokens=[found.get(path, _NO_TOKENS) for path in number], nowhere=nowhere)


@dataclass(eq=False, repr=False)
class SectionTables:
    """The section tables of the packages one search reads, laid end to end: every
    candidate's page (numbered across the packages) and size, for all packages at once.

    Each package's ids are shifted into a range of its own (`start`; one past its span is
    left free, the key of a candidate outside it), and `row` maps every key to its section's
    row, so that a lookup is a few array steps for all candidates."""

    tables: tuple[SectionTable, ...]
    row: np.ndarray | None  # per key: its section's row, -1 for none (None: the span is too wide; by package)
    low: np.ndarray  # per package: its lowest id
    span: np.ndarray  # per package: its highest id - its lowest + 1
    start: np.ndarray  # per package: where its keys start
    base: np.ndarray  # per package: its first row
    page: np.ndarray  # per row: its page, numbered across the packages
    chars: np.ndarray  # per row
    nowhere: np.ndarray  # per package: its page of path ""
    paths: list[str]  # per page
    tokens: list[frozenset[str]]  # per page
    owner: list[int]  # per page: its package

    @classmethod
    def of(cls, tables: Sequence[SectionTable]) -> SectionTables:
        import numpy as np

        low = [int(t.ids[0]) if len(t.ids) else 0 for t in tables]
        span = [int(t.ids[-1]) - lo + 1 if len(t.ids) else 0 for t, lo in zip(tables, low, strict=True)]
        start = [0]
        for n in span:
            start.append(start[-1] + n + 1)
        pages, paths, tokens, owner, nowhere, first = [], [], [], [], [], 0
        for k, t in enumerate(tables):
            pages.append(t.page + first)
            paths += t.paths
            tokens += t.tokens
            owner += [k] * len(t.paths)
            nowhere.append(t.nowhere + first)
            first += len(t.paths)
        sizes = np.asarray([len(t.ids) for t in tables], dtype=np.int64)
        row = None
        if start[-1] <= MAX_KEYS_PER_ROW * int(sizes.sum()) + MIN_KEYS:
            row = np.full(start[-1] + 1, -1, dtype=np.int64)
            row[_joined([t.ids - lo + s for t, lo, s in zip(tables, low, start, strict=False)])] = np.arange(sizes.sum())
        return cls(tables=tuple(tables), row=row, low=np.asarray(low, dtype=np.int64),
                   span=np.asarray(span, dtype=np.int64), start=np.asarray(start[:-1], dtype=np.int64),
                   base=np.cumsum(sizes) - sizes, page=_joined(pages), chars=_joined([t.chars for t in tables]),
                   nowhere=np.asarray(nowhere, dtype=np.int64), paths=paths, tokens=tokens, owner=owner)

    def lookup(self, pkg: np.ndarray, cids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each candidate's page number, whether its package has it, and its text's length
        (`pkg`: each candidate's package, by its place among the tables)."""
        import numpy as np

        if self.row is not None:
            rel = cids - self.low[pkg]
            span = self.span[pkg]
            at = self.row[np.where((rel >= 0) & (rel < span), rel, span) + self.start[pkg]]  # (outside: no row)
            found = at >= 0
        else:
            at = np.zeros(len(cids), dtype=np.int64)
            found = np.zeros(len(cids), dtype=bool)
            for k, t in enumerate(self.tables):
                mine = (pkg == k).nonzero()[0]
                rows = t.ids.searchsorted(cids[mine]).clip(0, max(len(t.ids) - 1, 0))
                found[mine] = t.ids[rows] == cids[mine] if len(t.ids) else False
                at[mine] = rows + self.base[k]
            at = np.where(found, at, 0)
        return (np.where(found, self.page[at] if len(self.page) else 0, self.nowhere[pkg]), found,
                np.where(found, self.chars[at] if len(self.chars) else 0, 0))


@functools.cache
def no_sections() -> SectionTable:
    """The table of a package that failed: it has no sections."""
    return SectionTable.of({}, {}, lambda pages: {})


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    import numpy as np

    return np.concatenate(parts).astype(np.int64, copy=False) if parts else np.zeros(0, dtype=np.int64)


# The tables of the last set of packages searched, laid end to end.
section_tables: LastMade[SectionTable, SectionTables] = LastMade(SectionTables.of)
