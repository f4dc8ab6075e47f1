"""bench/rerank_features.py: its page order, its proximity feature and its fit do what they say."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def rf() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_rerank_features", BENCH / "rerank_features.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_rerank_features"] = mod
    spec.loader.exec_module(mod)
    return mod


def row(page: str, grade: int, final: float, f: list[float]) -> dict[str, Any]:
    return {"page": page, "grade": grade, "final": final, "f": f}


def test_a_page_ranks_by_its_best_section(rf: ModuleType) -> None:
    rows = [row("a", 0, 0.9, [0]), row("b", 2, 0.5, [0]), row("a", 0, 0.8, [0]), row("b", 2, 0.95, [0])]
    assert [r["page"] for r in rf.page_order(rows, [r["final"] for r in rows])] == ["b", "a"]
    assert rf.reciprocal_rank(rows, [0.9, 0.5, 0.8, 0.1]) == 0.5
    assert rf.reciprocal_rank([row("a", 1, 1.0, [0])], [1.0]) == 0.0


def test_adjacent_query_terms_count_with_one_word_between(rf: ModuleType) -> None:
    pairs = {("fixture", "scope"), ("scope", "session")}
    assert rf._bigram_share(pairs, "the fixture scope is module".split()) == 0.5
    assert rf._bigram_share(pairs, "fixture with scope of session".split()) == 1.0
    assert rf._bigram_share(pairs, "scope fixture".split()) == 0.0
    assert rf._bigram_share(set(), "anything".split()) == 0.0


def test_the_fit_learns_the_feature_that_marks_the_gold_page(rf: ModuleType) -> None:
    # The current score puts a wrong page first; feature 0 marks the gold page, feature 1 is noise.
    records = [{"set": "click", "style": "question",
                "rows": [row("wrong", 0, 0.6, [0.0, k % 2]), row("gold", 2, 0.5, [1.0, (k + 1) % 2]),
                         row("other", 0, 0.4, [0.0, 0.5])]} for k in range(20)]
    cols = [0, 1]
    scale = np.array([0.5, 0.5])
    w = rf.fit(records, cols, scale, l2=0.01, sharpness=20.0)
    assert w[0] > 0.05 and abs(w[1]) < w[0] / 5
    assert all(rf.reciprocal_rank(r["rows"], rf.rescored(r, cols, scale, w)) == 1.0 for r in records)
