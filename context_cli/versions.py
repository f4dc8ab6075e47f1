"""Version ordering: 1.15.10 > 1.15.9, 2.0.0rc10 > 2.0.0rc2, releases above their
pre-releases, and labels such as `latest` below every number."""

from __future__ import annotations

import re
from typing import Any, TypeGuard

MAX_VERSION_CHARS = 64  # no real release is longer; a hostile index or lockfile may send 5,000 digits
# What a package version may look like (a file-name-safe label; ordering is `version_key`'s).
VERSION_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._+-]{0,63}\Z")


def is_version(value: object) -> TypeGuard[str]:
    """A version we can store, sort and print: a string of the package-version shape."""
    return isinstance(value, str) and VERSION_RE.fullmatch(value) is not None


def version_key(version: str) -> tuple[Any, ...]:
    """Sort key: PEP 440 where the string parses, natural order below it otherwise, and a
    string too long to be a version below both (never parsed: packaging turns each run of
    digits into an int, which fails past 4,300 digits)."""
    from packaging.version import InvalidVersion, Version  # here: a query with one candidate needs none (~4 ms)

    if len(version) > MAX_VERSION_CHARS:
        return (-1, (), version[:MAX_VERSION_CHARS])
    try:
        return (1, Version(version), ())
    except InvalidVersion:
        parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p.lower())
                      for p in re.findall(r"\d+|[A-Za-z]+", version))
        return (0, parts, ())


# (Patterns, compiled by `re` on first use: a query never needs them, and _LABEL takes ~1 ms.)
# SemVer: anything after a hyphen that follows MAJOR.MINOR.PATCH is a pre-release (1.0.0-0, 2.0.0-beta.1).
_SEMVER_PRE = r"v?\d+\.\d+\.\d+-[0-9A-Za-z.-]+(\+[0-9A-Za-z.-]+)?"
# Labels in versions PEP 440 cannot read (Maven, npm dist-tags in versions): 1.0.0.M1, 3.0-SNAPSHOT.
_LABEL = (r"(?<![a-z])(alpha|beta|rc|cr|pre|preview|dev|snapshot|canary|nightly|next|experimental"
          r"|[abm]\d+)(?![a-z])")


def is_prerelease(version: str) -> bool:
    """The one rule for "not a release" (the store, git tags and the publisher use it):
    a SemVer pre-release (`-x` after the numbers), a PEP 440 pre- or dev-release
    (`1.0a1`, `1.0b2`, `2.0rc1`, `1.0.dev3`), or a pre-release label in a version PEP 440
    cannot read (`1.0.0.M1`, `3.0-SNAPSHOT`). Post-releases and build metadata are releases.
    """
    from packaging.version import InvalidVersion, Version

    text = version.strip()
    if len(text) > MAX_VERSION_CHARS:
        return False
    if re.fullmatch(_SEMVER_PRE, text):
        return True
    try:
        v = Version(text)
    except InvalidVersion:
        return bool(re.search(_LABEL, text, re.IGNORECASE))
    return v.is_prerelease or v.is_devrelease
