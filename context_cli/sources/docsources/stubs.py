"""Type-only packages document nothing themselves: their docs are their runtime library's.

`@types/react` (DefinitelyTyped) and typeshed's `types-requests` hold declarations and a
generated README; what an agent needs is react's or requests' documentation, at the release the
stubs track. The @types major.minor mirrors the library's (`@types/react 19.2.18` is for react
19.2), as typeshed's does (`types-requests 2.28.11.8` is for requests 2.28). Names map as the
two projects name them: `@types/NAME` -> `NAME`, `@types/scope__name` -> `@scope/name`,
`types-NAME` -> `NAME`. Third-party `NAME-stubs` packages are left out: many number their
own releases (dropbox's `sqlalchemy-stubs 0.4` is not for SQLAlchemy 0.4), so their version
says nothing of the library's.

A mapped name is a package name from a lockfile turned into another one to ask an index for, so
it must be a plain package name of its registry (no `..`, no path) and never a stubs name again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# npm's rules for a package name (lowercase, URL-safe, no leading dot or underscore).
_NPM_PART = r"[a-z0-9][a-z0-9._~-]*"
_NPM_NAME = re.compile(rf"^(?:@{_NPM_PART}/)?{_NPM_PART}\Z")
_PEP508_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?\Z")
_TRACKED = re.compile(r"^(\d{1,9})\.(\d{1,9})(?:[.-]|\Z)")
MAX_NAME = 214  # npm's limit; no PyPI name is longer


@dataclass(frozen=True)
class Runtime:
    """The library a stubs package declares, and the release prefix its version tracks."""

    name: str
    series: str  # "19.2" of @types/react 19.2.18

    def matches(self, version: str) -> bool:
        return _series(version) == self.series


def runtime_of(registry: str, name: str, version: str) -> Runtime | None:
    """The runtime library of a stubs package at `version`, or None when `name` is no stubs
    package (or maps onto no plain package name, or its version tracks no release series)."""
    mapped, series = runtime_name(registry, name), _series(version)
    if mapped is None or series is None:
        return None
    return Runtime(mapped, series)


def _series(version: str) -> str | None:
    """The major.minor a version is of ("19.2" of 19.2.18), or None for one without."""
    m = _TRACKED.match(version)
    return None if m is None else f"{int(m.group(1))}.{int(m.group(2))}"


def runtime_name(registry: str, name: str) -> str | None:
    """The runtime library's name of a stubs package; None when `name` is none, or maps onto
    no plain package name of its registry, or onto a stubs name again."""
    mapped = _mapped(registry, name)
    if mapped is None or len(mapped) > MAX_NAME or _mapped(registry, mapped) is not None:
        return None
    return mapped if (_NPM_NAME if registry == "npm" else _PEP508_NAME).match(mapped) else None


def _mapped(registry: str, name: str) -> str | None:
    if registry == "npm" and name.startswith("@types/"):
        rest = name.removeprefix("@types/")
        scope, sep, inner = rest.partition("__")
        return f"@{scope}/{inner}" if sep else rest
    if registry == "pip":
        lowered = name.lower()
        if lowered.startswith("types-"):
            return lowered.removeprefix("types-")
    return None


def tracked_release(registry: str, doc: dict[str, Any], runtime: Runtime) -> str | None:
    """The newest release of the runtime library in the series the stubs track (`19.2.x`), from
    its index document; None when the index has none (`@types/numeral 0.0.28`: numeral has no
    0.0 release)."""
    from ...versions import is_prerelease, is_version, version_key

    found = doc.get("releases") if registry == "pip" else doc.get("versions")
    if not isinstance(found, dict):
        return None
    releases = [v for v in found if is_version(v) and runtime.matches(v) and not is_prerelease(v)]
    return max(releases, key=version_key) if releases else None
