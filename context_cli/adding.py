"""`add`: fetch a source, build it (or take its ready `.db`), install it, optionally save a copy.

The library function behind `context add`; tests and other surfaces call it directly.
"""

from __future__ import annotations

import secrets
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from .atomic import TEMP_SUFFIX, atomic_path
from .build import BuildOptions, BuildResult, Progress, build
from .errors import ContextError
from .sources.base import Fetched
from .sources.resolve import SourceOptions, fetch_source
from .store.store import Installed, Spec, Store


@dataclass
class AddRequest:
    source: str
    name: str | None = None
    version: str | None = None
    registry: str = "local"
    path: str | None = None
    tag: str | None = None
    lang: str | None = None
    description: str | None = None
    save: Path | None = None
    embed: bool = True
    model: str | None = None
    interactive: bool = False
    quality: bool | None = None  # the second vector set (BuildOptions.quality); None: as config.json says
    max_pages: int | None = None  # websites: page cap (default web.MAX_PAGES)
    browser: str = "auto"  # websites: auto | never | always (see sources/site_pages.py)
    api: bool = True  # the API reference from the source's code, where it has some (BuildOptions.api)


@dataclass
class AddResult:
    installed: Installed
    build: BuildResult | None = None  # None when a ready .db was installed
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        label = self.installed.id.qualified
        if self.build is None:
            return f"Installed {label} ({self.installed.meta.get('chunk_count', '?')} sections)"
        b = self.build
        vectors = f"vectors: {b.embedding_model}" if b.embedding_model else "no vectors"
        skipped = f", {b.skipped} skipped" if b.skipped else ""
        return (f"Added {label}: {b.chunks} sections from {b.pages} pages{skipped}, "
                f"{b.tokens} tokens, {vectors}, in {b.seconds:.1f}s")


def add_source(req: AddRequest, *, store: Store | None = None, progress: Progress | None = None) -> AddResult:
    """Fetch, build and install one source; nothing is installed if any step fails.

    `pypi:`/`npm:` without `--path` go through the docs-source ladder (`sources.docsources`),
    as `sync` and the publisher do: a definition, the repository's tag, the artefact's docs,
    the versioned site, the README, whichever comes first.
    """
    if req.source.strip().startswith(("pypi:", "npm:")) and not req.path:
        from .sources.docsources.ladder import resolve_spec

        return add_fetched(resolve_spec(req.source.strip()).fetched, req, store=store, progress=progress)
    fetched = fetch_source(req.source, SourceOptions(tag=req.tag, path=req.path, interactive=req.interactive,
                                                     progress=progress, max_pages=req.max_pages,
                                                     browser=req.browser))
    return add_fetched(fetched, req, store=store, progress=progress)


def add_fetched(fetched: Fetched, req: AddRequest, *, store: Store | None = None,
                progress: Progress | None = None) -> AddResult:
    """Build and install what a source fetched (a ready `.db` is installed as it is); the
    fetched temp folders are removed whatever happens."""
    store = store or Store()
    # A released artefact (pypi:, npm:) is filed under its index's registry, as the publisher does.
    registry = req.registry if req.registry != "local" else fetched.registry or "local"
    try:
        if fetched.db_file is not None:
            installed = store.install(fetched.db_file, registry=registry if registry != "local" else None)
            if req.save:
                _save_copy(installed.path, req.save)
            return AddResult(installed=installed, notes=list(fetched.notes))
        opts = BuildOptions(
            name=req.name, version=req.version, registry=registry, path=req.path,
            lang=req.lang, description=req.description, embed=req.embed, embed_model=req.model,
            previous=_installed_path(store, req, fetched), quality=req.quality, api=req.api,
        )
        # One temp file: the build writes into it and the store validates and renames it.
        tmp = _temp_name(store.root)
        try:
            result = build(fetched, tmp, opts, progress, in_place=True)
            installed = store.install_owned(tmp, registry=registry, built_here=True)
        except (OSError, sqlite3.OperationalError) as e:  # a full disk, a file size limit, a read-only store
            raise ContextError(f"cannot write the package into {store.root}: {e}; nothing was installed") from None
        finally:
            tmp.unlink(missing_ok=True)
        if req.save:
            _save_copy(installed.path, req.save)
        result.path = installed.path
        return AddResult(installed=installed, build=result, notes=list(result.notes))
    finally:
        fetched.cleanup()


def _installed_path(store: Store, req: AddRequest, fetched: Fetched) -> Path | None:
    """The installed package this build replaces, if any: its unchanged pages are reused."""
    name, version = req.name or fetched.name, req.version or fetched.version
    if not name or not version:
        return None
    found = store.find(Spec(name, version, req.registry if req.registry != "local" else fetched.registry or "local"))
    return found[0].path if found else None


def _temp_name(folder: Path) -> Path:
    """A fresh temp name in `folder`, named as `atomic.py` names its own (never `*.db`, so it is
    never listed as a package, and `remove_stale` clears it if this process is killed).

    Only the name: the build creates the file inside the `try` that removes it, so a SIGTERM
    landing between creating it and entering that `try` cannot leave it behind."""
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f".building-{secrets.token_hex(8)}{TEMP_SUFFIX}"


def _save_copy(src: Path, dest: Path) -> None:
    """Write a shareable copy atomically."""
    with atomic_path(dest.expanduser(), prefix=".saving-") as tmp:
        shutil.copyfile(src, tmp)
