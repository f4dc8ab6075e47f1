"""`.. include::` and `.. literalinclude::` for the rst reader, read through `Includes`.

docutils' own `include` reads any path on the machine, so file insertion stays off in its
settings; these directives take its place and read only what the page's `Includes` allows
(inside the source root, within a budget). Without one (a web page, a text given alone) they
leave nothing, as before. Paths are taken as Sphinx takes them: relative to the file that names
them, else to the page being read; `/x` from the Sphinx source folder (where `conf.py` is);
`<isonum.txt>` from docutils' standard includes. An included `.md` file (Sphinx with MyST) is
read as Markdown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes, statemachine
from docutils.parsers.rst import Directive, directives, states

from .includes import INCLUDES as INCLUDES  # (re-exported: the rst reader sets it)
from .includes import Includes
from .literal import language_of, select
from .md_include import expand
from .rst_sphinx import AnyOptions, register_for

_STANDARD = Path(states.__file__).parent / "include"


class MarkdownText(nodes.Element):  # type: ignore[misc]  # docutils ships no type hints
    """Markdown included into an rst page: the writer renders it with the Markdown reader."""


class _Including(Directive):  # type: ignore[misc]
    required_arguments = 1
    final_argument_whitespace = True
    option_spec = AnyOptions(name=directives.unchanged)

    def includes(self) -> Includes | None:
        found = getattr(self.state.document.settings, INCLUDES, None)
        return found if isinstance(found, Includes) else None

    def current(self, includes: Includes) -> str:
        """The root-relative file this directive stands in (the page, or a file it included)."""
        source = self.state_machine.input_lines.source(self.lineno - self.state_machine.input_offset - 1)
        return source if isinstance(source, str) and not source.startswith("<") else includes.page

    def target(self, includes: Includes) -> tuple[str, str] | None:
        """(root-relative path, text) of the argument, or None when it may not or cannot be read.

        `NEWS (links).rst`, which jaraco's rst.linker writes at build time from `NEWS.rst`
        (keyring, setuptools and the other projects of that skeleton), is read from `NEWS.rst`.
        """
        target = directives.path(self.arguments[0])
        current = self.current(includes)
        base = includes.source_folder() if target.startswith("/") else None
        rel = None
        for name in dict.fromkeys([target, target.replace(" (links)", "")]):
            rel = includes.find(name, current, base=base) or includes.find(name, includes.page, base=base)
            if rel is not None:
                break
        if rel is None or not includes.enter(rel, current):
            return None
        text = includes.read(rel)
        return None if text is None else (rel, text)


class Include(_Including):
    """rst (or Markdown) from another file, parsed in place; literal or code on request."""

    def run(self) -> list[Any]:
        name = directives.path(self.arguments[0])
        includes = self.includes()
        if name.startswith("<") and name.endswith(">"):
            found = _standard(name[1:-1])
        else:
            found = self.target(includes) if includes is not None else None
        if found is None:
            return []
        rel, whole = found
        text = _clip(whole, self.options)
        if text is None:
            return []
        if "literal" in self.options or "code" in self.options:
            node = nodes.literal_block(text, text)
            node["language"] = (self.options.get("code") or "").strip() or ("" if "literal" in self.options
                                                                          else language_of(rel))
            return [node]
        if rel.lower().endswith((".md", ".markdown")) or "myst" in self.options.get("parser", ""):
            node = MarkdownText()
            node["text"] = expand(text, includes, rel) if includes is not None else text
            return [node]
        register_for(text)
        tab_width = self.options.get("tab-width", "8")
        lines = statemachine.string2lines(text, int(tab_width) if str(tab_width).isdigit() else 8,
                                          convert_whitespace=True)
        self.state_machine.insert_input(lines, rel)
        return []


class LiteralInclude(_Including):
    """Sphinx's `literalinclude`: the selected lines of a file as a code block."""

    def run(self) -> list[Any]:
        includes = self.includes()
        found = self.target(includes) if includes is not None else None
        if found is None:
            return []
        rel, text = found
        code = select(text, self.options)
        if code is None or not code.strip():
            return []
        node = nodes.literal_block(code, code)
        node["language"] = (self.options.get("language") or "").strip() or language_of(rel)
        caption = (self.options.get("caption") or "").strip()
        return [nodes.paragraph(caption, caption), node] if caption else [node]


def _standard(name: str) -> tuple[str, str] | None:
    """One of docutils' standard includes (`<isonum.txt>`: character substitutions)."""
    path = _STANDARD / name
    if "/" in name or "\\" in name or not path.is_file():
        return None
    return f"<{name}>", path.read_text("utf-8")


def _clip(text: str, options: dict[str, Any]) -> str | None:
    """docutils' `start-line`/`end-line`/`start-after`/`end-before`; None when a text is missing."""
    start, end = options.get("start-line"), options.get("end-line")
    if start or end:
        lines = text.split("\n")
        try:
            text = "\n".join(lines[int(start or 0):int(end) if end not in (None, "") else None])
        except ValueError:
            return None
    after, before = options.get("start-after"), options.get("end-before")
    if after:
        at = text.find(after)
        if at < 0:
            return None
        text = text[at + len(after):]
    if before:
        at = text.find(before)
        if at < 0:
            return None
        text = text[:at]
    return text
