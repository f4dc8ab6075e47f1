"""Elixir: mix.lock (the `hex` registry), and mix.exs for which dependencies are direct.

mix.lock is an Elixir map literal. It is read by a small reader of the few term kinds that
file uses (maps, tuples, lists, keyword lists, strings, atoms, numbers), never evaluated.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .model import MAX_DEPTH, Dep, LockfileError, read_text

REGISTRY = "hex"

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+|\#[^\n]*)
  | (?P<nl>\n)
  | (?P<open>%\{|\{|\[)
  | (?P<close>\}|\])
  | (?P<comma>,)
  | (?P<arrow>=>)
  | (?P<key>(?:[A-Za-z_][\w@]*[?!]?|"(?:[^"\\]|\\.)*"):(?=\s))
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<atom>:(?:[A-Za-z_][\w@]*[?!]?|"(?:[^"\\]|\\.)*"))
  | (?P<number>-?\d[\d_]*(?:\.\d+)?)
  | (?P<word>true|false|nil)
""", re.VERBOSE)


class Atom(str):
    """An Elixir atom (`:hex`), kept apart from strings."""


def read_terms(text: str, label: str) -> Any:
    """The one term in `text`; anything else is a `LockfileError` with its line."""
    tokens = _tokenise(text, label)
    pos, value = _value(tokens, 0, label, 0)
    if pos != len(tokens):
        raise LockfileError(label, "unexpected text after the lock map", tokens[pos][2])
    return value


def _tokenise(text: str, label: str) -> list[tuple[str, str, int]]:
    out, line, pos = [], 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise LockfileError(label, f"cannot read {text[pos:pos + 20]!r}", line)
        kind = m.lastgroup or ""
        if kind == "nl":
            line += 1
        elif kind != "ws":
            out.append((kind, m.group(), line))
            line += m.group().count("\n")
        pos = m.end()
    return out


def _value(tokens: list[tuple[str, str, int]], pos: int, label: str, depth: int) -> tuple[int, Any]:
    if depth > MAX_DEPTH:
        raise LockfileError(label, "is nested too deeply to be a lockfile", tokens[pos][2])
    if pos >= len(tokens):
        last = tokens[-1][2] if tokens else 1
        raise LockfileError(label, "ends too early (truncated?)", last)
    kind, text, line = tokens[pos]
    if kind == "string":
        return pos + 1, _unescape(text[1:-1])
    if kind == "atom":
        return pos + 1, Atom(_unescape(text[2:-1]) if text.startswith(':"') else text[1:])
    if kind == "number":
        return pos + 1, text
    if kind == "word":
        return pos + 1, {"true": True, "false": False, "nil": None}[text]
    if kind != "open":
        raise LockfileError(label, f"unexpected {text!r}", line)
    close = "]" if text == "[" else "}"
    items: list[Any] = []
    pos += 1
    while True:
        if pos >= len(tokens):
            raise LockfileError(label, f"ends before {close!r} (truncated?)", tokens[-1][2])
        if tokens[pos][1] == close:
            pos += 1
            break
        if tokens[pos][0] == "key":  # keyword entry `repo: "hexpm"`
            raw = tokens[pos][1][:-1]
            key = Atom(_unescape(raw[1:-1]) if raw.startswith('"') else raw)
            pos, item = _value(tokens, pos + 1, label, depth + 1)
            items.append((key, item))
        else:
            pos, item = _value(tokens, pos, label, depth + 1)
            if text == "%{":
                if pos >= len(tokens) or tokens[pos][0] != "arrow":
                    raise LockfileError(label, "expected `=>` in a map", tokens[min(pos, len(tokens) - 1)][2])
                pos, val = _value(tokens, pos + 1, label, depth + 1)
                item = (item, val)
            items.append(item)
        if pos < len(tokens) and tokens[pos][0] == "comma":
            pos += 1
        elif pos < len(tokens) and tokens[pos][1] != close:
            raise LockfileError(label, f"expected ',' or {close!r}", tokens[pos][2])
    if text == "%{":
        return pos, dict(items)
    return pos, (tuple(items) if text == "{" else items)


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


def mix_lock_deps(path: Path, label: str, direct: dict[str, str | None] | None) -> list[Dep]:
    """mix.lock entries; `direct` maps app names from mix.exs to a skip reason (None: hex)."""
    lock = read_terms(read_text(path, label), label)
    if not isinstance(lock, dict):
        raise LockfileError(label, "is not a mix.lock (expected a map)")
    out = []
    for app, entry in lock.items():
        if not isinstance(entry, tuple) or not entry or not isinstance(entry[0], Atom):
            raise LockfileError(label, f"entry {app!r} is not a lock tuple")
        is_direct = direct is None or app in direct
        if entry[0] == "hex" and len(entry) >= 3 and isinstance(entry[2], str):
            name = str(entry[1]) if isinstance(entry[1], Atom) else str(app)
            repo = entry[6] if len(entry) > 6 and isinstance(entry[6], str) else "hexpm"
            skip = None if repo == "hexpm" else f"private hex repository {repo}"
            out.append(Dep(REGISTRY, name, None if skip else entry[2], is_direct, label, skip=skip))
        else:
            where = entry[1] if len(entry) > 1 and isinstance(entry[1], str) else ""
            out.append(Dep(REGISTRY, str(app), None, is_direct, label, skip=f"{entry[0]}: {where}".rstrip(": ")))
    if direct:
        out += [Dep(REGISTRY, app, None, True, label, skip=reason or "not in mix.lock (run `mix deps.get`)")
                for app, reason in direct.items() if app not in lock]
    return out


_DEPS_BLOCK = re.compile(r"defp?\s+deps\b.*?(?=\n\s*defp?\s|\Z)", re.DOTALL)
_DEP_TUPLE = re.compile(r"\{\s*:([a-z_][\w]*)\s*,?([^{}]*)\}")


def mix_exs_direct(path: Path) -> dict[str, str | None]:
    """App names in mix.exs's `deps` function, each with a skip reason for git/path deps.

    Read as text, not evaluated: a `deps` that is computed will be missed, and the lock's
    full list then stands in (see `mix_lock_deps`).
    """
    text = read_text(path)
    block = _DEPS_BLOCK.search(text)
    found: dict[str, str | None] = {}
    for m in _DEP_TUPLE.finditer(block.group() if block else ""):
        opts = m.group(2)
        reason = None
        for key, why in (("path:", "path"), ("in_umbrella:", "umbrella app"), ("git:", "git"), ("github:", "git")):
            if key in opts:
                value = re.search(re.escape(key) + r'\s*"([^"]*)"', opts)
                reason = f"{why}: {value.group(1)}" if value else why
                break
        found[m.group(1)] = reason
    return found
