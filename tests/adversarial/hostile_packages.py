"""Generators of hostile package files: each starts from a real package and breaks one promise.

A package is a stranger's SQLite file. Every function here writes one to `path` and
returns it; the docstring says what it tries. Most begin with `base_package`, a real
lexical package written by our writer, then edit it with plain sqlite3 the way an
attacker would (the file is theirs, so anything SQLite accepts is fair).
"""

from __future__ import annotations

import sqlite3
import struct
import zlib
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from context_cli.document import Chunk, estimate_tokens
from context_cli.package.writer import write_package

GOOD_SECTIONS = [
    ("guide/streams.md", "Streams", "Streaming",
     "goodlib streams records from sources to sinks; streaming keeps memory flat."),
    ("guide/cancel.md", "Cancel", "Cancellation",
     "Call cancel() to stop a pipeline; cancellation flushes sinks and drops pending items."),
]


def good_package(path: Path, name: str = "goodlib", version: str = "1.0.0", registry: str = "local") -> Path:
    """The package that must survive every attack: found by 'streaming cancellation'."""
    return _write(path, name, version, registry, GOOD_SECTIONS)


def base_package(path: Path, name: str = "evil", version: str = "1.0.0", registry: str = "local",
                 sections: list[tuple[str, str, str, str]] | None = None) -> Path:
    """A real package whose words overlap the good one's, so a shared search touches both."""
    return _write(path, name, version, registry, sections or [
        ("evil.md", "Evil", "Streaming", "evil streaming cancellation foo.bar the the the"),
        ("evil2.md", "Evil", "More", "more streaming words for the hostile package"),
    ])


def _write(path: Path, name: str, version: str, registry: str, sections: list[tuple[str, str, str, str]]) -> Path:
    chunks = [Chunk(doc_path=p, doc_title=d, section_title=s, content=c, tokens=estimate_tokens(c),
                    has_code=False) for p, d, s, c in sections]
    return write_package(path, {"name": name, "version": version, "registry": registry,
                                "description": f"{name} docs"}, chunks)


def edit(path: Path, *sql: str, params: tuple[object, ...] = ()) -> Path:
    """Run statements against the file as its author could (the last one gets `params`)."""
    with closing(sqlite3.connect(path)) as db:
        for i, statement in enumerate(sql):
            db.execute(statement, params if i == len(sql) - 1 else ())
        db.commit()
    return path


def lexical_only(path: Path) -> Path:
    """Drop our compact BM25 index so searches use FTS5 (as for a Neuledge Context package)."""
    return edit(path, "DROP TABLE IF EXISTS bm25_terms", "DROP TABLE IF EXISTS bm25_lengths", "DROP TABLE IF EXISTS bm25_phrases",
                "DELETE FROM meta WHERE key = 'bm25_index'")


def set_meta(path: Path, **values: str) -> Path:
    with closing(sqlite3.connect(path)) as db:
        db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", values.items())
        db.commit()
    return path


def _replace_fts(path: Path, options: str, content_sql: str | None = None) -> Path:
    """Rebuild chunks_fts with other options, its index filled from the real chunks."""
    lexical_only(path)
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT id, doc_title, section_title, content FROM chunks").fetchall()
        db.execute("DROP TABLE chunks_fts")
        if content_sql:
            db.execute(content_sql)
        db.execute(f"CREATE VIRTUAL TABLE chunks_fts USING fts5(doc_title, section_title, content, {options})")
        db.executemany("INSERT INTO chunks_fts(rowid, doc_title, section_title, content) VALUES (?, ?, ?, ?)", rows)
        db.commit()
    return path


# -- the tricks ----------------------------------------------------------------

def fts_endless_view(path: Path) -> Path:
    """#1: FTS5 `content=` is a view over an endless recursive CTE that never yields the row
    asked for, so the first read of a row's text (bm25() without column sizes) never ends."""
    base_package(path)
    view = ("CREATE VIEW endless AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
            "SELECT -x AS id, 'Evil' AS doc_title, 'Streaming' AS section_title, "
            "'evil streaming cancellation' AS content FROM n")
    return _replace_fts(path, "content='endless', content_rowid='id', columnsize=0, "
                              "tokenize='porter unicode61'", view)


def fts_detail_none(path: Path) -> Path:
    """#4: `detail=none` makes any phrase query (`foo.bar`) an error for every package searched together."""
    base_package(path)
    return _replace_fts(path, "content='chunks', content_rowid='id', detail=none, tokenize='porter unicode61'")


def huge_value(path: Path, size: int = 69 * 1024 * 1024) -> Path:
    """#4: one 69 MB value, over the documented 64 MiB limit, in a chunk a search will hit."""
    base_package(path)
    lexical_only(path)
    text = "evil streaming cancellation " + "x" * size
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE chunks SET content = ? WHERE id = 1", (text,))
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
        db.commit()
    return path


def budget_liar(path: Path) -> Path:
    """#11: a 4.9 MB section that declares it costs 1 token."""
    text = "evil streaming cancellation. " + ("lorem ipsum dolor sit amet " * 180_000)
    base_package(path, sections=[("liar.md", "Liar", "Streaming", text)])
    return edit(path, "UPDATE chunks SET tokens = 1")


def nan_vectors(path: Path) -> Path:
    """#12: float16 vectors holding NaN and inf, with the shipped model named so they are used."""
    import numpy as np

    from context_cli.embed.model import shipped_model_name

    sections = [("nan.md", "Nan", "Streaming", "evil streaming cancellation of pipelines"),
                ("inf.md", "Inf", "Cancel", "cancellation streaming with infinite vectors")]
    chunks = [Chunk(doc_path=p, doc_title=d, section_title=s, content=c, tokens=estimate_tokens(c),
                    has_code=False) for p, d, s, c in sections]
    write_package(path, {"name": "evil", "version": "1.0.0", "embedding_model": shipped_model_name()},
                  chunks, vectors=np.ones((2, 256), dtype=np.float32), vector_dtype="float16")
    # Our writer refuses non-finite vectors, so the bytes go in behind its back.
    bad = np.zeros((2, 256), dtype=np.float16)
    bad[0, :] = np.nan
    bad[1, :3] = np.inf
    with closing(sqlite3.connect(path)) as db, db:
        rows = [r[0] for r in db.execute("SELECT rowid FROM vectors ORDER BY rowid")]
        db.executemany("UPDATE vectors SET vector = ? WHERE rowid = ?",
                       [(bad[i].tobytes(), rowid) for i, rowid in enumerate(rows)])
    return path


def pages_out_of_order(path: Path) -> Path:
    """Vectors, and pages that are not runs of chunk ids: two pages' sections interleaved and
    a third page's moved far past every vector (what `closeness.PageSpans` reads)."""
    import numpy as np

    from context_cli.embed.model import shipped_model_name

    sections = [(f"p{k % 2}.md", "Interleaved", f"Streaming {k}", f"evil streaming cancellation part {k}")
                for k in range(6)] + [("far.md", "Far", "Cancel", "cancellation streaming far away")]
    chunks = [Chunk(doc_path=p, doc_title=d, section_title=s, content=c, tokens=estimate_tokens(c),
                    has_code=False) for p, d, s, c in sections]
    vectors = np.random.default_rng(7).standard_normal((len(chunks), 256)).astype(np.float32)
    write_package(path, {"name": "evil", "version": "1.0.0", "embedding_model": shipped_model_name()},
                  chunks, vectors=vectors)
    return edit(path, "UPDATE chunks SET id = 4611686018427387904 WHERE doc_path = 'far.md'")


def newline_name(path: Path) -> Path:
    """#10: the name `react\\n` passes a `$`-anchored pattern and displays as "react"."""
    base_package(path, name="react")
    return set_meta(path, name="react\n")


def impersonator(path: Path) -> Path:
    """#13: a local file whose meta claims to be the registry's `npm/alpha@1.0.0`."""
    return base_package(path, name="alpha", version="1.0.0", registry="npm")


def surrogate_text(path: Path) -> Path:
    """Ours: content holding a lone surrogate's bytes (CESU-8 `\\xed\\xa0\\x80`), invalid UTF-8."""
    base_package(path)
    lexical_only(path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE chunks SET content = CAST(? AS TEXT) WHERE id = 1",
                   (b"evil streaming cancellation \xed\xa0\x80 here",))
        db.commit()
    return path


# -- our own tricks --------------------------------------------------------------------

def wrong_types(path: Path) -> Path:
    """Tokens stored as text, content as a blob."""
    base_package(path)
    return edit(path, "UPDATE chunks SET tokens = 'many', content = CAST(content AS BLOB) WHERE id = 1")


def token_overflow(path: Path) -> Path:
    """Ours: one page whose sections' token counts add up past SQLite's integers (savedPercent
    reads their total)."""
    base_package(path)
    return edit(path, "UPDATE chunks SET tokens = 9223372036854775807, doc_path = 'same.md'")


def with_trigger(path: Path) -> Path:
    """A trigger and a view calling functions: must never run with our privileges."""
    base_package(path)
    return edit(path, "CREATE TRIGGER t AFTER INSERT ON meta BEGIN SELECT load_extension('/tmp/x'); END",
                "CREATE VIEW v AS SELECT readfile('/etc/passwd') AS x")


def huge_page_count(path: Path) -> Path:
    """The header claims 2**31 pages; the file has a few."""
    base_package(path)
    data = bytearray(path.read_bytes())
    data[28:32] = (2**31 - 1).to_bytes(4, "big")
    path.write_bytes(bytes(data))
    return path


def truncated(path: Path) -> Path:
    """A good package cut in half (a download that stopped)."""
    base_package(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def not_sqlite(path: Path) -> Path:
    """Not SQLite at all."""
    path.write_bytes(b"PK\x03\x04 this is a zip, or maybe not" * 100)
    return path


def magic_then_garbage(path: Path) -> Path:
    """The SQLite magic followed by garbage."""
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 64)
    return path


def empty_file(path: Path) -> Path:
    path.write_bytes(b"")
    return path


def wal_mode(path: Path) -> Path:
    """A package left in WAL mode: opening it read-only wants side files."""
    base_package(path)
    return edit(path, "PRAGMA journal_mode=WAL")


def wrong_vector_size(path: Path) -> Path:
    """Vectors whose blobs are shorter than embedding_dim says."""
    base_package(path)
    return edit(path, "INSERT INTO meta(key, value) VALUES ('embedding_dim', '256'), ('embedding_model', 'default')",
                "INSERT INTO vectors(chunk_id, vector) VALUES (1, x'0102'), (2, x'03')")


def nested_json_meta(path: Path) -> Path:
    """Billion-laughs style: meta values that are deeply nested JSON, and a thousand extra keys."""
    base_package(path)
    deep = "[" * 100_000 + "]" * 100_000
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'description'", (deep,))
        db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", ((f"k{i}", deep[:1000]) for i in range(500)))
        db.commit()
    return path


def too_many_meta_rows(path: Path) -> Path:
    base_package(path)
    with closing(sqlite3.connect(path)) as db:
        db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", ((f"k{i}", "v") for i in range(2000)))
        db.commit()
    return path


def traversal_name(path: Path) -> Path:
    base_package(path)
    return set_meta(path, name="../../etc/evil")


def traversal_version(path: Path) -> Path:
    base_package(path)
    return set_meta(path, version="../../../1.0")


def very_long_name(path: Path) -> Path:
    base_package(path)
    return set_meta(path, name="a" * 5000)


def control_char_name(path: Path) -> Path:
    base_package(path)
    return set_meta(path, name="evil\x1b[31mred")


def no_fts(path: Path) -> Path:
    """chunks_fts is a plain table that merely mentions fts5 in a comment."""
    base_package(path)
    lexical_only(path)
    return edit(path, "DROP TABLE chunks_fts", "CREATE TABLE chunks_fts (x /* fts5 */)")


def chunks_is_view(path: Path) -> Path:
    base_package(path)
    return edit(path, "ALTER TABLE chunks RENAME TO real_chunks", "CREATE VIEW chunks AS SELECT * FROM real_chunks")


def _phrase_row(path: Path, df: int, postings: bytes) -> Path:
    """The package with one `bm25_phrases` row for `foo.bar` (FTS5 tokens `foo bar`)."""
    base_package(path)
    return edit(path, "INSERT OR REPLACE INTO bm25_phrases(phrase, df, postings) VALUES ('foo bar', ?, ?)",
                params=(df, postings))


def phrase_bomb(path: Path) -> Path:
    """A phrase row that inflates to 64 MiB of zeros while its df claims one chunk."""
    return _phrase_row(path, 1, zlib.compress(b"\0" * (64 << 20), 9))


def phrase_past_chunks(path: Path) -> Path:
    """A phrase row that decodes, naming a chunk the package does not have."""
    return _phrase_row(path, 1, zlib.compress(struct.pack("<H", 60_000) + b"\1\1\1"))


def phrase_liar(path: Path) -> Path:
    """A phrase row that decodes but lies: `foo bar` in chunk 2 (it is in 1), 255 times a column."""
    return _phrase_row(path, 1, zlib.compress(struct.pack("<H", 2) + b"\xff\xff\xff"))


def phrases_as_view(path: Path) -> Path:
    """`bm25_phrases` as a view over the chunks (a query that reads their text)."""
    base_package(path)
    return edit(path, "DROP TABLE bm25_phrases",
                "CREATE VIEW bm25_phrases AS SELECT content AS phrase, 1 AS df, x'00' AS postings FROM chunks")


Generator = Callable[[Path], Path]

# Tricks the reader refuses today: installing them must fail in one line, store unchanged.
REFUSED: dict[str, Generator] = {
    "wrong_types": wrong_types,
    "truncated": truncated,
    "not_sqlite": not_sqlite,
    "magic_then_garbage": magic_then_garbage,
    "empty_file": empty_file,
    "wrong_vector_size": wrong_vector_size,
    "too_many_meta_rows": too_many_meta_rows,
    "traversal_name": traversal_name,
    "traversal_version": traversal_version,
    "very_long_name": very_long_name,
    "control_char_name": control_char_name,
    "no_fts": no_fts,
    "chunks_is_view": chunks_is_view,
    "huge_page_count": huge_page_count,
    "phrase_bomb": phrase_bomb,
    "phrase_past_chunks": phrase_past_chunks,
    "phrases_as_view": phrases_as_view,
}

# Tricks that may be installed or refused; either way every search stays healthy.
TOLERATED: dict[str, Generator] = {
    "pages_out_of_order": pages_out_of_order,
    "with_trigger": with_trigger,
    "nested_json_meta": nested_json_meta,
    "surrogate_text": surrogate_text,
    "token_overflow": token_overflow,
}
