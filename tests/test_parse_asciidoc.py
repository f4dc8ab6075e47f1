"""AsciiDoc pages through `parse_file` / `parse_asciidoc`."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from context_cli.parse import parse_asciidoc, parse_file

FIXTURES = Path(__file__).parent / "fixtures" / "parse"


def adoc(text: str, path: str = "docs/page.adoc"):
    return parse_asciidoc(path, text)


def body(doc) -> str:
    return "\n\n".join(b.text for b in doc.blocks)


@pytest.fixture(scope="module")
def guide():
    return parse_file("docs/guide.adoc", (FIXTURES / "guide.adoc").read_bytes())


def test_title_header_and_attributes(guide):
    assert guide.title == "User Guide"
    assert guide.description == "How to use the tool."
    intro = guide.blocks[0]
    assert intro.level == 0
    assert intro.text == "Welcome to Widget. See the site and Installing."  # {product} resolved
    text = body(guide)
    assert "Jane Doe" not in text and "v1.0" not in text and ":toc:" not in text


def test_section_levels(guide):
    assert [(b.level, b.title) for b in guide.blocks if b.level] == [
        (2, "Installing"), (3, "Configuration"), (2, "Markdown style"), (2, "Legacy Title")]


def test_comments_and_includes_dropped(guide):
    text = body(guide)
    assert "line comment" not in text and "block comment" not in text and "include::" not in text


def test_listing_literal_and_source_blocks(guide):
    installing = guide.blocks[1].text
    assert "```python\nimport widget\n# == not a heading\nwidget.run()\n```" in installing
    assert "```\nliteral text\n  kept as is\n```" in installing
    configuration = guide.blocks[2].text
    assert "```\nindented literal paragraph\n```" in configuration
    assert "```bash\nwidget --help\n```" in configuration


def test_admonitions_lists_and_definitions(guide):
    installing = guide.blocks[1].text
    assert "NOTE: Admonitions stay as text." in installing
    assert "Warning:\n\nCareful with this." in installing
    assert "- first item\n- second item\n  - nested item\n1. ordered one\n1. ordered two" in installing
    assert "Term: Definition text." in installing


def test_table_and_block_title(guide):
    configuration = guide.blocks[2].text
    assert configuration.startswith("Options table\n\n| Name | Description |\n| --- | --- |\n")
    assert "| debug | Turns on debug mode. |\n| port | The port. |" in configuration


def test_inline_macros(guide):
    assert guide.blocks[3].text == "Some text with Ctrl+C and API docs."


def test_title_from_file_name_and_no_sections():
    doc = adoc("Just text.\n\n----\n== inside listing\n----\n", "docs/quick-start.adoc")
    assert doc.title == "Quick start"
    assert [b.level for b in doc.blocks] == [0]
    assert "```\n== inside listing\n```" in body(doc)


def test_symmetric_titles_cross_references_and_passthrough():
    doc = adoc("= Doc =\n\n== Part ==\n\nSee <<other-part>> and xref:b.adoc#sec[B section].\n\n"
               "++++\n<p>passed <b>through</b></p>\n++++\n")
    assert doc.title == "Doc"
    assert doc.blocks[0].title == "Part"
    assert doc.blocks[0].text == "See other-part and B section.\n\npassed through"


def test_unclosed_blocks_do_not_crash():
    doc = adoc("= T\n\n----\nnever closed\n\n|===\n|a\n")
    assert "never closed" in body(doc)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("=#-.+/*_|[],:<>`{}! \n\tabcX019")), max_size=300) | st.text(max_size=200))
def test_arbitrary_text_never_crashes_asciidoc(text):
    doc = parse_asciidoc("fuzz.adoc", text)
    assert doc.title
    assert all(0 <= b.level <= 6 for b in doc.blocks)
