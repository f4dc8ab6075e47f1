"""Glossary entries become sections of their own, so "what is X" can find X's definition."""

from __future__ import annotations

from context_cli.parse import parse_file


def headings(doc) -> list[tuple[int, str]]:
    return [(b.level, b.title) for b in doc.blocks if b.level]


def test_glossary_page_gives_one_section_per_term():
    doc = parse_file("glossary.rst", b"""Glossary
========

.. glossary::

   ASGI
      Asynchronous Server Gateway Interface.

   view function
      A function that answers one route.

   WSGI
      Web Server Gateway Interface.
""")
    assert headings(doc) == [(2, "ASGI"), (2, "view function"), (2, "WSGI")]
    assert doc.blocks[1].text == "A function that answers one route."


def test_glossary_under_a_section_nests_and_keeps_extra_terms():
    doc = parse_file("api.rst", b"""API
===

Terms
-----

.. glossary::
   :sorted:

   ASGI
   asgi app
      Asynchronous Server Gateway Interface.

      A second paragraph.

   middleware
      A layer.

   WSGI
      Web Server Gateway Interface.

Other
-----

Text.
""")
    assert headings(doc) == [(2, "Terms"), (3, "ASGI"), (3, "middleware"), (3, "WSGI"), (2, "Other")]
    asgi = next(b for b in doc.blocks if b.title == "ASGI")
    assert asgi.text == "Also: asgi app\n\nAsynchronous Server Gateway Interface.\n\nA second paragraph."


def test_plain_definition_lists_stay_lists():
    doc = parse_file("page.rst", b"Page\n====\n\nterm\n   its definition\n")
    assert headings(doc) == []
    assert doc.blocks[0].text == "term\n: its definition"


def test_a_short_glossary_inside_prose_stays_a_list():
    doc = parse_file("page.rst", b"Page\n====\n\nBefore.\n\n.. glossary::\n\n   term\n      Meaning.\n\nAfter.\n")
    assert headings(doc) == []
    assert doc.blocks[0].text == "Before.\n\nterm\n: Meaning.\n\nAfter."


def test_markdown_definition_list_gives_one_section_per_term_below_its_heading():
    doc = parse_file("reference.md", b"""# Reference

## Options

Every flag the command takes.

`--verbose`
: Print every step.

`--quiet`
: Print errors only.
: Warnings are dropped too.

`--color`
: Colour the output.

## Exit codes

Zero on success.
""")
    assert headings(doc) == [(2, "Options"), (3, "--verbose"), (3, "--quiet"), (3, "--color"), (2, "Exit codes")]
    assert doc.blocks[0].text == "Every flag the command takes."
    assert next(b.text for b in doc.blocks if b.title == "--quiet") == "--quiet: Print errors only.\n\nWarnings are dropped too."


def test_a_short_markdown_definition_list_stays_term_and_definition_lines():
    doc = parse_file("page.md", b"# Page\n\n`a`\n: First.\n\nb\n: Second.\n")
    assert headings(doc) == []
    assert doc.blocks[0].text == "`a`\n: First.\nb\n: Second."


def test_a_definition_list_with_prose_after_it_stays_a_list():
    doc = parse_file("page.md", b"# Page\n\na\n: One.\n\nb\n: Two.\n\nc\n: Three.\n\nProse after it.\n")
    assert headings(doc) == []
    assert doc.blocks[0].text.endswith("c\n: Three.\n\nProse after it.")


def test_bold_term_paragraphs_on_a_glossary_page_become_sections():
    doc = parse_file("docs/glossary.md", """# Glossary

Words used across these docs.

**Adapter**: A plugin that connects the server to a host runtime.

**Loader** — A function that fetches data *before* a route renders.

**Island:** An interactive component on a static page.

**Hydration**
Attaching event handlers to server-rendered markup.
""".encode())
    assert headings(doc) == [(2, "Adapter"), (2, "Loader"), (2, "Island"), (2, "Hydration")]
    assert doc.blocks[-1].text == "Hydration: Attaching event handlers to server-rendered markup."
    assert doc.blocks[0].text == "Words used across these docs."
    assert doc.blocks[2].text == "Loader: A function that fetches data before a route renders."


def test_bold_term_list_under_a_terminology_heading_becomes_sections():
    doc = parse_file("guide.md", """# Guide

Text.

## Terminology

- **Middleware** — code that runs around a request.
- **Router** - maps URLs to handlers.
  It matches the longest prefix.
- **Context**: per-request state.

## Next steps
""".encode())
    assert headings(doc) == [(2, "Terminology"), (3, "Middleware"), (3, "Router"), (3, "Context"), (2, "Next steps")]
    assert next(b.text for b in doc.blocks if b.title == "Router") == "Router: maps URLs to handlers.\nIt matches the longest prefix."


def test_bold_term_lists_elsewhere_are_feature_lists_and_stay():
    doc = parse_file("features.md", b"# Features\n\n- **Fast**: builds in a second.\n- **Small**: no runtime.\n- **Typed**: types.\n")
    assert headings(doc) == []
    assert doc.blocks[0].text == "- Fast: builds in a second.\n- Small: no runtime.\n- Typed: types."


def test_a_glossary_list_needs_every_item_to_define_a_term():
    doc = parse_file("glossary.md", b"# Glossary\n\n- **A**: one.\n- **B**: two.\n- plain item\n- **C**: three.\n")
    assert headings(doc) == []


def test_mdx_glossary_page_titled_in_front_matter():
    doc = parse_file("concepts.mdx", b"---\ntitle: Key concepts\n---\n\n**Slot**: a placeholder.\n\n**Island**: an interactive part.\n\n**Shell**: the static frame.\n")
    assert doc.title == "Key concepts"
    assert headings(doc) == [(2, "Slot"), (2, "Island"), (2, "Shell")]


def test_what_is_x_finds_the_glossary_entry(tmp_path):
    import context_cli as cx

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "glossary.md").write_text(
        "# Glossary\n\n**Adapter**: A plugin that connects the server to a host runtime.\n\n"
        "**Loader**: A function that fetches the data a route needs before it renders.\n\n"
        "**Island**: An interactive component on an otherwise static page.\n\n"
        "**SSR**: Server-side rendering.\n"
    )
    (docs / "routing.md").write_text(
        "# Routing\n\nRoutes map URLs to pages. Each route may have a loader, an action and an error page; "
        "the router calls them in order.\n\n## Nested routes\n\nA child route renders inside its parent.\n"
    )
    package = cx.build(docs, tmp_path / "site.db", name="site", version="1.0.0", embed=False)
    first = cx.search("what is a loader", package).results[0]
    assert first.title.endswith("Loader")
    assert "fetches the data a route needs" in first.content
    assert cx.search("what is SSR", package).results[0].title.endswith("SSR")  # short, and still a section


def test_a_long_bold_run_turned_down_parses_in_linear_time():
    import time

    text = "# Glossary\n\n" + "".join(f"**Term {k}**: meaning {k}.\n\n" for k in range(6000)) + "Prose after.\n"
    start = time.perf_counter()
    doc = parse_file("glossary.md", text.encode())
    assert time.perf_counter() - start < 10
    assert headings(doc) == [] and doc.blocks[0].text.endswith("Term 5999: meaning 5999.\n\nProse after.")
