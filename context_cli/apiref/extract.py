"""The API of a released artefact, by the language its registry serves, summarised for the build."""

from __future__ import annotations

from pathlib import Path

from .model import ApiReference

MAX_NOTES = 10  # skipped files named in the build summary; the rest are counted


def extract_release(root: Path, *, source_type: str, registry: str, name: str, version: str) -> ApiReference | None:
    """The API entries of the artefact unpacked at `root` (a `pypi` sdist, an `npm` tarball,
    whose `@types` package stands in when it ships no declarations), None for other sources."""
    if source_type == "pypi":
        from .python import extract_api

        return extract_api(root, registry=registry, name=name, version=version)
    if source_type != "npm":
        return None
    from ..errors import ContextError
    from .types_package import from_types_package
    from .typescript import entry_points, extract_declarations

    if not entry_points(root, name):
        return from_types_package(registry, name, version)
    try:
        return extract_declarations(root, registry=registry, name=name, version=version)
    except ContextError as e:  # the optional parser is not installed
        ref = ApiReference(registry=registry, name=name, version=version, language="typescript")
        ref.notes.append(f"API: skipped ({e})")
        return ref


def summary(ref: ApiReference) -> list[str]:
    """Build-summary lines: how many entries, from where, and what was skipped."""
    modules = sum(1 for s in ref.symbols if s.kind in ("module", "namespace"))
    origin = f" from {ref.origin}" if ref.origin else ""
    lines = [f"API: {len(ref.symbols)} symbols in {modules} modules{origin}"]
    lines += ref.notes[:MAX_NOTES]
    if len(ref.notes) > MAX_NOTES:
        lines.append(f"API: {len(ref.notes) - MAX_NOTES} more notes not shown")
    return lines
