"""How the page workers start: forked from a single-threaded caller on Linux, spawned otherwise,
with the same pages either way."""

from __future__ import annotations

import sys
import threading

import pytest

from context_cli.build_pages import PARALLEL_MIN_FILES, _mp_context, build_pages, page_pool
from context_cli.embed.model import load_model


def _pages(n: int) -> list[tuple[str, bytes]]:
    body = "Words about configuring the cache backend and its timeouts, with :func:`f{0}` and `x`:mystery:. " * 8
    return [(f"p{i:03}.rst", f"Page {i}\n=======\n\nSection\n-------\n\n{body.format(i)}\n".encode())
            for i in range(n)]


def _same(got, want) -> None:
    import numpy as np

    assert [(p.title, p.chunks) for p in got] == [(p.title, p.chunks) for p in want]
    assert all(np.array_equal(g.vectors, w.vectors) for g, w in zip(got, want, strict=True))


@pytest.mark.skipif(sys.platform != "linux", reason="fork is used on Linux only")
def test_a_single_threaded_caller_forks_its_workers() -> None:
    # In a fresh process: this one may hold threads other tests started (search's helpers).
    import subprocess

    code = "from context_cli.build_pages import _mp_context; print(_mp_context().get_start_method())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "fork"


def test_a_caller_with_threads_spawns_its_workers_and_gets_the_same_pages() -> None:
    items = _pages(PARALLEL_MIN_FILES)
    model = load_model("default")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # like a progress bar's refresh thread
    other.start()
    try:
        assert _mp_context().get_start_method() == "spawn"
        with page_pool(len(items), "default", embed=True) as pool:
            assert pool is not None
            spawned = build_pages(items, model, pool)
    finally:
        stop.set()
        other.join()
    with page_pool(len(items), "default", embed=True) as pool:
        forked_or_spawned = build_pages(items, model, pool)
    here = build_pages(items, model)
    _same(spawned, here)
    _same(forked_or_spawned, here)


def test_workers_collect_garbage_less_often_and_the_caller_keeps_its_settings() -> None:
    import gc

    from context_cli.build_pages import WORKER_GC_THRESHOLD

    mine = gc.get_threshold()
    with page_pool(PARALLEL_MIN_FILES, None, embed=False) as pool:
        assert pool is not None
        assert pool.executor().submit(gc.get_threshold).result() == WORKER_GC_THRESHOLD
    assert gc.get_threshold() == mine != WORKER_GC_THRESHOLD


def test_pages_parsed_here_collect_garbage_as_workers_do_then_the_callers_setting_is_back() -> None:
    import gc

    from context_cli.build_pages import WORKER_GC_THRESHOLD

    mine = gc.get_threshold()
    seen = []

    def progress(stage: str, done: int, total: int) -> None:
        seen.append(gc.get_threshold())
        if done == 1:  # a second parse in this process meanwhile leaves the setting to the first
            build_pages(_pages(1), None)
            seen.append(gc.get_threshold())

    assert len(build_pages(_pages(3), None, progress=progress)) == 3
    assert seen == [WORKER_GC_THRESHOLD] * 4
    assert gc.get_threshold() == mine != WORKER_GC_THRESHOLD


def test_the_progress_bar_starts_no_thread_so_a_build_on_a_terminal_still_forks() -> None:
    from context_cli.surfaces.progress import progress_bar

    before = threading.active_count()
    with progress_bar(True) as bars:
        assert bars is not None
        bars.stage("parse", 1, 10)
        assert threading.active_count() == before
