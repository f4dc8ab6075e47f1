"""Package sections as HTML for the registry pages, safe for content strangers publish.

Markdown is rendered by markdown-it-py with raw HTML off (every tag in the text stays text).
Links survive only as absolute http(s) URLs, with rel="nofollow noopener noreferrer"; any
other target (`javascript:`, `data:`, a path of the package's own docs tree that means
nothing on this server) leaves its text. Images become their alt text: the pages' CSP
loads none. A section's own headings are moved below the level of the result heading it
sits under, without gaps, so the page outline stays nested.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

_md = MarkdownIt("commonmark", {"html": False}).enable("table")
_md.validateLink = lambda url: True  # type: ignore[method-assign]  # every link is judged in _safe_inline


def render(text: str, *, below: int) -> str:
    """`text` (a section's Markdown) as HTML whose headings start at level `below` + 1."""
    tokens = _md.parse(text)
    # The levels used, in order, become below+1, below+2…: the outline never skips a level.
    levels = sorted({int(t.tag[1]) for t in tokens if t.type == "heading_open"})
    level_of = {level: min(6, below + 1 + i) for i, level in enumerate(levels)}
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{level_of[int(token.tag[1])]}"
        elif token.type == "inline" and token.children:
            token.children = _safe_inline(token.children)
    html: str = _md.renderer.render(tokens, _md.options, {})
    return html


def _safe_inline(children: list[Token]) -> list[Token]:
    out: list[Token] = []
    kept: list[bool] = []  # per open link: whether its tags stay
    for child in children:
        if child.type == "image":
            alt = Token("text", "", 0)
            alt.content = f"[image: {child.content}]" if child.content else "[image]"
            out.append(alt)
            continue
        if child.type == "link_open":
            kept.append(urlsplit(str(child.attrGet("href") or "").strip()).scheme in ("http", "https"))
            if not kept[-1]:
                continue
            child.attrSet("rel", "nofollow noopener noreferrer")
        elif child.type == "link_close" and kept and not kept.pop():
            continue
        out.append(child)
    return out
