"""Glossary entries in Markdown, found in markdown-it tokens, so each can be its own section.

"What is X" should land on X's definition, as it does for Sphinx `glossary::` entries (see
rst.py). Markdown writes glossaries three ways: MyST/Pandoc definition lists (`Term` then
`: definition`), paragraphs opening with a bold term (`**Term**: definition`) and lists whose
every item does (`- **Term** — definition`). The bold forms are also how feature lists look,
so they count only where the page or its section says it is a glossary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_GLOSSARY_WORDS = re.compile(
    r"\b(?:glossary|glossaries|terminology|terms|definitions|vocabulary|concepts|jargon|lexicon)\b", re.I
)
_SEPARATOR = re.compile(r"\s*(?::|—|–|-{1,2})(?:\s+|$)")
_MAX_TERM_WORDS = 8
_MAX_TERM_CHARS = 80


def names_a_glossary(*texts: str) -> bool:
    """Whether a page title, file name or heading says what follows defines terms."""
    return any(_GLOSSARY_WORDS.search(re.sub(r"[-_/.]+", " ", t)) for t in texts if t)


def bold_term(children: Sequence[Any]) -> tuple[list[Any], list[Any]] | None:
    """Split an inline's children into (bold term, definition) when it opens `**Term**: ...`.

    The separator (`:`, an em or en dash, a hyphen, or a line break) may sit after the bold
    or at the end of it (`**Term:** definition`); the definition must not be empty, and a bold
    run longer than a term (a bold sentence) does not count.
    """
    kids = [c for c in children if not (c.type == "text" and not c.content.strip())]
    if len(kids) < 4 or kids[0].type != "strong_open":
        return None
    close = next((k for k, c in enumerate(kids) if c.type == "strong_close"), None)
    if close is None or close < 2:
        return None
    term = list(kids[1:close])
    rest = list(kids[close + 1:])
    words = "".join(c.content for c in term).strip()
    if not words or len(words) > _MAX_TERM_CHARS or len(words.split()) > _MAX_TERM_WORDS:
        return None
    separator = _SEPARATOR.match(rest[0].content) if rest and rest[0].type == "text" else None
    if words.endswith(":") and term[-1].type == "text":
        term[-1] = term[-1].copy(content=term[-1].content.rstrip().rstrip(":"))
    elif separator:
        rest[0] = rest[0].copy(content=rest[0].content[separator.end():])
    elif rest and rest[0].type in ("softbreak", "hardbreak"):
        rest = rest[1:]
    else:
        return None
    if not "".join(c.content for c in rest).strip():
        return None
    return term, rest
