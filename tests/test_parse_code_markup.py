"""Markup shown as code is left as written by the role rewrites (parse/code_markup.py)."""

from __future__ import annotations

from context_cli.parse.code_markup import code_stretches
from context_cli.parse.module_prefixes import ModulePrefixes
from context_cli.parse.ref_titles import RefTitles

REFS = RefTitles({"install": "Installing"})
TITLED = b":ref:`Installing <install>`"

RST = b"""\
Write ``:ref:`install``` to link; see :ref:`install`.

Like this::

    :ref:`install`

:ref:`install` after the block.

.. code-block:: rst
   :caption: a

   :ref:`install`

.. note::

   :ref:`install` in a note.

- item

  .. code:: rst

     :ref:`install`

  :ref:`install` in the item.

  .. tip::

     :ref:`install` in a tip, and :ref:`install`::

        :ref:`install`
"""


def shown(rel: str, data: bytes) -> list[bytes]:
    return [data[a:b] for a, b in code_stretches(rel, data)]


def test_rst_literals_blocks_and_code_directives_keep_their_markup():
    out = REFS.titled("guide.rst", RST)
    lines = out.decode().splitlines()
    assert lines[0] == "Write ``:ref:`install``` to link; see " + TITLED.decode() + "."
    assert lines[4] == "    :ref:`install`"
    assert lines[6] == TITLED.decode() + " after the block."
    assert lines[11] == "   :ref:`install`"
    assert lines[15] == "   " + TITLED.decode() + " in a note."
    assert lines[21] == "     :ref:`install`"
    assert lines[23] == "  " + TITLED.decode() + " in the item."
    assert lines[27] == "     " + TITLED.decode() + " in a tip, and " + TITLED.decode() + "::"
    assert lines[29] == "        :ref:`install`"
    assert out.count(TITLED) == 6


def test_markdown_fences_and_spans_keep_their_markup_but_myst_directives_do_not():
    page = (b"Use ``{ref}`install` `` or {ref}`install` and {ref}`install`.\n\n"
            b"```md\n{ref}`install`\n```\n\n"
            b"````{note}\n{ref}`install` in a note.\n\n```rst\n{ref}`install`\n```\n````\n\n"
            b"~~~\n{ref}`install`\n")  # (an unclosed fence runs to the end)
    out = REFS.titled("guide.md", page).decode().splitlines()
    titled = "{ref}`Installing <install>`"
    assert out[0] == f"Use ``{{ref}}`install` `` or {titled} and {titled}."
    assert out[3] == "{ref}`install`"
    assert out[7] == f"{titled} in a note."
    assert out[10] == "{ref}`install`"
    assert out[-1] == "{ref}`install`"


def test_a_list_items_block_ends_where_the_item_text_resumes():
    page = b"- Example::\n\n      :ref:`install`\n\n  :ref:`install` after.\n\n  Last::\n\n     :ref:`install`"
    assert REFS.titled("a.rst", page) == page.replace(b":ref:`install` after", TITLED + b" after")


def test_stretches_by_markup():
    assert shown("a.txt", b"a ``x`` b\n") == [b"``x``"]
    assert shown("a.md", b"a ``x ` y`` b `z`\n") == [b"``x ` y``", b"`z`"]
    assert shown("a.md", b"```a``` opens no fence\n\n{ref}`x`\n") == []  # (its info holds backquotes)
    assert shown("a.html", b"``x``") == [] and shown("README", b"``x``") == []
    assert shown("llms.txt", b"a `x` b\n") == [b"`x`"] and shown("a.mdx", b"a `x` b\n") == [b"`x`"]  # (as parsed)
    assert shown("_sources/a.rst.txt", b"a ``x`` b\n") == [b"``x``"]
    assert shown("a.rst", b"Not a directive's body:\n\n.. note::\n\n   text\n") == []


def test_module_prefixes_keep_markup_shown_as_code():
    prefixes = ModulePrefixes({"_orm": "sqlalchemy.orm"})
    out = prefixes.titled("a.rst", b"``:class:`_orm.Session``` and :class:`_orm.Session`\n")
    assert out == b"``:class:`_orm.Session``` and :class:`Session <_orm.Session>`\n"


def test_enumerated_and_field_items_end_their_block_where_their_text_resumes():
    for marker in ("1)", "(1)", "a.", "iv.", "#.", ":param x:"):
        pad = " " * (len(marker) + 1)
        page = f"{marker} Like so::\n\n{pad}    :ref:`install`\n\n{pad}Then :ref:`install`.\n".encode()
        assert REFS.titled("a.rst", page) == page.replace(b"Then :ref:`install`", b"Then " + TITLED), marker


def test_a_term_ending_in_two_colons_opens_no_literal_block():
    page = b"term::\n    definition with :ref:`install`\n"  # (no blank line: a definition list)
    assert REFS.titled("a.rst", page) == page.replace(b":ref:`install`", TITLED)
