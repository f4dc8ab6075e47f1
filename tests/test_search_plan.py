"""The answer's pack is planned from section sizes and only the chosen sections' text is read:
it must be the very pack that packing every ranked section's text gives, whatever the budget."""

from collections import Counter

import pytest
from helpers import EVAL_CORPUS, make_package

from context_cli.adding import AddRequest, add_source
from context_cli.search.engine import SearchOptions, answer, rank
from context_cli.search.pack import pack
from context_cli.search.searcher import open_searcher
from context_cli.store.store import Store

QUERIES = ["How do I stream responses?", "prompt caching", "What is the context window of Claude?",
           "tool use with JSON", "rate limits and errors", "vision image size"]


def _pack_of_all_text(query, installed, opts):
    """What the pack is when every ranked section's text is read first."""
    ranked, _, _ = rank(query, [open_searcher(p) for p in installed])
    return pack(ranked, opts.budget, opts.limit)


def _same_pack(query, installed, opts):
    got = answer(query, installed, opts)
    want = _pack_of_all_text(query, installed, opts)
    assert got.tokens == sum(c.tokens for c in want) <= opts.budget
    assert Counter((h.library, h.title, h.content) for h in got.results) == \
        Counter((c.library, c.title, c.content) for c in want)


@pytest.fixture
def two_libraries():
    a = add_source(AddRequest(source=str(EVAL_CORPUS), name="alpha", version="1.0.0", embed=False)).installed
    b = add_source(AddRequest(source=str(EVAL_CORPUS), name="beta", version="2.0.0", embed=False)).installed
    return [a, b]


@pytest.mark.parametrize("budget,limit", [(2000, 10), (600, 10), (300, 3), (40, 10), (3, 2)])
def test_planned_pack_is_the_pack_of_all_text(two_libraries, budget, limit):
    """Small budgets force a trimmed first section (planned from text then); others read less."""
    opts = SearchOptions(budget=budget, limit=limit)
    for q in QUERIES:
        _same_pack(q, two_libraries, opts)
        _same_pack(q, two_libraries[:1], opts)


def test_text_longer_than_its_stored_size_still_gives_the_same_pack(tmp_path):
    """SQLite measures text up to a NUL: ranked second, a section with one inside is planned to
    fit but does not, so the plan reached its limit too early; the pack is then made from every
    ranked section's text, as if nothing had been planned."""
    hidden = "streaming cancellation\x00" + "x " * 2000
    sections = [("a.md", "Streaming cancellation", "streaming cancellation"),
                ("b.md", "Streaming cancellation", hidden)] + [
        (f"n{i}.md", "Note", f"streaming note {i} " * 10) for i in range(5)]
    installed = [Store().install(make_package(tmp_path / "nul.db", name="nul", sections=sections))]
    ranked, _, _ = rank("streaming cancellation", [open_searcher(p) for p in installed])
    assert [c.doc_path for c in ranked[:2]] == ["a.md", "b.md"]  # the case this test is about
    for budget in (300, 2000):
        _same_pack("streaming cancellation", installed, SearchOptions(budget=budget, limit=3))
