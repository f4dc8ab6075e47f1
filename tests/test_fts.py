"""The query's FTS5 expression: user words never reach FTS5 as syntax."""

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from context_cli.search.query import Query, terms


def build_match(text: str) -> str | None:
    return Query.of(text).fts_match()


HOSTILE = ["NOT", "AND middleware", 'say "hello', "(((", "*", "NEAR(", "a OR", "-x", "^start", "col:val",
           "naïve café über", "中文 文档", "", "   ", "x" * 10_000, "\x00\x01", "'; DROP TABLE chunks; --"]


def _db():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(a, b, c, tokenize='porter unicode61')")
    db.execute("INSERT INTO t VALUES ('NOT and middleware', 'say hello', 'naïve café 中文 文档 x')")
    return db


def test_hostile_strings_never_raise():
    db = _db()
    for q in HOSTILE:
        m = build_match(q)
        if m is not None:
            db.execute("SELECT rowid FROM t WHERE t MATCH ?", (m,)).fetchall()


def test_unicode_words_are_kept():
    assert terms("naïve café") == ["naïve", "café"]
    db = _db()
    assert db.execute("SELECT count(*) FROM t WHERE t MATCH ?", (build_match("naïve"),)).fetchone()[0] == 1


def test_natural_question_uses_or_not_and():
    m = build_match("how do I stop a stream halfway?")
    assert " OR " in m and '"stop"' in m and '"how"' not in m


def test_identifier_adds_its_phrase():
    assert '"err require esm"' in build_match("ERR_REQUIRE_ESM")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_string_is_safe(q):
    db = _db()
    m = build_match(q)
    if m is not None:
        db.execute("SELECT rowid FROM t WHERE t MATCH ?", (m,)).fetchall()


def test_conversational_filler_is_not_searched() -> None:
    # Words that say how the user feels about the ask, not what it is about, must not outweigh it.
    assert terms("can I really just use django with a database that already has tables in it instead") == [
        "django", "database", "tables"]
    assert terms("still") == ["still"]  # a query of nothing but filler is searched as it is
