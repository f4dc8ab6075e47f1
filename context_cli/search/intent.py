"""Comparison intent: "X vs Y", "difference between X and Y", "X or Y, which ...?".

Searched as words, a comparison ranks pages by how much they match both sides at once, and
`vs` matches "VS Code" headings. Recognised as intent, each side can be searched on its own
and the pages that discuss both preferred. This module only reads the form of the question;
what the search does with the sides is the engine's.

The sides are short noun phrases: a side stops at punctuation and at the words that start
a clause ("for", "when", "which", ...), and the left side of an infix marker ("vs", "or")
reaches back at most `MAX_SIDE_WORDS` words, to the start of the sentence or a lead-in
("should I use", "between").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_SIDE_WORDS = 4

_VS = {"vs", "vs.", "versus", "v.s."}
# Words that end a side read forwards and, read backwards, that open one.
_CLAUSE = frozenset("""
for in when which what whats what's why where how on is are do does did should shall can could
would will to with without and or vs vs. versus but if then than so because while whereas
i you we my our your it its they them this that these those one ones
""".split())
_LEAD = frozenset("""
between use using used write writing pick choose choosing deploy need prefer learn is are
should shall do does i we you the a an of with whether difference differences compare be been
""".split()) | _CLAUSE
_DIFFERENCE = re.compile(r"\bdiff(?:erence|erences|s)?\s+between\s+", re.I)
_COMPARE = re.compile(r"\b(?:compare|comparing)\s+", re.I)
_COMPARED = re.compile(r"\s+(?:compared?\s+(?:to|with)|different\s+from|differ\s+from)\s+", re.I)
_WHICH = re.compile(r"\b(?:which|should|better|prefer|preferred|recommended|difference)\b", re.I)
_TRAIL = ",;:?!—–"  # characters that end a side when a word ends with (or is) one
_EDGE = "\"'`“”‘’.,;:?!()[]{}—–"


@dataclass(frozen=True)
class Comparison:
    """The sides a comparison question sets against each other (two or more), in its order."""

    sides: tuple[str, ...]


def comparison(text: str) -> Comparison | None:
    """The comparison `text` asks for, or None when it asks no comparison."""
    words = text.split()
    if not words:
        return None
    asks = _WHICH.search(text) is not None
    for found in (_between(text), _compare(text), _infix(words, _VS), _compared(text),
                  _infix(words, {"or"}) if asks else _leading_or(words),
                  _instead(text) if asks else None):
        if found and all(found) and len({s.lower() for s in found}) == len(found):
            return Comparison(tuple(found))
    return None


def _infix(words: list[str], markers: set[str]) -> list[str] | None:
    """Sides around infix markers: `a vs b vs c`, `a or b`; None unless every marker has a
    side on both hands and none is "VS Code"."""
    at = [i for i, w in enumerate(words) if (w.lower() if markers is _VS else w) in markers]
    if not at:
        return None  # (an upper-case OR is the query syntax, not a choice)
    if any(i + 1 < len(words) and words[i + 1].lower().strip(_EDGE) == "code" for i in at):
        return None  # VS Code, the editor
    first, last = at[0], at[-1]
    sides = [_backwards(words[:first])]
    before = first - len(sides[0].split()) - 1
    if markers is not _VS and before >= 0 and words[before].endswith(","):
        return None  # "json, yaml or table": a list, not a choice
    sides += [_side(words[a + 1:b]) for a, b in zip(at, at[1:], strict=False)]
    sides.append(_forwards(words[last + 1:]))
    return sides


def _leading_or(words: list[str]) -> list[str] | None:
    """`a or b for ...` opening the question (after a `lib:` prefix), with no lead-in:
    "v-if or v-show for toggling a modal?"."""
    colon = next((i for i, w in enumerate(words[:3]) if w.endswith(":")), None)
    if colon is not None:
        words = words[colon + 1:]
    if "or" not in words or words.index("or") > 3:
        return None
    j = words.index("or")
    if any(w.lower().strip(_EDGE) in _LEAD or w[-1] in _TRAIL for w in words[:j]):
        return None
    return [_side(words[:j]), _forwards(words[j + 1:])]


def _instead(text: str) -> list[str] | None:
    """"when should I use a instead of b"."""
    m = re.search(r"\s+instead\s+of\s+", text, re.I)
    if not m:
        return None
    return [_backwards(text[:m.start()].split()), _forwards(text[m.end():].split())]


def _between(text: str) -> list[str] | None:
    m = _DIFFERENCE.search(text)
    if not m:
        return None
    return _pair(text[m.end():].split(), "and")


def _compare(text: str) -> list[str] | None:
    m = _COMPARE.search(text)
    if not m:
        return None
    rest = text[m.end():].split()
    return _pair(rest, "and") or _pair(rest, "with") or _pair(rest, "to")


def _compared(text: str) -> list[str] | None:
    m = _COMPARED.search(text)
    if not m:
        return None
    return [_backwards(text[:m.start()].split()), _forwards(text[m.end():].split())]


def _pair(words: list[str], joiner: str) -> list[str] | None:
    """`x <joiner> y ...` -> [x, y]: x is everything up to the first joiner."""
    low = [w.lower() for w in words]
    if joiner not in low:
        return None
    j = low.index(joiner)
    return [_side(words[:j]), _forwards(words[j + 1:])]


def _forwards(words: list[str]) -> str:
    """A side read from its start: up to punctuation or a clause word, `MAX_SIDE_WORDS` at most."""
    out: list[str] = []
    for w in words:
        if w.lower().strip(_EDGE) in _CLAUSE:
            break
        out.append(w)
        if w[-1] in _TRAIL or len(out) == MAX_SIDE_WORDS:
            break
    return _side(out)


def _backwards(words: list[str]) -> str:
    """A side read back from its end: to a lead-in, punctuation or `MAX_SIDE_WORDS` words."""
    out: list[str] = []
    for w in reversed(words):
        if w.lower().strip(_EDGE) in _LEAD or (out and w[-1] in _TRAIL):
            break
        out.insert(0, w)
        if len(out) == MAX_SIDE_WORDS:
            break
    return _side(out)


def _side(words: list[str]) -> str:
    """Words joined, without the punctuation at their edges nor an article in front."""
    text = " ".join(words).strip(_EDGE + " ")
    for article in ("the", "a", "an"):
        if text.lower() == article:
            return ""
        if text.lower().startswith(article + " "):
            text = text[len(article) + 1:].strip(_EDGE + " ")
    return text
