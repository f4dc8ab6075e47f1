"""MkDocs / Material pages read as their rendered pages read: admonition and tab bodies as text
(not code), blocks' markers gone, attribute lists gone, Jinja gone where the site renders it,
reference-style cross links as their text. Code is never touched."""

from __future__ import annotations

from pathlib import Path

from context_cli.parse import parse_file, parse_markdown
from context_cli.parse.mkdocs import clean

FIXTURES = Path(__file__).parent / "fixtures" / "fidelity"


def parse(root: Path, rel: str):
    return parse_file(rel, (root / rel).read_bytes(), root=str(root))


def body(doc) -> str:
    return "\n\n".join(b.text for b in doc.blocks)


def test_pydantic_admonitions_are_text_and_cross_links_their_names():
    doc = parse(FIXTURES / "pydantic", "docs/concepts/models.md")
    usage = next(b.text for b in doc.blocks if b.title == "Basic model usage")
    assert usage.startswith("Note:\n\nPydantic relies heavily on the existing Python typing constructs")
    assert "```" not in usage  # the indented body is no longer a code block
    assert "inherit from\n`BaseModel` and define fields" in body(doc)
    assert "][" not in body(doc)
    assert "Note: Validation — a deliberate misnomer" in body(doc)


def test_content_tabs_keep_their_code_as_code():
    doc = parse(FIXTURES / "pydantic", "docs/concepts/alias.md")
    text = body(doc)
    assert "`validate_by_alias`\n\n```python\nfrom pydantic import BaseModel, ConfigDict, Field" in text
    assert '=== "' not in text and "    ```" not in text
    assert "1. The alias `my_alias` is used for validation." in text


def test_jinja_is_removed_where_the_site_renders_it():
    doc = parse(FIXTURES / "pydantic", "docs/index.md")  # mkdocs.yml has hooks
    assert "{{" not in body(doc)
    fastapi = parse(FIXTURES / "fastapi", "docs/en/docs/index.md")  # the macros extension
    assert "{%" not in body(fastapi) and "{{" not in body(fastapi)


def test_braces_stay_where_no_site_renders_them():
    text = "# Prompt\n\nSummarise this document: {{DOCUMENT}} in {{LANGUAGE}}.\n"
    assert "{{DOCUMENT}} in {{LANGUAGE}}" in body(parse_markdown("prompt.md", text))


def test_attribute_lists_go_from_titles_and_text():
    doc = parse_markdown("p.md", "# Title { #anchor }\n\n## Step {#step .big}\n\n"
                                 "See [the guide](guide.md){.internal-link target=_blank} now.\n\n"
                                 "A [button](x.md){ .md-button width=300 } and `{.kept}` code.\n")
    assert doc.title == "Title"
    assert [b.title for b in doc.blocks if b.level] == ["Step"]
    assert "See the guide now." in body(doc)
    assert "A button and `{.kept}` code." in body(doc)


def test_pymdownx_blocks_give_their_label_and_drop_their_markers():
    text = ("# Page\n\n/// note | Technical Details\n    type: warning\n\nInside the note.\n\n///\n\n"
            "//// tab | Python 3.10+\n\n```python\nx = 1\n```\n\n////\n\n/// details | Summary\nHidden text.\n///\n")
    out = body(parse_markdown("p.md", text))
    assert "Note: Technical Details\n\nInside the note." in out
    assert "type: warning" not in out and "///" not in out
    assert "Python 3.10+\n\n```python\nx = 1\n```" in out
    assert "Summary\n\nHidden text." in out


def test_reference_links_defined_on_the_page_stay_links():
    text = "Read [the docs][docs] and [`Model`][pkg.Model] and [str][].\n\n[docs]: https://example.org\n"
    out = body(parse_markdown("p.md", text))
    assert out.startswith("Read the docs and `Model` and str.")


def test_code_is_left_exactly_as_written():
    text = ('```python\nx = data["a"][0]  # {{ not jinja }}\n{: .no }\n```\n\n'
            "Index `rows[0][1]` and matrix[0][1] stay.\n\n    indented = {'a': 1}\n")
    assert clean(text, jinja=True) == text


def test_nested_admonitions_dedent_each_level():
    text = ('!!! tip "Outer"\n    Outer text.\n\n    ??? note "Inner"\n        Inner text.\n\n'
            "        ```py\n        y = 2\n        ```\n\nAfter.\n")
    out = clean(text)
    assert "Tip: Outer" in out and "Note: Inner" in out
    assert "\nInner text.\n" in out and "\n```py\ny = 2\n```\n" in out
    assert out.rstrip().endswith("After.")


def test_a_setext_heading_is_not_a_tab():
    doc = parse_markdown("p.md", "Title\n===\n\nText under it.\n")
    assert doc.title == "Title"
