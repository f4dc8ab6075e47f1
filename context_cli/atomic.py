"""Atomic file replacement: the one way this project writes a file that others read.

A temp file is made beside the target (same filesystem, so the rename is atomic), filled by
the caller, flushed to disk and renamed over the target; on any failure it is removed.
Temp names start with a dot and end with `TEMP_SUFFIX`, never `.db`, so a glob for packages
never lists a half-written file, and `remove_stale` can find leftovers of a killed process.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TEMP_SUFFIX = ".partial"
# Set when the process was asked to stop (SIGTERM, see surfaces/cli.py). The signal's
# SystemExit can be swallowed when it lands inside a C callback (SQLite's progress handler),
# so every commit checks this too: nothing is put in place once termination was asked for.
TERMINATING = threading.Event()
# SQLite side files that a temp database may leave next to itself.
_SIDE_FILES = ("-journal", "-wal", "-shm")


@contextmanager
def atomic_path(dest: Path | str, *, prefix: str = ".tmp-", mode: int | None = None,
                durable: bool = True) -> Iterator[Path]:
    """Yield a fresh temp path beside `dest`; on a clean exit it replaces `dest` atomically.

    The caller writes the temp file (or a SQLite database) however it likes; `mode` is set
    on the temp file before anything is written (0o600 for secrets). `durable=False` skips
    the fsyncs: for a cache, whose entry lost in a power cut costs only a refetch, while two
    fsyncs cost 1.7 ms a write here (more on a busy disk).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # here, not at the top: every CLI start imports this module

    fd, name = tempfile.mkstemp(prefix=prefix, suffix=TEMP_SUFFIX, dir=dest.parent)
    tmp = Path(name)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        os.close(fd)
        yield tmp
        if durable:
            fsync_file(tmp)
        if TERMINATING.is_set():
            raise SystemExit(143)
        os.replace(tmp, dest)
        if durable:
            fsync_dir(dest.parent)
    except BaseException:
        _unlink_with_side_files(tmp)
        raise
    finally:
        for side in _SIDE_FILES:
            Path(f"{tmp}{side}").unlink(missing_ok=True)


def write_bytes(dest: Path | str, data: bytes, *, mode: int | None = None, durable: bool = True) -> Path:
    """Replace `dest` with `data` atomically (`durable`: see `atomic_path`)."""
    with atomic_path(dest, mode=mode, durable=durable) as tmp:
        tmp.write_bytes(data)
    return Path(dest)


def write_text(dest: Path | str, text: str, *, mode: int | None = None, durable: bool = True) -> Path:
    """Replace `dest` with `text` (UTF-8) atomically (`durable`: see `atomic_path`)."""
    return write_bytes(dest, text.encode("utf-8"), mode=mode, durable=durable)


def remove_stale(folder: Path, older_than: float = 3600.0) -> int:
    """Delete temp files (and their SQLite side files) a killed process left in `folder`.

    Only files older than `older_than` seconds go, so a write in progress in another process
    is left alone. Returns how many temp files were removed.
    """
    removed = 0
    cutoff = time.time() - older_than
    try:
        leftovers = list(folder.glob(f".*{TEMP_SUFFIX}*"))
    except OSError:
        return 0
    for path in leftovers:
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += path.name.endswith(TEMP_SUFFIX)
        except OSError:
            continue
    return removed


def _unlink_with_side_files(path: Path) -> None:
    path.unlink(missing_ok=True)
    for side in _SIDE_FILES:
        Path(f"{path}{side}").unlink(missing_ok=True)


def fsync_file(path: Path) -> None:
    """Flush a file's bytes to disk (before a rename makes it visible)."""
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def fsync_dir(path: Path) -> None:
    """Make the rename durable; not every platform can open a directory (Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
