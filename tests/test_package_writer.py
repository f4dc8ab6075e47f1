"""The writer's page size: 4 KiB for most packages, 16 KiB past LARGE_TEXT characters of text."""

from __future__ import annotations

import sqlite3

from helpers import make_package

from context_cli.package.reader import open_package
from context_cli.package.writer import LARGE_PAGE, LARGE_TEXT, SMALL_PAGE
from context_cli.search.engine import SearchOptions, answer
from context_cli.store.store import Store


def _page_size(path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("PRAGMA page_size").fetchone()[0])


def test_a_small_package_keeps_sqlites_default_pages(tmp_path):
    path = make_package(tmp_path / "small.db")
    assert _page_size(path) == SMALL_PAGE


def test_a_large_package_gets_large_pages_and_reads_back_whole(tmp_path):
    body = "Streaming responses and cancellation tokens explained at length. " * 40  # 2,640 characters
    sections = [(f"guide/p{i // 10}.md", f"Part {i}", body + ("zebra crossing" if i == 123 else "")) for i in
                range(LARGE_TEXT // len(body) + 1)]
    path = make_package(tmp_path / "large.db", sections=sections)
    assert _page_size(path) == LARGE_PAGE
    with open_package(path, deep=True) as pkg:
        assert [c.content for _, c in pkg.chunks()] == [s[2] for s in sections]
        assert pkg.has_bm25 and pkg.has_bm25_phrases
    store = Store(tmp_path / "home")
    found = answer("zebra crossing", [store.install(path)], SearchOptions())
    assert found.results[0].title == "Guide/P12 > Part 123"
