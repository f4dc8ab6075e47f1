"""Turn a user's words into a safe FTS5 MATCH expression.

The user's text never reaches FTS5 as syntax: it is split into terms the way the
`unicode61` tokenizer splits (letters and digits; `_`, `-`, `.` separate), each term is
double-quoted, and terms are OR-ed so a natural-language question still finds the
sections that cover most of it (BM25 ranks by how much they cover). Identifiers that
the tokenizer splits (`ERR_REQUIRE_ESM`, `foo.bar`) also add their quoted phrase, so the
exact sequence ranks first.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..package.bm25 import MAX_SPLIT_PARTS

MAX_TERMS = 32
MAX_TERM_CHARS = 64
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_WORD = re.compile(r"\S+")

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers him his how i if in into is it its itself just me more
most my no nor not now of off on once only or other our ours out over own same she should so
some such than that the their theirs them then there these they this those through to too
under until up very was we were what when where which while who whom why will with would you
your yours yourself use using used want way get gets make need needs example examples
just really also able actually instead kind thing things something anything everything somehow
always still already lot lots bunch stuff please possible proper properly correct correctly
""".split())


def words(query: str) -> list[str]:
    """Every lowercase term of the query, stopwords included, as the tokenizer splits it."""
    return [t.lower() for t in _TOKEN.findall(query) if len(t) <= MAX_TERM_CHARS]


def terms(query: str) -> list[str]:
    """Distinct lowercase query terms, stopwords dropped (unless nothing else is left)."""
    return list(_terms(query))


@lru_cache(maxsize=256)  # one query is split for every package searched and at every step
def _terms(query: str) -> tuple[str, ...]:
    tokens = words(query)
    kept = [t for t in tokens if t not in STOPWORDS] or tokens
    return tuple(dict.fromkeys(kept))[:MAX_TERMS]


def phrases(query: str) -> list[list[str]]:
    """Words of the query that the tokenizer would split into several terms."""
    return [list(p) for p in _phrases(query)]


@lru_cache(maxsize=256)
def _phrases(query: str) -> tuple[tuple[str, ...], ...]:
    out = []
    for word in _WORD.findall(query):
        parts = tuple(t.lower() for t in _TOKEN.findall(word))
        if 1 < len(parts) <= MAX_SPLIT_PARTS:
            out.append(parts)
    return tuple(out[:8])


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def build_match(query: str) -> str | None:
    """The MATCH expression for `query`, or None when it has no searchable term."""
    ts = terms(query)
    if not ts:
        return None
    parts = [_quote(t) for t in ts]
    parts += [_quote(" ".join(p)) for p in phrases(query)]
    return " OR ".join(parts)


@lru_cache(maxsize=256)
def _tokens(query: str) -> frozenset[str]:
    """The query's distinct tokens, lower-cased."""
    return frozenset(t.lower() for t in _TOKEN.findall(query))


@lru_cache(maxsize=1024)
def _name_forms(name: str) -> frozenset[str]:
    """The words that name a library: its name as one word (separators ignored), and each
    prefix of that of at least half of it and 4 letters."""
    whole = "".join(_TOKEN.findall(name.lower()))
    if not whole:
        return frozenset()
    least = max(4, (len(whole) + 1) // 2)
    return frozenset((whole, *(whole[:k] for k in range(least, len(whole)))))


@lru_cache(maxsize=4096)  # pure; asked once per package searched (ten a query), again for a repeated question
def without_library_name(query: str, name: str) -> str:
    """The query without words that only name the library searched ("dark mode in tailwind"
    over `tailwindcss`): every page of a library's docs is about it, so its name only pulls in
    the pages that repeat it most (installation and framework guides). A word counts as the
    name when it is the whole name or a prefix of at least half of it and 4 letters (separators
    ignored: `tailwind`, `next` for nextjs; not `tail`); the query is kept whole when nothing
    else would be left."""
    forms = _name_forms(name)
    if forms.isdisjoint(_tokens(query)):  # the common case, once per package searched
        return query
    words = _WORD.findall(query)
    kept = [w for w in words if not all(t.lower() in forms for t in _TOKEN.findall(w) or [w])]
    return " ".join(kept) if terms(" ".join(kept)) else query
