"""What a package's docs cover when that is not exactly its version, said in one line.

The docs-source ladder records it in the package meta: `docs_version` (`latest` for an
unversioned site or a docs repository's default branch, `5.x` for a docs repository per major
version) and `docs_ref` (the commit, tag or site URL read). An answer from such a package must
say so, the sync table and `context info` too, all in the same words: never another version's
docs passed off as this one's.
"""

from __future__ import annotations

from collections.abc import Mapping


def docs_note(meta: Mapping[str, str]) -> str | None:
    """The note an answer from the package with `meta` carries, or None when its docs are exact
    to its version (or the package says nothing about it)."""
    return covers_note(meta.get("name") or "?", meta.get("version") or "", meta.get("docs_version"),
                       meta.get("docs_ref"))


def covers_note(name: str, version: str, covers: str | None, ref: str | None = None) -> str | None:
    """`docs_note` from its parts (the sync table has them before the package is opened)."""
    if not covers or covers == version:
        return None
    where = f" ({ref})" if ref else ""
    if covers == "latest":
        return (f"{name}@{version}: these are the project's latest docs{where}, not docs of {version}; "
                f"check what changed since {version}")
    return f"{name}@{version}: these docs cover {covers}{where}, not exactly {version}"
