"""Files a page pulls in (`.. include::`, `literalinclude`, `--8<--`, `{!x!}`, `{* x *}`), read
safely from the source root.

A docs page often holds little of its own: keyring's index is one `include` of the README,
FastAPI's tutorial code lives in `docs_src/` beside (not inside) the docs folder. The builder
hands each page its source root (the checkout or unpacked artefact) as a plain path, which
crosses into the worker processes; `Includes` resolves a page's include targets inside that root
only: never above it, never through a symlink that leads out of it, never a file that is not
regular, and within a per-page budget of files and bytes, so a hostile tree (a cycle, a page
including a huge file hundreds of times) costs bounded time and memory.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat

MAX_FILE_BYTES = 2 << 20  # one included file
MAX_PAGE_BYTES = 8 << 20  # everything one page includes, nested includes too
MAX_PAGE_FILES = 256  # includes one page may make
MAX_DEPTH = 8  # includes within includes
INCLUDES = "context_includes"  # the docutils settings attribute that holds a page's Includes

# What `may_include` looks for: any include syntax the parsers resolve. A page that has one is
# never reused by an incremental rebuild, since what it includes may have changed.
_ANY_INCLUDE = re.compile(rb"include::|--8<--|\{!|\{\*|\{%-?\s*include|\{(?:literal)?include\}")


# mkdocs.yml lines that turn Jinja on: the macros plugin or extension (`- macros`, `macros:`,
# `zensical.extensions.macros:`), or hooks.
_JINJA_SITE = re.compile(r"^\s*(?:-\s*)?['\"]?[\w.]*\bmacros['\"]?\s*(?::|$)|^hooks\s*:", re.M)


def may_include(data: bytes) -> bool:
    """Whether a page's bytes name an include (false positives only cost a re-parse)."""
    return _ANY_INCLUDE.search(data) is not None


class Includes:
    """The include targets of one page, resolved and read inside `root` within a budget.

    Paths are POSIX and relative to `root`, like the page's own `page` path.
    """

    def __init__(self, root: str, page: str) -> None:
        self.root = os.path.realpath(root)
        self.page = page
        self.files = 0
        self.bytes = 0
        self._parents: dict[str, set[str]] = {}  # file -> every file it was included through

    def find(self, target: str, including: str, *, search_up: bool = False, base: str | None = None) -> str | None:
        """The root-relative path of `target` as named in the file `including`, or None.

        Relative targets are taken from `including`'s folder; with `search_up`, from each
        folder above it too, nearest first (MkDocs resolves from the folder it runs in, which
        the page does not say). An absolute target starts at `base` (Sphinx's source folder),
        else at the root.
        """
        target = target.strip()
        if not target or "\x00" in target or "\\" in target or "://" in target:
            return None
        if target.startswith("/"):
            starts = [base or ""]
            target = target.lstrip("/")
        else:
            folder = posixpath.dirname(including)
            starts = [folder]
            while search_up and folder:
                folder = posixpath.dirname(folder)
                starts.append(folder)
        for start in starts:
            rel = posixpath.normpath(posixpath.join(start, target))
            if rel == ".." or rel.startswith("../") or rel.startswith("/"):
                continue
            if self._regular_inside(rel):
                return rel
        return None

    def _regular_inside(self, rel: str) -> bool:
        """`rel` is a regular file whose real path (symlinks followed) is inside the root."""
        path = os.path.join(self.root, *rel.split("/"))
        real = os.path.realpath(path)
        if real != self.root and not real.startswith(self.root + os.sep):
            return False
        try:
            return stat.S_ISREG(os.stat(real).st_mode)
        except (OSError, ValueError):
            return False

    def enter(self, rel: str, including: str) -> bool:
        """Record that `including` includes `rel`; False for a cycle or beyond the depth limit."""
        chain = self._parents.get(including, set())
        if rel == including or rel in chain or len(chain) >= MAX_DEPTH:
            return False
        self._parents.setdefault(rel, set()).update(chain | {including})
        return True

    def read(self, rel: str) -> str | None:
        """The text of `rel` (found by `find`), or None when it is unreadable, not text, too
        big, or the page's budget is spent."""
        from .common import ParseError
        from .decode import decode

        if self.files >= MAX_PAGE_FILES:
            return None
        path = os.path.join(self.root, *rel.split("/"))
        try:
            with open(os.path.realpath(path), "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        except OSError:
            return None
        if len(data) > MAX_FILE_BYTES or self.bytes + len(data) > MAX_PAGE_BYTES:
            return None
        self.files += 1
        self.bytes += len(data)
        try:
            return decode(data, rel)
        except ParseError:
            return None

    def renders_jinja(self) -> bool:
        """Whether the page's MkDocs site renders Jinja in its pages: its `mkdocs.yml` (the
        nearest above the page) enables the macros plugin or hooks, which fill `{{ version }}`
        and the like at build time. Elsewhere `{{ NAME }}` is text the author meant to show
        (a prompt template's placeholder)."""
        folder = posixpath.dirname(self.page)
        while True:
            for name in ("mkdocs.yml", "mkdocs.yaml"):
                rel = posixpath.join(folder, name) if folder else name
                if self._regular_inside(rel):
                    return _JINJA_SITE.search(self.read_config(rel)) is not None
            if not folder:
                return False
            folder = posixpath.dirname(folder)

    def read_config(self, rel: str) -> str:
        """A site's configuration file (not counted against the include budget)."""
        try:
            with open(os.path.realpath(os.path.join(self.root, *rel.split("/"))), "rb") as f:
                return f.read(MAX_FILE_BYTES).decode("utf-8", "replace")
        except OSError:
            return ""

    def source_folder(self) -> str | None:
        """The page's Sphinx source folder (the nearest folder above it with a `conf.py`),
        where an absolute include target starts; None when there is none."""
        folder = posixpath.dirname(self.page)
        while True:
            if self._regular_inside(posixpath.join(folder, "conf.py") if folder else "conf.py"):
                return folder
            if not folder:
                return None
            folder = posixpath.dirname(folder)
