"""bench/name_scout.py: which headings are API names, and what describes their sections."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def ns() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_name_scout", BENCH / "name_scout.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_name_scout"] = mod
    spec.loader.exec_module(mod)
    return mod


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
