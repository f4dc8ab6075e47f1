"""Markdown, MDX and MyST pages through `parse_file` / `parse_markdown`."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from context_cli.parse import ParseError, ParserFailure, parse_file, parse_markdown

FIXTURES = Path(__file__).parent / "fixtures" / "parse"


def md(text: str, path: str = "docs/page.md"):
    return parse_file(path, text.encode())


def headings(doc) -> list[tuple[int, str]]:
    return [(b.level, b.title) for b in doc.blocks if b.level]


def body(doc) -> str:
    return "\n\n".join(b.text for b in doc.blocks)


# --- titles -------------------------------------------------------------------------------


def test_front_matter_title_wins_over_h1():
    doc = md("---\ntitle: From Front Matter\ndescription: About it.\n---\n\n# Heading One\n\nText.\n")
    assert doc.title == "From Front Matter"
    assert doc.description == "About it."
    assert headings(doc) == [(1, "Heading One")]  # a different H1 is content, kept


def test_front_matter_title_equal_to_h1_is_not_repeated():
    doc = md("---\ntitle: Guide\n---\n\n# Guide\n\nIntro.\n\n## Part\n\nMore.\n")
    assert doc.title == "Guide"
    assert headings(doc) == [(2, "Part")]
    assert doc.blocks[0].level == 0 and doc.blocks[0].text == "Intro."


def test_first_h1_is_title_and_its_text_the_introduction():
    doc = md("# Getting Started\n\nWelcome.\n\n## Install\n\nRun it.\n")
    assert doc.title == "Getting Started"
    assert [(b.level, b.title, b.text) for b in doc.blocks] == [(0, "", "Welcome."), (2, "Install", "Run it.")]


def test_text_before_the_h1_joins_the_introduction():
    doc = md("Badges here.\n\n# Project\n\nAbout.\n")
    assert doc.title == "Project"
    assert doc.blocks[0].level == 0 and doc.blocks[0].text == "Badges here.\n\nAbout."


def test_title_from_file_name_without_h1():
    assert md("## Only h2\n\ntext\n", "docs/getting-started.md").title == "Getting started"
    assert md("text\n", "docs/guide/index.md").title == "Guide"
    assert md("text\n", "docs/01-first_steps.md").title == "First steps"


def test_broken_yaml_front_matter_is_tolerated():
    doc = md("---\ntitle: [unclosed\n: : :\n---\n\n# Real Title\n\nText.\n")
    assert doc.title == "Real Title"
    assert "Text." in body(doc)


def test_non_mapping_front_matter_and_toml_front_matter():
    assert md("---\n- a\n- b\n---\n\n# H\n").title == "H"
    doc = md('+++\ntitle = "Hugo Page"\ndescription = "toml"\n+++\n\nBody.\n')
    assert (doc.title, doc.description, body(doc)) == ("Hugo Page", "toml", "Body.")


# --- structure ----------------------------------------------------------------------------


def test_hashes_inside_code_fences_are_not_headings():
    doc = md("# T\n\n## Real\n\n```bash\n# comment\n## also comment\n```\n\n~~~\n# tilde\n~~~\n")
    assert headings(doc) == [(2, "Real")]
    assert "```bash\n# comment\n## also comment\n```" in doc.blocks[0].text


def test_setext_headings_and_levels():
    doc = md("Title\n=====\n\nintro\n\nSection\n-------\n\ntext\n\n#### Deep\n\nx\n")
    assert doc.title == "Title"
    assert headings(doc) == [(2, "Section"), (4, "Deep")]


def test_heading_inline_markup_and_custom_ids_removed():
    doc = md("# T\n\n## The `run()` *method* {#run-method}\n\n### [Linked](http://x) ###\n")
    assert headings(doc) == [(2, "The run() method"), (3, "Linked")]


def test_body_markdown_rendering():
    doc = md(
        "# T\n\nSee [the docs](https://example.com/docs) and `code()` and **bold**.\n"
        "Empty link: [](https://example.com/empty). Image: ![alt](x.png)\n\n"
        "- one\n- two\n  - nested\n\n3. three\n4. four\n\n"
        "| a | b |\n|---|---|\n| 1 | x\\|y |\n\n> quoted\n> text\n"
    )
    text = body(doc)
    assert "See the docs and `code()` and bold." in text
    assert "https://example.com/docs" not in text
    assert "https://example.com/empty" in text
    assert "x.png" not in text
    assert "- one\n- two\n  - nested" in text
    assert "3. three\n4. four" in text
    assert "| a | b |\n| --- | --- |\n| 1 | x\\|y |" in text
    assert "> quoted\n> text" in text


def test_fenced_code_keeps_language_and_backticks_inside():
    doc = md("# T\n\n````markdown\n```python\nx = 1\n```\n````\n\n    indented code\n")
    text = body(doc)
    assert "````markdown\n```python\nx = 1\n```\n````" in text
    assert "```\nindented code\n```" in text


def test_html_is_stripped_but_text_kept():
    doc = md(
        '# T\n\n<div align="center">\n  <img src="logo.png">\n  <p>Fast <b>library</b></p>\n</div>\n\n'
        "<!-- hidden comment -->\n\nPress <kbd>Ctrl</kbd>+<kbd>C</kbd>.<br>Next line.\n\n"
        "<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>\n"
    )
    text = body(doc)
    assert "<" not in text and "hidden comment" not in text
    assert "Fast library" in text
    assert "Press Ctrl+C.\nNext line." in text
    assert "| k | v |" in text and "| a | 1 |" in text


def test_html_heading_in_readme_becomes_title():
    doc = md('<h1 align="center">Widget</h1>\n\n<p align="center">A widget library.</p>\n\n## Use\n\nx\n', "README.md")
    assert doc.title == "Widget"
    assert headings(doc) == [(2, "Use")]


def test_docusaurus_admonitions_and_imports_in_md():
    doc = md(
        "import Tabs from '@theme/Tabs';\n\n# T\n\n:::tip Pro tip\nUse the cache.\n:::\n\n"
        "<Tabs>\n<TabItem value=\"py\" label=\"Python\">\n\npython body\n\n</TabItem>\n</Tabs>\n"
    )
    text = body(doc)
    assert "import" not in text and ":::" not in text and "<" not in text
    assert "Tip: Pro tip" in text and "Use the cache." in text
    assert "Python" in text and "python body" in text


def test_plain_md_keeps_prose_that_starts_with_import_and_indented_xml():
    doc = md("# T\n\nimport the module before use.\n\n    <Configuration>\n      <Item/>\n    </Configuration>\n")
    text = body(doc)
    assert "import the module before use." in text
    assert "<Configuration>" in text  # inside an indented code block


# --- MDX ------------------------------------------------------------------------------------


def test_mdx_components_imports_and_comments():
    doc = parse_file("docs/page.mdx", (FIXTURES / "components.mdx").read_bytes())
    assert doc.title == "MDX page"
    assert doc.description == "Components everywhere."
    text = body(doc)
    for gone in ("import {", "import Note", "export", "author", "comment", "<", "{/*", "Image", "Callout", "Tabs"):
        assert gone not in text, gone
    assert "Use X" in text
    assert "Be careful here.\n\n- item a\n- item b" in text
    assert "Python\n\n```python\nimport context\ndef f():\n    return 1\n```" in text
    assert "JavaScript\n\n```js\nconst x = 1\n```" in text
    assert headings(doc) == [(2, "Next")]
    assert "Note: Heads up" in doc.blocks[-1].text


def test_md_rendered_as_mdx_loses_heading_id_comments():
    # react.dev's pages are `.md` read as MDX: `{/*id*/}` are heading ids, not words
    doc = md("# useState\n\n## Reference {/*reference*/}\n\n### Parameters {/*parameters*/}\n\n"
             "Pass `initialState`; JSX comments look like `{/* note */}`. a {/* gone */} b\n")
    assert headings(doc) == [(2, "Reference"), (3, "Parameters")]
    assert "JSX comments look like `{/* note */}`. a  b" in body(doc)
    assert "gone" not in body(doc)


def test_mdx_inline_component_keeps_inner_text():
    doc = parse_markdown("a.mdx", "<Note>Use X</Note>\n\nSome <Badge text=\"new\" /> text.\n", mdx=True)
    assert body(doc) == "Use X\n\nSome text."


# --- MyST (Sphinx Markdown) ----------------------------------------------------------------


def test_myst_directives_and_roles():
    doc = md(
        "(target-label)=\n\n# Options\n\n"
        "Use {func}`~click.option` and {class}`Option`, see {ref}`the guide <guide>`.\n\n"
        "```{eval-rst}\n.. currentmodule:: click\n\nSee :func:`echo` here.\n```\n\n"
        "```{code-block} python\n:caption: x.py\n\nimport click\n```\n\n"
        "```{versionadded} 2.0\n```\n\n"
        "```{admonition} Heads up\n:class: note\n\nBe careful.\n```\n\n"
        "```{toctree}\n:maxdepth: 2\n\nintro\n```\n\n"
        ":::{note}\nColon fence with code:\n\n```python\nx = 1\n```\n:::\n"
    )
    text = body(doc)
    assert doc.title == "Options"
    assert "Use `option()` and `Option`, see the guide." in text
    assert "See `echo()` here." in text
    assert "```python\nimport click\n```" in text and "caption" not in text
    assert "Added in version 2.0" in text
    assert "Heads up: Be careful." in text
    assert "intro" not in text and "maxdepth" not in text and "target-label" not in text
    assert "Note: Colon fence with code:" in text and "```python\nx = 1\n```" in text
    assert "{" not in text


# --- robustness ---------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("#`*_-=<>/{}[]()!:|~+. \n\tabcXYZ0123\"'")), max_size=400)
       | st.text(max_size=300))
def test_arbitrary_text_never_crashes_markdown(text):
    for mdx in (False, True):
        try:
            doc = parse_markdown("fuzz.md", text, mdx=mdx)
        except ParseError as exc:
            assert not isinstance(exc, ParserFailure), exc  # a foreseen failure only, never a bug
            continue
        assert doc.title
        assert all(0 <= b.level <= 6 for b in doc.blocks)
