"""reStructuredText pages, read with docutils (plus stand-ins for Sphinx's extensions).

docutils builds the doctree with every message suppressed, no file insertion and no raw
passthrough; this module writes the tree back out as Markdown blocks. Section levels
come from docutils' nesting, which follows the order title styles first appear.
`doctitle_xform` is off (as in Sphinx): a lone top section stays an H1 block, and the
shared title rules make it the page title, so a subtitle stays a section too.
Only imported when an rst page (or a MyST `eval-rst` block) is parsed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives

from . import rst_speed
from .common import (
    GLOSSARY_SECTIONS,
    BlockBuilder,
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
from .includes import INCLUDES, Includes
from .rst_changelog import Change, Changelog
from .rst_include import Include, LiteralInclude, MarkdownText
from .rst_inline import Inline, InlineText
from .rst_sphinx import HIGHLIGHT, register_for
from .sphinx import GLOSSARY

_SETTINGS = {
    "report_level": 5,
    "halt_level": 5,
    "exit_status_level": 5,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "_disable_config": True,
    "syntax_highlight": "none",
    "doctitle_xform": False,
    "sectsubtitle_xform": False,
    "input_encoding": "unicode",
    "traceback": True,
    "auto_id_prefix": "id",
}


RenderMarkdown = Callable[[str, Sink], None]


def parse_rst_blocks(text: str, *, prefix: str = "", includes: Includes | None = None,
                     markdown: RenderMarkdown | None = None) -> Parsed:
    """Blocks of one rst text; `prefix` is prepended (split pieces replay title styles);
    `includes` lets `include` and `literalinclude` read the files the page names, and
    `markdown` renders the Markdown files it includes."""
    builder = BlockBuilder()
    render_rst(prefix + text, builder, includes=includes, markdown=markdown)
    return Parsed(blocks=builder.finish())


def render_rst(text: str, sink: Sink, *, includes: Includes | None = None, markdown: RenderMarkdown | None = None) -> None:
    """Write rst into a sink (a whole page, or a MyST `eval-rst` body inside Markdown): with
    the fast reader where it reads the page, else through docutils."""
    if not render_fast(text, sink, includes=includes):
        render_docutils(text, sink, includes=includes, markdown=markdown)


def render_fast(text: str, sink: Sink, *, includes: Includes | None = None) -> bool:
    """`rst_fast`'s rendering of the page into `sink`; False (nothing written) where it leaves
    the page to docutils."""
    from . import rst_fast

    _prepare(text)
    try:
        rst_fast.render(text, sink, _Inline(includes.page if includes else "<string>", includes))
    except (rst_fast.Unsupported, RecursionError):  # (nesting too deep: docutils says what it makes of it)
        return False
    return True


def render_docutils(text: str, sink: Sink, *, includes: Includes | None = None,
                    markdown: RenderMarkdown | None = None) -> None:
    """docutils' doctree of the page, written into `sink`."""
    _prepare(text)
    try:
        doctree = rst_speed.doctree(text, _SETTINGS, source=includes.page if includes else "<string>",
                                    extra={INCLUDES: includes})
    except Exception as exc:  # docutils fails in many ways on broken input (RecursionError too)
        raise ParseError(f"reStructuredText could not be parsed: {type(exc).__name__}: {exc}") from exc
    _Writer(markdown).body(doctree, sink, depth=1)


def _prepare(text: str) -> None:
    """Our directives and the Sphinx stand-ins the page names registered, docutils patched."""
    _register_own()
    register_for(text)
    rst_speed.install()


def _register_own() -> None:
    """Directives with handlers of their own: file includes (in place of docutils' `include`,
    which would read any path) and the `changelog` extension's release sections."""
    for name, directive in (("include", Include), ("literalinclude", LiteralInclude), ("changelog", Changelog),
                            ("change", Change)):
        directives.register_directive(name, directive)


class _Inline:
    """docutils' inliner on its own, for the fast reader (`rst_fast`): a text's inline
    Markdown as `_Writer.inline` joins it (before its strip) and its `astext()`."""

    _MARKUP = re.compile("[*`_|:@\\\\\x00]")  # what inline markup, a URI, an escape or a NUL holds
    _LEFT_TO_TRANSFORMS = (nodes.substitution_reference, nodes.footnote_reference, nodes.citation_reference)

    def __init__(self, source: str, includes: Includes | None) -> None:
        from docutils import utils
        from docutils.parsers.rst import languages, states

        settings = rst_speed.settings(_SETTINGS)
        setattr(settings, INCLUDES, includes)
        document = utils.new_document(source, settings)
        self.inliner = states.Inliner()
        self.inliner.init_customizations(settings)
        self.memo = states.Struct(document=document, reporter=document.reporter,
                                  language=languages.get_language(settings.language_code, document.reporter),
                                  title_styles=[], section_level=0, section_bubble_up_kludge=False,
                                  inliner=self.inliner)
        self.parent = nodes.paragraph()
        self.writer = _Writer()
        self.fast = InlineText(self.inliner, self.memo)

    def __call__(self, text: str) -> Inline:
        from . import rst_fast

        if not self._MARKUP.search(text):
            return Inline(text, text)
        done = self.fast(text)
        if done is not None:
            return done
        found, _ = self.inliner.parse(text, 0, self.memo, self.parent)
        for node in found:
            if isinstance(node, self._LEFT_TO_TRANSFORMS) or (
                    isinstance(node, nodes.Element) and next(node.findall(self._LEFT_TO_TRANSFORMS), None)):
                raise rst_fast.Unsupported("a reference the transforms resolve")
        return Inline("".join(self.writer._inline_child(c) for c in found), "".join(c.astext() for c in found),
                      any(isinstance(node, nodes.target) for node in found))


_SKIP = {"system_message", "target", "substitution_definition", "pending", "raw", "comment",
         "docinfo", "decoration", "meta", "image", "transition", "title", "footnote_reference",
         "citation_reference", "problematic", "field_name", "classifier", "label"}


class _Writer:
    """Writes a docutils doctree as headings and Markdown paragraphs."""

    def __init__(self, markdown: RenderMarkdown | None = None) -> None:
        self.language = ""  # from `.. highlight::`, for literal blocks without their own
        self.markdown = markdown  # renders Markdown files the page includes

    def body(self, node: Any, sink: Sink, depth: int) -> None:
        for child in node.children:
            self.element(child, sink, depth)

    def element(self, node: Any, sink: Sink, depth: int) -> None:
        tag = node.tagname
        if isinstance(node, nodes.Text):
            sink.add(node.astext())
        elif tag == "section":
            title = node.next_node(nodes.title)
            sink.heading(depth, title.astext() if title is not None and title.parent is node else "")
            self.body(node, sink, depth + 1)
        elif tag == "comment" and node.get(HIGHLIGHT) is not None:
            self.language = node[HIGHLIGHT]
        elif tag in _SKIP:
            return
        elif isinstance(node, MarkdownText):
            if self.markdown is not None:
                self.markdown(node["text"], sink)
        elif tag in ("paragraph", "rubric", "caption", "subtitle", "attribution", "line"):
            prefix = "— " if tag == "attribution" else ""
            sink.add(prefix + self.inline(node))
        elif tag in ("literal_block", "doctest_block", "math_block"):
            sink.add(fence(node.astext(), self._language(node)))
        elif tag in ("bullet_list", "enumerated_list"):
            sink.add(self._list(node, ordered=tag == "enumerated_list"))
        elif tag == "definition_list" and GLOSSARY in node.get("classes", ()) and len(node) >= GLOSSARY_SECTIONS:
            self._glossary(node, sink, depth)
        elif tag == "definition_list":
            sink.add(self._definitions(node))
        elif tag == "field_list":
            sink.add(self._fields(node))
        elif tag == "option_list":
            sink.add(self._options(node))
        elif tag == "table":
            self._table(node, sink)
        elif tag == "line_block":
            sink.add("\n".join(self.inline(line) for line in node.findall(nodes.line)))
        elif isinstance(node, nodes.Admonition):
            self._admonition(node, sink)
        elif tag in ("topic", "sidebar") and "contents" in node.get("classes", ()):
            return
        elif tag in ("topic", "sidebar"):
            title = node.next_node(nodes.title)
            if title is not None and title.parent is node:
                sink.add(self.inline(title))
            self.body(node, sink, depth)
        elif tag in ("footnote", "citation"):
            label = node.next_node(nodes.label)
            inner = self.nested(node, depth)
            sink.add(f"[{label.astext()}] {inner}" if label is not None else inner)
        elif isinstance(node, nodes.TextElement):
            sink.add(self.inline(node))
        else:  # block_quote, compound, container, figure, legend, tab-like containers ...
            self.body(node, sink, depth)

    def nested(self, node: Any, depth: int = 1, sep: str = "\n") -> str:
        sink = TextSink()
        self.body(node, sink, depth)
        return sink.text(sep)

    def _language(self, node: Any) -> str:
        if node.tagname == "doctest_block":
            return "pycon"
        if node.tagname == "math_block":
            return "math"
        language = node.get("language") or ""
        if not language:
            classes = [c for c in node.get("classes", ()) if c not in ("code", "literal-block")]
            language = classes[0] if classes else ""
        return language or self.language

    def _list(self, node: Any, *, ordered: bool) -> str:
        items = []
        start = node.get("start", 1) if ordered else 1
        for n, item in enumerate(c for c in node.children if c.tagname == "list_item"):
            marker = f"{start + n}. " if ordered else "- "
            items.append(list_item(self.nested(item), marker))
        return "\n".join(item for item in items if item)

    def _definitions(self, node: Any) -> str:
        lines = []
        for item in node.children:
            for part in item.children:
                if part.tagname == "term":
                    lines.append(self.inline(part))
                elif part.tagname == "classifier":
                    lines[-1:] = [f"{lines[-1]} : {self.inline(part)}" if lines else self.inline(part)]
                elif part.tagname == "definition":
                    lines.append(indent(self.nested(part), ": ", "  "))
        return "\n".join(lines)

    def _glossary(self, node: Any, sink: Sink, depth: int) -> None:
        """One heading per glossary entry, its definition below."""
        for item in node.children:
            terms = [self.inline(part) for part in item.children if part.tagname == "term"]
            if not terms:
                continue
            sink.heading(depth, terms[0])
            for part in item.children:
                if part.tagname == "definition":
                    self.body(part, sink, depth + 1)

    def _fields(self, node: Any) -> str:
        items = []
        for field in node.children:
            if len(field.children) < 2:
                continue
            name = self.inline(field.children[0])
            body = self.nested(field.children[1])
            items.append(indent(f"{name}: {body}" if body else name, "- ", "  "))
        return "\n".join(items)

    def _options(self, node: Any) -> str:
        items = []
        for item in node.children:
            names = item.next_node(condition=lambda n: n.tagname == "option_group")
            desc = item.next_node(condition=lambda n: n.tagname == "description")
            head = names.astext() if names is not None else ""
            body = self.nested(desc) if desc is not None else ""
            items.append(indent(f"{head}: {body}" if body else head, "- ", "  "))
        return "\n".join(items)

    def _table(self, node: Any, sink: Sink) -> None:
        title = next((c for c in node.children if c.tagname == "title"), None)
        if title is not None:
            sink.add(self.inline(title))
        rows = []
        for row in node.findall(lambda n: n.tagname == "row"):
            rows.append([" ".join(self.nested(entry, sep=" ").split()) for entry in row.children])
        sink.add(table_rows(rows))

    def _admonition(self, node: Any, sink: Sink) -> None:
        title = next((c for c in node.children if c.tagname == "title"), None)
        label = self.inline(title) if title is not None else node.tagname.replace("_", " ").capitalize()
        body = self.nested(node, sep="\n\n")
        sink.add(f"{label}: {body}" if body else label)

    def inline(self, node: Any) -> str:
        """Inline Markdown: literals in backticks, references as their text."""
        parts = []
        for child in node.children:
            parts.append(self._inline_child(child))
        return "".join(parts).strip()

    def _inline_child(self, child: Any) -> str:
        tag = child.tagname
        if isinstance(child, nodes.Text):
            return str(child.astext())  # Text keeps backslash escapes as NULs; astext() drops them
        if tag in ("literal", "title_reference", "math"):
            return code_span(child.astext())
        if tag == "reference":
            text = self.inline(child)
            return text or link_target(child.get("refuri", ""))
        if tag == "problematic":
            return _clean_problematic(child.astext())
        if tag in ("footnote_reference", "citation_reference"):
            return f"[{child.astext()}]"
        if tag in ("image", "system_message", "raw", "comment", "substitution_definition"):
            return ""
        if isinstance(child, nodes.TextElement) or tag in ("inline", "emphasis", "strong"):
            return self.inline(child)
        return self.nested(child, sep=" ")


def _clean_problematic(text: str) -> str:
    """Text of markup docutils could not resolve (`name`_, |sub|, :role:`x`), minus the markup."""
    if text.startswith(":") and "`" in text:
        text = text[text.index("`"):]
    return text.strip("`_|")
