"""Progress for long work: rich bars on a terminal (stderr), silence when piped.

One notion for every command: `progress_bar()` yields `Bars` (or None when nothing should be
drawn). Work counted in steps (parse, embed) reports through `Bars.stage`, the callback shape
the builder takes; downloads, counted in bytes, through a callback from `Bars.download`, and
every other raw download of the command (an sdist, a tarball, a zipped site) gets a bar of
its own through `sources.transfer.watching`, with its size and rate.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .render import table_cell

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn, Task


REDRAW_EVERY = 0.1  # seconds between redraws of a download (a 64 KiB read each is too often)


class Bars:
    """The bars of one command; each stage or download gets its own line."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._tasks: dict[str, Any] = {}
        self._drawn = 0.0

    def stage(self, stage: str, done: int, total: int) -> None:
        """(stage, done, total): the builder's and the sources' progress callback."""
        self._update(stage, done, total, in_bytes=False)

    def download(self, label: str) -> Callable[[int, int | None], None]:
        """A (done, total) byte-count callback for one download; total None when unknown."""
        return lambda done, total: self._update(label, done, total, in_bytes=True)

    def _update(self, label: str, done: int, total: int | None, *, in_bytes: bool) -> None:
        if label not in self._tasks:  # a label names a package or page: strangers' text, shown as is
            self._tasks[label] = self._progress.add_task(table_cell(label), total=total, in_bytes=in_bytes)
        now = time.monotonic()
        redraw = not in_bytes or done == total or now - self._drawn >= REDRAW_EVERY
        self._progress.update(self._tasks[label], completed=done, total=total, refresh=redraw)
        if redraw:
            self._drawn = now


@contextmanager
def progress_bar(enabled: bool | None = None) -> Iterator[Bars | None]:
    """Yield `Bars` while stderr is a terminal (or `enabled`), else None."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    # Redrawn on each report, not by a refresh thread: a build forks its page workers only
    # while the process runs a single thread (build_pages._mp_context).
    with Progress(*columns(), console=Console(stderr=True), transient=True, auto_refresh=False) as progress:
        with watching_downloads(progress):
            yield Bars(progress)


@contextmanager
def watching_downloads(progress: Progress) -> Iterator[None]:
    """While inside, every raw download of the command gets a line of `progress` of its own."""
    from ..sources.transfer import watching

    with watching(Bars(progress).download):
        yield


def columns() -> list[ProgressColumn]:
    """Every bar's columns: what it is, the bar, how much (`amount`), the time taken."""
    from rich.progress import BarColumn, ProgressColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class Amount(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(amount(task), style="progress.download")

    return [TextColumn("{task.description}"), BarColumn(), Amount(), TimeElapsedColumn()]


def amount(task: Task) -> str:
    """`12/40` for steps, `1.2 MB of 3.4 MB, 2.1 MB/s` for downloads (the rate once known)."""
    from rich.filesize import decimal

    done, total = int(task.completed), task.total
    if task.fields.get("in_bytes"):
        rate = f", {decimal(int(task.speed))}/s" if task.speed else ""
        return decimal(done) + (f" of {decimal(int(total))}" if total else "") + rate
    return f"{done}/{int(total)}" if total else str(done)
