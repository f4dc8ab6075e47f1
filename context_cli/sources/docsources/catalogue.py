"""The definitions the resolver consults: ours (`packages.yaml`) and any in Neuledge Context's
layout (`<root>/<registry>/<name>.yaml`).

Where they are read from: `$CONTEXT_DEFINITIONS` (paths joined by the OS path separator, each a
`packages.yaml`, one definition file or a Neuledge tree), else the catalogue that ships inside
the `registry` package (`registry/packages.yaml`, package data of the wheel, so an installed
`context` finds it without a checkout). A file that does not load costs only its own
definitions: the reason is kept and said once for the dependencies that looked there.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...environment import DEFINITIONS

if TYPE_CHECKING:
    from registry.definitions import Definition

ENV = DEFINITIONS.name


@dataclass(frozen=True)
class Catalogue:
    definitions: dict[tuple[str, str], Definition]
    problems: tuple[str, ...] = ()

    def find(self, registry: str, name: str) -> Definition | None:
        return self.definitions.get((registry, _key(registry, name)))


_lock = threading.Lock()
_cache: dict[tuple[tuple[str, float], ...], Catalogue] = {}


def default_paths() -> list[Path]:
    env = DEFINITIONS.value()
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    return [shipped()]


def shipped() -> Path:
    """The catalogue the distribution carries (`registry/packages.yaml`)."""
    import registry

    return Path(registry.__file__).resolve().parent / "packages.yaml"


def load_catalogue(paths: list[Path] | None = None) -> Catalogue:
    """Every definition in `paths` (default: `default_paths()`), first one wins per package;
    cached while the files are unchanged."""
    paths = default_paths() if paths is None else paths
    stamp = tuple((str(p), _mtime(p)) for p in paths)
    with _lock:
        if stamp in _cache:
            return _cache[stamp]
    from registry.definitions import load

    found: dict[tuple[str, str], Definition] = {}
    problems: list[str] = []
    for path in paths:
        if not path.exists():
            continue
        result = load(path)
        problems += [str(p) for p in result.errors[:3]]
        for d in result.definitions:
            found.setdefault((d.registry, _key(d.registry, d.name)), d)
    catalogue = Catalogue(found, tuple(problems))
    with _lock:
        _cache[stamp] = catalogue
    return catalogue


def _key(registry: str, name: str) -> str:
    """PyPI names compare by PEP 503 (`Flask_SQLAlchemy` is `flask-sqlalchemy`)."""
    if registry == "pip":
        from packaging.utils import canonicalize_name

        return str(canonicalize_name(name))
    return name


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return -1.0
