"""The docutils speed-ups (`context_cli/parse/rst_speed.py`) change nothing a reader sees.

Each fixture page is rendered twice: through `parse_rst_blocks` (settings reused, lazy states,
memoised transitions, only the transforms we need) and, in a fresh interpreter that never
installs the speed-ups, through stock `publish_doctree` with every transform. Both must
give the same blocks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from context_cli.parse.rst import parse_rst_blocks

FIXTURES = Path(__file__).parent / "fixtures" / "parse"
TRICKY = """\
:Author: someone

Title
=====

A |sub| with [#note]_ and [2]_, a `link <https://example.org>`_, an `anonymous`__ one,
an indirect_ one and `Title`_.

__ https://example.org/anon
.. _indirect: target_
.. _target: https://example.org/target
.. |sub| replace:: substituted *text*

- item one

  - nested with ``code`` and :func:`pkg.fn`

    1. deeper
    2. list

.. note:: A note with a body

   and a second paragraph.

----

.. code-block:: python

   print("hi")

Term
   Definition with :ref:`label <x>`.

.. [#note] An auto-numbered footnote.
.. [2] A numbered one.

Plain prose with no markup at all, then https://example.org/path?q=1#frag and mail@example.org,
an escaped \\*star\\* and \\`tick\\`, a_b_c snake name, *emph*, **strong**, `ref`_ and |sub|
with x:y colons, a ratio 1:2, ftp://host/x after ``code``, and <https://example.org/angle>.
"""

STOCK = """
import json, sys
from docutils.core import publish_doctree
from context_cli.parse import rst, rst_sphinx
from context_cli.parse.common import BlockBuilder
out = []
rst._register_own()
for text in json.loads(sys.stdin.read()):
    rst_sphinx.register_for(text)
    builder = BlockBuilder()
    rst._Writer().body(publish_doctree(text, settings_overrides=dict(rst._SETTINGS)), builder, depth=1)
    out.append([[b.level, b.title, b.text] for b in builder.finish()])
print(json.dumps(out))
"""


def test_speedups_render_like_stock_docutils() -> None:
    texts = [TRICKY] + [p.read_text() for p in sorted(FIXTURES.glob("*.rst"))]
    stock = subprocess.run([sys.executable, "-c", STOCK], input=json.dumps(texts), capture_output=True,
                           text=True, check=True)
    expected = json.loads(stock.stdout)
    ours = [[[b.level, b.title, b.text] for b in parse_rst_blocks(t).blocks] for t in texts]
    assert len(texts) > 1
    assert ours == expected
