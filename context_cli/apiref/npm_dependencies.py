"""The packages an npm release re-exports from, fetched at the versions it depends on.

`vue` declares little itself: its `index.d.ts` says `export * from '@vue/runtime-dom'`, which
says `export * from '@vue/runtime-core'`. The declarations are in those packages, pinned in
each one's package.json. `NpmDependencies` is what the TypeScript reader calls for such a
package (by name and the version range the re-exporting package asks for): the newest
release the range allows (an exact version, `^`, `~`, `*` or `latest`; other ranges are not
guessed), fetched as any npm tarball. Only re-exports fetch, never imports: what a package
merely uses is not its API.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import SourceError
from ..sources.base import Fetched

MAX_DEPENDENCIES = 8  # packages fetched for one release's re-exports


class NpmDependencies:
    """Fetches re-exported packages for one extraction; `cleanup` removes them after."""

    def __init__(self) -> None:
        self.fetched: list[Fetched] = []
        self.notes: list[str] = []

    def __call__(self, name: str, wanted: str) -> Path | None:
        """`name`'s unpacked folder at the newest version `wanted` allows, or None (noted)."""
        from ..sources.artefact import fetch_npm

        if len(self.fetched) >= MAX_DEPENDENCIES:
            self.notes.append(f"API: not read {name} (re-exported; {MAX_DEPENDENCIES} packages read already)")
            return None

        def choose(versions: list[str], tags: dict[str, object]) -> str:
            latest = tags.get("latest")
            version = newest_allowed(versions, wanted, latest if isinstance(latest, str) else None)
            if version is None:
                raise SourceError(f"no release of {name} matches {wanted!r}")
            return version

        try:
            fetched = fetch_npm(name, choose=choose)
        except SourceError as e:
            self.notes.append(f"API: not read {name}, which it re-exports ({e})")
            return None
        self.fetched.append(fetched)
        self.notes.append(f"API: read {name}@{fetched.version} for what it re-exports")
        return Path(fetched.folder) if fetched.folder else None

    def cleanup(self) -> None:
        for fetched in self.fetched:
            fetched.cleanup()


def newest_allowed(versions: list[str], wanted: str, latest: str | None = None) -> str | None:
    """The newest stable version of `versions` that the npm range `wanted` allows: `1.2.3`,
    `^1.2.3`, `~1.2.3`, `*`, `latest` or an empty range (the `latest` tag); else None."""
    from packaging.version import InvalidVersion, Version

    wanted = wanted.strip()
    if wanted in ("", "*", "latest", "x"):
        return latest if latest in versions else None
    if wanted in versions:
        return wanted
    op, bound = (wanted[0], wanted[1:].strip()) if wanted[:1] in "^~" else ("", wanted)
    try:
        low = Version(bound)
    except InvalidVersion:
        return None
    if not op or low.is_prerelease:
        return None
    major, minor = (low.release + (0, 0))[:2]
    width = 1 if op == "^" and major > 0 else 2  # ^0.2.3 allows 0.2.x only, as npm reads it
    found = []
    for v in versions:
        try:
            parsed = Version(v)
        except InvalidVersion:
            continue
        if not parsed.is_prerelease and parsed >= low and (parsed.release + (0, 0))[:width] == (major, minor)[:width]:
            found.append((parsed, v))
    return max(found)[1] if found else None
