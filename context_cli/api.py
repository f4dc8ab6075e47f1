"""The public Python API: build a package, open one, search some, manage the store.

`import context_cli as cx` exposes these names lazily (see `context_cli/__init__.py`); the CLI
and the MCP server go through the same functions and typed answers. docs/python.md has a
runnable example.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ContextError, InvalidPackage
from .search.answer import Answer
from .search.engine import DEFAULT_BUDGET, DEFAULT_LIMIT, SearchOptions, answer
from .store import store as _store
from .store.store import Installed, Spec, describe

if TYPE_CHECKING:
    from .adding import AddResult

Progress = Callable[[str, int, int], None]  # (stage, done, total), as `context add` reports it
PackageRef = Installed | str | os.PathLike[str]


class Store(_store.Store):
    """The installed packages (`context_cli.store.store.Store`), plus `add`.

    `add` builds, which is work above the store's layer, so it lives here rather than there.
    """

    def add(self, source: str, *, progress: Progress | None = None, **options: Any) -> AddResult:
        """Build (or, for a `.db`, install) `source` into this store: `context add` as a call.

        `options` are `context_cli.adding.AddRequest` fields (name, version, registry, path,
        tag, lang, description, save, embed, model, api).
        """
        from .adding import AddRequest, add_source

        return add_source(AddRequest(source=source, **options), store=self, progress=progress)


def open(path: str | os.PathLike[str], *, registry: str | None = None) -> Installed:  # noqa: A001
    """A package file, checked and described, ready to pass to `search`.

    It need not be installed; `registry` overrides the file's own (Neuledge Context's
    packages do not record one).
    """
    from .package.reader import open_package

    p = Path(path).expanduser()
    if not p.is_file():
        raise InvalidPackage(f"{p}: no such package file")
    with open_package(p, registry=registry) as pkg:
        return describe(pkg, p)


def build(source: str | os.PathLike[str], out: str | os.PathLike[str], *, name: str | None = None,
          version: str | None = None, registry: str = "local", path: str | None = None, tag: str | None = None,
          lang: str | None = None, description: str | None = None, embed: bool = True, model: str | None = None,
          api: bool = True, progress: Progress | None = None) -> Installed:
    """Build a package file at `out` from any source `context add` takes; nothing is installed.

    `out` is replaced atomically; a failed build leaves an existing `out` as it was. A `.db`
    source is checked and copied. `api=False` leaves out the API reference read from code.
    """
    from .build import BuildOptions
    from .build import build as build_package
    from .sources.resolve import SourceOptions, fetch_source

    dest = Path(out).expanduser()
    fetched = fetch_source(os.fspath(source), SourceOptions(tag=tag, path=path, progress=progress))
    try:
        if fetched.db_file is not None:
            return _copy_package(fetched.db_file, dest, name, version, registry)
        opts = BuildOptions(name=name, version=version, registry=registry, path=path, lang=lang,
                            description=description, embed=embed, embed_model=model, api=api)
        build_package(fetched, dest, opts, progress)
    finally:
        fetched.cleanup()
    return open(dest, registry=registry)


def search(query: str, packages: PackageRef | Iterable[PackageRef] | None = None, *,
           budget: int = DEFAULT_BUDGET, limit: int = DEFAULT_LIMIT, store: Store | None = None,
           warm: bool = False) -> Answer:
    """Search packages for `query`; the best sections that fit `budget` tokens, typed.

    `packages` holds `Installed` packages (from `open`, `build` or a `Store`), paths of
    package files, or installed specs such as "react@19"; None means everything installed.
    `warm`: the caller will ask many questions, so each package is read once up front.
    """
    return answer(query, resolve_packages(packages, store), SearchOptions(budget=budget, limit=limit, warm=warm))


def resolve_packages(packages: PackageRef | Iterable[PackageRef] | None, store: Store | None = None
                     ) -> list[Installed]:
    """Turn what a caller names into packages: paths are opened, specs resolved in the store."""
    if packages is None:
        return (store or Store()).installed()
    items = [packages] if isinstance(packages, (Installed, str, os.PathLike)) else list(packages)
    out: list[Installed] = []
    for item in items:
        if isinstance(item, Installed):
            out.append(item)
        elif isinstance(item, os.PathLike) or item.endswith(".db") or os.sep in item:
            out.append(open(item))
        else:
            out.append((store or Store()).resolve(item))
    return out


def _copy_package(src: Path, dest: Path, name: str | None, version: str | None, registry: str) -> Installed:
    """A ready `.db` source: check it, refuse an identity other than the one asked for, copy it."""
    from .atomic import atomic_path

    found = open(src, registry=registry if registry != "local" else None)
    wanted = Spec(name or found.id.name, version or found.id.version)
    if not wanted.matches(found.id):
        raise ContextError(f"{src.name} is {found.label}, not {wanted}; a package file cannot be renamed")
    with atomic_path(dest) as tmp:
        shutil.copyfile(src, tmp)
    return open(dest, registry=found.id.registry)
