"""Stand-ins for Sphinx's directives and roles, so plain docutils can read Sphinx sources.

docutils reports any directive or role it does not know as an error and turns the whole
construct into a system message, losing its text. Before each parse the source is scanned
for directive and role names; every name docutils does not know gets a generic handler
that keeps the content: code directives become literal blocks with their language,
object descriptions (`autofunction`, `py:method`, ...) a signature line plus their body,
`versionadded` and friends a labelled paragraph, `toctree`-like ones nothing, anything
else its argument and body. Roles render their text (`:func:` as code, `:ref:` plain).

docutils keeps these registrations in process-wide tables; the stand-ins only ever fill
names docutils itself leaves empty (and a few Sphinx overrides: `code-block`, `class`).
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes, utils
from docutils.parsers.rst import Directive, directives, roles
from docutils.parsers.rst.directives.misc import Class
from docutils.parsers.rst.languages import en
from docutils.statemachine import StringList

from .cli_docs import RST_DIRECTIVES, rst_for
from .includes import INCLUDES
from .sphinx import (
    CODE,
    CODE_LANG,
    DROP,
    GLOSSARY,
    HIDE_ARGUMENT,
    LABELS,
    SIGNATURE,
    VERSION,
    looks_like_code,
    role_text,
)

HIGHLIGHT = "context_highlight"  # attribute on a comment node: default language from here on


class AnyOptions(dict[str, Any]):
    """An option spec that accepts every option (Sphinx directives have many)."""

    def __missing__(self, key: str) -> Any:
        return directives.unchanged


class Generic(Directive):  # type: ignore[misc]  # docutils ships no type hints
    """One handler for every directive docutils does not know; behaviour chosen by name."""

    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = AnyOptions(name=directives.unchanged)  # non-empty: docutils skips empty specs
    has_content = True

    def run(self) -> list[Any]:
        name = self.name.lower()
        base = name.rsplit(":", 1)[-1]
        argument = self.arguments[0].strip() if self.arguments else ""
        if name in DROP or base in DROP:
            return []
        if name == "highlight" or base == "highlight":
            marker = nodes.comment()
            marker[HIGHLIGHT] = argument.split()[0] if argument else ""
            return [marker]
        if name in CODE or base in CODE:
            return [self._code(base, argument)]
        if name in VERSION:
            version, rest = (argument.split(None, 1) + ["", ""])[:2]
            return self._labelled(f"{VERSION[name]} {version}".strip(), rest)
        if name in LABELS:
            return self._labelled(LABELS[name], argument)
        if base in RST_DIRECTIVES and (generated := self._cli_reference(base, argument)) is not None:
            return generated
        if name.startswith("auto") or (argument and (":" in name or base in SIGNATURE)):
            return self._signature(argument)
        if base == "glossary":
            return self._glossary()
        out: list[Any] = []
        if argument and name not in HIDE_ARGUMENT:
            out.append(self._paragraph(argument))
        code, language = looks_like_code(list(self.content))
        if code and not argument:  # an extension's example directive (`click:example`, ...)
            text = "\n".join(self.content)
            node = nodes.literal_block(text, text)
            node["language"] = language
            return [node]
        return out + self._body()

    def _cli_reference(self, base: str, argument: str) -> list[Any] | None:
        """A CLI generator's page (`.. click::`, `.. argparse::`) from the code it names
        (parse/cli_docs.py), parsed with its own headings; None when the code is not found."""
        lines = rst_for(base, argument, self.options, getattr(self.state.document.settings, INCLUDES, None))
        if lines is None:
            return None
        memo, holder = self.state.memo, nodes.container()
        saved = memo.title_styles, memo.section_level
        memo.title_styles, memo.section_level = [], 0
        try:
            self.state.nested_parse(StringList(lines, "<generated>"), 0, holder, match_titles=True)
        finally:
            memo.title_styles, memo.section_level = saved
        return list(holder.children)

    def _paragraph(self, text: str, label: str = "") -> Any:
        """A paragraph of inline rst (the directive's argument), after an optional label."""
        para = nodes.paragraph()
        if label:
            para += nodes.Text(label + (": " if text.strip() else ""))
        if text.strip():
            inline, _messages = self.state.inline_text(" ".join(text.split()), self.lineno)
            para.extend(inline)
        return para

    def _body(self, content: StringList | None = None) -> list[Any]:
        content = self.content if content is None else content
        if not content:
            return []
        holder = nodes.container()
        self.state.nested_parse(content, self.content_offset, holder)
        return list(holder.children)

    def _glossary(self) -> list[Any]:
        """The glossary's definition lists, marked so each term becomes its own section.

        Sphinx lets an entry have several term lines; docutils would read those as a
        paragraph, so the extra terms move into the definition as an "Also:" line first.
        """
        content = self.content
        body = self._body(StringList(_single_term_entries(list(content)), content.source(0)))
        for node in body:
            if isinstance(node, nodes.definition_list):
                node["classes"].append(GLOSSARY)
        return body

    def _code(self, base: str, argument: str) -> Any:
        text = "\n".join(self.content)
        language = argument.split()[0] if argument else self.options.get("language", "") or CODE_LANG.get(base, "")
        node = nodes.literal_block(text, text)
        node["language"] = language
        return node

    def _labelled(self, label: str, text: str) -> list[Any]:
        """`Label: text` and the body; a body's first paragraph joins the label when there is no text."""
        body = self._body()
        if not text.strip() and body and isinstance(body[0], nodes.paragraph):
            body[0].insert(0, nodes.Text(label + ": "))
            return body
        return [self._paragraph(text, label), *body]

    def _signature(self, argument: str) -> list[Any]:
        out: list[Any] = []
        for line in argument.split("\n"):
            line = line.strip().rstrip("\\").strip()
            if line:
                para = nodes.paragraph()
                para += nodes.literal(line, line)
                out.append(para)
        return out + self._body()


def _single_term_entries(lines: list[str]) -> list[str]:
    """Rewrite Sphinx glossary entries with several term lines to one term each."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        terms = []
        while i < len(lines) and lines[i].strip() and not lines[i][:1].isspace():
            terms.append(lines[i])
            i += 1
        if len(terms) > 1 and i < len(lines) and lines[i][:1].isspace():
            pad = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            out.extend([terms[0], f"{pad}Also: {', '.join(t.strip() for t in terms[1:])}", ""])
        elif terms:
            out.extend(terms)
        else:
            out.append(line)
            i += 1
    return out


def generic_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[Any], list[Any]]:
    """Render any Sphinx role as its text: code-like roles in backticks, references plain."""
    shown, code = role_text(name, utils.unescape(text))
    return [nodes.literal(rawtext, shown) if code else nodes.inline(rawtext, shown)], []


_NAME = r"((?:(?!_)\w)+(?:[-._+:](?:(?!_)\w)+)*)"  # docutils' `simplename`
# A directive at a line's start, searched for in "\n" + the text: from its newline, a literal
# the regex engine skips to (a `^` in multi-line mode is tried at every position: 3x slower).
_DIRECTIVE = re.compile(r"\n[ \t]*\.\.[ \t]+" + _NAME + r"[ \t]*::(?=\s|$)", re.M)
# `:name:` before a backquote (not after a word) or after one (a suffix role). The leading
# `:` comes before the look-behinds so the regex engine can skip to each colon: with the
# look-behinds first it tried every position of the page (about half a second of CPU on Django's docs).
_ROLE = re.compile(r":(?:(?<![\w`]:)" + _NAME + r":(?=`)|(?<=`:)" + _NAME + ":)")
_ALWAYS = ("code-block", "sourcecode", "code", "class", "highlight", "seealso", "versionadded",
           "versionchanged", "deprecated", "toctree", "function", "method")


def _known_directives() -> set[str]:
    return set(directives._directive_registry) | set(en.directives)


def _known_roles() -> set[str]:
    return set(roles._role_registry) | set(en.roles)


_docutils_directives: set[str] = set()
_docutils_roles: set[str] = set()


def register_for(text: str) -> None:
    """Give every directive and role named in `text` that docutils lacks a generic handler."""
    if not _docutils_directives:
        _docutils_directives.update(_known_directives())
        _docutils_roles.update(_known_roles())
        for name in _ALWAYS:
            directives.register_directive(name, Generic)
        directives.register_directive("rst-class", Class)
    for m in _DIRECTIVE.finditer("\n" + text):
        name = m.group(1).lower()
        if name not in _docutils_directives and name not in directives._directives:
            directives.register_directive(name, Generic)
    for m in _ROLE.finditer(text):
        name = (m.group(1) or m.group(2)).lower()
        if name not in _docutils_roles and name not in roles._roles:
            roles.register_local_role(name, generic_role)
