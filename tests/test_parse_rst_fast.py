"""The fast rst reader (parse/rst_fast.py, parse/rst_inline.py) against docutils: wherever it
reads a page, its blocks are the ones docutils' tree gives, on real pages and generated ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from context_cli.document import Block
from context_cli.parse import _looks_like_rst
from context_cli.parse.common import BlockBuilder
from context_cli.parse.decode import decode
from context_cli.parse.includes import Includes
from context_cli.parse.rst import parse_rst_blocks, render_docutils, render_fast

ROOT = Path(__file__).resolve().parents[1]
CORPORA = [ROOT / "tests" / "fixtures", ROOT / "bench" / "sets" / "flask" / "corpus",
           ROOT / "bench" / "sets" / "sphinx" / "corpus"]


def both(text: str, includes: Includes | None = None) -> tuple[list[Block], list[Block] | None]:
    """(docutils' blocks, the fast reader's or None where it declines)."""
    slow, fast = BlockBuilder(), BlockBuilder()
    render_docutils(text, slow, includes=includes)
    return slow.finish(), fast.finish() if render_fast(text, fast, includes=includes) else None


def rst_pages() -> list[tuple[Path, str]]:
    pages = []
    for root in CORPORA:
        for path in sorted(root.rglob("*")):
            if path.suffix in (".rst", ".txt") and path.is_file():
                rel = path.relative_to(root).as_posix()
                text = decode(path.read_bytes(), rel)
                if path.suffix == ".rst" or _looks_like_rst(text):
                    pages.append((root, rel))
    return pages


def test_every_corpus_page_reads_as_docutils_reads_it() -> None:
    read = 0
    pages = rst_pages()
    for root, rel in pages:
        text = decode((root / rel).read_bytes(), rel)
        slow, fast = both(text, Includes(str(root), rel))
        if fast is not None:
            read += 1
            assert fast == slow, f"{root.name}/{rel}"
    assert len(pages) > 200 and read > 0.7 * len(pages), (read, len(pages))


CASES = {
    "an image before a version note's paragraph keeps them apart": """\
Title
=====

.. versionadded:: 5.0

   .. image:: x.png

   Some text.
""",
    "a comment before it too": """\
.. versionchanged:: 2.0

   .. a comment

   Text *here*.
""",
    "an undefined substitution shows its name": "Join |django-users| and |x| now.\n",
    "a leading field list is docinfo": ":orphan:\n:tocdepth: 2\n\nTitle\n=====\n\nText.\n",
    "a later field list is a list": "Text.\n\n:param x: the ``x``\n:returns: nothing\n",
    "a simple table": """\
=====  =====
A      B
=====  =====
1      ``two``
3      - four
       - five
=====  =====
""",
    "title levels come back up": "A\n=\n\nB\n-\n\nC\n~\n\nD\n-\n\nE\n=\n\ntext\n",
    "overlined titles": "=====\n Top\n=====\n\nSub\n===\n\nx\n",
    "a literal block after a lone ::": "Para\n\n::\n\n   code here\n\nafter\n",
    "a paragraph running into an indented block": "line one\nline two\n   indented\nback\n",
    "a definition list with a code term": "``term``\n   its definition\n\nnext\n   second\n",
    "numbered lists": "1. one\n2. two\n\n#. auto\n#. again\n\n3. three\n4. four\n",
    "numbered lists in parentheses": "#) auto\n#) again\n\n(1) one\n(2) two\n(4) skips\n\n3) three\n#) next\n"
                                     "\n(1) one\n2) other format\n",
    "a list item followed by text without a blank line": "- a\n- b\ntext\n",
    "roles, references and escapes": (
        ":func:`foo` and :class:`~a.b.C` and `a link <https://example.com>`_ and name_ and\n"
        "`anon`__ and \\*not emphasis\\* and *emph* and **strong** and ``lit\\eral`` and\n"
        ":meth:`Title <x.y>` and `default` and :py:obj:`x` and a stray * and a ` too.\n"),
    "a URI on its own": "See https://example.com/x for more.\n",
    "punctuation lines inside a block": ".. note::\n\n   text\n\n   ^\n\n   ----------\n\n   more\n",
    "a repeated inline target first in a version note": (
        "- .. versionadded:: 1.0\n\n     _`t`\n- .. versionadded:: 1.0\n\n     _`t`\n"),
    "directives with options and arguments": """\
.. code-block:: python
   :caption: x.py

   print(1)

.. highlight:: console

::

   $ run

.. method:: Model.save(force_insert=False,
            using=None)

   Saves.

.. note:: On the first line
   and the second.

.. admonition:: A *titled* one

   Body.

.. rubric:: Footnotes

.. django-admin-option:: --noinput

   No input.

.. toctree::
   :maxdepth: 2

   a
   b

.. console::

   $ python -m pip install Django
""",
    "topics and sidebars where a section could start": """\
.. topic:: A *topic*

   Its text, and a list:

   - one

Section
=======

.. sidebar:: Aside
   :name: aside

   Aside *text*.

.. sidebar::

   Untitled.
""",
    "a topic and a sidebar at the top of a section": """\
Section
=======

.. topic:: Topic
   over two lines

   Text.

.. sidebar:: Side

   Text.

After.
""",
    "a topic in a sidebar (docutils allows it)": ".. sidebar:: S\n\n   .. topic:: T\n\n      text\n",
    "a topic inside a list": "- .. topic:: T\n\n     text\n",
    "a sidebar inside a quote": "Text\n\n   .. sidebar:: S\n\n      text\n",
    "a topic without content": ".. topic:: T\n\nText.\n",
    "a sidebar with a subtitle": ".. sidebar:: S\n   :subtitle: Sub\n\n   text\n",
}


DECLINED = {"a repeated inline target first in a version note",  # docutils reports the name first
            "a topic in a sidebar (docutils allows it)",
            "a topic inside a list", "a sidebar inside a quote",  # docutils reports them
            "a topic without content", "a sidebar with a subtitle"}


@pytest.mark.parametrize("name", list(CASES))
def test_cases_read_as_docutils_reads_them(name: str) -> None:
    slow, fast = both(CASES[name])
    assert (fast is None) == (name in DECLINED)
    assert fast is None or fast == slow


def test_what_it_declines_still_reads_through_docutils() -> None:
    text = "A footnote [#]_ here.\n\n.. [#] The note.\n"
    slow, fast = both(text)
    assert fast is None
    assert parse_rst_blocks(text).blocks == slow
    assert "[1]" in slow[0].text


# Generated pages: pieces of the constructs above in any order, at any depth.
_WORDS = st.sampled_from(["word", "``lit``", ":func:`f`", "*em*", "**st**", "`ref`_", "x_", "|sub|", "\\*",
                          "a*b", "`t`", "http://x.org/", "me@x.org", ":", "::", "[1]_", "_`t`", "-", "1."])
_LINE = st.lists(_WORDS, min_size=1, max_size=6).map(" ".join)


def _indent(block: str, pad: str) -> str:
    return "\n".join(pad + line if line else "" for line in block.split("\n"))


@st.composite
def _block(draw: st.DrawFn, depth: int = 0) -> str:
    kinds = ["para", "title", "literal", "bullets", "enum", "defs", "fields", "directive", "quote", "comment",
             "target", "doctest", "table", "transition"]
    kind = draw(st.sampled_from(kinds if depth < 2 else kinds[:3]))
    line = draw(_LINE)
    inner = draw(_block(depth + 1)) if depth < 2 else draw(_LINE)
    if kind == "para":
        return "\n".join(draw(st.lists(_LINE, min_size=1, max_size=3)))
    if kind == "title":
        return f"{line}\n{draw(st.sampled_from('=-~^')) * draw(st.integers(2, len(line) + 2))}"
    if kind == "literal":
        return f"{line}::\n\n   code {line}\n   more"
    if kind == "bullets":
        gap = draw(st.sampled_from(["\n", "\n\n"]))
        return gap.join(f"- {_indent(inner, '  ').lstrip()}" for _ in range(draw(st.integers(1, 3))))
    if kind == "enum":
        marks = draw(st.sampled_from([["1.", "2."], ["#.", "#."], ["2.", "3."], ["1.", "3."], ["1)", "2)"],
                                      ["#)", "#)"], ["(1)", "(2)"], ["(#)", "2)"], ["1.", "2)"], ["a.", "b."]]))
        return "\n".join(f"{m} {line}" for m in marks)
    if kind == "defs":
        return f"{line}\n{_indent(inner, '   ')}"
    if kind == "fields":
        return f":name: {line}\n:other: {_indent(inner, '   ').lstrip()}"
    if kind == "directive":
        name = draw(st.sampled_from(["note", "versionadded:: 1.0", "method:: f(x)", "seealso", "code-block:: py",
                                     "admonition:: Title", "image:: x.png", "unknown-thing:: arg", "toctree",
                                     "highlight:: c", "rubric:: R", "warning::  inline", "topic:: T",
                                     "sidebar", "sidebar:: S t"]))
        name = name if "::" in name else name + "::"
        option = draw(st.sampled_from(["", "   :name: n\n", "   :class: c\n", "   :bad option: x\n"]))
        return f".. {name}\n{option}\n{_indent(inner, '   ')}"
    if kind == "quote":
        return _indent(inner, "    ")
    if kind == "comment":
        return f".. {line}\n   {line}"
    if kind == "target":
        return f".. _{draw(st.sampled_from(['t', 'a b', '`q`']))}: http://x.org"
    if kind == "doctest":
        return f">>> {line}\n{line}"
    if kind == "table":
        return "===  ===\na    b\n===  ===\n" + f"x    {line}\n===  ==="
    return "----------"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_block(), min_size=1, max_size=6), st.sampled_from(["\n\n", "\n"]))
def test_generated_pages_read_as_docutils_reads_them(blocks: list[str], gap: str) -> None:
    text = gap.join(blocks) + "\n"
    slow, fast = both(text)
    if fast is not None:
        assert fast == slow


def test_only_the_first_leading_field_list_is_docinfo() -> None:
    """docutils makes one docinfo of the document's first field list; a second one after a
    comment is a field list the page shows (found by the generated pages above)."""
    text = ":name: word\n:other: word\n   ==\n\n.. word\n   word\n\n:name: word\n:other: word\n   ==\n"
    slow, fast = both(text)
    assert fast == slow == [Block(level=0, title="", text="- name: word\n- other: word\n  ==")]


def test_an_image_with_content_is_docutils_error_before_a_docinfo() -> None:
    """An image takes no content: docutils reports the directive (an error message, which may
    stand before docinfo), so the field list after it is docinfo, not shown. The fast reader
    leaves such a page to docutils (found by the generated pages above)."""
    text = ".. image:: x.png\n\n   word\n   ==\n\n:name: word\n:other: word\n"
    slow, fast = both(text)
    assert slow == [] and fast is None
    plain = both(".. image:: x.png\n   :alt: A\n\n:name: word\n")
    assert plain[0] == plain[1] == [Block(level=0, title="", text="- name: word")]
