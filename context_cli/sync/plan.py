"""Decide, then do: what each dependency needs to have its docs at exactly its version.

Order per dependency: installed -> nothing; on the registry server -> download; else built
from the released artefact (unless `build=False`), the source repository's tag when the
artefact has only a README; else "unavailable", with the versions that do exist. Never
another version. Remote work runs a few at a time (WORKERS), never all at once.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..digest import file_sha256
from ..errors import ContextError, RegistryError
from . import actions
from .docslock import Entry
from .model import Dep
from .ranges import newest_satisfying, satisfies

if TYPE_CHECKING:
    from ..store.store import Store

WORKERS = 3  # downloads and builds at once
SHOWN_VERSIONS = 8

# What a row's `action` says, before and after `execute`.
INSTALLED, DOWNLOAD, BUILD, SKIP, UNAVAILABLE, MISSING = (
    "up to date", "download", "build", "skip", "not available", "missing")
DOWNLOADED, BUILT = "downloaded", "built"


@dataclass
class Row:
    """One dependency's line in the table and in `--json`."""

    registry: str
    name: str
    version: str | None  # the exact version synced (resolved from `wanted` when a range)
    wanted: str | None  # the range a manifest gave, when no lockfile pinned it
    direct: bool
    origin: str
    action: str
    source: str = ""
    size: int | None = None
    sha256: str | None = None
    notes: list[str] = field(default_factory=list)
    path: Path | None = None
    elsewhere: list[str] = field(default_factory=list)  # what exists, told if the build fails

    @property
    def label(self) -> str:
        return f"{self.registry}/{self.name}" + (f"@{self.version}" if self.version else "")

    @property
    def failed(self) -> bool:
        return self.action in (UNAVAILABLE, MISSING)

    def to_json(self) -> dict[str, Any]:
        return {"registry": self.registry, "name": self.name, "version": self.version,
                "wanted": self.wanted, "direct": self.direct, "origin": self.origin,
                "action": self.action, "source": self.source or None, "size": self.size,
                "sha256": self.sha256, "notes": self.notes}


@dataclass
class Context:
    """What planning needs besides the dependencies."""

    store: Store
    previous: dict[tuple[str, str, str], Entry]  # the project's docs.lock, by identity
    build: bool = True
    offline: bool = False  # --check: nothing leaves the machine
    server_down: str | None = None  # once the registry server cannot be reached, stop asking it


def make_plan(deps: list[Dep], ctx: Context) -> list[Row]:
    """A row per dependency; only deps that are not installed cost a registry question."""
    rows: list[Row] = []
    remote: list[Row] = []
    for dep in deps:
        row = Row(dep.registry, dep.name, dep.version, dep.wanted, dep.direct, dep.origin, "")
        if dep.skip:
            row.action, row.notes = SKIP, [dep.skip]
        elif row.version is None:
            if not _resolve_locally(row, ctx):
                if ctx.offline:
                    row.action = MISSING
                    row.notes.append(f"no installed version satisfies {row.wanted}")
                else:
                    remote.append(row)
        elif not _mark_installed(row, ctx):
            if ctx.offline:
                row.action = MISSING
                others = actions.installed_versions(ctx.store, row.registry, row.name)
                if others:
                    row.notes.append(f"installed at {', '.join(others[:SHOWN_VERSIONS])} instead")
            else:
                remote.append(row)
        rows.append(row)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        list(pool.map(lambda r: _plan_remote(r, ctx), remote))
    return rows


def _mark_installed(row: Row, ctx: Context) -> bool:
    assert row.version is not None
    local = actions.installed_path(ctx.store, row.registry, row.name, row.version)
    if local is None:
        return False
    row.action, row.size, row.path = INSTALLED, local.size, local.path
    prev = ctx.previous.get((row.registry, row.name, row.version))
    if prev is not None and prev.size == local.size:
        row.sha256, row.source = prev.sha256, prev.source
    return True


def _resolve_locally(row: Row, ctx: Context) -> bool:
    """A range already synced (the docs.lock's version, still inside the range and installed);
    offline, also any installed version inside it, newest first."""
    wanted = row.wanted or "*"
    candidates = [v for (r, n, v) in ctx.previous if (r, n) == (row.registry, row.name)]
    if ctx.offline:
        candidates += actions.installed_versions(ctx.store, row.registry, row.name)
    for version in candidates:
        if satisfies(row.registry, wanted, version):
            row.version = version
            if _mark_installed(row, ctx):
                row.notes.append(f"resolved from range {wanted}")
                return True
            row.version = None
    return False


def _plan_remote(row: Row, ctx: Context) -> None:
    """Ask the registry server (and, for a range, the index) which action this row needs."""
    on_server: list[str] | None = None
    if ctx.server_down is None:
        try:
            on_server = actions.server_versions(row.registry, row.name)
        except RegistryError as e:
            if not isinstance(e, actions.NotFound):
                ctx.server_down = str(e)
            row.notes.append(f"registry server: {e}")
    else:
        row.notes.append(f"registry server: {ctx.server_down}")
    if row.version is None:
        _resolve_range(row, on_server or [], ctx)
        if row.version is None:
            return
        if _mark_installed(row, ctx):
            return
    if on_server and row.version in on_server:
        row.action, row.source = DOWNLOAD, actions.server_url()
    elif ctx.build and actions.can_build(row.registry):
        row.action, row.source = BUILD, actions.artefact_spec(row.registry, row.name, row.version)
        if on_server:
            row.elsewhere.append(_exists(on_server, "the registry server"))
    else:
        row.action = UNAVAILABLE
        if on_server is not None:
            row.notes.append(_exists(on_server, "the registry server"))


def _resolve_range(row: Row, on_server: list[str], ctx: Context) -> None:
    wanted = row.wanted or "*"
    version = newest_satisfying(row.registry, wanted, on_server)
    index_note = ""
    if version is None and ctx.build and actions.can_build(row.registry):
        try:
            released = actions.index_versions(row.registry, row.name)
            version = newest_satisfying(row.registry, wanted, released)
            index_note = _exists(released, "the package index")
        except ContextError as e:
            index_note = str(e)
    if version is None:
        row.action = UNAVAILABLE
        row.notes.append(f"no version satisfies {wanted}; " + _exists(on_server, "the registry server")
                         + (f", {index_note}" if index_note else ""))
        return
    row.version = version
    row.notes.append(f"resolved from range {wanted}")


def _released(row: Row) -> list[str]:
    """What the package index has released, when a build of another version failed."""
    if row.action != BUILD:
        return []
    try:
        versions = actions.index_versions(row.registry, row.name)
    except ContextError:
        return []
    from ..versions import version_key

    return [_exists(sorted(versions, key=version_key, reverse=True), "the package index")]


def _exists(versions: list[str], where: str) -> str:
    if not versions:
        return f"{where} has no version of it"
    shown = ", ".join(versions[:SHOWN_VERSIONS]) + (" ..." if len(versions) > SHOWN_VERSIONS else "")
    return f"{where} has {shown}"


# -- doing it ---------------------------------------------------------------------------------


def execute(rows: list[Row], ctx: Context, on_done: Callable[[Row], None] | None = None) -> list[Row]:
    """Download and build what the plan says, WORKERS at a time; a failure marks its row
    unavailable and the rest go on."""
    todo = [r for r in rows if r.action in (DOWNLOAD, BUILD)]

    def run(row: Row) -> Row:
        try:
            done = _download(row, ctx) if row.action == DOWNLOAD else _build(row, ctx)
        except ContextError as e:
            done = replace(row, action=UNAVAILABLE, notes=[*row.notes, str(e), *row.elsewhere,
                                                           *_released(row)])
        if on_done:
            on_done(done)
        return done

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        finished = dict(zip(map(id, todo), pool.map(run, todo), strict=True))
    return [finished.get(id(r), r) for r in rows]


def _download(row: Row, ctx: Context) -> Row:
    assert row.version is not None
    local = actions.install_from_server(ctx.store, row.registry, row.name, row.version)
    row = replace(row, action=DOWNLOADED, size=local.size, path=local.path)
    prev = ctx.previous.get((row.registry, row.name, local.version))
    row.sha256 = file_sha256(local.path)
    if prev is not None and prev.sha256 != row.sha256:
        row.notes.append("the server's file differs from the one docs.lock recorded")
    return row


def _build(row: Row, ctx: Context) -> Row:
    """The released artefact; when it holds only a README (or nothing buildable), the docs
    folder of the source repository at this version's tag; README-only as the last resort."""
    assert row.version is not None
    notes = list(row.notes)
    built: actions.Built | None = None
    failure: ContextError | None = None
    try:
        built = actions.build_from_artefact(ctx.store, row.registry, row.name, row.version)
    except ContextError as e:
        failure = e
    if built is None or built.readme_only:
        what = "has only a README" if built else f"could not be built ({failure})"
        try:
            tagged = actions.build_from_tag(ctx.store, row.registry, row.name, row.version)
        except ContextError as e:
            tagged = None
            notes.append(f"source repository: {e}")
        if tagged is not None:
            built = tagged
            notes.append(f"the released artefact {what}: built the docs folder of the source "
                         f"repository at tag {tagged.tag}")
        elif built is not None:
            notes.append("README only: the release has no docs folder and no tagged source repository was found")
    if built is None:
        assert failure is not None
        raise failure
    return replace(row, action=BUILT, source=built.source, size=built.local.size, path=built.local.path,
                   sha256=file_sha256(built.local.path), notes=notes)


def finish(rows: list[Row]) -> list[Entry]:
    """docs.lock entries for every row whose docs are installed; hashes what is not yet known."""
    entries = []
    for row in rows:
        if row.path is None or row.version is None or row.action not in (INSTALLED, DOWNLOADED, BUILT):
            continue
        if row.sha256 is None:
            row.sha256 = file_sha256(row.path)
        if not row.source:
            row.source = actions.package_source(row.path)
        entries.append(Entry(row.registry, row.name, row.version, row.sha256, row.size or 0, row.source))
    return entries
