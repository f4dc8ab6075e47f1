"""Cut a big file into pieces at heading boundaries, so parser memory stays bounded.

markdown-it holds about 50 bytes of tokens per byte of Markdown, so a 3 MiB page would
need 150 MB at once. Files above `BIG` are cut into pieces of at most about `PIECE`
characters, preferably just before a heading, else before a paragraph, else at a line
start; each piece is parsed alone and the blocks are joined. Headings in Markdown and
AsciiDoc carry their level in the line itself; rst levels depend on the order title
styles first appear, which `rst_style_prefix` replays at the top of later pieces.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from .common import SPLIT_MARKER

BIG = 1 << 20  # files larger than this (in characters) are split
PIECE = 256 << 10  # the largest piece handed to a parser, give or take a line

# A scanner yields (offset, priority) for line starts where a piece may begin:
# 2 = a heading, 1 = the first line of a paragraph, 0 = any other line outside code.
Scanner = Callable[[str], Iterator[tuple[int, int]]]

_LINE = re.compile(r"[^\n]*\n?")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    for m in _LINE.finditer(text):
        if not m.group():
            return
        yield m.start(), m.group()


def split(text: str, scan: Scanner, limit: int | None = None) -> Iterator[str]:
    """Yield consecutive pieces of `text` (together exactly `text`), each about `limit` or less."""
    limit = limit or PIECE
    if len(text) <= limit:
        yield text
        return
    start = 0
    best: list[int | None] = [None, None, None]
    for offset, priority in scan(text):
        if offset - start > limit:
            cut = _choose(best, start, limit) or offset
            yield text[start:cut]
            start = cut
            best = [b if b is not None and b > start else None for b in best]
        if offset > start:
            best[priority] = offset
    yield text[start:]


def _choose(best: list[int | None], start: int, limit: int) -> int | None:
    """The latest heading if it leaves a piece of useful size, else a paragraph, else a line."""
    for priority in (2, 1, 0):
        b = best[priority]
        if b is not None and b - start >= limit // 4:
            return b
    return next((b for b in (best[2], best[1], best[0]) if b is not None), None)


_MD_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_MD_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")


def markdown_boundaries(text: str) -> Iterator[tuple[int, int]]:
    """Headings are `#` lines outside code fences."""
    fence = ""
    blank = True
    for offset, line in _lines(text):
        if fence:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = ""
            continue
        opened = _MD_FENCE.match(line)
        if opened:
            yield offset, 1 if blank else 0
            fence = opened.group(1)
        elif _MD_HEADING.match(line):
            yield offset, 2
        else:
            yield offset, 1 if blank and line.strip() else 0
        blank = not line.strip()


_ADOC_HEADING = re.compile(r"(={1,6}|#{1,6})[ \t]+\S")
_ADOC_DELIMITER = re.compile(r"(-{4,}|\.{4,}|/{4,}|\+{4,}|`{3,})\s*$")


def asciidoc_boundaries(text: str) -> Iterator[tuple[int, int]]:
    """Headings are `==` (or `##`) lines outside listing, literal, comment and pass blocks."""
    delimiter = ""
    blank = True
    for offset, line in _lines(text):
        stripped = line.rstrip()
        if delimiter:
            if stripped == delimiter:
                delimiter = ""
            continue
        opened = _ADOC_DELIMITER.match(stripped)
        if opened:
            delimiter = stripped
            yield offset, 1 if blank else 0
        elif _ADOC_HEADING.match(line):
            yield offset, 2
        else:
            yield offset, 1 if blank and stripped else 0
        blank = not stripped


_RST_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1+\s*$")


def rst_boundaries(text: str) -> Iterator[tuple[int, int]]:
    """A section title at column 0 after a blank line (an overline or the title line itself).

    Indented text (literal blocks, directive content) never starts at column 0, so no
    block tracking is needed.
    """
    blank = True
    window: list[tuple[int, str]] = []
    for item in _lines(text):
        window.append(item)
        if len(window) < 3:
            continue
        yield from _rst_candidate(window, blank)
        blank = not window[0][1].strip()
        window.pop(0)
    while window:
        yield window[0][0], 1 if blank and window[0][1].strip() else 0
        blank = not window[0][1].strip()
        window.pop(0)


def _rst_candidate(window: list[tuple[int, str]], blank: bool) -> Iterator[tuple[int, int]]:
    (offset, line), (_, second), (_, third) = window
    if not blank or not line.strip() or line[0].isspace():
        yield offset, 0
        return
    if _RST_ADORNMENT.match(line) and _RST_ADORNMENT.match(third) and second.strip():
        yield offset, 2
    elif not _RST_ADORNMENT.match(line) and _RST_ADORNMENT.match(second):
        yield offset, 2
    else:
        yield offset, 1


def rst_title_styles(text: str) -> list[tuple[str, bool]]:
    """Title styles (adornment character, has overline) in order of first appearance."""
    styles: list[tuple[str, bool]] = []
    prev2 = prev = ""
    for _, line in _lines(text):
        line = line.rstrip("\n")
        if _RST_ADORNMENT.match(line) and prev.strip() and not _RST_ADORNMENT.match(prev):
            overline = bool(_RST_ADORNMENT.match(prev2)) and prev2.strip()[0] == line.strip()[0]
            if overline or not prev[0].isspace():
                style = (line.strip()[0], overline)
                if style not in styles:
                    styles.append(style)
        prev2, prev = prev, line
    return styles


def rst_style_prefix(styles: list[tuple[str, bool]]) -> str:
    """Empty marker sections, one per style, so a later piece resolves levels as the first did."""
    out = []
    for n, (char, overline) in enumerate(styles, 1):
        title = f"{SPLIT_MARKER}{n}"
        rule = char * (len(title) + 2)
        out.append(f"{rule}\n{title}\n{rule}\n\n" if overline else f"{title}\n{rule}\n\n")
    return "".join(out)
