"""MkDocs / Material syntax that Markdown readers show raw, rewritten before parsing.

A Material page is Markdown plus extensions whose syntax CommonMark does not know:
- admonitions and content tabs (`!!! note "Title"`, `??? tip`, `=== "Python"`) hold a body
  indented by four spaces, which CommonMark reads as one code block: the body is dedented
  under a label line (`Note: Title`, `Python`);
- pymdownx blocks (`/// tip | Title` ... `///`, FastAPI's `//// tab | Python 3.10+`) become
  the label, their closing lines and indented options nothing;
- attribute lists (`## Title { #anchor }`, `[link](x.md){.internal-link target=_blank}`)
  are removed;
- Jinja from mkdocs-macros or a hook (`{{ version }}`, `{% if %}`, `{# note #}`) is removed
  where the site renders it (`jinja`): its values come from a build we do not run. Elsewhere
  braces are the author's text (a prompt template's `{{DOCUMENT}}`) and stay;
- reference links with no definition on the page (mkdocs-autorefs' `[BaseModel][pydantic.BaseModel]`,
  `[str][]`) keep their text, as the rendered page shows it.
Code fences and inline code are left exactly as written.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_BOXED = re.compile(r"""^([ \t]*)(!!!|\?\?\?\+?|===\+?)[ \t]+(?:([\w-]+)(?:[ \t]+[^"'\s]+)*)?[ \t]*(?:(["'])(.*?)\4)?[ \t]*$""")
_BLOCK = re.compile(r"^([ \t]*)(/{3,})[ \t]*(?:([\w-]+)[ \t]*(?:\|[ \t]*(.*?))?)?[ \t]*$")
_BLOCK_OPTION = re.compile(r"^[ \t]+[\w-]+:(?:\s|$)")
_DEFINITION = re.compile(r"^ {0,3}\[([^\]]+)\]:\s")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_TOKEN = r"""(?:[#.][\w:-]+|[\w:-]+=(?:"[^"]*"|'[^']*'|[^\s{}"']+))"""
_ATTR_LIST = re.compile(r"[ \t]?\{:?[ \t]*" + _TOKEN + r"(?:[ \t]+(?:" + _TOKEN + r"|[\w-]+))*[ \t]*\}")
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}")
_REF_LINK = re.compile(r"(?<![\w\])])!?\[((?:[^\[\]`]|`[^`]*`)+)\]\[([^\[\]]*)\]")
_LABELLED_BLOCKS = {"tab", "details", "admonition"}  # blocks whose title is the label itself
_UNLABELLED_BLOCKS = {"html", "define", "caption"}


def clean(text: str, *, jinja: bool = False) -> str:
    """The page with the syntax above rewritten; `jinja` when its site renders Jinja."""
    if not any(mark in text for mark in ("!!!", "???", "===", "//", "{", "][")):
        return text
    lines = text.split("\n")
    defined = {_label(m.group(1)) for line in lines if (m := _DEFINITION.match(line))}
    return "\n".join(_Cleaner(defined, jinja).lines(lines))


class _Cleaner:
    """Rewrites a page's lines; `defined` are its reference definitions, normalised."""

    def __init__(self, defined: set[str], jinja: bool) -> None:
        self.defined = defined
        self.jinja = jinja

    def lines(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        fence = ""
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if fence:
                out.append(line)
                if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                    fence = ""
                continue
            if opened := _FENCE.match(line):
                fence = opened.group(1)
                out.append(line)
                continue
            if (boxed := _BOXED.match(line)) and (boxed.group(5) if boxed.group(2).startswith("===")
                                                  else boxed.group(3) or boxed.group(5)):
                indent, kind, title = boxed.group(1), boxed.group(3) or "", boxed.group(5) or ""
                body, i = _indented_body(lines, i, len(indent) + 4)
                label = title if boxed.group(2).startswith("===") else _admonition_label(kind, title)
                out.extend(["", indent + self.inline(label) if label else "", ""])
                out.extend(indent + x if x.strip() else "" for x in self.lines(body))
                out.append("")
                continue
            if block := _BLOCK.match(line):
                out.append("")
                if block.group(3):  # an opening line: its label, then skip its indented options
                    label = _block_label(block.group(3).lower(), block.group(4) or "")
                    if label:
                        out.extend([block.group(1) + self.inline(label), ""])
                    while i < len(lines) and _BLOCK_OPTION.match(lines[i]):
                        i += 1
                continue
            out.append(self.inline(line))
        return out

    def inline(self, line: str) -> str:
        """One line outside fences: attribute lists (and Jinja, where rendered) removed outside
        inline code, undefined reference links as their text."""
        if "{" in line:
            parts, last = [], 0
            for a, b in _code_spans(line):
                parts.extend([self._markup(line[last:a]), line[a:b]])
                last = b
            parts.append(self._markup(line[last:]))
            line = "".join(parts)
        if "][" in line:
            line = self._ref_links(line)
        return line

    def _markup(self, text: str) -> str:
        text = _ATTR_LIST.sub("", text)
        return _JINJA.sub("", text) if self.jinja else text

    def _ref_links(self, line: str) -> str:
        """`[text][ref]` and `[text][]` whose reference the page does not define: the text (a
        match that starts inside inline code is code, and stays)."""
        spans = _code_spans(line)

        def replace(m: re.Match[str]) -> str:
            if any(a <= m.start() < b for a, b in spans):
                return m.group(0)
            ref = _label(m.group(2) or m.group(1))
            return m.group(0) if ref in self.defined else m.group(1)

        return _REF_LINK.sub(replace, line)


def _indented_body(lines: list[str], i: int, width: int) -> tuple[list[str], int]:
    """The lines from `i` indented by at least `width` (blank lines inside too), dedented, and
    the index after them; trailing blank lines are left to what follows."""
    body: list[str] = []
    end = i
    while end < len(lines):
        line = lines[end].replace("\t", "    ")
        if line.strip() and len(line) - len(line.lstrip()) < width:
            break
        body.append(line[width:] if line.strip() else "")
        end += 1
    while body and not body[-1].strip():
        body.pop()
        end -= 1
    return body, end


def _admonition_label(kind: str, title: str) -> str:
    kind = kind.replace("-", " ").capitalize()
    return f"{kind}: {title}" if title else f"{kind}:" if kind else title


def _block_label(kind: str, title: str) -> str:
    if kind in _UNLABELLED_BLOCKS:
        return ""
    if kind in _LABELLED_BLOCKS:
        return title
    return _admonition_label(kind, title)


def _label(text: str) -> str:
    return " ".join(text.lower().split())


def _code_spans(line: str) -> list[tuple[int, int]]:
    return [m.span() for m in _CODE_SPAN.finditer(line)] if "`" in line else []
