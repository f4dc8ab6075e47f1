"""Phrase postings (`package/phrases.py`): a package stores the rows and per-column counts of
its split words as phrases, exactly what FTS5 finds for them; a package without them, or with
a bad one, is answered exactly as before (through FTS5)."""

from __future__ import annotations

import shutil
import sqlite3
import zlib
from pathlib import Path

import numpy as np
import pytest
from helpers import EVAL_CORPUS, make_package
from test_bm25 import _tampered

from context_cli.adding import AddRequest, add_source
from context_cli.errors import InvalidPackage
from context_cli.package import bm25 as bm25_format
from context_cli.package import phrases
from context_cli.package.reader import open_package
from context_cli.search import bm25
from context_cli.search.engine import search
from context_cli.search.lexical import WEIGHTS, lexical
from context_cli.search.query import Query
from context_cli.search.query import phrases as query_phrases
from context_cli.search.searcher import open_searcher
from context_cli.store.store import Store

EVAL_QUERIES = [
    "What is the max_tokens parameter?", "Claude's system prompt role", "content_block_delta event",
    "rate limits for claude-3-haiku-20240307", "stop_reason tool_use", "embeddings provider domain-specific",
    "What's the difference between Claude 3.5 Sonnet and Opus?", "\\n\\nHuman: turns", "fine-tuning",
]


@pytest.fixture(scope="module")
def anthropic(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    mp = pytest.MonkeyPatch()
    mp.setenv("CONTEXT_HOME", str(home))
    try:
        yield add_source(AddRequest(source=str(EVAL_CORPUS), name="anthropic", version="1.0.0", embed=False)).installed
    finally:
        mp.undo()


def _as_queried(db: sqlite3.Connection) -> dict[str, str]:
    """Every split word of the package's text as a question searches it (`Claude's` ->
    "claude s"), by the FTS5 tokens it stems to ("claud s", the stored name)."""
    forms: dict[str, None] = {}
    for fields in db.execute("SELECT doc_title, section_title, content FROM chunks"):
        for text in fields:
            for word in (text or "").split():
                for parts in query_phrases(word):
                    forms[" ".join(parts)] = None
    return {" ".join(t): raw for raw, t in bm25_format.stemmer().tokens(list(forms)).items()}


def _stored(db: sqlite3.Connection) -> list[str]:
    return [r[0] for r in db.execute("SELECT phrase FROM bm25_phrases")]


def _indexes(db: sqlite3.Connection) -> tuple[bm25.Bm25Index, bm25.Bm25Index]:
    """The index reading stored phrases, and one asking FTS5 for every phrase."""
    return bm25.Bm25Index.load(db, WEIGHTS, phrases=True), bm25.Bm25Index.load(db, WEIGHTS)


def _same_phrase(stored: bm25.Bm25Index, fts: bm25.Bm25Index, text: str, tokens: tuple[str, ...]) -> None:
    a, b = stored.phrase(text, tokens), fts.phrase(text, tokens)
    assert b is not None
    assert a is not None and a.ids.tolist() == b.ids.tolist()
    assert a.contrib.tolist() == b.contrib.tolist()  # the same bits as FTS5's bm25()


def test_every_stored_phrase_is_what_fts5_finds(anthropic):
    with open_package(anthropic.path, deep=True) as pkg:
        assert pkg.has_bm25_phrases and pkg.meta["bm25_phrases"] == phrases.FORMAT
        names, forms = _stored(pkg.db), _as_queried(pkg.db)
        assert len(names) > 100 and {"claud s", "max token", "stop reason"} <= set(names)
        stored, fts = _indexes(pkg.db)
        for name in names:
            tokens = tuple(name.split(" "))
            assert stored._stored_phrase(tokens) is not None
            _same_phrase(stored, fts, forms[name], tokens)


def test_search_ranks_the_same_with_and_without_stored_phrases(anthropic):
    with open_package(anthropic.path) as pkg:
        stored, fts = _indexes(pkg.db)
        for q in EVAL_QUERIES:
            assert [p for p in query_phrases(q)], q
            with_, without = lexical(pkg.db, Query.of(q), 50, stored), lexical(pkg.db, Query.of(q), 50, fts)
            assert with_[0].tolist() == without[0].tolist() and with_[1].tolist() == without[1].tolist()
    s = open_searcher(anthropic)
    with s.lock:
        assert s.bm25 is not None and s.bm25.has_phrases
    assert search("What is the max_tokens parameter?", [anthropic])["results"]


def _package(path: Path, sections: list[tuple[str, str, str]], monkeypatch) -> Path:
    monkeypatch.setattr(phrases, "MIN_DF", 1)  # a small package's words are all rare
    return make_package(path, sections=sections)


def test_a_phrase_counts_wherever_its_tokens_are_adjacent_within_a_field(tmp_path, monkeypatch):
    path = _package(tmp_path / "p.db", [
        ("a.md", "Versions", "Claude 3.5 is out; 3 5 apart and 3-5 again."),
        ("b.md", "Release 3", "5 starts this field, so no phrase crosses into it."),
        ("c.md", "go-go", "go go go"),
        ("d.md", "Limits", "Set max_tokens, or MAX TOKENS as some write it."),
    ], monkeypatch)
    with open_package(path, deep=True) as pkg:
        names = set(_stored(pkg.db))
        assert {"3 5", "go go", "max token"} <= names
        stored, fts = _indexes(pkg.db)
        for text in ("3 5", "go go", "max tokens"):
            _same_phrase(stored, fts, text, bm25_format.stemmer().tokens([text])[text])
    ids, tfs, _ = bm25_format.decode_many(
        [sqlite3.connect(path).execute("SELECT df, postings FROM bm25_phrases WHERE phrase = '3 5'").fetchone()], 4)
    assert ids.tolist() == [1] and tfs[:, 0].tolist() == [0, 0, 3]  # not chunk 2: title and text are two fields


def test_a_phrase_that_meets_text_split_differently_is_left_to_fts5(tmp_path, monkeypatch):
    # Python splits "e\u0301cole" (a combining accent) in two words, FTS5 keeps one token:
    # Python's stream would count "cole normale" in the first chunk, where FTS5 has none.
    path = _package(tmp_path / "p.db", [
        ("a.md", "Schools", "e\u0301cole normale, and plain-text too"),
        ("b.md", "Names", "cole-normale is a name; plain-text is plain text"),
    ], monkeypatch)
    with open_package(path, deep=True) as pkg:
        names = set(_stored(pkg.db))
        assert "cole normal" not in names and "plain text" not in names  # it meets the first chunk too
        stored, fts = _indexes(pkg.db)
        text = "cole normale"
        tokens = bm25_format.stemmer().tokens([text])[text]
        assert stored._stored_phrase(tokens) is None
        a, b = stored.phrase(text, tokens), fts.phrase(text, tokens)
        assert a is not None and b is not None and a.ids.tolist() == b.ids.tolist() == [2]


def test_a_package_without_phrase_postings_asks_fts5(anthropic, tmp_path):
    old = _tampered(anthropic, tmp_path, "DROP TABLE bm25_phrases")
    with open_package(old, deep=True) as pkg:
        assert pkg.has_bm25 and not pkg.has_bm25_phrases
    with sqlite3.connect(old) as c:
        c.execute("CREATE TABLE bm25_phrases (phrase TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID")
    with open_package(old, deep=True) as pkg:
        assert pkg.has_bm25 and not pkg.has_bm25_phrases  # another shape: not ours


TAMPERING = [
    ("UPDATE bm25_phrases SET postings = substr(postings, 1, length(postings) - 3) WHERE phrase = 'claud s'",),
    ("UPDATE bm25_phrases SET df = df + 1 WHERE phrase = 'claud s'",),
    ("UPDATE bm25_phrases SET postings = 'text' WHERE phrase = 'claud s'",),
    ("UPDATE bm25_phrases SET postings = ? WHERE phrase = 'claud s'", zlib.compress(b"\x00" * (1 << 20))),
    ("UPDATE bm25_phrases SET df = 2, postings = ? WHERE phrase = 'claud s'",
     zlib.compress(np.asarray([1, 60000], dtype="<u2").tobytes() + b"\x01" * 6)),  # past the last chunk
]


@pytest.mark.parametrize("tamper", TAMPERING)
def test_a_bad_phrase_row_is_refused_at_install_and_falls_back_at_search(anthropic, tmp_path, tamper):
    q = "Claude's system prompt role"
    installed = Store(tmp_path / "store").install(anthropic.path)
    expected = search(q, [installed])
    with sqlite3.connect(installed.path) as c:
        assert c.execute("SELECT df FROM bm25_phrases WHERE phrase = 'claud s'").fetchone()[0] > 2
    bad = _tampered(installed, tmp_path, *tamper)
    with pytest.raises(InvalidPackage, match=r"BM25 index is malformed \(bm25_phrases"):
        open_package(bad, deep=True)
    # Tampered after it was installed: the search meets the row, drops our index, asks FTS5.
    shutil.copy(bad, installed.path)
    answer = search(q, [installed])
    assert [r["title"] for r in answer["results"]] == [r["title"] for r in expected["results"]]
    s = open_searcher(installed)
    with s.lock:
        assert s.bm25 is None


def test_phrases_counted_page_by_page_are_the_whole_count(monkeypatch):
    """A build counts each page in its workers and drops duplicate chunks (package id 0): the
    phrase postings merged from those parts are the ones counted over the kept chunks at once."""
    monkeypatch.setattr(phrases, "MIN_DF", 1)
    pages = [[("Guide", "Install", "pip install mylib, 3.5x faster: max_tokens"),
              ("Guide", "Use", "3 5x is two words; max tokens too")],
             [("Reference", "Install", "pip install mylib, 3.5x faster: max_tokens"),
              ("Reference", "e\u0301cole", "Stops a pipeline halfway (3.5x)")]]
    keep = [[1, 2], [0, 3]]  # the second page's first chunk is a duplicate, left out
    whole = [t for page, ids in zip(pages, keep, strict=True) for t, i in zip(page, ids, strict=True) if i]
    parts = [(bm25_format.count_terms(page), np.asarray(ids)) for page, ids in zip(pages, keep, strict=True)]
    df = {t: len(ids) for t, (ids, _) in bm25_format.merge_counts(parts, 3).items()}
    want = phrases.phrase_postings([(bm25_format.count_terms(whole), np.arange(1, 4))], 3, df, bm25_format.TF_MAX)
    got = phrases.phrase_postings(parts, 3, df, bm25_format.TF_MAX)
    assert {"3 5x", "max token"} <= got.keys() and got.keys() == want.keys()
    for name, (ids, tfs) in want.items():
        assert ids.tolist() == got[name][0].tolist() and tfs.tolist() == got[name][1].tolist()
    assert got["3 5x"][0].tolist() == [1, 2, 3] and got["3 5x"][1].tolist() == [[0, 0, 1], [0, 0, 1], [0, 0, 1]]
