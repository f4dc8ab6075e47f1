"""Identifiers in what people type: whether a query names a symbol, and the parts of a name.

A query is an identifier when it is one name with a mark of code on it: a dot
(`z.string`, `Session.request`), an underscore or `$` (`send_file`), a hump
(`useEffect`, `BaseModel`) or a call's `()`. A bare word (`render`, `Response`) is not:
too many English words are also names, and search already matches the word. Parts split a
name at those marks, so `use_effect`, `useEffect` and `UseEffect` are one name to `parts`.
"""

from __future__ import annotations

import re

MAX_IDENTIFIER_CHARS = 200
# An npm module part may hold `@`, `/` and `-` (`@babel/code-frame.codeFrameColumns`); the
# last part is a name as JavaScript and Python write one.
_SHAPE = re.compile(r"(?:[\w$@/-]+\.)*[A-Za-z_$][\w$]*")
_HUMP = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


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
    """The `symbols.tail` keys that may hold `name`'s entry: its last part as written, and
    that part's words joined as the other case styles write them (`use_effect` for
    `useEffect`, `sendfile` for `send_file`). Lower case, as the index is."""
    last = name.rsplit(".", 1)[-1]
    words = parts(last)
    return tuple(dict.fromkeys((last.lower(), "".join(words), "_".join(words))))
