"""Where the docs and the code are in a release unpacked from its artefact (sdist, npm
tarball, wheel): the docs path a definition or `--path` asks for, else a docs folder, else the
README. artefact.py unpacks; wheel.py lays out a wheel, whose README is in its METADATA."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ..errors import SourceError
from .base import Fetched
from .folder import DOC_SUFFIXES

DOCS_FOLDERS = ("docs", "doc", "documentation")
README_NAME = re.compile(r"^readme(\.(md|markdown|rst|txt))?$", re.IGNORECASE)  # a release's README file
Layout = Callable[[Path, str | None, str], Fetched]  # (unpacked root, docs path asked for, label)


def sdist_layout(unpacked: Path, wanted: str | None, label: str) -> Fetched:
    """An sdist's or npm tarball's docs: in its one top folder, the docs path asked for, else
    its docs folder, else its README, else the whole tree; its code is the whole tree."""
    root = _single_root(unpacked)
    found = docs_path_in(root, wanted, label) if wanted else _docs_path(root)
    note = (f"docs from {found}{'/' if (root / found).is_dir() else ''}" if found
            else "no docs folder or README found; indexing the whole artefact")
    return Fetched(source_type="", source_url="", folder=root, docs_path=found, code=root, notes=[note])


def _single_root(folder: Path) -> Path:
    """`pkg-1.0/` in an sdist, `package/` in an npm tarball: the one top folder, if one."""
    entries = [p for p in folder.iterdir()]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else folder


def docs_path_in(root: Path, wanted: str, label: str) -> str:
    """The docs path a definition or `--path` asks for, inside the artefact (it must exist)."""
    target = (root / wanted.strip("/")).resolve()
    if not target.is_relative_to(root.resolve()):
        raise SourceError(f"docs path {wanted!r} must stay inside the {label}")
    if not target.exists():
        raise SourceError(f"{label} has no {wanted!r} folder")
    return target.relative_to(root.resolve()).as_posix()


def _docs_path(root: Path) -> str | None:
    """The first of DOCS_FOLDERS inside the artefact that holds a document, else the README
    file, else None (the whole tree)."""
    names = {p.name.lower(): p for p in root.iterdir()}
    for candidate in DOCS_FOLDERS:
        folder = names.get(candidate)
        if folder and folder.is_dir() and has_docs(folder):
            return folder.name
    for p in sorted(root.iterdir()):
        if p.is_file() and README_NAME.match(p.name):
            return p.name
    return None


def has_docs(folder: Path, limit: int = 5000) -> bool:
    """Whether `folder` holds a document we can parse (within the first `limit` entries)."""
    for i, p in enumerate(folder.rglob("*")):
        if i > limit:
            return False
        if p.is_file() and p.suffix.lower() in DOC_SUFFIXES:
            return True
    return False
