"""Searching several packages at once: their BM25 in one pass (`bm25.score_together`), their
sections off one shelf (`sections.Shelf`), and the same ranking whichever path a search takes."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from helpers import EVAL_CORPUS, FIXTURES

from context_cli.adding import AddRequest, add_source
from context_cli.search import background
from context_cli.search.bm25 import score_together
from context_cli.search.engine import rank, search
from context_cli.search.index import clear_cache, open_searchable
from context_cli.search.lexical import query_terms
from context_cli.search.query import Query
from context_cli.search.sections import SectionTable, Shelf

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


def _units(s, q: str):
    with s.lock:
        return s.bm25.n, s.bm25.units(Query.of(q))


def test_packages_scored_together_score_as_each_alone(libraries) -> None:
    searchables = [open_searchable(p) for p in libraries]
    for q in QUESTIONS:
        parts = [_units(s, q) for s in searchables]
        weights = [list(query_terms(s.bm25, Query.of(q)).idf.values()) for s in searchables]
        together = score_together([(n, u, w) for (n, u), w in zip(parts, weights, strict=True)], 50)
        for k, s in enumerate(searchables):
            mine = together.row == k
            alone = score_together([(parts[k][0], parts[k][1], weights[k])], 50)
            assert together.cid[mine].tolist() == alone.cid.tolist()
            assert together.score[mine].tolist() == alone.score.tolist()  # to the bit
            ids, scores = s.bm25.search(Query.of(q), 50)
            assert ids.tolist() == alone.cid.tolist() and scores.tolist() == alone.score.tolist()
            cands = np.arange(1, s.bm25.n + 1)
            assert together.presence_of(k)(cands).tolist() == alone.presence_of(0)(cands).tolist()
            assert together.presence_of(k)(np.array([0, 10**9, -3])).tolist() == [0.0, 0.0, 0.0]  # ids it lacks


def test_the_first_search_and_later_ones_rank_alike(libraries) -> None:
    """A first search reads some sections (dicts), a package searched again the whole map,
    then read as arrays off a shelf: the same ranking either way, and mixed (one package
    mapped, one not)."""
    def ranking(q: str, which: tuple) -> list:
        ranked, _, _ = rank(q, [open_searchable(p) for p in which])
        return [(c.library, c.chunk_id, c.score, c.verdict, c.signals) for c in ranked]

    def mapped(which: tuple) -> list[bool]:
        out = []
        for p in which:
            s = open_searchable(p)
            with s.lock:
                out.append(s.section_table() is not None)
        return out

    for q in QUESTIONS:
        clear_cache()
        first = ranking(q, libraries)
        others = [o for o in QUESTIONS if o != q]
        ranking(others[0], libraries)
        ranking(others[1], libraries)  # (a package's second read of new sections is of all of them)
        assert mapped(libraries) == [True, True]
        assert ranking(q, libraries) == first
        clear_cache()
        ranking(others[0], libraries[:1])
        ranking(others[1], libraries[:1])
        assert mapped(libraries) == [True, False]
        assert ranking(q, libraries) == first


def test_a_shelf_reads_each_package_as_its_own_table(libraries) -> None:
    searchables = [open_searchable(p) for p in libraries]
    for s in searchables:
        search("stream", [s.pkg])  # (twice: the second read is of the whole map)
        search("command", [s.pkg])
    tables = [s.section_table() for s in searchables]
    shelf = Shelf.of(tables)  # type: ignore[arg-type]
    for k, t in enumerate(tables):
        cids = np.arange(t.first - 2, t.first + len(t.page) + 3)  # (ids before and after it too)
        page, found, chars = shelf.lookup(np.full(len(cids), k), cids)
        own_page, own_found, own_chars = Shelf.of([t]).lookup(np.zeros(len(cids), dtype=np.int64), cids)
        assert found.tolist() == own_found.tolist() and chars.tolist() == own_chars.tolist()
        assert [shelf.paths[p] for p in page.tolist()] == [t.paths[p] for p in own_page.tolist()]
        assert [shelf.tokens[p] for p in page[found].tolist()] == [t.tokens[p] for p in own_page[found].tolist()]
        assert {shelf.owner[p] for p in page.tolist()} == {k}
        s = searchables[k]
        known = s.sections_of([])  # (the whole map: every section's page, title and length)
        assert [(t.paths[p] if f else None) for p, f in zip(own_page.tolist(), own_found.tolist(), strict=True)] == \
            [known.pages[c][0] if c in known.pages else None for c in cids.tolist()]
        assert own_chars.tolist() == [known.chars.get(c, 0) for c in cids.tolist()]


def test_a_table_lays_out_the_sections_it_was_given() -> None:
    pages = {3: ("a.md", "A"), 4: ("a.md", "A"), 6: ("b.md", "B")}
    table = SectionTable.of(pages, {3: 30, 4: 40, 6: 60}, lambda titles: {p: frozenset([t.lower()]) for p, t in titles})
    assert table is not None and table.paths == ["a.md", "b.md", ""] and table.nowhere == 2
    page, found, chars = Shelf.of([table]).lookup(np.zeros(6, dtype=np.int64), np.array([3, 4, 5, 6, 7, 1]))
    assert page.tolist() == [0, 0, 2, 1, 2, 2] and found.tolist() == [True, True, False, True, False, False]
    assert chars.tolist() == [30, 40, 0, 60, 0, 0] and table.tokens == [frozenset(["a"]), frozenset(["b"]), frozenset()]
    assert SectionTable.of({1: ("a.md", "A"), 10**6: ("b.md", "B")}, {}, lambda titles: {}) is None  # too sparse
    assert SectionTable.of({}, {}, lambda titles: {}) is None


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
        for _ in range(3):  # (the first search reads some sections; later ones the whole map)
            answer = search(q, [odd])
            assert answer["results"] and answer["searched"] == {odd.label: "hybrid"}
            ranked, _, _ = rank(q, [open_searchable(odd)])
            assert len({c.chunk_id for c in ranked}) == len(ranked)
    dense = open_searchable(odd).dense()
    assert dense is not None and len(set(dense[1].ids.tolist())) == len(dense[1].ids)


def test_a_search_waits_for_its_product_to_begin() -> None:
    job = background.submit(lambda: sum(range(1000)))
    assert job.begun(5.0) and job() == sum(range(1000))
