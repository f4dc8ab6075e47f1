"""The package prior (search/prior.py): which package a question is about, in a search over
several (docs/search.md, "The ranking rules", 4)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import context_cli as cx
from context_cli.search.engine import rank
from context_cli.search.options import DEFAULT_PARAMS
from context_cli.search.prior import log_weights, weights
from context_cli.search.query import Query
from context_cli.search.searcher import open_searcher

FIXTURES = Path(__file__).parent / "fixtures" / "eval"


def test_a_named_package_wins_and_weights_are_relative() -> None:
    got = log_weights([True, False], [{"rout": 5}, {"rout": 5}], [10, 10], [1.0, 1.0], 3.0, 1.0)
    assert got == [3.0, 0.0]
    w = weights(got)
    assert w[0] == 1.0 and w[1] == math.exp(-3.0)
    assert weights(log_weights([True, False], [{}, {}], [1, 1], [1.0, 1.0], 0.0, 0.0)) == [1.0, 1.0]


def test_vocabulary_counts_only_the_terms_every_package_was_asked() -> None:
    # "flask" was left out of the flask package's question (it names it): it says nothing here.
    got = log_weights([False, False], [{"rout": 9}, {"rout": 1, "flask": 0}], [10, 10], [5.0, 5.0], 0.0, 1.0)
    assert got[0] > 0 > got[1] and abs(sum(got)) < 1e-12
    assert log_weights([False, False], [{"x": 0}, {"x": 0}], [10, 10], [5.0, 5.0], 0.0, 1.0) == [0.0, 0.0]  # in none
    assert log_weights([True, False], [{"rout": 9}, {"rout": 1}], [10, 10], None, 3.0, 1.0) == [3.0, 0.0]  # name only


def test_a_package_of_long_sections_does_not_win_every_word() -> None:
    # The same share of sections, but the second's are four times as long: per token, its
    # words are rarer.
    got = log_weights([False, False], [{"rout": 4}, {"rout": 4}], [10, 10], [100.0, 400.0], 0.0, 1.0)
    assert got[0] > got[1]


def test_one_package_has_no_prior() -> None:
    assert weights(log_weights([True], [{"x": 1}], [1], [1.0], 3.0, 1.0)) == [1.0]


@given(st.lists(st.integers(0, 50), min_size=2, max_size=6), st.lists(st.sampled_from("ab"), min_size=1, max_size=2))
def test_scores_are_centred_and_finite(dfs: list[int], query: list[str]) -> None:
    df = [{t: (d if t == "a" else 50 - d) for t in query} for d in dfs]
    got = log_weights([False] * len(dfs), df, [60] * len(dfs), [7.0] * len(dfs), 3.0, 1.0)
    assert all(np.isfinite(got)) and abs(sum(got)) < 1e-9
    w = weights(got)
    assert max(w) == 1.0 and all(0 < x <= 1 for x in w)


def test_a_question_names_a_library_as_without_library_reads_it() -> None:
    assert Query.of("dark mode in tailwind").names_library("tailwindcss")
    assert not Query.of("tail recursion").names_library("tailwindcss")
    assert not Query.of("return an HTTP 404 from a view").names_library("httpx")  # `http`: an English word
    assert not Query.of("a fast startup").names_library("fastapi")
    assert Query.of("django: the admin").names_library("django")
    assert Query.of("tanstack query: prefetch on the server").names_library("tanstack-query")
    assert not Query.of("react query: prefetch on the server").names_library("@tanstack/react-query")


def test_a_question_goes_to_the_package_whose_words_it_uses(tmp_path: Path) -> None:
    """Two real docs trees (click's and Anthropic's), searched together without vectors: each
    question's first result comes from the package whose own words it uses, with the prior;
    the second click question came from the wrong package without it (so did the first while
    its "I'm" was searched as i and m, which Anthropic's docs hold)."""
    click = cx.build(FIXTURES / "click-docs", tmp_path / "click.db", name="click", version="8.0.0", embed=False)
    claude = cx.build(FIXTURES / "anthropic-docs", tmp_path / "anthropic.db", name="anthropic", version="1.0.0",
                      embed=False)
    both = [open_searcher(claude), open_searcher(click)]
    off = DEFAULT_PARAMS.__class__(name_prior=0.0, vocabulary_prior=0.0)
    wrapped = ("I'm looping over 10,000 files and want to show a bar with an estimated time remaining. Does click "
               "have something built in?")  # (click's questions in bench/sets/click)
    settings = ("Where should my tool keep its per-user settings file so that it ends up in the right place on "
                "Windows, macOS and Linux?")
    for question, library in ((wrapped, "click@8.0.0"), (settings, "click@8.0.0"),
                              ("stream the model's response tokens with the messages API", "anthropic@1.0.0")):
        ranked, _, _ = rank(question, both, "lexical")
        assert ranked[0].library == library, question
    ranked, _, _ = rank(settings, both, "lexical", off)
    assert ranked[0].library == "anthropic@1.0.0"


def test_a_split_identifier_counts_as_the_packages_words(tmp_path: Path) -> None:
    """`send_file` is searched as send and file and as the phrase of the two: both packages
    hold the words, only one the name. The phrase's section counts weigh in the prior beside
    the words' (without them the package of many files and sends came first)."""
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    alpha.mkdir()
    beta.mkdir()
    (alpha / "files.md").write_text("# Files\n\n## Sending\n\nTo send a large file, open the file and send it in "
                                    "parts; every file you send is read once.\n\n## Streams\n\nA stream sends what "
                                    "you write to it, file by file.\n", "utf-8")
    (alpha / "other.md").write_text("# Other\n\n## Send\n\nSend mail with the mailer. Files attach to a message.\n",
                                    "utf-8")
    (beta / "helpers.md").write_text("# Helpers\n\n## send_file\n\nCall send_file(path) to stream a file from disk as "
                                     "the response.\n\n## Redirects\n\nredirect(url) answers with a redirect.\n", "utf-8")
    (beta / "views.md").write_text("# Views\n\n## Returning\n\nA view returns a response: text, JSON or a template.\n",
                                   "utf-8")
    both = [open_searcher(cx.build(folder, tmp_path / f"{folder.name}.db", name=folder.name, version="1.0.0",
                                   embed=False)) for folder in (alpha, beta)]
    ranked, _, _ = rank("stream a file to the client with send_file", both, "lexical")
    assert (ranked[0].library, ranked[0].doc_path) == ("beta@1.0.0", "helpers.md")
