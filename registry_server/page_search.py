"""Search one stored package for the HTML pages, as `context search` would on a client.

The registry runs the client's own engine over its stored copy of the package (opened
read-only), with the client's limits: the default token budget and section limit, the
engine's query-length cap, plus a deadline so one slow search cannot hold a page forever.
Searches run on a small pool of their own threads, never on the event loop, and answers
are kept in a small LRU keyed by (sha256, query, budget): package bytes never change
under a checksum, so a cached answer never goes stale.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from context_cli.package.identity import PackageId
from context_cli.search.answer import Answer
from context_cli.search.engine import DEFAULT_BUDGET, MAX_QUERY_CHARS, EmptyQuery

MAX_BUDGET = 100_000  # the CLI's `--budget` range
DEADLINE_S = 10.0
CACHE_SIZE = 128
WORKERS = 2

_pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="page-search")
_cache: OrderedDict[tuple[str, str, int], Answer] = OrderedDict()
_cache_lock = threading.Lock()
log = logging.getLogger("registry_server")


class SearchFailed(Exception):
    """A search that produced no answer; the message is shown on the page as it is."""


def search_package(path: Path, pid: PackageId, query: str, budget: int = DEFAULT_BUDGET) -> Answer:
    """The answer for `query` over the package file at `path` (opened read-only), as the
    client's `cx.search` gives it: the same engine and limits. Raises ContextError for what
    it refuses."""
    from context_cli.search.engine import SearchOptions, answer
    from context_cli.store.store import Installed

    return answer(query, [Installed(pid, path, {})], SearchOptions(budget=budget, warm=True))


def clean_query(raw: str) -> str:
    """What is searched for: printable text within the engine's length cap.

    Control characters and lone surrogates (possible in a decoded URL) become spaces so the
    engine, SQLite and the page all see valid text.
    """
    text = raw[:MAX_QUERY_CHARS]
    text = "".join(" " if _unprintable(ch) else ch for ch in text)
    return " ".join(text.split())


def _unprintable(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn")


async def run_search(sha256: str, locate: Callable[[], Path], pid: PackageId, query: str,
                     budget: int) -> Answer:
    """The cached answer, or a fresh one computed on the pool within the deadline.

    `locate` gives the package's local file (it may have to fetch it from object storage,
    so it runs on the pool too). Raises SearchFailed with a message for the page.
    """
    key = (sha256, query, budget)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit

    def work() -> Answer:
        return search_package(locate(), pid, query, budget)

    future = _pool.submit(work)
    try:
        answer = await asyncio.wait_for(asyncio.wrap_future(future), DEADLINE_S)
    except TimeoutError:
        future.cancel()
        raise SearchFailed("the search took too long; try fewer or more specific words") from None
    except EmptyQuery as e:
        raise SearchFailed(str(e)) from None
    except Exception as e:  # a damaged or unreadable file: the page says so, not a 500 or a path
        log.warning("page search over %s failed: %r", pid.qualified, e)
        raise SearchFailed("this package cannot be searched on the server right now") from None
    with _cache_lock:
        _cache[key] = answer
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return answer
