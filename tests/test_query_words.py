"""Words that only name the library searched do not choose among its pages."""

from __future__ import annotations

from pathlib import Path

import pytest

import context_cli as cx
from context_cli.search.query import Query


@pytest.mark.parametrize("query, name, words", [
    ("dark mode in tailwind", "tailwindcss", "dark mode in"),
    ("how to use django forms", "django", "how to use forms"),
    ("install flask", "flask", "install"),
    ("react query cache", "@tanstack/react-query", "react query cache"),  # not the whole name, not a prefix
    ("tanstack query with the app router", "tanstack-query", "with the app router"),  # a name written as words
    ("deploy next.js on vercel", "nextjs", "deploy on vercel"),
    ("theme with styled components", "styled-components", "theme with"),
    ("use the vue router api", "vue-router", "use the api"),
    ("use the router of vue", "vue-router", "use the router of vue"),  # (not in a row)
    ("tailwind", "tailwindcss", "tailwind"),  # nothing else would be left
    ("tail of a list", "tailwindcss", "tail of a list"),  # too short to be the name
    ("return an http 404", "httpx", "return an http 404"),  # a prefix that is an English word
    ("format a date", "date-fns", "format a date"),
    ("the next page of results", "nextjs", "the next page of results"),
    ("set httpx timeouts", "httpx", "set timeouts"),
])
def test_without_library_name(query: str, name: str, words: str) -> None:
    assert Query.of(query).without_library(name).text == words


def test_naming_the_library_does_not_count_as_a_missing_term(tmp_path: Path) -> None:
    """Docs rarely repeat their library's name; "dark mode in widgetkit" over widgetkit's
    docs must not report `widgetkit` as missing, nor lose coverage for it."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for topic in ("spacing", "borders", "shadows"):
        (docs / f"{topic}.md").write_text(f"# {topic.title()}\n\n## Using {topic}\n\nUtilities for {topic} "
                                          f"of every size, with variants for hover and focus.\n", "utf-8")
    (docs / "colors.md").write_text("# Colors\n\n## Dark mode\n\nA color theme can follow the system: use the "
                                    "dark variant for a dark mode and the light one by default.\n", "utf-8")
    pkg = cx.build(docs, tmp_path / "w.db", name="widgetkit", version="1.0.0", embed=False)
    top = cx.search("dark mode in widgetkit", [pkg]).results[0]
    assert top.source == "colors.md"
    assert top.signals["missingTerms"] == [] and top.signals["coverage"] == 1.0
