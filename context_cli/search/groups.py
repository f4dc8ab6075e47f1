"""Groups of candidates in one array: stable orders by a small key, and places within groups.

The ranking (`candidates.py`, `rank.py`) keeps every package's candidates, and every page's
sections, as consecutive runs of one array. A key of a few thousand values (a package or
page number) is sorted by numpy's radix sort when it is 16 bits wide, in a couple of
microseconds, where a general sort of the same array costs ten times as much.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def stable_group_order(keys: np.ndarray, order: np.ndarray | None = None, groups: int | None = None) -> np.ndarray:
    """The indices `order` (default: all, in order) stably sorted by `keys` (small ints >= 0):
    items of one key keep the order they had in `order`. (`groups`: how many keys there can
    be, when known; one needs no sorting.)"""
    import numpy as np

    if groups == 1 and order is not None:
        return order
    if order is None:
        order = np.arange(len(keys))
    k = keys[order]
    if groups is not None and groups <= 2 ** 15 or groups is None and len(k) and k.max() < 2 ** 15:
        k = k.astype(np.int16)
    return order[k.argsort(kind="stable")]


def rank_within_group(keys: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each item's place (0, 1, …) among those of its key, in an array grouped by key, given
    how many items each key has (`np.bincount(keys)`)."""
    import numpy as np

    return np.arange(len(keys)) - (counts.cumsum() - counts)[keys]  # type: ignore[no-any-return]
