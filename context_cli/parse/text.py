"""Plain text pages: one introduction block, paragraphs kept, title from the file name.

Plain text has no reliable structure to find headings in, and guessing would cut pages
at the wrong places; the chunker splits the block at paragraph breaks anyway.
"""

from __future__ import annotations

import re

from ..document import Block
from .common import Parsed


def parse_text_blocks(text: str) -> Parsed:
    """One level-0 block: trailing spaces removed, runs of blank lines reduced to one."""
    lines = "\n".join(line.rstrip() for line in text.split("\n"))
    body = re.sub(r"\n{3,}", "\n\n", lines).strip("\n")
    return Parsed(blocks=[Block(0, "", body)] if body.strip() else [])
