"""Fault injection around `context add FOLDER`: SIGTERM, kill -9 and a full disk (`ulimit -f`)
while a package is being built. The store must never show a half-built package, and the
package installed before must still answer.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from .runner import (
    StoreSnapshot,
    assert_good_package_searchable,
    assert_one_line_error,
    finish,
    listed,
    run,
    spawn,
)


@pytest.fixture
def big_folder(tmp_path: Path) -> Path:
    """Enough Markdown that building it (with embeddings) takes a moment."""
    root = tmp_path / "bigdocs"
    root.mkdir()
    for i in range(300):  # every section different, so none is deduplicated away and the build lasts
        parts = [f"## Part {n}\n\n" + f"Pipeline {i}-{n} streams records from source {i} to sink {n} with retry "
                 f"policy {i * n} and backpressure window {i + n}. " * 12 for n in range(3)]
        (root / f"page{i:03}.md").write_text(f"# Page {i}\n\n" + "\n\n".join(parts) + "\n", "utf-8")
    return root


def _interrupted_add(home: Path, folder: Path, sig: int) -> None:
    """Start `context add FOLDER`, wait until its temp package exists, then signal it."""
    proc = spawn(["add", str(folder), "--name", "big", "--pkg-version", "1.0.0"], home)
    packages = home / "packages"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.name.startswith(".") for p in packages.iterdir()):
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the build finished before it could be interrupted"
    os.kill(proc.pid, sig)
    o = finish(proc, ("add",), 20)
    assert not o.timed_out and o.rc != 0, o


def test_sigterm_during_add_leaves_nothing(home: Path, snapshot: StoreSnapshot, big_folder: Path) -> None:
    _interrupted_add(home, big_folder, signal.SIGTERM)
    snapshot.assert_unchanged(home)


def test_kill9_during_add_installs_nothing(home: Path, big_folder: Path) -> None:
    """kill -9 cannot clean up; what it leaves is never listed, and the good package answers."""
    _interrupted_add(home, big_folder, signal.SIGKILL)
    assert listed(home) == {"local/goodlib@1.0.0"}
    assert_good_package_searchable(home)


def test_full_disk_during_add(home: Path, snapshot: StoreSnapshot, big_folder: Path) -> None:
    o = run(["add", str(big_folder), "--name", "big", "--no-embed"], home, timeout=60, fsize=64 * 1024)
    assert_one_line_error(o)
    snapshot.assert_unchanged(home)
    assert_good_package_searchable(home)
