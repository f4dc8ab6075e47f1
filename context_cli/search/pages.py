"""Page evidence: rank pages by what they offer as a whole, then their best sections.

One stray section that mentions a query's words is weak evidence next to a page whose
title or file name *is* the topic, or whose several sections all match. So sections are
grouped by page; a page scores its best section, a share of its next ones, and how much
of the query's rare-word weight its title and path carry; pages are ranked by that, and
each page's sections follow one another in the answer (best section first).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

# Weights of a page's 2nd and 3rd best sections, and of its title/path match (chosen with
# bench/retrieval.py on the tuning sets; see docs/search.md).
NEXT_SECTIONS = (0.25, 0.1)
TITLE_WEIGHT = 0.4
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)


def title_words(title: str, path: str) -> list[str]:
    """Words of a page's title and of its path's last parts (`guides/dark-mode.mdx`)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    tail = "/".join(stem.split("/")[-2:])
    return _WORDS.findall(f"{title} {tail}".lower())


def with_page_evidence(
    fused: Mapping[int, float],
    where: Mapping[int, tuple[str, str]],
    title_match: Callable[[str, str], float],
) -> list[tuple[int, float]]:
    """Every candidate section with its page's evidence added, best first.

    A page scores its best section, a share of its next ones (NEXT_SECTIONS) and how much of
    the query its title and path carry; each section keeps its own score plus what its page
    offers beyond its best section, so a section of a page about the topic rises above a
    stray mention while sections of different pages stay comparable. `where` maps chunk id
    -> (path, title).
    """
    pages: dict[str, list[float]] = {}
    titles: dict[str, str] = {}
    for cid, score in fused.items():
        path, title = where.get(cid, ("", ""))
        pages.setdefault(path, []).append(score)
        titles[path] = title
    bonus: dict[str, float] = {}
    for path, scores in pages.items():
        scores.sort(reverse=True)
        extra = sum(w * s for w, s in zip(NEXT_SECTIONS, scores[1:], strict=False))
        bonus[path] = extra + TITLE_WEIGHT * title_match(titles[path], path)
    out = [(cid, score + bonus[where.get(cid, ("", ""))[0]]) for cid, score in fused.items()]
    out.sort(key=lambda s: s[1], reverse=True)
    return out


def title_matcher(idf: Mapping[str, float], stems: Callable[[list[str]], Mapping[str, tuple[str, ...]]],
                  page_tokens: Callable[[str, str], frozenset[str]]) -> Callable[[str, str], float]:
    """A function (title, path) -> share of the query's IDF mass found in title and path.

    `idf` maps each query term to its weight; `stems` maps words to their index tokens and
    `page_tokens` gives a page's title and path tokens (cached per page), so `modes` in a
    title matches `mode` in a query.
    """
    total = sum(idf.values())
    query_stems = stems(list(idf))
    wanted = [(frozenset(query_stems.get(t, (t,))), w) for t, w in idf.items()]

    def match(title: str, path: str) -> float:
        if total <= 0:
            return 0.0
        have = page_tokens(path, title)
        return sum(w for need, w in wanted if need and need <= have) / total

    return match
