"""Cut parsed pages into searchable sections.

Rules (the same as Neuledge Context where it has one, better where it falls short):
- a page splits at its top section level (H2, or H1s after the title, or the shallowest
  level a page uses); deeper headings stay inside their section unless it is too big;
- text before the first split heading is the page's "Introduction";
- a section over TARGET_TOKENS splits at its subsections, then at paragraphs, then at
  code-fence boundaries, then at lines (hard cap MAX_TOKENS), never leaving a fence open;
  parts are titled "Section", "Section (part 2)", ...;
- tables of contents and link farms, and tiny fragments, are dropped.
Identical sections across a package are found by `dedupe` of their `content_key`s (the first
one is kept).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..document import Block, Chunk, Document, estimate_tokens

TARGET_TOKENS = 800
MAX_TOKENS = 1200
MIN_CHARS = 24  # shorter bodies ("TBD", "See below.") carry nothing worth retrieving
INTRO_TITLE = "Introduction"

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_TOC_TITLES = re.compile(r"^(table of contents|contents|on this page|in this (section|article|page)|"
                         r"navigation|menu|toc)$", re.I)


@dataclass
class _Node:
    """A heading with its own body and its subsections (rebuilt from the flat blocks)."""

    level: int
    title: str
    text: str
    children: list[_Node] = field(default_factory=list)

    def render(self, depth: int = 0) -> str:
        """The node as Markdown; subsection headings keep their relative depth."""
        parts = []
        if depth:
            parts.append("#" * min(6, self.level) + " " + self.title)
        if self.text.strip():
            parts.append(self.text.strip())
        parts.extend(child.render(depth + 1) for child in self.children)
        return "\n\n".join(p for p in parts if p)


def chunk_document(doc: Document) -> list[Chunk]:
    """All chunks of one page, in reading order."""
    blocks = _demote_stray_headings([b for b in doc.blocks if b.text.strip() or b.level])
    split_level = _split_level(blocks)
    chunks: list[Chunk] = []
    intro_text = "\n\n".join(b.text.strip() for b in blocks if b.level == 0 and b.text.strip())
    sections = _sections(blocks, split_level)
    for node in sections:
        if node.level == 0:
            # Headings deeper than the split level but before the first split heading.
            intro_text = "\n\n".join(p for p in (intro_text, node.render(1)) if p)
    if intro_text:
        chunks.extend(_emit(doc, [INTRO_TITLE], _Node(0, INTRO_TITLE, intro_text)))
    for node in sections:
        if node.level:
            chunks.extend(_emit(doc, [node.title], node))
    return chunks


def content_key(content: str) -> bytes:
    """What makes two sections the same for `dedupe`: their text with whitespace folded."""
    return hashlib.blake2b(" ".join(content.split()).encode("utf-8", "replace"), digest_size=16).digest()


def dedupe(keys: Iterable[bytes]) -> list[int]:
    """Positions of the sections to keep: the first of each `content_key`."""
    seen: set[bytes] = set()
    kept = []
    for i, key in enumerate(keys):
        if key not in seen:
            seen.add(key)
            kept.append(i)
    return kept


def _demote_stray_headings(blocks: list[Block]) -> list[Block]:
    """A page whose first heading is H2 treats H2 as its top level: a later H1 (often a
    `# comment` from code pasted outside a fence) stays inside the current section."""
    first = next((b.level for b in blocks if b.level), 0)
    if first <= 1:
        return blocks
    return [Block(first + 1, b.title, b.text) if b.level == 1 else b for b in blocks]


def _split_level(blocks: list[Block]) -> int:
    levels = [b.level for b in blocks if b.level]
    return max(2, min(levels)) if levels else 2


def _sections(blocks: list[Block], split_level: int) -> list[_Node]:
    """Group blocks into top-level sections (level <= split_level) with nested children."""
    roots: list[_Node] = []
    stack: list[_Node] = []
    for block in blocks:
        if block.level == 0:
            continue
        node = _Node(block.level, block.title.strip() or "Untitled", block.text)
        if block.level <= split_level:
            roots.append(node)
            stack = [node]
            continue
        while stack and stack[-1].level >= block.level:
            stack.pop()
        if stack:
            stack[-1].children.append(node)
        else:
            # A deep heading before any split heading belongs to the introduction.
            holder = _Node(0, INTRO_TITLE, "")
            holder.children.append(node)
            roots.append(holder)
            stack = [holder, node]
    return roots


def _emit(doc: Document, path: list[str], node: _Node) -> list[Chunk]:
    """Chunks for one section: whole if it fits, else by subsection, then by size."""
    whole = node.render()
    if estimate_tokens(whole) <= TARGET_TOKENS or not node.children:
        return _chunks_from_text(doc, path, whole)
    out = _chunks_from_text(doc, path, node.text) if node.text.strip() else []
    for child in node.children:
        out.extend(_emit(doc, path + [child.title], child))
    return out


def _chunks_from_text(doc: Document, path: list[str], text: str) -> list[Chunk]:
    text = text.strip()
    title = " > ".join(path)
    if len(text) < MIN_CHARS or _is_toc(path[-1], text):
        return []
    pieces = split_text(text) if estimate_tokens(text) > TARGET_TOKENS else [text]
    chunks = []
    for i, piece in enumerate(pieces, start=1):
        section_title = title if i == 1 else f"{title} (part {i})"
        chunks.append(Chunk(
            doc_path=doc.path, doc_title=doc.title, section_title=section_title, content=piece,
            tokens=estimate_tokens(piece), has_code=_has_code(piece), url=doc.url,
            embed_text=doc.embed_hint if len(pieces) == 1 else None,
        ))
    return chunks


def _has_code(text: str) -> bool:
    if "```" not in text and "~~~" not in text:  # no fence can open: skip the line-by-line test
        return False
    return any(_FENCE.match(line) for line in text.splitlines())


def _is_toc(title: str, text: str) -> bool:
    """A table of contents or link farm: a TOC title, or mostly short list items."""
    if _TOC_TITLES.match(title.strip()):
        return True
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 5:
        return False
    short_items = sum(1 for ln in lines if _LIST_ITEM.match(ln) and len(ln.split()) <= 6)
    return short_items > len(lines) / 2 and short_items >= 5 and not _has_code(text)


def split_text(text: str, target: int = TARGET_TOKENS, cap: int = MAX_TOKENS) -> list[str]:
    """Split oversized text at paragraphs, then fences, then lines; never inside a fence.

    Units (paragraphs and whole fenced blocks) are packed greedily up to `target`; a unit
    over `cap` is cut at lines, and a cut fenced block is closed and reopened around each
    cut so that every piece stays valid Markdown.
    """
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for unit in _units(text):
        for part in _cut_unit(unit, cap):
            n = estimate_tokens(part)
            if current and size + n > target:
                pieces.append("\n\n".join(current))
                current, size = [], 0
            current.append(part)
            size += n + 1
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def _units(text: str) -> Iterator[str]:
    """Paragraphs and whole fenced blocks, in order."""
    buf: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence is None and m:
            if buf:
                yield "\n".join(buf).strip("\n")
                buf = []
            fence = m.group(1)
            buf.append(line)
            continue
        if fence is not None:
            buf.append(line)
            if m and m.group(1).startswith(fence[0]) and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                yield "\n".join(buf)
                buf, fence = [], None
            continue
        if not line.strip():
            if buf:
                yield "\n".join(buf).strip("\n")
                buf = []
            continue
        buf.append(line)
    if buf:
        if fence is not None:
            buf.append(fence)  # close a fence the source left open
        yield "\n".join(buf).strip("\n")


def _cut_unit(unit: str, cap: int) -> Iterator[str]:
    if estimate_tokens(unit) <= cap:
        yield unit
        return
    lines = unit.split("\n")
    m = _FENCE.match(lines[0])
    opener = closer = ""
    if m and len(lines) > 1 and _FENCE.match(lines[-1]):
        opener, closer = lines[0], lines[-1]
        lines = lines[1:-1]
    budget = cap * 4 - len(opener) - len(closer) - 2
    buf: list[str] = []
    used = 0
    for line in _hard_wrap(lines, budget):
        if buf and used + len(line) + 1 > budget:
            yield _wrap(opener, buf, closer)
            buf, used = [], 0
        buf.append(line)
        used += len(line) + 1
    if buf:
        yield _wrap(opener, buf, closer)


def _hard_wrap(lines: list[str], width: int) -> Iterator[str]:
    """Lines longer than a whole piece (minified code, data blobs) are cut."""
    for line in lines:
        while len(line) > width:
            yield line[:width]
            line = line[width:]
        yield line


def _wrap(opener: str, lines: list[str], closer: str) -> str:
    body = "\n".join(lines)
    return f"{opener}\n{body}\n{closer}" if opener else body
