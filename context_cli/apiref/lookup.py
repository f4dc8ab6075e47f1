"""`context api` and MCP `get_api`: a name's entries in the packages' `symbols` tables (search's
identifier-first rule ranks names the same way: package/identifiers.py).

A name may be qualified or not (`send_file`, `flask.send_file`, `Session.request`): it is
found through its last part (the `symbols_tail` index) and matches a symbol whose name or
alias is the query or ends with `.query`. With no such entry, the closest names are offered.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ContextError, InvalidPackage
from ..package.identifiers import rank_names, tail_keys
from ..package.reader import open_package
from ..store.store import Installed
from ..symbol import Symbol

MAX_QUERY_CHARS = 300
MAX_SYMBOLS = 20  # entries returned for one name (an unqualified `get` may have hundreds)
MAX_SUGGESTIONS = 8


@dataclass(frozen=True)
class Found:
    library: str  # name@version
    symbol: Symbol
    chunk_id: int | None  # the section that shows it, for search to put first

    def to_dict(self) -> dict[str, Any]:
        s = self.symbol
        return {"name": s.name, "kind": s.kind, "signature": s.signature, "doc": s.doc, "deprecated": s.deprecated,
                "since": s.since, "source": s.source, "line": s.line, "aliases": list(s.aliases),
                "library": self.library}


@dataclass
class Lookup:
    """The entries for one query, or the names it may have meant."""

    query: str
    libraries: list[str]
    symbols: list[Found] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    more: int = 0  # matches beyond MAX_SYMBOLS, left out
    notes: list[str] = field(default_factory=list)  # packages passed over, and why

    def to_dict(self) -> dict[str, Any]:
        out = {"library": self.libraries[0] if len(self.libraries) == 1 else None, "query": self.query,
               "symbols": [f.to_dict() for f in self.symbols], "suggestions": self.suggestions, "more": self.more}
        return {**out, "notes": self.notes} if self.notes else out


def normalise(query: str) -> str:
    """`flask.send_file()` / ` Session::request ` -> `flask.send_file` / `Session.request`."""
    text = query.strip().replace("::", ".").replace("#", ".")
    text = text[:-2] if text.endswith("()") else text
    if not text or len(text) > MAX_QUERY_CHARS:
        raise ContextError("give a symbol name such as send_file, flask.send_file or Session.request"
                           if not text else f"the name is too long ({len(text)} characters)")
    return text.strip(".")


def find_api(query: str, packages: Sequence[Installed], *, limit: int = MAX_SYMBOLS) -> Lookup:
    """The entries named `query` in `packages` (exact names first, then qualified suffixes,
    then case-insensitive), or suggestions. Packages without an API reference are passed over;
    if none has one, ContextError says how to get one."""
    name = normalise(query)
    last = name.rsplit(".", 1)[-1]
    with_api: list[str] = []
    hits: list[tuple[int, Found]] = []
    tails: dict[str, str] = {}  # every tail (lower) -> a full name, for suggestions
    notes: list[str] = []
    for inst in packages:
        try:
            with open_package(inst.path) as pkg:
                if not pkg.has_symbols:
                    continue
                with_api.append(pkg.label)
                found = [(_rank(symbol, name), Found(pkg.label, symbol, cid)) for symbol, cid in pkg.symbols(tail_keys(last))]
                hits.extend((rank, f) for rank, f in found if rank is not None)
                if not hits:
                    for symbol, _ in pkg.symbols():  # a tail's shallowest name (`lodash.debounce`, not a wrapper's)
                        tail = symbol.name.rsplit(".", 1)[-1].lower()
                        kept = tails.get(tail)
                        if kept is None or (symbol.name.count("."), len(symbol.name)) < (kept.count("."), len(kept)):
                            tails[tail] = symbol.name
        except InvalidPackage as e:  # one damaged package must not hide the others' entries
            notes.append(f"{e}; skipped")
    if not with_api:
        shown = ", ".join(i.label for i in packages[:5]) or "no packages"
        raise ContextError(f"{shown}: no API reference (it is read from a release's code: build one with "
                           "`context add pypi:NAME==VERSION` or `context add npm:NAME@VERSION`)")
    hits.sort(key=lambda h: (h[0], h[1].symbol.name.count("."), h[1].symbol.name))
    out = Lookup(query=name, libraries=with_api, symbols=[f for _, f in hits[:limit]], more=max(0, len(hits) - limit),
                 notes=notes)
    if not hits:
        close = difflib.get_close_matches(last.lower(), list(tails), n=MAX_SUGGESTIONS, cutoff=0.6)
        out.suggestions = [tails[t] for t in close]
    return out


def _rank(symbol: Symbol, query: str) -> int | None:
    return rank_names(symbol.names, query)
