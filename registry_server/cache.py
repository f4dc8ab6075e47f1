"""Bounded in-memory caches for the read paths: answers per index generation, files by checksum.

On a small machine a search or a download spends most of its time in Python around the
data (rows into records, records into JSON, a file read as several thread hand-offs), not
in the data itself. Both are safe to remember:

- an answer computed from the index is valid until the index changes; every index says
  when it changed (`Index.generation`, which sees commits by any process), and the cache
  empties itself when the generation moves, so a replica never serves what another one
  has since replaced;
- a package file is named by its SHA-256 and never changes, so its bytes can be kept as
  long as there is room.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any


class Cache:
    """A least-recently-used map bounded by the total size of its values, in bytes.

    `sync(generation)` empties it when the generation differs from the one its entries were
    computed under. Thread-safe (the event loop and the threadpool may both use it).
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max(0, int(max_bytes))
        self.size = 0
        self.generation: object = None
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def sync(self, generation: object) -> None:
        """Forget everything computed under another generation of the index."""
        with self._lock:
            if generation != self.generation:
                self._entries.clear()
                self.size = 0
                self.generation = generation

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: Hashable, value: Any, size: int, generation: object = None) -> None:
        """Keep `value` (a cost of `size` bytes) if it fits and was computed under the current
        generation; the least recently used entries make room."""
        if size > self.max_bytes // 4:  # one big entry must not flush everything else
            return
        with self._lock:
            if generation != self.generation:
                return
            old = self._entries.pop(key, None)
            if old is not None:
                self.size -= old[1]
            self._entries[key] = (value, size)
            self.size += size
            while self.size > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.size -= dropped
