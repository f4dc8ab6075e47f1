"""A package's sections as arrays, once the map of all its sections is read.

Ranking a question's candidates (two dozen a package) needs each one's page, its text's
length and whether the package has the section at all, and each page's title tokens. A
package searched again keeps the map of every section (`Searchable.sections_of`); laid out
here as arrays by chunk id, those answers are a few array lookups for all the candidates
instead of a handful of dict lookups each. Pages are numbered by path, as page evidence
tells them apart; a candidate the package lacks (a vector or index row without a section)
is on the page of path "", as the per-section rules have it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# Chunk ids this much sparser than the sections are not laid out (a hostile or patched file).
SPARSE = 4


@dataclass(frozen=True)
class SectionTable:
    first: int  # the chunk id of row 0
    page: np.ndarray  # int64 per row: its page number, -1 where there is no section
    chars: np.ndarray  # int64 per row: the length of its text
    paths: list[str]  # per page number (path "" among them, if only as the page of missing sections)
    tokens: list[frozenset[str]]  # per page number: its title and path tokens (`pages.title_words`)
    nowhere: int  # the page number of path ""

    @classmethod
    def of(cls, pages: Mapping[int, tuple[str, str]], chars: Mapping[int, int],
           tokens: Callable[[Iterable[tuple[str, str]]], Mapping[str, frozenset[str]]]) -> SectionTable | None:
        """The table of a whole section map (chunk id -> (path, title), chunk id -> length),
        with `tokens` giving pages' title tokens by path; None when there are no sections or
        their ids are too sparse to lay out."""
        import numpy as np

        if not pages:
            return None
        ids = sorted(pages)
        first, last = ids[0], ids[-1]
        if last - first + 1 > SPARSE * len(ids) + 64:
            return None
        number: dict[str, int] = {}
        title: dict[str, str] = {}
        for cid in ids:  # (a page's title is its first section's)
            path, doc_title = pages[cid]
            if path not in number:
                number[path] = len(number)
                title[path] = doc_title
        nowhere = number.setdefault("", len(number))
        found = tokens(title.items())
        rows = np.asarray(ids, dtype=np.int64) - first
        page = np.full(last - first + 1, -1, dtype=np.int64)
        page[rows] = [number[pages[cid][0]] for cid in ids]
        size = np.zeros(last - first + 1, dtype=np.int64)
        size[rows] = [chars.get(cid, 0) for cid in ids]
        no_tokens: frozenset[str] = frozenset()
        return cls(first=first, page=page, chars=size, paths=list(number),
                   tokens=[found.get(path, no_tokens) for path in number], nowhere=nowhere)


@dataclass(frozen=True)
class Shelf:
    """The section tables of the packages one search reads, laid end to end: every
    candidate's page (numbered across the packages) and size, for all packages at once."""

    tables: tuple[SectionTable, ...]
    base: np.ndarray  # per package: where its rows start
    first: np.ndarray  # per package: its tables' first chunk id
    size: np.ndarray  # per package: its rows
    page: np.ndarray  # per row: its page, numbered across the packages (-1: no section)
    chars: np.ndarray  # per row
    nowhere: np.ndarray  # per package: its page of path ""
    paths: list[str]  # per page
    tokens: list[frozenset[str]]  # per page
    owner: list[int]  # per page: its package

    @classmethod
    def of(cls, tables: Sequence[SectionTable]) -> Shelf:
        import numpy as np

        pages, rows, paths, tokens, owner, nowhere = [], [], [], [], [], []
        start = 0
        for k, t in enumerate(tables):
            pages.append(np.where(t.page >= 0, t.page + start, -1))
            paths += t.paths
            tokens += t.tokens
            owner += [k] * len(t.paths)
            nowhere.append(t.nowhere + start)
            rows.append(len(t.page))
            start += len(t.paths)
        size = np.asarray(rows, dtype=np.int64)
        return cls(tables=tuple(tables), base=np.cumsum(size) - size, first=np.asarray([t.first for t in tables]),
                   size=size, page=np.concatenate(pages), chars=np.concatenate([t.chars for t in tables]),
                   nowhere=np.asarray(nowhere, dtype=np.int64), paths=paths, tokens=tokens, owner=owner)

    def lookup(self, pkg: np.ndarray, cids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each candidate's page number, whether its package has it, and its text's length
        (`pkg`: each candidate's package, by its place among the tables)."""
        import numpy as np

        rows = cids - self.first[pkg]
        inside = (rows >= 0) & (rows < self.size[pkg])
        at = np.where(inside, rows + self.base[pkg], 0)
        page = np.where(inside, self.page[at], -1)
        found = page >= 0
        return np.where(found, page, self.nowhere[pkg]), found, np.where(found, self.chars[at], 0)


_last: Shelf | None = None
_lock = threading.Lock()


def shelf(tables: Sequence[SectionTable]) -> Shelf:
    """The shelf of these tables: the last one made, if it was of these."""
    global _last
    with _lock:
        last = _last
        # (The last shelf holds its tables, so their ids cannot be reused by others.)
        if last is None or len(last.tables) != len(tables) or any(a is not b for a, b in zip(last.tables, tables, strict=True)):
            last = _last = Shelf.of(tables)
        return last
