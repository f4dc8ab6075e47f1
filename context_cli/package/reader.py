"""Open package files safely and read them: the one place that runs SQL on a package's tables.

Package files are untrusted. They are opened read-only with `trusted_schema` off and tight
limits, checked (`validate.py`) before anything reads them, and every query runs under a
deadline (`deadline.py`), so a hostile file is refused or skipped, never obeyed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..document import PAGE_KINDS, Chunk
from ..errors import InvalidPackage
from . import vectors as vec
from .deadline import DEFAULT_DEADLINE_S, LOAD_DEADLINE_S, PackageTooSlow, QueryGuard
from .identity import InvalidIdentity, PackageId, check_identity
from .schema import QUALITY_TABLE, SYMBOL_DOC_ZLIB, SYMBOL_FILES_TABLE, SYMBOL_TAIL, SYMBOLS_TABLE, PageRecord
from .symbol_docs import Inflated
from .symbol_signatures import signature_text
from .validate import MAX_VALUE_BYTES, check

if TYPE_CHECKING:
    import numpy as np

    from ..symbol import Symbol

__all__ = ["Package", "PackageTooSlow", "open_package", "read_meta"]

SQLITE_MAGIC = b"SQLite format 3\x00"
OPEN_DEADLINE_S = 5.0  # the quick checks of every open
DEEP_DEADLINE_S = 300.0  # the deep checks of an install or upload (they read every row)


def _as_text(column: str) -> str:
    """A chunk column as text in SQL: SQLite's type affinity lets a file changed after its
    install hold a blob or NULL in a text column, and search must only ever see text (a blob
    that is not UTF-8 fails to decode: the package is damaged)."""
    return f"coalesce(CAST({column} AS TEXT), '')"


def connect_readonly(path: Path, *, immutable: bool = False) -> sqlite3.Connection:
    """A read-only connection with an untrusted-schema posture."""
    uri = f"file:{quote(str(Path(path).resolve()))}?mode=ro" + ("&immutable=1" if immutable else "")
    db = sqlite3.connect(uri, uri=True, check_same_thread=False)
    db.execute("PRAGMA trusted_schema=OFF")
    db.execute("PRAGMA query_only=ON")
    db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    db.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, 1_000_000)
    return db


@dataclass(repr=False)
class SectionMap:
    """Per section (chunk id): its page (doc_path, doc_title), its own title (breadcrumb) and
    the characters of its text as SQLite counts them (up to a NUL), so a pack is planned
    before any text is read."""

    pages: dict[int, tuple[str, str]]
    titles: dict[int, str]
    chars: dict[int, int]


@dataclass(eq=False, repr=False)
class Package:
    """An open, validated package. Close it (or use `with`) when done.

    Its read methods each run under a deadline (DEFAULT_DEADLINE_S unless the caller holds
    a shorter one from `deadline()`), and fail with InvalidPackage or PackageTooSlow.
    """

    path: Path
    meta: dict[str, str]
    id: PackageId
    db: sqlite3.Connection
    guard: QueryGuard
    has_vectors: bool = False
    has_bm25: bool = False  # our compact BM25 index is present and well-formed (else FTS5 is used)
    has_bm25_phrases: bool = False  # that index has its phrase postings (else phrases go to FTS5)
    has_url: bool = False  # chunks carry our `url` column (Context's packages do not)
    has_pages: bool = False  # our `pages` table (content hashes for incremental rebuilds)
    has_quality: bool = False  # a second vector set (validate.quality_set; its rows unchecked until read)
    has_symbols: bool = False  # the API reference read from the release's code (`symbols` table)
    has_symbol_doc_zlib: bool = False  # its long docstrings deflated (package/symbol_docs.py)
    has_symbol_files: bool = False  # its paths in `symbol_files`, signatures packed (else `tail`, `source`)

    @property
    def name(self) -> str:
        return self.id.name

    @property
    def version(self) -> str:
        return self.id.version

    @property
    def label(self) -> str:
        return f"{self.id.name}@{self.id.version}"

    def deadline(self, seconds: float = DEFAULT_DEADLINE_S) -> AbstractContextManager[None]:
        """`with pkg.deadline(s):` queries on this package from this thread abort after `s`
        seconds with PackageTooSlow (nested deadlines never extend an outer one)."""
        return self.guard.deadline(seconds)

    @property
    def timed_out(self) -> bool:
        """Has this thread's deadline on the package passed? (Fallbacks must not retry then.)"""
        return self.guard.expired

    def chunk_count(self) -> int:
        with self.deadline():
            return int(self.db.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def chunks(self, ids: Iterable[int] | None = None) -> list[tuple[int, Chunk]]:
        """(id, chunk) for the given chunk ids (all when None), in id order; unknown ids are absent."""
        url = "CAST(url AS TEXT)" if self.has_url else "NULL"
        rows = self._rows(f"{_as_text('doc_path')}, {_as_text('doc_title')}, {_as_text('section_title')}, "
                          f"{_as_text('content')}, coalesce(CAST(tokens AS INTEGER), 0), has_code, {url}", ids)
        return [(cid, Chunk(doc_path=dp, doc_title=dt, section_title=st, content=content,
                            tokens=tokens, has_code=bool(has_code), url=u))
                for cid, dp, dt, st, content, tokens, has_code, u in rows]

    def section_map(self, ids: Iterable[int] | None = None) -> SectionMap:
        """What search needs of sections but their text (see `SectionMap`): of the given chunk
        ids (unknown ids are absent), or of every section in one scan when None.

        A scan reads the whole chunks table (12.5 ms at 2,000 sections, 38 ms at 5,454); the
        sections one query ranks are a hundred rows. Values are typed in SQL (see `_as_text`).
        """
        rows = self._rows(f"{_as_text('doc_path')}, {_as_text('doc_title')}, {_as_text('section_title')}, "
                          "coalesce(length(content), 0)", ids)
        page: dict[tuple[str, str], tuple[str, str]] = {}  # one (path, title) per page, shared by its sections
        return SectionMap(pages={r[0]: page.setdefault((r[1], r[2]), (r[1], r[2])) for r in rows},
                          titles={r[0]: r[3] for r in rows}, chars={r[0]: r[4] for r in rows})

    def _rows(self, columns: str, ids: Iterable[int] | None) -> list[tuple[Any, ...]]:
        """(id, *columns) of the chunks with these ids (all when None), in id order, under the
        deadline of one search (a whole-table read: of a one-time load)."""
        sql = f"SELECT id, {columns} FROM chunks"
        params: list[int] = []
        if ids is not None:
            params = sorted({int(i) for i in ids})
            if not params:
                return []
            sql += f" WHERE id IN ({','.join('?' * len(params))})"
        with self.deadline(DEFAULT_DEADLINE_S if ids is not None else LOAD_DEADLINE_S):
            return self.db.execute(sql + " ORDER BY id", params).fetchall()

    def tokens_per_page(self, paths: Iterable[str] | None) -> dict[str, int]:
        """Doc path -> tokens of all its sections together (what reading the page whole
        costs), for these pages (found through our `chunks_page_tokens` index), or for every
        page whose path is text, in one scan, when None. (`total`, not `sum`: a hostile
        package's counts that add up past SQLite's integers are clamped, not an error.)"""
        if paths is None:
            sql, params, seconds = "WHERE typeof(doc_path) = 'text'", [], LOAD_DEADLINE_S
        else:
            params, seconds = sorted(set(paths)), DEFAULT_DEADLINE_S
            if not params:
                return {}
            sql = f"WHERE doc_path IN ({','.join('?' * len(params))})"
        with self.deadline(seconds):
            return {str(dp): int(n) for dp, n in self.db.execute(
                f"SELECT doc_path, CAST(total(tokens) AS INTEGER) FROM chunks {sql} GROUP BY doc_path", params)}

    def pages(self) -> list[PageRecord]:
        """Our `pages` rows (none in packages from elsewhere)."""
        if not self.has_pages:
            return []
        with self.deadline(LOAD_DEADLINE_S):
            columns = {str(r[1]) for r in self.db.execute("PRAGMA table_info(pages)")}
            kind = "kind" if "kind" in columns else "'guide'"  # packages built before page kinds
            rows = self.db.execute(f"SELECT doc_path, doc_title, url, content_hash, {kind} FROM pages").fetchall()
        return [PageRecord(path, title, url, digest, kind if kind in PAGE_KINDS else "guide")
                for path, title, url, digest, kind in rows]

    def page_chunks(self, paths: Iterable[str]) -> list[tuple[int, Chunk]]:
        """(id, chunk) of every section of these pages, in id order (through the
        `chunks_page_tokens` index where the package has it)."""
        params = sorted(set(paths))
        if not params:
            return []
        with self.deadline():
            ids = [int(r[0]) for r in self.db.execute(
                f"SELECT id FROM chunks WHERE doc_path IN ({','.join('?' * len(params))})", params)]
        return self.chunks(ids)

    @property
    def symbol_tail(self) -> str:
        """The SQL of a `symbols` row's last name part in lower case, the indexed key of
        unqualified look-ups (a column in packages built before `symbol_files`)."""
        return SYMBOL_TAIL if self.has_symbol_files else "tail"

    def symbols(self, tails: Iterable[str] | None = None) -> list[tuple[Symbol, int | None]]:
        """(symbol, id of the section showing it) whose last name part is one of `tails`
        (lower case; found through the `symbols_tail` index), or every symbol when None;
        none in a package without the table. Values are typed in SQL (see `_as_text`)."""
        from ..symbol import Symbol

        if not self.has_symbols:
            return []
        source = (f"(SELECT path FROM {SYMBOL_FILES_TABLE} WHERE {SYMBOL_FILES_TABLE}.id = {SYMBOLS_TABLE}.file)"
                  if self.has_symbol_files else "source")
        sql = ("SELECT " + ", ".join(_as_text(c) for c in ("name", "kind", "signature", "doc", source, "aliases"))
               + ", CAST(deprecated AS TEXT), CAST(since AS TEXT), coalesce(CAST(line AS INTEGER), 0),"
               f" CAST(chunk_id AS INTEGER), {SYMBOL_DOC_ZLIB if self.has_symbol_doc_zlib else 'NULL'} FROM {SYMBOLS_TABLE}")
        params: list[str] = []
        if tails is not None:
            params = sorted(set(tails))
            if not params:
                return []
            sql += f" WHERE {self.symbol_tail} IN ({','.join('?' * len(params))})"
        with self.deadline(DEFAULT_DEADLINE_S if tails is not None else LOAD_DEADLINE_S):
            rows = self.db.execute(sql + " ORDER BY id", params).fetchall()
        docs, packed = Inflated(self.label), self.has_symbol_files
        return [(Symbol(name=n, kind=k, signature=signature_text(n, sig) if packed else sig, doc=docs.text(doc, z),
                        deprecated=dep, since=since, source=src, line=line,
                        aliases=tuple(a for a in aliases.split("\n") if a)), cid)
                for n, k, sig, doc, src, aliases, dep, since, line, cid, z in rows]

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, (n, dim) float32 unit rows), ids ascending; MalformedVectors when they
        do not decode to finite rows. Only for packages with `has_vectors`."""
        return self._vector_rows("vectors", int(self.meta["embedding_dim"]), self.meta.get("embedding_dtype", "int8"))

    def quality_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """`vectors` of the second set (meta quality_*), rows of the wrong size refused before
        any is read (MalformedVectors). Only for packages with `has_quality`."""
        dim, dtype = int(self.meta["quality_dim"]), self.meta["quality_dtype"]
        with self.deadline(LOAD_DEADLINE_S):
            bad = self.db.execute(f"SELECT count(*) FROM {QUALITY_TABLE} WHERE typeof(vector) != 'blob' "
                                  "OR length(vector) != ?", (vec.bytes_per_vector(dtype, dim),)).fetchone()[0]
        if bad:
            raise vec.MalformedVectors(f"{self.label}: {bad} quality vector(s) do not have {dim} dimensions")
        return self._vector_rows(QUALITY_TABLE, dim, dtype)

    def _vector_rows(self, table: str, dim: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
        """The table's ids and unit rows, in id order. Every row is checked first: the blobs
        are decoded end to end, so one of the wrong size (an empty one) would shift every later
        row onto another section, and a NULL id has no section; either makes them unusable."""
        import numpy as np

        with self.deadline(LOAD_DEADLINE_S):
            rows = self.db.execute(f"SELECT chunk_id, vector FROM {table} ORDER BY chunk_id").fetchall()
        size = vec.bytes_per_vector(dtype, dim)
        if any(type(cid) is not int or type(blob) is not bytes or len(blob) != size for cid, blob in rows):
            raise vec.MalformedVectors(f"{self.label}: vector rows do not match the declared size")
        ids = np.fromiter(map(itemgetter(0), rows), dtype=np.int64, count=len(rows))
        if not rows:
            return ids, np.zeros((0, dim), np.float32)
        try:
            return ids, vec.decode(b"".join(map(itemgetter(1), rows)), dtype, dim)
        except vec.MalformedVectors as e:
            raise vec.MalformedVectors(f"{self.label}: {e}") from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Package:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_package(path: Path, *, registry: str | None = None, deep: bool = False,
                 immutable: bool = False) -> Package:
    """Open and check a package file; raise InvalidPackage with one clear line otherwise.

    `deep` adds the checks worth paying for once, at install or upload time: page-level
    integrity, value types and sizes in every row and vector contents. `registry`
    overrides the file's own (Context packages do not record one).
    """
    path = Path(path)
    _check_header(path)
    try:
        db = connect_readonly(path, immutable=immutable)
    except sqlite3.Error as e:
        raise InvalidPackage(f"{path.name}: cannot open as SQLite ({e})") from None
    guard = QueryGuard(db, path.name)
    try:
        with guard.deadline(DEEP_DEADLINE_S if deep else OPEN_DEADLINE_S):
            try:
                found = check(db, path.name, deep)
            except sqlite3.Error as e:
                raise InvalidPackage(f"{path.name}: not a valid package ({e})") from None
            except UnicodeDecodeError:
                raise InvalidPackage(f"{path.name}: not a valid package (text that is not UTF-8)") from None
        reg = registry or found.meta.get("registry") or "local"
        try:
            pid = check_identity(reg, found.meta["name"], found.meta["version"])
        except InvalidIdentity as e:
            raise InvalidPackage(f"{path.name}: {e}") from None
    except BaseException:
        db.close()
        raise
    pkg = Package(path=path, meta=found.meta, id=pid, db=db, guard=guard, has_vectors=found.has_vectors,
                  has_bm25=found.has_bm25, has_bm25_phrases=found.has_bm25_phrases, has_url=found.has_url,
                  has_pages=found.has_pages, has_quality=found.has_quality, has_symbols=found.has_symbols,
                  has_symbol_doc_zlib=found.has_symbol_doc_zlib, has_symbol_files=found.has_symbol_files)
    guard.label = pkg.label
    return pkg


def read_meta(path: Path) -> dict[str, str]:
    """Validate a package file deeply and return its meta."""
    with open_package(path, deep=True) as pkg:
        return dict(pkg.meta)


def _check_header(path: Path) -> None:
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as e:
        raise InvalidPackage(f"{path}: cannot read ({e.strerror})") from None
    if head != SQLITE_MAGIC:
        raise InvalidPackage(f"{path.name}: not a package (not an SQLite database)")


