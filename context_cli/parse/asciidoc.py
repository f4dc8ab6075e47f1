"""AsciiDoc pages, read by a line-oriented section reader of our own.

Why not asciidoc3: its PyPI wheel ships the program as a tarball that a post-install
script unpacks into the virtualenv (it cannot be imported as a library), it renders to
HTML/DocBook through a large configuration tree, and it implements the legacy AsciiDoc
dialect, not the Asciidoctor syntax today's projects write. Search needs sections, text
and code, which a faithful reader of the block structure gives directly:

- `= Title` / `== Section` (levels by `=` count, also `#` Markdown-style and the legacy
  two-line titles `Title` + `-----`), a title's author and revision lines skipped;
- `:name: value` attribute entries skipped (and substituted for `{name}` in text);
- `----` listing blocks and `[source,lang]` paragraphs as fenced code with the language,
  `....` literal blocks and indented literal paragraphs as code, `|===` tables as pipe rows;
- `////` and `//` comments, `include::`/`ifdef::` directives and block macros dropped;
- admonition paragraphs (`NOTE: ...`) and `[NOTE]` blocks kept as text with their label;
- inline macros, cross references and links reduced to their text.
"""

from __future__ import annotations

import html
import re

from .common import BlockBuilder, Parsed, Sink, fence, table_rows

_HEADING = re.compile(r"(={1,6}|#{1,6})[ \t]+(.+?)(?:[ \t]+\1)?[ \t]*$")
_UNDERLINES = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_ATTRIBUTE = re.compile(r":(!?[A-Za-z0-9_][\w-]*!?):(?:[ \t]+(.*))?$")
_PREPROCESSOR = re.compile(r"(?:ifdef|ifndef|ifeval|endif|include)::\S*\[.*\]\s*$")
_BLOCK_MACRO = re.compile(r"(?:image|video|audio|toc|pass)::\S*\[.*\]\s*$")
_BLOCK_ATTRS = re.compile(r"\[(.*)\]\s*$")
_BLOCK_TITLE = re.compile(r"\.([^.\s].*)$")
_CODE_DELIMS = {"-": "listing", ".": "literal", "+": "pass", "/": "comment"}
_COMPOUND = re.compile(r"(={4,}|\*{4,}|_{4,}|--)\s*$")
_LIST_ITEM = re.compile(r"[ \t]*(\*{1,5}|-|\.{1,5}|\d+\.|[a-z]\.)[ \t]+(.*)$")
_DLIST = re.compile(r"(\S.*?)(:{2,4}|;;)(?:[ \t]+(.*))?$")
_ADMONITION_STYLES = {"NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"}


def parse_asciidoc_blocks(text: str) -> Parsed:
    """Blocks and `:description:` of one AsciiDoc text."""
    builder = BlockBuilder()
    reader = _Reader(builder, text.split("\n"))
    reader.run()
    return Parsed(blocks=builder.finish(), description=reader.attributes.get("description", ""))


class _Reader:
    """One pass over the lines; paragraphs collect until a blank line or a block starts."""

    def __init__(self, sink: Sink, lines: list[str]) -> None:
        self.sink = sink
        self.lines = lines
        self.attributes: dict[str, str] = {}
        self.para: list[str] = []
        self.block_attrs = ""  # the last `[...]` line, applying to the next block
        self.seen_heading = False

    def run(self) -> None:
        i = 0
        while i < len(self.lines):
            i = self._line(i)
        self._flush()

    def _line(self, i: int) -> int:
        raw = self.lines[i]
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            self._flush()
            return i + 1
        if line.startswith("//"):
            if re.fullmatch(r"/{4,}", line):
                self._flush()
                return self._skip_delimited(i, line)
            return i + 1
        if _PREPROCESSOR.match(line) or _BLOCK_MACRO.match(line):
            return i + 1
        attribute = _ATTRIBUTE.match(line)
        if attribute:
            self._flush()
            name, value = attribute.group(1), attribute.group(2) or ""
            if not name.startswith("!") and not name.endswith("!"):
                self.attributes[name] = value.strip()
            return i + 1
        heading = _HEADING.match(line) if not self.para else None
        if heading:
            return self._heading(i, len(heading.group(1)), heading.group(2))
        if not self.para and i + 1 < len(self.lines) and _two_line_title(line, self.lines[i + 1]):
            return self._heading(i + 1, _UNDERLINES[self.lines[i + 1].strip()[0]], stripped)
        if re.fullmatch(r"(-{4,}|\.{4,}|\+{4,})", line) or line.startswith("```"):
            self._flush()
            return self._code_block(i, line)
        if re.fullmatch(r"[|,:!]===+", line):
            self._flush()
            return self._table(i, line)
        if not self.para:
            block = self._block_start(i, line, stripped)
            if block is not None:
                return block
        if _COMPOUND.fullmatch(line) or line in ("'''", "<<<", "+"):
            self._flush()
            self._admonition_label()
            return i + 1
        item = _LIST_ITEM.match(line)
        if item:
            self._list_item(item.group(1), item.group(2))
            return i + 1
        dlist = _DLIST.match(line)
        if dlist and not line.startswith(" ") and "://" not in dlist.group(1):
            self._flush()
            rest = (dlist.group(3) or "").strip()
            self.para.append(f"{dlist.group(1).strip()}: {rest}" if rest else f"{dlist.group(1).strip()}:")
            return i + 1
        if not self.para and raw[:1] in (" ", "\t"):
            return self._literal_paragraph(i)
        self.para.append(stripped)  # a paragraph line, or the lazy continuation of a list item
        return i + 1

    def _block_start(self, i: int, line: str, stripped: str) -> int | None:
        """Block attribute lines, anchors and block titles (only where a block may start)."""
        attrs = _BLOCK_ATTRS.match(stripped) if stripped.startswith("[") else None
        if attrs:
            if not stripped.startswith("[["):
                self.block_attrs = attrs.group(1)
                if self._style() == "source" and i + 1 < len(self.lines) and not _is_delimiter(self.lines[i + 1]):
                    return self._source_paragraph(i + 1)
            return i + 1
        title = _BLOCK_TITLE.match(line)
        if title:
            self.sink.add(self._inline(title.group(1)))
            return i + 1
        return None

    def _style(self) -> str:
        first = self.block_attrs.split(",")[0].strip()
        return first.lstrip(".#%") if not first.startswith(("[", '"')) else ""

    def _language(self) -> str:
        parts = [p.strip() for p in self.block_attrs.split(",")]
        if len(parts) > 1 and parts[0] in ("source", "") and "=" not in parts[1]:
            return parts[1]
        for p in parts:
            if p.startswith("language="):
                return p.split("=", 1)[1].strip("\"'")
        return self.attributes.get("source-language", "") if parts[0] == "source" else ""

    def _heading(self, i: int, level: int, title: str) -> int:
        self._flush()
        self.sink.heading(level, self._plain(title))
        self.block_attrs = ""
        first = not self.seen_heading
        self.seen_heading = True
        i += 1
        if first and level == 1:  # the document header: author and revision lines follow the title
            while i < len(self.lines) and self.lines[i].strip():
                attribute = _ATTRIBUTE.match(self.lines[i].rstrip())
                if attribute and not attribute.group(1).startswith("!"):
                    self.attributes[attribute.group(1)] = (attribute.group(2) or "").strip()
                i += 1
        return i

    def _skip_delimited(self, i: int, delimiter: str) -> int:
        j = i + 1
        while j < len(self.lines) and self.lines[j].rstrip() != delimiter:
            j += 1
        return j + 1

    def _collect(self, i: int, delimiter: str) -> tuple[list[str], int]:
        body: list[str] = []
        j = i + 1
        closing = "```" if delimiter.startswith("```") else delimiter
        while j < len(self.lines) and self.lines[j].rstrip() != closing:
            body.append(self.lines[j])
            j += 1
        return body, j + 1

    def _code_block(self, i: int, line: str) -> int:
        body, end = self._collect(i, line)
        if line.startswith("+"):
            text = html.unescape(re.sub(r"<[^>]*>", "", "\n".join(body))).strip()
            if text:
                self.sink.add(text)
        else:
            language = line[3:].strip() if line.startswith("```") else ""
            if line.startswith("-") or line.startswith("```"):
                language = language or self._language()
            self._admonition_label()
            self.sink.add(fence("\n".join(body), language))
        self.block_attrs = ""
        return end

    def _source_paragraph(self, i: int) -> int:
        body = []
        while i < len(self.lines) and self.lines[i].strip():
            body.append(self.lines[i])
            i += 1
        self.sink.add(fence("\n".join(body), self._language()))
        self.block_attrs = ""
        return i

    def _literal_paragraph(self, i: int) -> int:
        body = []
        while i < len(self.lines) and self.lines[i].strip():
            body.append(self.lines[i])
            i += 1
        width = min(len(b) - len(b.lstrip()) for b in body)
        self.sink.add(fence("\n".join(b[width:] for b in body)))
        return i

    def _table(self, i: int, line: str) -> int:
        """`|===` tables as pipe rows: cells in order, rows by the `cols` count or the first line."""
        body, end = self._collect(i, line)
        cells: list[str] = []
        first_line_cells = 0
        for row in body:
            if not row.strip():
                continue
            parts = _cells(row, line[0])
            if parts is None:  # a continuation of the previous cell
                if cells:
                    cells[-1] += " " + row.strip()
                continue
            first_line_cells = first_line_cells or len(parts)
            cells.extend(parts)
        width = _column_count(self.block_attrs) or first_line_cells or 1
        rows = [[self._inline(c) for c in cells[k:k + width]] for k in range(0, len(cells), width)]
        self.sink.add(table_rows(rows))
        self.block_attrs = ""
        return end

    def _list_item(self, marker: str, text: str) -> None:
        if self.para and not self.para[0].lstrip().startswith(("- ", "1. ")):
            self._flush()
        depth = len(marker) if marker[0] in "*." else 1
        bullet = "1." if marker[0] == "." or marker[0].isalnum() else "-"
        self.para.append("  " * (depth - 1) + f"{bullet} {text.strip()}")

    def _admonition_label(self) -> None:
        style = self._style().upper()
        if style in _ADMONITION_STYLES:
            self.sink.add(style.capitalize() + ":")
        self.block_attrs = ""

    def _flush(self) -> None:
        if not self.para:
            return
        style = self._style().upper()
        lines = [re.sub(r"[ \t]\+$", "", ln) for ln in self.para]
        text = self._inline("\n".join(lines))
        if style in _ADMONITION_STYLES:
            text = f"{style}: {text}"
        self.sink.add(text)
        self.para = []
        self.block_attrs = ""

    def _inline(self, text: str) -> str:
        return _inline(text, self.attributes)

    def _plain(self, text: str) -> str:
        text = _inline(text, self.attributes)
        return re.sub(r"`+|(?<!\w)\*+|\*+(?!\w)", "", text)


def _is_delimiter(line: str) -> bool:
    return bool(re.fullmatch(r"(-{4,}|\.{4,}|\+{4,}|={4,}|\*{4,}|_{4,}|--|```.*|[|,:!]===+)", line.rstrip()))


def _two_line_title(line: str, under: str) -> bool:
    """Legacy two-line titles: a line underlined by `=-~^+` within two characters of its length."""
    under = under.rstrip()
    if len(under) < 2 or under[0] not in _UNDERLINES or under != under[0] * len(under):
        return False
    text = line.strip()
    if not re.search(r"\w", text) or line[:1] in (" ", "\t", ".", "[", "/", "*", "-", "|", ":", "<"):
        return False
    return abs(len(text) - len(under)) <= 2


def _cells(row: str, separator: str) -> list[str] | None:
    """Cells of a table line, or None when the line does not start a cell (continuation)."""
    spec = r"(?:^|(?<=\s))[0-9.+*<>^]*[adehlmsv]?" + re.escape(separator)
    if separator != "|":
        return [c.strip() for c in row.split(separator)]
    if not re.match(r"\s*[0-9.+*<>^]*[adehlmsv]?\|", row):
        return None
    parts = re.split(spec, row.strip())
    return [p.strip() for p in parts[1:]]


def _column_count(attrs: str) -> int:
    m = re.search(r'cols\s*=\s*"?([^"\]]*)"?', attrs)
    if not m:
        return 0
    spec = m.group(1).strip()
    if spec.isdigit():
        return int(spec)
    if re.fullmatch(r"\d+\*.*", spec):
        return int(spec.split("*")[0])
    return len([c for c in re.split(r"[,;]", spec) if c.strip()])


_MACRO = re.compile(
    r"\b(?:link|xref|mailto|kbd|btn|menu|footnote|footnoteref|image|icon|pass|anchor|indexterm2?|stem|"
    r"latexmath|asciimath):([^\s\[]*)\[([^\]]*)\]"
)
_URL = re.compile(r"\b((?:https?|ftp|irc)://[^\s\[<>]+)\[([^\]]*)\]")
_XREF = re.compile(r"<<([^,<>]+?)(?:,\s*([^<>]+?))?>>")
_ATTR_REF = re.compile(r"\{([A-Za-z0-9_][\w-]*)\}")


def _inline(text: str, attributes: dict[str, str]) -> str:
    """Links, macros and cross references as their text; attribute references resolved."""
    text = _ATTR_REF.sub(lambda m: attributes.get(m.group(1), m.group(0)), text)
    text = _URL.sub(lambda m: m.group(2).strip().split(",")[0].strip('"') or m.group(1), text)

    def macro(m: re.Match[str]) -> str:
        name = m.group(0).split(":", 1)[0]
        target, label = m.group(1), m.group(2).strip()
        if name in ("image", "icon", "anchor", "indexterm", "indexterm2"):
            return label.split(",")[0].strip('"') if name == "image" else ""
        if name.startswith("footnote"):
            return f" ({label})" if label else ""
        if name == "menu":
            return " > ".join([target, *[p.strip() for p in label.split(">")]]) if label else target
        return label.split(",")[0].strip('"') or target

    text = _MACRO.sub(macro, text)
    text = _XREF.sub(lambda m: (m.group(2) or m.group(1).split("#")[-1]).strip(), text)
    text = re.sub(r"\[\[[^\]]*\]\]|\[#[\w.-]+\]", "", text)  # inline anchors
    text = re.sub(r"\(\(\((.*?)\)\)\)", "", text)  # hidden index terms
    text = re.sub(r"\(\((.*?)\)\)", r"\1", text)  # visible index terms
    text = re.sub(r"`\+(.+?)\+`", r"`\1`", text)  # literal monospace
    text = re.sub(r"\[\.[\w.-]+\]#(.+?)#", r"\1", text)  # role spans
    return text
