"""Write a package file atomically: a temp file beside the target, renamed when complete.

A build that fails at any point leaves nothing at the destination (and an older file
there untouched).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..atomic import atomic_path
from ..document import Chunk
from ..version import __version__
from . import bm25, phrases
from . import vectors as vec
from .identity import check_identity
from .schema import (
    CORE_DDL,
    EXTRA_DDL,
    FORMAT_VERSION,
    PAGE_TOKENS_DDL,
    QUALITY_DDL,
    QUALITY_TABLE,
    SYMBOL_COLUMNS,
    SYMBOL_DOC_ZLIB,
    SYMBOL_FILES_TABLE,
    SYMBOLS_DDL,
    SYMBOLS_INDEX,
    PageRecord,
)
from .symbol_docs import packed
from .symbol_signatures import packed_signature

if TYPE_CHECKING:
    import numpy as np

    from ..symbol import Symbol

# (symbol, id of the chunk that shows it or None); None for the whole list: no `symbols` table.
SymbolRows = Sequence[tuple["Symbol", int | None]]

MAX_FREE = 0.01  # a package with more free pages than this share is compacted (VACUUM)
# SQLite's page size. Sections of one to a few kilobytes fill 4 KiB pages (SQLite's default,
# Neuledge Context's) badly: a page holds two or three and the rest of it is lost, a fifth of
# Django's chunks table. 16 KiB pages lose less (Django 12.6 -> 11.7 MB; 8 KiB 12.0, 32 KiB
# 11.8), but every table and index takes at least one page, 15 of them: below about 2 MB of
# text (most packages) that costs more than it saves (flask's docs 1.11 -> 1.20 MB).
SMALL_PAGE, LARGE_PAGE = 4096, 16384
LARGE_TEXT = 2_000_000  # characters of section text from which a package gets LARGE_PAGE pages


def content_hash(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def write_package(
    dest: Path,
    meta: Mapping[str, str | None],
    chunks: Sequence[Chunk],
    *,
    vectors: np.ndarray | None = None,
    vector_dtype: str = "int8",
    pages: Sequence[PageRecord] = (),
    counted: bm25.Counted | None = None,
    quality: vec.QualitySet | None = None,
    symbols: SymbolRows | None = None,
) -> Path:
    """Write `chunks` (and optionally one vector per chunk) to `dest` atomically; return `dest`.

    `meta` must hold name and version; format and build keys are filled in here. `counted`,
    the chunks' BM25 terms if the caller counted them already (a build does, page by page in
    its workers; see `bm25.prepare`), saves counting them here. `quality`, a second vector
    set of one row per chunk, is stored beside the first (docs/package-format.md). `symbols`,
    the release's API entries, become the `symbols` table (docs/api-reference.md).
    """
    with atomic_path(dest, prefix=".building-") as tmp:
        fill_package(tmp, meta, chunks, vectors=vectors, vector_dtype=vector_dtype, pages=pages, counted=counted,
                     quality=quality, symbols=symbols)
    return Path(dest)


def fill_package(
    path: Path,
    meta: Mapping[str, str | None],
    chunks: Sequence[Chunk],
    *,
    vectors: np.ndarray | None = None,
    vector_dtype: str = "int8",
    pages: Sequence[PageRecord] = (),
    counted: bm25.Counted | None = None,
    quality: vec.QualitySet | None = None,
    symbols: SymbolRows | None = None,
) -> None:
    """Write a package into `path`, a fresh (empty or absent) file the caller makes atomic:
    `write_package`, or `add`, whose one temp file is validated and renamed by the store."""
    check_identity(meta.get("registry") or "local", meta.get("name") or "", meta.get("version") or "")
    if (vectors is not None and len(vectors) != len(chunks)) or (quality is not None
                                                                 and len(quality.matrix) != len(chunks)):
        raise ValueError("one vector per chunk is required")
    full_meta = {
        "registry": "local",
        "format_version": FORMAT_VERSION,
        "built_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "builder": f"context {__version__}",
        **{k: v for k, v in meta.items() if v is not None},
        "chunk_count": str(len(chunks)),
    }
    if vectors is not None:
        full_meta["embedding_dim"] = str(vectors.shape[1])
        full_meta["embedding_dtype"] = vector_dtype
    if quality is not None:
        full_meta.update(quality.meta())
    if symbols is not None:
        full_meta["symbol_count"] = str(len(symbols))
    _fill(Path(path), full_meta, chunks, vectors, vector_dtype, pages, counted, quality, symbols)


def _fill(path: Path, meta: dict[str, str], chunks: Sequence[Chunk],
          vectors: np.ndarray | None, vector_dtype: str, pages: Sequence[PageRecord],
          counted: bm25.Counted | None, quality: vec.QualitySet | None = None,
          symbols: SymbolRows | None = None) -> None:
    from concurrent.futures import ThreadPoolExecutor

    rows = [(i, c.doc_title, c.section_title, c.content) for i, c in enumerate(chunks, start=1)]
    with ThreadPoolExecutor(1) as helper, closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA page_size={page_size(chunks)}")  # (before the first table: it fixes the file's)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.executescript(CORE_DDL + EXTRA_DDL)
        db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(meta.items()))
        db.executemany(
            "INSERT INTO chunks(id, doc_path, doc_title, section_title, content, tokens, has_code, url)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                (i, c.doc_path, c.doc_title, c.section_title, c.content, c.tokens, int(c.has_code), c.url)
                for i, c in enumerate(chunks, start=1)
            ),
        )
        # Our compact BM25 index is encoded in a helper thread while SQLite builds its FTS5
        # index (one long call that releases the GIL), then checked against it (bm25.write).
        # Not earlier: row-by-row inserts take the GIL back for every row, and beside a busy
        # Python thread they wait for it (Django's 5,454 chunk rows: 0.08-0.11 s, not 0.05 s).
        prepared = helper.submit(bm25.prepare, rows, counted)
        # The full-text index first: merging its segments frees pages, which the tables
        # written next fill, so the file mostly needs no VACUUM (a second copy of it).
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
        prepared_index = prepared.result()
        if vectors is not None:
            blobs = vec.encode(vectors, vector_dtype)
            db.executemany("INSERT INTO vectors(chunk_id, vector) VALUES (?, ?)",
                           ((i, b) for i, b in enumerate(blobs, start=1)))
        if quality is not None:
            db.execute(QUALITY_DDL)
            db.executemany(f"INSERT INTO {QUALITY_TABLE}(chunk_id, vector) VALUES (?, ?)",
                           enumerate(vec.encode(quality.matrix, quality.dtype), start=1))
        db.executemany(
            "INSERT OR REPLACE INTO pages(doc_path, doc_title, url, content_hash, kind) VALUES (?, ?, ?, ?, ?)",
            ((p.doc_path, p.doc_title, p.url, p.content_hash, p.kind) for p in pages),
        )
        db.execute(PAGE_TOKENS_DDL)
        if symbols is not None:
            _write_symbols(db, symbols)
        bm25.write(db, rows, prepared_index)
        db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                       (("bm25_index", bm25.FORMAT), ("bm25_phrases", phrases.FORMAT)))
        db.commit()
        free, total = (db.execute(f"PRAGMA {p}").fetchone()[0] for p in ("freelist_count", "page_count"))
        if free > total * MAX_FREE:
            db.execute("VACUUM")


def page_size(chunks: Sequence[Chunk]) -> int:
    """The page size a package of these sections is written with (LARGE_TEXT)."""
    text = 0
    for c in chunks:
        text += len(c.content) + len(c.section_title) + len(c.doc_title)
        if text > LARGE_TEXT:
            return LARGE_PAGE
    return SMALL_PAGE


def _write_symbols(db: sqlite3.Connection, symbols: SymbolRows) -> None:
    """The rows in order, each source file's path once in `symbol_files` (Django's 8,195 rows
    name 636 files), signatures without the entry's own name (package/symbol_signatures.py)."""
    db.executescript(SYMBOLS_DDL)
    files: dict[str, int] = {}
    columns = (*SYMBOL_COLUMNS, "file", SYMBOL_DOC_ZLIB)
    db.executemany(
        f"INSERT INTO symbols({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
        ((s.name, s.kind, packed_signature(s.name, s.signature), doc, s.deprecated, s.since, s.line,
          "\n".join(s.aliases), cid, files.setdefault(s.source, len(files) + 1), deflated)
         for s, cid in symbols for doc, deflated in (packed(s.doc),)))
    db.executemany(f"INSERT INTO {SYMBOL_FILES_TABLE}(id, path) VALUES (?, ?)", ((i, p) for p, i in files.items()))
    db.execute(SYMBOLS_INDEX)
