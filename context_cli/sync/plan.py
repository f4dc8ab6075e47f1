"""Decide, then do: what each dependency needs to have its docs at exactly its version.

Order per dependency: installed -> nothing; on the registry server -> download; else built
(unless `build=False`) from the first step of the docs-source ladder that gives docs
(`sources.docsources`: a definition, the repository's tag, the artefact, the versioned site,
the README); else "not available", with what each step found. Never another version. Remote
work runs a few at a time (WORKERS), never all at once.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..digest import file_sha256
from ..errors import ContextError, RegistryError, redact
from ..package.docs_cover import covers_note
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
    docs: str | None = None  # "docs", "readme", "api" (README plus API reference); None: not built here
    docs_version: str | None = None  # what the docs cover when not exactly `version` ("latest")
    tried: str = ""  # a README-only build's `actions.definition_stamp`

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
                "sha256": self.sha256, "notes": self.notes, "docs": self.docs,
                "docs_version": self.docs_version}


@dataclass
class Context:
    """What planning needs besides the dependencies."""

    store: Store
    previous: dict[tuple[str, str, str], Entry]  # the project's docs.lock, by identity
    build: bool = True
    offline: bool = False  # --check: nothing leaves the machine
    server_down: str | None = None  # once the registry server cannot be reached, stop asking it
    rebuild: frozenset[str] = frozenset()  # names (or "readme": every README-only one) to build again


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
    prev = ctx.previous.get((row.registry, row.name, row.version))
    if not ctx.offline and _retry(row, prev, ctx):
        row.notes.append("built again: " + ("--rebuild" if row.name in ctx.rebuild else
                                            "README only last time, and the catalogue's definition is new"))
        return False
    row.action, row.size, row.path = INSTALLED, local.size, local.path
    if prev is not None and prev.size == local.size:
        row.sha256, row.source, row.docs, row.tried = prev.sha256, prev.source, prev.docs, prev.tried
    return True


def _retry(row: Row, prev: Entry | None, ctx: Context) -> bool:
    """Build an installed package again: asked for by name, or README-only last time (by
    docs.lock) when a better source may now exist (`--rebuild readme`, or a definition the
    last build was not tried with)."""
    if row.name in ctx.rebuild or f"{row.registry}/{row.name}" in ctx.rebuild:
        return True
    if prev is None or prev.docs == "docs" or not ctx.build or not actions.can_build(row.registry):
        return False
    return "readme" in ctx.rebuild or actions.definition_stamp(row.registry, row.name) not in ("", prev.tried)


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
            if isinstance(e, actions.NotFound):
                row.notes.append(f"registry server: {e}")
            else:  # said once, above the table (Outcome.server_note), not under every row
                ctx.server_down = ctx.server_down or str(e)
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
            done = replace(row, action=UNAVAILABLE, notes=[*row.notes, redact(str(e)), *row.elsewhere])
        except Exception as e:  # one bad dependency never sinks the others, nor the docs.lock
            done = replace(row, action=UNAVAILABLE, notes=[*row.notes, *row.elsewhere,
                                                           f"internal error ({type(e).__name__}: {redact(str(e))[:200]})"])
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
    """The first step of the docs-source ladder that gives docs (a definition, the repository at
    this version's tag, the artefact's docs folder, the versioned site); README-only as the
    last resort, said as such."""
    assert row.version is not None
    earlier = [n for n in row.notes if n.startswith("registry server: ")] or (
        ["registry server: unreachable (said above)"] if ctx.server_down else ["registry server: does not have it"])
    built = actions.build_docs(ctx.store, row.registry, row.name, row.version, earlier)
    notes = [n for n in row.notes if not n.startswith("registry server: ")]
    if built.docs == "readme":
        notes.append("README only: " + _tried(built.notes))
    elif built.docs == "api":
        notes.append("API reference and README only: " + _tried(built.notes))
    elif note := covers_note(row.name, row.version, built.docs_version, built.source):
        notes.append(note)
    return replace(row, action=BUILT, source=built.source, size=built.local.size, path=built.local.path,
                   sha256=file_sha256(built.local.path), notes=notes, docs=built.docs,
                   docs_version=built.docs_version,
                   tried=actions.definition_stamp(row.registry, row.name) if built.docs != "docs" else "")


def _tried(notes: list[str]) -> str:
    said = next((n for n in notes if n.startswith("tried first: ")), "")
    return said.removeprefix("tried first: ") or "no other source was found"


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
        entries.append(Entry(row.registry, row.name, row.version, row.sha256, row.size or 0, row.source,
                             row.docs or "docs", row.tried))
    return entries
