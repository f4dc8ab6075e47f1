"""Bare Sphinx references show their section's title, read from the whole tree (parse/ref_titles.py)."""

from __future__ import annotations

from pathlib import Path

from context_cli.build import BuildOptions, build
from context_cli.package.reader import open_package
from context_cli.parse.ref_titles import RefTitles
from context_cli.sources.base import Fetched

TOPICS = """\
.. _topics-http-urls:

==============
URL dispatcher
==============

.. _Naming-URL-patterns:
.. _naming:

Naming ``URL`` patterns
-----------------------

Give each pattern a name.

.. _a-figure:

.. figure:: diagram.png
"""

GUIDE = """\
Guide
=====

See :ref:`topics-http-urls` and :ref:`naming-url-patterns`, also :ref:`naming`.
Titled already: :ref:`the dispatcher <topics-http-urls>`. Unknown: :ref:`elsewhere-label`.
A label before no heading: :ref:`a-figure`.
"""


def titles_of(pages: dict[str, str]) -> RefTitles:
    return RefTitles.of_pages([(rel, text.encode()) for rel, text in pages.items()])


def test_labels_map_to_the_titles_they_stand_before():
    refs = titles_of({"topics/urls.txt": TOPICS, "guide.rst": GUIDE})
    assert refs.titles == {"topics-http-urls": "URL dispatcher", "naming-url-patterns": "Naming URL patterns",
                           "naming": "Naming URL patterns"}


def test_bare_references_are_written_with_their_title():
    refs = titles_of({"topics/urls.txt": TOPICS})
    out = refs.titled("index.rst", GUIDE.encode()).decode()
    assert ":ref:`URL dispatcher <topics-http-urls>`" in out
    assert ":ref:`Naming URL patterns <naming-url-patterns>`" in out  # labels compare lower-cased
    assert ":ref:`Naming URL patterns <naming>`" in out
    assert ":ref:`the dispatcher <topics-http-urls>`" in out
    assert ":ref:`elsewhere-label`" in out and ":ref:`a-figure`" in out


def test_myst_labels_and_references():
    refs = titles_of({"a.md": "(install-guide)=\n\n## Installing `pkg` ##\n\nText.\n"})
    assert refs.titled("index.md", b"Read {ref}`install-guide` first.") == b"Read {ref}`Installing pkg <install-guide>` first."


def test_a_page_without_references_is_returned_as_it_is():
    refs = titles_of({"topics/urls.txt": TOPICS})
    data = b"Plain text about :func:`reverse` and `links`_."
    assert refs.titled("index.rst", data) is data


def test_a_built_package_shows_the_title_where_the_page_named_the_label(tmp_path: Path):
    root = tmp_path / "docs"
    (root / "topics").mkdir(parents=True)
    (root / "topics" / "urls.rst").write_text(TOPICS)
    (root / "guide.rst").write_text(GUIDE)
    (root / "notes.md").write_text("# Notes\n\nRouting notes for this project, as in {ref}`topics-http-urls`.\n")
    out = tmp_path / "p.db"
    build(Fetched("folder", "docs", folder=root), out, BuildOptions(name="x", version="1.0.0", embed=False))
    pkg = open_package(out)
    try:
        text = {c.doc_path: c.content for _, c in pkg.chunks()}
    finally:
        pkg.close()
    assert "See URL dispatcher and Naming URL patterns, also Naming URL patterns." in text["guide.rst"]
    assert "topics-http-urls" not in text["guide.rst"] and "elsewhere-label" in text["guide.rst"]
    assert "as in URL dispatcher." in text["notes.md"]


def test_a_label_defined_twice_keeps_the_first_title_and_other_encodings_are_left_alone():
    refs = RefTitles.of_pages([("index.rst", b".. _install:\n\nInstall\n=======\n"),
                               ("ja/index.rst", ".. _install:\n\nインストール\n======\n".encode())])
    assert refs.titles == {"install": "Install"}
    cp1252 = ":ref:`install` \xe9t\xe9".encode("cp1252")
    assert refs.titled("index.rst", cp1252) is cp1252
