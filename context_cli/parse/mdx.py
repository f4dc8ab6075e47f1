"""Line-level clean-up before markdown-it sees a page: MDX syntax and `:::` containers.

MDX is Markdown plus ESM (`import`/`export`), JSX components and `{/* */}` comments.
markdown-it would show those as raw text or swallow indented component bodies as one
HTML block, so lines that hold only JSX tags are removed here (their bodies dedented) and
ESM and comments dropped. What the components carry is kept as text: a `title`/`label`, the
name a `ParamField`/`ResponseField` documents, the tab a `TabsContent` panel belongs to,
tables written as literals in props or exports (see jsliteral.py), exported `title` and
`description`. HTML tables and multi-line `<hN>` headings go to markdown-it whole; live
examples rendered from JSX (`<Example>{...}</Example>`) are left out. Plain `.md` files get
the conservative part: Docusaurus-style ESM lines, capitalised components, `:::` and one-line
`{/* */}` comments.
Code fences pass through untouched except for the dedent of their component.
"""

from __future__ import annotations

import bisect
import json
import re

from .jsliteral import literal_rows, tab_labels

_FENCE = re.compile(r"\s*(`{3,}|~{3,})")
_ESM_STRICT = re.compile(  # `import x from "y"`, `import "y"`, `export const ...` (what .md may hold)
    r"""(?:import\s.*\sfrom\s+['"][^'"]+['"];?|import\s+['"][^'"]+['"];?"""
    r"""|export\s+(?:const|let|var|function|default|\{|\*|async|class)\b.*)\s*$"""
)
_ESM_START = re.compile(r"(?:import|export)\s")
_COLON_FENCE = re.compile(r"\s*(:{3,})(\{[\w:.+-]+\}.*)$")
_TARGET = re.compile(r"\([\w.:/-]+\)=\s*$")
_CONTAINER = re.compile(r"\s*:{3,}\s*(\{[^}]*\}\s*)?([\w-]*)\s*(.*?)\s*$")
_ADMONITIONS = {"note", "tip", "info", "warning", "danger", "caution", "important", "success", "error", "hint"}
_LABEL_PROPS = ("title", "label")
_FIELD_PROPS = ("name", "path", "query", "body", "header")  # what names a param or field entry
# `required`, `required="true"`, `required={true}`; and a literal default in braces (`default={false}`)
_REQUIRED = re.compile(r"""(?<![\w-])required(?:\s*=\s*(?:"true"|'true'|\{\s*true\s*\}))?(?![\w=-])""")
_BARE_DEFAULT = re.compile(r"(?<![\w-])default\s*=\s*\{\s*([\w.+-]+)\s*\}")
_TRIGGER = re.compile(r"""<(\w*Trigger)\b[^<>]*?\bvalue=["']([^"']+)["'][^<>]*>([^<>{}]{1,80})</\1>""")
_TAB = re.compile(r"Tabs?(?![a-z])")  # Tabs, TabItem, TabsContent, CodeTabs; not Table
_PANEL = re.compile(r"""<(?=[A-Z])(?!\w*Trigger\b)\w*?Tabs?(?![a-z])\w*[^<>]*?\bvalue=["']([^"']+)["']""")
_JSX_SPACE = re.compile(r"""\{\s*(?:"\s*"|'\s*')\s*\}""")  # `{" "}`
_FRAGMENT = re.compile(r"\{\s*<>|</>\s*\}|</?>")  # `{<>text</>}`
_INLINE_CODE = re.compile(r"(`+[^`]*`+)")
_LINE_COMMENT = re.compile(r"\{/\*.*?\*/\}")
_EXPORTED_ARRAY = re.compile(r"export\s+const\s+[\w$]+\s*=\s*\[")
_EXPRESSION_BRACE = re.compile(r"\s*[{}]\s*$")
_DEMO = re.compile(r"Example|Demo|Preview|Playground|Sandbox")  # components that render live UI
_MAX_BLOCK_LINES = 2000  # how far a live example or an HTML table may reach
_TABLE_OPEN = re.compile(r"\s*<table[\s>]")
_HEADING_OPEN = re.compile(r"\s*<h([1-6])(?:\s[^<>]*)?>\s*$")  # `<h2 id="x">` alone on its line
_TAG_TEXT = re.compile(r"<[^<>]*>")
_MAX_HEADING_LINES = 8
_EXPORTED = re.compile(
    r"""(?:export\s+const\s+|[{,]\s*)(title|description)\s*[:=]\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)"""
)
_MAX_TAG_LINES = 300  # a component's props may hold a long table


def preprocess(text: str, *, mdx: bool) -> str:
    """Strip MDX and container syntax outside code fences; see the module docstring."""
    out: list[str] = []
    lines = text.split("\n")
    stack: list[str] = []  # open components (names), innermost last
    base: int | None = 0  # indentation removed from lines inside components
    fence = ""
    in_comment = False
    prev_blank = True
    i = _front_matter_end(lines)
    out.extend(lines[:i])
    exported: dict[str, str] = {}
    tabs = _tab_names(text) if mdx else {}
    closers = _Closers(lines if mdx else [])
    while i < len(lines):
        line = lines[i]
        i += 1
        if fence:
            out.append(_dedent(line, base or 0))
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            continue
        if mdx:
            line, in_comment = _strip_comments(line, in_comment)
        elif "{/*" in line:
            line = _strip_line_comments(line)
        opened = _FENCE.match(line)
        if opened:
            if base is None:
                base = _indent_of(line)
            fence = opened.group(1)
            out.append(_dedent(line, base))
            prev_blank = False
            continue
        colon = _COLON_FENCE.match(line)
        if colon:  # MyST `:::{note}` ... `:::` becomes a backtick fence the MyST reader knows
            i = _colon_fence(lines, i, colon, out)
            prev_blank = True
            continue
        if _TARGET.match(line):  # MyST `(label)=` targets
            out.append("")
            continue
        if not stack and prev_blank and _is_esm(line, mdx):
            end = _skip_esm(lines, i - 1) if mdx else i
            statement = "\n".join(lines[i - 1:end]) if mdx else ""
            exported.update(_exported_meta(statement))
            i = end
            out.append("")
            out.extend(_exported_rows(statement))
            continue
        if mdx and _EXPRESSION_BRACE.match(line):  # `{` / `}` around a JSX expression
            if stack and _DEMO.search(stack[-1]):
                i = _demo_end(lines, i - 1, closers, stack[-1])
            out.append("")
            continue
        prev_blank = not line.strip()
        if prev_blank:
            out.append("")
            continue
        heading = _HEADING_OPEN.match(line) if mdx else None
        if heading:
            i, found = _html_heading(lines, i - 1, int(heading.group(1)))
            out.extend(found)
            prev_blank = True
            continue
        if mdx and _TABLE_OPEN.match(line):
            i, table = _html_table(lines, i - 1, closers)
            out.extend(table)
            prev_blank = True
            continue
        tags, consumed = _tag_line(line, lines, i - 1, mdx)
        if tags is not None:
            i = i - 1 + consumed
            out.extend(_apply_tags(tags, stack, tabs))
            base = None if stack else 0
            prev_blank = True
            continue
        container = _CONTAINER.match(line)
        if container and (container.group(2) or not container.group(3)):
            out.extend(["", _container_label(container.group(2), container.group(3)), ""])
            prev_blank = True
            continue
        if tabs and _is_named_trigger(line, tabs):
            out.append("")
            continue
        if base is None:
            base = _indent_of(line)
        out.append(_dedent(_jsx_text(line) if mdx else line, base))
    return "\n".join(_with_front_matter(out, exported))


class _Closers:
    """Where blocks close on a page (`</table>`, a lone `}` per indentation), found once, so
    finding each block's end is a bisection, not a scan: many unclosed openers stay linear."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.tags: dict[str, list[int]] = {}  # component name -> lines that close it
        self.tables = [j for j, line in enumerate(lines) if "</table>" in line]
        self.braces: dict[int, list[int]] = {}
        for j, line in enumerate(lines):
            if line.strip() == "}":
                self.braces.setdefault(_indent_of(line), []).append(j)

    def tag(self, name: str) -> list[int]:
        if name not in self.tags:
            close = f"</{name}>"
            self.tags[name] = [j for j, line in enumerate(self.lines) if close in line]
        return self.tags[name]

    @staticmethod
    def first(found: list[int], start: int) -> int | None:
        """The first of `found` at or after `start`, if it is within reach."""
        k = bisect.bisect_left(found, start)
        return found[k] if k < len(found) and found[k] < start + _MAX_BLOCK_LINES else None


def _demo_end(lines: list[str], start: int, closers: _Closers, component: str) -> int:
    """Index after the JSX expression `{` ... `}` opened on line `start` inside a live example.

    Tailwind-style pages render each example from JSX (`<Example>{<div>...</div>}</Example>`)
    and then show the same markup as code. Rendered, it is a picture; as text, the demo's
    made-up names, e-mails and button labels would make a section match words it is not
    about. A `{` that does not close (at its own indentation) before its component does is
    kept as it is.
    """
    opened = lines[start]
    if opened.strip() != "{":
        return start + 1
    end = closers.first(closers.braces.get(_indent_of(opened), []), start + 1)
    closed = closers.first(closers.tag(component), start + 1)
    if end is None or (closed is not None and closed < end):
        return start + 1
    return end + 1


def _html_table(lines: list[str], start: int, closers: _Closers) -> tuple[int, list[str]]:
    """An HTML `<table>` (line `start`) as one HTML block for the HTML walker, and the index
    after it. Line by line, its tags would be taken for JSX and the table would fall apart
    into one paragraph per cell. Unclosed within reach: the opening tag is dropped, as JSX."""
    end = closers.first(closers.tables, start)
    if end is None:
        return start + 1, [""]
    return end + 1, ["", *(line.strip() for line in lines[start:end + 1] if line.strip()), ""]


def _html_heading(lines: list[str], start: int, level: int) -> tuple[int, list[str]]:
    """`<h2 ...>` / text / `</h2>` over several lines as a Markdown heading, and the index
    after it: line by line, the tags would be dropped as JSX and the title left as a paragraph."""
    close = f"</h{level}>"
    for j in range(start + 1, min(len(lines), start + _MAX_HEADING_LINES)):
        if close in lines[j]:
            inner = " ".join(lines[start + 1:j] + [lines[j].split(close, 1)[0]])
            title = " ".join(_TAG_TEXT.sub("", inner).split())
            return j + 1, ["", "#" * level + " " + title, ""] if title else [""]
    return start + 1, [""]


def _exported_meta(statement: str) -> dict[str, str]:
    """`export const title = "..."` / `description`, or a Next.js `metadata = {title: ...}`.

    Many MDX sites (Tailwind-style, Next.js app router) keep a page's title and summary in
    ESM exports rather than YAML front matter; without them the page would be titled by
    its file name and lose the one sentence that says what it is about.
    """
    found: dict[str, str] = {}
    for m in _EXPORTED.finditer(statement):
        key = m.group(1)
        value = _string_literal(m.group(2))
        if value and key in ("title", "description"):
            found.setdefault(key, value)
    return found


def _exported_rows(statement: str) -> list[str]:
    """Rows of an `export const rows = [[...], ...]` table the page renders somewhere."""
    if not _EXPORTED_ARRAY.match(statement):
        return []
    rows = literal_rows(statement)
    return [*rows, ""] if rows else []


def _tab_names(text: str) -> dict[str, str]:
    """`<TabsTrigger value="cursor">Cursor</TabsTrigger>`: the name shown for each tab value
    that has a panel (`<TabsContent value="cursor">`), so the panel can say which tab its
    text belongs to. The trigger lines themselves are then dropped: the name moves next to
    its text rather than standing twice on the page."""
    panels = {m.group(1) for m in _PANEL.finditer(text)}
    names = ((m.group(2), " ".join(m.group(3).split())) for m in _TRIGGER.finditer(text))
    return {value: name for value, name in names if name and value in panels}


def _is_named_trigger(line: str, tabs: dict[str, str]) -> bool:
    m = _TRIGGER.fullmatch(line.strip())
    return bool(m and m.group(2) in tabs)


def _jsx_text(line: str) -> str:
    """Text without JSX spacing (`{" "}`) and fragments (`{<>...</>}`), inline code untouched."""
    if "{" not in line and "<>" not in line and "</>" not in line:
        return line
    parts = _INLINE_CODE.split(line)
    for k in range(0, len(parts), 2):
        parts[k] = _FRAGMENT.sub("", _JSX_SPACE.sub(" ", parts[k]))
    return "".join(parts)


def _with_front_matter(out: list[str], exported: dict[str, str]) -> list[str]:
    """Add exported title/description to the page's YAML front matter (keys it lacks)."""
    if not exported:
        return out
    end = _front_matter_end(out)
    present = {line.split(":", 1)[0].strip() for line in out[1:end - 1]} if end else set()
    extra = [f"{k}: {json.dumps(v)}" for k, v in exported.items() if k not in present]
    if not extra:
        return out
    if end:
        return out[:end - 1] + extra + out[end - 1:]
    return ["---", *extra, "---", *out]


def _string_literal(text: str) -> str:
    """The value of a JS string literal ("...", '...', or a backtick one without `${`)."""
    text = text.strip()
    if len(text) < 2 or text[0] not in "\"'`" or text[-1] != text[0]:
        return ""
    inner = text[1:-1]
    if text[0] == "`" and "${" in inner:
        return ""
    return inner.replace("\\" + text[0], text[0]).strip()


def _colon_fence(lines: list[str], i: int, opened: re.Match[str], out: list[str]) -> int:
    """Copy a colon fence (opened on line i-1) as a backtick fence; return the index after it.

    The backtick fence is longer than any Markdown code fence it may hold (and one longer
    per extra colon, so nested colon fences keep nesting once re-read).
    """
    colons = opened.group(1)
    ticks = "`" * (len(colons) + 10)
    indent_ = opened.group(0)[: len(opened.group(0)) - len(opened.group(0).lstrip())]
    out.append(f"{indent_}{ticks}{opened.group(2)}")
    j = i
    while j < len(lines) and lines[j].strip() != colons:
        out.append(lines[j])
        j += 1
    out.append(f"{indent_}{ticks}")
    return j + 1


def _front_matter_end(lines: list[str]) -> int:
    """Number of lines of a leading `---` YAML front matter block (0 when there is none)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for j in range(1, min(len(lines), 500)):
        if lines[j].rstrip() in ("---", "..."):
            return j + 1
    return 0


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _dedent(line: str, amount: int) -> str:
    if amount <= 0:
        return line
    return line[min(amount, _indent_of(line)):]


def _strip_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """Remove `{/* ... */}` (possibly spanning lines) from a line."""
    result = ""
    while line:
        if in_comment:
            end = line.find("*/}")
            if end < 0:
                return result, True
            line = line[end + 3:]
            in_comment = False
        else:
            start = line.find("{/*")
            if start < 0:
                return result + line, False
            result += line[:start]
            line = line[start + 3:]
            in_comment = True
    return result, in_comment


def _strip_line_comments(line: str) -> str:
    """A `.md` page that its site renders as MDX (react.dev) writes heading ids as comments,
    `## Parameters {/*parameters*/}`: one-line `{/* */}` outside inline code are removed."""
    parts = _INLINE_CODE.split(line)
    return "".join(p if i % 2 else _LINE_COMMENT.sub("", p) for i, p in enumerate(parts))


def _is_esm(line: str, mdx: bool) -> bool:
    """MDX reads any top-level paragraph starting with import/export as ESM; .md needs the full form."""
    if mdx:
        return bool(_ESM_START.match(line))
    return bool(_ESM_STRICT.match(line))


def _skip_esm(lines: list[str], start: int) -> int:
    """Index after an import/export statement that may span lines (until braces close)."""
    depth = 0
    for j in range(start, min(len(lines), start + 200)):
        line = lines[j]
        depth += line.count("{") + line.count("(") + line.count("[")
        depth -= line.count("}") + line.count(")") + line.count("]")
        if depth <= 0 and (j > start or not line.rstrip().endswith(("=", ","))):
            return j + 1
        if not line.strip() and depth <= 0:
            return j + 1
    return start + 1


_NAME = re.compile(r"[A-Za-z][\w.:-]*")


def _tag_line(
    first: str, lines: list[str], start: int, mdx: bool
) -> tuple[list[tuple[str, str, str]] | None, int]:
    """If `first` (line `start`) and maybe the next lines hold only JSX tags, return them
    and how many lines they use.

    Each tag is (kind, name, props) with kind "open", "close" or "self". A tag may span
    lines (props on their own lines); at most `_MAX_TAG_LINES` lines are considered. In `.md` files an
    indented line is code, never a component.
    """
    text = first.strip()
    if not text.startswith("<") or (not mdx and _indent_of(first) >= 4):
        return None, 1
    used = 1
    while True:
        tags, cut_off = _parse_tags(text)
        if tags is not None:
            if tags and (mdx or all(name[:1].isupper() or name == "" for _, name, _ in tags)):
                return tags, used
            return None, 1
        if not cut_off or used >= _MAX_TAG_LINES or start + used >= len(lines):
            return None, 1
        text += "\n" + lines[start + used].strip()
        used += 1


def _parse_tags(text: str) -> tuple[list[tuple[str, str, str]] | None, bool]:
    """Parse a string made only of tags: (tags, False); (None, True) when the last tag is
    cut off (it may continue on the next line); (None, False) when it is not all tags."""
    tags: list[tuple[str, str, str]] = []
    pos = 0
    n = len(text)
    while pos < n:
        while pos < n and text[pos].isspace():
            pos += 1
        if pos >= n:
            break
        if text[pos] != "<":
            return None, False
        pos += 1
        closing = pos < n and text[pos] == "/"
        if closing:
            pos += 1
        m = _NAME.match(text, pos)
        name = m.group() if m else ""
        if not m and not (pos < n and text[pos] == ">"):
            return None, pos >= n  # `<` followed by something that is not a tag (`< 3`, `<-`)
        pos = m.end() if m else pos
        props_start = pos
        quote = ""
        depth = 0
        while pos < n:
            ch = text[pos]
            if quote:
                if ch == quote:
                    quote = ""
            elif ch in "\"'`":
                quote = ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == ">" and depth <= 0:
                break
            pos += 1
        if pos >= n:
            return None, True
        props = text[props_start:pos]
        pos += 1
        if closing:
            tags.append(("close", name, ""))
        elif props.rstrip().endswith("/"):
            tags.append(("self", name, props))
        else:
            tags.append(("open", name, props))
    return tags, False


_PROP = re.compile(r"""\b(\w+)\s*=\s*(?:"([^"]*)"|'([^']*)'|\{\s*["'`]([^"'`]*)["'`]\s*\})""")


def _apply_tags(tags: list[tuple[str, str, str]], stack: list[str], tabs: dict[str, str]) -> list[str]:
    """Track open components; return the lines that replace the tags (labels, rows, blanks)."""
    out = [""]
    for kind, name, props in tags:
        if kind in ("open", "self"):
            if kind == "open":
                stack.append(name)
            is_tab = bool(_TAB.search(name))
            if is_tab:  # a tab's props are configuration; `values` may name the tabs
                tabs.update(tab_labels(props))
            label = _label(name, props, opened=kind == "open", tabs=tabs)
            if label:
                out.extend([label, ""])
            rows = [] if is_tab else literal_rows(props)
            if rows:
                out.extend([*rows, ""])
        elif kind == "close":
            if name in stack:
                while stack and stack.pop() != name:
                    pass
            elif not name and stack:
                stack.pop()
    return out


def _label(name: str, props: str, *, opened: bool, tabs: dict[str, str]) -> str:
    """The text that names a component's content, plus its description when it has one.

    A card's or tab's `title`/`label`; for a component wrapping content (capitalised, so
    not an HTML element of a live demo) also the entry it documents (`<ParamField
    path="userId" type="string" required>` -> `userId (string, required)`) or the tab a
    `<TabsContent value="...">` belongs to.
    """
    found = {m.group(1): next(g for g in m.groups()[1:] if g is not None) for m in _PROP.finditer(props)}
    label = next((found[k].strip() for k in _LABEL_PROPS if found.get(k, "").strip()), "")
    if not label and opened and name[:1].isupper():
        field = next((found[k].strip() for k in _FIELD_PROPS if found.get(k, "").strip()), "")
        if field:
            details = [found.get("type", "").strip(), "required" if _REQUIRED.search(props) else ""]
            bare = _BARE_DEFAULT.search(props)
            default = found.get("default", "").strip() or (bare.group(1) if bare else "")
            if default:
                details.append(f"default: {default}")
            details = [d for d in details if d]
            label = f"{field} ({', '.join(details)})" if details else field
        elif _TAB.search(name) and found.get("value", "").strip():
            label = tabs.get(found["value"].strip(), found["value"].strip())
    description = found.get("description", "").strip()
    return f"{label}: {description}" if label and description else label or description


def _container_label(kind: str, title: str) -> str:
    """`:::note Title` -> `Note: Title`; closing `:::` and plain `::: details` -> a blank line."""
    kind = kind.lower()
    title = title.strip().strip("[]").strip()
    if kind in _ADMONITIONS:
        return f"{kind.capitalize()}: {title}" if title else f"{kind.capitalize()}:"
    return title
