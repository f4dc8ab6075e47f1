"""How close a page is as a whole (`closeness`): the mean of its sections' cosine deviations,
as a z-score among the package's pages, taken over each page's run of chunk ids; none where
pages are not runs of ids or are mostly one section each (docs/search.md, "The ranking
rules", 2)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

import context_cli as cx
from context_cli.search.closeness import PageSpans, closeness, page_rows
from context_cli.search.dense import DenseHits, standardise
from context_cli.search.searcher import open_searcher

TOPICS = {
    "caching.md": ("Caching", ["Cache responses in memory", "Expire cached entries after a time to live",
                               "Invalidate the cache when the data changes"]),
    "routing.md": ("Routing", ["Declare routes with path parameters", "Group routes under a prefix",
                               "Redirect an old route to a new one"]),
    "testing.md": ("Testing", ["Write tests with the test client", "Run the test suite in parallel"]),
    "deploying.md": ("Deploying", ["Deploy behind a reverse proxy", "Serve static files in production",
                                   "Scale with several worker processes", "Log errors to a file"]),
}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> cx.Installed:
    docs = tmp_path_factory.mktemp("docs")
    for path, (title, headings) in TOPICS.items():
        body = "".join(f"## {h}\n\n{h}. This section explains how to {h.lower()} step by step.\n\n" for h in headings)
        (docs / path).write_text(f"# {title}\n\n{body}", "utf-8")
    return cx.build(docs, tmp_path_factory.mktemp("out") / "c.db", name="closelib", version="1.0.0")


def test_a_pages_closeness_is_its_sections_mean_deviation_as_a_z_among_the_pages(package: cx.Installed) -> None:
    searcher = open_searcher(package)
    model, index = searcher.dense()
    scores = index.scores(model.encode(["how do I invalidate cached data"])[0].astype("float32"))
    (stats,) = standardise(scores, [(0, len(scores))])
    hits = DenseHits(index, stats, model, float(scores.max()), index.first)
    spans = searcher.page_spans()
    assert spans is not None and sorted(spans.paths) == sorted(TOPICS)

    with closing(sqlite3.connect(package.path)) as db:
        page_of = dict(db.execute("SELECT id, doc_path FROM chunks"))
    dev = stats.dev
    means = {p: np.mean([dev[cid - index.first] for cid, q in page_of.items() if q == p]) for p in spans.paths}
    values = np.array(list(means.values()))
    expected = {p: min(max((m - values.mean()) / values.std(), 0.0), 6.0) / 6.0 for p, m in means.items()}

    rows = page_rows(spans, hits)
    assert rows is not None
    got, starts = closeness([rows], 6.0)
    assert starts == [0]
    assert {p: got[k] for p, k in rows[0].at.items()} == pytest.approx(expected, abs=1e-9)
    assert max(spans.paths, key=lambda p: expected[p]) == "caching.md"
    # Laid end to end with other packages' rows, each package's pages come out the same.
    other = page_rows(spans, DenseHits(index, standardise(-scores, [(0, len(scores))])[0], model, 0.0, index.first))
    assert other is not None
    both, starts = closeness([other, rows, other], 6.0)
    n = len(got)
    assert starts == [0, n, 2 * n]
    assert both[n:2 * n].tolist() == pytest.approx(got.tolist(), abs=1e-12) and both[:n].tolist() == both[2 * n:].tolist()


def test_pages_of_one_section_each_have_no_closeness(tmp_path: Path) -> None:
    """There a page's mean is its one section's cosine, which fusion has counted already."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for k in range(4):
        (docs / f"p{k}.md").write_text(f"# Page {k}\n\nThe page about topic number {k} and nothing else.\n", "utf-8")
    installed = cx.build(docs, tmp_path / "one.db", name="onelib", version="1.0.0")
    searcher = open_searcher(installed)
    model, index = searcher.dense()
    scores = index.scores(model.encode(["topic number two"])[0].astype("float32"))
    (stats,) = standardise(scores, [(0, len(scores))])
    spans = searcher.page_spans()
    assert spans is not None and len(spans.paths) == 4
    assert page_rows(spans, DenseHits(index, stats, model, float(scores.max()), index.first)) is None


@pytest.mark.parametrize("rows, runs", [
    ([("a.md", 1, 3, 3), ("b.md", 4, 4, 1)], {"a.md": (1, 3), "b.md": (4, 1)}),
    ([("a.md", 1, 3, 2), ("b.md", 2, 2, 1)], None),  # a's sections are not one run of ids
    ([("a.md", 1, 1, 1), (b"b.md", 2, 2, 1)], None),  # a path that is not text
    ([("a.md", 1.0, 1, 1)], None),  # an id that is not an integer
    ([("a.md", True, 1, 1)], None),
    ([("a.md", 1, 0, 0)], None),  # no sections
    ([], None),
])
def test_page_spans_are_runs_of_ids_or_none(rows: list[tuple[object, ...]], runs: dict[str, tuple[int, int]] | None
                                            ) -> None:
    spans = PageSpans.of(rows)
    if runs is None:
        assert spans is None
    else:
        assert spans is not None
        assert {p: (int(f), int(n)) for p, f, n in zip(spans.paths, spans.first, spans.count, strict=True)} == runs


def test_only_runs_among_the_vectors_rows_are_read() -> None:
    """A run before the first row, past the last or far away (ids a hostile file may hold)
    is left out; the others are ordered by their first row."""
    spans = PageSpans.of([("b.md", 13, 15, 3), ("a.md", 10, 12, 3), ("before.md", 5, 9, 5),
                          ("past.md", 16, 20, 5), ("far.md", 2**62, 2**62 + 1, 2)])
    assert spans is not None
    rows = spans.rows(10, 6)
    assert rows is not None and rows.at == {"a.md": 0, "b.md": 1}
    assert (rows.bounds.tolist(), rows.pick.tolist()) == ([0, 3, 6], [0, 1])  # (runs that follow each other)
    assert spans.rows(10, 6) is rows  # (made once per vector set)
    assert spans.rows(-2**63, 6) is None
    gap = PageSpans.of([("a.md", 10, 11, 2), ("b.md", 13, 15, 3)])
    assert gap is not None and (rows := gap.rows(10, 6)) is not None
    assert (rows.bounds.tolist(), rows.pick.tolist()) == ([0, 2, 3, 6], [0, 2])


def test_runs_with_gaps_between_them_give_their_own_means() -> None:
    """A row no page holds (a vector without a section) counts in no page's mean."""
    dev = np.array([1.0, 3.0, 100.0, -2.0, -4.0, 0.0, 5.0, 7.0])
    gap = PageSpans.of([("a.md", 0, 1, 2), ("b.md", 3, 4, 2), ("c.md", 5, 7, 3)])
    tiled = PageSpans.of([("a.md", 0, 1, 2), ("b.md", 2, 4, 3), ("c.md", 5, 7, 3)])
    assert gap is not None and tiled is not None
    means = {"gap": np.array([2.0, -3.0, 4.0]), "tiled": np.array([2.0, 94 / 3, 4.0])}
    for name, spans in (("gap", gap), ("tiled", tiled)):
        rows = spans.rows(0, len(dev))
        assert rows is not None
        got, _ = closeness([(rows, dev)], 6.0)
        m = means[name]
        expected = np.clip((m - m.mean()) / m.std(), 0.0, 6.0) / 6.0
        assert got.tolist() == pytest.approx(expected.tolist(), abs=1e-12)


def test_the_page_about_the_question_is_lifted_by_its_closeness(package: cx.Installed) -> None:
    """The same question with and without the rule: only the pages' bonus moves."""
    from dataclasses import replace

    from context_cli.search.engine import rank
    from context_cli.search.options import DEFAULT_PARAMS

    question = "how do I invalidate cached data"
    searcher = open_searcher(package)
    with_rule, _, _ = rank(question, [searcher], "hybrid", DEFAULT_PARAMS)
    without, _, _ = rank(question, [searcher], "hybrid", replace(DEFAULT_PARAMS, page_closeness_weight=0.0))
    score = {c.chunk_id: c.score for c in without}
    lifted = {c.doc_path for c in with_rule if c.score > score[c.chunk_id] + 1e-12}
    assert "caching.md" in lifted and with_rule[0].doc_path == "caching.md"
