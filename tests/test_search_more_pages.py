"""A long page whose many sections all match cannot push every other page out of the ranking."""

from __future__ import annotations

from pathlib import Path

import context_cli as cx
from context_cli.search.engine import JUDGED, rank
from context_cli.search.index import open_searchable
from context_cli.search.pages import more_pages


def test_a_page_past_the_judged_sections_keeps_its_best_section(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    sections = "".join(f"## Stream option {i}\n\nThe stream option {i} tunes the stream buffer.\n\n"
                       for i in range(JUDGED + 10))
    (docs / "reference.md").write_text(f"# Stream reference\n\n{sections}", "utf-8")
    (docs / "guide.md").write_text("# Guide\n\n## Reading events\n\nA stream yields events as they arrive; "
                                   "read them in a loop and close the connection when you are done.\n", "utf-8")
    installed = cx.build(docs, tmp_path / "p.db", name="p", version="1.0.0", embed=False)
    ranked, _, _ = rank("stream", [open_searchable(installed)], "lexical")
    paths = [c.doc_path for c in ranked]
    assert paths[:JUDGED] == ["reference.md"] * JUDGED  # the long page still comes first
    assert "guide.md" in paths


def test_more_pages_adds_only_unseen_pages_after_the_head() -> None:
    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6), (5, 0.5)]
    where = {1: ("a", ""), 2: ("a", ""), 3: ("a", ""), 4: ("b", ""), 5: ("b", "")}
    assert more_pages(ranked, where, head=2, extra=5) == [(1, 0.9), (2, 0.8), (4, 0.6)]
    assert more_pages(ranked, where, head=2, extra=0) == [(1, 0.9), (2, 0.8)]
