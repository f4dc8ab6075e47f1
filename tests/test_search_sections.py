"""Searching several packages at once: their BM25 in one pass (`bm25.score_packages`), their
sections looked up in one set of tables (`sections.SectionTables`), and the same ranking
whether a package is cold (a table of the sections a search ranks) or warm (a table of all)."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from helpers import EVAL_CORPUS, FIXTURES

from context_cli.adding import AddRequest, add_source
from context_cli.search import background
from context_cli.search.bm25 import score_packages
from context_cli.search.engine import SearchOptions, rank, search
from context_cli.search.lexical import term_statistics
from context_cli.search.query import Query
from context_cli.search.searcher import clear_cache, open_searcher
from context_cli.search.sections import SectionTable, SectionTables

QUESTIONS = ["How do I stop a stream halfway?", "max_tokens and stop_reason", "What is Claude's context window?",
             "invoke a command from another command", "progress bar with an estimated time"]


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTEXT_HOME", str(home))
        a = add_source(AddRequest(source=str(EVAL_CORPUS), name="anthropic", version="1.0.0")).installed
        b = add_source(AddRequest(source=str(FIXTURES / "eval" / "click-docs"), name="click", version="8.5.1")).installed
        yield a, b


def test_packages_scored_together_score_as_each_alone(libraries) -> None:
    searchers = [open_searcher(p) for p in libraries]
    none = (np.zeros(0, dtype=np.int64), np.zeros(0))
    for q in QUESTIONS:
        query = Query.of(q)
        parts = [s.bm25_postings(query) for s in searchers]
        weights = [list(term_statistics(s.bm25, query, none).idf.values()) for s in searchers]
        together = score_packages([(n, u, w) for (n, u), w in zip(parts, weights, strict=True)], 50)
        for k, s in enumerate(searchers):
            mine = together.row == k
            alone = score_packages([(parts[k][0], parts[k][1], weights[k])], 50)
            assert together.cid[mine].tolist() == alone.cid.tolist()
            assert together.score[mine].tolist() == alone.score.tolist()  # to the bit
            ids, scores = s.bm25.search(query, 50)
            assert ids.tolist() == alone.cid.tolist() and scores.tolist() == alone.score.tolist()
            cands = np.arange(1, s.bm25.n + 1)
            assert together.matched_idf_of(k)(cands).tolist() == alone.matched_idf_of(0)(cands).tolist()
            assert together.matched_idf_of(k)(np.array([0, 10**9, -3])).tolist() == [0.0, 0.0, 0.0]  # ids it lacks


def test_cold_and_warm_packages_rank_alike(libraries) -> None:
    """A cold package reads the sections a search ranks, a warm one has them all: the same
    ranking either way, and mixed (one package warm, one not). Searching never warms a
    package; `warm` does."""
    def ranking(q: str, which: tuple) -> list:
        ranked, _, _ = rank(q, [open_searcher(p) for p in which])
        return [(c.library, c.chunk_id, c.score, c.verdict, c.signals) for c in ranked]

    def warm(which: tuple) -> list[bool]:
        return [open_searcher(p).is_warm for p in which]

    for q in QUESTIONS:
        clear_cache()
        first = ranking(q, libraries)
        for other in QUESTIONS:
            ranking(other, libraries)
        assert warm(libraries) == [False, False]
        assert ranking(q, libraries) == first
        for p in libraries:
            open_searcher(p).warm()
        assert warm(libraries) == [True, True]
        assert ranking(q, libraries) == first
        clear_cache()
        open_searcher(libraries[0]).warm()
        assert warm(libraries) == [True, False]
        assert ranking(q, libraries) == first
        assert search(q, libraries, SearchOptions(warm=True)) == search(q, libraries)  # (now both warm)
        assert warm(libraries) == [True, True]


def test_tables_laid_end_to_end_read_each_package_as_its_own(libraries) -> None:
    searchers = [open_searcher(p) for p in libraries]
    for s in searchers:
        s.warm()
    tables = [s.section_table([]) for s in searchers]
    every = SectionTables.of(tables)
    for k, t in enumerate(tables):
        cids = np.arange(int(t.ids[0]) - 2, int(t.ids[-1]) + 3)  # (ids before and after it too)
        page, found, chars = every.lookup(np.full(len(cids), k), cids)
        own_page, own_found, own_chars = SectionTables.of([t]).lookup(np.zeros(len(cids), dtype=np.int64), cids)
        assert found.tolist() == own_found.tolist() and chars.tolist() == own_chars.tolist()
        assert [every.paths[p] for p in page.tolist()] == [t.paths[p] for p in own_page.tolist()]
        assert [every.tokens[p] for p in page[found].tolist()] == [t.tokens[p] for p in own_page[found].tolist()]
        assert {every.owner[p] for p in page.tolist()} == {k}
        cold = open_package_map(libraries[k])  # (every section's page and length, read afresh)
        assert [(t.paths[p] if f else None) for p, f in zip(own_page.tolist(), own_found.tolist(), strict=True)] == \
            [cold.pages[c][0] if c in cold.pages else None for c in cids.tolist()]
        assert own_chars.tolist() == [cold.chars.get(c, 0) for c in cids.tolist()]


def open_package_map(installed):
    from context_cli.package.reader import open_package

    with open_package(installed.path) as pkg:
        return pkg.section_map(None)


def test_a_table_lays_out_the_sections_it_was_given() -> None:
    pages = {3: ("a.md", "A"), 4: ("a.md", "A"), 6: ("b.md", "B")}
    table = SectionTable.of(pages, {3: 30, 4: 40, 6: 60}, lambda titles: {p: frozenset([t.lower()]) for p, t in titles})
    assert table.paths == ["a.md", "b.md", ""] and table.nowhere == 2
    page, found, chars = SectionTables.of([table]).lookup(np.zeros(6, dtype=np.int64), np.array([3, 4, 5, 6, 7, 1]))
    assert page.tolist() == [0, 0, 2, 1, 2, 2] and found.tolist() == [True, True, False, True, False, False]
    assert chars.tolist() == [30, 40, 0, 60, 0, 0] and table.tokens == [frozenset(["a"]), frozenset(["b"]), frozenset()]
    empty = SectionTable.of({}, {}, lambda titles: {})
    assert empty.paths == [""] and SectionTables.of([empty]).lookup(np.zeros(1, dtype=np.int64), np.array([3]))[1].tolist() \
        == [False]


@pytest.mark.parametrize("far", [10**6, 2**62, -(2**62)])
def test_tables_of_far_apart_ids_are_looked_up_alike(far: int) -> None:
    """Sparse ids (a hostile or patched file), even past what one key can span: each
    candidate finds its own package's section, or none."""
    near = SectionTable.of({1: ("a.md", "A"), 2: ("b.md", "B")}, {1: 10, 2: 20}, lambda titles: {})
    sparse = SectionTable.of({5: ("c.md", "C"), far: ("d.md", "D")}, {5: 50, far: 60}, lambda titles: {})
    every = SectionTables.of([near, sparse])
    pkg = np.array([0, 0, 0, 1, 1, 1, 1, 0])
    cids = np.array([1, 2, 5, 5, far, 1, 2**62 + 7, far])
    page, found, chars = every.lookup(pkg, cids)
    assert found.tolist() == [True, True, False, True, True, False, False, False]
    assert [every.paths[p] for p in page.tolist()] == ["a.md", "b.md", "", "c.md", "d.md", "", "", ""]
    assert chars.tolist() == [10, 20, 0, 50, 60, 0, 0, 0]


def test_vectors_of_missing_or_repeated_sections_are_harmless() -> None:
    """A package file changed after its install (the install's deep check refuses both): a
    vector whose chunk does not exist (far out of range) and one repeated. Searched without
    error, the repeated chunk once."""
    odd = add_source(AddRequest(source=str(EVAL_CORPUS), name="odd", version="1.0.0")).installed
    with sqlite3.connect(odd.path) as db:
        first = db.execute("SELECT chunk_id, vector FROM vectors ORDER BY chunk_id LIMIT 1").fetchone()
        db.execute("CREATE TABLE v2 (chunk_id INTEGER, vector BLOB NOT NULL)")
        db.execute("INSERT INTO v2 SELECT chunk_id, vector FROM vectors")
        db.execute("INSERT INTO v2 VALUES (?, ?), (?, ?)", (first[0], first[1], 10**12, first[1]))
        db.execute("DROP TABLE vectors")
        db.execute("ALTER TABLE v2 RENAME TO vectors")
    for q in QUESTIONS:
        for warm in (False, True):  # (cold: the sections ranked; warm: the whole map)
            answer = search(q, [odd], SearchOptions(warm=warm))
            assert answer["results"] and answer["searched"] == {odd.label: "hybrid"}
            ranked, _, _ = rank(q, [open_searcher(odd)])
            assert len({c.chunk_id for c in ranked}) == len(ranked)
    dense = open_searcher(odd).dense()
    assert dense is not None and len(set(dense[1].ids.tolist())) == len(dense[1].ids)


def test_a_search_waits_for_its_product_to_begin() -> None:
    job = background.submit(lambda: sum(range(1000)))
    assert job.begun(5.0) and job() == sum(range(1000))


@pytest.mark.parametrize("seed", range(6))
def test_each_packages_best_are_its_highest_scores_lowest_ids_first(seed) -> None:
    """`score_packages` keeps, per package, its `limit` best sections above 0: highest score
    first, ties by id. Rows mostly 0 with many ties at the cut (the case its partition of
    matched scores only is for), and packages with fewer matches than the limit."""
    from context_cli.search.bm25 import Posting

    rng = np.random.default_rng(seed)
    parts, want = [], []
    for n in (40, 7, 300, 1):
        ids = np.sort(rng.choice(np.arange(1, n + 1), size=rng.integers(0, n + 1), replace=False))
        contrib = rng.choice([0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0], size=len(ids))  # few distinct scores: ties
        parts.append((n, [Posting(ids=ids, contrib=contrib, df=len(ids))], [1.0]))
        want.append(sorted((-s, int(i)) for i, s in zip(ids, contrib, strict=True)))
    for limit in (1, 2, 5, 9, 50):
        found = score_packages(parts, limit)
        for k, best in enumerate(want):
            mine = found.row == k
            assert [(-s, i) for s, i in zip(found.score[mine].tolist(), found.cid[mine].tolist(), strict=True)] == \
                best[:limit]
        alone = score_packages(parts[2:3], limit)
        assert [(-s, i) for s, i in zip(alone.score.tolist(), alone.cid.tolist(), strict=True)] == want[2][:limit]
