"""The identifier-first rule's data side: whether a query names a symbol, the words of a
name, and the sections of the entries an identifier query names (`identifier_chunks`).

A query is an identifier when it is one name with a mark of code on it: a dot
(`z.string`, `Session.request`), an underscore or `$` (`send_file`), a hump
(`useEffect`, `BaseModel`) or a call's `()`. A bare word (`render`, `Response`) is not:
too many English words are also names, and search already matches the word. `parts`
splits a name at those marks, so `use_effect`, `useEffect` and `UseEffect` are one name.

It reads a package's `symbols` table (docs/api-reference.md) and sits in the package layer
so that search may call it on every query; `context api` (apiref/lookup.py) ranks names
the same way.
"""

from __future__ import annotations

import re

from .reader import Package

MAX_IDENTIFIER_CHARS = 200
MAX_IDENTIFIER_CHUNKS = 5  # sections an identifier query puts first
MAX_TAIL_ROWS = 2000  # rows one identifier query reads (`get` has hundreds of methods in a big package)
# An npm module part may hold `@`, `/` and `-` (`@babel/code-frame.codeFrameColumns`); the
# last part is a name as JavaScript and Python write one.
_SHAPE = re.compile(r"(?:[\w$@/-]+\.)*[A-Za-z_$][\w$]*")
_HUMP = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def identifier(query: str) -> str | None:
    """The dotted name `query` is (`flask.send_file()` -> `flask.send_file`,
    `Session::request` -> `Session.request`), or None when it is words."""
    text = query.strip().strip("`").strip()
    if text.endswith("()"):
        text = text[:-2]
    text = text.replace("::", ".").replace("#", ".")
    if not text or len(text) > MAX_IDENTIFIER_CHARS or not _SHAPE.fullmatch(text):
        return None
    marked = "." in text or "_" in text or "$" in text or _HUMP.search(text) or query.rstrip().endswith("()")
    return text if marked else None


def parts(name: str) -> tuple[str, ...]:
    """The lower-case words of a name, split at dots, underscores and humps:
    `useEffect` -> (use, effect), `HTTPServer.serve_forever` -> (http, server, serve, forever)."""
    return tuple(p.lower() for p in _PART.findall(name))


def tails(name: str) -> tuple[str, ...]:
    """The `symbols` tail keys that may hold `name`'s entry: its last part as written, and
    that part's words joined as the other case styles write them (`use_effect` for
    `useEffect`, `sendfile` for `send_file`). Lower case, as the index is."""
    last = name.rsplit(".", 1)[-1]
    words = parts(last)
    return tuple(dict.fromkeys((*tail_keys(last), "".join(words), "_".join(words))))


def tail_keys(last: str) -> tuple[str, ...]:
    """A name's last part as the `symbols_tail` index holds it: lower case as SQLite's `lower`
    makes it (ASCII letters only), and as Python's made it in packages built before
    `symbol_files` (the two differ only in names with other capital letters)."""
    return tuple(dict.fromkeys((last.translate(_ASCII_LOWER), last.lower())))


def identifier_chunks(query: str, pkg: Package) -> list[int]:
    """The sections showing the entries an identifier query names, best first: [] at once
    when the query is words (`identifier`), so it may run on every search.

    `send_file`, `flask.send_file()`, `Session.request`, `useEffect`, `z.string`: exact names
    (or re-export names) first, then names ending in `.query`, then both ignoring case, then
    the same name in another case style (`use_effect` for `useEffect`); fewer dots first
    within a rank. A name that matches nothing is tried again without its first part, which
    may be an import alias (`np.concatenate`, `pd.DataFrame.merge`). Runs one query on the
    `symbols_tail` index (under the caller's deadline, `pkg.deadline()`, if it holds one).
    """
    name = identifier(query)
    if name is None or not pkg.has_symbols:
        return []
    found = _chunks_named(name, pkg)
    if not found and "." in name:
        found = _chunks_named(name.split(".", 1)[1], pkg)
    return found


def _chunks_named(name: str, pkg: Package) -> list[int]:
    keys = tails(name)
    sql = (f"SELECT CAST(name AS TEXT), CAST(aliases AS TEXT), CAST(chunk_id AS INTEGER) FROM symbols "
           f"WHERE {pkg.symbol_tail} IN ({','.join('?' * len(keys))}) AND chunk_id IS NOT NULL LIMIT {MAX_TAIL_ROWS}")
    with pkg.deadline():
        rows = pkg.db.execute(sql, keys).fetchall()
    ranked: list[tuple[int, int, int]] = []
    words = parts(name)
    last = name.rsplit(".", 1)[-1].lower()
    for symbol_name, aliases, chunk_id in rows:
        if not isinstance(symbol_name, str) or not isinstance(chunk_id, int):
            continue
        all_names = (symbol_name, *(aliases or "").split("\n"))
        rank = rank_names(all_names, name)
        if rank is None and symbol_name.rsplit(".", 1)[-1].lower() != last \
                and any(parts(n)[-len(words):] == words for n in all_names if n):
            rank = 4  # the same words in another case style
        if rank is not None:
            ranked.append((rank, symbol_name.count("."), chunk_id))
    ranked.sort()
    return list(dict.fromkeys(cid for _, _, cid in ranked))[:MAX_IDENTIFIER_CHUNKS]


def rank_names(names: tuple[str, ...], query: str) -> int | None:
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
