"""The ranking over arrays (`candidates.fuse_rankings`, `rank.rank_candidates`) gives exactly
the ranking of the rules.

The rules are `search/reference.py`, written out plainly, package by package, with dicts and
sorts (docs/search.md says them in prose). Hypothesis draws rankings with shared chunks, equal
scores and shared pages, so that every tie rule is exercised; the array code must give the
same candidates in the same order with the same scores, to the bit.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from context_cli.search.candidates import Candidates, fuse_rankings, identifier_gains, pin
from context_cli.search.options import DEFAULT_PARAMS, RankingParams
from context_cli.search.rank import rank_candidates, rank_within_group, round3, stable_group_order
from context_cli.search.reference import reference_rank as oracle

# --- the same through the arrays -------------------------------------------------------------


def with_evidence(c: Candidates, packages: list[dict], params: RankingParams = DEFAULT_PARAMS) -> Candidates:
    """The candidates with the evidence the drawn packages give (as `attach_evidence` fills it
    from real ones): pages numbered within each package, then across them."""
    page, found, gain, coverage, paths, title, kind, close = [], [], [], [], [], [], [], []
    for p, pk in enumerate(packages):
        number: dict[str, int] = {}
        pinned = identifier_gains(c.chunk_ids_of(p), pk.get("pinned", []), params.identifier_weight)
        for k, cid in enumerate(c.chunk_ids_of(p).tolist()):
            page.append(len(paths) + number.setdefault(pk["path"].get(cid, ""), len(number)))
            found.append(cid in pk["path"])
            gain.append(pk["gain"].get(cid, 0.0) + pinned[k])
            coverage.append(pk["coverage"][cid])
        paths += list(number)
        title += [pk["title"].get(path, 0.0) for path in number]
        kind += [pk.get("kind", {}).get(path, 1.0) for path in number]
        close += [pk.get("closeness", {}).get(path, 0.0) for path in number]
    return replace(c, page=np.array(page, dtype=np.int64), in_package=np.array(found, dtype=bool),
                   chars=np.zeros(len(page), dtype=np.int64), coverage=np.array(coverage, dtype=np.float64),
                   heading_gain=np.array(gain, dtype=np.float64), paths=paths, title_match=np.array(title),
                   page_weight=np.array(kind, dtype=np.float64), closeness=np.array(close, dtype=np.float64))


def arrays(packages: list[dict], cap: int, head: int, several: bool, params: RankingParams = DEFAULT_PARAMS
           ) -> list[tuple[int, int, float]]:
    rankings = [(*pin(np.array([c for c, _ in pk["lex"]], dtype=np.int64), np.array([s for _, s in pk["lex"]]),
                      pk.get("pinned", [])),
                 np.array([c for c, _ in pk["dense"]], dtype=np.int64), np.array([z for _, z in pk["dense"]]))
                for pk in packages]
    c = with_evidence(fuse_rankings(rankings, packages, cap, params), packages, params)
    ranking = rank_candidates(c, [pk["weight"] for pk in packages] if several else None, head, params)
    return list(zip(c.package[ranking.rows].tolist(), c.chunk_id[ranking.rows].tolist(), ranking.score.tolist(),
                    strict=True))


# --- the draws -------------------------------------------------------------------------------

SCORES = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.25, 7.0])  # few values: many ties
Z = st.sampled_from([-1.0, 0.0, 0.7, 2.0, 6.0, 9.0, float("nan")])


@st.composite
def package(draw: st.DrawFn) -> dict:
    ids = st.integers(1, 40)
    lex_ids = draw(st.lists(ids, unique=True, max_size=30))
    lex = sorted(((c, draw(SCORES)) for c in lex_ids), key=lambda x: (-x[1], x[0]))  # best first, ties by id
    dense = [(c, draw(Z)) for c in draw(st.lists(ids, unique=True, max_size=30))]
    pinned = draw(st.lists(ids, unique=True, max_size=3)) if draw(st.integers(0, 3)) == 0 else []
    every = {c for c, _ in lex} | {c for c, _ in dense} | set(pinned)
    paths = ["a.md", "b.md", "c.md", "", "d.md"]
    path = {c: draw(st.sampled_from(paths)) for c in every if draw(st.integers(0, 9))}  # a few have no section
    return {"lex": lex, "dense": dense, "path": path,
            "title": {p: draw(st.sampled_from([0.0, 0.25, 1.0])) for p in paths},
            "kind": {p: draw(st.sampled_from([1.0, 1.0, 0.5, 0.0])) for p in paths},
            "closeness": {p: draw(st.sampled_from([0.0, 0.0, 1 / 3, 1.0])) for p in paths},
            "gain": {c: draw(st.sampled_from([0.0, 0.0, 0.3, 1.5])) for c in every},
            "coverage": {c: draw(st.sampled_from([0.0, 0.1235, 0.5, 0.6665, 1.0])) for c in every},
            "weight": draw(st.sampled_from([1.0, 0.5, math.exp(-0.3)])), "pinned": pinned}


@settings(max_examples=300, deadline=None)
@given(st.lists(package(), min_size=1, max_size=4), st.integers(1, 40), st.integers(1, 12))
def test_the_arrays_rank_exactly_as_the_rules(packages: list[dict], cap: int, head: int) -> None:
    several = len(packages) > 1
    expected, got = oracle(packages, cap, head, several), arrays(packages, cap, head, several)
    assert [(p, c) for p, c, _ in got] == [(p, c) for p, c, _ in expected]
    assert [s for *_, s in got] == [s for *_, s in expected]  # to the bit


PARAMS = st.builds(RankingParams, lexical_weight=st.sampled_from([0.0, 0.3, 0.7, 1.0]), z_cap=st.sampled_from([1.0, 6.0]),
                   next_sections=st.sampled_from([(), (0.25,), (0.25, 0.1), (0.5, 0.2, 0.1)]),
                   title_weight=st.sampled_from([0.0, 0.4, 2.0]), page_closeness_weight=st.sampled_from([0.0, 0.4, 3.0]),
                   more_pages=st.integers(0, 12),
                   identifier_weight=st.sampled_from([0.0, 10.0]))


@settings(max_examples=150, deadline=None)
@given(st.lists(package(), min_size=1, max_size=3), st.integers(1, 40), st.integers(1, 12), PARAMS)
def test_the_arrays_follow_the_rules_whatever_the_parameters(packages: list[dict], cap: int, head: int,
                                                            params: RankingParams) -> None:
    several = len(packages) > 1
    expected, got = oracle(packages, cap, head, several, params), arrays(packages, cap, head, several, params)
    assert [(p, c) for p, c, _ in got] == [(p, c) for p, c, _ in expected]
    assert [s for *_, s in got] == [s for *_, s in expected]  # to the bit


def test_a_package_without_candidates_takes_no_place() -> None:
    """A package whose candidates are left out (it failed while its evidence was read) ranks
    the others as if it had none."""
    one = {"lex": [(1, 2.0), (2, 1.0)], "dense": [], "path": {1: "a.md", 2: "a.md"}, "title": {}, "gain": {},
           "coverage": {1: 1.0, 2: 1.0}, "weight": 1.0}
    none = {**one, "lex": []}
    both = arrays([one, one], 10, 8, True)
    assert arrays([none, one], 10, 8, True) == [(p, c, s) for p, c, s in both if p == 1]
    c = with_evidence(fuse_rankings([(np.array([1, 2]), np.array([2.0, 1.0]), np.zeros(0, dtype=np.int64),
                                      np.zeros(0))] * 2, [one, one], 10, DEFAULT_PARAMS), [one, one])
    assert c.rows_of([1]).tolist() == [2, 3] and c.chunk_ids_of(1).tolist() == [1, 2]


def test_grouping_keeps_the_order_within_a_key() -> None:
    keys = np.array([2, 0, 2, 1, 0])
    assert stable_group_order(keys).tolist() == [1, 4, 3, 0, 2]
    assert stable_group_order(keys, np.array([4, 3, 2, 1, 0])).tolist() == [4, 1, 3, 2, 0]
    assert stable_group_order(keys, np.array([3, 1]), groups=1).tolist() == [3, 1]  # one key: nothing to sort
    by_key = np.array([0, 0, 1, 2, 2, 2])
    assert rank_within_group(by_key, np.bincount(by_key)).tolist() == [0, 1, 0, 0, 1, 2]


def test_a_cut_keeps_the_first_found_among_equal_scores() -> None:
    # Sixty candidates all alike: the cut keeps the first thirty found, in that order (one
    # package, and one of three), as the rules' stable sort does.
    alike = {"lex": [(c, 1.0) for c in range(1, 61)], "dense": [], "path": {c: "a.md" for c in range(1, 61)},
             "title": {}, "gain": {}, "coverage": dict.fromkeys(range(1, 61), 1.0), "weight": 1.0}
    for packages in ([alike], [alike, alike, alike]):
        several = len(packages) > 1
        assert arrays(packages, 30, 30, several) == oracle(packages, 30, 30, several)
        fused = fuse_rankings([(np.arange(1, 61), np.ones(60), np.zeros(0, dtype=np.int64), np.zeros(0))] * len(packages),
                              packages, 30, DEFAULT_PARAMS)
        assert fused.chunk_ids_of(0).tolist() == list(range(1, 31))


def test_round3_is_pythons_round_to_the_bit():
    """Near a half, numpy's rint(x * 1000) / 1000 is not Python's round(x, 3) (0.0005 -> 0.0
    against 0.001): round3 is Python's everywhere, halves, their neighbours, 0, 1, inf, NaN."""
    halves = np.arange(0, 20_001) / 2000.0
    values = np.concatenate((np.random.default_rng(3).random(100_000), halves, np.nextafter(halves, 2),
                             np.nextafter(halves, -1), [0.0, 1.0, 0.0625, math.inf, math.nan]))
    ours = round3(values)
    python = np.array([round(x, 3) for x in values.tolist()])
    assert np.array_equal(ours.view(np.int64), python.view(np.int64))
    assert not np.array_equal(np.rint(halves * 1000) / 1000, python[100_000:120_001])  # (so the halves matter)
