"""Our compact BM25 index: built by the writer, ranks exactly as FTS5's bm25(), and any
package without a sound index (Context's, older ours, tampered) is searched through FTS5."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from helpers import EVAL_CORPUS, PEER_DB, make_package
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fts import HOSTILE

from context_cli.adding import AddRequest, add_source
from context_cli.build import BuildOptions, build
from context_cli.errors import InvalidPackage
from context_cli.package import bm25 as bm25_format
from context_cli.package.reader import open_package
from context_cli.search import bm25
from context_cli.search.engine import SearchOptions, search
from context_cli.search.lexical import WEIGHTS, Postings, lexical, term_statistics
from context_cli.search.query import Query
from context_cli.search.searcher import open_searcher
from context_cli.sources.resolve import fetch_folder
from context_cli.store.store import Store

WARM = SearchOptions(warm=True)
QUERIES = [
    "how can I stop my pipeline halfway through?", "ERR_SINK_CLOSED", "retries with exponential backoff",
    "install mylib with pip", "Pipeline.cancel() from another thread", "timeouts", "sinks flushed",
    "what's a sink?", "kubernetes helm chart", "run() timeout=30", "naïve café", "the",
]
EVAL_QUERIES = [
    "How do I stream a response?", "What is the max_tokens parameter?", "Claude's system prompt role",
    "tool use with JSON schema", "content_block_delta event", "rate limits for claude-3-haiku-20240307",
    "How can you create multiple test cases for an evaluation?", "embeddings provider domain-specific",
    "prompt caching", "stop_reason tool_use", "What's the difference between Claude 3.5 Sonnet and Opus?",
]


def _add(folder: Path, name: str = "mylib"):
    return add_source(AddRequest(source=str(folder), name=name, version="1.0.0", embed=False)).installed


@pytest.fixture
def lib(docs_folder):
    return _add(docs_folder)


def query_terms(postings: Postings | bm25.Bm25Index, q: Query):
    """The query's term statistics in the package (no hits)."""
    return term_statistics(postings, q, (np.zeros(0, dtype=np.int64), np.zeros(0)))


def _pairs(found: tuple[np.ndarray, np.ndarray]) -> list[tuple[int, float]]:
    return list(zip(found[0].tolist(), found[1].tolist(), strict=True))


def _same_ranking(db: sqlite3.Connection, index: bm25.Bm25Index, q: str, limit: int = 50) -> None:
    fts = _pairs(lexical(db, Query.of(q), limit))
    ours = _pairs(lexical(db, Query.of(q), limit, index))
    assert len(ours) == len(fts)
    if not fts:
        return
    by_id = dict(ours)
    # Same scores for the same chunks; order may differ only among equal scores.
    for cid, score in fts:
        if cid in by_id:
            assert by_id[cid] == pytest.approx(score, rel=1e-9, abs=1e-12)
    assert [s for _, s in ours] == pytest.approx([s for _, s in fts], rel=1e-9, abs=1e-12)
    top = {c for c, _ in fts[:5]}
    assert len(top & {c for c, _ in ours[:5]}) >= len(top) - sum(
        1 for _, s in fts if abs(s - fts[min(4, len(fts) - 1)][1]) < 1e-12)


def test_writer_adds_the_index_and_it_round_trips(lib):
    with open_package(lib.path, deep=True) as pkg:
        assert pkg.has_bm25 and pkg.meta["bm25_index"] == bm25_format.FORMAT
        index = bm25.Bm25Index.load(pkg.db, WEIGHTS)
        n = pkg.chunk_count()
        assert index.n == n
        # Every term and per-column frequency is FTS5's own (fts5vocab is the ground truth).
        truth: dict[tuple[str, int], list[int]] = {}
        mem = sqlite3.connect(":memory:")
        mem.execute(f"ATTACH DATABASE 'file:{pkg.path}?mode=ro' AS p")
        mem.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(p, chunks_fts, instance)")
        for term, doc, col in mem.execute("SELECT term, doc, col FROM temp.v"):
            truth.setdefault((term, doc), [0, 0, 0])[bm25_format.FIELDS.index(col)] += 1
        terms = sorted({t for t, _ in truth})
        got = index.postings(terms)
        rows = {t: (df, blob) for t, df, blob in pkg.db.execute("SELECT term, df, postings FROM bm25_terms")}
        for term in terms:
            p = got[term]
            ids, tfs, _ = bm25_format.decode_many([rows[term]], n)
            assert p is not None and p.ids.tolist() == ids.tolist()
            for cid, tf in zip(ids.tolist(), tfs.T.tolist(), strict=True):
                assert truth[(term, cid)] == tf
            assert p.df == sum(1 for (t, _) in truth if t == term)
            assert sorted(p.titled) == [cid for cid, tf in zip(ids.tolist(), tfs[1].tolist(), strict=True) if tf]
        assert index.postings(["zzznotaterm"]) == {"zzznotaterm": None}


def test_ranks_exactly_as_fts5_on_docs_folder(lib):
    with open_package(lib.path) as pkg:
        index = bm25.Bm25Index.load(pkg.db, WEIGHTS)
        for q in QUERIES + HOSTILE:
            _same_ranking(pkg.db, index, q)


def test_ranks_exactly_as_fts5_on_a_real_corpus():
    inst = _add(EVAL_CORPUS, "anthropic")
    with open_package(inst.path) as pkg:
        index = bm25.Bm25Index.load(pkg.db, WEIGHTS)
        for q in EVAL_QUERIES:
            _same_ranking(pkg.db, index, q)
            ids = lexical(pkg.db, Query.of(q), 30)[0]
            a, b = query_terms(Postings(pkg.db), Query.of(q)), query_terms(index, Query.of(q))
            assert (a.idf, a.matched_idf(ids).tolist(), a.missing) == (b.idf, b.matched_idf(ids).tolist(), b.missing)
            assert a.coverage(ids).tolist() == b.coverage(ids).tolist()


def test_engine_uses_the_index_and_answers_as_before(lib):
    s = open_searcher(lib)
    with s.lock:
        assert s.bm25 is not None
    answer = search("how can I stop my pipeline halfway through?", [lib])
    assert answer["results"][0]["title"].startswith("Cancelling a pipeline > Stopping halfway")
    assert search("ERR_SINK_CLOSED", [lib])["results"][0]["verdict"] == "STRONG"


def test_context_package_is_searched_through_fts5(tmp_path):
    inst = Store(tmp_path / "store").install(PEER_DB)
    with open_package(inst.path, deep=True) as pkg:
        assert not pkg.has_bm25
    s = open_searcher(inst)
    with s.lock:
        assert s.bm25 is None and isinstance(s.postings, Postings)
    answer = search("How do I stream a response?", [inst])
    assert answer["results"]


def test_older_package_without_index_is_searched_through_fts5(lib, tmp_path):
    old = tmp_path / "old.db"
    shutil.copy(lib.path, old)
    with sqlite3.connect(old) as c:
        c.execute("DROP TABLE bm25_terms")
        c.execute("DROP TABLE bm25_lengths")
        c.execute("DELETE FROM meta WHERE key = 'bm25_index'")
    with open_package(old, deep=True) as pkg:
        assert not pkg.has_bm25


def _tampered(lib, tmp_path: Path, sql: str, *params) -> Path:
    bad = tmp_path / "bad.db"
    shutil.copy(lib.path, bad)
    with sqlite3.connect(bad) as c:
        c.execute(sql, params)
    return bad


TAMPERING = [
    ("UPDATE bm25_terms SET postings = substr(postings, 1, length(postings) - 3) WHERE term = 'pipelin'",),
    ("UPDATE bm25_terms SET df = 1000000000000 WHERE term = 'pipelin'",),
    ("UPDATE bm25_terms SET df = df + 1 WHERE term = 'pipelin'",),
    ("UPDATE bm25_terms SET postings = ? WHERE term = 'pipelin'", b"\x00" * 64),
    ("UPDATE bm25_terms SET postings = ? WHERE term = 'pipelin'", __import__("zlib").compress(b"\x00" * (1 << 20))),
    ("UPDATE bm25_terms SET postings = 'text' WHERE term = 'pipelin'",),
    ("UPDATE bm25_lengths SET lengths = x'0102' WHERE field = 'content'",),
    ("DELETE FROM bm25_lengths WHERE field = 'doc_title'",),
]


@pytest.mark.parametrize("tamper", TAMPERING)
def test_malformed_index_is_refused_at_install_and_falls_back_at_search(lib, tmp_path, tamper):
    bad = _tampered(lib, tmp_path, *tamper)
    with pytest.raises(InvalidPackage, match="BM25 index"):
        open_package(bad, deep=True)
    # Installed before it was tampered with: searching it falls back to FTS5, same answer.
    expected = search("how can I stop my pipeline halfway through?", [lib])
    shutil.copy(bad, lib.path)
    answer = search("how can I stop my pipeline halfway through?", [lib])
    assert [r["title"] for r in answer["results"]] == [r["title"] for r in expected["results"]]
    s = open_searcher(lib)
    with s.lock:
        assert _pairs(lexical(s.pkg.db, Query.of("pipeline"), 50)) == _pairs(s.lexical(Query.of("pipeline"), 50))
        assert s.bm25 is None  # the bad row was met: FTS5 from then on


def _served(inst) -> bm25.Bm25Index:
    """The index of a warm package (as one being served): its postings are kept in memory."""
    search("how do I start?", [inst], WARM)
    s = open_searcher(inst)
    assert s.is_warm and s.bm25 is not None and s.bm25._preloaded is not None
    return s.bm25


def test_a_served_package_keeps_its_postings_and_ranks_bit_for_bit_as_before():
    """Kept postings are sliced, not read: no question's words query the table, and every
    ranking, frequency, presence sum and title match is the one read rows give, to the bit."""
    inst = _add(EVAL_CORPUS, "anthropic")
    kept = _served(inst)
    queries = [Query.of(q) for q in EVAL_QUERIES + QUERIES + HOSTILE]
    stored = kept._preloaded_phrases
    assert stored is not None and any(" ".join(q.unit_tokens[" ".join(p)]) in stored.at for q in queries for p in q.phrases)
    reads: list[str] = []
    kept.db.set_trace_callback(lambda sql: reads.append(sql) if "bm25_" in sql else None)
    try:
        with open_package(inst.path) as pkg:
            fresh = bm25.Bm25Index.load(pkg.db, WEIGHTS, pkg.has_bm25_phrases)
            _same_as_read(kept, fresh, queries)
    finally:
        kept.db.set_trace_callback(None)
    assert reads == []


def test_a_served_package_keeps_its_phrases_only_within_the_cap(monkeypatch):
    """Its terms fill the cap: its phrases are not kept, and are read (and rank) as before."""
    inst = _add(EVAL_CORPUS, "anthropic")
    with open_package(inst.path) as pkg:
        (postings,) = pkg.db.execute("SELECT sum(df) FROM bm25_terms").fetchone()
    monkeypatch.setattr(bm25, "MAX_KEPT_POSTINGS", postings)
    kept = _served(inst)
    assert kept._preloaded_phrases is None
    reads: list[str] = []
    kept.db.set_trace_callback(lambda sql: reads.append(sql) if "bm25_phrases" in sql else None)
    try:
        with open_package(inst.path) as pkg:
            fresh = bm25.Bm25Index.load(pkg.db, WEIGHTS, pkg.has_bm25_phrases)
            _same_as_read(kept, fresh, [Query.of(q) for q in EVAL_QUERIES])
    finally:
        kept.db.set_trace_callback(None)
    assert reads


def test_a_damaged_phrase_row_met_when_postings_are_kept_keeps_the_terms_alone(tmp_path):
    """A stored phrase's row damaged after install: the terms are kept, the phrases not; the
    question with that phrase falls back to FTS5 and gets the answer it got before."""
    inst = _add(EVAL_CORPUS, "anthropic")
    question = "What is the max_tokens parameter?"
    expected = search(question, [inst])
    with open_package(inst.path) as pkg:
        assert pkg.db.execute("SELECT 1 FROM bm25_phrases WHERE phrase = 'max token'").fetchone()
    shutil.copy(_tampered(inst, tmp_path, "UPDATE bm25_phrases SET postings = x'00' WHERE phrase = 'max token'"),
                inst.path)
    from context_cli.search.searcher import clear_cache

    clear_cache()
    kept = _served(inst)
    assert kept._preloaded_phrases is None
    answer = search(question, [inst])
    assert [r["title"] for r in answer["results"]] == [r["title"] for r in expected["results"]]
    with open_searcher(inst).lock:
        assert open_searcher(inst).bm25 is None  # (the bad row was met: FTS5 from then on)


def test_a_served_package_keeps_its_pages_tokens():
    """savedPercent's page totals are read in one scan once a package is served: the same
    answers as totals read page by page, and no more reads of them."""
    from context_cli.search.searcher import clear_cache

    inst = _add(EVAL_CORPUS, "anthropic")
    fresh = {}
    for q in EVAL_QUERIES:  # (each a first search: totals read page by page)
        clear_cache()
        fresh[q] = search(q, [inst])
    clear_cache()
    _served(inst)
    reads: list[str] = []
    s = open_searcher(inst)
    s.pkg.db.set_trace_callback(lambda sql: reads.append(sql) if "total(tokens)" in sql else None)
    try:
        assert {q: search(q, [inst]) for q in EVAL_QUERIES} == fresh
    finally:
        s.pkg.db.set_trace_callback(None)
    assert reads == []


def _same_as_read(kept: bm25.Bm25Index, fresh: bm25.Bm25Index, queries: list[Query]) -> None:
    everyone = np.arange(kept.n + 2)
    for q in queries:
        a, b = kept.search(q, 50), fresh.search(q, 50)
        assert (a[0].tolist(), a[1].tolist()) == (b[0].tolist(), b[1].tolist())
        assert kept.frequencies(q) == fresh.frequencies(q)
        weights = [1.0 + k for k in range(len(q.terms))]
        assert kept.matched_idf(q, weights)(everyone).tolist() == fresh.matched_idf(q, weights)(everyone).tolist()
        tokens = [t for w in q.terms for t in bm25_format.stemmer().tokens([w])[w]][:2]
        assert kept.in_titles(tokens, everyone.tolist()) == fresh.in_titles(tokens, everyone.tolist())


def test_postings_of_a_package_past_65535_chunks_are_kept_as_read():
    """Ids past uint16 are kept as uint32 (an index of 70,000 chunks, its rows made here)."""
    n = 70_000
    lists = {"alpha": [3, 9, 400, 65_536, 69_999], "beta": [1, 65_535, 70_000], "gamma": [2, 5, 65_537]}
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE bm25_terms (term TEXT PRIMARY KEY, df INTEGER, postings BLOB) WITHOUT ROWID")
    db.executemany("INSERT INTO bm25_terms VALUES (?, ?, ?)", [(t, *_row(ids, wide=True)) for t, ids in lists.items()])
    lengths = np.arange(n, dtype=np.float64) % 97 + 3.0
    kept, fresh = (bm25.Bm25Index(db, n, lengths, WEIGHTS) for _ in range(2))
    kept.preload()
    assert kept._preloaded is not None and kept._preloaded.ids.dtype == np.uint32
    _same_as_read(kept, fresh, [Query.of("alpha beta"), Query.of("gamma beta delta"), Query.of("beta")])


@pytest.mark.parametrize("cap", ["MAX_KEPT_POSTINGS", "MAX_KEPT_TERMS"])
def test_a_package_with_more_postings_than_kept_reads_its_rows(lib, monkeypatch, cap):
    monkeypatch.setattr(bm25, cap, 10)
    first = search("how can I stop my pipeline halfway through?", [lib])
    search("retries with exponential backoff", [lib], WARM)
    s = open_searcher(lib)
    assert s.is_warm and s.bm25 is not None and s.bm25._preloaded is None
    reads: list[str] = []
    s.pkg.db.set_trace_callback(lambda sql: reads.append(sql) if "FROM bm25_terms" in sql else None)
    try:
        assert search("sinks flushed", [lib])["results"]
    finally:
        s.pkg.db.set_trace_callback(None)
    assert reads and search("how can I stop my pipeline halfway through?", [lib]) == first


@pytest.mark.parametrize("tamper", [t for t in TAMPERING if "bm25_terms" in t[0]])
def test_a_damaged_row_met_when_postings_are_kept_keeps_none(lib, tmp_path, tamper):
    """Tampered with after install: the search that would keep the postings meets the row,
    keeps none and answers; the search that needs the row falls back to FTS5, as before."""
    expected = search("how can I stop my pipeline halfway through?", [lib])
    shutil.copy(_tampered(lib, tmp_path, *tamper), lib.path)
    assert search("timeouts", [lib], WARM)["results"]  # (made warm: the rows are met here)
    s = open_searcher(lib)
    assert s.is_warm and s.bm25 is not None and s.bm25._preloaded is None
    answer = search("how can I stop my pipeline halfway through?", [lib])
    assert [r["title"] for r in answer["results"]] == [r["title"] for r in expected["results"]]
    with s.lock:
        assert s.bm25 is None


def test_index_as_a_view_is_refused(lib, tmp_path):
    bad = tmp_path / "view.db"
    shutil.copy(lib.path, bad)
    with sqlite3.connect(bad) as c:
        c.execute("DROP TABLE bm25_terms")
        c.execute("CREATE VIEW bm25_terms AS SELECT 'x' AS term, 1 AS df, x'00' AS postings")
    with pytest.raises(InvalidPackage, match="may not contain a view"):
        open_package(bad)


def test_index_tables_of_another_shape_are_ignored(lib, tmp_path):
    odd = tmp_path / "odd.db"
    shutil.copy(lib.path, odd)
    with sqlite3.connect(odd) as c:
        c.execute("ALTER TABLE bm25_terms ADD COLUMN extra")
    with open_package(odd, deep=True) as pkg:
        assert not pkg.has_bm25


@pytest.mark.parametrize("q", HOSTILE)
def test_hostile_queries_on_the_index_path(lib, q):
    s = open_searcher(lib)
    with s.lock:
        assert s.bm25 is not None
        _same_ranking(s.pkg.db, s.bm25, q)
        s.query_terms(Query.of(q)).coverage(np.array([1, 2, 3]))
    if q.strip():
        assert isinstance(search(q, [lib])["results"], list)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200))
def test_any_string_ranks_as_fts5(lib, q):
    s = open_searcher(lib)
    with s.lock:
        _same_ranking(s.pkg.db, s.bm25, q)
        s.query_terms(Query.of(q)).coverage(np.array([1, 2]))


def test_incremental_rebuild_indexes_reused_chunks(docs_folder, tmp_path):
    first = tmp_path / "a.db"
    build(fetch_folder(docs_folder), first, BuildOptions(embed=False))
    again = build(fetch_folder(docs_folder), tmp_path / "b.db", BuildOptions(embed=False, previous=first))
    assert again.reused_pages > 0
    dump = []
    for db in (first, tmp_path / "b.db"):
        with sqlite3.connect(db) as c:
            dump.append((c.execute("SELECT * FROM bm25_terms ORDER BY term").fetchall(),
                         c.execute("SELECT * FROM bm25_lengths ORDER BY field").fetchall()))
    assert dump[0] == dump[1] and dump[0][0]


def test_stemmer_is_fts5s_own():
    words = ["running", "runs", "Cancelling", "naïve", "CAFÉ", "ponies", "agreed", "x", "HTTPRequest", "über"]
    toks = bm25_format.stemmer().tokens(words)
    for w, want in _fts5_terms(words):
        assert toks[w] == want


def test_lexical_package_built_by_helper_has_the_index(tmp_path):
    path = make_package(tmp_path / "p.db", sections=[("a.md", "Alpha", "alpha beta gamma"), ("b.md", "Beta", "beta delta")])
    with open_package(path, deep=True) as pkg:
        assert pkg.has_bm25
        index = bm25.Bm25Index.load(pkg.db, WEIGHTS)
        _same_ranking(pkg.db, index, "beta alpha")


def test_terms_counted_page_by_page_merge_to_the_whole_count(monkeypatch):
    """What a build's workers count per page, less the dropped duplicates, is what counting the
    package's chunks at once gives; also when the process forgets its words in between."""
    import numpy as np

    pages = [[("Guide", "Install", "pip install mylib — naïve café, 3.5x faster"),
              ("Guide", "Use", "Call run() with timeout=30; it's the don't-stop API")],
             [("Reference", "Install", "pip install mylib — naïve café, 3.5x faster"),
              ("Reference", "Pipeline.cancel", "Stops a pipeline halfway; sinks are flushed.")],
             [("Errors", "ERR_SINK_CLOSED", "Raised when a sink is closed: ERR_SINK_CLOSED 日本語のテキスト")]]
    keep = [[1, 2], [3, 0], [4]]  # the second page's first chunk is dropped as a duplicate
    whole = [t for page, ids in zip(pages, keep, strict=True) for t, i in zip(page, ids, strict=True) if i]
    want = bm25_format.merge_counts([(bm25_format.count_terms(whole), np.arange(1, 5))], 4)
    monkeypatch.setattr(bm25_format._Terms, "MAX_WORDS", 3)
    got = bm25_format.merge_counts(
        [(bm25_format.count_terms(page), np.asarray(ids)) for page, ids in zip(pages, keep, strict=True)], 4)
    assert got.keys() == want.keys() and "mylib" in got and "err_sink_closed" not in got
    for term, (ids, tfs) in want.items():
        assert ids.tolist() == got[term][0].tolist() and tfs.tolist() == got[term][1].tolist()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200) | st.text(max_size=50))
def test_ascii_split_is_the_regex_split(text):
    assert bm25_format.words(text) == bm25_format._WORD.findall(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(max_codepoint=127), min_size=1, max_size=20)
                | st.text(min_size=1, max_size=8), min_size=1, max_size=30, unique=True))
def test_stemmer_is_fts5s_own_for_any_words(words):
    """Plain ASCII words are stemmed together in one row, the rest one row each: same stems."""
    toks = bm25_format.Stemmer().tokens(words)
    for w, want in _fts5_terms(words):
        assert toks[w] == want


def _fts5_terms(words):
    """Each word with the terms FTS5's own porter tokenizer gives it, one word per row."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    for w in words:
        db.execute("DELETE FROM t")
        db.execute("INSERT INTO t(x) VALUES (?)", (w,))
        yield w, tuple(r[0] for r in db.execute("SELECT term FROM v ORDER BY offset"))


def _row(ids: list[int], wide: bool = False) -> tuple[int, bytes]:
    """One `bm25_terms` (df, postings) row for these ids, each with tfs (1, 2, 3)."""
    import numpy as np

    tfs = np.tile(np.array([[1, 2, 3]], dtype=np.int64), (len(ids), 1))
    return len(ids), next(bm25_format.encode_postings([(np.array(ids, dtype=np.int64), tfs)], wide))


@pytest.mark.parametrize("wide", [False, True])
def test_rows_decoded_together_are_each_row_decoded_alone(wide):
    n = 70_000 if wide else 500
    lists = [[3, 9, 400], [1], [2, 5, 6, 7, 499], [500]]
    ids, tfs, sizes = bm25_format.decode_many([_row(x, wide) for x in lists], n)
    assert sizes == [3, 1, 5, 1]
    assert ids.tolist() == [i for x in lists for i in x]  # each row restarts: 400 then 1 is no fault
    assert tfs.shape == (3, 10) and tfs.T.tolist() == [[1, 2, 3]] * 10
    empty, no_tfs, none = bm25_format.decode_many([], n)
    assert (empty.tolist(), no_tfs.shape, none) == ([], (3, 0), [])


@pytest.mark.parametrize("bad", [[[4, 2]], [[1, 2], [3, 3]], [[0, 1]], [[2], [1, 501]], [[501]]])
def test_rows_that_repeat_go_back_or_leave_the_package_are_refused(bad):
    """A row whose ids do not increase, or name chunk 0 or one past the package's 500, is
    refused wherever it sits in a batch."""
    rows = [_row([5, 6])] + [_row(x) if x[0] <= x[-1] else _swapped(x) for x in bad]
    with pytest.raises(bm25_format.MalformedIndex):
        bm25_format.decode_many(rows, 500)


def _swapped(ids: list[int]) -> tuple[int, bytes]:
    """A row whose ids go down: encoded as wrapping uint16 deltas, as a hostile writer could."""
    import zlib

    import numpy as np

    delta = np.diff(np.array([0, *ids], dtype=np.int64)).astype("<u2").tobytes()
    return len(ids), zlib.compress(delta + bytes([1, 2, 3] * len(ids))[: 3 * len(ids)])


def test_adjacent_words_also_match_a_camelcase_name_in_body_text(tmp_path):
    """`use effect` finds the section where `useEffect` is one token, first, through our index
    and through FTS5 alike (the joined word is one more OR-ed unit)."""
    sections = [("hooks.md", "Hooks", "Call useEffect to synchronize a component with an external system."),
                ("effects.md", "Side effects", "An effect may use a timer; effects run after render."),
                ("other.md", "Other", "Use the layout to place an effect in the page.")]
    path = make_package(tmp_path / "p.db", sections=sections)
    with open_package(path) as pkg:
        index = bm25.Bm25Index.load(pkg.db, WEIGHTS)
        for q in ("use effect", "useEffect hook", "how do I use effect", "use layout effect"):
            _same_ranking(pkg.db, index, q)
        assert lexical(pkg.db, Query.of("use effect"), 5, index)[0].tolist()[0] == 1
        assert lexical(pkg.db, Query.of("use effect"), 5)[0].tolist()[0] == 1
        assert Query.of("use effect").terms == ("effect",)  # what coverage and the verdict weigh is unchanged
