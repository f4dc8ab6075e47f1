"""Notebooks, plain text, decoding, dispatch by suffix, lazy imports and big files."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from context_cli.errors import ContextError
from context_cli.parse import SUFFIXES, ParseError, ParserFailure, parse_file, parse_html, parse_markdown, parse_rst
from context_cli.parse import split as splitting

FIXTURES = Path(__file__).parent / "fixtures" / "parse"


def body(doc) -> str:
    return "\n\n".join(b.text for b in doc.blocks)


def headings(doc) -> list[tuple[int, str]]:
    return [(b.level, b.title) for b in doc.blocks if b.level]


# --- notebooks ------------------------------------------------------------------------------


def test_notebook_cells_and_outputs_dropped():
    doc = parse_file("notebooks/analysis.ipynb", (FIXTURES / "analysis.ipynb").read_bytes())
    assert doc.title == "Data analysis"
    assert headings(doc) == [(2, "Plotting")]
    assert doc.blocks[0].text == (
        "Load the data first.\n\n```python\nimport pandas as pd\n# a comment, not a heading\n"
        "df = pd.read_csv('x.csv')\n```"
    )
    assert doc.blocks[1].text == "Then plot it.\n\n```python\ndf.plot()\n```"
    text = body(doc)
    assert "OUTPUT-SHOULD-NOT-APPEAR" not in text and "raw cell" not in text and "iVBOR" not in text


def test_notebook_language_from_metadata_and_title_from_name():
    nb = {"cells": [{"cell_type": "code", "source": "println(1)", "outputs": []}],
          "metadata": {"language_info": {"name": "Julia"}}, "nbformat": 4}
    doc = parse_file("nb/first-steps.ipynb", json.dumps(nb).encode())
    assert doc.title == "First steps"
    assert body(doc) == "```julia\nprintln(1)\n```"


@pytest.mark.parametrize("data", [b"{not json", b"[1, 2]", b'{"cells": 3}'])
def test_invalid_notebook_is_a_parse_error(data):
    with pytest.raises(ParseError, match="bad.ipynb"):
        parse_file("bad.ipynb", data)


# --- plain text -----------------------------------------------------------------------------


def test_plain_text_is_one_block_with_paragraphs():
    doc = parse_file("docs/release-notes.txt", b"First line\nsecond line   \n\n\n\n# not a heading\n\tindented\n")
    assert doc.title == "Release notes"
    assert [(b.level, b.title) for b in doc.blocks] == [(0, "")]
    assert doc.blocks[0].text == "First line\nsecond line\n\n# not a heading\n\tindented"


def test_empty_text_has_no_blocks():
    assert parse_file("docs/empty.txt", b"\n\n").blocks == []


# --- decoding -------------------------------------------------------------------------------


def test_utf8_bom_utf16_and_legacy_encodings():
    assert parse_file("a.md", "\ufeff# Título\n\nçava".encode("utf-8")).title == "Título"
    assert parse_file("b.md", "# Grüße\n\ntext".encode("utf-16")).title == "Grüße"
    assert body(parse_file("c.txt", "naïve café – “quoted”".encode("cp1252"))) == "naïve café – “quoted”"
    assert body(parse_file("d.txt", b"line\r\nother\rthird")) == "line\nother\nthird"


@pytest.mark.parametrize(
    "data",
    [bytes(range(256)) * 8, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 64, b"text\x81\x8d\x8f\x90\x9d"],
)
def test_undecodable_bytes_are_a_parse_error(data):
    with pytest.raises(ParseError, match="image.md"):
        parse_file("docs/image.md", data)


def test_parse_error_is_a_context_error():
    assert issubclass(ParseError, ContextError) and issubclass(ParserFailure, ParseError)


def test_unforeseen_failures_become_parser_failures_naming_the_page():
    with pytest.raises(ParserFailure, match=r"^web/page.html: could not be parsed \(TypeError"):
        parse_html("web/page.html", None)  # type: ignore[arg-type]


# --- dispatch -------------------------------------------------------------------------------


def test_suffixes():
    assert SUFFIXES == frozenset({".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".asciidoc",
                                  ".asc", ".html", ".htm", ".ipynb"})


@pytest.mark.parametrize(
    "path, data, title",
    [
        ("a/x.markdown", b"# MD\n\ntext", "MD"),
        ("a/X.MD", b"# Upper\n\ntext", "Upper"),
        ("a/x.mdx", b"import X from 'y'\n\n# MDX\n\n<X>text</X>", "MDX"),
        ("a/x.rst", b"RST\n===\n\ntext", "RST"),
        ("a/x.adoc", b"= Adoc\n\ntext", "Adoc"),
        ("a/x.asciidoc", b"= Asciidoc\n\ntext", "Asciidoc"),
        ("a/x.asc", b"= Asc\n\ntext", "Asc"),
        ("a/x.html", b"<h1>Html</h1><p>text</p>", "Html"),
        ("a/x.htm", b"<h1>Htm</h1><p>text</p>", "Htm"),
        ("a/some-notes.txt", b"Title?\n=====\n\ntext", "Some notes"),
    ],
)
def test_dispatch_by_suffix(path, data, title):
    doc = parse_file(path, data, url="https://example.com/x")
    assert doc.title == title
    assert doc.path == path and doc.url == "https://example.com/x"
    assert "text" in body(doc)
    assert "import" not in body(doc) and "<" not in body(doc)


def test_txt_files_known_to_hold_markup():
    assert headings(parse_file("llms-full.txt", b"# Lib\n\n## Part\n\nx")) == [(2, "Part")]
    assert headings(parse_file("_sources/page.rst.txt", b"T\n=\n\nSub\n---\n\nx")) == [(2, "Sub")]
    assert headings(parse_file("_sources/page.md.txt", b"# T\n\n## Sub\n")) == [(2, "Sub")]


@pytest.mark.parametrize("path", ["a/x.py", "a/Makefile", "a/x.json", "a/x.png", "a/.md"])
def test_unhandled_suffixes_give_none(path):
    assert parse_file(path, b"\x00\x01 binary or not") is None


def test_importing_the_package_loads_no_parser_library():
    code = ("import sys, context_cli.parse as p; "
            "print(sorted(m for m in ('markdown_it', 'docutils', 'lxml', 'readability', 'yaml') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- big files ------------------------------------------------------------------------------


def _big_markdown(size: int) -> str:
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod".split()
    para = " ".join(words[i % len(words)] for i in range(250)) + " and `code`.\n\n"  # light on tokens: fast
    code = "```python\n" + "x = compute(value)\n" * 10 + "# not a heading\n```\n\n"
    parts = ["---\ntitle: Big Page\n---\n\n# Big Page\n\nIntro.\n\n"]
    total, n = len(parts[0]), 0
    while total < size:
        section = f"## Section {n}\n\n{para * 3}{code}### Detail {n}\n\n{para}"
        parts.append(section)
        total += len(section)
        n += 1
    return "".join(parts)


def test_big_markdown_file_is_parsed_in_bounded_memory():
    data = _big_markdown(3 * 2**20).encode()
    sections = data.count(b"\n## Section ")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        doc = parse_file("docs/big.md", data)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2**20, f"peak {peak / 2**20:.1f} MiB"
    assert doc.title == "Big Page"
    found = headings(doc)
    assert found[:2] == [(2, "Section 0"), (3, "Detail 0")]
    assert len(found) == 2 * sections
    assert found[-1] == (3, f"Detail {sections - 1}")
    assert "# not a heading" in doc.blocks[1].text
    assert all("---\ntitle" not in b.text for b in doc.blocks)


def test_big_plain_text_stays_one_block():
    text = ("A paragraph of plain text that goes on.\n\n" * 40000).encode()
    doc = parse_file("big.txt", text)
    assert len(doc.blocks) == 1 and len(doc.blocks[0].text) > 1_000_000


@pytest.fixture
def small_pieces(monkeypatch):
    """Make the split thresholds tiny so piece handling is exercised on small texts."""
    monkeypatch.setattr(splitting, "BIG", 600)
    monkeypatch.setattr(splitting, "PIECE", 300)


def _sections_rst() -> str:
    out = ["=========\nRST Title\n=========\n\nIntro paragraph.\n\n"]
    for n in range(6):
        out.append(f"Part {n}\n=======\n\nText of part {n}.\n\n::\n\n    code {n}\n\n")
        out.append(f"Sub {n}\n------\n\n" + "Filler sentence here. " * 8 + "\n\n")
        out.append(f"Deep {n}\n~~~~~~\n\nDeep text {n}.\n\n")
    return "".join(out)


def test_split_rst_keeps_levels_of_the_whole_parse(small_pieces):
    text = _sections_rst()
    pieces = list(splitting.split(text, splitting.rst_boundaries))
    assert len(pieces) > 3 and "".join(pieces) == text
    doc = parse_rst("big.rst", text)
    splitting.BIG = 10**9
    whole = parse_rst("big.rst", text)
    assert doc.title == whole.title == "RST Title"
    assert headings(doc) == headings(whole)
    assert [b.text for b in doc.blocks] == [b.text for b in whole.blocks]
    assert "CTXSPLITMARKER" not in body(doc)


def test_split_markdown_and_asciidoc_keep_headings(small_pieces):
    md = "# Title\n\nintro\n\n" + "".join(
        f"## H{n}\n\n```\n# fenced {n}\n```\n\n" + "words " * 30 + f"\n\n### S{n}\n\ntext\n\n" for n in range(8))
    doc = parse_markdown("big.md", md)
    assert doc.title == "Title"
    assert headings(doc) == [x for n in range(8) for x in ((2, f"H{n}"), (3, f"S{n}"))]
    assert all("# fenced" in b.text for b in doc.blocks if b.level == 2)

    adoc = "= Title\n\nintro\n\n" + "".join(
        f"== H{n}\n\n----\n== listing {n}\n----\n\n" + "words " * 30 + "\n\n" for n in range(8))
    doc = parse_file("big.adoc", adoc.encode())
    assert doc.title == "Title"
    assert headings(doc) == [(2, f"H{n}") for n in range(8)]


def test_split_without_headings_cuts_at_paragraphs():
    text = "".join(f"para {n} " + "x" * 50 + "\n\n" for n in range(100))
    pieces = list(splitting.split(text, splitting.markdown_boundaries, limit=500))
    assert "".join(pieces) == text
    assert all(len(p) <= 560 for p in pieces)
    assert all(p.startswith("para ") for p in pieces)


def test_txt_holding_rst_is_parsed_as_rst():
    text = b"How to use sessions\n===================\n\nIntro.\n\nEnabling sessions\n-----------------\n\nUse :setting:`MIDDLEWARE`.\n"
    doc = parse_file("topics/sessions.txt", text)
    assert doc.title == "How to use sessions"
    assert [b.title for b in doc.blocks if b.level] == ["Enabling sessions"]


def test_plain_txt_stays_plain():
    doc = parse_file("notes.txt", b"Just some notes.\n\n----\n\nNothing special.\n")
    assert [b.level for b in doc.blocks] == [0]
