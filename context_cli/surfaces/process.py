"""The process around a command of ours: one BLAS thread, SIGTERM as Ctrl-C, a bug as one
line and a non-zero exit, and a read-only command ended without the interpreter's teardown.
`entry.main` runs every command line in it (a plain query and the click group alike)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

ERROR_CHARS = 400  # an error is one line of at most this much (names and specs are clipped)
# Commands that only read packages and print: once their output is out, the process ends
# without the interpreter's teardown (see `_quick_exit`).
QUICK_EXIT = frozenset({"query", "search", "api"})


def run(command: Callable[[], int | None]) -> None:
    """Run `command` as the whole process and exit with its status: errors are one line and
    a non-zero exit, never a traceback."""
    # Query-time matrix products are tiny; BLAS threads only add wake-up latency (measured:
    # 2000x256 cosine 12 ms with 2 threads on a busy 2-core machine, 0.15 ms with one).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if sys.argv[1:2] == ["query"]:
        # One question, then `_quick_exit`: the few reference cycles it makes die with the
        # process, so the collector's passes over every object imported are saved (2 % of a
        # cold query's instructions). `search` may be a batch of thousands and collects.
        import gc

        gc.disable()
    _exit_cleanly_on_sigterm()
    try:
        sys.exit(command())
    except SystemExit as e:
        if sys.argv[1:2] and sys.argv[1] in QUICK_EXIT:
            _quick_exit(e.code)
        raise
    except Exception as e:  # noqa: BLE001 - a bug still gets one line, unless debugging
        from ..environment import DEBUG

        if DEBUG.value():
            raise
        from ..errors import clip
        from .render import echo

        echo(f"Error: internal error: {type(e).__name__}: {clip(str(e), ERROR_CHARS)} "
             "(set CONTEXT_DEBUG=1 for details)", err=True)
        sys.exit(2)


def _quick_exit(code: object) -> None:
    """End the process now, as a normal exit would but without freeing every module's objects
    one by one: that teardown costs a cold query 25-50 ms once numpy is loaded (measured on a
    2-core machine), for nothing. atexit hooks run and output is flushed first. A process
    with a non-daemon thread still running, an exit status that is not a number, or a
    profiler or tracer attached (cProfile, coverage, a debugger: they report at exit) exits
    normally (returns here)."""
    import atexit
    import threading

    if not (code is None or isinstance(code, int)) or sys.getprofile() or sys.gettrace():
        return
    if any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    atexit._run_exitfuncs()  # (they run once: a normal exit after this finds none left)
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: started with that stream closed
                stream.flush()
    except (OSError, ValueError):  # a closed or broken stream: the normal exit reports it as it always has
        return
    os._exit(code or 0)


def _exit_cleanly_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C: `finally` blocks remove temp files, nothing half-installed stays.

    Python's default for SIGTERM ends the process on the spot, leaving a download or build's
    temp file behind.
    """
    import signal

    from ..atomic import TERMINATING

    def stop(signum: int, frame: object) -> None:
        TERMINATING.set()  # in case the exit below is swallowed by a C callback: no commit after this
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
