"""The package prior (search/prior.py): which package a query is about."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
from helpers import make_package
from hypothesis import given
from hypothesis import strategies as st

from context_cli.package.bm25 import stemmer
from context_cli.search.prior import Signature, scores, signature, weights
from context_cli.search.query import terms, words

FIXTURES = Path(__file__).parent / "fixtures" / "eval"


def _signature(tmp_path: Path, name: str, folder: Path, vectors: np.ndarray | None = None) -> Signature:
    pages = sorted(folder.rglob("*.md"))[:40]
    db_path = make_package(tmp_path / f"{name}.db", name, sections=[(p.name, "Intro", p.read_text()) for p in pages])
    with sqlite3.connect(db_path) as db:
        rows = db.execute("SELECT term, df FROM bm25_terms").fetchall()
        n = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    return signature(name, rows, n, vectors, "m")


def _stems(query: str) -> list[str]:
    return [t for ts in stemmer().tokens(terms(query)).values() for t in ts]


def test_vocabulary_picks_the_package_a_question_is_about(tmp_path: Path) -> None:
    """Two real docs trees (click's and Anthropic's): each one's own words pick it."""
    sigs = [_signature(tmp_path, "click", FIXTURES / "click-docs"),
            _signature(tmp_path, "anthropic", FIXTURES / "anthropic-docs")]
    for query, best in (("how do I add a --verbose option with a flag to my command group", 0),
                        ("stream the model's response tokens with the messages API", 1)):
        got = scores(words(query), _stems(query), sigs)
        assert int(np.argmax(got)) == best, (query, got)


def test_a_named_package_wins_and_weights_are_relative() -> None:
    a = Signature(frozenset({"flask"}), {"rout": 5}, 10)
    b = Signature(frozenset({"django", "django-rest"}), {"rout": 5}, 10)
    got = scores(words("routing in flask"), ["rout", "flask"], [a, b])
    assert got[0] > got[1]
    w = weights(got)
    assert w[0] == 1.0 and 0 < w[1] < 1
    assert weights(got, strength=0.0) == [1.0, 1.0]


def test_centroids_count_only_for_the_same_model() -> None:
    up, side = np.array([1, 0], dtype=np.float32), np.array([0, 1], dtype=np.float32)
    a = signature("a", [], 1, np.stack([up, up]), "m")
    b = signature("b", [], 1, np.stack([side]), "m")
    on = (3.0, 1.0, 20.0)  # (off by default: measured to lose)
    got = scores([], [], [a, b], up, "m", on)
    assert got[0] > got[1]
    assert scores([], [], [a, b], up, "other", on) == [0.0, 0.0]
    assert scores([], [], [a, b], up, "m") == [0.0, 0.0]


def test_one_package_has_no_prior() -> None:
    assert scores(["x"], ["x"], [Signature(frozenset({"x"}), {"x": 1}, 1)]) == [0.0]


def test_name_parts_are_aliases() -> None:
    assert "docker" in signature("docker-api", [], 1).names
    assert "api" not in signature("docker-api", [], 1).names  # too short to name a package


@given(st.lists(st.integers(0, 50), min_size=2, max_size=6), st.lists(st.sampled_from("abcdef"), max_size=5))
def test_scores_are_centred_and_finite(dfs: list[int], query: list[str]) -> None:
    sigs = [Signature(frozenset({f"p{i}"}), {"a": df, "b": 50 - df}, 60) for i, df in enumerate(dfs)]
    got = scores([], query, sigs)
    assert all(np.isfinite(got)) and abs(sum(got)) < 1e-9
    w = weights(got)
    assert max(w) == 1.0 and all(0 < x <= 1 for x in w)
