"""A module's source with its function bodies cut, for `ast.parse`.

Of a function the API reads its header, its docstring, and whether one of its first three
statements after it warns of a deprecation (pymodule.py); the rest of the body is most of a
module's bytes, and Python's parser and the tree it builds cost in proportion to them.
A scanner of regular expressions reads the source one logical line at a time (strings,
comments, brackets and backslash continuations consumed whole) with its indentation. A body
with a docstring keeps it, one without becomes `...`, and one that mentions `warn` keeps its
first four statements; the lines cut become empty, so every line number stays. A
`__getattr__` outside any function is kept whole, what it defines too (pymodule walks all
of a module's).

Anything the scanner is unsure of gives None, and the caller parses the whole source: a line
it cannot read (a form feed, a stray backslash, brackets nested deeper than it follows, an
f-string whose fields it cannot delimit, as Python 3.12 allows), indentation whose tabs and
spaces do not nest, a lone carriage return, a NUL byte, or a coding whose bytes could hide a
quote or backslash. A syntax error inside a cut body is not seen: the module's API is read.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache

KEEP = 4  # statements kept when one may warn: a docstring and the three pymodule._warns reads
_NESTING = 16  # bracket levels the scanner follows inside one logical line


def _quoted(q: bytes) -> bytes:
    """Strings between `q` quotes, triple or single, as Python 3.11's tokenizer ends them."""
    t = q * 3
    return (t + rb"(?:[^" + q + rb"\\]++|\\.|" + q + rb"(?!" + q + q + rb"))*+" + t
            + rb"|" + q + rb"(?:[^" + q + rb"\\\n]++|\\.)*+" + q)


_STRING = rb"(?:" + _quoted(b"'") + rb"|" + _quoted(b'"') + rb")"


def _field_left_open(q: bytes) -> bytes:
    """A one-line f-string between `q` quotes that ends (for 3.11's tokenizer) inside one of its
    fields: Python 3.12 reads that quote as the start of a string in the field (PEP 701), so the
    scanner would misread the line. The pattern starts at the quote, which the search finds
    fast, and looks back for the prefix."""
    prefixed = rb"(?:(?<=\W[fF].)|(?<=\W[fF][rR].)|(?<=\W[rR][fF].)|(?<=\A[fF].)|(?<=\A[fF][rR].)|(?<=\A[rR][fF].))"
    return (q + prefixed + rb"(?:[^" + q + rb"\\\n{]++|\\.|\{\{|\{[^" + q + rb"\n}]*+\})*+\{(?!\{)[^" + q + rb"\n}]*+"
            + q)


_NESTED_QUOTES = re.compile(_field_left_open(b'"') + rb"|" + _field_left_open(b"'"), re.DOTALL)
# A triple-quoted f-string: 3.12 may read a field of one across lines with the same quotes in it,
# which no one-line pattern can tell, so on 3.12 and later any such module is parsed whole.
_TRIPLE_FSTRING = re.compile(rb"(?:\"\"\"|''')(?:(?<=\W[fF]...)|(?<=\W[fF][rR]...)|(?<=\W[rR][fF]...)"
                             rb"|(?<=\A[fF]...)|(?<=\A[fF][rR]...)|(?<=\A[rR][fF]...))")
_CONTINUATION = rb"\\\r?\n"
_COMMENT = rb"#[^\n]*+"


def _bracketed(depth: int) -> bytes:
    """Brackets and what they hold (newlines and comments too), `depth` levels deep. Their kinds
    are not paired: a mismatch is the parser's to find."""
    inner = rb"(?:[^'\"#\\()\[\]{}]++|" + _STRING + rb"|" + _COMMENT + rb"|" + _CONTINUATION
    if depth > 1:
        inner += rb"|" + _bracketed(depth - 1)
    return rb"[(\[{]" + inner + rb")*+[)\]}]"


_TOKENS = rb"(?:[^'\"#\\\n()\[\]{}\f]++|" + _STRING + rb"|" + _CONTINUATION + rb"|" + _bracketed(_NESTING) + rb")++"
_END = rb"(?:" + _COMMENT + rb")?(?:\n|\Z)"
_BLANK = rb"[ \t]*+(?:" + _COMMENT + rb")?\r?\n"
# A logical line after any blank ones: its indentation, `def` or a clause or decorator that is
# no statement of its own, and its tokens.
_LINE = re.compile(rb"(?:" + _BLANK + rb")*+([ \t]*+)(?=[^ \t])(?:((?:async[ \t]+)?def[ \t\\])"
                   rb"|((?:else|elif|except|finally)\b|@))?(" + _TOKENS + rb")" + _END, re.DOTALL)
_TRAILER = re.compile(rb"(?:[ \t\r\n]++|" + _COMMENT + rb")*+")  # blank and comment lines at the end
_DOCSTRING = re.compile(rb"[rRbBuUfF]{0,2}['\"]|[(\\]")  # may be a string: perhaps a docstring
_COMPOUND = re.compile(rb"(?:if|try|for|while|with|async|match)\b")
_GETATTR = re.compile(rb"[ \t\\\r\n]*+__getattr__\b")
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_SAFE_CODING = re.compile(rb"(?i)(?:utf[-_]?8|ascii|us-ascii|latin[-_]?1|iso[-_]?8859[-_]?\d+|cp125\d)(?:[-_].*)?$")


@lru_cache(maxsize=64)
def _deeper(indent: bytes) -> re.Pattern[bytes]:
    """Blank lines and logical lines indented deeper than `indent`: the rest of a body."""
    return re.compile(rb"(?:" + _BLANK + rb"|" + re.escape(indent) + rb"[ \t]++(?=[^ \t\r\n#])" + _TOKENS + _END
                      + rb")*+", re.DOTALL)


class _Doubt(Exception):
    """The scanner cannot be sure of the source's structure."""


class _Body:
    """A function whose body is being read: its def's indentation, its body's, and statements seen."""

    __slots__ = ("indent", "body", "statements", "decorated", "whole")

    def __init__(self, indent: bytes, whole: bool) -> None:
        self.indent = indent
        self.body: bytes | None = None
        self.statements = 0
        self.decorated: int | None = None  # where the decorators before the next statement start
        self.whole = whole  # kept whole (a module's `__getattr__`, and what is defined in it)


def outline(data: bytes) -> bytes | None:
    """`data` with its function bodies cut (docstrings kept), or None when in doubt."""
    if b"\0" in data or data.count(b"\r") != data.count(b"\r\n") or not _safe_coding(data) \
            or (sys.version_info >= (3, 12) and _pep701_doubt(data)):
        return None
    try:
        cuts = _cuts(data)
    except _Doubt:
        return None
    if not cuts:
        return data
    out, last = [], 0
    for start, end, instead in cuts:
        out += [data[last:start], instead + b"\n" * data.count(b"\n", start, end)]
        last = end
    out.append(data[last:])
    return b"".join(out)


def _pep701_doubt(data: bytes) -> bool:
    """Could Python 3.12+ read an f-string of `data` other than 3.11's tokenizer does (PEP 701)?"""
    return _NESTED_QUOTES.search(data) is not None or _TRIPLE_FSTRING.search(data) is not None


def _safe_coding(data: bytes) -> bool:
    """No coding cookie, or one whose every quote, backslash and newline byte is that character."""
    for line in data.split(b"\n", 2)[:2]:
        cookie = _CODING.match(line)
        if cookie:
            return bool(_SAFE_CODING.match(cookie.group(1)))
    return True


def _cuts(data: bytes) -> list[tuple[int, int, bytes]]:
    """(start, end, what stands there instead) of each body's rest, in order, none inside another."""
    cuts: list[tuple[int, int, bytes]] = []
    bodies: list[_Body] = []
    pos, size = 0, len(data)
    while pos < size:
        line = _LINE.match(data, pos)
        if line is None:
            if not _TRAILER.fullmatch(data, pos):
                raise _Doubt
            break
        indent, pos = line.group(1), line.end()
        while bodies and not _within(indent, bodies[-1].indent):
            bodies.pop()
        if bodies and _statement(bodies[-1], line, data):
            cut = _cut(bodies[-1], line, data)
            if cut is not None:
                cuts.append(cut)
                bodies.pop()
                pos = cut[1]
                continue
        if line.start(2) >= 0:
            whole = bodies[-1].whole if bodies else _GETATTR.match(data, line.start(4)) is not None
            bodies.append(_Body(indent, whole=whole))
    return cuts


def _statement(body: _Body, line: re.Match[bytes], data: bytes) -> bool:
    """Does `line`, inside `body`, begin one of its statements (counted)? Decorators are noted."""
    indent = line.group(1)
    if body.body is None:
        body.body = indent
    if indent != body.body:
        if not indent.startswith(body.body):
            raise _Doubt  # a dedent to no level this body has
        return False
    if line.start(3) >= 0:
        if data[line.start(3)] == ord("@") and body.decorated is None:
            body.decorated = line.start(1)
        return False
    body.statements += 1
    return True


def _opens_block(line: re.Match[bytes], data: bytes) -> bool:
    """Is the logical line a compound statement: its block follows on deeper lines, or on
    this one with clauses after it (`try: x` then `except E: y`)?"""
    return _COMPOUND.match(data, line.start(4)) is not None \
        or data[line.start(4):line.end(4)].rstrip().endswith(b":")


def _within(indent: bytes, outer: bytes) -> bool:
    """Is a line with `indent` inside a block opened at `outer`? Neither a longer nor a prefix: doubt."""
    if len(indent) > len(outer):
        if not indent.startswith(outer):
            raise _Doubt
        return True
    if not outer.startswith(indent):
        raise _Doubt
    return False


def _cut(body: _Body, line: re.Match[bytes], data: bytes) -> tuple[int, int, bytes] | None:
    """What to cut of `body` at `line`, its statement `body.statements`, or None to read on. A
    body without a docstring becomes `...` (its first statement is not read either); one with a
    docstring keeps it. A body that mentions `warn` keeps its first four statements."""
    if body.whole:
        return None
    decorated, body.decorated = body.decorated, None
    first = body.statements == 1
    if first and not _DOCSTRING.match(data, line.end(1)):
        begin = line.start(1) if decorated is None else decorated
        start, end = begin + len(line.group(1)), _body_end(body.indent, begin, data)
        if data.find(b"warn", start, end) < 0:
            return start, end, b"..."
    if first and _opens_block(line, data):
        return None
    begin = line.end() if first else line.start(1) if decorated is None else decorated
    end = _body_end(body.indent, begin, data)
    kept = body.statements if first else body.statements - 1
    if end == begin or (kept < KEEP and data.find(b"warn", begin, end) >= 0):
        return None
    return begin, end, b""


def _body_end(indent: bytes, begin: int, data: bytes) -> int:
    """Where the body of a def at `indent` ends, read from `begin`, a line inside it."""
    rest = _deeper(indent).match(data, begin)  # (always a match, if only an empty one)
    return rest.end() if rest else begin
