"""The stretches of a page that show markup as code: what a rewrite of roles leaves alone.

A page that teaches Sphinx (Sphinx's own docs, a project's contributing guide) writes
``:ref:`label` `` in an inline literal or a literal block to show the markup itself; rewriting
it there (`parse.ref_titles`, `parse.module_prefixes`) would show a form the author never wrote.
The stretches are found in a page's bytes in linear time:

- reST (`.rst`, `.txt`): inline literals (``` ``x`` ```), the literal block after a line
  ending in `::` (a directive's `::` aside) and the bodies of code directives (`code-block`,
  `code`, `sourcecode`, `doctest`…), as far as their lines are indented past the line that
  opens them.
- Markdown/MyST (`.md`, `.markdown`, `.mdx`, `llms.txt`): fenced blocks and code spans. A
  fence that opens a MyST directive (```` ```{note} ````) holds markup, not code, and may hold
  fences of its own.
"""

from __future__ import annotations

import bisect
import functools
import re

from . import markup

_CODE_DIRECTIVES = rb"code-block|code|sourcecode|doctest|testcode|testoutput|literalinclude|highlight|ipython"
# A line that opens a literal block or a code directive, its indent in the first group (a
# list item's or a field's marker counted in: the block is indented past the item's text).
_MARKER = (rb"(?:[-*+]|\xe2\x80\xa2|\(?(?:[0-9]+|[A-Za-z]|[ivxlcdmIVXLCDM]+|#)[.)]|\((?:[0-9]+|[A-Za-z]|#)\)"
           rb"|:[^:\s][^:\n]*:)[ \t]+")
_RST_OPENER = re.compile(
    rb"([ \t]*(?:" + _MARKER + rb")?)(?![ \t])"
    rb"(?:(\.\. (?:" + _CODE_DIRECTIVES + rb")::[^\n]*)|(?!\.\. )[^\n]*::[ \t]*)\r?\n")
_BLANK_AHEAD = re.compile(rb"[ \t]*\r?\n")  # a literal block starts after a blank line
# An inline literal's start and end strings, as docutils tells them (roughly: its punctuation is
# ASCII here), and the blank line that ends a paragraph and any literal in it.
_LITERAL_START = re.compile(rb"``(?<![^\s\-:/'\"<(\[{]``)(?=\S)")  # (the backquotes first: found fast)
_LITERAL_END = re.compile(rb"``(?<=\S``)(?=[\s\-.,:;!?\\/'\")\]}>]|\Z)")
_BLANK_LINE = re.compile(rb"\n[ \t]*\r?\n")
_FENCE = re.compile(rb"(?m)^[ \t]*(`{3,}|~{3,})[ \t]*([^\n]*?)\r?$")
_MYST_DIRECTIVE = re.compile(rb"\{(?!code|sourcecode)")
# A code span (on one line, of one or two backquotes), or a MyST role, matched only to be passed over.
_SPAN = re.compile(rb"(\{[\w:.+-]+\}`[^`\n]*`)|(?<!`)``(?!`)(?:[^`\n]|`(?!`))+?``(?!`)|(?<!`)`(?!`)[^`\n]+`(?!`)")

Stretches = list[tuple[int, int]]


def code_stretches(rel: str, data: bytes) -> Stretches:
    """The (start, end) stretches of page `rel` (its markup told by `parse.markup`) that are code,
    in order and apart; none for a page in another markup."""
    written = markup(rel)
    if written == "rst":
        blocks = _rst_blocks(data)
        return _union(blocks, _inline_literals(data)) if b"``" in data else blocks
    if written == "md":
        return _markdown(data) if b"`" in data or b"~~~" in data else []
    return []


def _rst_blocks(data: bytes) -> Stretches:
    """The literal blocks and code directives' bodies, tried only at lines with a `::` (found
    far faster than a pattern tried at every line)."""
    out: Stretches = []
    at = 0
    while (i := data.find(b"::", at)) != -1:
        opener = _RST_OPENER.match(data, data.rfind(b"\n", 0, i) + 1)
        if opener is not None and opener.end() > i \
                and (opener.group(2) or _BLANK_AHEAD.match(data, opener.end())):  # (else a definition list)
            body = _indented_past(len(opener.group(1).decode("utf-8", "replace"))).match(data, opener.end())
            assert body is not None  # (it matches the empty string)
            out.append(body.span())
            at = max(body.end(), opener.end())
        else:
            at = data.find(b"\n", i) + 1 or len(data)
    return out


@functools.lru_cache(maxsize=64)
def _indented_past(width: int) -> re.Pattern[bytes]:
    """Lines indented past `width` columns, and blank lines."""
    return re.compile(rb"(?:[ \t]{%d,}[^\n]*(?:\n|\Z)|[ \t]*\r?\n)*" % (width + 1))


def _inline_literals(data: bytes) -> Stretches:
    """Each start string paired with the first end string after it in its paragraph; found by
    bisection over the strings' places, so a page of unclosed starts stays linear."""
    ends = [m.start() for m in _LITERAL_END.finditer(data)]
    blanks = [m.start() for m in _BLANK_LINE.finditer(data)]
    out: Stretches = []
    at = 0
    for m in _LITERAL_START.finditer(data):
        if m.start() < at:
            continue
        i = bisect.bisect_left(ends, m.end() + 1)  # (something between the two)
        if i == len(ends):
            break
        b = bisect.bisect_left(blanks, m.start())
        if b == len(blanks) or blanks[b] > ends[i]:
            out.append((m.start(), ends[i] + 2))
            at = ends[i] + 2
    return out


def _union(a: Stretches, b: Stretches) -> Stretches:
    out: Stretches = []
    for start, end in sorted(a + b):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _markdown(data: bytes) -> Stretches:
    fences = _fenced(data)
    out: Stretches = []
    at = 0
    for start, end in [*fences, (len(data), len(data))]:
        out.extend(m.span() for m in _SPAN.finditer(data, at, start) if not m.group(1))
        if start < end:
            out.append((start, end))
        at = end
    return out


def _fenced(data: bytes) -> Stretches:
    """Fenced code blocks, an unclosed one running to the end (as CommonMark has it). MyST
    directive fences nest: each open one is on a stack, and a fence line closes the innermost
    when it has that fence's character, at least its length and no info string."""
    out: Stretches = []
    stack: list[bytes] = []  # the open directive fences
    code: tuple[int, bytes] | None = None  # the open code fence: where it starts, its fence
    for m in _FENCE.finditer(data):
        fence, info = m.group(1), m.group(2).strip()
        if fence[:1] == b"`" and b"`" in info:
            continue  # (a code span on one line, not a fence)
        if code is not None:
            if not info and fence[0] == code[1][0] and len(fence) >= len(code[1]):
                out.append((code[0], m.end()))
                code = None
        elif stack and not info and fence[0] == stack[-1][0] and len(fence) >= len(stack[-1]):
            stack.pop()
        elif _MYST_DIRECTIVE.match(info):
            stack.append(fence)
        else:
            code = (m.start(), fence)
    if code is not None:
        out.append((code[0], len(data)))
    return out
