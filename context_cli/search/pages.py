"""Page evidence: rank pages by what they offer as a whole, then their best sections.

One stray section that mentions a query's words is weak evidence next to a page whose
title or file name *is* the topic, or whose several sections all match. So sections are
grouped by page; a page scores its best section, a share of its next ones, and how much
of the query's rare-word weight its title and path carry; pages are ranked by that, and
each page's sections follow one another in the answer (best section first).

A section whose own heading *is* the query's subject (`get_or_create()`, a glossary's
`queryset`) gains a little; a lot when the query asks what something is, because then that
section is the definition, often a one-line glossary entry that page evidence would bury.

The matchers here read a page's or a section's words; `page_scores` and `more_pages` apply
the rules to all the packages' candidates at once, as arrays (`joint.order`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from .options import RankingParams

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


def page_scores(score: np.ndarray, page: np.ndarray, title: np.ndarray, gain: np.ndarray, params: RankingParams
                ) -> np.ndarray:
    """Every candidate section's score with its page's evidence added.

    A page scores its best section, a share of its next ones (`next_sections`) and how much of
    the query its title and path carry (`title`, each candidate's page's `title_matcher`
    value); each section keeps its own score plus what its page offers beyond its best
    section, so a section of a page about the topic rises above a stray mention while
    sections of different pages stay comparable. `gain` is what each section gains for its
    own heading (`heading_matcher`). All arrays are per candidate; `page` numbers the pages
    from 0 (a page of one package is one number).
    """
    import numpy as np

    from .runs import grouped, ranks_in

    counts = np.bincount(page)
    o = grouped(page, (-score).argsort(kind="stable"), len(counts))  # each page's sections, best first
    by_page, ranked = page[o], score[o]
    place = ranks_in(by_page, counts)
    extra = np.zeros(len(counts))
    for k, weight in enumerate(params.next_sections, start=1):  # the 2nd's share, then the 3rd's added to it
        at = place == k
        extra[by_page[at]] += weight * ranked[at]  # (each page once: no repeated index)
    return score + (extra[page] + params.title_weight * title) + gain  # type: ignore[no-any-return]


def more_pages(pkg: np.ndarray, page: np.ndarray, head: int, extra: int) -> np.ndarray:
    """Which candidates are judged, of each package's best first (`pkg` and `page` of each, so
    grouped by package): its best `head`, then the best section of up to `extra` pages not
    among them.

    One long page with many matching sections (a 120-section API reference whose every
    section names the query's word) can fill every judged slot, and the page about the topic,
    second best, then never reaches the answer. Its best section, after the others, keeps it
    in the ranking without reordering what came before.
    """
    import numpy as np

    from .runs import ranks_in

    judged = ranks_in(pkg, np.bincount(pkg)) < head
    pages = int(page.max()) + 1 if len(page) else 0
    seen = np.zeros(pages, dtype=bool)
    seen[page[judged]] = True
    rest = (~judged).nonzero()[0]
    rest_pages = page[rest]
    first = np.full(pages, len(page))
    np.minimum.at(first, rest_pages, rest)
    new = (first[rest_pages] == rest) & ~seen[rest_pages]  # a page's best among the rest, not judged yet
    so_far = new.cumsum()
    before = np.concatenate(([0], so_far))[pkg[rest].searchsorted(pkg[rest])]  # (at its package's first)
    judged[rest[new & (so_far - before <= extra)]] = True
    return judged
