"""A page's best section is never lost to a weaker one of the same page: where the pack shows a
page but left out a section of it with a stronger verdict, the stronger takes the weaker one's
place when the budget allows. The pages and their order stay the ranking's, and the chosen
sections are laid out in reading order."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import EVAL_CORPUS

import context_cli as cx
from context_cli.document import estimate_tokens
from context_cli.search.engine import SearchOptions, answer, rank
from context_cli.search.pack import Candidate, choose, pack, reading_order
from context_cli.search.searcher import open_searcher
from context_cli.store.store import Store


def section(cid: int, title: str, verdict: str, tokens: int, page: str = "patterns/javascript.rst") -> Candidate:
    content = "x" * (4 * tokens)
    return Candidate(library="flask@3.1.0", chunk_id=cid, doc_path=page, doc_title="JavaScript, fetch, and JSON",
                     section_title=title, content=content, tokens=estimate_tokens(content), url=None,
                     score=1.0 / cid, verdict=verdict)


def test_the_strong_section_takes_the_place_of_a_weaker_one_of_its_page() -> None:
    """The issue's case: "Following Redirects" (MODERATE) ranks above "Return JSON from Views"
    (STRONG) of the same page, and at 500 tokens only one fits."""
    ranked = [section(5, "Following Redirects", "MODERATE", 300), section(7, "Return JSON from Views", "STRONG", 300),
              section(2, "Other page", "WEAK", 150, page="quickstart.rst")]
    assert [c.section_title for c in pack(ranked, 500, 10)] == ["Return JSON from Views", "Other page"]
    both = pack(ranked, 2000, 10)  # room for both: laid out in the page's own order
    assert [c.section_title for c, _ in reading_order(both)] == [
        "Following Redirects", "Return JSON from Views", "Other page"]


def test_pages_keep_their_order_and_a_swap_never_breaks_the_budget() -> None:
    ranked = [section(5, "Weak first", "WEAK", 200), section(1, "Another page", "MODERATE", 200, page="b.rst"),
              section(9, "Strong but large", "STRONG", 400), section(8, "Strong and small", "STRONG", 150)]
    chosen = pack(ranked, 450, 10)
    assert [c.section_title for c in chosen] == ["Strong and small", "Another page"]  # the page keeps its place
    # b.rst does not fit beside the first; the large STRONG one would not fit in its place
    assert [c.section_title for c in pack(ranked, 350, 10)] == ["Weak first", "Strong and small"]
    assert sum(c.tokens for c in pack(ranked, 300, 10)) <= 300


def test_the_per_page_cap_keeps_the_strongest() -> None:
    ranked = [section(i, f"W{i}", "WEAK", 10) for i in (1, 2, 3)] + [section(4, "S4", "STRONG", 10)]
    # three a page: the STRONG fourth in the place of the weakest, lowest ranked (W3)
    assert [c.section_title for c in pack(ranked, 2000, 10)] == ["W1 + W2", "S4"]


@pytest.fixture(scope="module")
def eval_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eval") / "anthropic@1.0.0.db"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CONTEXT_HOME", str(tmp_path_factory.mktemp("build-home")))
        cx.build(EVAL_CORPUS, out, name="anthropic", version="1.0.0")
    return out


QUESTIONS = ["How do the streaming API delta formats differ between tool_use content blocks and text content blocks?",
             "What is one key benefit of using examples when prompt engineering with Claude?",
             "When putting words in Claude's mouth, what header limits the response to a single token?",
             "How do I stream responses?", "prompt caching", "vision image size", "tool use with JSON",
             "rate limits and errors", "What is the context window of Claude?"]


@pytest.mark.parametrize("budget", [300, 500, 800])
def test_no_page_of_a_real_answer_hides_a_stronger_section_that_fits(eval_db: Path, budget: int) -> None:
    """Over a real package with vectors: in every answer, a page whose shown sections include
    a weaker one has no judged stronger section left out that fits in that one's place; and
    the rule matters: taking sections in rank order alone would have hidden one here."""
    installed = Store().install(eval_db)
    order = {"STRONG": 2, "MODERATE": 1, "WEAK": 0}
    hidden_by_rank_order = 0
    for q in QUESTIONS:
        ranked, _, _ = rank(q, [open_searcher(installed)])
        found = answer(q, [installed], SearchOptions(budget=budget))
        shown = {(h.source, part) for h in found.results for part in h.title.split(" > ", 1)[-1].split(" + ")}
        for h in found.results:
            for c in ranked:
                if c.doc_path == h.source and (c.doc_path, c.section_title) not in shown and \
                        order[c.verdict] > order[h.verdict] and " + " not in h.title:
                    assert found.tokens - h.tokens + estimate_tokens(c.content) > budget, (q, c.title, h.title)
        sizes, paths = [estimate_tokens(c.content) for c in ranked], [c.doc_path for c in ranked]
        by_rank = choose(range(len(ranked)), budget, 10, size=sizes.__getitem__, page=paths.__getitem__,
                         shrink=lambda k, room: k)
        pages = {ranked[k].doc_path for k in by_rank}
        hidden_by_rank_order += any(
            c.verdict == "STRONG" and c.doc_path in pages and k not in by_rank
            and any(ranked[j].doc_path == c.doc_path and ranked[j].verdict != "STRONG" for j in by_rank)
            for k, c in enumerate(ranked))
    assert hidden_by_rank_order  # (the case this test is about occurs in these questions)
