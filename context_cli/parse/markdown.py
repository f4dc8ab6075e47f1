"""Markdown and MDX pages, read with markdown-it-py (CommonMark + tables + front matter).

The page is parsed to markdown-it's flat token stream and written back out as plain
Markdown: headings split blocks; links become their text; HTML blocks go through the
HTML walker so tags and comments disappear but text, tables and code stay. The token
stream is walked directly (no syntax tree) to keep memory near the tokens' own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .cli_docs import expand_mkdocs_click
from .common import (
    GLOSSARY_SECTIONS,
    Parsed,
    ParseError,
    Sink,
    TextSink,
    code_span,
    fence,
    indent,
    link_target,
    list_item,
    table_rows,
)
from .glossary import bold_term, names_a_glossary
from .includes import Includes
from .mdx import preprocess
from .mkdocs import clean
from .myst import directive_of, render_directive, role_before
from .sphinx import role_text

_md: Any = None


def _parser() -> Any:
    global _md
    if _md is None:
        from markdown_it import MarkdownIt
        from mdit_py_plugins.deflist import deflist_plugin
        from mdit_py_plugins.front_matter import front_matter_plugin

        _md = MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(front_matter_plugin).use(deflist_plugin)
    return _md


def parse_markdown_blocks(text: str, *, mdx: bool = False, path: str = "", includes: Includes | None = None) -> Parsed:
    """Blocks, front matter title and description of one Markdown (or MDX) text.

    `path` (the page's file name) and the title only tell whether the page is a glossary;
    `includes` serves the files `eval-rst` bodies include (the page's own includes are
    expanded before, see `parse.parse_markdown`).
    """
    from .common import BlockBuilder

    meta: dict[str, Any] = {}
    text, toml_meta = _toml_front_matter(text)
    meta.update(toml_meta)
    text = expand_mkdocs_click(text, includes)
    jinja = includes is not None and _JINJA_MARK.search(text) is not None and includes.renders_jinja()
    tokens = _parser().parse(_prepare(text, mdx=mdx, jinja=jinja))
    if tokens and tokens[0].type == "front_matter":
        meta.update(_yaml_front_matter(tokens[0].content))
    builder = BlockBuilder()
    title = _meta_str(meta.get("title"))
    _Renderer(tokens, glossary_page=names_a_glossary(title, path), includes=includes).blocks(0, len(tokens), builder)
    return Parsed(
        blocks=builder.finish(),
        title=title,
        description=_meta_str(meta.get("description")),
    )


def _meta_str(value: Any) -> str:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return " ".join(str(value).split())
    return ""


def _yaml_front_matter(content: str) -> dict[str, Any]:
    """YAML front matter as a dict; broken or non-mapping YAML counts as none."""
    import yaml

    try:
        data = yaml.safe_load(content)
    except Exception:  # yaml raises many types (scanner, constructor, recursion); none matter here
        return {}
    return data if isinstance(data, dict) else {}


_TOML = re.compile(r"\A\+\+\+[ \t]*\n(.*?)\n\+\+\+[ \t]*(?:\n|\Z)", re.S)


def _toml_front_matter(text: str) -> tuple[str, dict[str, Any]]:
    """Hugo's `+++` TOML front matter: removed from the text, parsed when valid."""
    m = _TOML.match(text)
    if not m:
        return text, {}
    import tomllib

    try:
        data = tomllib.loads(m.group(1))
    except tomllib.TOMLDecodeError:
        data = {}
    return text[m.end():], data


_JINJA_MARK = re.compile(r"\{[{%#]")


def _prepare(text: str, *, mdx: bool, jinja: bool = False) -> str:
    """The text markdown-it reads: MkDocs syntax (and Jinja, if the site renders it) and MDX rewritten."""
    return preprocess(text if mdx else clean(text, jinja=jinja), mdx=mdx)


def render_markdown(text: str, sink: Sink, *, includes: Includes | None = None) -> None:
    """Render a Markdown body (a MyST directive's, or a file an rst page includes) into `sink`;
    `includes` serves what its `eval-rst` bodies include."""
    tokens = _parser().parse(_prepare(text, mdx=False))
    _Renderer(tokens, includes=includes).blocks(0, len(tokens), sink)


@dataclass
class _Entry:
    """One glossary entry: its term, and where its definition is in the token stream."""

    term: str
    lead: list[Any] = field(default_factory=list)  # inline children after `**Term**:`
    start: int = 0  # blocks of the definition (beyond `lead`): tokens[start:end]
    end: int = 0


class _Renderer:
    """Writes a markdown-it token stream back out as Markdown blocks."""

    def __init__(self, tokens: list[Any], *, glossary_page: bool = False, includes: Includes | None = None) -> None:
        self.tokens = tokens
        self.includes = includes  # for the files an `eval-rst` body includes
        self.glossary_page = glossary_page
        self.headings: list[tuple[int, str]] = []  # the open top-level headings, outermost first
        self.not_glossary_until = 0  # tokens before this were seen not to start a glossary

    def blocks(self, start: int, end: int, sink: Sink) -> None:
        t = self.tokens
        i = start
        while i < end:
            tok = t[i]
            kind = tok.type
            if kind == "heading_open":
                level, title = int(tok.tag[1]), self.inline(t[i + 1], plain=True)
                sink.heading(level, title)
                if tok.level == 0:
                    self.headings = [h for h in self.headings if h[0] < level] + [(level, title)]
                i += 3
            elif tok.level == 0 and (run := self._glossary_run(i)) is not None:
                self._glossary(run[0], sink)
                i = run[1]
            elif kind == "paragraph_open":
                sink.add(self.inline(t[i + 1]))
                i += 3
            elif kind in ("fence", "code_block"):
                self._fence(tok, sink)
                i += 1
            elif kind == "html_block":
                _html_block(tok.content, sink)
                i += 1
            elif tok.nesting == 1:
                close = self._close_of(i)
                self._container(i, close, sink)
                i = close + 1
            else:  # hr, front_matter, stray closes
                i += 1

    def _fence(self, tok: Any, sink: Sink) -> None:
        directive = directive_of(tok.info) if tok.type == "fence" else None
        if directive is None:
            sink.add(fence(tok.content, tok.info))
            return
        try:
            render_directive(*directive, tok.content, sink, self._render_markdown, includes=self.includes)
        except ParseError:  # an eval-rst body docutils cannot read: keep its text
            sink.add(tok.content)

    def _render_markdown(self, text: str, sink: Sink) -> None:
        render_markdown(text, sink, includes=self.includes)

    def _close_of(self, i: int) -> int:
        level = self.tokens[i].level
        for j in range(i + 1, len(self.tokens)):
            tok = self.tokens[j]
            if tok.nesting == -1 and tok.level == level:
                return j
        return len(self.tokens) - 1

    def _container(self, i: int, close: int, sink: Sink) -> None:
        kind = self.tokens[i].type
        if kind in ("bullet_list_open", "ordered_list_open"):
            sink.add(self._list(i, close, ordered=kind == "ordered_list_open"))
        elif kind == "blockquote_open":
            inner = TextSink()
            self.blocks(i + 1, close, inner)
            body = inner.text()
            if body:
                sink.add("\n".join("> " + line if line else ">" for line in body.split("\n")))
        elif kind == "table_open":
            sink.add(self._table(i, close))
        elif kind == "dl_open":
            sink.add("\n".join(self._definition_lines(i, close)))
        else:  # anything unknown: render what is inside
            self.blocks(i + 1, close, sink)

    def _definition_lines(self, i: int, close: int) -> list[str]:
        """A definition list as `term` / `: definition` lines, as rst.py writes them."""
        lines = []
        for entry in self._definitions(i, close, plain=False):
            lines.append(entry.term)
            inner = TextSink()
            self.blocks(entry.start, entry.end, inner)
            if inner.text():
                lines.append(indent(inner.text(), ": ", "  "))
        return lines

    def _definitions(self, i: int, close: int, *, plain: bool = True) -> list[_Entry]:
        """The entries of the definition list tokens[i:close+1]; `plain` terms for headings."""
        entries: list[_Entry] = []
        term = None
        j = i + 1
        while j < close:
            kind = self.tokens[j].type
            end = self._close_of(j)
            if kind == "dt_open":
                term = self.inline(self.tokens[j + 1], plain=plain)
            elif kind == "dd_open" and term is not None:
                entries.append(_Entry(term, start=j + 1, end=end))
                term = None
            elif kind == "dd_open" and entries:  # a second definition of the same term
                entries[-1].end = end
            j = end + 1
        return entries

    def _glossary_run(self, i: int) -> tuple[list[_Entry], int] | None:
        """Glossary entries starting at tokens[i] and the index after them, when they make a
        glossary: at least GLOSSARY_SECTIONS entries that end their section (a heading or the
        page's end follows, so the last term takes no unrelated text)."""
        t = self.tokens
        kind = t[i].type
        if i < self.not_glossary_until:  # inside a run already turned down: stay linear
            return None
        if kind == "dl_open":
            end = self._close_of(i)
            entries = self._definitions(i, end)
            end += 1
        elif kind in ("paragraph_open", "bullet_list_open") and self._in_glossary():
            entries, end = self._bold_entries(i) if kind == "paragraph_open" else self._bold_items(i)
        else:
            return None
        if len(entries) < GLOSSARY_SECTIONS or (end < len(t) and t[end].type not in ("heading_open", "hr")):
            self.not_glossary_until = end
            return None
        return entries, end

    def _in_glossary(self) -> bool:
        return self.glossary_page or names_a_glossary(*(title for _, title in self.headings))

    def _bold_entries(self, i: int) -> tuple[list[_Entry], int]:
        """Consecutive `**Term**: definition` paragraphs from tokens[i]."""
        entries = []
        while i < len(self.tokens) and self.tokens[i].type == "paragraph_open":
            split = bold_term(self.tokens[i + 1].children or ())
            if split is None:
                break
            entries.append(_Entry(self._inline(split[0], plain=True), lead=split[1]))
            i += 3
        return entries, i

    def _bold_items(self, i: int) -> tuple[list[_Entry], int]:
        """A list whose every item opens with `**Term** — definition` (none if one does not)."""
        close = self._close_of(i)
        entries = []
        j = i + 1
        while j < close:
            end = self._close_of(j)
            first = self.tokens[j + 1]
            split = bold_term(self.tokens[j + 2].children or ()) if first.type == "paragraph_open" else None
            if split is None:
                return [], i
            entries.append(_Entry(self._inline(split[0], plain=True), lead=split[1], start=j + 4, end=end))
            j = end + 1
        return entries, close + 1

    def _glossary(self, entries: list[_Entry], sink: Sink) -> None:
        """One heading per entry, a level below the section the glossary is in.

        The body opens with `Term: ` as the page wrote it: an entry read alone says what it
        defines, and a short definition ("SSR: Server-side rendering.") is still long enough
        to be kept as a section.
        """
        level = min(6, (self.headings[-1][0] if self.headings else 1) + 1)
        for entry in entries:
            sink.heading(level, entry.term)
            body = TextSink()
            if entry.lead:
                body.add(self._inline(entry.lead))
            self.blocks(entry.start, entry.end, body)
            sink.add(f"{entry.term}: {body.text()}")

    def _list(self, i: int, close: int, *, ordered: bool) -> str:
        items: list[str] = []
        j = i + 1
        while j < close:
            tok = self.tokens[j]
            if tok.type != "list_item_open":
                j += 1
                continue
            end = self._close_of(j)
            inner = TextSink()
            self.blocks(j + 1, end, inner)
            marker = f"{tok.info or len(items) + 1}. " if ordered else "- "
            items.append(list_item(inner.text("\n"), marker))
            j = end + 1
        return "\n".join(item for item in items if item)

    def _table(self, i: int, close: int) -> str:
        rows: list[list[str]] = []
        for j in range(i + 1, close):
            tok = self.tokens[j]
            if tok.type == "tr_open":
                rows.append([])
            elif tok.type in ("th_open", "td_open") and rows:
                rows[-1].append(self.inline(self.tokens[j + 1]))
        return table_rows(rows)

    def inline(self, tok: Any, *, plain: bool = False) -> str:
        """Inline Markdown of one `inline` token; `plain` drops code backticks (headings)."""
        return self._inline(tok.children or (), plain=plain)

    def _inline(self, children: Any, *, plain: bool = False) -> str:
        out: list[str] = []
        links: list[tuple[int, str, bool]] = []  # (start in out, href, holds an image)
        for child in children:
            kind = child.type
            if kind == "text":
                out.append(child.content)
            elif kind == "code_inline":
                role = role_before(out[-1]) if out else None
                if role is not None:  # MyST `{func}`name``
                    out[-1] = role[0]
                    shown, code = role_text(role[1], child.content)
                    out.append(code_span(shown) if code and not plain else shown)
                else:
                    out.append(child.content if plain else code_span(child.content))
            elif kind in ("softbreak", "hardbreak"):
                out.append("\n")
            elif kind == "link_open":
                links.append((len(out), child.attrGet("href") or "", False))
            elif kind == "link_close" and links:
                start, href, image = links.pop()
                if not "".join(out[start:]).strip() and not image:
                    out.append(link_target(href))
            elif kind == "image" and links:
                links[-1] = (links[-1][0], links[-1][1], True)
            elif kind == "html_inline":
                out.append("\n" if _BR.match(child.content) else "\x00")
        text = "".join(out).strip()
        return _DROPPED_TAG.sub(" ", text).replace("\x00", "").strip() if "\x00" in text else text


_BR = re.compile(r"<br\s*/?>", re.I)
_DROPPED_TAG = re.compile(r"(?<=\S) ?\x00+ (?=\S)|(?<=\S) \x00+ ?(?=\S)")  # `a <Tag /> b` -> `a b`
_TAG = re.compile(r"<!--.*?-->|<[^>]*>", re.S)


def _html_block(content: str, sink: Sink) -> None:
    """Raw HTML inside Markdown: through the HTML walker, or stripped of tags if it will not parse."""
    from .html import render_fragment

    if not render_fragment(content, sink):
        import html

        text = html.unescape(_TAG.sub("", content)).strip()
        if text:
            sink.add(text)
