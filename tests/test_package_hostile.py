"""Hostile package files, made here as real SQLite files: each is refused at open or install,
or searched within a deadline; none hangs a search or breaks it for other packages."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import PEER_DB, make_package

from context_cli.adding import AddRequest, add_source
from context_cli.errors import ContextError, InvalidPackage
from context_cli.package.bm25 import MalformedIndex
from context_cli.package.identity import InvalidIdentity, check_name, check_registry, check_version
from context_cli.package.reader import PackageTooSlow, open_package
from context_cli.package.validate import fts_declaration
from context_cli.search.engine import search
from context_cli.search.query import Query
from context_cli.search.searcher import open_searcher
from context_cli.store.store import Store

OURS = ("CREATE VIRTUAL TABLE chunks_fts USING fts5(doc_title, section_title, content, "
        "content='chunks', content_rowid='id', tokenize='porter unicode61')")
ENDLESS_VIEW = ("CREATE VIEW endless AS WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n) "
                "SELECT id, 'x' AS doc_title, 'x' AS section_title, 'x' AS content FROM n")


def _package(tmp_path: Path, name: str = "lib") -> Path:
    sections = [("guide.md", "Streams", "How to stop a stream early: call cancel() on it."),
                ("api.md", "foo.bar", "The foo.bar function returns the bar of a foo.")]
    return make_package(tmp_path / f"{name}.db", name, "1.0.0", sections)


def _with_fts(path: Path, declaration: str, *setup: str) -> Path:
    """The package with `chunks_fts` re-declared (FTS5 makes its shadow tables itself)."""
    with sqlite3.connect(path) as db:
        for sql in setup:
            db.execute(sql)
        db.execute("DROP TABLE chunks_fts")
        db.execute(declaration)
        if "content='chunks'" in declaration.replace('"', "'").replace(" = ", "="):
            db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
    return path


def _forge_fts(path: Path, declaration: str, *setup: str) -> Path:
    """Rewrite the declaration in sqlite_master itself, as an attacker with a hex editor would."""
    db = sqlite3.connect(path)
    for sql in setup:
        db.execute(sql)
    db.execute("PRAGMA writable_schema=ON")
    db.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'chunks_fts'", (declaration,))
    db.commit()
    db.close()
    return path


# --- #1: only the FTS5 shapes we and Neuledge Context write ----------------------------------

@pytest.mark.parametrize("declaration", [
    OURS,
    'CREATE VIRTUAL TABLE "chunks_fts" USING fts5(doc_title,section_title,content,content="chunks",'
    'content_rowid="id",tokenize="porter unicode61")',
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(\n        doc_title, section_title, content,\n"
    "        content='chunks', content_rowid='id',\n        tokenize='porter unicode61'\n      )",
    "create virtual table chunks_fts using FTS5(doc_title, section_title, content, tokenize = 'porter  unicode61',"
    " content = 'chunks', content_rowid = 'id')",
])
def test_the_declarations_we_and_context_write_are_accepted(tmp_path, declaration):
    path = _with_fts(_package(tmp_path), declaration)
    with open_package(path, deep=True) as pkg:
        assert pkg.chunks([1])[0][1].section_title == "Streams"


def test_contexts_own_package_is_accepted():
    with open_package(PEER_DB, deep=True) as pkg:
        assert pkg.chunk_count() > 0


@pytest.mark.parametrize("declaration", [
    OURS.replace("tokenize=", "detail=none, tokenize="),
    OURS.replace("tokenize=", "detail=column, tokenize="),
    OURS.replace("tokenize=", "columnsize=0, tokenize="),
    OURS.replace("tokenize=", "prefix='2 3', tokenize="),
    OURS.replace("porter unicode61", "trigram"),
    OURS.replace("porter unicode61", "porter unicode61 remove_diacritics 0"),
    OURS.replace("content='chunks', content_rowid='id', ", ""),
    OURS.replace("content='chunks'", "content=''"),
    OURS.replace("doc_title, section_title, content,", "doc_title, content,"),
    OURS.replace("doc_title, section_title, content,", "doc_title, section_title, content, url,"),
])
def test_other_fts5_shapes_are_refused(tmp_path, declaration):
    path = _with_fts(_package(tmp_path), declaration)
    with pytest.raises(InvalidPackage, match="not declared as packages declare it"):
        open_package(path)


def test_content_pointing_at_an_endless_view_is_refused_quickly(tmp_path):
    """The reported hang: FTS5 reads its content table through a view over an endless CTE."""
    path = _with_fts(_package(tmp_path), OURS.replace("content='chunks'", "content='endless'"), ENDLESS_VIEW)
    start = time.monotonic()
    with pytest.raises(InvalidPackage):
        Store().install(path)
    assert time.monotonic() - start < 5
    assert Store().installed() == []


def test_a_forged_declaration_and_a_view_in_place_of_the_chunks_are_refused(tmp_path):
    forged = _forge_fts(_package(tmp_path), OURS.replace("content='chunks'", "content='endless'"), ENDLESS_VIEW)
    with pytest.raises(InvalidPackage):
        open_package(forged)
    view = _package(tmp_path, "view")
    with sqlite3.connect(view) as db:
        db.execute("ALTER TABLE chunks RENAME TO real_chunks")
        db.execute("CREATE VIEW chunks AS SELECT * FROM real_chunks")
    with pytest.raises(InvalidPackage, match="no 'chunks' table"):
        open_package(view)


@pytest.mark.parametrize("setup, message", [
    ("CREATE VIEW notes AS SELECT 1", "may not contain a view"),
    ("CREATE VIRTUAL TABLE other USING fts5(x)", "may not contain the virtual table 'other'"),
    ("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('rank', 'bm25(10.0, 5.0)')", "configuration"),
])
def test_views_other_virtual_tables_and_fts_ranking_config_are_refused(tmp_path, setup, message):
    path = _package(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute(setup)
    with pytest.raises(InvalidPackage, match=message):
        open_package(path)


def test_an_altered_shadow_table_is_refused(tmp_path):
    path = _forge_fts(_package(tmp_path), OURS)
    db = sqlite3.connect(path)
    db.execute("PRAGMA writable_schema=ON")
    db.execute("UPDATE sqlite_master SET sql = replace(sql, 'sz BLOB', 'sz BLOB, extra') "
               "WHERE name = 'chunks_fts_docsize'")
    db.commit()
    db.close()
    with pytest.raises(InvalidPackage, match="chunks_fts_docsize"):
        open_package(path)


@pytest.mark.parametrize("sql", [
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(doc_title, section_title, content, content='chunks' -- x",
    "CREATE VIRTUAL TABLE chunks_fts USING fts5()",
    "CREATE VIRTUAL TABLE chunks_fts USING fts4(doc_title, section_title, content)",
    "CREATE VIRTUAL TABLE other USING fts5(doc_title, section_title, content)",
])
def test_the_declaration_parser_refuses_what_it_cannot_read(sql):
    found = fts_declaration(sql)
    assert found is None or found[0] != ["doc_title", "section_title", "content"] or found[1]


# --- #1: every query runs under a deadline ---------------------------------------------------

ENDLESS = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"


def test_a_query_past_its_deadline_is_aborted_with_a_clear_error(tmp_path):
    with open_package(_package(tmp_path)) as pkg:
        start = time.monotonic()
        with pytest.raises(PackageTooSlow, match="lib@1.0.0: too slow"), pkg.deadline(0.2):
            pkg.db.execute(ENDLESS).fetchall()
        assert time.monotonic() - start < 2
        assert isinstance(PackageTooSlow("x"), ContextError)
        assert pkg.chunk_count() == 2  # the connection still works afterwards


def test_a_nested_deadline_never_extends_the_outer_one(tmp_path):
    with open_package(_package(tmp_path)) as pkg:
        start = time.monotonic()
        with pytest.raises(PackageTooSlow), pkg.deadline(0.2), pkg.deadline(30):
            pkg.db.execute(ENDLESS).fetchall()
        assert time.monotonic() - start < 2


def test_searchable_deadline_skips_without_spoiling_the_package(tmp_path):
    sections = [(f"p{i}.md", f"Step {i}", f"pipeline stop number {i} of the pipeline") for i in range(3000)]
    lib = Store().install(make_package(tmp_path / "big.db", "big", "1.0.0", sections))
    s = open_searcher(lib)
    with s.lock, pytest.raises(PackageTooSlow, match="big@1.0.0"), s.deadline(0):
        s.lexical(Query.of("pipeline.stop"), 50)  # the phrase runs through FTS5 over 3,000 rows
    with s.lock:
        assert len(s.lexical(Query.of("pipeline.stop"), 50)[0]) == 50
        assert s.bm25 is not None  # the timeout did not count as a broken index


# --- #4: value sizes are measured, not just typed ---------------------------------------------

def test_a_value_over_64_mib_is_refused_at_install(tmp_path):
    path = _package(tmp_path)
    with sqlite3.connect(path) as db:  # 69,206,016 characters of text
        db.execute("UPDATE chunks SET content = hex(zeroblob(34603008)) WHERE id = 2")
    with pytest.raises(InvalidPackage, match="exceeds the 64 MiB limit"):
        Store().install(path)
    assert Store().installed() == []


def test_an_oversized_index_blob_is_refused_at_install(tmp_path):
    path = _package(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE bm25_terms SET postings = zeroblob(69206016) WHERE term IN "
                   "(SELECT term FROM bm25_terms LIMIT 1)")
    with pytest.raises(InvalidPackage, match="exceeds the 64 MiB limit"):
        open_package(path, deep=True)


def test_malformed_index_is_an_invalid_package_and_a_context_error():
    assert issubclass(MalformedIndex, InvalidPackage) and issubclass(MalformedIndex, ContextError)


# --- #10: identities are whole strings ---------------------------------------------------------

@pytest.mark.parametrize("check, value", [(check_name, "react\n"), (check_version, "19.0.0\n"),
                                          (check_registry, "npm\n"), (check_name, "react\nevil")])
def test_a_trailing_newline_is_refused(check, value):
    with pytest.raises(InvalidIdentity):
        check(value)


def test_a_package_named_with_a_newline_is_refused(tmp_path):
    path = _package(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = 'react' || char(10) WHERE key = 'name'")
    with pytest.raises(InvalidPackage, match="invalid package name"):
        Store().install(path)


# --- #12: vectors are finite ----------------------------------------------------------------------

def _float16_vectors(path: Path, poison: float | None) -> None:
    """Rewrite the package's vectors as float16, one of them holding `poison`."""
    with sqlite3.connect(path) as db:
        dim = int(db.execute("SELECT value FROM meta WHERE key = 'embedding_dim'").fetchone()[0])
        db.execute("UPDATE meta SET value = 'float16' WHERE key = 'embedding_dtype'")
        rng = np.random.default_rng(0)
        for (cid,) in db.execute("SELECT chunk_id FROM vectors").fetchall():
            v = rng.standard_normal(dim).astype(np.float16)
            if poison is not None and cid == 1:
                v[3] = poison
            db.execute("UPDATE vectors SET vector = ? WHERE chunk_id = ?", (v.tobytes(), cid))


@pytest.mark.parametrize("poison", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_vectors_are_refused_and_never_scored(docs_folder, tmp_path, poison):
    lib = add_source(AddRequest(source=str(docs_folder), name="mylib", version="1.0.0")).installed
    bad = tmp_path / "bad.db"
    shutil.copy(lib.path, bad)
    _float16_vectors(bad, poison)
    with pytest.raises(InvalidPackage, match="not finite"):
        Store().install(bad)
    # Installed before it was tampered with: searched lexically, and the answer is strict JSON.
    shutil.copy(bad, lib.path)
    answer = search("cancel a running pipeline", [lib])
    assert answer["searched"] == {"mylib@1.0.0": "lexical"}
    assert any("vectors unusable" in n for n in answer["notes"])
    json.dumps(answer, allow_nan=False)


def test_finite_float16_vectors_are_accepted(docs_folder, tmp_path):
    lib = add_source(AddRequest(source=str(docs_folder), name="mylib", version="1.0.0")).installed
    ok = tmp_path / "ok.db"
    shutil.copy(lib.path, ok)
    _float16_vectors(ok, None)
    with open_package(ok, deep=True) as pkg:
        ids, matrix = pkg.vectors()
        assert len(ids) == pkg.chunk_count() and np.isfinite(matrix).all()


def test_an_empty_vector_leaves_the_package_lexical(docs_folder):
    """The vectors are read as their blobs end to end: an empty one among them would shift
    every later row onto another chunk, so it makes them unusable instead."""
    lib = add_source(AddRequest(source=str(docs_folder), name="mylib", version="1.0.0")).installed
    with sqlite3.connect(lib.path) as db:
        db.execute("UPDATE vectors SET vector = X'' WHERE chunk_id = (SELECT min(chunk_id) FROM vectors)")
    answer = search("cancel a running pipeline", [lib])
    assert answer["searched"] == {"mylib@1.0.0": "lexical"}
    assert any("vectors unusable" in n for n in answer["notes"])


def test_vectors_stored_out_of_order_stay_with_their_chunks(docs_folder, tmp_path):
    """A table whose rows are not kept in chunk order (chunk_id not the rowid) reads as the
    same ids and rows, each vector beside its own id."""
    lib = add_source(AddRequest(source=str(docs_folder), name="mylib", version="1.0.0")).installed
    with open_package(lib.path) as pkg:
        ids, matrix = pkg.vectors()
    shuffled = tmp_path / "shuffled.db"
    shutil.copy(lib.path, shuffled)
    with sqlite3.connect(shuffled) as db:
        db.executescript("ALTER TABLE vectors RENAME TO kept;"
                         "CREATE TABLE vectors (chunk_id INTEGER NOT NULL, vector BLOB NOT NULL);"
                         "INSERT INTO vectors SELECT chunk_id, vector FROM kept ORDER BY chunk_id DESC;"
                         "DROP TABLE kept;")
    with open_package(shuffled) as pkg:
        got_ids, got = pkg.vectors()
    assert len(ids) > 1 and np.array_equal(got_ids, ids) and np.array_equal(got, matrix)


def test_a_vector_row_without_an_id_leaves_the_package_lexical(docs_folder):
    """A hostile table without its NOT NULL constraints: a row with no id has no section, a
    row with no vector none to give, and reading them must not give a vector to another
    section (as counting ids and blobs apart would), nor fail with a traceback."""
    lib = add_source(AddRequest(source=str(docs_folder), name="mylib", version="1.0.0")).installed
    with sqlite3.connect(lib.path) as db:
        db.executescript("ALTER TABLE vectors RENAME TO kept;"
                         "CREATE TABLE vectors (chunk_id INTEGER, vector BLOB);"
                         "INSERT INTO vectors SELECT chunk_id, vector FROM kept;"
                         "UPDATE vectors SET chunk_id = NULL WHERE rowid = 1;"
                         "UPDATE vectors SET vector = NULL WHERE rowid = 2;"  # (the counts then agree)
                         "DROP TABLE kept;")
    answer = search("cancel a running pipeline", [lib])
    assert answer["searched"] == {"mylib@1.0.0": "lexical"}
    assert any("vectors unusable" in n for n in answer["notes"])
