"""What every parser shares: the error type, a block builder and the page-title rules.

Parsers walk their own syntax tree and feed headings and Markdown paragraphs into a
`BlockBuilder`; `finish_document` then applies the title rules once, so every format
(and every piece of a split big file) agrees on what the page title is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from ..document import Block, Document
from ..errors import ContextError

# Titles of the synthetic sections a split rst piece starts with (see parse/split.py).
SPLIT_MARKER = "CTXSPLITMARKER"
# A glossary this long is a reference list worth one section per term; a shorter one sits in
# prose, and headings would capture the text that follows it.
GLOSSARY_SECTIONS = 3


class ParseError(ContextError):
    """A file that cannot be decoded or parsed; the builder skips it and counts it."""


class ParserFailure(ParseError):
    """A parser failed in a way it did not foresee (a bug): still one skipped page, not a crash."""


class Sink(Protocol):
    """Where a walker sends what it finds: headings and Markdown paragraphs."""

    def heading(self, level: int, title: str) -> None: ...

    def add(self, text: str) -> None: ...


class BlockBuilder:
    """Collects headings and paragraphs into a flat list of `Block`s in reading order."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._level = 0
        self._title = ""
        self._parts: list[str] = []

    def heading(self, level: int, title: str) -> None:
        title = clean_heading(title)
        if not title:  # an empty heading carries nothing: keep its text in the current block
            return
        self._flush()
        self._level = max(1, min(6, level))
        self._title = title

    def add(self, text: str) -> None:
        text = text.strip("\n").rstrip()
        if text.strip():
            self._parts.append(text)

    def finish(self) -> list[Block]:
        self._flush()
        return self.blocks

    def _flush(self) -> None:
        if self._level or self._parts:
            self.blocks.append(Block(self._level, self._title, "\n\n".join(self._parts)))
        self._parts = []


class TextSink:
    """A sink for nested content (list items, quotes, cells): headings become plain lines."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def heading(self, level: int, title: str) -> None:
        self.add(clean_heading(title))

    def add(self, text: str) -> None:
        text = text.strip("\n").rstrip()
        if text.strip():
            self.parts.append(text)

    def text(self, sep: str = "\n\n") -> str:
        return sep.join(self.parts)


@dataclass
class Parsed:
    """A parser's raw result before the title rules: all headings still present as blocks."""

    blocks: list[Block] = field(default_factory=list)
    title: str | None = None  # an explicit title that wins (front matter)
    fallback_title: str | None = None  # used when there is no H1 (HTML <title>)
    description: str = ""


_ANCHOR = re.compile(r"\s*\{[#.][^{}]*\}\s*$")  # trailing {#custom-id} / {.class}
_PERMALINK = re.compile(r"(?:\s+#+|[\s\u00b6\u200b])+$")  # trailing pilcrow / ' #' permalinks


def clean_heading(title: str) -> str:
    """Heading text on one line, without custom-id anchors or permalink marks."""
    title = " ".join(title.split())
    title = _ANCHOR.sub("", title)
    return _PERMALINK.sub("", title).strip()


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def finish_document(path: str, parsed: Parsed, *, url: str | None = None) -> Document:
    """Apply the title rules: front matter title, else the first H1, else the file name.

    The H1 taken as the title is removed when it is the page's first heading; its body
    joins the introduction (level 0). A later H1 gives the title but keeps its block, so
    the structure around it is not broken.
    """
    blocks = [b for b in parsed.blocks if not b.title.startswith(SPLIT_MARKER)]
    first = next((i for i, b in enumerate(blocks) if b.level > 0), None)
    title = (parsed.title or "").strip()
    consume = None
    if title:
        if first is not None and blocks[first].level == 1 and _norm(blocks[first].title) == _norm(title):
            consume = first
    else:
        h1 = next((i for i, b in enumerate(blocks) if b.level == 1), None)
        if h1 is not None:
            title = blocks[h1].title
            consume = h1 if h1 == first else None
        else:
            title = (parsed.fallback_title or "").strip() or title_from_filename(path)
    if consume is not None:
        body = blocks.pop(consume).text
        if consume > 0 and blocks[consume - 1].level == 0:
            intro = blocks[consume - 1]
            intro.text = "\n\n".join(t for t in (intro.text, body) if t)
        elif body:
            blocks.insert(consume, Block(0, "", body))
    blocks = [b for b in blocks if b.level > 0 or b.text.strip()]
    return Document(path=path, title=title, blocks=blocks, description=parsed.description, url=url)


_INDEX_NAMES = {"index", "readme", "_index", "default", "home"}


def title_from_filename(path: str) -> str:
    """`docs/getting-started.md` -> `Getting started`; `guide/index.md` -> `Guide`."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    if not parts:
        return "Untitled"
    stem = parts[-1].split(".")[0] or parts[-1]
    if stem.lower() in _INDEX_NAMES and len(parts) > 1:
        stem = parts[-2]
    words = re.sub(r"[-_\s]+", " ", stem).strip()
    stripped = re.sub(r"^\d+[ .]+", "", words)  # `01-intro` -> `intro`
    words = stripped or words or stem
    if stem.lower() == "readme" and len(parts) == 1:
        return "README"
    return words[:1].upper() + words[1:]


def link_target(href: str) -> str:
    """What an empty link shows: its URL, unless that is an in-page anchor or a script."""
    href = (href or "").strip()
    return "" if href.startswith(("#", "javascript:")) else href


def fence(code: str, lang: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run inside."""
    code = code.strip("\n")
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    ticks = "`" * max(3, longest + 1)
    lang = lang.strip().split()[0] if lang.strip() else ""
    return f"{ticks}{lang}\n{code}\n{ticks}"


def code_span(text: str) -> str:
    """Inline code in backticks, with a longer fence when the text holds backticks."""
    text = " ".join(text.split("\n"))
    if not text.strip():
        return ""
    if "`" not in text:
        return f"`{text}`"
    longest = max(len(m) for m in re.findall(r"`+", text))
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}"


def list_item(text: str, marker: str) -> str:
    """A list item: `marker` before the first line, the rest indented under it ("" if empty)."""
    return indent(text, marker, " " * len(marker)) if text.strip() else ""


def indent(text: str, first: str, rest: str) -> str:
    """Prefix the first line with `first` and every following non-empty line with `rest`."""
    lines = text.split("\n")
    out = [first + lines[0]]
    out.extend(rest + line if line.strip() else "" for line in lines[1:])
    return "\n".join(out)


def table_rows(rows: list[list[str]]) -> str:
    """Pipe rows with the first row as header: simple Markdown any reader understands."""
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    cells = [[_cell(c) for c in r] + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(cells[0]) + " |", "| " + " | ".join(["---"] * width) + " |"]
    lines.extend("| " + " | ".join(r) + " |" for r in cells[1:])
    return "\n".join(lines)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
