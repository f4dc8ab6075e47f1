"""Run a job in a helper thread and wait for it later.

Search hands one package set's matrix products (which release the GIL) to a helper while it
ranks by BM25. `concurrent.futures` would do, but it imports `logging` and costs a cold query
~40 ms; two daemon threads reading one queue are all this needs.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
WORKERS = 2  # a search in each of two MCP worker threads need not wait for the other's job

_jobs: queue.SimpleQueue[Pending[object]] | None = None
_start_lock = threading.Lock()


class Pending(Generic[T]):
    """A job handed to a helper thread; calling it waits for the result (or its error)."""

    def __init__(self, job: Callable[[], T]) -> None:
        self.job = job
        self._begun = threading.Event()
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def run(self) -> None:
        self._begun.set()
        try:
            self._value = self.job()
        except BaseException as e:  # handed to the waiting caller, raised there
            self._error = e
        finally:
            self._done.set()

    def begun(self, timeout: float) -> bool:
        """Wait (at most `timeout` seconds) until a helper has taken the job. A helper needs the
        GIL to start a job, and a thread that runs Python without pause lets it go only every
        5 ms (the switch interval): a caller with a job that releases the GIL throughout (a
        large matrix product) waits here, briefly, so that the job runs beside it from the start."""
        return self._begun.wait(timeout)

    def __call__(self) -> T:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def submit(job: Callable[[], T]) -> Pending[T]:
    """Start `job` in a helper thread (started on first use); call the result to wait for it."""
    global _jobs
    with _start_lock:
        if _jobs is None:
            _jobs = queue.SimpleQueue()
            for i in range(WORKERS):
                threading.Thread(target=_work, args=(_jobs,), name=f"context-search-{i}", daemon=True).start()
    pending = Pending(job)
    _jobs.put(pending)  # type: ignore[arg-type]
    return pending


def _work(jobs: queue.SimpleQueue[Pending[object]]) -> None:
    while True:
        jobs.get().run()
