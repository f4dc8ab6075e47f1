"""reStructuredText pages, with Sphinx directives and roles, through `parse_file` / `parse_rst`."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from context_cli.parse import ParseError, ParserFailure, parse_file, parse_rst

FIXTURES = Path(__file__).parent / "fixtures" / "parse"
LEAKS = ("System Message", "ERROR/", "WARNING/", "SEVERE/", "INFO/", "Unknown directive",
         "Unknown interpreted", "problematic", "Docutils", "\x00")


def rst(text: str, path: str = "docs/page.rst"):
    return parse_rst(path, text)


def body(doc) -> str:
    return "\n\n".join(b.text for b in doc.blocks)


def assert_clean(doc) -> None:
    text = body(doc) + "".join(b.title for b in doc.blocks)
    for leak in LEAKS:
        assert leak not in text, leak


@pytest.fixture(scope="module")
def sphinx_doc():
    return parse_file("docs/quickstart.rst", (FIXTURES / "sphinx.rst").read_bytes())


def test_title_and_section_levels(sphinx_doc):
    assert sphinx_doc.title == "Quickstart"
    assert [(b.level, b.title) for b in sphinx_doc.blocks if b.level] == [
        (2, "Minimal Application"), (3, "Sub section"), (2, "Another top")]
    assert sphinx_doc.blocks[0].level == 0  # the text under the title is the introduction
    assert_clean(sphinx_doc)


def test_roles_render_their_text(sphinx_doc):
    intro = sphinx_doc.blocks[0].text
    assert "a good introduction to `flask`." in intro
    assert "Call `run()` or `Flask.route()`, read the tutorial" in intro
    assert "and /patterns/index, see WSGI, `Flask.config` and" in intro
    assert "mystery text. A `default role` and `inline literal`." in intro


def test_version_directives(sphinx_doc):
    intro = sphinx_doc.blocks[0].text
    assert "Added in version 2.0: The `run` command." in intro
    assert "Changed in version 2.1" in intro
    assert "Deprecated since version 2.2: Use something else." in intro


def test_literal_and_code_blocks(sphinx_doc):
    intro = sphinx_doc.blocks[0].text
    assert "A literal block:\n\n```python\nfrom flask import Flask\napp = Flask(__name__)\n```" in intro
    assert '```python\n@app.route("/")\ndef hello():\n    return "Hello"\n```' in intro
    assert "```console\n$ flask run\n```" in intro
    assert "emphasize-lines" not in intro and "linenos" not in intro


def test_navigation_directives_dropped(sphinx_doc):
    text = body(sphinx_doc)
    assert "maxdepth" not in text and "install\ntutorial" not in text
    assert "examples/app.py" not in text


def test_admonitions_and_seealso(sphinx_doc):
    intro = sphinx_doc.blocks[0].text
    assert "Note: A note that must survive." in intro
    assert "See also: other for more." in intro
    assert "Warning: Short warning." in intro


def test_api_directives_keep_signatures_and_bodies(sphinx_doc):
    api = sphinx_doc.blocks[1].text
    for expected in ("`flask.render_template`", "`flask.json`", "`send_file(path, mimetype=None)`",
                     "Send a file.", "- param path: the file path", "- returns: a response",
                     "`helper(x)`\n\nHelper text.", "`Flask(import_name)`\n\nThe app class.",
                     "`run(host=None)`\n\nRuns the app."):
        assert expected in api, expected


def test_tabs_glossary_only_and_unknown_directives(sphinx_doc):
    api = sphinx_doc.blocks[1].text
    for expected in ("Python\n\nPython tab content.", "Shell\n\nShell tab content.",
                     "WSGI\n: The Web Server Gateway Interface.", "Only for HTML.", "arg\n\nExtension body."):
        assert expected in api, expected
    assert "html\n" not in api  # the `only` condition is not text


def test_simple_table_and_text_after(sphinx_doc):
    sub = sphinx_doc.blocks[2].text
    assert sub == "| A | B |\n| --- | --- |\n| 1 | 2 |\n\nText after the table."


@pytest.mark.parametrize(
    "snippet, expected",
    [
        (".. autoclass:: pkg.Thing\n   :members:\n   :undoc-members:", "`pkg.Thing`"),
        (".. automethod:: pkg.Thing.go", "`pkg.Thing.go`"),
        (".. py:method:: Thing.go(x)\n   :async:\n\n   Go somewhere.", "`Thing.go(x)`\n\nGo somewhere."),
        (".. method:: go(x)\n\n   Go.", "`go(x)`\n\nGo."),
        (".. function:: f(a)\n              f(a, b)", "`f(a)`\n\n`f(a, b)`"),
        (".. code-block::\n\n   plain = True", "```\nplain = True\n```"),
        (".. sourcecode:: ruby\n\n   puts 1", "```ruby\nputs 1\n```"),
        (".. literalinclude:: x.py\n   :language: python", ""),
        (".. seealso:: :class:`Other`", "See also: `Other`"),
        (".. deprecated:: 3.0\n\n   Use :meth:`new` instead.", "Deprecated since version 3.0: Use `new()` instead."),
        (".. only:: latex\n\n   Print only.", "Print only."),
        (".. tab-set::\n\n   .. tab-item:: A\n\n      Alpha.", "A\n\nAlpha."),
        (".. glossary::\n\n   term\n      Meaning.", "term\n: Meaning."),
        (".. toctree::\n   :hidden:\n\n   a\n   b", ""),
        (".. note:: Inline note.", "Note: Inline note."),
        (".. versionchanged:: 1.1\n   Now faster.", "Changed in version 1.1: Now faster."),
        ("Use :py:attr:`obj.attr`, :term:`Thing <thing>`, :doc:`guide`, :custom:`text`.",
         "Use `obj.attr`, Thing, guide, text."),
        ("Roles: :ref:`label`, :ref:`Title <label>`, :meth:`!raw`, :class:`~a.b.C`.",
         "Roles: label, Title, `raw()`, `C`."),
        ("Unresolved `link`_ and |sub| stay text.", "Unresolved link and sub stay text."),
        ("`Link text <https://example.com>`_ and https://example.org", "Link text and https://example.org"),
        ("Text::\n\n   literal\n     indented", "Text:\n\n```\nliteral\n  indented\n```"),
        (".. highlight:: c\n\nCode::\n\n   int x;", "Code:\n\n```c\nint x;\n```"),
        (">>> 1 + 1\n2", "```pycon\n>>> 1 + 1\n2\n```"),
        (".. math::\n\n   e = mc^2", "```math\ne = mc^2\n```"),
        (".. include:: other.rst\n\n.. raw:: html\n\n   <b>x</b>", ""),
        (".. image:: pic.png\n   :alt: picture", ""),
        (".. list-table::\n   :header-rows: 1\n\n   * - k\n     - v\n   * - a\n     - 1",
         "| k | v |\n| --- | --- |\n| a | 1 |"),
        ("- a\n- b\n\n  - c\n\n#. one\n#. two", "- a\n- b\n  - c\n\n1. one\n2. two"),
        (":param x: the x\n:type x: int", "- param x: the x\n- type x: int"),
        (".. click:example::\n\n   @click.command()\n   def hello():\n       pass",
         "```python\n@click.command()\ndef hello():\n    pass\n```"),
    ],
)
def test_sphinx_constructs(snippet, expected):
    doc = rst(f"Page\n====\n\nBefore text.\n\n{snippet}\n\nAfter text.\n")
    text = body(doc)
    assert text.startswith("Before text.")
    assert text.endswith("After text.")
    assert expected in text
    assert_clean(doc)


def test_lone_top_section_is_the_title_and_subsections_stay_sections():
    doc = rst("=======\n Title\n=======\n\nSubtitle\n--------\n\nText.\n\nDeeper\n~~~~~~\n\nMore.\n")
    assert doc.title == "Title"
    assert [(b.level, b.title) for b in doc.blocks] == [(2, "Subtitle"), (3, "Deeper")]


def test_several_top_sections_first_is_title():
    doc = rst("One\n===\n\na\n\nTwo\n===\n\nb\n")
    assert doc.title == "One"
    assert [(b.level, b.title, b.text) for b in doc.blocks] == [(0, "", "a"), (1, "Two", "b")]


def test_no_section_title_from_file_name():
    doc = rst("Just a paragraph.\n", "docs/api-reference.rst")
    assert doc.title == "Api reference"
    assert body(doc) == "Just a paragraph."


def test_broken_markup_keeps_text():
    doc = rst("Title\n=====\n\n* unclosed *emphasis and ``literal\n\n.. bad directive\n\n"
              "Bad\n=\n\nText under a short underline.\n\n.. :: nameless\n\nEnd.\n")
    text = body(doc)
    assert "unclosed" in text and "End." in text and "Text under a short underline." in text
    assert_clean(doc)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("=-~`*_:.|<>[]() \n\tabcXY019\\#")), max_size=300) | st.text(max_size=200))
def test_arbitrary_text_never_crashes_rst(text):
    try:
        doc = parse_rst("fuzz.rst", text)
    except ParseError as exc:
        assert not isinstance(exc, ParserFailure), exc  # docutils refusing input is fine, a bug is not
        return
    assert doc.title
    assert_clean(doc)


@pytest.mark.parametrize(
    "snippet, absent",
    [
        (".. literalinclude:: x.py\n   :language: python", "x.py"),
        (".. toctree::\n   :hidden:\n\n   chapter-a\n   chapter-b", "chapter-a"),
        (".. include:: other.rst", "other.rst"),
        (".. raw:: html\n\n   <b>raw html</b>", "raw html"),
        (".. image:: pic.png\n   :alt: picture", "pic.png"),
        (".. index:: single: keyword", "keyword"),
        (".. contents::\n   :local:", "Contents"),
        (".. This is a comment", "comment"),
    ],
)
def test_dropped_constructs(snippet, absent):
    doc = rst(f"Page\n====\n\nBefore text.\n\n{snippet}\n\nAfter text.\n\nSection\n-------\n\nx\n")
    text = body(doc)
    assert absent not in text
    assert text.startswith("Before text.") and "After text." in text
    assert_clean(doc)
