"""Hostile reStructuredText through the fast reader (parse/rst_fast.py) and docutils behind it.

Nesting past Python's recursion limit, lines past docutils' length limit, thousands of title
levels, control characters and unbalanced markup: a page either reads (as docutils reads it,
where the fast reader reads it) or fails as one ParseError that costs that page alone, never
another exception, and within a few seconds.
"""

from __future__ import annotations

import itertools
import time

import pytest

from context_cli.parse import ParseError, parse_file
from context_cli.parse.common import BlockBuilder
from context_cli.parse.rst import render_docutils, render_fast

HOSTILE = {
    "quotes nested 3,000 deep": "".join(" " * i + "x\n\n" for i in range(3000)),
    "lists nested 2,000 deep": "".join("  " * i + "- x\n\n" for i in range(2000)),
    "notes nested 1,500 deep": "".join("   " * i + ".. note::\n\n" for i in range(1500)) + " " * 4500 + "x\n",
    "a 20,000-character line": "Title\n=====\n\n" + "word " * 4000 + "\n",
    "a 12,000-character title": "x" * 12_000 + "\n" + "=" * 12_000 + "\n",
    "2,000 title styles": "".join(f"T{i}\n{c * 4}\n\n" for i, c in enumerate("=-~^\"'`#*+:.," * 160)),
    "control characters": "Ti\x00tle\n=====\n\n\x00 *a\x0bb* ``\x1b[31m`` \\\x00 :x:`\x7f`\n\n- \x0c\n",
    "unbalanced markup": "*a **b ``c `d <e`_ :f:`g |h| [1]_ _`i\n\n.. [\n\n.. |x\n\n.. _\n\n::\n",
    "a directive of nothing but options": ".. code-block::\n" + "   :a: b\n" * 5000,
    "an enumerated list of 5,000 items": "".join(f"{i}. item\n" for i in range(1, 5001)),
    "sidebars and topics nested 1,500 deep": "".join("   " * i + (".. sidebar:: s\n\n" if i % 2 else ".. topic:: t\n\n")
                                                     for i in range(1500)) + " " * 4500 + "x\n",
    "5,000 topics and sidebars in a row": "".join(f".. topic:: *t{i}\n\n   x\n\n.. sidebar::\n   :name: n\n\n   `y\n\n"
                                                  for i in range(2500)),
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=list(HOSTILE))
def test_hostile_rst_reads_or_fails_as_one_parse_error(text: str) -> None:
    start = time.perf_counter()
    try:
        parse_file("page.rst", text.encode("utf-8", "surrogatepass"))
    except ParseError:
        pass
    assert time.perf_counter() - start < 20
    fast = BlockBuilder()
    read = render_fast(text, fast)  # declines (never raises) what it cannot read, too deep included
    if read:  # (parse_file may still refuse the bytes: a NUL reads as binary)
        slow = BlockBuilder()
        render_docutils(text, slow)
        assert fast.finish() == slow.finish()


def test_bare_references_grow_a_page_at_most_twice() -> None:
    from context_cli.parse.ref_titles import MIN_GROWTH, RefTitles

    refs = RefTitles.of_pages([("t.rst", b".. _a:\n\n" + b"T" * 190 + b"\n" + b"=" * 190 + b"\n")])
    page = b":ref:`a` " * 200_000  # 1.8 MB of references to a 190-character title
    start = time.perf_counter()
    out = refs.titled("index.rst", page)
    assert len(page) < len(out) <= 2 * len(page) and time.perf_counter() - start < 20
    assert len(refs.titled("index.rst", b":ref:`a` " * 1000)) <= 9000 + MIN_GROWTH


def test_a_labelled_heading_of_a_long_line_of_spaces_reads_in_linear_time() -> None:
    """`(label)=` then `# a` + 20,000 spaces + `x`: the heading's pattern backtracked
    cubically (88 s at 4,000 spaces) before every build's first page."""
    from context_cli.parse.ref_titles import RefTitles

    start = time.perf_counter()
    refs = RefTitles.of_pages([("a.md", b"(lbl)=\n# a" + b" " * 20_000 + b"x\n")])
    assert refs.titles == {"lbl": "a x"} and time.perf_counter() - start < 2


CODE_MARKUP = {
    "a.md": [b"".join(b"`" * n + b"\n" for n in range(2000, 3, -1)),  # fences no later line closes
             b"``a " * 250_000, b"`" * 1_000_000, b"{r}`" * 250_000, b"````{note}\n" * 100_000],
    "a.rst": [b"``a " * 250_000, b"a::\n" * 250_000, b"".join(b" " * n + b"x::\n\n" for n in range(3000)),
              b".. code::\n" + b" " * 1_000_000 + b"\n", b"x ``" + b"`" * 1_000_000],
}


@pytest.mark.parametrize(("rel", "page"), [(rel, page) for rel, pages in CODE_MARKUP.items() for page in pages])
def test_code_stretches_are_found_in_linear_time(rel: str, page: bytes) -> None:
    from context_cli.parse.code_markup import code_stretches
    from context_cli.parse.ref_titles import RefTitles

    start = time.perf_counter()
    stretches = code_stretches(rel, page)
    RefTitles({"a": "A"}).titled(rel, page + b":ref:`a` {ref}`a`")
    assert time.perf_counter() - start < 5
    assert all(0 <= a <= b <= c <= d <= len(page) for (a, b), (c, d) in itertools.pairwise(stretches))
