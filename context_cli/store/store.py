"""Installed packages: one `.db` per (registry, name, version) under $CONTEXT_HOME/packages.

Installing copies the file into the store under a temp name, validates the copy (so the
checked bytes are the installed bytes) and renames it into place; a refused or broken
file leaves the store as it was. Temp files (names starting with a dot, or ending in
`.partial`) never count as packages, and a killed process's leftovers are removed.

The store remembers where each package came from (one small JSON per package in a sibling
folder, `packages-origin/`, so the packages folder holds packages only): a package installed
from a registry server is not silently replaced by a local file or build.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..atomic import TEMP_SUFFIX, atomic_path, remove_stale, write_text
from ..errors import AmbiguousPackage, ContextError, InvalidPackage, NotInstalled
from ..home import packages_dir
from ..package.identity import PackageId
from ..package.reader import Package, open_package
from ..versions import version_key

# What a package file that cannot be read raises; the store skips such a file and goes on.
UNREADABLE = (InvalidPackage, sqlite3.DatabaseError)
REGISTRY_ALIASES = {"pypi": "pip"}  # what people type for the registry the publisher calls pip
STALE_SECONDS = 3600.0  # temp files older than this are leftovers of a killed process
ORIGINS = "-origin"  # suffix of the sibling folder of per-package provenance records


@dataclass(frozen=True)
class Installed:
    """One installed package file and what its meta says."""

    id: PackageId
    path: Path
    meta: dict[str, str]
    # Where it came from: the registry server's URL, `file:NAME`, `built`, or None (unknown).
    origin: str | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        return f"{self.id.name}@{self.id.version}"

    @property
    def section_count(self) -> int:
        """How many sections the package holds: its meta's count, or (when that is no number)
        counted in the file."""
        value = self.meta.get("chunk_count", "")
        if value.isascii() and value.isdigit():
            return int(value)
        with open_package(self.path, registry=self.id.registry) as pkg:
            return pkg.chunk_count()


@dataclass(frozen=True)
class Spec:
    """`[registry/]name[@version]`; scoped npm names (`@scope/pkg@1.0`) are understood."""

    name: str
    version: str | None = None
    registry: str | None = None

    @classmethod
    def parse(cls, text: str) -> Spec:
        text = text.strip()
        registry = None
        head, sep, rest = text.partition("/")
        if sep and not head.startswith("@") and rest:
            registry, text = REGISTRY_ALIASES.get(head, head), rest
        at = text.rfind("@")
        if at > 0:
            return cls(text[:at], text[at + 1:] or None, registry)
        return cls(text, None, registry)

    def matches(self, pid: PackageId) -> bool:
        return (pid.name == self.name
                and (self.version is None or pid.version == self.version)
                and (self.registry is None or pid.registry == self.registry))

    def __str__(self) -> str:
        s = f"{self.registry}/{self.name}" if self.registry else self.name
        return f"{s}@{self.version}" if self.version else s


def not_installed_message(spec: Spec, installed: Iterable[Installed]) -> str:
    """"X is not installed", with the installed names closest to it when there are any."""
    import difflib

    names = sorted({i.id.name for i in installed})
    close = difflib.get_close_matches(spec.name, names, n=3, cutoff=0.7)
    if spec.version and spec.name in names:
        versions = sorted({i.id.version for i in installed if i.id.name == spec.name}, key=version_key)
        hint = f"; installed: {', '.join(versions)}"
    elif close:
        hint = f"; did you mean {' or '.join(close)}?"
    else:
        hint = ""
    return f"{spec} is not installed{hint} (see `context list`)"


class Replaced(ContextError):
    """A local file or build that would silently replace a package installed from a registry."""


class Store:
    """The folder of installed packages.

    `replace=True` lets a local file or build replace a package installed from a registry
    server (`context add --replace`); otherwise that is refused with one line.
    """

    def __init__(self, root: Path | None = None, *, replace: bool = False) -> None:
        self.root = Path(root) if root else packages_dir()
        self.replace = replace

    def package_files(self) -> list[Path]:
        """The installed package files, never a temp file of an install in progress."""
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.glob("*.db") if not is_temp(p.name))

    def fingerprint(self) -> tuple[tuple[str, int, int], ...]:
        """Names, sizes and mtimes of the package files: changes when a package does."""
        try:
            with os.scandir(self.root) as entries:
                return tuple(sorted(
                    (e.name, st.st_size, st.st_mtime_ns)
                    for e in entries if e.name.endswith(".db") and not is_temp(e.name) and (st := e.stat())
                ))
        except FileNotFoundError:
            return ()

    def installed(self, spec: Spec | None = None) -> list[Installed]:
        """Every readable installed package, by name then newest version first.

        Given a spec, only the files it may mean are opened (see `_may_mean`): `context query
        LIB` opens LIB's files, not every package installed.
        """
        self.clean()
        found = []
        for path in self.package_files():
            if spec is not None and not _may_mean(spec, path):
                continue
            try:
                with open_package(path, registry=_registry_from_filename(path)) as pkg:
                    found.append(describe(pkg, path, self._origin(path)))
            except UNREADABLE:
                continue  # a damaged file must not hide every other package
        if len(found) > 1:  # one file (a query's usual case) needs no version parsing
            found.sort(key=lambda i: (i.id.name, i.id.registry, _Reverse(version_key(i.id.version))))
        return found

    def find(self, spec: str | Spec, among: Iterable[Installed] | None = None) -> list[Installed]:
        """All packages matching a spec (of `among`, else of the installed), newest first."""
        s = spec if isinstance(spec, Spec) else Spec.parse(spec)
        return [i for i in (self.installed(s) if among is None else among) if s.matches(i.id)]

    def resolve(self, spec: str | Spec, among: Iterable[Installed] | None = None) -> Installed:
        """The one package a spec means: a bare name means its highest version.

        `among` narrows the choice to what a caller may see (an MCP session pinned by
        `--libs`); by default every installed package counts.
        """
        s = spec if isinstance(spec, Spec) else Spec.parse(spec)
        among = None if among is None else list(among)
        matches = self.find(s, among)
        if not matches:  # only now every installed package is listed, for the hint
            raise NotInstalled(not_installed_message(s, self.installed() if among is None else among))
        registries = {m.id.registry for m in matches}
        if len(registries) > 1:
            options = ", ".join(sorted(f"{r}/{s.name}" for r in registries))
            raise AmbiguousPackage(f"{s} is installed from several registries: {options}; name one")
        if len(matches) == 1:
            return matches[0]
        return max(matches, key=lambda m: version_key(m.id.version))

    def open(self, spec: str | Spec) -> Package:
        inst = self.resolve(spec)
        return open_package(inst.path, registry=inst.id.registry)

    def install(self, source: Path, *, registry: str | None = None, server: str | None = None) -> Installed:
        """Copy a package file into the store, replacing the same identity if present.

        The copy is what gets checked (deeply) and renamed into place, so the checked bytes
        are the installed bytes; `server` is the registry server's URL when it came from one.
        """
        source = Path(source)
        with open_package(source, registry=registry) as pkg:  # a bad file is named in the error
            dest = self.root / pkg.id.filename
        import shutil  # here, not at the top: it loads bz2 and lzma, which a query never needs

        with atomic_path(dest, prefix=".incoming-") as tmp:
            shutil.copyfile(source, tmp)
            try:
                installed = self._admit(tmp, registry, server or f"file:{source.name}")
            except InvalidPackage as e:
                raise InvalidPackage(str(e).replace(tmp.name, source.name)) from None
            if installed.path != dest:
                raise InvalidPackage(f"{source.name} changed while it was being installed; try again")
        self._record_origin(installed)
        return installed

    def install_owned(self, tmp: Path, *, registry: str | None = None, server: str | None = None,
                      origin: str | None = None, built_here: bool = False) -> Installed:
        """Check a file already inside the store folder and rename it into place.

        `server` is the registry server's URL when the file was downloaded from one;
        `origin` says where else it came from (default: built here). A file this process's
        builder just wrote (`built_here`) gets the quick check only: the deep one re-reads
        every row it wrote (0.2-0.5 s on a 5,000-section package).
        """
        installed = self._admit(tmp, registry, server or origin or "built", deep=not built_here)
        with atomic_path(installed.path, prefix=".incoming-") as final:
            os.replace(tmp, final)
        self._record_origin(installed)
        return installed

    def _admit(self, path: Path, registry: str | None, origin: str, *, deep: bool = True) -> Installed:
        """Check a file (our copy) about to be installed and ready it; what it will be once in place."""
        with open_package(path, registry=registry, deep=deep) as pkg:
            installed = describe(pkg, self.root / pkg.id.filename, origin)
        _rollback_journal(path)
        if registry:
            installed.meta["registry"] = registry
        self._refuse_silent_replace(installed)
        return installed

    def remove(self, spec: str) -> Installed:
        """Remove one package; a bare name with several versions installed is refused."""
        s = Spec.parse(spec)
        matches = self.find(s)
        if not matches:
            raise NotInstalled(not_installed_message(s, self.installed()))
        if len(matches) > 1:
            options = ", ".join(m.id.qualified for m in matches)
            raise AmbiguousPackage(f"several versions of {s} are installed ({options}); "
                                   f"say which, e.g. `context remove {matches[0].label}`")
        matches[0].path.unlink()
        self._origin_file(matches[0].path).unlink(missing_ok=True)
        return matches[0]

    def clean(self, older_than: float = STALE_SECONDS) -> int:
        """Remove temp files (and their SQLite side files) that a killed install left behind."""
        removed = remove_stale(self.root, older_than)
        cutoff = time.time() - older_than
        try:
            leftovers = [p for p in self.root.iterdir() if p.name.startswith(".") or TEMP_SUFFIX in p.name]
        except OSError:
            return removed
        for path in leftovers:
            try:
                if path.is_file() and path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except OSError:
                continue
        return removed

    def _refuse_silent_replace(self, new: Installed) -> None:
        if self.replace or not new.path.exists():
            return
        old = self._origin(new.path)
        if old and _is_server(old) and not (new.origin and _is_server(new.origin)):
            source = new.origin.removeprefix("file:") if new.origin and new.origin.startswith("file:") else None
            raise Replaced(f"{new.id.qualified} is installed from the registry {old}; refusing to replace it with "
                           f"{source or 'a local build'} (pass --replace to do it anyway)")

    def _origin_file(self, path: Path) -> Path:
        return self.root.with_name(self.root.name + ORIGINS) / f"{path.name}.json"

    def _origin(self, path: Path) -> str | None:
        try:
            data = json.loads(self._origin_file(path).read_text("utf-8"))
        except (OSError, ValueError):
            return None
        origin = data.get("origin") if isinstance(data, dict) else None
        return origin if isinstance(origin, str) else None

    def _record_origin(self, inst: Installed) -> None:
        write_text(self._origin_file(inst.path), json.dumps({"origin": inst.origin}))


def is_temp(name: str) -> bool:
    """A temp file of an install, download or build in progress, or its leftover."""
    return name.startswith(".") or name.endswith(TEMP_SUFFIX)


def _is_server(origin: str) -> bool:
    return origin.startswith(("http://", "https://"))


def _rollback_journal(path: Path) -> None:
    """A package in WAL mode would grow -wal/-shm files beside it on every read: it goes into
    place with SQLite's plain rollback journal instead (the file is ours by now, and checked)."""
    with closing(sqlite3.connect(path)) as db:
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() == "wal":
            db.execute("PRAGMA journal_mode=DELETE")
    for side in ("-wal", "-shm"):
        Path(f"{path}{side}").unlink(missing_ok=True)


def describe(pkg: Package, path: Path, origin: str | None = None) -> Installed:
    """What the store reports of a package: its meta, plus the section count that
    Neuledge Context's files do not record."""
    meta = dict(pkg.meta)
    meta.setdefault("chunk_count", str(pkg.chunk_count()))
    return Installed(pkg.id, path, meta, origin)


def _may_mean(spec: Spec, path: Path) -> bool:
    """Could this installed file be a package `spec` means? The store names every file it
    installs by the package's identity (PackageId.filename), so a file named for another
    package is not; a file named otherwise (copied in by hand) is opened to see."""
    parts = _filename_parts(path)
    return len(parts) != 3 or spec.matches(PackageId(*parts))


def _registry_from_filename(path: Path) -> str | None:
    """The registry recorded in an installed file's name (see PackageId.filename).

    Context's packages do not record their registry, so the store's file name does.
    """
    parts = _filename_parts(path)
    return parts[0] if len(parts) > 1 else None


def _filename_parts(path: Path) -> list[str]:
    """An installed file's name read back into what PackageId.filename joined (registry, name,
    version for the store's own files; any split of a name given otherwise)."""
    return [unquote(p) for p in path.name.removesuffix(".db").split("__")]


class _Reverse:
    """Inverts ordering so a list can sort ascending by name and descending by version."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key

    def __lt__(self, other: _Reverse) -> bool:
        return bool(other.key < self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reverse) and other.key == self.key

    __hash__ = None  # type: ignore[assignment]
