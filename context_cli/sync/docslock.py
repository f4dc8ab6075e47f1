"""`.context/docs.lock`: which docs a project synced, meant to be committed.

Sorted, stable JSON (no timestamps, no local paths), so the same dependencies give the same
bytes on every machine and a diff shows only what changed. Written atomically.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..atomic import write_text
from . import LOCK_PATH
from .model import LockfileError, read_text

FORMAT = 1


@dataclass(frozen=True, order=True)
class Entry:
    registry: str
    name: str
    version: str
    sha256: str
    size: int
    source: str  # the registry server URL, or the artefact / git tag it was built from

    @property
    def spec(self) -> str:
        return f"{self.registry}/{self.name}@{self.version}"


def lock_path(project: Path) -> Path:
    return project / LOCK_PATH


def render(entries: list[Entry]) -> str:
    packages = [asdict(e) for e in sorted(set(entries))]
    return json.dumps({"format": FORMAT, "packages": packages}, indent=2, sort_keys=True) + "\n"


def read_lock(path: Path) -> list[Entry]:
    """The entries of a docs.lock; a missing file has none; a damaged one is a LockfileError."""
    if not path.is_file():
        return []
    label = str(path)
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise LockfileError(label, f"invalid JSON ({e.msg}); delete it and run `context sync`", e.lineno) from None
    except RecursionError:
        raise LockfileError(label, "is nested too deeply to be a docs.lock") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("packages"), list):
        raise LockfileError(label, f"is not a docs.lock of format {FORMAT}; delete it and run `context sync`")
    entries = []
    for item in data["packages"]:
        try:
            entries.append(Entry(str(item["registry"]), str(item["name"]), str(item["version"]),
                                 str(item["sha256"]), int(item["size"]), str(item["source"])))
        except (KeyError, TypeError, ValueError):
            raise LockfileError(label, f"has an entry without registry, name, version, sha256, size "
                                f"and source: {str(item)[:80]}") from None
    return entries


def write_lock(path: Path, entries: list[Entry]) -> bool:
    """Write `entries` unless the file already says exactly that; True when written."""
    text = render(entries)
    try:
        if path.read_text("utf-8") == text:
            return False
    except OSError:
        pass
    write_text(path, text)
    return True
