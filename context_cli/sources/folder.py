"""Find the documentation files in a folder (the files `context add FOLDER` indexes).

A project root with a docs folder is narrowed to it; hidden entries, `.gitignore`d paths,
build/vendor folders, licences, theme templates and translations are skipped. Test and example
folders and a SECURITY policy are skipped only beside code: inside a docs tree
(`docs/topics/testing/`, `docs/topics/security.txt`) they are documentation. Changelogs and
release notes are kept (parse/kind.py marks them). What a tree's layout says (rendered Sphinx
output beside its sources, translations mirroring the English tree, sphinx-gallery example
folders) is read by layout.py.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..errors import SourceError, clip
from ..parse import SUFFIXES
from . import layout

DOC_SUFFIXES = SUFFIXES  # a document is a file we can parse: one list

PROJECT_MARKERS = (".git", "pyproject.toml", "package.json", "setup.py")
DOCS_DIRS = ("docs", "doc", "documentation", "Documentation")
SKIP_DIRS = frozenset({
    "build", "_build", "dist", "out", "target", "site", "_site", "node_modules", "vendor",
    "vendors", "third_party", "third-party", "site-packages", "venv", "env", "__pycache__",
    "test", "tests", "__tests__", "fixtures", "coverage", "htmlcov", "bower_components",
    "_templates", "_theme",  # Sphinx theme templates: Jinja and HTML, no docs
})
CODE_ONLY_DIRS = frozenset({"testing", "spec", "specs", "example", "examples"})  # topics in docs
SKIP_FILE_RE = re.compile(
    r"^(licen[cs]e|copying|notice|authors|contributors|code[-_]of[-_]conduct|robots|requirements.*)"
    r"(\.[a-z0-9]+)?$", re.I)
CODE_ONLY_FILE_RE = re.compile(r"^security(\.[a-z0-9]+)?$", re.I)  # the policy, beside code
_CUSTOM_DIR = re.compile(r"^\s*custom_dir:\s*['\"]?([^'\"#\s]+)", re.M)  # a MkDocs theme's templates
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
    walk = _Walk(folder, in_docs)
    found = list(walk.files(base))
    files = [p for p, in_output in found if not (in_output and walk.sources and p.suffix.lower() in layout.HTML)]
    wanted = lang.lower().split("-")[0] if lang else None
    rels = [PurePosixPath(p.relative_to(base).as_posix()) for p in files]
    drop = layout.translations(rels, wanted)
    files = [p for p, rel in zip(files, rels, strict=True) if drop.isdisjoint(rel.parents)]
    if walk.gallery:
        gallery = list(layout.gallery_files(folder, [], SKIP_DIRS))
        walk.links += [p.relative_to(folder).as_posix() for p in gallery if p.is_symlink()]
        files = list(dict.fromkeys([*files, *(p for p in gallery if not p.is_symlink())]))
    files.sort(key=lambda p: p.relative_to(folder).as_posix())
    return Discovered(root=folder, files=files, narrowed_to=narrowed, skipped_links=sorted({*links, *walk.links}))


def links_note(links: list[str], shown: int = 5) -> str:
    """The note a build prints for the links it did not follow."""
    names = ", ".join(clip(n, 80) for n in links[:shown]) + (f" and {len(links) - shown} more" if len(links) > shown else "")
    return f"skipped {len(links)} symbolic link{'s' if len(links) != 1 else ''} (links are never followed): {names}"


class _Walk:
    """One walk of a docs tree: the files it yields, and what it saw on the way (a Sphinx
    source tree, whether that loads sphinx-gallery)."""

    def __init__(self, root: Path, in_docs: bool) -> None:
        self.root = root
        self.in_docs = in_docs  # the tree is docs, not a project (see `discover`)
        self.sources = False  # a Sphinx source folder (conf.py) was seen
        self.gallery = False  # ... and it uses sphinx-gallery
        self.links: list[str] = []  # linked files and folders met, never followed (relative to root)

    def files(self, base: Path) -> Iterator[tuple[Path, bool]]:
        """(doc file, inside rendered Sphinx output) under `base`."""
        ignores: dict[Path, list[str]] = {}
        output: set[Path] = set()  # folders inside rendered output
        # Theme folders named by a mkdocs.yml, also one above the docs folder (pydantic's).
        skip = {p for d in {self.root, base.parent} if (d / "mkdocs.yml").is_file() for p in self._theme_dirs(d)}
        for dirpath, dirnames, filenames in os.walk(base):
            d = Path(dirpath)
            ignores[d] = _read_gitignore(d)
            rules = [(anchor, pat) for anchor, pats in ignores.items()
                     if anchor == d or anchor in d.parents for pat in pats]
            if layout.is_source_dir(filenames):
                self._saw_sources(d)
            elif layout.is_output_dir([*dirnames, *filenames]) or d.parent in output:
                output.add(d)
            if "mkdocs.yml" in filenames:
                skip.update(self._theme_dirs(d))
            in_output = d in output
            dirnames[:] = [name for name in sorted(dirnames) if self._keep_dir(d, name, rules, in_output, skip)]
            for name in filenames:
                p = d / name
                if (name.startswith(".") or p.suffix.lower() not in DOC_SUFFIXES
                        or SKIP_FILE_RE.match(name) or (not self.in_docs and CODE_ONLY_FILE_RE.match(name))
                        or (in_output and layout.output_only(name))
                        or _ignored(p, False, rules)):
                    continue
                if p.is_symlink():
                    self.links.append(p.relative_to(self.root).as_posix())
                    continue
                try:
                    st = p.stat()
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_FILE_BYTES:  # never a FIFO or device
                    yield p, in_output

    def _keep_dir(self, d: Path, name: str, rules: list[tuple[Path, str]], in_output: bool, skip: set[Path]) -> bool:
        low = name.lower()
        if name.startswith(".") or (d / name) in skip or _ignored(d / name, True, rules):
            return False
        if low in CODE_ONLY_DIRS and not self.in_docs:
            return False
        if in_output and layout.output_only(name):
            return False
        if (d / name).is_symlink():  # os.walk would not enter it; say so
            self.links.append((d / name).relative_to(self.root).as_posix())
            return False
        # A folder named like build output is kept when it is a Sphinx source tree
        # (SQLAlchemy's and alembic's sources live in doc/build/).
        return low not in SKIP_DIRS or layout.is_source_dir(_names(d / name))

    def _saw_sources(self, d: Path) -> None:
        self.sources = True
        try:
            self.gallery = self.gallery or "sphinx_gallery" in (d / "conf.py").read_text("utf-8", "replace")
        except OSError:
            pass

    def _theme_dirs(self, d: Path) -> list[Path]:
        try:
            text = (d / "mkdocs.yml").read_text("utf-8", "replace")
        except OSError:
            return []
        return [Path(os.path.normpath(d / m.group(1))) for m in _CUSTOM_DIR.finditer(text)]


def _names(d: Path) -> list[str]:
    try:
        return os.listdir(d)
    except OSError:
        return []


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
