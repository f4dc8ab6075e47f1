"""Installed packages: one `.db` per (registry, name, version) under $CONTEXT_HOME/packages.

Installing copies the file into the store under a temp name, validates the copy (so the
checked bytes are the installed bytes) and renames it into place; a refused or broken
file leaves the store as it was.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from ..errors import AmbiguousPackage, InvalidPackage, NotInstalled
from ..home import packages_dir
from ..package.identity import PackageId
from ..package.reader import Package, open_package
from .versions import version_key


@dataclass(frozen=True)
class Installed:
    """One installed package file and what its meta says."""

    id: PackageId
    path: Path
    meta: dict[str, str]

    @property
    def label(self) -> str:
        return f"{self.id.name}@{self.id.version}"


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
            registry, text = head, rest
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


class Store:
    """The folder of installed packages."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root else packages_dir()

    def installed(self) -> list[Installed]:
        """Every readable installed package, by name then newest version first."""
        found = []
        if self.root.is_dir():
            for path in sorted(self.root.glob("*.db")):
                try:
                    with open_package(path, registry=_registry_from_filename(path)) as pkg:
                        found.append(_describe(pkg, path))
                except (InvalidPackage, sqlite3.DatabaseError):
                    continue  # a damaged file must not hide every other package
        found.sort(key=lambda i: (i.id.name, i.id.registry, _neg(version_key(i.id.version))))
        return found

    def find(self, spec: str | Spec) -> list[Installed]:
        """All installed packages matching a spec, newest first."""
        s = spec if isinstance(spec, Spec) else Spec.parse(spec)
        return [i for i in self.installed() if s.matches(i.id)]

    def resolve(self, spec: str | Spec) -> Installed:
        """The one package a spec means: a bare name means its highest version."""
        s = spec if isinstance(spec, Spec) else Spec.parse(spec)
        matches = self.find(s)
        if not matches:
            raise NotInstalled(f"{s} is not installed (see `context list`)")
        registries = {m.id.registry for m in matches}
        if len(registries) > 1:
            options = ", ".join(sorted(f"{r}/{s.name}" for r in registries))
            raise AmbiguousPackage(f"{s} is installed from several registries: {options}; name one")
        return max(matches, key=lambda m: version_key(m.id.version))

    def open(self, spec: str | Spec) -> Package:
        inst = self.resolve(spec)
        return open_package(inst.path, registry=inst.id.registry)

    def install(self, source: Path, *, registry: str | None = None) -> Installed:
        """Copy a package file into the store, replacing the same identity if present."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=".incoming-", suffix=".db", dir=self.root)
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            shutil.copyfile(source, tmp)
            return self.install_owned(tmp, registry=registry)
        finally:
            tmp.unlink(missing_ok=True)

    def install_owned(self, tmp: Path, *, registry: str | None = None) -> Installed:
        """Validate a file already inside the store folder and rename it into place."""
        with open_package(tmp, registry=registry, deep=True) as pkg:
            installed = _describe(pkg, self.root / pkg.id.filename)
        if registry:
            installed.meta["registry"] = registry
        os.replace(tmp, installed.path)
        return installed

    def remove(self, spec: str) -> Installed:
        """Remove one package; a bare name with several versions installed is refused."""
        s = Spec.parse(spec)
        matches = self.find(s)
        if not matches:
            raise NotInstalled(f"{s} is not installed (see `context list`)")
        if len(matches) > 1:
            options = ", ".join(m.id.qualified for m in matches)
            raise AmbiguousPackage(f"several versions of {s} are installed ({options}); "
                                   f"say which, e.g. `context remove {matches[0].label}`")
        matches[0].path.unlink()
        return matches[0]


def _describe(pkg: Package, path: Path) -> Installed:
    """What the store reports of a package: its meta, plus the section count that
    Neuledge Context's files do not record."""
    meta = dict(pkg.meta)
    meta.setdefault("chunk_count", str(pkg.chunk_count()))
    return Installed(pkg.id, path, meta)


def _registry_from_filename(path: Path) -> str | None:
    """The registry recorded in an installed file's name (see PackageId.filename).

    Context's packages do not record their registry, so the store's file name does.
    """
    head, sep, _ = path.name.partition("__")
    return unquote(head) if sep else None


def _neg(key: tuple) -> _Reverse:
    return _Reverse(key)


class _Reverse:
    """Inverts ordering so a list can sort ascending by name and descending by version."""

    __slots__ = ("key",)

    def __init__(self, key: tuple) -> None:
        self.key = key

    def __lt__(self, other: _Reverse) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reverse) and other.key == self.key
