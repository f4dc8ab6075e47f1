"""Rows of text from JavaScript literals in MDX: arrays and objects of strings.

Component-heavy sites keep reference tables (utilities, props, options) as data in JSX props
(`<ApiTable rows={[["rounded-t", ["border-top-left-radius", ...]], ...]} />`,
`<PropsTable data={[{name: "asChild", type: "boolean"}]} />`) or in `export const` arrays.
Rendered, they are a page's most specific text. This reads the literal parts of such code:
strings (and backtick strings without `${}`), arrays and objects of them. Anything computed
(identifiers, calls, spreads, template strings with `${}`, JSX) is skipped as a whole, so
`[...].flatMap(...)` keeps the rows written out and drops the ones built by code.
"""

from __future__ import annotations

import re

# What a literal reads to; None stands for a value computed by code.
Value = str | list["Value | None"] | dict[str, "Value | None"]

_MAX_ROWS = 500
_MAX_DEPTH = 20
_WORD = re.compile(r"[\w$]+")
_CLOSERS = {"(": ")", "[": "]", "{": "}"}


class _Reader:
    """A tolerant recursive reader over one piece of JS; never raises on odd input."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def arrays(self) -> list[list[Value | None]]:
        """Every top-level array literal in the text, in order."""
        out: list[list[Value | None]] = []
        n = len(self.text)
        while self.pos < n and len(out) < _MAX_ROWS:
            ch = self.text[self.pos]
            if ch == "[":
                out.append(self.array(0))
            elif ch in "\"'`":
                self.string()
            else:
                self.pos += 1
        return out

    def value(self, depth: int) -> Value | None:
        """One element or property value; None (and the span skipped) when it is code."""
        self.space()
        if self.pos >= len(self.text):
            return None
        ch = self.text[self.pos]
        found: Value | None = None
        if ch == "[" and depth < _MAX_DEPTH:
            found = self.array(depth + 1)
        elif ch == "{" and depth < _MAX_DEPTH:
            found = self.object(depth + 1)
        elif ch in "\"'`":
            found = self.string()
        self.space()
        if self.pos < len(self.text) and self.text[self.pos] not in ",]}":
            found = None  # `"a" + b`, `[...].map(...)`: an expression, not a literal
        if found is None:
            self.skip_expression()
        return found

    def array(self, depth: int) -> list[Value | None]:
        self.pos += 1  # "["
        items: list[Value | None] = []
        while True:
            self.space()
            if self.pos >= len(self.text):
                return items
            if self.text[self.pos] == "]":
                self.pos += 1
                return items
            if self.text[self.pos] == ",":
                self.pos += 1
                continue
            before = self.pos
            items.append(self.value(depth))
            if self.pos == before:  # a stray closer: stop here rather than loop
                self.pos += 1
                return items

    def object(self, depth: int) -> dict[str, Value | None]:
        self.pos += 1  # "{"
        props: dict[str, Value | None] = {}
        while True:
            self.space()
            if self.pos >= len(self.text):
                return props
            ch = self.text[self.pos]
            if ch == "}":
                self.pos += 1
                return props
            if ch == ",":
                self.pos += 1
                continue
            before = self.pos
            key = self.string() if ch in "\"'" else self.word()
            self.space()
            if key and self.pos < len(self.text) and self.text[self.pos] == ":":
                self.pos += 1
                props[key] = self.value(depth)
            else:  # shorthand `{a, b}`, spread `...x`, a method: code
                self.skip_expression()
            if self.pos == before:  # a stray closer: stop here rather than loop
                self.pos += 1
                return props

    def string(self) -> str | None:
        """A string literal's value; None for a template with `${}` (or an unclosed one)."""
        quote = self.text[self.pos]
        out: list[str] = []
        i = self.pos + 1
        n = len(self.text)
        while i < n:
            ch = self.text[i]
            if ch == "\\" and i + 1 < n:
                nxt = self.text[i + 1]
                out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
                i += 2
                continue
            if ch == quote:
                self.pos = i + 1
                value = "".join(out)
                return None if quote == "`" and "${" in value else value
            if ch == "\n" and quote != "`":
                break
            out.append(ch)
            i += 1
        self.pos = i
        return None

    def word(self) -> str:
        m = _WORD.match(self.text, self.pos)
        if not m:
            return ""
        self.pos = m.end()
        return m.group()

    def space(self) -> None:
        n = len(self.text)
        while self.pos < n and self.text[self.pos].isspace():
            self.pos += 1

    def skip_expression(self) -> None:
        """Move past code up to the next `,` `]` `}` at this level, brackets and strings balanced."""
        stack: list[str] = []
        n = len(self.text)
        while self.pos < n:
            ch = self.text[self.pos]
            if ch in "\"'`":
                self.string()
                continue
            if ch in _CLOSERS:
                stack.append(_CLOSERS[ch])
            elif ch in ")]}":
                if not stack:
                    return
                if ch == stack[-1]:
                    stack.pop()
            elif ch == "," and not stack:
                return
            self.pos += 1


def literal_rows(code: str) -> list[str]:
    """Markdown list rows (`- a | b`) of the literal tables in `code` (props or an export)."""
    rows = [row for items in _Reader(code).arrays() for row in _rows_of(items)]
    return rows[:_MAX_ROWS]


def tab_labels(code: str) -> dict[str, str]:
    """Docusaurus `values={[{label: "Yarn", value: "yarn"}, ...]}`: the label of each tab value."""
    labels: dict[str, str] = {}
    for items in _Reader(code).arrays():
        for item in items:
            if isinstance(item, dict):
                value, label = item.get("value"), item.get("label")
                if isinstance(value, str) and isinstance(label, str):
                    labels[value] = label
    return labels


def _rows_of(items: list[Value | None]) -> list[str]:
    """An array of rows (arrays or objects) gives one row each. A flat array of strings is
    configuration (`items={["npm", "pnpm"]}`, `utilities={["p", "px"]}`), not a table: as
    text it would only give sections like "Customizing your theme" words they do not have."""
    out = []
    for item in items:
        if isinstance(item, list):
            cells = [_cell(c) for c in item]
        elif isinstance(item, dict):
            cells = [_cell(c) for c in item.values()]
        else:
            continue
        if sum(1 for c in cells if c) >= 2:
            out.append(_row(cells))
    return out


def _cell(value: Value | None) -> str:
    """A string, or a list of strings joined; nested objects and code give nothing."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return ", ".join(" ".join(str(v).split()) for v in value)
    return ""


def _row(cells: list[str]) -> str:
    return "- " + " | ".join(_escape(c) for c in cells if c)


def _escape(text: str) -> str:
    """Keep `<value>` and `|` literal when markdown-it reads the row back."""
    return re.sub(r"([\\<|*`])", r"\\\1", text)
