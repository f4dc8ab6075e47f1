"""Inline reStructuredText as the rst writer shows it, without making docutils nodes.

`Inliner.parse` finds inline markup with a few regexes and then builds a node per construct,
which `rst._Writer.inline` turns back into text; on Django's docs that was most of what the
fast reader (`rst_fast`) still spent. `InlineText` runs the same search with the inliner's
own compiled patterns and the same rules (`inline_obj`, `interpreted_or_phrase_ref`,
`phrase_ref`, `reference`), and writes what the writer would write for the node each rule
makes: emphasis and strong as their text, literals and code-like roles in backticks,
references as their text. Anything else (inline targets, substitution or footnote
references, docutils' own roles, standalone URIs, a start-string without its end, odd
embedded links) returns None, and the text goes through docutils.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from docutils.parsers.rst import roles
from docutils.utils import escape2null, punctuation_chars

from .common import code_span
from .rst_sphinx import generic_role
from .sphinx import role_text


def _unescape(text: str) -> str:
    """`nodes.unescape`: backslash-escape NULs dropped, with the escaped space or newline."""
    if "\x00" not in text:
        return text
    for sep in ("\x00 ", "\x00\n", "\x00"):
        text = "".join(text.split(sep))
    return text


def _restore(text: str) -> str:
    """`nodes.unescape(text, restore_backslashes=True)`."""
    return text.replace("\x00", "\\")


Part = tuple[str, str]  # (what the writer shows, the node's astext())


class Inline(NamedTuple):
    """A text's inline markup as the writer shows it."""

    shown: str  # the writer's Markdown, before its strip
    plain: str  # the nodes' astext() (a title's text)
    names: bool = False  # it declares link names: docutils reports a repeated one before the text's node


class InlineText:
    """One page's inline reader, sharing the page's docutils inliner (its patterns and roles)."""

    def __init__(self, inliner: Any, memo: Any) -> None:
        self.patterns = inliner.patterns
        self.initial = inliner.patterns.initial.search
        self.uri = [pattern for pattern, _ in inliner.implicit_dispatch]
        self.language = memo.language
        self.reporter = memo.reporter
        self.title_role = roles._role_registry.get("title-reference")
        self.names = False

    def __call__(self, text: str) -> Inline | None:
        """`text` as the writer shows it, or None: ask docutils."""
        self.names = False
        remaining = escape2null(text)
        shown: list[str] = []
        plain: list[str] = []
        unprocessed: list[str] = []
        while remaining:
            match = self.initial(remaining)
            if not match:
                break
            groups = match.groupdict()
            key = groups["start"] or groups["backquote"] or groups["refend"] or groups["fnend"]
            found = self._construct(key, match)
            if found is None:
                return None
            before, part, remaining = found
            unprocessed.append(before)
            if part is not None:
                if not self._plain("".join(unprocessed), shown, plain):
                    return None
                shown.append(part[0])
                plain.append(part[1])
                unprocessed = []
        if not self._plain("".join(unprocessed) + remaining, shown, plain):
            return None
        return Inline("".join(shown), "".join(plain), self.names)

    def _plain(self, text: str, shown: list[str], plain: list[str]) -> bool:
        """A stretch without markup (`implicit_inline`); False if it holds a URI."""
        if not text:
            return True
        if any(pattern.search(text) for pattern in self.uri):
            return False
        text = _unescape(text)
        shown.append(text)
        plain.append(text)
        return True

    def _construct(self, key: str, match: Any) -> tuple[str, Part | None, str] | None:
        if key in ("*", "**"):
            return self._inline_obj(match, self.patterns.emphasis if key == "*" else self.patterns.strong, False)
        if key == "``":
            return self._inline_obj(match, self.patterns.literal, True)
        if key == "`":
            return self._interpreted_or_phrase_ref(match)
        if key in ("_", "__"):
            name = match.group("refname")
            string = match.string
            text = _unescape(name)
            return string[:match.start("whole")], (text.strip(), text), string[match.end("whole"):]
        if key == "|":
            return self._substitution(match)
        return None  # inline targets, footnote references

    def _inline_obj(self, match: Any, end_pattern: Any, literal: bool) -> tuple[str, Part | None, str] | None:
        string = match.string
        start, end = match.start("start"), match.end("start")
        if _quoted_start(match):
            return string[:end], None, string[end:]
        endmatch = end_pattern.search(string[end:])
        if not (endmatch and endmatch.start(1)):
            return None  # a start-string without its end: docutils' problematic node
        text = endmatch.string[:endmatch.start(1)]
        after = string[end + endmatch.end(1):]
        if literal:
            text = _restore(text)
            return string[:start], (code_span(text), text), after
        text = _unescape(text)
        return string[:start], (text.strip(), text), after

    def _substitution(self, match: Any) -> tuple[str, Part | None, str] | None:
        """`|name|` on a page that defines no substitutions (the fast reader reads no other):
        docutils' transform makes it a problematic node, which the writer shows as `name`."""
        string = match.string
        start, end = match.start("start"), match.end("start")
        if _quoted_start(match):
            return string[:end], None, string[end:]
        endmatch = self.patterns.substitution_ref.search(string[end:])
        if not (endmatch and endmatch.start(1)) or endmatch.group(1).endswith("_"):
            return None
        textend = end + endmatch.end(1)
        raw = _restore(string[start:textend])
        return string[:start], (raw.strip("`_|"), raw), string[textend:]

    def _interpreted_or_phrase_ref(self, match: Any) -> tuple[str, Part | None, str] | None:
        string = match.string
        matchstart, matchend = match.start("backquote"), match.end("backquote")
        rolestart = match.start("role")
        role = match.group("role")
        if role:
            role = role[1:-1]
        elif _quoted_start(match):
            return string[:matchend], None, string[matchend:]
        endmatch = self.patterns.interpreted_or_phrase_ref.search(string[matchend:])
        if not (endmatch and endmatch.start(1)):
            return None
        textend = matchend + endmatch.end()
        if endmatch.group("role"):
            if role:
                return None
            role = endmatch.group("suffix")[1:-1]
        escaped = endmatch.string[:endmatch.start(1)]
        if string[matchstart:textend][-1:] == "_":
            if role:
                return None
            part = self._phrase_ref(escaped, string[matchstart:textend].endswith("__"))
            return None if part is None else (string[:matchstart], part, string[textend:])
        part = self._role(role or "", escaped)
        return None if part is None else (string[:rolestart], part, string[textend:])

    def _role(self, role: str, escaped: str) -> Part | None:
        """What `generic_role` or the default role (title reference) shows."""
        role_fn, _ = roles.role(role, self.language, 0, self.reporter)
        text = _unescape(escaped)
        if role_fn is generic_role:
            shown, code = role_text(role, text)
            return (code_span(shown) if code else shown.strip()), shown
        if role_fn is self.title_role and not role:
            return code_span(text), text
        return None

    def _phrase_ref(self, escaped: str, anonymous: bool) -> Part | None:
        """`phrase_ref`: a reference shows its text (the writer has no link targets)."""
        embedded = self.patterns.embedded_link.search(escaped)
        if embedded:
            text = escaped[:embedded.start(0)]
            alias = embedded.group(2)
            if not alias or not _unescape(text).strip():
                return None  # shown as the target itself: left to docutils
            # A named reference with an embedded target gets an empty target node after it,
            # and declares its name.
            self.names = self.names or not anonymous
        else:
            text = escaped
        shown = _unescape(text)
        if not shown.strip():
            return None
        return shown.strip(), shown


def _quoted_start(match: Any) -> bool:
    """`Inliner.quoted_start`."""
    string = match.string
    start = match.start()
    if start == 0:
        return False
    try:
        poststart = string[match.end()]
    except IndexError:
        return True
    return bool(punctuation_chars.match_chars(string[start - 1], poststart))

