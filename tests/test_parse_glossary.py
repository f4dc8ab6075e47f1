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
