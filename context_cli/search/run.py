"""One search over a set of packages: each package's part in it (`PackageQuery`), and what the
search notes on the way (`SearchRun`).

One bad or pathological package never breaks the others' answer: every step that reads a
package runs inside `run.guard(package)`, which catches that package's own faults, notes it
as skipped and leaves it out of every later step (`run.live()`). Only when every package
has failed is the first failure the answer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING

from ..errors import InvalidPackage

if TYPE_CHECKING:
    from ..store.store import Installed
    from .dense import DenseHits
    from .lexical import LexicalHits
    from .quality import MixedHits
    from .query import Query
    from .searcher import PackageSearcher

# What one package's search may fail with: its own fault, answered by skipping it.
PACKAGE_FAULTS = (InvalidPackage, sqlite3.Error, UnicodeDecodeError)
RANKING, READING = 0, 1  # the two phases of a search, for the order of its notes


class PackageQuery:
    """One package in a search: its place among the packages, its searcher, the question as
    it sees it (its own name left out: `Query.without_library`), and what each step found."""

    __slots__ = ("position", "searcher", "query", "label", "named", "pinned", "lexical", "dense", "mode")

    def __init__(self, position: int, searcher: PackageSearcher, query: Query, label: str, named: bool = False) -> None:
        self.position, self.searcher, self.query = position, searcher, query
        self.label = label  # the package's name@version
        self.named = named  # the question names the package (`Query.names_library`)
        self.pinned: list[int] = []  # the sections of the entries an identifier question names
        self.lexical: LexicalHits | None = None  # `scoring.score_lexical`
        self.dense: DenseHits | MixedHits | None = None  # `scoring.start_dense` (None: searched lexically)
        self.mode: str | None = None  # hybrid | lexical | dense | skipped, once known


class SearchRun:
    """The packages of one search and what it notes: per-package modes, notes, and the
    packages skipped."""

    __slots__ = ("packages", "phase", "_notes", "_skipped", "_guards")

    def __init__(self, packages: list[PackageQuery]) -> None:
        self.packages = packages
        self.phase = RANKING
        self._notes: list[tuple[int, int, str, str | None]] = []  # (phase, position, note, about)
        self._skipped: list[tuple[int, int, InvalidPackage]] = []
        self._guards = [_Guard(self, pq) for pq in packages]

    @classmethod
    def of(cls, searchers: Iterable[PackageSearcher], query: Query) -> SearchRun:
        return cls([PackageQuery(p, s, query.without_library(s.name), s.label, query.names_library(s.name))
                    for p, s in enumerate(searchers)])

    @classmethod
    def open(cls, installed: Iterable[Installed], query: Query, warm: bool = False) -> SearchRun:
        """A run over these installed packages, each one's searcher made warm first when asked."""
        from ..errors import ContextError
        from .searcher import open_searcher

        run = cls.of([open_searcher(p) for p in installed], query)
        if not run.packages:
            raise ContextError("no packages to search; install one with `context add` or `context install`")
        if warm:
            for pq in run.packages:
                with run.guard(pq):
                    pq.searcher.warm()
        return run

    def live(self) -> list[PackageQuery]:
        """The packages not skipped, in order."""
        return [pq for pq in self.packages if pq.mode != "skipped"]

    def guard(self, pq: PackageQuery) -> _Guard:
        """`with run.guard(pq):` a fault of that package's (PACKAGE_FAULTS) skips it, and the
        search goes on without it; when every package has failed, the first failure is raised."""
        return self._guards[pq.position]

    def _skip(self, pq: PackageQuery, e: Exception) -> None:
        problem = _as_package_error(pq.label, e)
        pq.mode = "skipped"
        self._skipped.append((self.phase, pq.position, problem))
        self.note(f"{problem}; skipped" if "skipped" not in str(problem) else str(problem), pq)
        if not self.live():
            raise sorted(self._skipped, key=lambda x: x[:2])[0][2]

    def searched(self, pq: PackageQuery, mode: str) -> None:
        """Note how the package is searched, and why not with its vectors when it has none to use."""
        if pq.mode == "skipped":
            return
        pq.mode = "hybrid" if pq.dense is not None and mode != "dense" else "dense" if pq.dense is not None else "lexical"
        note = pq.searcher.note
        if pq.dense is None and note and mode != "lexical":
            self.note_about(pq, note)
        if pq.searcher.quality_note and mode != "lexical":
            self.note_about(pq, pq.searcher.quality_note)

    def note_docs_cover(self, labels: set[str]) -> None:
        """Note, for each package among `labels` (those the answer draws from) whose docs are not
        exactly its version's, what they cover (`docs_cover.docs_note`)."""
        from ..package.docs_cover import docs_note

        for pq in self.packages:
            if pq.label in labels and (note := docs_note(pq.searcher.pkg.meta)) is not None:
                self.note(note, pq)

    def note(self, text: str, pq: PackageQuery | None = None) -> None:
        self._notes.append((self.phase, pq.position if pq is not None else -1, text, None))

    def note_about(self, pq: PackageQuery, text: str) -> None:
        """A note said of package `pq` ("name@version: text"). Packages with the same note
        share one line that names them all: a misspelling corrected in every one of twelve
        packages is one note, not twelve."""
        self._notes.append((self.phase, pq.position, text, pq.label))

    @property
    def notes(self) -> list[str]:
        """The notes, package by package in the packages' order; those of packages skipped
        while the pack's text was read come last. A note said of several packages comes
        where its first package's would."""
        lines: list[tuple[list[str], str]] = []
        said: dict[str, list[str]] = {}  # note -> the packages it is said of
        for _, _, text, label in sorted(self._notes, key=lambda x: x[:2]):
            if label is None:
                lines.append(([], text))
            elif text in said:
                said[text].append(label)
            else:
                said[text] = [label]
                lines.append((said[text], text))
        return [f"{', '.join(labels)}: {text}" if labels else text for labels, text in lines]

    @property
    def modes(self) -> dict[str, str]:
        """Each package's mode (hybrid | lexical | dense | skipped), in the packages' order."""
        return {pq.label: pq.mode for pq in self.packages if pq.mode is not None}


class _Guard:
    """`SearchRun.guard`'s context manager for one package (one made per package and search)."""

    __slots__ = ("pq", "run")

    def __init__(self, run: SearchRun, pq: PackageQuery) -> None:
        self.run, self.pq = run, pq

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> bool:
        if e is None or not isinstance(e, PACKAGE_FAULTS):
            return False
        self.run._skip(self.pq, e)
        return True


def _as_package_error(label: str, e: Exception) -> InvalidPackage:
    """What went wrong with one package, as one line naming it."""
    if isinstance(e, InvalidPackage):
        return e if label in str(e) else InvalidPackage(f"{label}: {e}")
    return InvalidPackage(f"{label}: unreadable ({type(e).__name__}: {str(e)[:200]})")
