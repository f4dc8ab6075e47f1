"""Version ordering: 1.15.10 > 1.15.9, 2.0.0rc10 > 2.0.0rc2, releases above their
pre-releases, and labels such as `latest` below every number."""

from __future__ import annotations

import re
from typing import Any

from packaging.version import InvalidVersion, Version


def version_key(version: str) -> tuple[Any, ...]:
    """Sort key: PEP 440 where the string parses, natural order below it otherwise."""
    try:
        return (1, Version(version), ())
    except InvalidVersion:
        parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p.lower())
                      for p in re.findall(r"\d+|[A-Za-z]+", version))
        return (0, parts, ())


def is_prerelease(version: str) -> bool:
    try:
        v = Version(version)
    except InvalidVersion:
        return False
    return v.is_prerelease or v.is_devrelease
