"""A Sphinx tree's conf.py, read for its literal settings with `ast`, never executed.

Some settings change what a page shows: zzzeeksphinx's module prefixes (`module_prefixes`)
and autodoc's default directive options (`apiref.autodoc`). A setting counts when conf.py
assigns it a literal at its top level (the last such assignment wins); anything computed,
a file that is too large, linked, unreadable or not Python gives none.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable
from pathlib import Path

MAX_CONF = 1 << 20  # bytes: a conf.py is a few kB (SQLAlchemy's 16 kB); more is not read
_FAULTS = (SyntaxError, ValueError, TypeError, RecursionError, MemoryError)


class SphinxConf:
    """The literal top-level settings of one conf.py (none without one)."""

    def __init__(self, source: bytes = b"") -> None:
        self.source = source
        self._body: list[ast.stmt] | None = None

    @classmethod
    def of_tree(cls, root: Path, rels: Iterable[str]) -> SphinxConf:
        """The conf.py in the pages' common folder or the nearest folder above it inside
        `root`; an empty one when there is no such file."""
        folders = {posixpath.dirname(rel) for rel in rels}
        if not folders:
            return cls()
        folder = root / posixpath.commonpath(list(folders))
        for d in (folder, *folder.parents):
            conf = d / "conf.py"
            if conf.is_file() and not conf.is_symlink():
                return cls.of_file(conf)
            if d == root:
                break
        return cls()

    @classmethod
    def of_file(cls, conf: Path) -> SphinxConf:
        try:
            with conf.open("rb") as f:
                source = f.read(MAX_CONF + 1)
        except OSError:
            return cls()
        return cls(source if len(source) <= MAX_CONF else b"")

    def setting(self, name: str) -> object | None:
        """The last literal value conf.py assigns to `name` at its top level, else None."""
        if name.encode() not in self.source:
            return None
        if self._body is None:
            try:
                self._body = ast.parse(self.source).body
            except _FAULTS:
                self._body = []
        values = [node.value for node in self._body if isinstance(node, ast.Assign | ast.AnnAssign)
                  and node.value is not None and any(isinstance(t, ast.Name) and t.id == name
                                                     for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
        try:
            return ast.literal_eval(values[-1]) if values else None
        except _FAULTS:
            return None
