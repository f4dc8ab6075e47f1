"""The code in a folder or git source, for its API: a Python package or declaration files.

A released artefact is code by definition; a folder or a repository is only when it is a
project whose code can be imported: a Python project (pyproject.toml, setup.py or setup.cfg
at its root) with a package (`X/__init__.py` at the root, under `src/` or under `lib/`), or
an npm package whose package.json names declaration files that are there. Anything else
(a docs folder, an application, a Go module) gets no API and no note.

A git source is checked out sparsely (its docs tree and top-level files): the package's
folders are then checked out too (`sources.git.check_out`), under the same rules as the
clone, before they are read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..sources.base import Fetched
from .python import SKIP_DIRS
from .typescript import read_manifest

PYTHON_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg")
CODE_BASES = ("", "src", "lib")  # where a Python project keeps its packages
MAX_LISTED = 200_000  # paths of a repository's listing looked at


@dataclass(frozen=True)
class Code:
    """Where a source's code is, and how to read it."""

    root: Path
    language: str  # python | typescript
    name: str  # the npm package's own name (module names start with it); "" for Python
    folders: tuple[str, ...]  # the folders that hold it, relative to root (what a sparse checkout needs)


def find_code(fetched: Fetched) -> Code | None:
    """The importable code of a folder or git source (checked out, for git), or None."""
    if fetched.source_type not in ("folder", "git") or fetched.folder is None:
        return None
    root = fetched.folder
    if fetched.docs_path and (root / fetched.docs_path).is_file():  # one file was asked for (`context add README.md`)
        return None
    paths = _listing(root) if fetched.source_type == "git" else None
    code = code_in(root, paths)
    if code is not None and paths is not None and code.folders:
        from ..sources.git import check_out

        check_out(root, list(code.folders))
    return code


def code_in(root: Path, paths: list[str] | None = None) -> Code | None:
    """The code `root` holds, judged from `paths` (its files, relative; None: look on disk)."""
    manifest = read_manifest(root / "package.json")
    if isinstance(manifest.get("name"), str) and manifest["name"]:
        folders = _declaration_folders(root, manifest, paths)
        if folders is not None:
            return Code(root, "typescript", manifest["name"], folders)
    if any(_is_file(root, m) for m in PYTHON_MANIFESTS):
        packages = _python_packages(root, paths)
        if packages:
            return Code(root, "python", "", packages)
    return None


def _declaration_folders(root: Path, manifest: dict[str, Any], paths: list[str] | None) -> tuple[str, ...] | None:
    """The folders of the declaration files package.json names (`types`, `typings`, the
    `types` conditions of `exports`), None when it names none that exist."""
    named = [t for t in (manifest.get("types"), manifest.get("typings"), *_export_types(manifest.get("exports")))
             if isinstance(t, str) and t.endswith((".d.ts", ".d.mts", ".d.cts"))]
    present = set(paths) if paths is not None else None
    found = []
    for target in named:
        rel = PurePosixPath(target.removeprefix("./"))
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            continue
        if (present is not None and rel.as_posix() in present) or (present is None and _is_file(root, rel.as_posix())):
            found.append(rel.parts[0] if len(rel.parts) > 1 else "")
    return tuple(sorted({f for f in found if f})) if found else None


def _export_types(exports: Any, depth: int = 0) -> list[Any]:
    if depth > 6:
        return []
    if isinstance(exports, dict):
        return [v for k, v in exports.items() if k == "types"] + [
            t for k, v in exports.items() if k != "types" for t in _export_types(v, depth + 1)]
    if isinstance(exports, list):
        return [t for v in exports for t in _export_types(v, depth + 1)]
    return []


def _python_packages(root: Path, paths: list[str] | None) -> tuple[str, ...]:
    """`pkg`, `src/pkg`, `lib/pkg`: folders with an `__init__.py[i]` where a project keeps them."""
    found = set()
    if paths is not None:
        for p in paths:
            parts = p.split("/")
            if parts[-1] in ("__init__.py", "__init__.pyi") and len(parts) in (2, 3):
                base, name = ("", parts[0]) if len(parts) == 2 else (parts[0], parts[1])
                if base in CODE_BASES and _package_name(name):
                    found.add("/".join(filter(None, (base, name))))
        return tuple(sorted(found))
    for base in CODE_BASES:
        folder = root / base if base else root
        if not folder.is_dir() or folder.is_symlink():
            continue
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False) and _package_name(entry.name) and any(
                    _is_file(Path(entry.path), n) for n in ("__init__.py", "__init__.pyi")):
                found.add("/".join(filter(None, (base, entry.name))))
    return tuple(sorted(found))


def _package_name(name: str) -> bool:
    return name.isidentifier() and name not in SKIP_DIRS and not name.startswith(("_", "."))


def _is_file(root: Path, rel: str) -> bool:
    path = root / rel
    return path.is_file() and not path.is_symlink()


def _listing(root: Path) -> list[str]:
    """Every file of a git checkout, also those a sparse checkout left out (`git ls-files`)."""
    from ..sources.git import run_git

    out = run_git(["-C", str(root), "ls-files", "-z"], timeout=120, what=str(root))
    return out.split("\0", MAX_LISTED)[:MAX_LISTED]
