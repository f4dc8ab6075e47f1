"""Docstrings (reST, Google and NumPy styles) rendered to Markdown, with what they say of versions.

Not a full reST reader: docstrings use a small part of it (field lists, a few directives,
literal blocks, doctests, roles), and docutils would need Sphinx's roles and directives to
read them without errors. Whatever is not recognised passes through as plain text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_DOC_CHARS = 20_000  # a longer docstring is clipped (generated modules carry huge ones)

_DIRECTIVE = re.compile(r"^\.\.\s+([\w:-]+)::\s*(.*)$")
_FIELD = re.compile(r"^:(param|parameter|arg|argument|key|keyword|type|returns?|rtype|raises?|except|exception|"
                    r"yields?|ytype|var|ivar|cvar|vartype)(?:\s+([^:]+))?:\s*(.*)$")
_SECTIONS = ("Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|Returns|Return|"
             "Yields|Yield|Receives|Raises|Raise|Warns|Attributes|Examples?|Notes?|Warnings?|See Also|References|"
             "Todo|Methods")
_GOOGLE = re.compile(rf"^({_SECTIONS}):\s*$")
_NUMPY_SECTION = re.compile(rf"^({_SECTIONS})$")  # over a rule; another title there is the docstring's own
_NUMPY_RULE = re.compile(r"^-{3,}\s*$")
_ROLE = re.compile(r":(?:py:)?[\w.-]+:`(~?)([^`<]*?)(?:\s*<([^>]+)>)?`")
_DOUBLE_TICKS = re.compile(r"``([^`]+)``")
_GOOGLE_ITEM = re.compile(r"^\*{0,2}([\w.]+)\*{0,2}\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")  # name (type): text
_NUMPY_ITEM = re.compile(r"^\*{0,2}([\w.]+)\*{0,2}(?:\s+:\s*(.*))?$")  # name : type
_ADMONITIONS = {"note": "Note", "warning": "Warning", "seealso": "See also", "tip": "Tip",
                "important": "Important", "caution": "Caution", "attention": "Attention", "hint": "Hint",
                "danger": "Danger", "todo": "Todo"}
_CODE_DIRECTIVES = {"code-block", "code", "sourcecode", "doctest", "testcode"}
_FIELD_TITLES = {"param": "Parameters", "parameter": "Parameters", "arg": "Parameters", "argument": "Parameters",
                 "key": "Parameters", "keyword": "Parameters", "returns": "Returns", "return": "Returns",
                 "raises": "Raises", "raise": "Raises", "except": "Raises", "exception": "Raises",
                 "yields": "Yields", "yield": "Yields", "var": "Attributes", "ivar": "Attributes",
                 "cvar": "Attributes"}


@dataclass(frozen=True)
class Rendered:
    markdown: str
    since: str | None  # the first `versionadded`
    deprecated: str | None  # the `deprecated` directive's message ("" when it gave none)


def render(doc: str) -> Rendered:
    """Markdown for a cleaned docstring (`ast.get_docstring`), with its version notes."""
    lines = doc[:MAX_DOC_CHARS].splitlines()
    out: list[str] = []
    state = _State()
    i = 0
    while i < len(lines):
        i = _line(lines, i, out, state)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
    return Rendered(text, state.since, state.deprecated)


@dataclass
class _State:
    since: str | None = None
    deprecated: str | None = None
    fields: str = ""  # the title of the field list being written, if any


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block(lines: list[str], start: int, base: int) -> tuple[list[str], int]:
    """The lines from `start` indented deeper than `base` (blank lines inside kept), dedented."""
    while start < len(lines) and not lines[start].strip():
        start += 1
    end = start
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > base):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    body = lines[start:end]
    depth = min((_indent(x) for x in body if x.strip()), default=0)
    return [x[depth:] for x in body], end


def _numpy_title(lines: list[str], i: int) -> bool:
    return i + 1 < len(lines) and bool(_NUMPY_RULE.match(lines[i + 1].strip()))


def _section_ends(lines: list[str], start: int, i: int) -> bool:
    """Is line `i` (at a NumPy section's indent) the title that ends the section from `start`?"""
    return _numpy_title(lines, i) and (
        i == start or not lines[i - 1].strip() or bool(_NUMPY_SECTION.match(lines[i].strip())))


def _numpy_body(lines: list[str], start: int, base: int) -> tuple[list[str], int]:
    """A NumPy section's lines from `start`, up to the next section's title (a line over a
    rule at the title's indent: a section's name, or another after a blank line, as doctest
    output may hold a table's head) or a line left of it, dedented to the title's indent."""
    end = start
    while end < len(lines) and not (lines[end].strip() and (
            _indent(lines[end]) < base or (_indent(lines[end]) == base and _section_ends(lines, start, end)))):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return [x[base:] for x in lines[start:end]], end


def inline(text: str) -> str:
    """Roles and reST literals as Markdown code: :func:`~a.b` -> `b`, ``x`` -> `x`."""
    def role(m: re.Match[str]) -> str:
        target = (m.group(3) or m.group(2)).strip()
        shown = m.group(2).strip() if m.group(3) else target
        return f"`{shown.rsplit('.', 1)[-1] if m.group(1) else shown}`"

    return _DOUBLE_TICKS.sub(r"`\1`", _ROLE.sub(role, text))


def _line(lines: list[str], i: int, out: list[str], state: _State) -> int:
    """Write what starts at line `i`; return the index of the next line to read."""
    line = lines[i]
    stripped = line.strip()
    base = _indent(line)
    if not stripped:
        state.fields = ""
        out.append("")
        return i + 1
    if stripped.startswith(">>>"):
        end = i
        while end < len(lines) and lines[end].strip():
            end += 1
        out += ["", "```pycon", *(x[base:] for x in lines[i:end]), "```", ""]
        return end
    m = _DIRECTIVE.match(stripped)
    if m:
        return _directive(m.group(1).lower(), m.group(2).strip(), lines, i, base, out, state)
    f = _FIELD.match(stripped)
    if f:
        body, end = _block(lines, i + 1, base)
        _field(f.group(1).lower(), (f.group(2) or "").strip(), " ".join([f.group(3), *body]).strip(), out, state)
        return end
    g = _GOOGLE.match(stripped)
    numpy = _NUMPY_SECTION.match(stripped) and _numpy_title(lines, i)
    if g or numpy:
        title = g.group(1) if g else stripped
        body, end = _block(lines, i + 1, base) if g else _numpy_body(lines, i + 2, base)
        _section(title, body, out, numpy=not g)
        return end
    if stripped.endswith("::") and i + 1 < len(lines):
        head = stripped[:-2].rstrip()
        out.append(inline(line[:base] + head + (":" if head and not head.endswith(":") else "")))
        body, end = _block(lines, i + 1, base)
        if body:
            out += ["", "```python", *body, "```", ""]
        return end
    state.fields = ""
    out.append(inline(line))
    return i + 1


def _directive(name: str, arg: str, lines: list[str], i: int, base: int, out: list[str], state: _State) -> int:
    body, end = _block(lines, i + 1, base)
    options = [x for x in body if x.startswith(":")]
    body = body[len(options):] if options and body[:len(options)] == options else body
    text = inline(" ".join(x.strip() for x in body if x.strip()))
    if name in ("versionadded", "versionchanged", "deprecated"):
        version, _, rest = arg.partition(" ")
        message = " ".join(x for x in (inline(rest), text) if x)
        if name == "versionadded":
            state.since = state.since or version
            out += ["", f"*Added in version {version}.*" + (f" {message}" if message else ""), ""]
        elif name == "versionchanged":
            out += ["", f"*Changed in version {version}:* {message}".rstrip(), ""]
        else:
            state.deprecated = f"Deprecated since version {version}" + (f": {message}" if message else ".")
            out += ["", f"**{state.deprecated}**", ""]
    elif name in _CODE_DIRECTIVES:
        out += ["", f"```{arg or 'python'}", *body, "```", ""]
    elif name in _ADMONITIONS:
        out += ["", f"**{_ADMONITIONS[name]}:** " + " ".join(x for x in (inline(arg), text) if x), ""]
    elif name == "admonition" and arg:  # (titled by its argument)
        out += ["", f"**{inline(arg)}:** {text}".rstrip(), ""]
    elif body:
        out += ["", *[inline(x) for x in body], ""]
    return end


def _field(name: str, arg: str, text: str, out: list[str], state: _State) -> None:
    if name in ("type", "rtype", "vartype", "ytype"):
        return  # the signature shows annotations; a separate type line adds little
    title = _FIELD_TITLES.get(name, name.title())
    if state.fields != title:
        out += ["", f"**{title}:**", ""]
        state.fields = title
    words = arg.split()
    label = f"`{words[-1]}`" + (f" ({' '.join(words[:-1])})" if len(words) > 1 else "") if words else ""
    text = inline(text)
    out.append(f"- {label}: {text}" if label and text else f"- {label or text}")


def _section(title: str, body: list[str], out: list[str], *, numpy: bool) -> None:
    """A Google (`Args:` + indented items) or NumPy (`Parameters` + rule) section. A NumPy
    section's items may sit indented under its title, as numpydoc reads them too."""
    out += ["", f"**{title}:**", ""]
    depth = min((_indent(x) for x in body if x.strip()), default=0)
    body = [x[depth:] for x in body]
    if title.lower().startswith(("example", "note", "warning", "see also", "reference", "todo")):
        i = 0
        while i < len(body):
            i = _line(body, i, out, _State())
        out.append("")
        return
    items: list[list[str]] = []
    for line in body:
        if line.strip() and _indent(line) == 0:
            items.append([line.strip()])
        elif items and line.strip():
            items[-1].append(line.strip())
    for item in items:
        head, rest = item[0], inline(" ".join(item[1:]))
        m = (_NUMPY_ITEM if numpy else _GOOGLE_ITEM).match(head)
        if m is None:
            out.append(f"- {inline(' '.join(item))}")
            continue
        kind = m.group(2) if numpy or m.group(3) is not None else None
        desc = rest if numpy else " ".join(x for x in (inline(m.group(3)), rest) if x)
        out.append(f"- `{m.group(1)}`" + (f" ({kind.strip()})" if kind else "") + (f": {desc}" if desc else ""))
    out.append("")
