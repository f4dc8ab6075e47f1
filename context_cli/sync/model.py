"""Plain data shared by the parsers and the planner."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ContextError, redact
from ..versions import MAX_VERSION_CHARS

MAX_LOCKFILE_BYTES = 64 * 1024 * 1024  # a real lockfile of 20,000 packages is ~10 MB
MAX_DEPTH = 200  # nesting deeper than any real lockfile is refused, not recursed into
MAX_RANGE_CHARS = 256  # `>=1.2,<2 || ^3.0.0-rc.1`: real ranges are a few dozen characters


class LockfileError(ContextError):
    """A dependency file that cannot be read: malformed, truncated, or of an unknown version."""

    def __init__(self, path: Path | str, message: str, line: int | None = None) -> None:
        self.path, self.line = str(path), line
        where = f"{self.path} line {line}" if line else self.path
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Dep:
    """One dependency as a project file states it.

    `version` is exact (from a lockfile or an `==` pin); `wanted` is a range when only a
    manifest names it (`version` is then None until the planner resolves it). `skip` says
    why a dependency that is not from a package index cannot have docs synced.
    """

    registry: str  # pip | npm | hex
    name: str  # as the index names it: PEP 503 for pip, scope kept for npm
    version: str | None
    direct: bool
    origin: str  # the file that says so, relative to the project folder
    wanted: str | None = None  # a version range (manifest without a lockfile)
    skip: str | None = None  # "git", "path", "url", "workspace", ... with detail

    def __post_init__(self) -> None:
        """A version or range longer than any real one (a hostile lockfile's 5,000 digits)
        never reaches the planner: the dependency is skipped, saying why. A skip reason that
        quotes a URL (`git+https://user:token@...`) has its credentials masked: sync's
        output lands in CI logs."""
        if self.skip:
            object.__setattr__(self, "skip", redact(self.skip))
        for what, value, limit in (("version", self.version, MAX_VERSION_CHARS),
                                   ("version range", self.wanted, MAX_RANGE_CHARS)):
            if value is not None and len(value) > limit:
                object.__setattr__(self, "version", None)
                object.__setattr__(self, "wanted", None)
                object.__setattr__(self, "skip", f"its {what} is {len(value)} characters long, "
                                                 f"over the {limit} any real one fits in")
                return

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.registry, self.name, self.version or self.wanted or "")


def dedupe(deps: list[Dep]) -> list[Dep]:
    """One entry per (registry, name, version or range, skip): direct wins over transitive."""
    best: dict[tuple[str, str, str, str], Dep] = {}
    for d in deps:
        k = (*d.key, d.skip or "")
        old = best.get(k)
        if old is None or (d.direct and not old.direct):
            best[k] = d
    return sorted(best.values(), key=lambda d: (d.registry, d.name, d.version or d.wanted or "", d.skip or ""))


def outside_project(label: str) -> LockfileError:
    """A dependency file (or a link or `-r` include) that leads out of the project: never
    read, so neither its lines nor its errors can show another folder's files."""
    return LockfileError(label, "leads outside the project (a link, or an include by an absolute or ../ path); "
                         "sync reads only files inside it: run it on a folder that holds both")


def read_text(path: Path, label: str | None = None) -> str:
    """A dependency file's text, size-capped and decoded strictly; errors name `label`."""
    where = label or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_LOCKFILE_BYTES:
            raise LockfileError(where, f"is {size} bytes, over the {MAX_LOCKFILE_BYTES}-byte limit")
        raw = path.read_bytes()
    except OSError as e:
        raise LockfileError(where, f"cannot be read: {e.strerror or e}") from None
    if b"\x00" in raw[:8192]:
        raise LockfileError(where, "is binary, not a text dependency file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise LockfileError(where, "is not UTF-8 text", line) from None
