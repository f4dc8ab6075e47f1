"""A long page whose many sections all match cannot push every other page out of the ranking."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import context_cli as cx
from context_cli.search.engine import rank
from context_cli.search.options import DEFAULT_PARAMS
from context_cli.search.rank import more_pages
from context_cli.search.searcher import open_searcher


def test_a_page_past_the_judged_sections_keeps_its_best_section(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    sections = "".join(f"## Stream option {i}\n\nThe stream option {i} tunes the stream buffer.\n\n"
                       for i in range(DEFAULT_PARAMS.judged + 10))
    (docs / "reference.md").write_text(f"# Stream reference\n\n{sections}", "utf-8")
    (docs / "guide.md").write_text("# Guide\n\n## Reading events\n\nA stream yields events as they arrive; "
                                   "read them in a loop and close the connection when you are done.\n", "utf-8")
    installed = cx.build(docs, tmp_path / "p.db", name="p", version="1.0.0", embed=False)
    ranked, _, _ = rank("stream", [open_searcher(installed)], "lexical")
    paths = [c.doc_path for c in ranked]
    assert paths[:DEFAULT_PARAMS.judged] == ["reference.md"] * DEFAULT_PARAMS.judged  # the long page still comes first
    assert "guide.md" in paths


def test_more_pages_adds_only_unseen_pages_after_the_head() -> None:
    # Two packages, each's candidates best first: pages 0 and 1 in the first, 2 and 3 in the second.
    pkg = np.array([0, 0, 0, 0, 0, 1, 1, 1])
    page = np.array([0, 0, 0, 1, 1, 2, 3, 3])
    assert more_pages(pkg, page, head=2, extra=5).tolist() == [True, True, False, True, False, True, True, False]
    assert more_pages(pkg, page, head=2, extra=0).tolist() == [True, True, False, False, False, True, True, False]
    assert more_pages(pkg, page, head=1, extra=1).tolist() == [True, False, False, True, False, True, True, False]
