"""Markdown and MDX pages, read with markdown-it-py (CommonMark + tables + front matter).

The page is parsed to markdown-it's flat token stream and written back out as plain
Markdown: headings split blocks; links become their text; HTML blocks go through the
HTML walker so tags and comments disappear but text, tables and code stay. The token
stream is walked directly (no syntax tree) to keep memory near the tokens' own.
"""

from __future__ import annotations

import re
from typing import Any

from .common import Parsed, ParseError, Sink, TextSink, code_span, fence, link_target, list_item, table_rows
from .mdx import preprocess
from .myst import directive_of, render_directive, role_before
from .sphinx import role_text

_md: Any = None


def _parser() -> Any:
    global _md
    if _md is None:
        from markdown_it import MarkdownIt
        from mdit_py_plugins.front_matter import front_matter_plugin

        _md = MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(front_matter_plugin)
    return _md


def parse_markdown_blocks(text: str, *, mdx: bool = False) -> Parsed:
    """Blocks, front matter title and description of one Markdown (or MDX) text."""
    from .common import BlockBuilder

    meta: dict[str, Any] = {}
    text, toml_meta = _toml_front_matter(text)
    meta.update(toml_meta)
    tokens = _parser().parse(preprocess(text, mdx=mdx))
    if tokens and tokens[0].type == "front_matter":
        meta.update(_yaml_front_matter(tokens[0].content))
    builder = BlockBuilder()
    _Renderer(tokens).blocks(0, len(tokens), builder)
    return Parsed(
        blocks=builder.finish(),
        title=_meta_str(meta.get("title")),
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


def _render_markdown(text: str, sink: Sink) -> None:
    """Render a Markdown body (of a MyST directive) into `sink`."""
    tokens = _parser().parse(preprocess(text, mdx=False))
    _Renderer(tokens).blocks(0, len(tokens), sink)


class _Renderer:
    """Writes a markdown-it token stream back out as Markdown blocks."""

    def __init__(self, tokens: list[Any]) -> None:
        self.tokens = tokens

    def blocks(self, start: int, end: int, sink: Sink) -> None:
        t = self.tokens
        i = start
        while i < end:
            tok = t[i]
            kind = tok.type
            if kind == "heading_open":
                sink.heading(int(tok.tag[1]), self.inline(t[i + 1], plain=True))
                i += 3
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
            render_directive(*directive, tok.content, sink, _render_markdown)
        except ParseError:  # an eval-rst body docutils cannot read: keep its text
            sink.add(tok.content)

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
        else:  # anything unknown: render what is inside
            self.blocks(i + 1, close, sink)

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
        out: list[str] = []
        links: list[tuple[int, str, bool]] = []  # (start in out, href, holds an image)
        for child in tok.children or ():
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
