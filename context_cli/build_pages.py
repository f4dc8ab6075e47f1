"""A build's per-page work: parse -> chunk -> embed -> count terms, on every core for big trees.

Everything a page needs is independent of the other pages, so it all happens where the page
is parsed: in one spawned worker process per core for a big tree, each loading the embedding
model once, or in the caller's process for a small one, where a pool would cost more than it
saves. The caller only collects the results, drops cross-page duplicates and writes.
"""

from __future__ import annotations

import functools
import gc
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .chunk.chunker import chunk_document, content_key
from .document import Chunk, Document
from .package.bm25 import TermCounts, count_terms

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.context import BaseContext

    import numpy as np

    from .embed.model import Embedder

PARALLEL_MIN_FILES = 64

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class PageWork:
    """One page, ready to write: its chunks in reading order, their `content_key`s (for the
    package-wide dedupe), one vector per chunk (None when the build has no vectors) and the
    chunks' BM25 terms."""

    title: str
    url: str | None
    kind: str
    chunks: list[Chunk]
    keys: list[bytes]
    vectors: np.ndarray | None
    terms: TermCounts


Result = PageWork | None | Exception  # a page, not a docs page, or why it failed


def page_work(doc: Document, model: Embedder | None) -> PageWork:
    """Chunk, embed and count one parsed page."""
    from .embed.text import embed_text

    chunks = chunk_document(doc)
    vectors = model.encode([embed_text(c) for c in chunks]) if model is not None else None
    return PageWork(doc.title, doc.url, doc.kind, chunks, [content_key(c.content) for c in chunks], vectors,
                    chunk_terms(chunks))


def chunk_terms(chunks: Sequence[Chunk]) -> TermCounts:
    """The BM25 terms of sections: their page's title, their own title and their text."""
    return count_terms([(c.doc_title, c.section_title, c.content) for c in chunks])


def build_pages(items: Sequence[tuple[str, bytes]], model: Embedder | None, pool: Pool | None = None,
                progress: Progress | None = None, *, root: str | None = None) -> list[Result]:
    """Parse and prepare (rel_path, bytes) pairs in order, in `pool` when one is given and
    there are enough of them (a rebuild that reuses most pages has few). `root` is the folder
    the paths are relative to, where pages find the files they include.

    A pool that breaks (a worker killed, a model it cannot load) leaves the work to this process.
    """
    if pool is not None and len(items) >= PARALLEL_MIN_FILES:
        try:
            return _in_pool(pool.executor(), items, model.fingerprint if model else None, progress, root)
        except (OSError, RuntimeError):  # BrokenProcessPool is a RuntimeError: work here instead
            pass
    results = []
    with _collecting_less():
        for n, item in enumerate(items, start=1):
            results.append(_one(item, model, root))
            if progress:
                progress("parsing", n, len(items))
    return results


class Pool:
    """Worker processes for a big tree: started at once (`start`), before the files are read,
    so that their imports and model loading overlap with the caller's own work, or on first
    use, once the caller knows there is enough to parse."""

    def __init__(self, workers: int, model_spec: str | None, embed: bool, *, start: bool) -> None:
        self._args = (workers, model_spec, embed)
        self._executor: ProcessPoolExecutor | None = None
        self._broken = False
        if start:
            self._start()

    def executor(self) -> ProcessPoolExecutor:
        if self._executor is None and not self._broken:
            self._start()
        if self._executor is None:
            raise RuntimeError("the worker pool could not start")
        return self._executor

    def _start(self) -> None:
        from concurrent.futures import ProcessPoolExecutor

        workers, model_spec, embed = self._args
        context = _mp_context()
        if context.get_start_method() == "fork":
            _preload(model_spec, embed)
        self._executor = ProcessPoolExecutor(workers, mp_context=context,
                                             initializer=_start_worker, initargs=(model_spec, embed))
        try:
            for _ in range(workers):  # one submit per worker starts them all now
                self._executor.submit(_ready)
        except (OSError, RuntimeError):
            self.close()
            self._broken = True

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(cancel_futures=True)
            self._executor = None


@contextmanager
def page_pool(files: int, model_spec: str | None, *, embed: bool, start: bool = True) -> Iterator[Pool | None]:
    """A pool for `files` pages if the tree is big enough: a worker a core, one on a machine
    of one core too (the parse's caches then die with it: Django's tree peaks at 161 MB, not
    the 182 MB of one process, for the same CPU; docs/performance.md "Build, round 18"); with
    `embed`, each worker loads the model `model_spec` names. See `Pool` for `start`."""
    workers = min(os.cpu_count() or 1, 8)
    if files < PARALLEL_MIN_FILES:
        yield None
        return
    pool = Pool(workers, model_spec, embed, start=start)
    try:
        yield pool
    finally:
        pool.close()


def _in_pool(executor: ProcessPoolExecutor, items: Sequence[tuple[str, bytes]], fingerprint: str | None,
             progress: Progress | None, root: str | None) -> list[Result]:
    """The pages parsed in the pool, biggest files first so that the last ones, which one
    worker parses while the other may idle, are small; returned in the order of `items`."""
    order = sorted(range(len(items)), key=lambda i: -len(items[i][1]))
    results: list[Result] = [None] * len(items)
    work = functools.partial(_one_in_worker, fingerprint=fingerprint, root=root)
    for n, (i, result) in enumerate(zip(order, executor.map(work, [items[i] for i in order], chunksize=4),
                                        strict=True), start=1):
        results[i] = result
        if progress:
            progress("parsing", n, len(items))
    return results


def _one(item: tuple[str, bytes], model: Embedder | None, root: str | None) -> Result:
    from .parse import parse_file

    try:
        doc = parse_file(*item, root=root)
    except Exception as e:  # noqa: BLE001 - one bad file must never abort the build
        return e
    return None if doc is None else page_work(doc, model)


def _mp_context() -> BaseContext:
    """fork where it is safe, spawn elsewhere.

    A forked worker starts at once with everything its parent imported and loaded (about
    0.5 s of CPU less per worker than a spawned one, which imports docutils and loads the
    model itself). Forking is safe only on Linux and while this process runs a single
    thread: a thread holding a lock at the fork (a progress bar writing to the terminal,
    an MCP server) would leave it held forever in the child.
    """
    import multiprocessing
    import sys
    import threading

    single = threading.active_count() == 1
    return multiprocessing.get_context("fork" if sys.platform == "linux" and single else "spawn")


def _preload(model_spec: str | None, embed: bool) -> None:
    """Import the parsers and load the model here, once, for forked workers to inherit."""
    from .errors import ModelUnavailable
    from .parse import rst, split  # noqa: F401 - docutils and the Sphinx stand-ins

    if embed:
        from .embed.model import load_model

        try:
            load_model(model_spec)
        except ModelUnavailable:  # the build reports it when it loads the model itself
            pass


_worker_model: Embedder | None = None


# A worker's garbage collector: a page's doctree is tens of thousands of objects in reference
# cycles (every node points to its parent), and at Python's default threshold (700 new objects)
# the collector ran about 1,900 times over Django's docs and took a sixth of the workers' CPU.
# Collecting every 20,000 objects halves that for ~10 MB more per worker.
WORKER_GC_THRESHOLD = (20_000, 10, 100)


class _Collecting:
    """The workers' collector threshold (WORKER_GC_THRESHOLD) while this process parses pages
    itself (a tree too small for workers, a rebuild of few pages),
    the caller's own one again once the last such parse in the process ends (parses in
    several threads at once restore it once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parses = 0
        self._saved = gc.get_threshold()

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if not self._parses:
                self._saved = gc.get_threshold()
                gc.set_threshold(*WORKER_GC_THRESHOLD)
            self._parses += 1
        try:
            yield
        finally:
            with self._lock:
                self._parses -= 1
                if not self._parses:
                    gc.set_threshold(*self._saved)


_collecting_less = _Collecting()


def _start_worker(model_spec: str | None, embed: bool) -> None:
    """Load the build's model once per worker (a forked worker has it already), and set the
    garbage collector for parsing: what the worker holds now (modules, the model) is frozen
    out of its scans, and it collects less often."""
    global _worker_model
    # One worker per core already: the tokenizer's own threads would only compete with them.
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    if embed:
        from .embed.model import load_model

        _worker_model = load_model(model_spec)
    gc.freeze()
    gc.set_threshold(*WORKER_GC_THRESHOLD)


def _ready() -> None:
    """A no-op task: submitting one per worker makes the pool start them all at once."""


def _one_in_worker(item: tuple[str, bytes], fingerprint: str | None, root: str | None) -> Result:
    """`_one` with the worker's model, which must be the caller's: if it is not (the model's
    files changed in between), the RuntimeError stops the pool and the caller does the work."""
    if (_worker_model.fingerprint if _worker_model else None) != fingerprint:
        raise RuntimeError("the worker's embedding model is not the build's")
    return _one(item, _worker_model, root)
