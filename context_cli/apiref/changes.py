"""`context changes` and MCP `get_changes`: what changed in the API between two versions.

Entries are matched by name or by any public name they share (a class that moved between
modules but kept `pkg.Name` is the same entry), then sorted into added, removed, changed
(the signature differs) and newly deprecated. The release notes are the changelog sections
(`pages.kind = 'changelog'`) of the newer package whose heading names a version after FROM
up to TO.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..package.reader import open_package
from ..store.store import Installed
from ..symbol import Symbol

_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+(?:[-.]?(?:a|b|rc|alpha|beta|dev|post)\.?\d*)?)", re.IGNORECASE)
MAX_NOTES_CHARS = 40_000  # release notes beyond this are left out (and counted)
DEFAULT_TOKENS = 4000  # what `context changes` and `get_changes` hand over unless asked for more (`within`)


@dataclass(frozen=True)
class Note:
    version: str
    title: str
    content: str
    source: str


@dataclass
class Changes:
    library: str
    old: str  # name@FROM
    new: str  # name@TO
    added: list[Symbol] = field(default_factory=list)
    removed: list[Symbol] = field(default_factory=list)
    changed: list[tuple[Symbol, Symbol]] = field(default_factory=list)
    deprecated: list[Symbol] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    notes_left_out: int = 0
    left_out: dict[str, int] = field(default_factory=dict)  # entries cut to fit a budget, by list (`within`)

    def to_dict(self) -> dict[str, Any]:
        return {
            "library": self.library, "from": self.old, "to": self.new,
            "added": [_brief(s) for s in self.added], "removed": [_brief(s) for s in self.removed],
            "changed": [_change(o, n) for o, n in self.changed],
            "deprecated": [_deprecation(s) for s in self.deprecated],
            "releaseNotes": [_note(n) for n in self.notes],
            "releaseNotesLeftOut": self.notes_left_out,
            "leftOut": {k: self.left_out.get(k, 0) for k in ("added", "removed", "changed", "deprecated")},
        }

    def within(self, tokens: int) -> Changes:
        """These changes cut to about `tokens` of JSON (four characters a token), what a caller
        must act on first: removed entries, then changes to parameters, newly deprecated ones,
        added ones, changes to annotations only, then the release notes, each list in its own
        order; what does not fit is counted (`left_out`, `notes_left_out`). A jump across
        majors lists thousands of entries (zod 3.23.8 -> 4.6.7: 730 kB), more than any agent
        should be handed at once."""
        room = tokens * 4 - len(self.library) - len(self.old) - len(self.new) - 200
        params, retyped = by_parameters(self.changed)
        kept: dict[str, list[Any]] = {}
        left: dict[str, int] = {}
        groups: list[tuple[str, Sequence[Any], Callable[[Any], dict[str, Any]]]] = [
            ("removed", self.removed, _brief), ("changed", params, lambda c: _change(*c)),
            ("deprecated", self.deprecated, _deprecation), ("added", self.added, _brief),
            ("retyped", retyped, lambda c: _change(*c)), ("notes", self.notes, _note)]
        for key, items, size in groups:
            for item in items:
                cost = len(json.dumps(size(item), ensure_ascii=False)) + 2
                if cost <= room:
                    kept.setdefault(key, []).append(item)
                    room -= cost
                else:
                    left[key] = left.get(key, 0) + 1
        return replace(self, removed=kept.get("removed", []), deprecated=kept.get("deprecated", []),
                       added=kept.get("added", []), changed=kept.get("changed", []) + kept.get("retyped", []),
                       notes=kept.get("notes", []), notes_left_out=self.notes_left_out + left.pop("notes", 0),
                       left_out={"changed": left.pop("retyped", 0) + left.pop("changed", 0), **left})


def _brief(s: Symbol) -> dict[str, Any]:
    return {"name": s.name, "kind": s.kind, "signature": s.signature}


def _change(old: Symbol, new: Symbol) -> dict[str, Any]:
    return {"name": new.name, "kind": new.kind, "old": old.signature, "new": new.signature,
            "annotationsOnly": same_parameters(old.signature, new.signature)}


def _deprecation(s: Symbol) -> dict[str, Any]:
    return {**_brief(s), "message": s.deprecated}


def _note(n: Note) -> dict[str, Any]:
    return {"version": n.version, "title": n.title, "content": n.content, "source": n.source}


def compare(old: list[Symbol], new: list[Symbol]) -> tuple[list[Symbol], list[Symbol], list[tuple[Symbol, Symbol]],
                                                            list[Symbol]]:
    """(added, removed, changed as (old, new), newly deprecated) between two symbol lists."""
    by_name: dict[str, Symbol] = {}
    for s in old:
        for n in s.names:
            by_name.setdefault(n, s)
    matched: set[int] = set()
    added, changed, deprecated = [], [], []
    for s in new:
        before = by_name.get(s.name) or next((by_name[n] for n in s.aliases if n in by_name), None)
        if before is None:
            added.append(s)
            if s.deprecated is not None:
                deprecated.append(s)
            continue
        matched.add(id(before))
        if " ".join(before.signature.split()) != " ".join(s.signature.split()):
            changed.append((before, s))
        if s.deprecated is not None and before.deprecated is None:
            deprecated.append(s)
    removed = [s for s in old if id(s) not in matched]
    return added, removed, changed, deprecated


def by_parameters(changed: list[tuple[Symbol, Symbol]]) -> tuple[list[tuple[Symbol, Symbol]],
                                                                  list[tuple[Symbol, Symbol]]]:
    """(the changes to parameters, the changes to annotations only), each in its order."""
    only = [same_parameters(o.signature, n.signature) for o, n in changed]
    return [c for c, r in zip(changed, only, strict=True) if not r], [c for c, r in zip(changed, only, strict=True) if r]


def same_parameters(old: str, new: str) -> bool:
    """Whether two signatures name the same parameters, in the same order and with the same
    defaults, so that only their annotations (or the return type) differ: what a caller must
    change is in the others. Brackets that do not balance count as different."""
    a = parameters(old)
    return a is not None and a == parameters(new)


_OPEN, _CLOSE = "([{", ")]}"


def parameters(signature: str) -> list[list[tuple[str, str]]] | None:
    """Each top-level parenthesised group of `signature` (a class's bases, then its
    parameters; a function's parameters) as (name, default) pairs, annotations left out;
    None when its brackets or quotes do not balance. Python and TypeScript alike: a name ends
    at its first `:`, `=` or `[` (TypeScript's `?` dropped), a default follows that `=`."""
    groups: list[list[tuple[str, str]]] = []
    depth, quote, start = 0, "", 0
    params: list[str] = []
    i = 0
    while i < len(signature):
        ch = signature[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch in _OPEN:
            depth += 1
            if depth == 1 and ch == "(":
                start, params = i + 1, []
        elif ch in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
            if depth == 0 and ch == ")":
                params.append(signature[start:i])
                groups.append([_parameter(p) for p in params if p.strip()])
        elif ch == "," and depth == 1:
            params.append(signature[start:i])
            start = i + 1
        i += 1
    return None if depth or quote else groups


def _parameter(text: str) -> tuple[str, str]:
    """(name, default) of one parameter's text."""
    depth, colon, equals = 0, -1, -1
    for i, ch in enumerate(text):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif depth == 0 and ch == ":" and colon < 0 and equals < 0:
            colon = i
        elif (depth == 0 and ch == "=" and equals < 0 and text[i + 1:i + 2] not in ("=", ">")
              and text[i - 1:i] not in ("=", "!", "<", ">")):
            equals = i
    ends = [k for k in (colon, equals) if k >= 0]
    name = text[:min(ends)] if ends else text
    default = " ".join(text[equals + 1:].split()) if equals >= 0 else ""
    return name.split("[", 1)[0].strip().rstrip("?").strip(), default  # a base's `[str, Any]` is typing too


def changes(old: Installed, new: Installed) -> Changes:
    """What changed from package `old` to package `new` (two versions of one library)."""
    from ..errors import ContextError

    out = Changes(library=new.id.name, old=old.label, new=new.label)
    symbols = []
    for inst in (old, new):
        with open_package(inst.path) as pkg:
            if not pkg.has_symbols:
                raise ContextError(f"{pkg.label} has no API reference (built before packages carried one, or from "
                                   f"docs without code): `context add {_spec(inst)}` rebuilds it from the release "
                                   "(--replace if it came from a registry server)")
            symbols.append([s for s, _ in pkg.symbols()])
    out.added, out.removed, out.changed, out.deprecated = compare(symbols[0], symbols[1])
    out.notes, out.notes_left_out = release_notes(new, old.id.version, new.id.version)
    return out


def _spec(inst: Installed) -> str:
    registry, name, version = inst.id.registry, inst.id.name, inst.id.version
    return f"npm:{name}@{version}" if registry == "npm" else f"pypi:{name}=={version}"


def release_notes(inst: Installed, after: str, upto: str) -> tuple[list[Note], int]:
    """The changelog sections of `inst` for versions in (after, upto], oldest first, within
    MAX_NOTES_CHARS; and how many were left out."""
    from packaging.version import InvalidVersion, Version

    try:
        low, high = Version(after), Version(upto)
    except InvalidVersion:
        return [], 0
    found: list[tuple[Version, Note]] = []
    with open_package(inst.path) as pkg:
        paths = [p.doc_path for p in pkg.pages() if p.kind == "changelog"]
        for _, chunk in pkg.page_chunks(paths):
            m = _VERSION.search(chunk.section_title)
            if m is None:
                continue
            try:
                v = Version(m.group(1))
            except InvalidVersion:
                continue
            if low < v <= high:
                found.append((v, Note(m.group(1), chunk.breadcrumb, chunk.content, chunk.doc_path)))
    found.sort(key=lambda f: f[0])
    notes: list[Note] = []
    used = 0
    for _, note in found:
        if used + len(note.content) > MAX_NOTES_CHARS:
            break
        notes.append(note)
        used += len(note.content)
    return notes, len(found) - len(notes)
