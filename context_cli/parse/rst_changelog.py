"""The `changelog` Sphinx extension's directives (SQLAlchemy, Alembic, Mako write their release
notes with it): one section per release, titled by its version.

    .. changelog::
        :version: 2.0.58
        :released: November 16, 2026

        .. change::
            :tags: bug, orm
            :tickets: 10936

            Fixed issue where ...

The generic stand-in would keep the text but drop the options, and so the version: every
release's notes would run together under the page title. Here each `changelog` becomes a section
titled by its `:version:` (so a question about a version finds its section), and each `change`
its body led by its tags and followed by its tickets, as the rendered pages show them.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive, directives

from .rst_sphinx import AnyOptions


class Changelog(Directive):  # type: ignore[misc]  # docutils ships no type hints
    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = AnyOptions(version=directives.unchanged)

    def run(self) -> list[Any]:
        version = " ".join((self.options.get("version") or "").split())
        released = " ".join((self.options.get("released") or "").split())
        if not self.content:
            return []
        section = nodes.section()
        title = version or "Unreleased"
        section += nodes.title(title, title)
        if released:
            section += nodes.paragraph(f"Released: {released}", f"Released: {released}")
        self.state.nested_parse(self.content, self.content_offset, section)
        return [section]


class Change(Directive):  # type: ignore[misc]
    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = AnyOptions(tags=directives.unchanged)

    def run(self) -> list[Any]:
        holder = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, holder)
        body = list(holder.children)
        tags = " ".join(f"[{t.strip()}]" for t in (self.options.get("tags") or "").split(",") if t.strip())
        if tags and body and isinstance(body[0], nodes.paragraph):
            body[0].insert(0, nodes.Text(tags + " "))
        elif tags:
            body.insert(0, nodes.paragraph(tags, tags))
        tickets = ", ".join(f"#{t.strip()}" for t in (self.options.get("tickets") or "").split(",") if t.strip())
        if tickets:
            body.append(nodes.paragraph(f"References: {tickets}", f"References: {tickets}"))
        return body
