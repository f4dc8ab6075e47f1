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
from collections.abc import Callable, Hashable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


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


CACHEABLE = "registry.cacheable"  # a handler sets this scope key to let its 200 answer be kept


class AnswerCacheMiddleware:
    """Answers a repeated GET from memory while the index is unchanged, before routing.

    A handler opts in (`mark_cacheable`) when its answer depends only on the raw request
    target and the index: such a 200, sent whole in one body, is kept under the target's
    exact bytes. A conditional request (If-None-Match) always goes to the handler. When the
    index cannot say when it changes (`generation` returns None) nothing is kept.
    """

    def __init__(self, app: ASGIApp, cache: Cache, generation: Callable[[], object | None]) -> None:
        self.app = app
        self.cache = cache
        self.generation = generation

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or self.cache.max_bytes == 0 or any(
                name == b"if-none-match" for name, _ in scope["headers"]):
            await self.app(scope, receive, send)
            return
        generation = self.generation()
        if generation is None:
            await self.app(scope, receive, send)
            return
        key = (scope.get("raw_path") or scope["path"].encode(), scope["query_string"])
        self.cache.sync(generation)
        kept = self.cache.get(key)
        if kept is not None:
            start, body = kept
            await send(start)
            await send({"type": "http.response.body", "body": body})
            return
        sent: list[Message] = []

        async def keeping_send(message: Message) -> None:
            sent.append(message)
            await send(message)

        await self.app(scope, receive, keeping_send)
        if (scope.get(CACHEABLE) and len(sent) == 2 and sent[0].get("status") == 200
                and not sent[1].get("more_body", False)):
            body = bytes(sent[1].get("body", b""))
            size = len(body) + len(key[0]) + len(key[1]) + sum(len(k) + len(v) for k, v in sent[0]["headers"])
            self.cache.put(key, (sent[0], body), size, generation)


def mark_cacheable(scope: Scope) -> None:
    """This request's 200 answer depends only on its target and the index: it may be kept."""
    scope[CACHEABLE] = True
