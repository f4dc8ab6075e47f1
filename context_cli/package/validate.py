"""Checks that a package file is what it claims, before any search reads it.

Package files come from teammates, registries and other tools, so they are untrusted.
The schema is held to the shapes we and Neuledge Context write (docs/package-format.md):
real tables, the one FTS5 declaration we read with FTS5's own shadow tables, no views
or other virtual tables a query could wander into. The quick checks run at
every open; `deep` adds, once at install or upload, page integrity, value types and
sizes in every row we read, and a decode of our BM25 index and vectors.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import InvalidPackage
from . import bm25
from . import vectors as vec
from .schema import (
    FTS_COLUMNS,
    FTS_CONFIG_KEYS,
    FTS_CONFIG_VERSION,
    FTS_OPTIONS,
    FTS_SHADOW_TABLES,
    FTS_TABLE,
    QUALITY_META,
    QUALITY_TABLE,
    REQUIRED_CHUNK_COLUMNS,
    REQUIRED_META,
    SYMBOL_COLUMNS,
    SYMBOL_DOC_ZLIB,
    SYMBOL_FILES_TABLE,
    SYMBOL_ROW_COLUMNS,
    SYMBOLS_TABLE,
)

MAX_VALUE_BYTES = 64 * 1024 * 1024  # no single text or blob in a package may exceed this
MAX_META_ROWS = 1000
MAX_META_BYTES = 1024 * 1024  # all meta keys and values together
MAX_SCHEMA_OBJECTS = 200
MAX_QUALITY_DIM = 8192  # an embeddings endpoint's vectors may be wider than ours
VECTOR_BATCH = 4096  # rows decoded at a time by the deep check (bounded memory)

Objects = Mapping[str, tuple[str, str]]  # name -> (type, sql)


@dataclass(eq=False, repr=False)
class Found:
    """What the checks learnt: the meta and the capabilities the package has."""

    meta: dict[str, str]
    has_vectors: bool
    has_bm25: bool
    has_bm25_phrases: bool
    has_url: bool
    has_pages: bool
    has_quality: bool = False  # a second vector set whose table and meta look usable (`quality_set`)
    has_symbols: bool = False  # an API reference table with the columns we read
    has_symbol_doc_zlib: bool = False  # ... and its optional deflated docstrings (package/symbol_docs.py)
    has_symbol_files: bool = False  # ... in the layout with `symbol_files` and packed signatures


def check(db: sqlite3.Connection, label: str, deep: bool) -> Found:
    """Check an open package; raise InvalidPackage with one clear line on the first fault."""
    objects = _schema(db, label)
    for table in ("meta", "chunks"):
        if not _real_table(objects, table):
            raise InvalidPackage(f"{label}: not a package (no '{table}' table)")
    _refuse_executable(objects, label)
    _check_fts(db, objects, label)
    columns = _check_chunks(db, label)
    meta = _read_meta(db, label)
    has_vectors = _check_vectors(db, objects, meta, label)
    has_bm25 = bm25.present(db, objects, meta)
    has_phrases = has_bm25 and bm25.phrases_present(db, objects, meta)
    # The FTS index must answer (a broken shadow table fails here, not at query time).
    db.execute(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH '\"the\"' LIMIT 1").fetchall()
    if deep:
        _deep(db, label, meta, has_vectors, has_bm25, has_phrases, "url" in columns)
    symbols = _columns(db, objects, SYMBOLS_TABLE)
    has_files = "file" in symbols and {"id", "path"} <= _columns(db, objects, SYMBOL_FILES_TABLE)
    has_symbols = symbols.issuperset(SYMBOL_COLUMNS) and (has_files or symbols.issuperset(SYMBOL_ROW_COLUMNS))
    return Found(meta=meta, has_vectors=has_vectors, has_bm25=has_bm25, has_bm25_phrases=has_phrases,
                 has_url="url" in columns, has_pages=_real_table(objects, "pages"),
                 has_quality=quality_set(objects, meta), has_symbols=has_symbols,
                 has_symbol_doc_zlib=has_symbols and SYMBOL_DOC_ZLIB in symbols,
                 has_symbol_files=has_symbols and has_files)


def _columns(db: sqlite3.Connection, objects: Objects, table: str) -> frozenset[str]:
    """The columns of `table` when it is a real table; none when there is none (packages
    built before the API reference, or by other tools, simply have none)."""
    if not _real_table(objects, table):
        return frozenset()
    return frozenset(str(r[1]) for r in db.execute(f"PRAGMA table_info({table})"))


def _schema(db: sqlite3.Connection, label: str) -> dict[str, tuple[str, str]]:
    """Every schema object by name (a few hundred at most)."""
    rows = db.execute(f"SELECT type, name, sql FROM sqlite_master LIMIT {MAX_SCHEMA_OBJECTS + 1}").fetchall()
    if len(rows) > MAX_SCHEMA_OBJECTS:
        raise InvalidPackage(f"{label}: not a package (too many schema objects)")
    return {str(name): (str(kind), sql or "") for kind, name, sql in rows}


def _refuse_executable(objects: Objects, label: str) -> None:
    """Views and virtual tables other than ours run code a query could wander into. (Triggers
    stay allowed: they fire only on writes, and packages are opened read-only.)"""
    for name, (kind, sql) in objects.items():
        if kind == "view":
            raise InvalidPackage(f"{label}: packages may not contain a {kind} ({name!r})")
        if kind == "table" and _is_virtual(sql) and name != FTS_TABLE:
            raise InvalidPackage(f"{label}: packages may not contain the virtual table {name!r}")


def _is_virtual(sql: str) -> bool:
    return re.match(r"\s*CREATE\s+VIRTUAL\b", sql, re.IGNORECASE) is not None


def _real_table(objects: Objects, name: str) -> bool:
    kind, sql = objects.get(name, ("", ""))
    return kind == "table" and not _is_virtual(sql)


# --- the full-text index ---------------------------------------------------------------------

_FTS_TOKEN = re.compile(r"""\s*(?:'((?:[^']|'')*)'|"((?:[^"]|"")*)"|`((?:[^`]|``)*)`|\[([^\]]*)\]|([\w]+)|(=|,))""")
_FTS_DECL = re.compile(r"\s*CREATE\s+VIRTUAL\s+TABLE\s+(\S+)\s+USING\s+fts5\s*\((.*)\)\s*", re.IGNORECASE | re.DOTALL)


def fts_declaration(sql: str) -> tuple[list[str], dict[str, str]] | None:
    """(columns, options) of a `CREATE VIRTUAL TABLE ... USING fts5(...)`, quotes removed and
    whitespace folded; None when it is not one or does not parse."""
    m = _FTS_DECL.fullmatch(sql)
    if m is None or _unquote(m.group(1)) != FTS_TABLE:
        return None
    groups: list[list[str]] = [[]]
    text, pos = m.group(2), 0
    while pos < len(text):
        t = _FTS_TOKEN.match(text, pos)
        if t is None:
            return None if text[pos:].strip() else _split(groups)
        pos = t.end()
        if t.group(6) == ",":
            groups.append([])
        else:
            groups[-1].append(t.group(6) or _token_text(t))
    return _split(groups)


def _token_text(t: re.Match[str]) -> str:
    for i, quote in ((1, "'"), (2, '"'), (3, "`")):
        if t.group(i) is not None:
            return t.group(i).replace(quote * 2, quote)
    return t.group(4) if t.group(4) is not None else t.group(5)


def _unquote(name: str) -> str:
    t = _FTS_TOKEN.fullmatch(name)
    return _token_text(t) if t is not None and t.group(6) is None else name


def _split(groups: list[list[str]]) -> tuple[list[str], dict[str, str]] | None:
    columns: list[str] = []
    options: dict[str, str] = {}
    for g in groups:
        if len(g) == 1:
            columns.append(g[0].lower())
        elif len(g) == 3 and g[1] == "=" and g[0].lower() not in options:
            options[g[0].lower()] = " ".join(g[2].split())
        else:
            return None
    return columns, options


def _check_fts(db: sqlite3.Connection, objects: Objects, label: str) -> None:
    kind, sql = objects.get(FTS_TABLE, ("", ""))
    found = fts_declaration(sql) if kind == "table" else None
    if found is None:
        raise InvalidPackage(f"{label}: not a package (no FTS5 '{FTS_TABLE}' index)")
    columns, options = found
    if tuple(columns) != FTS_COLUMNS or options != FTS_OPTIONS:
        raise InvalidPackage(f"{label}: its FTS5 index '{FTS_TABLE}' is not declared as packages declare it "
                             f"({', '.join(FTS_COLUMNS)}; " + ", ".join(f"{k}='{v}'" for k, v in FTS_OPTIONS.items())
                             + ")")
    for name, want in FTS_SHADOW_TABLES.items():
        if objects.get(name) != ("table", want):
            raise InvalidPackage(f"{label}: the FTS5 index's table {name!r} is missing or altered")
    extra = [n for n in objects if n.startswith(f"{FTS_TABLE}_") and n not in FTS_SHADOW_TABLES
             and objects[n][0] == "table"]
    if extra:
        raise InvalidPackage(f"{label}: unexpected FTS5 table {extra[0]!r}")
    for key, value in db.execute("SELECT k, v FROM chunks_fts_config LIMIT 100"):
        if key not in FTS_CONFIG_KEYS or not isinstance(value, int) or (
                key == "version" and value != FTS_CONFIG_VERSION):
            raise InvalidPackage(f"{label}: the FTS5 index's configuration is not one packages use ({key!r})")


# --- tables and meta -------------------------------------------------------------------------

def _check_chunks(db: sqlite3.Connection, label: str) -> set[str]:
    """The chunk table's columns; `id` must be its rowid, no column may be computed."""
    info = db.execute("PRAGMA table_xinfo(chunks)").fetchall()  # cid, name, type, notnull, default, pk, hidden
    columns = {str(r[1]) for r in info}
    missing = [c for c in REQUIRED_CHUNK_COLUMNS if c not in columns]
    if missing:
        raise InvalidPackage(f"{label}: chunks table lacks column(s) {', '.join(missing)}")
    if any(r[6] for r in info):
        raise InvalidPackage(f"{label}: chunks table has computed or hidden columns")
    pk = [r for r in info if r[5]]
    if len(pk) != 1 or pk[0][1] != "id" or str(pk[0][2]).upper() != "INTEGER":
        raise InvalidPackage(f"{label}: chunks.id is not the table's INTEGER PRIMARY KEY")
    db.execute("SELECT rowid FROM chunks LIMIT 0")  # fails for a WITHOUT ROWID table
    return columns


def _read_meta(db: sqlite3.Connection, label: str) -> dict[str, str]:
    """Meta as text, read row by row so a huge meta table is refused before it is held."""
    meta: dict[str, str] = {}
    size = 0
    for n, (k, v) in enumerate(db.execute("SELECT key, value FROM meta"), start=1):
        size += len(str(k)) + len(str(v))
        if n > MAX_META_ROWS or size > MAX_META_BYTES:
            raise InvalidPackage(f"{label}: meta table is too large")
        if isinstance(k, str) and v is not None:
            meta[k] = str(v)
    for key in REQUIRED_META:
        if not meta.get(key):
            raise InvalidPackage(f"{label}: meta lacks '{key}'")
    return meta


def _check_vectors(db: sqlite3.Connection, objects: Objects, meta: Mapping[str, str], label: str) -> bool:
    if "embedding_dim" not in meta:
        return False
    dtype = meta.get("embedding_dtype", "int8")
    dim = meta["embedding_dim"]
    if not (dim.isascii() and dim.isdigit()):
        raise InvalidPackage(f"{label}: meta embedding_dim is not a number")
    if not _real_table(objects, "vectors") or dtype not in vec.DTYPES or not 0 < int(dim) <= 4096:
        raise InvalidPackage(f"{label}: vector table or its meta is malformed")
    return True


def quality_set(objects: Objects, meta: Mapping[str, str]) -> bool:
    """Does the package carry a second vector set that looks usable? Never an error: a package
    whose quality set is missing a key, malformed or damaged is searched with its static vectors
    (its rows are checked when search loads them, `Package.quality_vectors`)."""
    if not _real_table(objects, QUALITY_TABLE) or not all(meta.get(k) for k in QUALITY_META if k != "quality_fingerprint"):
        return False
    dim = meta["quality_dim"]
    return dim.isascii() and dim.isdigit() and 0 < int(dim) <= MAX_QUALITY_DIM and meta["quality_dtype"] in vec.DTYPES


# --- deep (install and upload) ---------------------------------------------------------------

# Tables and columns that search reads, with the type each value must have.
_TYPED_COLUMNS = {
    "chunks": {"id": "integer", "doc_path": "text", "doc_title": "text", "section_title": "text",
               "content": "text", "tokens": "integer"},
}


def _deep(db: sqlite3.Connection, label: str, meta: Mapping[str, str], has_vectors: bool,
          has_bm25: bool, has_phrases: bool, has_url: bool) -> None:
    result = db.execute("PRAGMA quick_check").fetchone()[0]
    if result != "ok":
        raise InvalidPackage(f"{label}: database is corrupt ({result})")
    for table, cols in _TYPED_COLUMNS.items():
        wrong = " OR ".join(f"typeof({c}) != '{t}'" for c, t in cols.items())
        bad = db.execute(f"SELECT count(*) FROM {table} WHERE {wrong}").fetchone()[0]
        if bad:
            raise InvalidPackage(f"{label}: {bad} chunk row(s) have wrong value types")
    sized: dict[str, list[str]] = {"chunks": [*_TYPED_COLUMNS["chunks"], *(["url"] if has_url else [])]}
    if has_vectors:
        sized["vectors"] = ["vector"]
    if has_bm25:
        sized.update({"bm25_terms": ["term", "postings"], "bm25_lengths": ["lengths"]})
    if has_phrases:
        sized["bm25_phrases"] = ["phrase", "postings"]
    for table, names in sized.items():
        _check_sizes(db, label, table, names)
    if has_vectors:
        _deep_vectors(db, label, meta)
    if has_bm25:
        try:
            bm25.check(db, has_phrases)
        except bm25.MalformedIndex as e:
            raise InvalidPackage(f"{label}: BM25 index is malformed ({e})") from None


def _check_sizes(db: sqlite3.Connection, label: str, table: str, cols: list[str]) -> None:
    """No value over MAX_VALUE_BYTES. `length()` reads each value (a text one past the limit
    fails to load, a blob one is measured); `typeof()` alone would never look at it."""
    longest = ", ".join(f"max(length({c}))" for c in cols)
    try:
        sizes = db.execute(f"SELECT {longest} FROM {table}").fetchone()
    except sqlite3.DataError:
        sizes = (MAX_VALUE_BYTES + 1,)
    if any(s is not None and s > MAX_VALUE_BYTES for s in sizes):
        raise InvalidPackage(f"{label}: a value in '{table}' exceeds the {MAX_VALUE_BYTES >> 20} MiB limit")


def _deep_vectors(db: sqlite3.Connection, label: str, meta: Mapping[str, str]) -> None:
    """Every vector the right size, for an existing chunk, and finite (no NaN or infinity)."""
    dtype, dim = meta.get("embedding_dtype", "int8"), int(meta["embedding_dim"])
    size = vec.bytes_per_vector(dtype, dim)
    bad = db.execute(
        "SELECT count(*) FROM vectors WHERE typeof(vector) != 'blob' OR length(vector) != ?"
        " OR chunk_id NOT IN (SELECT id FROM chunks)", (size,)
    ).fetchone()[0]
    if bad:
        raise InvalidPackage(f"{label}: {bad} vector(s) have the wrong size")
    cursor = db.execute("SELECT vector FROM vectors")
    while rows := cursor.fetchmany(VECTOR_BATCH):
        if not vec.finite([r[0] for r in rows], dtype, dim):
            raise InvalidPackage(f"{label}: vectors hold values that are not finite numbers (NaN or infinity)")
