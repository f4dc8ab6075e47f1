"""The reStructuredText most documentation is written in, read without docutils' state machine.

docutils reads a page through a state machine that makes a new machine of states for every
nested block (each list item, directive body, quote), tries a table of regexes on every line
and builds a node for everything; on Django's docs that was most of a build's CPU. This
reader follows docutils' rules line by line for the constructs documentation uses (sections,
paragraphs, `::` and doctest blocks, bullet and numbered lists, definition and field lists,
simple tables, block quotes, comments, targets, and the directives `rst.py` renders: the
Sphinx stand-ins of `rst_sphinx.Generic`, admonitions, topics, sidebars, images, rubrics,
contents), builds a small tree of tuples and renders it the way `rst._Writer` renders
docutils' tree. Inline text goes through `rst_inline` (docutils' inliner where that declines).

Anything else (grid tables, footnotes, substitution definitions, option lists, line blocks,
includes, glossaries, titles in odd places, malformed markup docutils would report) raises
`Unsupported`, and the page is read by docutils instead: the fast reader renders a page as
docutils would, or not at all. tests/test_parse_rst_fast.py holds the two to the same output
on every rst page of the test fixtures and two bench corpora, and on generated pages.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from docutils import nodes, utils
from docutils.parsers.rst import directives, languages, states
from docutils.parsers.rst.directives import admonitions, body, images, parts
from docutils.statemachine import string2lines
from docutils.utils import column_width

from .common import Sink, TextSink, code_span, fence, indent, list_item, table_rows
from .rst_inline import Inline
from .rst_sphinx import Generic
from .sphinx import CODE, CODE_LANG, DROP, HIDE_ARGUMENT, LABELS, SIGNATURE, VERSION, looks_like_code


class Unsupported(Exception):
    """The page holds something this reader leaves to docutils."""


_P = states.Body.patterns
_BULLET = re.compile(_P["bullet"])
_ENUMERATOR = re.compile(_P["enumerator"])
_FIELD = re.compile(_P["field_marker"])
_OPTION = re.compile(_P["option_marker"])
_DOCTEST = re.compile(_P["doctest"])
_LINE_BLOCK = re.compile(_P["line_block"])
_GRID_TOP = states.Body.grid_table_top_pat
_SIMPLE_TOP = states.Body.simple_table_top_pat
_EXPLICIT = re.compile(_P["explicit_markup"])
_ANONYMOUS = re.compile(_P["anonymous"])
_LINE = re.compile(_P["line"])
_CONSTRUCTS = {method.__name__: pattern for method, pattern in states.Body.explicit.constructs}
_TARGET = states.Body.explicit.patterns.target
_LITERAL_NEXT = re.compile(r"(?<!\\)(\\\\)*::$")
_CLASSIFIER = re.compile(" +: +")
_ATTRIBUTION = states.Body.attribution_pattern
_PUNCT = re.compile(states.Body.pats["nonalphanum7bit"])
_ENUM_ARABIC = re.compile("[0-9]+$")
LINE_LENGTH_LIMIT = 10_000  # docutils' default: a longer line empties the page (docutils reports it)

# Which Body patterns can match a line starting with a given character, in docutils' order.
_ORDER = ("bullet", "enumerator", "field", "option", "doctest", "line_block", "grid", "simple", "explicit",
          "anonymous", "line")
_CANDIDATES: dict[str, tuple[str, ...]] = {}


def _candidates(c: str) -> tuple[str, ...]:
    found = _CANDIDATES.get(c)
    if found is None:
        can = {
            "bullet": c in "-+*\u2022\u2023\u2043",
            "enumerator": c in "0123456789#(" or (c.isascii() and c.isalpha()),
            "field": c == ":", "option": c in "-+/", "doctest": c == ">", "line_block": c == "|",
            "grid": c == "+", "simple": c == "=", "explicit": c == ".", "anonymous": c == "_",
            "line": bool(_PUNCT.match(c)),
        }
        found = _CANDIDATES[c] = tuple(name for name in _ORDER if can[name])
    return found


_PATTERNS = {"bullet": _BULLET, "enumerator": _ENUMERATOR, "field": _FIELD, "option": _OPTION, "doctest": _DOCTEST,
             "line_block": _LINE_BLOCK, "grid": _GRID_TOP, "simple": _SIMPLE_TOP, "explicit": _EXPLICIT,
             "anonymous": _ANONYMOUS, "line": _LINE}


def _classify(line: str) -> tuple[str, re.Match[str] | None]:
    """The first of docutils' Body transitions that matches a non-blank, unindented line."""
    for name in _candidates(line[0]):
        m = _PATTERNS[name].match(line)
        if m:
            return name, m
    return "text", None


# --- lines: docutils' StringList.get_indented and friends -----------------------------------

def _indented(lines: list[str], start: int, *, until_blank: bool = False, strip_indent: bool = True,
              block_indent: int | None = None, first_indent: int | None = None) -> tuple[list[str], int, int, bool]:
    """`StringList.get_indented`: (block, indent, end, blank_finish)."""
    indent = block_indent
    end = start
    if block_indent is not None and first_indent is None:
        first_indent = block_indent
    if first_indent is not None:
        end += 1
    last = len(lines)
    blank_finish = True
    while end < last:
        line = lines[end]
        if line and (line[0] != " " or (block_indent is not None and line[:block_indent].strip())):
            blank_finish = end > start and not lines[end - 1].strip()
            break
        stripped = line.lstrip()
        if not stripped:
            if until_blank:
                blank_finish = True
                break
        elif block_indent is None:
            line_indent = len(line) - len(stripped)
            indent = line_indent if indent is None else min(indent, line_indent)
        end += 1
    block = lines[start:end]
    if first_indent is not None and block:
        block[0] = block[0][first_indent:]
    if indent and strip_indent:
        skip = 1 if first_indent is not None else 0
        block[skip:] = [line[indent:] for line in block[skip:]]
    return block, indent or 0, end, blank_finish


def _strip_top(block: list[str]) -> list[str]:
    k = 0
    while k < len(block) and not block[k].strip():
        k += 1
    return block[k:] if k else block


def _strip_end(block: list[str]) -> list[str]:
    k = len(block)
    while k and not block[k - 1].strip():
        k -= 1
    return block[:k]


def _text_block(lines: list[str], start: int, *, flush_left: bool) -> tuple[list[str], bool]:
    """`get_text_block`: lines up to a blank one; (block, stopped at an indented line)."""
    end = start
    while end < len(lines):
        line = lines[end]
        if not line.strip():
            break
        if flush_left and line[0] == " ":
            return lines[start:end], True
        end += 1
    return lines[start:end], False


# --- the tree: tuples named after docutils' nodes -------------------------------------------
# ("p", raw, names)  paragraph: its inline Markdown before the writer strips it, and whether
#   it declares link names (`paragraph`)
# ("lit", text, language)  literal block ("" = the page's highlight language)
# ("hl", language)  a `highlight` directive
# ("h", level, title)  a section heading
# ("ul", items) / ("ol", start, items)  lists, each item a list of nodes
# ("dl", [(term raw, definition nodes)]); ("fl", [(name raw, body nodes)])
# ("adm", label raw, nodes); ("quote", nodes); ("rubric", raw); ("table", rows of cells of nodes)
# ("msg",) a system message, ("invisible",) a comment or target, ("hidden",) an image, a
# table of contents or a transition: nothing to show, but they are there (a directive's first paragraph is
# not first after them)
Node = tuple[Any, ...]
_PREBIBLIOGRAPHIC = ("msg", "invisible", "hl")  # what may come before a docinfo field list


class _Page:
    """One page's parse: the title styles seen so far and the inliner."""

    def __init__(self, inline: Callable[[str], Inline]) -> None:
        self.inline = inline
        self.title_styles: list[Any] = []
        self.level = 0
        self.docinfo = False  # the leading field list taken as docinfo (docutils takes one)

    def raw(self, text: str) -> str:
        return self.inline(text).shown

    def paragraph(self, text: str, label: str = "") -> Node:
        """A paragraph of `text`'s inline markup after `label`; its third field says whether
        its text declares link names."""
        found = self.inline(text)
        return ("p", label + found.shown, found.names)

    # -- bodies

    def body(self, lines: list[str], titles: bool = False) -> list[Node]:
        """`nested_parse` of `lines` (with `titles`: the document, where sections may start)."""
        out: list[Node] = []
        i, n = 0, len(lines)
        while i < n:
            line = lines[i]
            if not line:
                i += 1
                continue
            if line[0] == " ":
                block, _, i, _ = _indented(lines, i)
                out.append(("quote", self._quote(_strip_top(block))))
                continue
            kind, m = _classify(line)
            if kind == "text":
                i = self._text(lines, i, titles, out)
            elif kind == "bullet":
                i = self._bullets(lines, i, out)
            elif kind == "enumerator":
                assert m is not None
                i = self._enumerated(lines, i, m, titles, out)
            elif kind == "field":
                if titles and self.level == 0 and not self.docinfo and all(node[0] in _PREBIBLIOGRAPHIC for node in out):
                    i = self._docinfo(lines, i)
                else:
                    i = self._fields(lines, i, out)
            elif kind == "doctest":
                block, _ = _text_block(lines, i, flush_left=False)
                out.append(("lit", "\n".join(block), "pycon"))
                i += len(block)
            elif kind == "explicit":
                i = self._explicit(lines, i, titles, out)
            elif kind == "anonymous":
                assert m is not None
                _, _, i, _ = _indented(lines, i, until_blank=True, first_indent=m.end())
                out.append(("invisible",))
            elif kind == "line":
                i = self._line(lines, i, titles, out)
            elif kind == "simple":
                i = self._simple_table(lines, i, out)
            else:
                raise Unsupported(kind)
        return out

    def _quote(self, block: list[str]) -> list[Node]:
        """`Body.block_quote` without an attribution."""
        blank, seen = None, False
        for k, line in enumerate(block):
            if line:
                if seen and blank == k - 1 and _ATTRIBUTION.match(line):
                    raise Unsupported("attribution")
                seen = True
            else:
                blank = k
        return self.body(block)

    # -- paragraphs, titles, definition lists (docutils' Text state)

    def _text(self, lines: list[str], i: int, titles: bool, out: list[Node], *, corrected: bool = False) -> int:
        n = len(lines)
        j = i + 1
        if j >= n:
            self._paragraph([lines[i]], lines, n, out)
            return n
        nxt = lines[j]
        if not nxt:
            return self._paragraph([lines[i]], lines, j, out)
        if nxt[0] == " ":
            return self._definitions(lines, i, out)
        if not corrected and _LINE.match(nxt):
            title, underline = lines[i].rstrip(), nxt.rstrip()
            if column_width(title) > len(underline) and len(underline) < 4:
                return self._text(lines, i, titles, out, corrected=True)
            if not titles:
                raise Unsupported("section title inside a block")
            self._section(title, underline[0], out)
            return j + 1
        block, indented = _text_block(lines, j, flush_left=True)
        end = j + len(block)
        end = self._paragraph([lines[i], *block], lines, end, out)
        if indented:
            out.append(("msg",))
        return end

    def _paragraph(self, para: list[str], lines: list[str], after: int, out: list[Node]) -> int:
        """`RSTState.paragraph` and the literal block a `::` opens, read from `after`; the
        line to go on from."""
        data = "\n".join(para).rstrip()
        if not data.endswith("::") or not _LITERAL_NEXT.search(data):
            out.append(self.paragraph(data))
            return after
        if len(data) > 2:
            text = data[:-3].rstrip() if data[-3] in " \n" else data[:-1]
            out.append(self.paragraph(text))
        block, _, end, _ = _indented(lines, after)
        block = _strip_end(_strip_top(block))
        if not block:
            if any(line.strip() for line in lines[after:]):
                raise Unsupported("quoted literal block")
            return len(lines)
        out.append(("lit", "\n".join(block), ""))
        return end

    def _section(self, title: str, style: Any, out: list[Node]) -> None:
        """`check_subsection` and `new_subsection`, flattened: a heading at its level."""
        if style in self.title_styles:
            level = self.title_styles.index(style) + 1
            if level > self.level + 1:
                raise Unsupported("title level inconsistent")
        elif len(self.title_styles) == self.level:
            self.title_styles.append(style)
            level = self.level + 1
        else:
            raise Unsupported("title level inconsistent")
        self.level = level
        out.append(("h", level, self.inline(title).plain))

    def _definitions(self, lines: list[str], i: int, out: list[Node]) -> int:
        items = []
        n = len(lines)
        while True:
            term = lines[i]
            if _CLASSIFIER.search(term):
                raise Unsupported("classifier")
            block, _, end, _ = _indented(lines, i + 1)
            items.append((self.raw(term), self.body(_strip_top(block))))
            k = end
            while k < n and not lines[k]:
                k += 1
            if k + 1 < n and lines[k][0] != " " and _classify(lines[k])[0] == "text" and lines[k + 1][:1] == " ":
                i = k
                continue
            break
        out.append(("dl", items))
        return end

    # -- lists

    def _item(self, lines: list[str], i: int, at: int) -> tuple[list[Node], int]:
        """`Body.list_item`: the item's nodes and the line after it."""
        if lines[i][at:]:
            block, _, end, _ = _indented(lines, i, block_indent=at)
        else:
            block, _, end, _ = _indented(lines, i, first_indent=at)
        block = _strip_top(block)
        return (self.body(block) if block else []), end

    def _bullets(self, lines: list[str], i: int, out: list[Node]) -> int:
        bullet = lines[i][0]
        items = []
        n = len(lines)
        while True:
            m = _BULLET.match(lines[i])
            assert m is not None
            item, end = self._item(lines, i, m.end())
            items.append(item)
            k = end
            while k < n and not lines[k]:
                k += 1
            if k < n and lines[k][0] == bullet and _BULLET.match(lines[k]):
                i = k
                continue
            break
        out.append(("ul", items))
        return end

    def _enumerated(self, lines: list[str], i: int, m: re.Match[str], titles: bool, out: list[Node]) -> int:
        fmt, sequence, ordinal = _enumerator(m)
        if not _is_item(lines, i, ordinal, sequence, fmt):
            return self._text(lines, i, titles, out)
        assert ordinal is not None
        if ordinal != 1:
            out.append(("msg",))
        auto, last, items = sequence == "#", ordinal, []
        n = len(lines)
        while True:
            item, end = self._item(lines, i, m.end())
            items.append(item)
            k = end
            while k < n and not lines[k]:
                k += 1
            if k >= n or lines[k][0] == " ":
                break
            nm = _ENUMERATOR.match(lines[k]) if _classify(lines[k])[0] == "enumerator" else None
            if nm is None:
                break
            f2, s2, o2 = _enumerator(nm)
            if f2 != fmt or (s2 != "#" and (s2 != "arabic" or auto or o2 != last + 1)) \
                    or not _is_item(lines, k, o2, s2, f2):
                break
            auto = auto or s2 == "#"
            assert o2 is not None
            i, m, last = k, nm, o2
        out.append(("ol", ordinal, items))
        return end

    def _fields(self, lines: list[str], i: int, out: list[Node]) -> int:
        items = []
        n = len(lines)
        while True:
            m = _FIELD.match(lines[i])
            assert m is not None
            name = m.group()[1:]
            name = name[:name.rfind(":")]
            block, _, end, _ = _indented(lines, i, first_indent=m.end())
            block = _strip_top(block)
            items.append((self.raw(name), self.body(block) if block else []))
            k = end
            while k < n and not lines[k]:
                k += 1
            if k < n and lines[k][0] == ":" and _classify(lines[k])[0] == "field":
                i = k
                continue
            break
        out.append(("fl", items))
        return end

    def _docinfo(self, lines: list[str], i: int) -> int:
        """The document's leading field list, which docutils' DocInfo transform makes a
        docinfo the writer skips (its `dedication` and `abstract` would be topics)."""
        fields: list[Node] = []
        end = self._fields(lines, i, fields)
        self.docinfo = True
        for name, _ in fields[0][1]:
            if " ".join(name.lower().split()) in ("dedication", "abstract"):
                raise Unsupported("dedication or abstract")
        return end

    # -- tables

    def _simple_table(self, lines: list[str], start: int, out: list[Node]) -> int:
        """`Body.isolate_simple_table`, docutils' own table parser, the cells read here."""
        from docutils.parsers.rst import tableparser
        from docutils.statemachine import StringList

        limit = len(lines) - 1
        toplen = len(lines[start].strip())
        found, i, end = 0, start + 1, None
        while i <= limit:
            line = lines[i]
            if states.Body.simple_table_border_pat.match(line):
                if len(line.strip()) != toplen:
                    raise Unsupported("malformed table")
                found += 1
                if found == 2 or i == limit or not lines[i + 1].strip():
                    end = i
                    break
            i += 1
        if end is None:
            raise Unsupported("malformed table")
        block = lines[start:end + 1]
        if not all(line.isascii() for line in block):
            raise Unsupported("table with wide characters")
        try:
            _, head, rows = tableparser.SimpleTableParser().parse(StringList(block))
        except tableparser.TableMarkupError:
            raise Unsupported("malformed table") from None
        table = []
        for row in head + rows:
            cells = []
            for cell in row:
                if cell is not None:
                    content = list(cell[3])
                    cells.append(self.body(content) if "".join(content) else [])
            table.append(cells)
        out.append(("table", table))
        return end + 1

    # -- explicit markup

    def _explicit(self, lines: list[str], i: int, titles: bool, out: list[Node]) -> int:
        line = lines[i]
        if _CONSTRUCTS["footnote"].match(line) or _CONSTRUCTS["citation"].match(line):
            raise Unsupported("footnote or citation")
        m = _CONSTRUCTS["hyperlink_target"].match(line)
        if m:
            out.append(("invisible",))
            return self._target(lines, i, m.end())
        if _CONSTRUCTS["substitution_def"].match(line):
            raise Unsupported("substitution")
        m = _CONSTRUCTS["directive"].match(line)
        if m:
            return self._directive(lines, i, m, titles, out)
        out.append(("invisible",))
        return self._comment(lines, i, _EXPLICIT.match(line).end())  # type: ignore[union-attr]

    def _comment(self, lines: list[str], i: int, at: int) -> int:
        first = lines[i][at:]
        if (i + 1 >= len(lines) or not lines[i + 1].strip()) and not first.strip():
            return i + 1
        if first.startswith('end of inclusion from "'):
            raise Unsupported("inclusion marker")
        _, _, end, _ = _indented(lines, i, first_indent=at)
        return end

    def _target(self, lines: list[str], i: int, at: int) -> int:
        block, _, end, _ = _indented(lines, i, until_blank=True, strip_indent=False, first_indent=at)
        escaped = utils.escape2null(block[0])
        k = 0
        while not _TARGET.match(escaped):
            k += 1
            if k >= len(block):
                raise Unsupported("malformed target")
            escaped += utils.escape2null(block[k])
        return end

    def _directive(self, lines: list[str], i: int, m: re.Match[str], titles: bool, out: list[Node]) -> int:
        name = m.group(1)
        cls = directives._directives.get(name.lower())
        if cls is None:  # a docutils directive not used yet (one of another language adds a message)
            english = languages.get_language("en")
            if name.lower() not in english.directives:
                raise Unsupported(f"directive {name}")
            cls, _ = directives.directive(name, english, None)
        block, _, end, _ = _indented(lines, i, first_indent=m.end())
        if cls is Generic:
            self._generic(name, block, out)
        elif isinstance(cls, type) and issubclass(cls, admonitions.BaseAdmonition):
            self._admonition(cls, block, out)
        elif cls in (images.Image, parts.Contents):
            if _content_after(block):  # docutils: "no content permitted", an error message
                raise Unsupported(f"directive {name} with content")
            out.append(("hidden",))  # an image; a table of contents (a topic the writer skips)
        elif cls is body.Rubric:
            args, options, content = _directive_block(block, 1, 0, True, {"class", "name"}, False)
            out.append(("rubric", self.raw(args[0])))
        elif cls in (body.Topic, body.Sidebar) and titles:  # (elsewhere docutils reports them)
            self._pseudo_section(cls, block, out)
        else:
            raise Unsupported(f"directive {name}")
        return end

    def _admonition(self, cls: type, block: list[str], out: list[Node]) -> None:
        required = cls.required_arguments  # type: ignore[attr-defined]
        args, options, content = _directive_block(block, required, 0, True, {"name"}, True)
        if not content:
            raise Unsupported("admonition without content")
        children = self.body(content)
        if cls.node_class is nodes.admonition:  # type: ignore[attr-defined]
            out.append(("adm", self.raw(args[0]).strip(), children))
        else:
            out.append(("adm", cls.node_class.__name__.replace("_", " ").capitalize(), children))  # type: ignore[attr-defined]

    def _pseudo_section(self, cls: type, block: list[str], out: list[Node]) -> None:
        """A topic or sidebar where a section could start (the document or a section): its
        title, if any, then its body."""
        required = cls is body.Topic
        args, options, content = _directive_block(block, int(required), int(not required), True, {"name"}, True)
        if not content:
            raise Unsupported(f"{cls.__name__.lower()} without content")
        out.append(("pseudo", self.raw(args[0]) if args else None, self.body(content)))

    def _generic(self, typed: str, block: list[str], out: list[Node]) -> None:
        """`rst_sphinx.Generic.run`."""
        args, options, content = _directive_block(block, 0, 1, True, None, True)
        name = typed.lower()
        base = name.rsplit(":", 1)[-1]
        argument = args[0].strip() if args else ""
        if name in DROP or base in DROP:
            return
        if name == "highlight" or base == "highlight":
            out.append(("hl", argument.split()[0] if argument else ""))
            return
        if name in CODE or base in CODE:
            language = argument.split()[0] if argument else options.get("language", "") or CODE_LANG.get(base, "")
            out.append(("lit", "\n".join(content), language))
            return
        if name in VERSION:
            version, rest = (argument.split(None, 1) + ["", ""])[:2]
            out.extend(self._labelled(f"{VERSION[name]} {version}".strip(), rest, content))
            return
        if name in LABELS:
            out.extend(self._labelled(LABELS[name], argument, content))
            return
        from .cli_docs import RST_DIRECTIVES

        if base in RST_DIRECTIVES or base == "glossary":
            raise Unsupported(f"directive {name}")
        if name.startswith("auto") or (argument and (":" in name or base in SIGNATURE)):
            for line in argument.split("\n"):
                line = line.strip().rstrip("\\").strip()
                if line:
                    out.append(("p", code_span(line), False))
            out.extend(self.body(content) if content else [])
            return
        if argument and name not in HIDE_ARGUMENT:
            out.append(self._argument(argument))
        code, language = looks_like_code(content)
        if code and not argument:
            out.append(("lit", "\n".join(content), language))
            return
        out.extend(self.body(content) if content else [])

    def _argument(self, text: str, label: str = "") -> Node:
        """`Generic._paragraph`: a label, then the argument's inline text on one line."""
        lead = label + (": " if text.strip() else "") if label else ""
        return self.paragraph(" ".join(text.split()), lead) if text.strip() else ("p", lead, False)

    def _labelled(self, label: str, text: str, content: list[str]) -> list[Node]:
        children = self.body(content) if content else []
        if not text.strip() and children and children[0][0] == "p":
            if children[0][2]:
                raise Unsupported("a first paragraph that declares link names")
            return [("p", label + ": " + children[0][1], False), *children[1:]]
        return [self._argument(text, label), *children]

    def _line(self, lines: list[str], i: int, titles: bool, out: list[Node]) -> int:
        """A line of one punctuation character: a transition, an overlined title, or `::`."""
        marker = lines[i].strip()
        if marker == "::":
            return self._text(lines, i, titles, out)
        if not titles:  # no titles here: a short line is text, a longer one an error docutils drops
            out.append(("msg",))
            return self._text(lines, i, titles, out) if len(marker) < 4 else i + 1
        if len(marker) < 4:
            raise Unsupported("short punctuation line")
        n = len(lines)
        if i + 1 >= n or not lines[i + 1]:
            out.append(("hidden",))  # a transition
            return i + 1
        if i + 2 >= n or _LINE.match(lines[i + 1]):
            raise Unsupported("odd title")
        overline, title, underline = lines[i].rstrip(), lines[i + 1], lines[i + 2].rstrip()
        if not _LINE.match(underline) or overline != underline:
            raise Unsupported("title overline and underline differ")
        self._section(title.rstrip().lstrip(), (overline[0], underline[0]), out)
        return i + 3


def _enumerator(m: re.Match[str]) -> tuple[str, str, int | None]:
    """`Body.parse_enumerator` for what this reader renders: (format, sequence, ordinal); a
    sequence other than arabic or `#` comes back as "other"."""
    groups = m.groupdict()
    fmt = next(f for f in ("parens", "rparen", "period") if groups.get(f))
    info = states.Body.enum.formatinfo[fmt]
    text = groups[fmt][info.start:info.end]
    if text == "#":
        return fmt, "#", 1
    if _ENUM_ARABIC.match(text):
        return fmt, "arabic", int(text)
    return fmt, "other", None


def _is_item(lines: list[str], i: int, ordinal: int | None, sequence: str, fmt: str) -> bool:
    """`Body.is_enumerated_list_item`, for arabic and `#` (others raise Unsupported)."""
    if sequence == "other":
        raise Unsupported("enumerator")
    if ordinal is None:
        return False
    if i + 1 >= len(lines):
        return True
    nxt = lines[i + 1]
    if not nxt[:1].strip():
        return True
    info = states.Body.enum.formatinfo[fmt]
    following = info.prefix + ("#" if sequence == "#" else str(ordinal + 1)) + info.suffix + " "
    auto = info.prefix + "#" + info.suffix + " "
    return nxt.startswith((following, auto))


def _directive_block(block: list[str], required: int, optional: int, final_whitespace: bool,
                     option_names: set[str] | None, has_content: bool
                     ) -> tuple[list[str], dict[str, str], list[str]]:
    """`RSTState.parse_directive_block` for a directive that accepts options (`option_names`,
    None for any): (arguments, options, content)."""
    indented, i = _split_block(block)
    arg_block, content = indented[:i], indented[i + 1:]
    options: dict[str, str] = {}
    opt_at = next((k for k, line in enumerate(arg_block) if _FIELD.match(line)), None)
    if opt_at is not None:
        options = _options(arg_block[opt_at:], option_names)
        arg_block = arg_block[:opt_at]
    if arg_block and not (required or optional):
        content = arg_block + indented[i:]
    content = _strip_top(content)
    arguments: list[str] = []
    if required or optional:
        text = "\n".join(arg_block)
        arguments = text.split()
        if len(arguments) < required:
            raise Unsupported("directive arguments missing")
        if len(arguments) > required + optional:
            if not final_whitespace:
                raise Unsupported("too many directive arguments")
            arguments = text.split(None, required + optional - 1)
    if content and not has_content:
        raise Unsupported("directive content not allowed")
    return arguments, options, content


def _split_block(block: list[str]) -> tuple[list[str], int]:
    """A directive's block without its blank first and last lines, and where its arguments and
    options end (the first blank line; content follows it)."""
    indented = _strip_end(block[1:] if block and not block[0].strip() else block)
    return indented, next((k for k, line in enumerate(indented) if not line.strip()), len(indented))


def _content_after(block: list[str]) -> bool:
    """Whether a directive's block has content after its arguments and options."""
    indented, i = _split_block(block)
    return any(line.strip() for line in indented[i + 1:])


def _options(block: list[str], names: set[str] | None) -> dict[str, str]:
    """A directive's option field list (`parse_extension_options`), each option's body one
    paragraph of plain text; anything docutils would refuse raises Unsupported."""
    options: dict[str, str] = {}
    i = 0
    while i < len(block):
        m = _FIELD.match(block[i])
        if m is None:
            raise Unsupported("invalid option block")
        name = m.group()[1:]
        name = name[:name.rfind(":")]
        if len(name.split()) != 1 or any(c in name for c in "*`_|:@\\["):
            raise Unsupported("odd option name")
        value, _, end, _ = _indented(block, i, first_indent=m.end())
        value = _strip_top(value)
        while value and not value[-1].strip():
            value = value[:-1]
        if any(not line.strip() for line in value):
            raise Unsupported("option of several paragraphs")
        key = name.lower()
        if key in options or (names is not None and key not in names) or key == "class":
            raise Unsupported("option docutils would refuse")
        options[key] = "\n".join(value)
        i = end
    return options


# --- rendering: rst._Writer over the tuples ---------------------------------------------------

class _Render:
    def __init__(self) -> None:
        self.language = ""

    def body(self, children: list[Node], sink: Sink) -> None:
        for node in children:
            self.element(node, sink)

    def element(self, node: Node, sink: Sink) -> None:
        tag = node[0]
        if tag == "p" or tag == "rubric":
            sink.add(node[1].strip())
        elif tag == "h":
            sink.heading(node[1], node[2])
        elif tag == "lit":
            sink.add(fence(node[1], node[2] or self.language))
        elif tag == "hl":
            self.language = node[1]
        elif tag == "ul" or tag == "ol":
            items = node[1] if tag == "ul" else node[2]
            start = node[1] if tag == "ol" else 1
            out = []
            for n, item in enumerate(items):
                out.append(list_item(self.nested(item), f"{start + n}. " if tag == "ol" else "- "))
            sink.add("\n".join(item for item in out if item))
        elif tag == "dl":
            lines = []
            for term, definition in node[1]:
                lines.append(term.strip())
                lines.append(indent(self.nested(definition), ": ", "  "))
            sink.add("\n".join(lines))
        elif tag == "fl":
            fields = []
            for name, content in node[1]:
                text = self.nested(content)
                name = name.strip()
                fields.append(indent(f"{name}: {text}" if text else name, "- ", "  "))
            sink.add("\n".join(fields))
        elif tag == "adm":
            text = self.nested(node[2], sep="\n\n")
            sink.add(f"{node[1]}: {text}" if text else node[1])
        elif tag == "quote":
            self.body(node[1], sink)
        elif tag == "pseudo":
            if node[1] is not None:
                sink.add(node[1].strip())
            self.body(node[2], sink)
        elif tag == "table":
            sink.add(table_rows([[" ".join(self.nested(cell, sep=" ").split()) for cell in row] for row in node[1]]))

    def nested(self, children: list[Node], sep: str = "\n") -> str:
        sink = TextSink()
        self.body(children, sink)
        return sink.text(sep)


def render(text: str, sink: Sink, inline: Callable[[str], Inline]) -> None:
    """Write an rst page into `sink` as `rst.render_rst` would, or raise Unsupported (and
    write nothing). `inline` gives a text's inline Markdown (before the writer's strip) and
    its plain text (a title's `astext()`)."""
    lines = string2lines(text, tab_width=8, convert_whitespace=True)
    if any(len(line) > LINE_LENGTH_LIMIT for line in lines):
        raise Unsupported("a line longer than docutils reads")
    tree = _Page(inline).body(lines, titles=True)
    _Render().body(tree, sink)
