"""`.context/docs.lock`: which docs a project synced, meant to be committed.

Sorted, stable JSON (no timestamps, no local paths), so the same dependencies give the same
bytes on every machine and a diff shows only what changed. Written atomically.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from ..atomic import write_text
from ..errors import clip
from . import LOCK_PATH
from .model import LockfileError, read_text

FORMAT = 1


DOCS_KINDS = ("docs", "readme", "api")  # real docs; the README only; the README plus the API reference
MAX_SIZE = 1 << 40  # no package is a terabyte
MAX_SOURCE_CHARS = 2048
_SHA256 = re.compile(r"^[0-9a-f]{64}\Z")
_TRIED = re.compile(r"^[0-9a-f]{0,64}\Z")


@dataclass(frozen=True, order=True)
class Entry:
    registry: str
    name: str
    version: str
    sha256: str
    size: int
    source: str  # the registry server URL, or the artefact / git tag it was built from
    docs: str = "docs"  # "readme" / "api": only the README (and the API reference) was found; retried
    tried: str = ""  # for those, the catalogue definitions they were built with (`actions.definition_stamp`)

    @property
    def spec(self) -> str:
        return f"{self.registry}/{self.name}@{self.version}"


def lock_path(project: Path) -> Path:
    return project / LOCK_PATH


def render(entries: list[Entry]) -> str:
    """Stable JSON; `docs` is written only when it is not "docs", so locks of real docs keep
    the bytes they had before the field existed."""
    packages = []
    for e in sorted(set(entries)):
        item = asdict(e)
        if e.docs == "docs":
            del item["docs"]
        if not e.tried:
            del item["tried"]
        packages.append(item)
    return json.dumps({"format": FORMAT, "packages": packages}, indent=2, sort_keys=True) + "\n"


def read_lock(path: Path) -> list[Entry]:
    """The entries of a docs.lock; a missing file has none; a damaged one (any field of any
    entry out of shape: `"size": Infinity`, a 5,000-digit version) is a LockfileError naming
    the file and the entry."""
    if not path.is_file():
        return []
    label = str(path)
    try:
        data = json.loads(read_text(path), parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise LockfileError(label, f"invalid JSON ({e.msg}); delete it and run `context sync`", e.lineno) from None
    except ValueError as e:
        raise LockfileError(label, f"{e}, which JSON does not have; delete it and run `context sync`") from None
    except RecursionError:
        raise LockfileError(label, "is nested too deeply to be a docs.lock") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("packages"), list):
        raise LockfileError(label, f"is not a docs.lock of format {FORMAT}; delete it and run `context sync`")
    return [_entry(item, label, i) for i, item in enumerate(data["packages"])]


def _no_constant(name: str) -> None:
    raise ValueError(f"holds {name}")


def _entry(item: object, label: str, index: int) -> Entry:
    from ..package.identity import InvalidIdentity, check_identity

    def bad(what: str) -> LockfileError:
        return LockfileError(label, f"entry {index + 1}: {what}; fix it or delete the file and run `context sync`")

    if not isinstance(item, dict):
        raise bad("is not an object")
    missing = [k for k in ("registry", "name", "version", "sha256", "size", "source") if k not in item]
    if missing:
        raise bad(f"has no {', '.join(missing)}")
    strings = {k: item[k] for k in ("registry", "name", "version", "sha256", "source")}
    wrong = [k for k, v in strings.items() if not isinstance(v, str)]
    if wrong:
        raise bad(f"{', '.join(wrong)} must be text")
    try:
        check_identity(item["registry"], item["name"], item["version"])
    except InvalidIdentity as e:
        raise bad(clip(str(e), 160)) from None
    if not _SHA256.match(item["sha256"]):
        raise bad("sha256 is not 64 lowercase hex digits")
    size = item["size"]
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_SIZE:
        raise bad(f"size must be a whole number of bytes from 0 to {MAX_SIZE}, not {clip(repr(size), 40)}")
    if len(item["source"]) > MAX_SOURCE_CHARS:
        raise bad(f"source is over {MAX_SOURCE_CHARS} characters")
    docs = item.get("docs", "docs")
    if docs not in DOCS_KINDS:
        raise bad(f"docs must be one of {', '.join(DOCS_KINDS)}")
    tried = item.get("tried", "")
    if not isinstance(tried, str) or not _TRIED.match(tried):
        raise bad("tried must be up to 64 lowercase hex digits")
    return Entry(item["registry"], item["name"], item["version"], item["sha256"], size, item["source"], docs, tried)


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
