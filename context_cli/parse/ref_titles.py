"""Bare Sphinx cross-references shown as their section's title, as Sphinx renders them.

`:ref:`password-validation`` (reST) or {ref}`password-validation` (MyST) names a label, and
Sphinx shows the title of the section the label stands before: "Password validation". Our
parsers read one page at a time and would show the label itself, a slug the reader never
sees in the rendered docs (434 such references in Django 5.1's docs). The labels are the
tree's, so the builder reads them from every page first (`RefTitles.of_pages`) and then writes
each bare reference of a page as the titled form `:ref:`Password validation
<password-validation>``, which every parser already shows as its title (`titled`). The
rewrite is part of the page's bytes, so a page whose referenced title changed is rebuilt
like any changed page.

A label found before no heading (a figure, a table, a label in another project) keeps its
bare reference, shown as the label, as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from . import markup
from .code_markup import code_stretches

# `.. _label:` (reST; the label may be quoted in backquotes) and `(label)=` (MyST).
_RST_LABEL = re.compile(r"\.\. _(`[^`]+`|[^:`\s][^:]*):\s*$")
_MYST_LABEL = re.compile(r"\(([^()\s]+)\)=\s*$")
_MYST_HEADING = re.compile(r"#{1,6}[ \t]+(.*\S)")  # (its closing #s dropped apart: `_heading`)
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1{2,}\s*$")
# A bare reference: no `title <label>` form, nothing that would end the role inside.
_BARE_REF = re.compile(rb"(:ref:|\{ref\})`([^`<>\n]+)`")
# Inline markup a title may carry, which a role's text cannot: roles, backquotes, emphasis.
_ROLE_PREFIX = re.compile(r"(?::[\w.+-]+:|\{[\w.+-]+\})(?=`)")
_MARKUP = re.compile(r"`+|\*+|\\(?=\S)")
_MAX_TITLE = 200
MIN_GROWTH = 64 << 10  # bytes titles may add to any page, however small


class RefTitles:
    """The tree's section labels and the titles they stand before (label lower-cased, as
    Sphinx compares them)."""

    def __init__(self, titles: dict[str, str]) -> None:
        self.titles = titles

    @classmethod
    def of_pages(cls, pages: Iterable[tuple[str, bytes]]) -> RefTitles:
        """The labels of every reST and Markdown page (`parse.markup`) of a tree in UTF-8; a
        label defined twice (a translation beside the original) keeps its first page's title."""
        titles: dict[str, str] = {}
        for rel, data in pages:
            written = markup(rel)
            read = _rst_labels if written == "rst" and b".. _" in data else \
                _myst_labels if written == "md" and b")=" in data else None
            if read is not None and (text := _utf8(data)) is not None:
                for label, title in read(text).items():
                    titles.setdefault(label, title)
        return cls(titles)

    def titled(self, rel: str, data: bytes) -> bytes:
        """`data`, page `rel`, with each bare reference to a known label written with its title."""
        if not self.titles or (b":ref:`" not in data and b"{ref}`" not in data) or _utf8(data) is None:
            return data  # (a page in another encoding would mix UTF-8 titles into it)

        def title(m: re.Match[bytes]) -> bytes | None:
            found = self.titles.get(m.group(2).decode("utf-8", "replace").strip().lower())
            return m.group(1) + b"`" + found.encode() + b" <" + m.group(2) + b">`" if found else None

        return sub_within_growth(_BARE_REF, title, data, rel)


def sub_within_growth(pattern: re.Pattern[bytes], rewrite: Callable[[re.Match[bytes]], bytes | None],
                      data: bytes, rel: str) -> bytes:
    """`pattern.sub(rewrite, data)` outside the code of page `rel` (`parse.code_markup`: a page
    showing the markup itself keeps it; read only once a match would change), a match left as
    it is where `rewrite` gives None, and the page grown by at most max(its size, MIN_GROWTH)
    bytes in all: a page of a million tiny roles, each given a long title, grows at most twofold
    (the rewrites past that are not made)."""
    room = max(len(data), MIN_GROWTH)
    code: list[tuple[int, int]] | None = None
    out, at, k = [], 0, 0
    for m in pattern.finditer(data):
        new = rewrite(m)
        if new is None or len(new) - len(m.group(0)) > room:
            continue
        code = code_stretches(rel, data) if code is None else code
        while k < len(code) and code[k][1] <= m.start():
            k += 1
        if k < len(code) and code[k][0] < m.end():
            continue
        room -= len(new) - len(m.group(0))
        out += [data[at:m.start()], new]
        at = m.end()
    return b"".join([*out, data[at:]]) if out else data


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _rst_labels(text: str) -> dict[str, str]:
    """The labels of a reST page that stand before a section title (stacked labels share it)."""
    lines = text.splitlines()
    out: dict[str, str] = {}
    pending: list[str] = []
    for i, line in enumerate(lines):
        if m := _RST_LABEL.match(line):
            pending.append(m.group(1).strip("`"))
        elif pending and line.strip():
            found = _rst_title(lines, i)
            if found:
                for label in pending:
                    out.setdefault(label.lower(), found)
            pending = []
    return out


def _rst_title(lines: list[str], i: int) -> str | None:
    """The section title that starts at line `i` (with or without an overline), or None."""
    line = lines[i]
    if _ADORNMENT.match(line) and i + 2 < len(lines) and _ADORNMENT.match(lines[i + 2]) \
            and lines[i + 1].strip() and not _ADORNMENT.match(lines[i + 1]):
        return _clean(lines[i + 1])
    if i + 1 < len(lines) and _ADORNMENT.match(lines[i + 1]) and not line.startswith((" ", "\t", "..")) \
            and not _ADORNMENT.match(line):
        return _clean(line)
    return None


def _myst_labels(text: str) -> dict[str, str]:
    """The `(label)=` targets of a MyST page that stand before a heading."""
    out: dict[str, str] = {}
    pending: list[str] = []
    for line in text.splitlines():
        m = _MYST_LABEL.match(line)
        if m:
            pending.append(m.group(1))
        elif line.strip():
            heading = _MYST_HEADING.match(line) if pending else None
            found = _clean(_heading(heading.group(1))) if heading else None
            if found:
                for label in pending:
                    out.setdefault(label.lower(), found)
            pending = []
    return out


def _heading(text: str) -> str:
    """An ATX heading's text without its closing run of #s (one regex for both backtracked
    cubically on a long line of spaces)."""
    bare = text.rstrip("#")
    return bare.rstrip() if bare != text and (not bare or bare[-1].isspace()) else text


def _clean(title: str) -> str | None:
    """A title as a role's text can hold it: its inline markup dropped, one line, bounded."""
    shown = " ".join(_MARKUP.sub("", _ROLE_PREFIX.sub("", title)).split())
    shown = shown.replace("<", "").replace(">", "")
    return shown if shown and len(shown) <= _MAX_TITLE else None
