"""Find the documentation files in a folder (the files `context add FOLDER` indexes).

A project root with a docs folder is narrowed to it; hidden entries, `.gitignore`d paths,
build/vendor folders, changelogs, licences and non-English locale folders are skipped. Test and
example folders and a SECURITY policy are skipped only beside code: inside a docs tree
(`docs/topics/testing/`, `docs/topics/security.txt`) they are documentation.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SourceError, clip
from ..parse import SUFFIXES

DOC_SUFFIXES = SUFFIXES  # a document is a file we can parse: one list

PROJECT_MARKERS = (".git", "pyproject.toml", "package.json", "setup.py")
DOCS_DIRS = ("docs", "doc", "documentation", "Documentation")
SKIP_DIRS = frozenset({
    "build", "_build", "dist", "out", "target", "site", "_site", "node_modules", "vendor",
    "vendors", "third_party", "third-party", "site-packages", "venv", "env", "__pycache__",
    "test", "tests", "__tests__", "fixtures", "coverage", "htmlcov", "bower_components",
})
CODE_ONLY_DIRS = frozenset({"testing", "spec", "specs", "example", "examples"})  # topics in docs
SKIP_FILE_RE = re.compile(
    r"^(change[-_ ]?log|changes|history|news|release[-_]notes?|licen[cs]e|copying|notice|"
    r"authors|contributors|code[-_]of[-_]conduct|robots|requirements.*)"
    r"(\.[a-z0-9]+)?$", re.I)
CODE_ONLY_FILE_RE = re.compile(r"^security(\.[a-z0-9]+)?$", re.I)  # the policy, beside code
LOCALES = frozenset(
    "ar bg bn ca cs da de el es et fa fi fr he hi hr hu id it ja ka kk ko lt lv ms nb nl no pl "
    "pt ro ru sk sl sr sv ta th tr uk ur uz vi zh".split())
LOCALE_DIR_RE = re.compile(r"^([a-z]{2})([-_][A-Za-z]{2,4})?\Z")
MAX_FILE_BYTES = 50 * 1024 * 1024


@dataclass
class Discovered:
    root: Path  # the folder `source` paths are relative to
    files: list[Path]
    narrowed_to: str | None = None  # e.g. "docs" when a project root was narrowed
    skipped_links: list[str] = field(default_factory=list)  # linked files and folders, never followed


def discover(folder: Path, *, path: str | None = None, lang: str | None = None) -> Discovered:
    """List the doc files under `folder` (or `folder/path`), sorted for stable builds."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SourceError(f"{folder}: no such folder")
    base, narrowed = folder, None
    links: list[str] = []
    project = any((folder / m).exists() for m in PROJECT_MARKERS)
    if path:
        base = (folder / path).resolve()
        if not base.is_relative_to(folder.resolve()):
            raise SourceError(f"--path {path!r} points outside the source")
        if not base.exists():
            raise SourceError(f"--path {path!r} does not exist in the source")
    elif project:
        for d in DOCS_DIRS:
            if (folder / d).is_dir() and (folder / d).resolve().is_relative_to(folder.resolve()):
                base, narrowed = folder / d, d
                break
            if (folder / d).is_symlink():
                links.append(d)
    if base.is_file():
        return Discovered(root=folder, files=[base], narrowed_to=narrowed)
    in_docs = not project or narrowed is not None or any(p in DOCS_DIRS for p in Path(path or "").parts)
    files = sorted(_walk(base, folder, lang, in_docs, links), key=lambda p: p.relative_to(folder).as_posix())
    return Discovered(root=folder, files=files, narrowed_to=narrowed, skipped_links=sorted(set(links)))


def links_note(links: list[str], shown: int = 5) -> str:
    """The note a build prints for the links it did not follow."""
    names = ", ".join(clip(n, 80) for n in links[:shown]) + (f" and {len(links) - shown} more" if len(links) > shown else "")
    return f"skipped {len(links)} symbolic link{'s' if len(links) != 1 else ''} (links are never followed): {names}"


def _walk(base: Path, root: Path, lang: str | None, in_docs: bool, links: list[str]) -> Iterator[Path]:
    """Doc files under `base`; `in_docs` when `base` is a docs tree rather than a project.
    Links, to files or folders, are never followed: they go to `links` (relative to `root`)."""
    ignores: dict[Path, list[str]] = {}
    wanted = lang.lower().split("-")[0] if lang else None
    for dirpath, dirnames, filenames in os.walk(base):
        d = Path(dirpath)
        ignores[d] = _read_gitignore(d)
        rules = [(anchor, pat) for anchor, pats in ignores.items()
                 if anchor == d or anchor in d.parents for pat in pats]
        keep = []
        for name in sorted(dirnames):
            low = name.lower()
            if (name.startswith(".") or low in SKIP_DIRS or (low in CODE_ONLY_DIRS and not in_docs)
                    or _ignored(d / name, True, rules)):
                continue
            m = LOCALE_DIR_RE.match(name)
            if m and m.group(1).lower() in LOCALES and m.group(1).lower() != wanted:
                continue
            if (d / name).is_symlink():
                links.append((d / name).relative_to(root).as_posix())
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in filenames:
            p = d / name
            if (name.startswith(".") or p.suffix.lower() not in DOC_SUFFIXES
                    or SKIP_FILE_RE.match(name) or (not in_docs and CODE_ONLY_FILE_RE.match(name))
                    or _ignored(p, False, rules)):
                continue
            if p.is_symlink():
                links.append(p.relative_to(root).as_posix())
                continue
            try:
                if p.stat().st_size > MAX_FILE_BYTES:
                    continue
            except OSError:
                continue
            yield p


def _read_gitignore(d: Path) -> list[str]:
    try:
        text = (d / ".gitignore").read_text("utf-8", "replace")
    except OSError:
        return []
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def _ignored(p: Path, is_dir: bool, rules: list[tuple[Path, str]]) -> bool:
    """A small .gitignore matcher: globs, anchored `/x`, `dir/` and `!negation`."""
    ignored = False
    for anchor, pat in rules:
        negate = pat.startswith("!")
        pat = pat[1:] if negate else pat
        if pat.endswith("/"):
            if not is_dir:
                continue
            pat = pat.rstrip("/")
        rel = p.relative_to(anchor).as_posix()
        if "/" in pat.strip("/"):
            hit = fnmatch.fnmatch(rel, pat.lstrip("/"))
        elif pat.startswith("/"):
            hit = fnmatch.fnmatch(rel, pat[1:])
        else:
            hit = fnmatch.fnmatch(p.name, pat)
        if hit:
            ignored = not negate
    return ignored
