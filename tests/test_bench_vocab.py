"""bench/vocab_gap.py, bench/expansion_scout.py and bench/name_scout.py: their classes, weights
and API names do what they say."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[f"bench_{name}"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def gap() -> ModuleType:
    return _load("vocab_gap")


@pytest.fixture(scope="module")
def scout() -> ModuleType:
    return _load("expansion_scout")


def test_a_term_is_classed_by_where_the_package_holds_it(gap: ModuleType) -> None:
    gold = {"fixtur", "scope", "config", "color", "parallel"}
    df = Counter({"fixtur": 3, "scope": 2, "config": 4, "color": 1, "parallel": 1, "session": 9})
    assert gap.classify("scope", gold, df) == "on gold"
    assert gap.classify("configur", gold, df) == "variant"  # (the stemmer keeps `configuring` from `config`)
    assert gap.classify("colour", gold, df) == "variant"
    assert gap.classify("session", gold, df) == "elsewhere"
    assert gap.classify("parralel", gold, df) == "typo"
    assert gap.classify("xdist", gold, df) == "absent"
    assert gap.classify("carallel", gold, df) == "absent"  # (a typo keeps the first letter)


def test_importing_the_scout_leaves_the_index_alone(scout: ModuleType) -> None:
    from context_cli.search import bm25

    assert bm25.Bm25Index.units is scout._original_units


def test_everyday_words_weigh_less_than_topical_ones(scout: ModuleType) -> None:
    from context_cli.search.bm25 import Posting
    from context_cli.search.query import Query

    query = Query.of("show fixture")
    one = np.ones(2)
    out = scout.damped(query, [Posting(ids=np.array([1, 2]), contrib=one, df=2) for _ in query.terms])
    show, fixture = (p.contrib[0] for p in out)
    assert 0.3 <= show < 0.6 and fixture == 1.0


@pytest.fixture(scope="module")
def ns() -> ModuleType:
    return _load("name_scout")


def test_a_heading_that_is_an_api_name(ns: ModuleType) -> None:
    assert ns.api_name("Model signals > post_save") == "post_save"
    assert ns.api_name("Settings > LOGIN_REDIRECT_URL") == "LOGIN_REDIRECT_URL"
    assert ns.api_name("Global API > nextTick()") == "nextTick"
    assert ns.api_name("Session.execute() (part 2)") == "Session.execute"
    assert ns.api_name("Field options > choices") == "choices"
    assert ns.api_name("useQuery(options)") == "useQuery"
    for words in ("Model signals > Overriding predefined model methods", "Install Django", "JsonResponse objects",
                  "Response"):
        assert ns.api_name(words) is None, words


def test_a_description_is_the_first_prose_sentence(ns: ModuleType) -> None:
    content = ("`django.db.models.signals.post_save`\n\nLike `pre_save`, but sent at the end of the\n"
               "`save()` method. Arguments sent with this signal:\n\n    code\n")
    assert ns.description(content, 1) == "Like pre_save, but sent at the end of the save() method."
    assert ns.description(content, 2) == ("Like pre_save, but sent at the end of the save() method. "
                                          "Arguments sent with this signal:")
    assert ns.description("```py\nx = 1\n```\n\n# Title\n\nThe **first** [one](x.md).\n", 1) == "The first one."
    assert ns.description("    only code\n", 1) == ""
