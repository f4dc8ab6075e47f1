"""Deadlines for queries against a package: no single file can stall a search.

Package files are untrusted, and a hostile one can make an innocent query run for ever
(a recursive view behind a table name, a crafted index). Every connection to a package
gets a SQLite progress handler; `QueryGuard.deadline(seconds)` arms it for the calling
thread, and a query still running when the time is up is aborted and reported as
`PackageTooSlow`, which search turns into "package skipped" instead of hanging.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import AbstractContextManager
from types import TracebackType

from ..errors import InvalidPackage

DEFAULT_DEADLINE_S = 2.0  # one search call against one package
LOAD_DEADLINE_S = 10.0  # a one-time load (a package's vectors, its BM25 lengths)
PROGRESS_OPS = 1_000  # SQLite virtual-machine steps between two looks at the clock


class PackageTooSlow(InvalidPackage):
    """A query against a package ran past its deadline and was aborted."""


class _Clock(threading.local):
    """The calling thread's deadline: threads searching one package do not share it."""

    end: float | None = None
    expired: bool = False


class QueryGuard:
    """Arms a per-thread deadline on one connection's queries."""

    def __init__(self, db: sqlite3.Connection, label: str) -> None:
        self.label = label
        self._clock = _Clock()
        db.set_progress_handler(self._tick, PROGRESS_OPS)

    def _tick(self) -> int:
        clock = self._clock
        if clock.end is not None and time.monotonic() > clock.end:
            clock.expired = True
            return 1  # SQLite aborts the statement ("interrupted")
        return 0

    @property
    def expired(self) -> bool:
        """Has this thread's current deadline passed (its queries are being aborted)?"""
        return self._clock.expired

    def deadline(self, seconds: float = DEFAULT_DEADLINE_S) -> AbstractContextManager[None]:
        """Queries in this block abort after `seconds`; a nested block never extends an outer one.

        At the outermost block, an expired deadline raises `PackageTooSlow` and any other
        SQLite error `InvalidPackage`, so callers see one of our errors, never sqlite3's.
        """
        return _Deadline(self, seconds)


class _Deadline:
    """One `with guard.deadline(seconds):` block. (A class rather than a generator: a search
    enters a few of these for every package it searches.)"""

    __slots__ = ("guard", "seconds", "outer")

    def __init__(self, guard: QueryGuard, seconds: float) -> None:
        self.guard, self.seconds = guard, seconds
        self.outer: float | None = None

    def __enter__(self) -> None:
        clock = self.guard._clock
        self.outer = outer = clock.end
        end = time.monotonic() + self.seconds
        clock.end = end if outer is None else min(end, outer)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        clock, outer = self.guard._clock, self.outer
        try:
            if isinstance(exc, Exception) and not isinstance(exc, PackageTooSlow) and outer is None:
                if clock.expired:
                    raise PackageTooSlow(f"{self.guard.label}: too slow to search (over {self.seconds:g} s); "
                                         "skipped") from None
                if isinstance(exc, sqlite3.Error):
                    raise InvalidPackage(f"{self.guard.label}: the package file is damaged ({exc})") from None
        finally:
            clock.end = outer
            if outer is None:
                clock.expired = False
