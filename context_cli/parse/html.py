"""HTML pages and fragments, read with lxml; readability-lxml finds unmarked main content.

A web page is mostly chrome (navigation, headers, sidebars, footers, scripts). The page
is trimmed by tag, ARIA role and well-known class names, the content root is taken from
`<main>`, a single `<article>` or `[role=main]`, else from readability's summary, else the
body; the walker then writes headings as blocks and everything else as Markdown.
"""

from __future__ import annotations

import re
from typing import Any

from . import site_adapters
from .common import (
    BlockBuilder,
    Parsed,
    Sink,
    TextSink,
    code_span,
    fence,
    indent,
    link_target,
    list_item,
    table_rows,
)

_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCK = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html li main menu nav "
    "ol p pre section summary table tbody td tfoot th thead tr ul".split()
)
_DROP_TAGS = (
    "nav aside script style noscript svg form button iframe template select textarea input "
    "canvas object embed head link meta dialog".split()
)
_DROP_ROLES = {"navigation", "banner", "contentinfo", "search", "complementary", "menu", "menubar", "toolbar"}
# Class names of chrome: matched against each class token, whole or as a dash/underscore part.
_DROP_CLASS = re.compile(
    r"(?:^|[-_])(?:sidebar|sphinxsidebar|breadcrumbs?|toc|table-of-contents|skip-link|skip-to-content|"
    r"skiplink|headerlink|hash-link|anchor-link|anchorjs-link|heading-anchor|permalink|navbar|"
    r"pagination|prev-next|related|footer|linenos|lineno|copybutton|copy-button|visually-hidden|"
    r"sr-only|screen-reader-text|edit-this-page|feedback|cookie|banner)(?:$|[-_])",
    re.I,
)
# ... but not a class that names a state of the page (`has-sidebar`, `with-toc`, `no-footer`).
_STATE_CLASS = re.compile(r"^(?:has|with|without|no|is|show|hide|uses?|enabled?|disabled?)[-_]", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")  # lxml refuses them when editing the tree
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)
_LANG_CLASS = re.compile(r"^(?:language|lang|highlight|sourceCode|brush)[-:]([\w+#.-]+)$", re.I)
_NO_LANG = {"default", "none", "text", "plain", "plaintext", "nohighlight", "notranslate", "source"}
_BR = "\x00"  # stands for <br> until whitespace is collapsed
_TITLE_SEPARATORS = (" | ", " — ", " – ", " · ", " - ")


def parse_html_blocks(text: str) -> Parsed:
    """Blocks, `<title>` fallback and meta description of a whole HTML page."""
    from lxml import etree
    from lxml import html as lhtml

    text = _CONTROL.sub("", _XML_DECL.sub("", text, count=1))
    if not text.strip():
        return Parsed()
    try:
        doc = lhtml.document_fromstring(text)
    except (etree.ParserError, ValueError):
        return Parsed()
    page_title = _page_title(doc)
    description = _meta_description(doc)
    adapter = site_adapters.pick(doc)
    site_adapters.remove_hidden(doc)
    site_adapters.drop_chrome(doc, adapter)
    crumbs = site_adapters.breadcrumb(doc, adapter)
    site_adapters.rewrite_tabs(doc)
    site_adapters.rewrite_callouts(doc)
    root = site_adapters.content_root(doc, adapter)
    if root is not None:  # the generator said where the article is: trim inside it only
        for child in list(root):
            _clean(child)
    else:
        _clean(doc)
        root = _main(doc)
    if root is None:
        _drop(doc, "header")
        _drop(doc, "footer")
        root = _readability(doc)
    builder = BlockBuilder()
    _Walker(builder).walk(root)
    blocks = builder.finish()
    return Parsed(blocks=blocks, fallback_title=_with_trail(crumbs, blocks, page_title), description=description)


def _with_trail(crumbs: list[str], blocks: list[Any], page_title: str) -> str:
    """Put the breadcrumb in front of the page title (`Guides > Routing > Dynamic routes`), on
    the page's leading H1 or else on the `<title>` fallback, which is returned."""
    first = next((b for b in blocks if b.level > 0), None)
    title = first.title if first is not None and first.level == 1 else page_title
    trail = [c for c in crumbs if c.lower() != title.lower()]
    if not trail:
        return page_title
    joined = " > ".join([*trail, title]) if title else " > ".join(trail)
    if first is not None and first.level == 1:
        first.title = joined
        return page_title
    return joined


def render_fragment(text: str, sink: Sink) -> bool:
    """Write an HTML fragment (raw HTML inside Markdown) into `sink`; False if it will not parse."""
    from lxml import etree
    from lxml import html as lhtml

    try:
        parts = lhtml.fragments_fromstring(_CONTROL.sub("", text))
    except (etree.ParserError, ValueError):
        return False
    holder = lhtml.Element("div")
    for part in parts:
        if isinstance(part, str):
            holder.text = (holder.text or "") + part
        else:
            holder.append(part)
    _clean(holder)
    _Walker(sink).walk(holder)
    return True


def _page_title(doc: Any) -> str:
    title = " ".join((doc.findtext(".//title") or "").split())
    for sep in _TITLE_SEPARATORS:
        if sep in title:
            head, _, site = title.rpartition(sep)
            if head.strip() and len(site) <= 60:
                return head.strip()
    return title


def _meta_description(doc: Any) -> str:
    for name in ("description", "og:description"):
        for meta in doc.xpath(f'//meta[@name="{name}" or @property="{name}"]'):
            content = " ".join((meta.get("content") or "").split())
            if content:
                return content
    return ""


def _drop(root: Any, tag: str) -> None:
    for el in list(root.iter(tag)):
        if el.getparent() is not None:
            el.drop_tree()


def _clean(root: Any) -> None:
    """Remove chrome by tag, role and class; a `<header>` holding the page's h1 stays."""
    from lxml import etree

    doomed = []
    for el in root.iter():
        if not isinstance(el.tag, str):
            if el.tag is etree.Comment or el.tag is etree.ProcessingInstruction:
                doomed.append(el)
            continue
        tag = el.tag.lower()
        if tag in _DROP_TAGS or el.get("role") in _DROP_ROLES or el.get("hidden") is not None:
            doomed.append(el)
        elif el.get("aria-hidden") == "true" and tag not in ("span", "code", "pre") and not el.text_content().strip():
            doomed.append(el)
        elif tag in ("header", "footer"):
            if tag == "footer" or el.find(".//h1") is None:
                doomed.append(el)
        elif tag not in ("body", "html", "main") and _chrome_class(el) and not _holds_article(el):
            doomed.append(el)
    for el in doomed:
        if el.getparent() is not None:
            el.drop_tree()


def _chrome_class(el: Any) -> bool:
    return any(_DROP_CLASS.search(c) and not _STATE_CLASS.match(c) for c in (el.get("class") or "").split())


def _holds_article(el: Any) -> bool:
    """A wrapper around the page's heading or main content, whatever its class says."""
    return bool(el.xpath(".//h1 | .//main | .//article | .//*[@role='main']"))


def _main(doc: Any) -> Any:
    for path in ("//main", '//*[@role="main"]'):
        found = doc.xpath(path)
        if found:
            return found[0]
    articles = doc.xpath("//article")
    if len(articles) == 1:
        return articles[0]
    return None


def _readability(doc: Any) -> Any:
    """readability's summary when it keeps a fair share of the text, else the body."""
    from lxml import html as lhtml

    body = doc.body if doc.find("body") is not None else doc
    body_len = len(" ".join(body.text_content().split()))
    if body_len < 500:
        return body
    try:
        from readability import Document as Readable

        summary = Readable(lhtml.tostring(doc, encoding="unicode")).summary(html_partial=True)
        article = lhtml.fragment_fromstring(summary)
    except Exception:  # readability raises its own Unparseable and whatever lxml raised inside
        return body
    kept = len(" ".join(article.text_content().split()))
    return article if kept >= 200 and kept >= body_len // 10 else body


class _Walker:
    """Writes an element tree into a sink: headings as headings, the rest as Markdown."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.buffer: list[str] = []

    def walk(self, el: Any) -> None:
        self._container(el)
        self._flush()

    def _flush(self) -> None:
        text = " ".join("".join(self.buffer).split())  # source newlines are just spaces in HTML
        self.buffer = []
        text = re.sub(r" ?\x00 ?", "\n", text).strip()  # ... but <br> is a line break
        if text:
            self.sink.add(text)

    def _container(self, el: Any) -> None:
        if el.text:
            self.buffer.append(el.text)
        for child in el:
            self._element(child)
            if child.tail:
                self.buffer.append(child.tail)

    def _element(self, el: Any) -> None:
        if not isinstance(el.tag, str):
            return
        tag = el.tag.lower()
        if tag not in _BLOCK and not _has_block(el):
            self.buffer.append(_inline(el))
            return
        self._flush()
        if tag in _HEADINGS:
            self.sink.heading(_HEADINGS[tag], _inline(el, plain=True).replace(_BR, " ").strip("\u200b\ufeff \t\n"))
        elif tag == "pre":
            self.sink.add(fence(_code_text(el), _language(el)))
        elif tag in ("ul", "ol", "menu", "dir"):
            self.sink.add(_list(el, ordered=tag == "ol"))
        elif tag == "table":
            self._table(el)
        elif tag == "blockquote":
            body = _nested(el)
            if body:
                self.sink.add("\n".join("> " + line if line else ">" for line in body.split("\n")))
        elif tag == "dl":
            self.sink.add(_definitions(el))
        elif tag == "hr":
            pass
        else:
            self._container(el)
            self._flush()

    def _table(self, el: Any) -> None:
        if el.find(".//pre") is not None or el.find(".//table") is not None:
            self._container(el)  # a layout table (code with line numbers, nested tables)
            self._flush()
            return
        rows = []
        for tr in el.iter("tr"):
            rows.append([" ".join(_nested(cell).split()) for cell in tr if cell.tag in ("td", "th")])
        self.sink.add(table_rows(rows))


def _has_block(el: Any) -> bool:
    return len(el) > 0 and any(isinstance(d.tag, str) and d.tag in _BLOCK for d in el.iterdescendants())


def _nested(el: Any) -> str:
    """Markdown of an element's content where headings are plain lines (list items, cells)."""
    sink = TextSink()
    _Walker(sink).walk(el)
    return sink.text("\n")


def _inline(el: Any, *, plain: bool = False) -> str:
    """Inline text: `code` in backticks, links as their text (the URL when there is none)."""
    tag = el.tag.lower() if isinstance(el.tag, str) else ""
    if tag == "br":
        return _BR
    if tag == "img":
        return ""
    if tag in ("code", "kbd", "samp", "tt") and not plain:
        return code_span(el.text_content())
    parts = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str):
            parts.append(_inline(child, plain=plain))
        if child.tail:
            parts.append(child.tail)
    text = "".join(parts)
    if tag == "a" and not text.strip() and el.find(".//img") is None:
        return link_target(el.get("href") or "")
    return text


def _code_text(el: Any) -> str:
    """The text of a code block; a `<div>` inside it is one line (Expressive Code writes lines so)."""
    parts = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str):
            inner = "\n" if child.tag == "br" else _code_text(child)
            parts.append(inner + ("\n" if child.tag == "div" and not inner.endswith("\n") else ""))
        if child.tail:
            parts.append(child.tail)
    return "".join(parts).replace("\u00a0", " ")


def _language(pre: Any) -> str:
    """From `language-x` / `lang-x` / `highlight-x` / `sourceCode x` classes, `data-lang` or `data-language`."""
    candidates = [pre, *pre.iterchildren("code"), *list(pre.iterancestors())[:3]]
    for el in candidates:
        if el.get("data-lang") or el.get("data-language"):
            return _lang_name(el.get("data-lang") or el.get("data-language"))
        classes = (el.get("class") or "").split()
        for c in classes:
            m = _LANG_CLASS.match(c)
            if m and m.group(1).lower() not in _NO_LANG:
                return _lang_name(m.group(1))
        if "sourceCode" in classes:
            rest = [c for c in classes if c != "sourceCode" and c.lower() not in _NO_LANG]
            if rest:
                return _lang_name(rest[0])
    return ""


def _lang_name(name: str) -> str:
    name = name.strip().lower().removeprefix("source-")  # GitHub: `highlight-source-python`
    return "" if name in _NO_LANG else name


def _list(el: Any, *, ordered: bool) -> str:
    items = []
    number = int(el.get("start") or 1) if (el.get("start") or "1").isdigit() else 1
    for li in el:
        if not isinstance(li.tag, str) or li.tag != "li":
            continue
        marker = f"{number}. " if ordered else "- "
        items.append(list_item(_nested(li), marker))
        number += 1
    return "\n".join(item for item in items if item)


def _definitions(el: Any) -> str:
    lines = []
    for child in el:
        if not isinstance(child.tag, str):
            continue
        text = _nested(child)
        if not text:
            continue
        if child.tag == "dt":
            lines.append(text)
        else:
            lines.append(indent(text, ": ", "  "))
    return "\n".join(lines)
