"""A question is parsed once (`Query`): its fields are the tokenizer's rules, whatever the text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from context_cli.search.query import MAX_PHRASES, MAX_TERM_CHARS, MAX_TERMS, STOPWORDS, Query, uncontracted

TOKEN = re.compile(r"[^\W_]+")
PIECES = st.sampled_from(list("abcXYZ09_-.?!'\" éİ\u0301\u00a0日本")
                         + ["max_tokens", "how ", "the ", "a" * 70, "what's", "don't", "I'm", "e.g.", "’s"])
TEXT = st.lists(PIECES, max_size=40).map("".join) | st.text(max_size=80)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_a_query_holds_the_tokenizers_words_terms_and_phrases(text: str) -> None:
    q, text = Query.of(text), uncontracted(text)
    words = [t.lower() for t in TOKEN.findall(text) if len(t) <= MAX_TERM_CHARS]
    assert list(q.words) == words
    kept = [t for t in words if t not in STOPWORDS] or words
    assert list(q.terms) == list(dict.fromkeys(kept))[:MAX_TERMS]
    split = [tuple(t.lower() for t in TOKEN.findall(w)) for w in text.split()]
    assert list(q.phrases) == [p for p in split if 1 < len(p) <= 8][:MAX_PHRASES]
    assert q.tokens == {t.lower() for t in TOKEN.findall(text)}


def test_what_a_question_asks_is_the_whole_questions() -> None:
    q = Query.of("what is tailwind spacing")
    alone = q.without_library("tailwindcss")
    assert alone.text == "what is spacing" and alone.asks_definition and alone.terms == ("spacing",)
    assert Query.of("max_tokens").identifier == "max_tokens" and Query.of("what is max_tokens").identifier is None
    assert q.without_library("django") is q  # (not named: the same question)


def test_vs_is_not_searched_in_a_comparison() -> None:
    """"X vs Y" sets two sides against each other: "vs" as a word only matches "VS Code"."""
    assert Query.of("null vs blank").terms == ("null", "blank")
    assert Query.of("select_related versus prefetch_related").terms == ("select", "related", "prefetch")
    assert Query.of("VS Code extension settings").terms == ("vs", "code", "extension", "settings")
    assert Query.of("vs").terms == ("vs",)


@pytest.mark.parametrize("text, terms, phrases", [
    ("what's the difference between x and y", ("difference", "x", "y"), ()),
    ("why doesn't my hook run", ("hook", "run"), ()),
    ("I can't connect, it won't start", ("connect", "start"), ()),
    ("what’s a session? i.e. where it's kept", ("session", "kept"), ()),
    ("Claude's tools", ("claude", "s", "tools"), (("claude", "s"),)),  # a possessive is a name's
    ("foo.e.g bar", ("foo", "e", "g", "bar"), (("foo", "e", "g"),)),  # not "e.g." alone
])
def test_a_contraction_is_searched_as_the_words_it_stands_for(text: str, terms: tuple[str, ...],
                                                                 phrases: tuple[tuple[str, ...], ...]) -> None:
    """"what's" is what and s to the tokenizer: the fragment s (and t of "don't") matched every
    "it's" of the docs. The question is searched as the words the contractions stand for."""
    q = Query.of(text)
    assert (q.terms, q.phrases) == (terms, phrases)


def test_a_stopword_that_starts_a_name_is_searched_joined_to_the_words_after_it() -> None:
    from context_cli.search.query import MAX_JOINED, Query

    assert Query.of("use effect").joined == ("useeffect",)
    assert Query.of("use layout effect").joined == ("uselayout", "uselayouteffect")
    assert Query.of("how do I get query data").joined == ("getquery", "getquerydata")
    assert Query.of("exit code of a test class").joined == ()  # content words alone: their phrase is meant
    assert Query.of("is it in to").joined == ()  # stopwords alone join to nothing
    assert Query.of("what tokens are the new ones").joined == ()  # `the`, `what` start no name
    assert Query.of("is valid on click with router").joined == ("isvalid", "onclick", "withrouter")
    assert Query.of("set state or create app").joined == ("setstate", "createapp")  # (no stopwords, but heads)
    assert Query.of("Claude's use").joined == ()  # a possessive's `s` joins to nothing
    assert "useeffect" not in Query.of("useeffect: use effect").joined  # a word of the question already
    assert Query.of("use 2 v3").joined == ()  # letters only
    assert len(Query.of(" ".join(f"use {w}" for w in "alpha beta gamma delta epsilon zeta eta theta iota".split()))
               .joined) == MAX_JOINED
    assert Query.of("use effect").fts_match() == '"effect" OR "useeffect"'
