"""Package identity (registry, name, version): validation and safe file names.

Names and versions arrive from package files, URLs and registry answers, all untrusted.
Everything that becomes a path or a URL goes through `check_identity` first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from ..errors import ContextError
from ..versions import VERSION_RE

# Whole-string patterns, anchored with `\Z` (a `$` would let "react\n" through), so even a
# caller's `.match` checks the whole string.
REGISTRY_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}\Z")
# npm-style scope allowed; otherwise letters, digits and . _ - : (Maven group:artifact); no leading dot.
NAME_RE = re.compile(r"^(@[A-Za-z0-9_][A-Za-z0-9._-]{0,99}/)?[A-Za-z0-9_][A-Za-z0-9._:-]{0,127}\Z")


class InvalidIdentity(ContextError):
    """A registry, name or version that could not safely name a file or URL."""


@dataclass(frozen=True, order=True)
class PackageId:
    registry: str
    name: str
    version: str

    def __str__(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def qualified(self) -> str:
        return f"{self.registry}/{self.name}@{self.version}"

    @property
    def filename(self) -> str:
        """A flat, reversible file name: no separators, no traversal."""
        parts = (self.registry, self.name, self.version)
        return "__".join(quote(p, safe="@.+-").replace("_", "%5F") for p in parts) + ".db"


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or ".." in name:
        raise InvalidIdentity(f"invalid package name {name!r}")
    return name


def check_version(version: str) -> str:
    if not isinstance(version, str) or not VERSION_RE.fullmatch(version) or ".." in version:
        raise InvalidIdentity(f"invalid package version {version!r}")
    return version


def check_registry(registry: str) -> str:
    if not isinstance(registry, str) or not REGISTRY_RE.fullmatch(registry):
        raise InvalidIdentity(f"invalid registry {registry!r}")
    return registry


def check_identity(registry: str, name: str, version: str) -> PackageId:
    return PackageId(check_registry(registry), check_name(name), check_version(version))
