"""Page evidence: rank pages by what they offer as a whole, then their best sections.

One stray section that mentions a query's words is weak evidence next to a page whose
title or file name *is* the topic, or whose several sections all match. So sections are
grouped by page; a page scores its best section, a share of its next ones, and how much
of the query's rare-word weight its title and path carry; pages are ranked by that, and
each page's sections follow one another in the answer (best section first).

A section whose own heading *is* the query's subject (`get_or_create()`, a glossary's
`queryset`) gains a little; a lot when the query asks what something is, because then that
section is the definition, often a one-line glossary entry that page evidence would bury.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from operator import itemgetter

# Weights of a page's 2nd and 3rd best sections, and of its title/path match (chosen with
# bench/retrieval.py on the tuning sets; see docs/search.md).
NEXT_SECTIONS = (0.25, 0.1)
TITLE_WEIGHT = 0.4
# What a section whose heading is exactly the query's terms gains, for any query and for a
# "what is X" query (chosen on the django set; no effect on anthropic, click or flask).
HEADING_WEIGHT = 0.3
DEFINITION_WEIGHT = 1.5
_DEFINITION = re.compile(r"^\s*(what\s+(is|are|does)|what's|whats|define)\b|\b(meaning|definition|stands?\s+for)\b",
                         re.IGNORECASE)
_PART = re.compile(r" \(part \d+\)$")
# Pages past the judged sections that still get their best section judged (see `more_pages`).
MORE_PAGES = 10
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
_IDENT_WORDS = re.compile(r"\w+", re.UNICODE)
_NOWHERE = ("", "")
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


@lru_cache(maxsize=64)  # asked once per package searched
def heading_weight(query: str) -> float:
    """What a section whose heading is the query's subject gains for this query."""
    return DEFINITION_WEIGHT if _DEFINITION.search(query) else HEADING_WEIGHT


def with_page_evidence(
    fused: Mapping[int, float],
    where: Mapping[int, tuple[str, str]],
    title_match: Callable[[str], float],
    heading: Callable[[int], float],
) -> list[tuple[int, float]]:
    """Every candidate section with its page's evidence added, best first.

    A page scores its best section, a share of its next ones (NEXT_SECTIONS) and how much of
    the query its title and path carry; each section keeps its own score plus what its page
    offers beyond its best section, so a section of a page about the topic rises above a
    stray mention while sections of different pages stay comparable. `where` maps chunk id
    -> (path, title); `title_match` gives what a page's title and path carry, `heading` what a
    section gains for its own heading.
    (One pass over the candidates and one over their pages: it runs for every package searched.)
    """
    pages: dict[str, list[float]] = {}
    paths: list[str] = []
    for cid, score in fused.items():
        path = where.get(cid, _NOWHERE)[0]
        paths.append(path)
        scores = pages.get(path)
        if scores is None:
            pages[path] = [score]
        else:
            scores.append(score)
    bonus: dict[str, float] = {}
    for path, scores in pages.items():
        extra: float = 0
        if len(scores) > 1:
            scores.sort(reverse=True)
            extra = sum(w * s for w, s in zip(NEXT_SECTIONS, scores[1:], strict=False))
        bonus[path] = extra + TITLE_WEIGHT * title_match(path)
    out = [(cid, score + bonus[path] + heading(cid)) for (cid, score), path in zip(fused.items(), paths, strict=True)]
    out.sort(key=itemgetter(1), reverse=True)
    return out


def title_matcher(idf: Mapping[str, float], query_stems: Mapping[str, frozenset[str]],
                  page_tokens: Mapping[str, frozenset[str]]) -> Callable[[str], float]:
    """A function page path -> share of the query's IDF mass found in its title and path.

    `idf` maps each query term to its weight; `query_stems` maps the terms to their index
    tokens (a term missing from it is its own token) and `page_tokens` maps each page's
    path to its title and path tokens, so `modes` in a title matches `mode` in a query.
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
        return lambda path: 0.0
    every = frozenset().union(*(need for need, _ in wanted))

    def match(path: str) -> float:
        have = every.intersection(page_tokens.get(path, _NO_TOKENS))  # (absent: a section missing from the chunks table)
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


def more_pages(ranked: list[tuple[int, float]], where: Mapping[int, tuple[str, str]], head: int,
               extra: int = MORE_PAGES) -> list[tuple[int, float]]:
    """The best `head` sections, then the best section of up to `extra` pages not among them.

    One long page with many matching sections (a 120-section API reference whose every
    section names the query's word) can fill every judged slot, and the page about the topic,
    second best, then never reaches the answer. Its best section, after the others, keeps it
    in the ranking without reordering what came before. `ranked` is best first.
    """
    out = ranked[:head]
    seen = {where.get(cid, _NOWHERE)[0] for cid, _ in out}
    for cid, score in ranked[head:]:
        if len(out) >= head + extra:
            break
        path = where.get(cid, _NOWHERE)[0]
        if path not in seen:
            seen.add(path)
            out.append((cid, score))
    return out
