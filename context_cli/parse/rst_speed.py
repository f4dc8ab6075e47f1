"""Repeated work docutils does on every page, done once per process instead.

Three costs come on top of the parse itself when a build reads many rst pages (measured on
the Django docs, see docs/performance.md):

- settings: `publish_doctree(settings_overrides=...)` builds an `OptionParser` from every
  component's settings spec on each call (about 2 ms a page). `settings()` builds the
  defaults once; each page gets a shallow copy with its own warning stream.
- state machines: every nested parse (each list, directive body, block quote) makes a new
  state machine of about fifteen states, and each state rebuilds its transition table by
  looking up patterns and methods by name (a fifth of the parse time), though a nested
  parse mostly visits two or three states. `_LazyStates` makes a state when the machine
  first asks for it; `make_transitions` is memoised per class and transition list (a
  state class's table never changes), so only the bound methods are made per instance.

- transforms: `publish_doctree` runs a Publisher with I/O objects and every reader
  transform; `doctree()` parses into a new document and runs only `TRANSFORMS`.
- inline markup: the inliner searches every paragraph (and what is left after each
  construct) with a long regex that starts with a look-behind, so the search tries every
  position, and then searches the plain stretches for standalone URIs. `_Guarded` skips a
  search when the text lacks a character every match contains (one of `` *`_| `` for
  inline markup, `:` or `@` for a URI): most searches fail, and most fail that way.
  The inliner's patterns are also built once per process, not once a page.
- nodes: `Node.document` walks up the parents recursively, and a node not yet in the tree
  (most inline nodes, while they are made) ends the walk with a caught AttributeError;
  `_document_of` walks in a loop. `Node.setup_child` (every node added to the tree) looked
  the document up four times; once is enough. `nodes.unescape` (every `Text.astext()`,
  every inline construct) splits and joins the text three times to drop escape NULs;
  `_unescape` returns a text without NULs straight away.
- paragraphs: `RSTState.paragraph` looks for a closing `::` with a regex that starts with
  a look-behind (every position tried, ~10 us a paragraph); `_paragraph` hands only
  paragraphs that end in `::` to it.

The patch keeps docutils' behaviour: the same states, patterns, methods and order, only
made later or reused. tests/test_parse_rst_speed.py renders pages both ways.
"""

from __future__ import annotations

import copy
import io
import re
from typing import Any

from docutils import frontend, nodes, statemachine, utils
from docutils.parsers.rst import Parser, states
from docutils.readers.standalone import Reader
from docutils.transforms import frontmatter, references
from docutils.writers.null import Writer

_Plan = tuple[list[str], list[tuple[str, "re.Pattern[str]", str]]]
_plans: dict[tuple[type, tuple[Any, ...]], _Plan] = {}
_defaults: list[Any] = []  # the one settings object, once built
_original_make_transitions = statemachine.State.make_transitions


def settings(overrides: dict[str, Any]) -> Any:
    """A fresh settings object for one parse: process-wide defaults plus `overrides`.

    `overrides` must be the same mapping on every call (the first one is kept).
    """
    if not _defaults:
        base = frontend.get_default_settings(Parser, Reader, Writer)
        for key, value in overrides.items():
            setattr(base, key, value)
        _defaults.append(base)
    mine = copy.copy(_defaults[0])
    mine.warning_stream = io.StringIO()
    return mine


# The reader transforms whose work shows in our Markdown: substitutions filled in, auto-numbered
# footnote labels, a leading field list made docinfo (which the writer skips); DocTitle and
# SectionSubTitle are switched off by the settings but keep their settings checks. The rest
# (hyperlink target resolution, dangling-reference reports, transition checks, internals)
# only resolve ids and URIs the writer never reads. Directives' own pending transforms
# (`class`, `contents`, ...) still run.
TRANSFORMS = (references.Substitutions, frontmatter.DocTitle, frontmatter.SectionSubTitle,
              frontmatter.DocInfo, references.Footnotes)


# Substitutions only replaces `|name|` references, which a text without a `|` cannot hold;
# skipping it there saves its walk over the whole tree (most pages have none).
_NO_BARS = tuple(t for t in TRANSFORMS if t is not references.Substitutions)


def doctree(text: str, overrides: dict[str, Any], *, source: str = "<string>", extra: dict[str, Any] | None = None) -> Any:
    """What `publish_doctree` returns for us, without its Publisher, I/O objects or unused
    transforms; `source` names the text (directives read it), `extra` adds page settings."""
    mine = settings(overrides)
    for key, value in (extra or {}).items():
        setattr(mine, key, value)
    document = utils.new_document(source, mine)
    Parser().parse(text, document)
    document.current_source = document.current_line = None
    document.transformer.add_transforms(TRANSFORMS if "|" in text else _NO_BARS)
    document.transformer.apply_transforms()
    return document


def _make_transitions(self: Any, name_list: Any) -> tuple[list[str], dict[str, tuple[Any, Any, str]]]:
    """`State.make_transitions`, with the name/pattern/next-state part computed once per class."""
    if "patterns" in vars(self):  # per-instance patterns: nothing safe to share
        return _original_make_transitions(self, name_list)  # type: ignore[no-any-return]
    key = (type(self), tuple(name_list))
    plan = _plans.get(key)
    if plan is None:
        names, transitions = _original_make_transitions(self, name_list)
        plan = names, [(name, transitions[name][0], transitions[name][2]) for name in names]
        _plans[key] = plan
    return list(plan[0]), {name: (pattern, getattr(self, name), next_state) for name, pattern, next_state in plan[1]}


class _LazyStates(dict[str, Any]):
    """A state machine's `states`, each made (and runtime-initialised) on first lookup."""

    def __init__(self, machine: Any) -> None:
        super().__init__()
        self.machine = machine
        self.classes: dict[str, type] = {}
        self.running = False  # the machine has run `runtime_init`: new states need it too

    def __missing__(self, name: str) -> Any:
        state = self[name] = self.classes[name](self.machine, self.machine.debug)
        if self.running:
            state.runtime_init()
        return state

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or name in self.classes


def _add_state(self: Any, state_class: type) -> None:
    """`StateMachine.add_state`, deferring the state's construction to its first use."""
    if not isinstance(self.states, _LazyStates):
        lazy = _LazyStates(self)
        lazy.update(self.states)
        self.states = lazy
    name = state_class.__name__
    if name in self.states:
        raise statemachine.DuplicateStateError(name)
    self.states.classes[name] = state_class


def _runtime_init(self: Any) -> None:
    """`StateMachine.runtime_init`, remembering that states made from now on need it."""
    if isinstance(self.states, _LazyStates):
        self.states.running = True
    _original_runtime_init(self)


_original_runtime_init = statemachine.StateMachine.runtime_init


class _Guarded:
    """A compiled pattern whose `search` first checks, in one C scan, that the text holds a
    character that every match contains; without one the answer is None, as the search's.

    With `in_run`, no match has whitespace before the first such character it holds (true of
    the inliner's `initial` pattern: a role, reference name or footnote label is one word), so
    none starts before the word that holds the text's first such character, and the search
    starts there rather than trying the look-behinds at every position before it."""

    def __init__(self, pattern: re.Pattern[str], needed: str, *, in_run: bool = False) -> None:
        self.pattern = pattern
        self.needed = re.compile(f"[{re.escape(needed)}]")
        self.in_run = in_run

    def search(self, text: str) -> re.Match[str] | None:
        found = self.needed.search(text)
        if found is None:
            return None
        if not self.in_run:
            return self.pattern.search(text)
        at = found.start()
        return self.pattern.search(text, max(text.rfind(" ", 0, at), text.rfind("\n", 0, at)) + 1)


# Every start-string, reference end and role of the inliner's `initial` pattern has one of
# these (`**`, `*`, ``` `` ```, `` _` ``, `|`, `name_`, `[1]_`, `` `text` ``); a URI has `:`
# after its scheme, an e-mail address has `@`.
_INLINE_NEEDS = "*`_|"
_URI_NEEDS = ":@"


_INLINER_ATTRIBUTES = ("start_string_prefix", "end_string_suffix", "parts", "patterns")
_inliners: dict[tuple[Any, ...], tuple[dict[str, Any], list[tuple[Any, str]]]] = {}


def _init_customizations(self: Any, settings: Any) -> None:
    """`Inliner.init_customizations`, with the markup and URI searches guarded, done once per
    inliner class and the settings it reads; later inliners get the same patterns and their
    own bound methods."""
    key = (type(self), getattr(settings, "character_level_inline_markup", False),
           getattr(settings, "pep_references", None), getattr(settings, "rfc_references", None))
    done = _inliners.get(key)
    if done is None:
        _original_init_customizations(self, settings)
        uri = self.patterns.uri
        self.patterns.initial = _Guarded(self.patterns.initial, _INLINE_NEEDS, in_run=True)
        dispatch = [(_Guarded(p, _URI_NEEDS) if p is uri else p, method.__name__)
                    for p, method in self.implicit_dispatch]
        done = _inliners[key] = ({name: getattr(self, name) for name in _INLINER_ATTRIBUTES}, dispatch)
    attributes, dispatch = done
    vars(self).update(attributes)
    self.implicit_dispatch = [(pattern, getattr(self, name)) for pattern, name in dispatch]


_original_init_customizations = states.Inliner.init_customizations
_original_document = nodes.Node.document


def _document_of(node: Any) -> Any:
    """`Node.document`: the nearest `_document` up the parents, None if there is none."""
    while node is not None:
        if node._document:
            return node._document
        node = node.parent
    return None


def _unescape(text: str, restore_backslashes: bool = False, respect_whitespace: bool = False) -> str:
    """`nodes.unescape`: a plain str of `text` with its escape NULs dropped (or restored)."""
    if "\x00" not in text:
        return str(text)  # `text` may be a `nodes.Text`; the original returns a plain str too
    return _original_unescape(text, restore_backslashes, respect_whitespace)  # type: ignore[no-any-return]


_original_unescape = nodes.unescape


def _paragraph(self: Any, lines: list[str], lineno: int) -> tuple[list[Any], int]:
    """`RSTState.paragraph`; its `::$` search (a literal block follows) cannot match a
    paragraph that does not end in `::`, which then is the original's plain branch."""
    data = "\n".join(lines).rstrip()
    if data.endswith("::"):
        return _original_paragraph(self, lines, lineno)  # type: ignore[no-any-return]
    textnodes, messages = self.inline_text(data, lineno)
    p = nodes.paragraph(data, "", *textnodes)
    p.source, p.line = self.state_machine.get_source_and_line(lineno)
    return [p, *messages], 0


_original_paragraph = states.RSTState.paragraph


def _setup_child(self: Any, child: Any) -> None:
    """`Node.setup_child`, looking the document up once."""
    child.parent = self
    document = _document_of(self)
    if document:
        child.document = document
        if child.source is None:
            child.source = document.current_source
        if child.line is None:
            child.line = document.current_line


def install() -> None:
    """Make docutils' states lazily, memoise their transition tables and the inliner's
    patterns, guard the inliner's searches, find a node's document in a loop and look it
    up once per added node, unescape texts without escapes at once and search only
    paragraphs ending in `::` for it (idempotent)."""
    statemachine.State.make_transitions = _make_transitions
    statemachine.StateMachine.add_state = _add_state
    statemachine.StateMachine.runtime_init = _runtime_init
    states.Inliner.init_customizations = _init_customizations
    nodes.Node.setup_child = _setup_child
    nodes.Node.document = property(_document_of, _original_document.fset)
    nodes.unescape = states.unescape = utils.unescape = _unescape  # the names it is used by
    states.RSTState.paragraph = _paragraph
