"""Sphinx autodoc and mkdocstrings directives filled from the release's API entries.

`.. autoclass:: Signer` (with `:members:`), `.. automodule::`, `.. autofunction::` and the
other `auto*` directives in reST, and `::: pkg.module` in Markdown (mkdocstrings), name code
that only Sphinx or mkdocs would import to document. The build has that code's entries, so
each directive is replaced, before the page is parsed, by the entries it names written in
the page's own markup: a page of bare directives comes out as a complete API page. A
directive whose target is not an entry is left as it is.

The expander also notes which entries each page shows (`shown`): those it filled in, and
those a hand-written Sphinx object directive describes (`.. function:: get_object_or_404(...)`,
`.. method:: Paginator.get_page`, under the page's `.. module::` and `.. class::`). The
build gives such an entry no reference section of its own: the docs' section is its home.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from ..parse.sphinx_conf import SphinxConf
from ..symbol import Symbol
from .pages import entry_text

_AUTO = re.compile(r"^([ \t]*)\.\.[ \t]+auto(module|class|function|method|attribute|data|exception|property|"
                   r"decorator|exception|pydantic_model|pydantic_settings)::[ \t]*(\S+)[ \t]*$", re.MULTILINE)
_CURRENT = re.compile(r"^[ \t]*\.\.[ \t]+(?:py:)?(?:current)?module::[ \t]*(\S+)[ \t]*$", re.MULTILINE)
# (From a newline put before the page: tried at line starts only, where `^` is tried at every character.)
_OBJECT = re.compile(r"\n([ \t]*)\.\.[ \t]+(?:py:)?(function|class|method|attribute|data|exception|property|"
                     r"decorator|classmethod|staticmethod|module|currentmodule)::[ \t]*([\w.]+)")
_MKDOCS = re.compile(r"^([ \t]*):::[ \t]+([\w.]+)[ \t]*$", re.MULTILINE)
_OPTION = re.compile(r"^[ \t]+:([\w-]+):(.*)$")
_RULE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")  # a section title's underline (or overline)
_TICK = re.compile(r"(?<![`\\])`([^`\n]+)`(?!`)")
MAX_PAGE_BYTES = 4 * 1024 * 1024  # an expanded page stops growing here (its remaining directives stay bare)


class Expander:
    """The entries of one release, by every public name, ready to fill directives.

    `symbols` may be a callable: it is called (the API read in the background is waited for)
    only when a page has a directive to fill, or when `shown` is asked for.
    """

    def __init__(self, symbols: Iterable[Symbol] | Callable[[], Iterable[Symbol]]) -> None:
        self._symbols = symbols
        self._by_name: dict[str, Symbol] | None = None
        self.children: dict[str, list[Symbol]] = {}
        self._described: list[tuple[str, str, str | None]] = []  # (page, target, module) in the order met
        self._homes: list[tuple[str, str]] = []  # (page, entry) for entries a fill passed over: `_home`
        self.defaults: dict[str, str] = {}  # conf.py's default options of every auto* directive (`use_conf`)

    def use_conf(self, conf: SphinxConf) -> None:
        """Take the tree's `autodoc_default_options` (or the older `autodoc_default_flags`) as
        Sphinx does: an option a directive leaves out is the default's, unless the directive
        negates it (`:no-members:`); True or None mean the bare option, False none. So
        `{"members": True}` fills a bare `.. autoclass::` with its members."""
        options, flags = conf.setting("autodoc_default_options"), conf.setting("autodoc_default_flags")
        found = dict.fromkeys((f for f in flags if isinstance(f, str)), "") if isinstance(flags, list) else {}
        if isinstance(options, dict):
            found.update({k: "" if v is True or v is None else v for k, v in options.items()
                          if isinstance(k, str) and (v is True or v is None or isinstance(v, str))})
        self.defaults = found

    @property
    def by_name(self) -> dict[str, Symbol]:
        if self._by_name is None:
            self._by_name = {}
            for s in self._symbols() if callable(self._symbols) else self._symbols:
                for n in s.names:
                    self._by_name.setdefault(n, s)
                if s.kind != "module":
                    self.children.setdefault(s.name.rsplit(".", 1)[0], []).append(s)
        return self._by_name

    @property
    def shown(self) -> dict[str, str]:
        """Entry name -> the docs page that shows it (the first that does), else the page a
        fill passed it over on (`_home`)."""
        out: dict[str, str] = {}
        for rel, target, module in self._described:
            symbol = self.find(target, module)
            if symbol is not None:
                out.setdefault(symbol.name, rel)
        for rel, name in self._homes:
            out.setdefault(name, rel)
        return out

    def expand(self, rel: str, data: bytes) -> bytes:
        """`data` with its directives filled (unchanged when it has none this can fill); the
        entries the page shows are noted in `shown`."""
        if rel.endswith((".rst", ".rest", ".txt")) and b".. " in data:
            text = data.decode("utf-8", "replace")
            self._describe(rel, text)
            if ".. auto" in text:
                return self._rst(rel, text).encode("utf-8")
        if rel.endswith((".md", ".markdown")) and b":::" in data:
            return self._markdown(rel, data.decode("utf-8", "replace")).encode("utf-8")
        return data

    def find(self, target: str, module: str | None) -> Symbol | None:
        target = target.strip().lstrip("~")
        return self.by_name.get(target) or (self.by_name.get(f"{module}.{target}") if module else None)

    def members(self, s: Symbol) -> list[Symbol]:
        """(Filled with `by_name`, which `find` has built by then.)"""
        return self.children.get(s.name, [])

    def _show(self, symbol: Symbol, rel: str) -> None:
        self._described.append((rel, symbol.name, None))

    def _home(self, s: Symbol, rel: str) -> None:
        """`s` and its members, passed over by a fill (no docstring), have the page they would
        have been on as their home: the `symbols` table points there, not nowhere, unless a
        page shows them."""
        self._homes.append((rel, s.name))
        for child in self.members(s):
            self._home(child, rel)

    def _describe(self, rel: str, text: str) -> None:
        """Note the targets of the page's own Sphinx object directives (looked up in `shown`,
        once the entries are there); a directive indented under `.. class:: X` names a
        member of X."""
        module: str | None = None
        classes: list[tuple[int, str]] = []  # (indent, class name) of the enclosing class directives
        for m in _OBJECT.finditer("\n" + text):
            indent, kind, target = len(m.group(1).expandtabs()), m.group(2), m.group(3)
            if kind in ("module", "currentmodule"):
                module, classes = target, []
                continue
            while classes and classes[-1][0] >= indent:
                classes.pop()
            if classes and "." not in target:
                target = f"{classes[-1][1]}.{target}"
            self._described.append((rel, target, module))
            if kind in ("class", "exception"):
                classes.append((indent, target))

    # ---- reST -------------------------------------------------------------------------------

    def _rst(self, rel: str, text: str) -> str:
        out: list[str] = []
        lines = text.split("\n")
        module: str | None = None
        i = 0
        size, sized = 0, 0  # the characters of out[:sized], counted on from there at each directive
        while i < len(lines):
            line = lines[i]
            current = _CURRENT.match(line)
            if current:
                module = current.group(1)
            m = _AUTO.match(line)
            if m is not None:
                size, sized = size + sum(map(len, out[sized:])), len(out)
            if m is None or size > MAX_PAGE_BYTES:
                out.append(line)
                i += 1
                continue
            indent, kind, target = m.groups()
            end = i + 1
            while end < len(lines) and (not lines[end].strip() or _width(lines[end]) > len(indent)):
                end += 1
            block = lines[i + 1:end]
            own = _options(block)
            options = own | {k: v for k, v in self.defaults.items() if k not in own and f"no-{k}" not in own}
            symbol = self.find(target, module)
            if symbol is None:
                out.extend(lines[i:end])
            else:
                if kind == "module":
                    module = symbol.name
                pick = _Pick.of(options) if "members" in options or (kind == "module" and not own) else None
                out.extend(self._rst_entry(symbol, indent, pick, rel))
                out.extend(x for x in block if x.strip() and not x.strip().startswith(":"))
                out.append("")
            i = end
        return "\n".join(out)

    def _rst_entry(self, s: Symbol, indent: str, pick: _Pick | None, rel: str, depth: int = 0) -> list[str]:
        self._show(s, rel)
        inner = indent + "   "
        signature = s.signature.split("\n") if s.signature else [s.name]
        signature[0] = signature[0].removeprefix("class ")  # (`py:class` says it)
        out = [f"{indent}.. py:{'module' if s.kind == 'module' else s.kind}:: {signature[0]}",
               *(inner + x for x in signature[1:]), ""]
        body = _rst_text(entry_text(_without_signature(s)))
        out += [inner + x if x else "" for x in body.split("\n")] + [""]
        if pick is not None and depth < 3:
            for child in self.members(s):
                if pick.takes(child):
                    out += self._rst_entry(child, inner, pick.inner() if s.kind == "module" else None, rel, depth + 1)
                else:
                    self._home(child, rel)
        return out

    # ---- Markdown (mkdocstrings) ------------------------------------------------------------

    def _markdown(self, rel: str, text: str) -> str:
        def fill(m: re.Match[str]) -> str:
            symbol = self.find(m.group(2), None)
            return m.group(0) if symbol is None else "\n\n".join(self._md_entry(symbol, 2, rel))

        return _MKDOCS.sub(fill, text)

    def _md_entry(self, s: Symbol, level: int, rel: str) -> list[str]:
        self._show(s, rel)
        out = [f"{'#' * min(level, 6)} {s.name}", entry_text(s)]
        if level < 5:
            for child in self.members(s):
                if _documented(child):  # (mkdocstrings' `show_if_no_docstring` is off by default)
                    out += self._md_entry(child, level + 1, rel)
                else:
                    self._home(child, rel)
        return out


@dataclass(frozen=True)
class _Pick:
    """Which members a `:members:` directive fills, as Sphinx picks them: those named
    (`:members: a, b`), else all with a docstring (`:undoc-members:` adds the rest), less
    `:exclude-members:`. Entries without a docstring are what most of a filled page would
    otherwise be: SQLAlchemy's `autodoc_default_options` sets `no-undoc-members`."""

    names: tuple[str, ...] = ()
    undoc: bool = False
    exclude: frozenset[str] = frozenset()

    @classmethod
    def of(cls, options: dict[str, str]) -> _Pick:
        return cls(names=_names(options.get("members", "")), undoc="undoc-members" in options,
                   exclude=frozenset(_names(options.get("exclude-members", ""))))

    def takes(self, s: Symbol) -> bool:
        last = s.name.rsplit(".", 1)[-1]
        if self.names:
            return last in self.names
        return last not in self.exclude and (self.undoc or _documented(s))

    def inner(self) -> _Pick:
        """The pick for a module member's own members (the names listed were the module's)."""
        return _Pick(undoc=self.undoc, exclude=self.exclude)


def _options(block: list[str]) -> dict[str, str]:
    """A directive's `:name: value` options."""
    out: dict[str, str] = {}
    for line in block:
        m = _OPTION.match(line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def _names(value: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in value.split(",") if n.strip())


def _documented(s: Symbol) -> bool:
    return bool(s.doc) or s.deprecated is not None


def _width(line: str) -> int:
    return len(line) - len(line.lstrip())


def _without_signature(s: Symbol) -> Symbol:
    return replace(s, signature="")


def _rst_text(markdown: str) -> str:
    """The Markdown of an entry as reST: fences become code-block directives, `x` becomes ``x``,
    and a section title a docstring kept (`Synopsis` over `====`, SQLAlchemy's module
    docstrings have them) a rubric: a title cannot stand inside a directive, and it sent the
    whole page to docutils' slow reader."""
    out: list[str] = []
    fenced = False
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
            out += [f".. code-block:: {line[3:].strip() or 'text'}", ""] if fenced else [""]
        elif fenced:
            out.append("   " + line if line else "")
        elif _RULE.match(line) and (i + 1 == len(lines) or not _RULE.match(lines[i + 1])) \
                and out and out[-1].strip() and len(line) >= len(out[-1].strip()):
            out[-1:] = [f".. rubric:: {out[-1].strip()}", ""]
            if len(out) > 2 and _RULE.match(out[-3]):  # (an overline)
                del out[-3]
        else:
            out.append(_TICK.sub(r"``\1``", line))
    return "\n".join(out)
