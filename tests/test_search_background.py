"""The cosines handed to a helper thread (one stacked product) give the very answer computed
inline, and the helper hands back results and errors alike."""

import threading

import pytest
from helpers import EVAL_CORPUS

from context_cli.adding import AddRequest, add_source
from context_cli.search import background
from context_cli.search.engine import SearchOptions, search
from context_cli.search.options import RankingParams
from context_cli.search.searcher import open_searcher

QUERIES = ["How do I stream responses?", "prompt caching", "What is the context window of Claude?",
           "tool use with JSON", "max_tokens", "Wie funktioniert das Caching?"]


@pytest.fixture
def two_libraries():
    a = add_source(AddRequest(source=str(EVAL_CORPUS), name="alpha", version="1.0.0")).installed
    b = add_source(AddRequest(source=str(EVAL_CORPUS), name="beta", version="2.0.0")).installed
    return [a, b]


def test_helper_thread_answers_as_inline(two_libraries, monkeypatch):
    used = []
    real = background.submit
    monkeypatch.setattr(background, "submit", lambda job: used.append(job) or real(job))
    for libraries in (two_libraries, two_libraries[:1]):
        for q in QUERIES:
            search(q, libraries)  # loads once (a first search may use the helper)
            used.clear()
            inline = search(q, libraries, SearchOptions(budget=5000, limit=20, params=RankingParams(thread_rows=10**9)))
            assert not used
            threaded = search(q, libraries, SearchOptions(budget=5000, limit=20, params=RankingParams(thread_rows=0)))
            assert used
            assert threaded == inline
            assert threaded["searched"] == {lib.label: "hybrid" for lib in libraries}
            # The packages were multiplied as one stack: their matrices are views into it, held once.
            matrices = [open_searcher(lib).dense()[1].matrix for lib in libraries]
            (stack,) = {id(m.base): m.base for m in matrices}.values()
            assert len(stack) == sum(len(m) for m in matrices)


def test_helper_returns_results_and_raises_errors():
    assert background.submit(lambda: threading.current_thread().name)().startswith("context-search-")

    def fails() -> None:
        raise ValueError("from the helper")

    with pytest.raises(ValueError, match="from the helper"):
        background.submit(fails)()
    assert background.submit(lambda: 42)() == 42  # the helper survives a failed job


def test_standardise_gives_each_package_its_own_z_scores():
    import numpy as np

    from context_cli.search.dense import standardise

    scores = np.array([0.1, 0.2, 0.6, 0.5, 0.5, np.nan, 0.3, 0.9, 0.2, 0.4], dtype=np.float32)
    a, empty, same, bad, b = standardise(scores, [(0, 3), (3, 3), (3, 5), (5, 7), (7, 10)])
    assert a.usable and b.usable and not (empty.usable or same.usable or bad.usable) and len(empty.z()) == 0
    for spread, part in ((a, scores[:3]), (b, scores[7:])):
        x = part.astype(np.float64)
        assert np.allclose(spread.z(), (x - x.mean()) / x.std(), rtol=0, atol=1e-12)
        assert [spread.z_at(i) for i in range(3)] == spread.z().tolist() == spread.z(np.arange(3)).tolist()
    (alone,) = standardise(scores[7:], [(0, 3)])
    assert alone.usable and alone.z().tolist() == b.z().tolist()  # the same whether stacked or alone


@pytest.mark.parametrize("sizes", [[60, 60, 60], [7, 0, 120, 3, 51], [1]])
def test_a_stack_finds_each_packages_best_rows_as_each_package_alone(sizes):
    import numpy as np

    from context_cli.search.dense import VectorIndex, VectorStack

    rng = np.random.default_rng(len(sizes))
    indexes = [VectorIndex(ids=np.arange(1, n + 1), matrix=rng.standard_normal((n, 8)).astype(np.float32))
               for n in sizes]
    alone = [i.matrix.copy() for i in indexes]
    stack = VectorStack(indexes)
    query = rng.standard_normal(8).astype(np.float32)
    cosines = stack.matrix @ query
    for k in (1, 5, 50):
        for best, index, matrix in zip(stack.best_rows(cosines, k), indexes, alone, strict=True):
            assert best.tolist() == index.top_rows(matrix @ query, k).tolist()


@pytest.mark.parametrize("sizes", [[60, 60, 60], [7, 0, 120, 3, 51], [1]])
def test_a_stacks_tops_are_each_packages_own(sizes):
    """`VectorStack.top_k_per_package` works out every package's best rows, their ids and z-scores and its best
    cosine at once: the same, to the bit, as each package's spread gives them alone (ids with
    gaps and a package whose cosines are all alike among them)."""
    import numpy as np

    from context_cli.search.dense import VectorIndex, VectorStack, standardise

    rng = np.random.default_rng(len(sizes))
    indexes = []
    for p, n in enumerate(sizes):
        ids = np.arange(1, n + 1) * (3 if p == 1 else 1)  # (package 1's ids have gaps)
        matrix = rng.standard_normal((n, 8)).astype(np.float32)
        if p == 2:
            matrix[:] = matrix[:1]  # all alike: no z-scores
        indexes.append(VectorIndex(ids=ids, matrix=matrix))
    stack = VectorStack(indexes)
    cosines = stack.matrix @ rng.standard_normal(8).astype(np.float32)
    for k in (1, 5, 50):
        for top, index, spread, (a, b) in zip(stack.top_k_per_package(cosines, k), indexes, standardise(cosines, stack.cuts),
                                              stack.cuts, strict=True):
            assert top.first == index.first and top.stats.usable == spread.usable
            assert top.best_cosine == (float(cosines[a:b].max()) if b > a else 0.0)
            if not spread.usable:  # (all alike: any rows are its best)
                assert len(top.rows) == min(k, b - a)
                continue
            rows = index.top_rows(cosines[a:b], k)
            assert top.rows.tolist() == rows.tolist() and top.ids.tolist() == index.ids[rows].tolist()
            assert top.z.tolist() == spread.z(rows).tolist()
