"""The answer in reading order: the sections of a page together, pages best first, each hit
carrying its page; the Markdown shows a page's sections under one heading."""

from __future__ import annotations

import re
from pathlib import Path

import context_cli as cx
from context_cli.surfaces.render import to_markdown

PAGES = {
    "streams.md": "# Streams\n\n## Opening a stream\n\nOpen a stream to read events as they come.\n\n"
                  "## Unrelated setup\n\nInstall the package with pip.\n\n"
                  "## Cancelling a stream\n\nCancel a stream by closing it; the stream stops at once.\n",
    "errors.md": "# Errors\n\n## Retries\n\nA stream that fails is retried three times.\n\n"
                 "## Timeouts\n\nRequests time out after ten seconds.\n",
    "other.md": "# Other\n\n## Colours\n\nThemes change colours.\n",
}


def build(tmp_path: Path) -> cx.Installed:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in PAGES.items():
        (docs / name).write_text(text, "utf-8")
    return cx.build(docs, tmp_path / "p.db", name="p", version="1.0.0", embed=False)


def test_sections_of_a_page_are_adjacent_and_in_page_order(tmp_path: Path) -> None:
    answer = cx.search("cancel a stream", [build(tmp_path)], budget=2000)
    hits = answer.results
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert hits[0].page is not None and hits[0].page.rank == 1 and hits[0].page.source == "streams.md"
    sources = [h.source for h in hits]
    assert sources == sorted(sources, key=sources.index)  # each page's hits form one run
    assert [h.page.rank for h in hits if h.page] == sorted(h.page.rank for h in hits if h.page)
    streams = " | ".join(h.title for h in hits if h.source == "streams.md")  # neighbours may be merged
    assert streams.index("Opening a stream") < streams.index("Cancelling a stream")  # the page's own order
    page = hits[0].to_dict()["page"]
    assert page == {"rank": 1, "title": "Streams", "source": "streams.md", "url": None}


def test_markdown_shows_each_page_once_with_its_sections(tmp_path: Path) -> None:
    answer = cx.search("cancel a stream", [build(tmp_path)], budget=2000)
    text = to_markdown(answer)
    assert text.count("## 1. Streams") == 1
    assert "### Opening a stream + Unrelated setup + Cancelling a stream" in text
    pages = {h.source for h in answer.results}
    assert len(re.findall(r"^## \d+\. ", text, re.M)) == len(pages)
