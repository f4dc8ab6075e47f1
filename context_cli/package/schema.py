"""The package file layout: Neuledge Context's three tables plus our additions.

See docs/package-format.md for the full description. Anything Context's client reads is
kept exactly; everything of ours is an extra column, table or meta key it ignores.
"""

from __future__ import annotations

FORMAT_VERSION = "1"

# Context's tables, verbatim apart from our trailing `url` column.
CORE_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE chunks (
  id INTEGER PRIMARY KEY,
  doc_path TEXT NOT NULL,
  doc_title TEXT NOT NULL,
  section_title TEXT NOT NULL,
  content TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  has_code INTEGER DEFAULT 0,
  url TEXT
);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
  doc_title, section_title, content,
  content='chunks', content_rowid='id',
  tokenize='porter unicode61'
);
"""

# Ours: one compact vector per chunk, and one row per page for incremental rebuilds.
# The covering index answers "tokens in these pages" (the pack's savedPercent) without
# reading every chunk's text; Context's client ignores it.
EXTRA_DDL = """
CREATE TABLE vectors (chunk_id INTEGER PRIMARY KEY, vector BLOB NOT NULL);
CREATE TABLE pages (doc_path TEXT PRIMARY KEY, doc_title TEXT NOT NULL, url TEXT,
  content_hash TEXT NOT NULL, kind TEXT NOT NULL DEFAULT 'guide');
"""
PAGE_TOKENS_DDL = "CREATE INDEX chunks_page_tokens ON chunks(doc_path, tokens);"

# Ours, optional: a compact inverted index for BM25 without FTS5 at query time
# (context_cli/package/bm25.py; docs/package-format.md). Packages without it use FTS5.
BM25_DDL = """
CREATE TABLE bm25_terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL, postings BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE bm25_lengths (field TEXT PRIMARY KEY, lengths BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE bm25_phrases (phrase TEXT PRIMARY KEY, df INTEGER NOT NULL, postings BLOB NOT NULL) WITHOUT ROWID;
"""

# Ours, optional: a second vector set from a stronger model (the quality set, made by
# `context add --quality` or the publisher), beside `vectors`; its meta keys name its source,
# model and encoding. Search uses it only with that model, else the static vectors.
QUALITY_TABLE = "quality_vectors"
QUALITY_DDL = f"CREATE TABLE {QUALITY_TABLE} (chunk_id INTEGER PRIMARY KEY, vector BLOB NOT NULL);"
QUALITY_META = ("quality_source", "quality_model", "quality_fingerprint", "quality_dim", "quality_dtype")
QUALITY_PREFIX_META = ("quality_query_prefix", "quality_document_prefix")  # optional: an endpoint's prefixes

# Ours, optional: the API as released (context_cli/apiref; docs/api-reference.md), one row per
# public symbol, in packages built from a release's code. `aliases` holds the other public
# names, one a line; `file` is the id of its source file's path in `symbol_files`; `chunk_id`
# is the section that shows the entry; `doc_zlib`, when not NULL, is the docstring deflated
# (`doc` is then empty: package/symbol_docs.py). Unqualified look-ups go through the index on
# the name's last part in lower case (SYMBOL_TAIL). Meta `symbol_count` is its row count.
SYMBOLS_TABLE = "symbols"
SYMBOL_FILES_TABLE = "symbol_files"
# The last dotted part of `name`, lower case (ASCII letters: SQLite's `lower`): `rtrim` takes off
# every character but dots from the end, leaving the qualifier, whose length is skipped.
SYMBOL_TAIL = "lower(substr(name, length(rtrim(name, replace(name, '.', ''))) + 1))"
SYMBOLS_DDL = """
CREATE TABLE symbols (id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL,
  signature TEXT NOT NULL DEFAULT '', doc TEXT NOT NULL DEFAULT '', deprecated TEXT, since TEXT,
  file INTEGER, line INTEGER NOT NULL DEFAULT 0, aliases TEXT NOT NULL DEFAULT '',
  chunk_id INTEGER, doc_zlib BLOB);
CREATE TABLE symbol_files (id INTEGER PRIMARY KEY, path TEXT NOT NULL);
"""
SYMBOLS_INDEX = f"CREATE INDEX symbols_tail ON symbols({SYMBOL_TAIL});"  # made after the rows: one sort
# The columns read in every layout, and `file` with `symbol_files(id, path)`; `doc_zlib` is
# optional (packages before it lack it).
SYMBOL_COLUMNS = ("name", "kind", "signature", "doc", "deprecated", "since", "line", "aliases", "chunk_id")
# Packages built before `symbol_files` held `tail` (SYMBOL_TAIL as Python lower-cases) and
# `source` (the path) on every row, with the index on `tail`.
SYMBOL_ROW_COLUMNS = ("tail", "source")
SYMBOL_DOC_ZLIB = "doc_zlib"

REQUIRED_CHUNK_COLUMNS = ("id", "doc_path", "doc_title", "section_title", "content", "tokens")
REQUIRED_META = ("name", "version")

# The one full-text index shape we read, exactly as we and Neuledge Context declare it:
# `chunks_fts` over these columns, with these options and no others (`detail=`,
# `columnsize=`, `prefix=`, another content table or tokenizer change what queries do).
FTS_TABLE = "chunks_fts"
FTS_COLUMNS = ("doc_title", "section_title", "content")
FTS_OPTIONS = {"content": "chunks", "content_rowid": "id", "tokenize": "porter unicode61"}
# The shadow tables FTS5 makes for that declaration, with the SQL it gives them.
FTS_SHADOW_TABLES = {
    "chunks_fts_data": "CREATE TABLE 'chunks_fts_data'(id INTEGER PRIMARY KEY, block BLOB)",
    "chunks_fts_idx": "CREATE TABLE 'chunks_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID",
    "chunks_fts_docsize": "CREATE TABLE 'chunks_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB)",
    "chunks_fts_config": "CREATE TABLE 'chunks_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID",
}
# Keys FTS5 may keep in its config table; `rank` (a ranking expression) is not among them.
FTS_CONFIG_KEYS = frozenset({"version", "pgsz", "automerge", "crisismerge", "usermerge", "deletemerge"})
FTS_CONFIG_VERSION = 4


class PageRecord:
    """One source page (a `pages` row), remembered so an unchanged page can be reused on rebuild."""

    __slots__ = ("doc_path", "doc_title", "url", "content_hash", "kind")

    def __init__(self, doc_path: str, doc_title: str, url: str | None, content_hash: str, kind: str) -> None:
        self.doc_path, self.doc_title, self.url, self.content_hash = doc_path, doc_title, url, content_hash
        self.kind = kind  # document.PAGE_KINDS
