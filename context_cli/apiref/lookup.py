"""`context api` and MCP `get_api`: a name's entries in the packages' `symbols` tables; and
for search, the sections of the entries an identifier query names (`identifier_chunks`).

A name may be qualified or not (`send_file`, `flask.send_file`, `Session.request`): it is
found through its last part (the table's `tail` index) and matches a symbol whose name or
alias is the query or ends with `.query`. With no such entry, the closest names are offered.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ContextError
from ..package.reader import Package, open_package
from ..store.store import Installed
from ..symbol import Symbol
from . import names as _names

MAX_QUERY_CHARS = 300
MAX_SYMBOLS = 20  # entries returned for one name (an unqualified `get` may have hundreds)
MAX_SUGGESTIONS = 8
MAX_IDENTIFIER_CHUNKS = 5  # sections an identifier query puts first
MAX_TAIL_ROWS = 2000  # rows one identifier query reads (`get` has hundreds of methods in a big package)


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

    def to_dict(self) -> dict[str, Any]:
        return {"library": self.libraries[0] if len(self.libraries) == 1 else None, "query": self.query,
                "symbols": [f.to_dict() for f in self.symbols], "suggestions": self.suggestions, "more": self.more}


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
    tail = name.rsplit(".", 1)[-1].lower()
    with_api: list[str] = []
    hits: list[tuple[int, Found]] = []
    tails: dict[str, str] = {}  # every tail (lower) -> a full name, for suggestions
    for inst in packages:
        with open_package(inst.path) as pkg:
            if not pkg.has_symbols:
                continue
            with_api.append(pkg.label)
            for symbol, cid in pkg.symbols([tail]):
                rank = _rank(symbol, name)
                if rank is not None:
                    hits.append((rank, Found(pkg.label, symbol, cid)))
            if not hits:
                for symbol, _ in pkg.symbols():
                    tails.setdefault(symbol.name.rsplit(".", 1)[-1].lower(), symbol.name)
    if not with_api:
        shown = ", ".join(i.label for i in packages[:5]) or "no packages"
        raise ContextError(f"{shown}: no API reference (it is read from a release's code: build one with "
                           "`context add pypi:NAME==VERSION` or `context add npm:NAME@VERSION`)")
    hits.sort(key=lambda h: (h[0], h[1].symbol.name.count("."), h[1].symbol.name))
    out = Lookup(query=name, libraries=with_api, symbols=[f for _, f in hits[:limit]], more=max(0, len(hits) - limit))
    if not hits:
        close = difflib.get_close_matches(tail, list(tails), n=MAX_SUGGESTIONS, cutoff=0.6)
        out.suggestions = [tails[t] for t in close]
    return out


def identifier_chunks(query: str, pkg: Package) -> list[int]:
    """The sections showing the entries an identifier query names, best first: [] at once
    when the query is words (`names.identifier`), so it may run on every search.

    `send_file`, `flask.send_file()`, `Session.request`, `useEffect`, `z.string`: exact names
    (or re-export names) first, then names ending in `.query`, then both ignoring case, then
    the same name in another case style (`use_effect` for `useEffect`); fewer dots first
    within a rank. A name that matches nothing is tried again without its first part, which
    may be an import alias (`np.concatenate`, `pd.DataFrame.merge`). Runs one query on the
    `symbols_tail` index (under the caller's deadline, `pkg.deadline()`, if it holds one).
    """
    name = _names.identifier(query)
    if name is None or not pkg.has_symbols:
        return []
    found = _chunks_named(name, pkg)
    if not found and "." in name:
        found = _chunks_named(name.split(".", 1)[1], pkg)
    return found


def _chunks_named(name: str, pkg: Package) -> list[int]:
    keys = _names.tails(name)
    sql = (f"SELECT CAST(name AS TEXT), CAST(aliases AS TEXT), CAST(tail AS TEXT), CAST(chunk_id AS INTEGER) "
           f"FROM symbols WHERE tail IN ({','.join('?' * len(keys))}) AND chunk_id IS NOT NULL LIMIT {MAX_TAIL_ROWS}")
    with pkg.deadline():
        rows = pkg.db.execute(sql, keys).fetchall()
    ranked: list[tuple[int, int, int]] = []
    words = _names.parts(name)
    for symbol_name, aliases, tail, chunk_id in rows:
        if not isinstance(symbol_name, str) or not isinstance(chunk_id, int):
            continue
        all_names = (symbol_name, *(aliases or "").split("\n"))
        rank = _rank_names(all_names, name)
        if rank is None and tail != keys[0] and any(_names.parts(n)[-len(words):] == words for n in all_names if n):
            rank = 4  # the same words in another case style
        if rank is not None:
            ranked.append((rank, symbol_name.count("."), chunk_id))
    ranked.sort()
    return list(dict.fromkeys(cid for _, _, cid in ranked))[:MAX_IDENTIFIER_CHUNKS]


def _rank(symbol: Symbol, query: str) -> int | None:
    return _rank_names(symbol.names, query)


def _rank_names(names: tuple[str, ...], query: str) -> int | None:
    """0: a name is the query; 1: a name ends with `.query`; 2, 3: the same ignoring case."""
    if query in names:
        return 0
    if any(n.endswith("." + query) for n in names):
        return 1
    low = query.lower()
    lowered = [n.lower() for n in names]
    if low in lowered:
        return 2
    if any(n.endswith("." + low) for n in lowered):
        return 3
    return None
