"""Project scope for agents: the nearest `.context/docs.lock` says which packages a session sees.

`context serve` and `context search` call these to show an agent the project's versions and
nothing else (a bare library name then means the project's version).
"""

from __future__ import annotations

from pathlib import Path

from . import LOCK_PATH


def find_docs_lock(start: Path) -> Path | None:
    """The nearest `.context/docs.lock` in `start` or a folder above it."""
    here = start.resolve()
    for folder in (here, *here.parents):
        candidate = folder / LOCK_PATH
        if candidate.is_file():
            return candidate
    return None


def project_specs(lock_path: Path) -> list[str]:
    """`registry/name@version` for every package the lock lists, sorted; a damaged lock raises
    `LockfileError` (one line naming the file) rather than silently widening the scope."""
    from .docslock import read_lock  # only where a project has a lock: a plain search needs none

    return sorted({e.spec for e in read_lock(lock_path)})
