"""The package file layout: Neuledge Context's three tables plus our additions.

See docs/package-format.md for the full description. Anything Context's client reads is
kept exactly; everything of ours is an extra column, table or meta key it ignores.
"""

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
  content_hash TEXT NOT NULL);
"""
PAGE_TOKENS_DDL = "CREATE INDEX chunks_page_tokens ON chunks(doc_path, tokens);"

# Ours, optional: a compact inverted index for BM25 without FTS5 at query time
# (context_cli/package/bm25.py; docs/package-format.md). Packages without it use FTS5.
BM25_DDL = """
CREATE TABLE bm25_terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL, postings BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE bm25_lengths (field TEXT PRIMARY KEY, lengths BLOB NOT NULL) WITHOUT ROWID;
"""

REQUIRED_TABLES = {"meta": "table", "chunks": "table", "chunks_fts": "table"}
REQUIRED_CHUNK_COLUMNS = ("id", "doc_path", "doc_title", "section_title", "content", "tokens")
REQUIRED_META = ("name", "version")

# Meta keys we write (all optional for packages from elsewhere).
META_KEYS = (
    "name", "version", "registry", "format_version", "description", "source_type",
    "source_url", "source_commit", "built_at", "builder", "chunk_count",
    "embedding_model", "embedding_fingerprint", "embedding_dim", "embedding_dtype", "bm25_index",
)
