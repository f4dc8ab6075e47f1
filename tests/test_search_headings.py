"""A section whose own heading is the query's subject: "what is X" finds the glossary entry
for X before a reference page whose every section names X."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import context_cli as cx
from context_cli.search.engine import rank
from context_cli.search.evidence import heading_words
from context_cli.search.query import Query
from context_cli.search.searcher import open_searcher

REFERENCE = "# QuerySet API reference\n\n" + "".join(
    f"## QuerySet {name}\n\nCalling {name} on a queryset returns a new queryset; the queryset is lazy.\n\n"
    for name in ("filter", "exclude", "annotate", "order_by", "distinct"))
GLOSSARY = ("# Glossary\n\n## queryset\n\nAn object representing some set of rows to be fetched from the database.\n\n"
            "## slug\n\nA short label for something, containing only letters, numbers and hyphens.\n")


def first_pages(tmp_path: Path, query: str, bm25_index: bool = True) -> list[str]:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "querysets.md").write_text(REFERENCE, "utf-8")
    (docs / "glossary.md").write_text(GLOSSARY, "utf-8")
    installed = cx.build(docs, tmp_path / "p.db", name="p", version="1.0.0", embed=False)
    if not bm25_index:  # as in a package from elsewhere: FTS5 ranks it, and every heading is read
        with sqlite3.connect(installed.path) as db:
            db.execute("DROP TABLE bm25_terms")
    s = open_searcher(installed)
    ranked, _, _ = rank(query, [s], "lexical")
    assert (s.bm25 is not None) == bm25_index
    return list(dict.fromkeys(c.doc_path for c in ranked))


@pytest.mark.parametrize("bm25_index", [True, False])
def test_what_is_x_finds_the_glossary_entry(tmp_path: Path, bm25_index: bool) -> None:
    assert first_pages(tmp_path, "what is a queryset", bm25_index)[0] == "glossary.md"


def test_a_plain_query_still_prefers_the_page_about_it(tmp_path: Path) -> None:
    assert first_pages(tmp_path, "queryset filter")[0] == "querysets.md"


def test_heading_words_and_weight() -> None:
    assert heading_words("QuerySet API > ``get_or_create()`` (part 2)") == ["get_or_create"]
    assert heading_words("Glossary") == ["glossary"]
    def asks_definition(text: str) -> bool:
        return Query.of(text).asks_definition

    assert asks_definition("What's a slug?") and not asks_definition("slug field max length")
    assert asks_definition("slug meaning") and asks_definition("what is a slug")
