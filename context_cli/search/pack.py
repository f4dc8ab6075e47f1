"""Fit ranked sections into a token budget: plan the pack from the ranking's sizes (`plan`),
read the text of the sections it takes (`read_sections`), pack them (`pack`) and lay them
out in reading order (`reading_order`).

Sections are taken in rank order; then a page's best section is never lost to a weaker one
of the same page (`strengthen`): where the pack shows a page but left out a section of it
with a stronger verdict (for want of room, or past MAX_PER_PAGE), the stronger takes the
weaker one's place when the budget allows. The pages and their order stay the ranking's
(strength as the order of the whole choice ranks pages and sections worse than the ranking
does: docs/search.md). The chosen sections are then laid out in reading order. Unlike a loop
that stops at the first section that does not fit, a section that does not fit is skipped and the
next one tried; an oversized first section is trimmed at a paragraph boundary rather than
returning nothing; a page contributes at most MAX_PER_PAGE sections; sections of one page
that sit next to each other are merged into one result.

Tokens are counted from the text that is returned, never taken from the package's `tokens`
column: a package could declare one token for megabytes of text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from ..document import Chunk, estimate_tokens
from .answer import Page
from .verdict import ORDER, STRONG, Signals, judge

if TYPE_CHECKING:
    from .query import Query
    from .rank import Ranking
    from .run import PackageQuery, SearchRun

MAX_PER_PAGE = 3
# A section holding none of the question's words and scoring under this share of the best
# is not packed, however much room is left (`Ranking.without_filler`, docs/search.md).
FILL_FLOOR = 0.05
TRIM_NOTE = "\n\n[… trimmed to fit the token budget]"
T = TypeVar("T")


@dataclass(eq=False, repr=False)
class Candidate:
    library: str
    chunk_id: int
    doc_path: str
    doc_title: str
    section_title: str
    content: str
    tokens: int
    url: str | None
    score: float
    verdict: str = "WEAK"
    signals: dict[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        if not self.section_title or self.section_title == self.doc_title:
            return self.doc_title
        return f"{self.doc_title} > {self.section_title}"


def pack(ranked: Sequence[Candidate], budget: int, limit: int) -> list[Candidate]:
    """Choose the sections that fit `budget` (`choose`, then `strengthen`), then merge page
    neighbours."""
    sized = [replace(c, tokens=estimate_tokens(c.content)) for c in ranked]

    def shrink(k: int, room: int) -> int | None:
        trimmed = trim(sized[k], room)
        if trimmed is None:
            return None
        sized[k] = trimmed
        return k

    def page(k: int) -> tuple[str, str]:
        return sized[k].library, sized[k].doc_path

    ranks = choose(range(len(sized)), budget, limit, size=lambda k: sized[k].tokens, page=page, shrink=shrink)
    ranks = strengthen(ranks, [c.verdict for c in sized], budget, size=lambda k: sized[k].tokens, page=page)
    chosen = [sized[k] for k in ranks]
    return merge_neighbours(chosen, room=budget - sum(c.tokens for c in chosen))


def plan(ranking: Ranking, query: Query, budget: int, limit: int) -> list[int] | None:
    """The ranks of the sections whose text the pack needs, in rank order, planned from their
    sizes: those it takes (`choose` reads the ranking until one rule stops it), and the
    sections it left out of the pages it shows that may be stronger than one it took there
    (`strengthen` decides, once their verdicts are read with their text). None when the first
    must be trimmed, which needs its text. Packing just these sections gives the pack that
    every ranked section's text gives."""
    package, path = ranking.column("package"), ranking.column("path")
    tokens = [(c + 3) // 4 for c in ranking.column("chars")]  # its text's tokens, as `estimate_tokens` counts them
    trimmed = False

    def needs_text(k: int, budget: int) -> None:
        nonlocal trimmed
        trimmed = True

    ranks = choose(range(len(ranking)), budget, limit, size=tokens.__getitem__, page=lambda k: (package[k], path[k]),
                   shrink=needs_text)
    return None if trimmed else sorted(ranks + _maybe_stronger(ranks, ranking, query))


def _maybe_stronger(ranks: list[int], ranking: Ranking, query: Query) -> list[int]:
    """The ranks left out of the pages that `ranks` shows whose verdict may beat the weakest
    taken there. Read before the text: an identifier question's verdict can still rise to
    STRONG once the text shows it verbatim, so the left-out are counted at their best and the
    taken at their worst."""
    if not ranks:
        return []
    package, path = ranking.column("package"), ranking.column("path")
    weakest: dict[tuple[int, str], int] = {}
    for k, v in zip(ranks, _verdicts(ranking, query, ranks, exact_phrase=False), strict=True):
        page = package[k], path[k]
        weakest[page] = min(weakest.get(page, ORDER[STRONG]), ORDER[v])
    if all(w == ORDER[STRONG] for w in weakest.values()):
        return []
    taken = set(ranks)
    left = [k for k, page in enumerate(zip(package, path, strict=True)) if weakest.get(page, ORDER[STRONG]) < ORDER[STRONG]
            and k not in taken]
    return [k for k, v in zip(left, _verdicts(ranking, query, left, exact_phrase=query.identifier is not None),
                              strict=True) if ORDER[v] > weakest[package[k], path[k]]]


def _verdicts(ranking: Ranking, query: Query, ranks: Sequence[int], *, exact_phrase: bool) -> list[str]:
    """The verdicts of the sections ranked `ranks`, from what is known before their text is
    read, taking whether an identifier question is found verbatim as `exact_phrase`."""
    assert ranking.candidates is not None
    packages, n_terms = ranking.candidates.packages, len(query.terms)
    package, cid, coverage = ranking.column("package"), ranking.column("chunk_id"), ranking.column("coverage")
    return [judge(signals(packages[package[k]], cid[k], coverage[k], n_terms, exact_phrase=exact_phrase))
            for k in ranks]


def strengthen(chosen: list[int], verdicts: Sequence[str], budget: int, size: Callable[[int], int],
               page: Callable[[int], Hashable]) -> list[int]:
    """`chosen` (ranks), where a page it shows left out a section with a stronger verdict
    than one it took: the stronger in the place of one weaker (the weakest, lowest ranked
    first, whose place makes room), when the budget allows. Strongest left out first. Places
    are kept, so the pages keep their order and the count per page stays."""
    out = list(chosen)
    used = sum(map(size, out))
    taken = set(out)
    shown = {page(k) for k in out}
    for k in sorted(range(len(verdicts)), key=lambda k: -ORDER[verdicts[k]]):
        if k in taken or page(k) not in shown:
            continue
        weaker = sorted((i for i, j in enumerate(out) if page(j) == page(k) and ORDER[verdicts[j]] < ORDER[verdicts[k]]),
                        key=lambda i: (ORDER[verdicts[out[i]]], -out[i]))
        i = next((i for i in weaker if used - size(out[i]) + size(k) <= budget), None)
        if i is None:
            continue
        used += size(k) - size(out[i])
        taken.discard(out[i])
        taken.add(k)
        out[i] = k
    return out


def signals(pq: PackageQuery, cid: int, coverage: float, n_terms: int, *, exact_phrase: bool) -> Signals:
    """What the verdict of package `pq`'s section `cid` is read from."""
    assert pq.lexical is not None
    return Signals(coverage=coverage, z=pq.dense.z_of(cid) if pq.dense is not None else None,
                   missing=pq.lexical.missing, n_terms=n_terms, exact_phrase=exact_phrase)


def read_sections(ranking: Ranking, ranks: Sequence[int], query: Query, run: SearchRun) -> list[Candidate]:
    """The sections ranked `ranks` with their text and verdict (one query per package), in
    that order. A package that fails is dropped from the run; a section that vanished
    between ranking and reading is left out."""
    cids, score, coverage = ranking.column("chunk_id"), ranking.column("score"), ranking.column("coverage")
    package, packages = ranking.column("package"), ranking.candidates.packages if ranking.candidates else []
    by_package: dict[int, list[int]] = {}
    for k in ranks:
        by_package.setdefault(package[k], []).append(k)
    texts: dict[tuple[int, int], Chunk] = {}
    for p, ks in by_package.items():
        pq = packages[p]
        with run.guard(pq):
            texts.update(((p, cid), c) for cid, c in pq.searcher.texts([cids[k] for k in ks]))
    n_terms, identifier = len(query.terms), query.identifier
    out = []
    for k in ranks:
        pq = packages[package[k]]
        c = texts.get((package[k], cids[k]))
        if c is None:
            continue
        found = signals(pq, cids[k], coverage[k], n_terms,
                        exact_phrase=bool(identifier and (names_verbatim(identifier, c.content)
                                                          or names_verbatim(identifier, c.section_title))))
        out.append(Candidate(
            library=pq.label, chunk_id=cids[k], doc_path=c.doc_path, doc_title=c.doc_title,
            section_title=c.section_title, content=c.content, tokens=c.tokens, url=c.url,
            score=score[k], verdict=judge(found), signals=found.as_dict(),
        ))
    return out


def choose(ranked: Iterable[T], budget: int, limit: int, size: Callable[[T], int], page: Callable[[T], Hashable],
           shrink: Callable[[T, int], T | None]) -> list[T]:
    """The sections that fit, in the order given: a section that does not fit is skipped and
    the next one tried, an oversized first one is `shrink`-ed, a page gives at most MAX_PER_PAGE.

    Generic so that the engine can plan a pack from sections' sizes alone, before their text
    is read (`ranked` is read only as far as needed)."""
    chosen: list[T] = []
    used = 0
    per_page: dict[Hashable, int] = {}
    for item in ranked:
        if len(chosen) >= limit or used >= budget:
            break
        key = page(item)
        if per_page.get(key, 0) >= MAX_PER_PAGE:
            continue
        n = size(item)
        if used + n > budget:
            if chosen:
                continue  # try the next, smaller section
            smaller = shrink(item, budget)
            if smaller is None:
                continue
            item, n = smaller, size(smaller)
        chosen.append(item)
        used += n
        per_page[key] = per_page.get(key, 0) + 1
    return chosen


def trim(cand: Candidate, budget: int) -> Candidate | None:
    """Cut a section at a paragraph boundary so it fits; None when not even one fits."""
    room = budget - estimate_tokens(TRIM_NOTE)
    paragraphs = cand.content.split("\n\n")
    kept: list[str] = []
    for para in paragraphs:
        if estimate_tokens("\n\n".join(kept + [para])) > room:
            break
        kept.append(para)
    if not kept:
        # A single paragraph larger than the budget: cut at a line, then hard.
        text = cand.content[: max(0, room * 4)]
        cut = text.rfind("\n")
        text = text[:cut] if cut > len(text) // 2 else text
        if not text.strip():
            return None
        kept = [_close_fence(text)]
    content = "\n\n".join(kept) + TRIM_NOTE
    return replace(cand, content=content, tokens=estimate_tokens(content))


def _close_fence(text: str) -> str:
    fences = sum(1 for line in text.splitlines() if line.lstrip().startswith(("```", "~~~")))
    return text + "\n```" if fences % 2 else text


def merge_neighbours(chosen: list[Candidate], room: int) -> list[Candidate]:
    """Merge chosen sections that are consecutive in the same page, keeping the best rank.

    A merge adds a heading line per absorbed section: one that would take more than the
    `room` left in the budget is not made (its sections stay apart), the others still are."""
    by_key = {(c.library, c.chunk_id): c for c in chosen}
    absorbed: set[tuple[str, int]] = set()
    out = []
    for cand in chosen:
        key = (cand.library, cand.chunk_id)
        if key in absorbed:
            continue
        parts = _run(cand, by_key, absorbed)
        if len(parts) > 1:
            content = "\n\n".join(_with_heading(p, i > 0) for i, p in enumerate(parts))
            merged = replace(
                cand, chunk_id=parts[0].chunk_id, content=content, tokens=estimate_tokens(content),
                section_title=" + ".join(p.section_title for p in parts),
                score=max(p.score for p in parts),
            )
            extra = merged.tokens - sum(p.tokens for p in parts)
            if extra <= room:
                room -= extra
                absorbed.update((p.library, p.chunk_id) for p in parts)
                cand = merged
        out.append(cand)
    return out


def _run(cand: Candidate, by_key: dict[tuple[str, int], Candidate],
         absorbed: set[tuple[str, int]]) -> list[Candidate]:
    """The chosen sections of `cand`'s page next to it on either side, not yet merged, in page order."""
    def free(i: int) -> bool:
        other = by_key.get((cand.library, i))
        return other is not None and (cand.library, i) not in absorbed and other.doc_path == cand.doc_path

    lo = hi = cand.chunk_id
    while free(lo - 1):
        lo -= 1
    while free(hi + 1):
        hi += 1
    return [by_key[(cand.library, i)] for i in range(lo, hi + 1)]


def _with_heading(c: Candidate, heading: bool) -> str:
    return f"## {c.section_title}\n\n{c.content}" if heading else c.content


def reading_order(chosen: list[Candidate]) -> list[tuple[Candidate, Page]]:
    """The packed sections grouped by page: pages in the order of their best section, and a
    page's sections in the order the page has them, so an agent reads coherent excerpts."""
    pages: dict[tuple[str, str], list[Candidate]] = {}
    for c in chosen:
        pages.setdefault((c.library, c.doc_path), []).append(c)
    out: list[tuple[Candidate, Page]] = []
    for rank, sections in enumerate(pages.values(), start=1):
        first = sections[0]
        url = first.url.split("#", 1)[0] if first.url else None
        page = Page(rank=rank, title=first.doc_title, source=first.doc_path, url=url)
        out.extend((c, page) for c in sorted(sections, key=lambda c: c.chunk_id))
    return out


def names_verbatim(identifier: str, text: str) -> bool:
    """Whether `text` holds the identifier as a whole name: `log` is not found in `catalog`,
    nor `send_file` in `send_files`."""
    return re.search(rf"(?<![\w$]){re.escape(identifier)}(?![\w$])", text) is not None
