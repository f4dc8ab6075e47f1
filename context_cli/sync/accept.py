"""The project's accept list: dependencies known to have no docs anywhere, which must not fail
`context sync --check` in CI.

Read from `pyproject.toml` (`[tool.context] accept = ["npm/left-pad", "pip/six"]`) and from
`.context/config` (TOML, the same `accept` key), both at the project root. An entry is
`registry/name` or a bare `name` (any registry).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from .model import LockfileError, read_text

CONFIG = Path(".context") / "config"
MAX_ENTRIES = 10_000


def read_accepted(root: Path) -> frozenset[str]:
    """Every accepted `registry/name` or `name`; a malformed file is a LockfileError naming it."""
    found: set[str] = set()
    for rel, keys in (("pyproject.toml", ("tool", "context")), (str(CONFIG), ())):
        path = root / rel
        if not path.is_file():
            continue
        try:
            data: object = tomllib.loads(read_text(path, rel))
        except tomllib.TOMLDecodeError as e:
            raise LockfileError(rel, f"invalid TOML ({e})") from None
        for key in keys:
            data = data.get(key) if isinstance(data, dict) else None
        accept = data.get("accept") if isinstance(data, dict) else None
        if accept is None:
            continue
        if not isinstance(accept, list) or not all(isinstance(a, str) for a in accept) or len(accept) > MAX_ENTRIES:
            where = "[tool.context] accept" if keys else "accept"
            raise LockfileError(rel, f"{where} must be a list of \"registry/name\" or \"name\" strings")
        found.update(a.strip() for a in accept if a.strip())
    return frozenset(found)


def is_accepted(accepted: frozenset[str], registry: str, name: str) -> bool:
    return name in accepted or f"{registry}/{name}" in accepted
