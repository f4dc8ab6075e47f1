"""The last value made from a list of parts, kept while the next call asks for the same parts.

A server asks about the same packages question after question: their stacked vectors
(`dense.VectorStack`) and their section tables laid end to end (`sections.SectionTables`)
are made once for that set and reused until another set is searched.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

P = TypeVar("P")
V = TypeVar("V")


class LastMade(Generic[P, V]):
    """`memo(parts)` is `make(parts)`, or the value made last if it was made of these very
    parts (the same objects, in the same order). The parts are held with the value, so their
    ids cannot be reused by others meanwhile."""

    def __init__(self, make: Callable[[list[P]], V]) -> None:
        self._make = make
        self._last: tuple[list[P], V] | None = None
        self._lock = threading.Lock()

    def __call__(self, parts: Sequence[P]) -> V:
        with self._lock:
            last = self._last
            if last is None or len(last[0]) != len(parts) or not all(map(operator.is_, last[0], parts)):
                last = self._last = (list(parts), self._make(list(parts)))
            return last[1]
