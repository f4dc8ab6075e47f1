"""sphinx-gallery scripts read as the pages sphinx-gallery renders (matplotlib's user guide)."""

from __future__ import annotations

from pathlib import Path

from context_cli.parse import parse_file
from context_cli.parse.gallery import gallery_rst, is_gallery_script

GALLERIES = Path(__file__).parent / "fixtures" / "fidelity" / "matplotlib" / "galleries"


def test_a_gallery_script_is_a_page_of_text_and_code():
    rel = "galleries/users_explain/quick_start.py"
    doc = parse_file(rel, (GALLERIES / "users_explain" / "quick_start.py").read_bytes())
    assert doc.title == "Quick start guide"
    sections = {b.title: b.text for b in doc.blocks}
    assert "```python\nimport matplotlib.pyplot as plt\nimport numpy as np\n```" in sections[""]
    assert "sphinx_gallery_thumbnail_number" not in "\n".join(sections.values())
    simple = sections["A simple example"]
    assert simple.startswith("Matplotlib graphs your data on")
    assert "```python\nfig, ax = plt.subplots()" in simple
    assert "# %%" not in simple and "\n# " not in simple
    assert "Parts of a Figure" in sections


def test_the_script_ending_in_a_text_block_keeps_it():
    text = (GALLERIES / "examples" / "lines_bars_and_markers" / "simple_plot.py").read_text()
    rst = gallery_rst(text)
    assert rst.startswith("=========\nLine plot\n=========\n\nCreate a basic line plot.")
    assert ".. code-block:: python\n\n   import matplotlib.pyplot as plt" in rst
    assert ".. admonition:: References" in rst


def test_only_scripts_that_open_with_a_titled_docstring_are_pages():
    module = (GALLERIES.parent / "lib" / "matplotlib" / "__init__.py").read_bytes()
    assert not is_gallery_script(module)
    assert parse_file("lib/matplotlib/__init__.py", module) is None
    assert not is_gallery_script(b"import os\n")
    assert not is_gallery_script(b'"""\nParameters\n----------\nx : int\n"""\n'.replace(b"Parameters", b"A very long title"))
    assert is_gallery_script(b'#!/usr/bin/env python\n"""\n.. _label:\n\n*****\nTitle\n*****\n"""\n')
