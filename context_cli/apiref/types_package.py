"""`@types/NAME` for an npm package that ships no declarations: the DefinitelyTyped release
for the same major.minor (else the same major), fetched as any npm tarball, said so."""

from __future__ import annotations

from pathlib import Path

from ..errors import SourceError
from .model import ApiReference


def types_name(name: str) -> str:
    """`@types/ms` for `ms`, `@types/babel__core` for `@babel/core`."""
    return "@types/" + (name[1:].replace("/", "__") if name.startswith("@") else name)


def matching_version(versions: list[str], version: str) -> str | None:
    """The newest of `versions` with `version`'s major.minor, else with its major."""
    from packaging.version import InvalidVersion, Version

    try:
        want = Version(version)
    except InvalidVersion:
        return None
    parsed = []
    for v in versions:
        try:
            parsed.append((Version(v), v))
        except InvalidVersion:
            continue
    stable = [p for p in parsed if not p[0].is_prerelease]
    for width in (2, 1):  # major.minor, then major
        found = sorted(p for p in stable if p[0].release[:width] == want.release[:width])
        if found:
            return found[-1][1]
    return None


def from_types_package(registry: str, name: str, version: str) -> ApiReference:
    """The API of `name` `version` read from its `@types` package, or a note saying why not."""
    from ..sources.artefact import fetch_npm
    from .typescript import extract_declarations

    types = types_name(name)

    def choose(versions: list[str], tags: dict[str, object]) -> str:
        chosen = matching_version(versions, version)
        if chosen is None:
            raise SourceError(f"{types} has no release for {version}")
        return chosen

    try:
        fetched = fetch_npm(types, choose=choose)
    except SourceError as e:
        ref = ApiReference(registry=registry, name=name, version=version, language="typescript")
        ref.notes.append(f"API: the package ships no TypeScript declarations, and {e}")
        return ref
    try:
        return extract_declarations(Path(fetched.folder or "."), registry=registry, name=name, version=version,
                                    origin=f"{types}@{fetched.version}")
    finally:
        fetched.cleanup()
