"""Markdown's include syntaxes, expanded in the text before it is parsed.

MkDocs sites pull code and shared text in with extensions the page only names:
pymdownx.snippets (`--8<-- "file"`, one per line or a block of names between two `--8<--`
lines, `file.md:section` and `file.py:3:10` too), markdown-include (`{!file!}`, FastAPI's
`{!> file!}`), FastAPI's own `{* ../../docs_src/x.py ln[1:9] hl[3] *}` (a code block of the
file), mkdocs-macros' `{% include "file" %}`; MyST pages use ```` ```{include} ```` and
```` ```{literalinclude} ```` fences. Each is replaced by the file's text (indented as the line
that named it), or by a fenced code block where the syntax shows code; included Markdown is
expanded in turn. MkDocs resolves these from the folder it runs in, which the page does not
say, so a relative name is tried from the page's folder and then from each folder above it
(`Includes.find(search_up=True)`); MyST's, like Sphinx's, from the including file, else the
page. A name that cannot be read inside the source root leaves nothing.
"""

from __future__ import annotations

import re

from .common import fence
from .includes import Includes
from .literal import language_of, select

_SNIPPET = re.compile(r"""^([ \t]*)-{1,}8<-{1,}[ \t]+(["'])(.+?)\2[ \t]*$""")
_SNIPPET_BLOCK = re.compile(r"^([ \t]*)-{1,}8<-{1,}[ \t]*$")
_SNIPPET_MARK = re.compile(r"^\s*(?:#|//|<!--|;)?\s*-{1,}8<-{1,}\s+\[(?:start|end):[\w-]+\]")
_MD_INCLUDE = re.compile(r"\{!\s*>?\s*([^!{}\s][^!{}]*?)\s*!(?:lines=([\d\s-]+))?\}")
_FASTAPI = re.compile(r"^([ \t]*)\{\*\s*(\S+)((?:\s+\w+\[[^\]]*\])*)\s*\*\}[ \t]*$")
_FASTAPI_LINES = re.compile(r"\bln\[([^\]]*)\]")
_MACRO_INCLUDE = re.compile(r"""^([ \t]*)\{%-?\s*include\s+(["'])(.+?)\2\s*-?%\}[ \t]*$""")
_MYST = re.compile(r"^([ \t]*)(`{3,}|~{3,})\{(include|literalinclude)\}\s+(\S.*?)\s*$")
_OPTION = re.compile(r"^\s*:([\w-]+):(?:\s+(.*))?$")
_MARKUP = (".md", ".markdown", ".txt", ".rst", ".html")


def expand(text: str, includes: Includes, source: str) -> str:
    """`text` (the file `source`) with every include it names replaced by what it includes."""
    if not any(mark in text for mark in ("8<", "{!", "{*", "include")):
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if m := _SNIPPET.match(line):
            out.extend(_indented(_snippet(m.group(3), includes, source), m.group(1)))
        elif (m := _SNIPPET_BLOCK.match(line)) and _closes_block(lines, i):
            while i < len(lines) and not _SNIPPET_BLOCK.match(lines[i]):
                name = lines[i].strip()
                if name and not name.startswith(";"):
                    out.extend(_indented(_snippet(name, includes, source), m.group(1)))
                i += 1
            i += 1
        elif _SNIPPET_MARK.match(line):
            continue
        elif m := _FASTAPI.match(line):
            out.extend(_indented(_fastapi(m.group(2), m.group(3), includes, source), m.group(1)))
        elif m := _MACRO_INCLUDE.match(line):
            out.extend(_indented(_file(m.group(3), includes, source, search_up=True), m.group(1)))
        elif m := _MYST.match(line):
            i = _myst(lines, i, m, includes, source, out)
        elif "{!" in line:
            out.extend(_MD_INCLUDE.sub(lambda mi: _markdown_include(mi, includes, source), line).split("\n"))
        else:
            out.append(line)
    return "\n".join(out)


def _closes_block(lines: list[str], i: int) -> bool:
    """A bare `--8<--` opens a block of file names only if another closes it soon."""
    return any(_SNIPPET_BLOCK.match(line) for line in lines[i:i + 50])


def _indented(text: str | None, indent: str) -> list[str]:
    if text is None:
        return []
    return [indent + line if line.strip() else "" for line in text.split("\n")]


def _file(name: str, includes: Includes, source: str, *, search_up: bool, markup: bool = True) -> str | None:
    """The text of `name` as named in `source`, its own includes expanded when it is markup."""
    rel = includes.find(name, source, search_up=search_up)
    if rel is None and not search_up:
        rel = includes.find(name, includes.page)
    if rel is None or not includes.enter(rel, source):
        return None
    text = includes.read(rel)
    if text is None:
        return None
    if markup and rel.lower().endswith(_MARKUP):
        return expand(text, includes, rel)
    return text


def _snippet(spec: str, includes: Includes, source: str) -> str | None:
    """pymdownx.snippets: `file`, `file:3:10` (lines) or `file:name` (a marked section)."""
    if "://" in spec:
        return None  # a URL snippet: never fetched
    name, _, rest = spec.partition(":")
    text = _file(name, includes, source, search_up=True)
    if text is None:
        return None
    if not rest:
        return "\n".join(line for line in text.split("\n") if not _SNIPPET_MARK.match(line))
    first, _, last = rest.partition(":")
    if first.isdigit() or (not first and last.isdigit()):
        return select(text, {"lines": f"{first or 1}-{last}"})
    start, end = f"[start:{rest}]", f"[end:{rest}]"
    lines = text.split("\n")
    begin = next((n for n, line in enumerate(lines) if start in line and "8<" in line), None)
    if begin is None:
        return None
    stop = next((n for n in range(begin + 1, len(lines)) if end in lines[n] and "8<" in lines[n]), len(lines))
    return "\n".join(lines[begin + 1:stop])


def _fastapi(name: str, options: str, includes: Includes, source: str) -> str | None:
    """FastAPI's `{* file ln[1:9,12:14] hl[3] *}`: the file (or its `ln` lines) as a code block."""
    text = _file(name, includes, source, search_up=True, markup=False)
    if text is None:
        return None
    ranges = _FASTAPI_LINES.search(options)
    if ranges:
        text = select(text, {"lines": ranges.group(1).replace(":", "-")}) or text
    return fence(text, language_of(name))


def _markdown_include(m: re.Match[str], includes: Includes, source: str) -> str:
    """markdown-include's `{!file!}` (optionally `!lines=1 3-5}`), inline in its line."""
    text = _file(m.group(1), includes, source, search_up=True)
    if text is None:
        return ""
    if m.group(2):
        text = select(text, {"lines": ",".join(m.group(2).split())}) or ""
    return text.strip("\n")


def _myst(lines: list[str], i: int, m: re.Match[str], includes: Includes, source: str, out: list[str]) -> int:
    """A MyST include fence opened at lines[i-1]: its text (or code) in `out`; the index after it."""
    indent, ticks, kind, name = m.groups()
    options: dict[str, str] = {}
    end = i
    while end < len(lines) and not lines[end].strip().startswith(ticks):
        option = _OPTION.match(lines[end])
        if option:
            options[option.group(1)] = (option.group(2) or "").strip()
        end += 1
    text = _file(name, includes, source, search_up=False, markup=kind == "include")
    if text is not None and kind == "literalinclude":
        code = select(text, options)
        text = fence(code, options.get("language") or language_of(name)) if code and code.strip() else None
    elif text is not None:
        text = _between(text, options.get("start-after"), options.get("end-before"))
    out.extend(_indented(text, indent))
    return end + 1


def _between(text: str, after: str | None, before: str | None) -> str:
    if after and after in text:
        text = text.split(after, 1)[1]
    if before and before in text:
        text = text.split(before, 1)[0]
    return text
