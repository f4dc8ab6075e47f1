"""What the dense model sees for a chunk.

A static model averages token vectors, so every token dilutes every other: the title path and a
one-line summary are what a question is most likely to share with a section, and long bodies,
URLs and code bodies mostly add noise. The text is the title path (twice, to weigh it), the
first sentence, then the body with links reduced to their words and code blocks reduced to the
lines that say what the code is (signatures, comments, the first line), cut at MAX_CHARS: the
opening of a section says what it is about, and BM25 still covers the rest of it. The defaults
were chosen on the anthropic-docs eval with bench/choose_model.py (see default_model/README.md).
"""

from __future__ import annotations

import re

from context_cli.document import Chunk

MAX_CHARS = 500  # measured: 400-600 beat 1000+ by ~0.05 section MRR (default_model/README.md)
TITLE_REPEAT = 2  # measured: the title twice beats once at every cap
CODE_LINES = 6  # lines kept from one code block

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_URL = re.compile(r"https?://\S+")
_TAG = re.compile(r"</?[A-Za-z][^>]{0,200}>")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])|\n")
_SIGNATURE = re.compile(
    r"^\s*(?:@\w|(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:def|class|function|interface|type|enum|"
    r"struct|trait|impl|fn|func|pub|public|protected|private|static|module|namespace|package|"
    r"const\s+\w+\s*=\s*(?:async\s*)?\(|let\s+\w+\s*=\s*(?:async\s*)?\()\b)"
)
_COMMENT = re.compile(r"^\s*(?:#(?!include)|//|/\*|\*|--|\"\"\"|''')")


def embed_text(chunk: Chunk, *, max_chars: int = MAX_CHARS, title_repeat: int = TITLE_REPEAT,
               squash_code: bool = True, summary: bool = True) -> str:
    """The dense text for one chunk.

    A parser's `chunk.embed_text` (e.g. a flattened API operation) is used as it is, cut at the
    same cap for the same reason: put what matters first.
    """
    if chunk.embed_text:
        return chunk.embed_text[:max_chars] if max_chars else chunk.embed_text
    body = clean_body(chunk.content, squash_code=squash_code, limit=max_chars or None)
    title = chunk.breadcrumb
    parts = [title] * max(1, title_repeat)
    if summary:
        first = first_sentence(body)
        if first:
            parts.append(first)
    parts.append(body)
    text = "\n".join(p for p in parts if p)
    return text[:max_chars] if max_chars else text


def clean_body(markdown: str, *, squash_code: bool = True, limit: int | None = None) -> str:
    """Markdown to plain words: link targets, images and tags dropped, code blocks shortened.

    Stops once `limit` characters are collected: the rest would be cut anyway.
    """
    out: list[str] = []
    size = 0
    code: list[str] | None = None
    fences = "```" in markdown or "~~~" in markdown  # else no line can open or close a code block
    for line in markdown.splitlines():
        if limit is not None and size >= limit:
            break
        if fences and _FENCE.match(line):
            if code is None:
                code = []
            else:
                gist = code_gist(code) if squash_code else code
                out.extend(gist)
                size += sum(map(len, gist))
                code = None
            continue
        if code is not None:
            code.append(line)
            continue
        if "#" in line:
            line = _HEADING.sub("", line)
        if "](" in line:
            line = _LINK.sub(r"\1", _IMAGE.sub(r"\1", line))
        if "<" in line:
            line = _TAG.sub("", line)
        if "://" in line:
            line = _URL.sub("", line)
        line = line.strip()
        if line:
            out.append(line)
            size += len(line)
    if code is not None:  # an unclosed fence still holds code
        out.extend(code_gist(code) if squash_code else code)
    return "\n".join(out)


def code_gist(lines: list[str]) -> list[str]:
    """The lines of a code block that say what it is: the first, signatures and comments."""
    lines = [ln.rstrip() for ln in lines if ln.strip()]
    if not lines:
        return []
    keep = [lines[0].strip()]
    for line in lines[1:]:
        if _SIGNATURE.match(line) or _COMMENT.match(line):
            keep.append(line.strip())
            if len(keep) >= CODE_LINES:
                break
    return keep


def first_sentence(text: str, limit: int = 200) -> str:
    """The first sentence (or line) of plain text, at most `limit` characters."""
    text = text.strip()
    if not text:
        return ""
    return _SENTENCE_END.split(text, maxsplit=1)[0][:limit].strip()
