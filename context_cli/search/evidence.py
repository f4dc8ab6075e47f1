"""What a page's title and a section's own heading say of a query: the token matchers
behind the page and heading rules (`rank.page_scores`, docs/search.md).

One stray section that mentions a query's words is weak evidence next to a page whose
title or file name *is* the topic: a page's title and path carry a share of the query's
rare-word weight (`title_matcher`). A section whose own heading *is* the query's subject
(`get_or_create()`, a glossary's `queryset`) gains a little; a lot when the query asks what
something is, because then that section is the definition, often a one-line glossary entry
that page evidence would bury (`heading_matcher`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping

_PART = re.compile(r" \(part \d+\)$")
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
_IDENT_WORDS = re.compile(r"\w+", re.UNICODE)
_NO_TOKENS: frozenset[str] = frozenset()
_NO_HEADING = (_NO_TOKENS, False)


def title_words(title: str, path: str) -> list[str]:
    """Words of a page's title and of its path's last parts (`guides/dark-mode.mdx`)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    tail = "/".join(stem.split("/")[-2:])
    return _WORDS.findall(f"{title} {tail}".lower())


def heading_words(section_title: str) -> list[str]:
    """Words of a section's own heading: the last part of its breadcrumb, without "(part n)";
    an identifier (`from_queryset`) stays one word."""
    return _IDENT_WORDS.findall(_PART.sub("", section_title.rsplit(" > ", 1)[-1]).lower())


def title_matcher(idf: Mapping[str, float], query_stems: Mapping[str, frozenset[str]]) -> Callable[[frozenset[str]], float]:
    """A function a page's title and path tokens -> the share of the query's IDF mass they carry.

    `idf` maps each query term to its weight; `query_stems` maps the terms to their index
    tokens (a term missing from it is its own token), so `modes` in a title matches `mode`
    in a query.
    """
    total = sum(idf.values())
    wanted = []
    for t, w in idf.items():
        need = query_stems.get(t)
        if need is None:
            need = frozenset((t,))
        if need:
            wanted.append((need, w))
    if total <= 0 or not wanted:
        return lambda tokens: 0.0
    every = frozenset().union(*(need for need, _ in wanted))

    def match(tokens: frozenset[str]) -> float:
        have = every.intersection(tokens)
        if not have:  # most pages: none of the query's words in title or path
            return 0.0
        found: float = 0  # summed in the query's order, as `sum` would
        for need, w in wanted:
            if need <= have:
                found += w
        return found / total

    return match


def heading_matcher(query_stems: frozenset[str], query_all: frozenset[str],
                    heading_tokens: Mapping[int, tuple[frozenset[str], bool]],
                    filler: frozenset[str], weight: float) -> Callable[[int], float]:
    """A function chunk id -> what the section gains for its own heading: `weight` when the
    heading is exactly the query's subject, else 0.

    The heading must have every query term (`query_stems`, as index tokens) and nothing the
    query's words (`query_all`, stopwords too) lack, but for `filler` (stopwords: "What is a
    queryset?"). An identifier heading gets no filler: `from_queryset()` is not about
    `queryset`, while `get_or_create()` is exactly the query `get_or_create`, stopword part
    and all. `heading_tokens` maps each candidate whose heading may hold the query's terms to
    its heading's tokens and whether it holds an identifier.
    """
    if not query_stems:
        return lambda cid: 0.0

    def gain(cid: int) -> float:
        have, identifier = heading_tokens.get(cid, _NO_HEADING)
        if not query_stems <= have:
            return 0.0
        extra = have - query_all
        return weight if not extra or (not identifier and extra <= filler) else 0.0

    return gain


@functools.cache
def filler_tokens() -> frozenset[str]:
    """The stopwords as index tokens: words a heading may have beyond the query's."""
    from ..package.bm25 import stemmer
    from .query import STOPWORDS

    return frozenset(t for toks in stemmer().tokens(sorted(STOPWORDS)).values() for t in toks)
