"""The ranking's rules in plain Python: the statement that the array code must equal.

Not on the query path. `candidates.fuse_rankings` and `rank.rank_candidates` do the same over
every package's candidates at once, as arrays; `tests/test_search_rank.py` holds them to
`reference_rank` to the bit (hypothesis draws ties, shared chunks and shared pages, and the
parameters), and bench/dump_answers.py holds the whole search to its dumped answers.
docs/search.md says the same in prose: a change to the ranking changes this module and that
page first, and the array code follows. Each rule here has its namesake there.

Each package comes as a dict of what the search knows of it before the final order:

* `lex`: [(chunk id, BM25 score)], best first (ties by id); `dense`: [(chunk id, cosine z)];
* `path`: chunk id -> its page's path (a candidate without one has no section and is dropped);
* `title`: page path -> the share of the query's IDF its title and path carry;
* `closeness`: page path -> how close the page is as a whole (`closeness.closeness`; 0 when absent);
* `kind`: page path -> its kind's weight for this question (`page_kind_weight` of its `page_kind`;
  1 when absent);
* `gain`: chunk id -> what it gains for its own heading; `coverage`: chunk id -> its share of
  the query's IDF; `weight`: the package's prior in a search over several;
* `pinned`: the sections showing the entries an identifier question names, best first
  (`package.identifiers.identifier_chunks`; none when absent).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from .options import DEFAULT_PARAMS, RankingParams


def identifier_first(lex: list[tuple[int, float]], gain: dict[int, float], pinned: list[int], params: RankingParams
                     ) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """The sections an identifier question names count as BM25's best (its best score, in
    front, in their order) and gain `identifier_weight` x (their count - their place)."""
    if not pinned:
        return lex, gain
    top = lex[0][1] if lex else 1.0
    lex = [(cid, top) for cid in pinned] + [(cid, score) for cid, score in lex if cid not in pinned]
    gain = dict(gain)
    for k, cid in enumerate(pinned):
        gain[cid] = gain.get(cid, 0.0) + params.identifier_weight * (len(pinned) - k)
    return lex, gain


def fused_scores(lex: list[tuple[int, float]], dense: list[tuple[int, float]], params: RankingParams) -> dict[int, float]:
    """BM25 scaled by the best BM25 score, plus the capped cosine z-score scaled by its cap: a
    convex mix when both rankings have something, either one at full weight when alone."""
    w_lex = params.lexical_weight if lex and dense else 1.0
    fused: dict[int, float] = {}
    if lex:
        top = lex[0][1] or 1.0
        fused = {cid: w_lex * score / top for cid, score in lex}
    if dense:
        w_dense = 1.0 - w_lex if lex else 1.0
        cap = params.z_cap
        for cid, z in dense:
            fused[cid] = fused.get(cid, 0.0) + w_dense * (cap if z > cap else z if z > 0.0 else 0.0) / cap
    return fused


# A guide to moving between versions, told by its file's name (docs/search.md, "The ranking
# rules", 2): a word of it says migrating or upgrading, and another a version or a guide, or
# it is one of these words alone. Compiled (by `re`'s own cache) only when a path holds one
# of the words, which most searches never meet: a cold query would pay for compiling them.
_MOVING = r"(?<![a-z])(?:migrat|upgrad)"
_VERSIONED = r"\d|(?<![a-z])(?:versions?|guides?)(?![a-z])"
_ALONE = frozenset({"migration", "migrating", "upgrade", "upgrading"})


def page_kind(kind: str | None, path: str) -> str | None:
    """The kind a page is weighed as: its own (`pages.kind`; None for a guide), but release
    notes' for a guide to moving between versions, which the builder keeps as a guide: its
    file's name says migrating or upgrading and a version or a guide (`migrate-from-v10-to-v11`,
    `migrating-to-react-query-4`, `upgrade-guides`, `upgrade-version`), or is `migration`,
    `migrating`, `upgrade` or `upgrading` alone (not `migrations`: database migrations); in
    lower case, as docs' file names are."""
    if kind is not None or ("migrat" not in path and "upgrad" not in path):
        return kind
    stem = path[path.rfind("/") + 1:].split(".", 1)[0]
    if stem in _ALONE or (re.search(_MOVING, stem) and re.search(_VERSIONED, stem)):
        return "changelog"
    return None


def upgrade_guides(paths: Iterable[str]) -> dict[str, str]:
    """The guides to moving between versions among these pages, each with the kind it is
    weighed as (`page_kind`), found with one scan of all their paths: nearly every search has
    none among its candidates' pages."""
    joined = "\n".join(paths)
    if "migrat" not in joined and "upgrad" not in joined:
        return {}
    return {p: kind for p in joined.split("\n") if (kind := page_kind(None, p))}


def page_kind_weight(kind: str, asks_changes: bool, names_symbol: bool, params: RankingParams) -> float:
    """What a page of this kind weighs for a question: release notes `changelog_weight` unless
    the question asks about versions or changes, an API reference page `reference_weight`
    unless it names a symbol; any other page 1."""
    if kind == "changelog" and not asks_changes:
        return params.changelog_weight
    if kind == "reference" and not names_symbol:
        return params.reference_weight
    return 1.0


def with_page_evidence(fused: dict[int, float], path: dict[int, str], title: dict[str, float], gain: dict[int, float],
                       params: RankingParams, kind: dict[str, float] | None = None,
                       closeness: dict[str, float] | None = None) -> list[tuple[int, float]]:
    """Each section's score plus its page's bonus (a share of the page's 2nd and 3rd best
    sections, its title match and its closeness) and its heading gain, times its page's kind
    weight, best first."""
    pages: dict[str, list[float]] = {}
    for cid, score in fused.items():
        pages.setdefault(path.get(cid, ""), []).append(score)
    bonus = {}
    for p, scores in pages.items():
        scores.sort(reverse=True)
        extra = sum(w * s for w, s in zip(params.next_sections, scores[1:], strict=False))
        bonus[p] = extra + params.title_weight * title.get(p, 0.0)
        if closeness is not None:
            bonus[p] += params.page_closeness_weight * closeness.get(p, 0.0)
    kind = kind or {}
    out = [(cid, (score + bonus[path.get(cid, "")] + gain.get(cid, 0.0)) * kind.get(path.get(cid, ""), 1.0))
           for cid, score in fused.items()]
    out.sort(key=itemgetter(1), reverse=True)
    return out


def judged(ranked: list[tuple[int, float]], path: dict[int, str], head: int, params: RankingParams
           ) -> list[tuple[int, float]]:
    """The best `head`, then the best section of up to `more_pages` pages not among them."""
    out = ranked[:head]
    seen = {path.get(cid, "") for cid, _ in out}
    for cid, score in ranked[head:]:
        if len(out) >= head + params.more_pages:
            break
        if path.get(cid, "") not in seen:
            seen.add(path.get(cid, ""))
            out.append((cid, score))
    return out


def cross_package_factor(page_coverage: float, weight: float) -> float:
    """In a search over several packages: (0.5 + 0.5 x the highest coverage among the page's
    judged sections, to 3 places) x the package's prior."""
    return (0.5 + 0.5 * round(page_coverage, 3)) * weight


def reference_rank(packages: list[dict[str, Any]], cap: int, head: int, several: bool,
                   params: RankingParams = DEFAULT_PARAMS) -> list[tuple[int, int, float]]:
    """(package, chunk id, final score) of every judged candidate, best first: per package,
    fusion, its `cap` best, page evidence and the judged; across packages, the factor; a
    score that is not finite counts 0; ties by package, then chunk id."""
    ranked: list[tuple[int, int, float]] = []
    for p, pk in enumerate(packages):
        lex, gain = identifier_first(pk["lex"], pk["gain"], pk.get("pinned", []), params)
        fused = fused_scores(lex, pk["dense"], params)
        if len(fused) > cap:
            fused = dict(sorted(fused.items(), key=itemgetter(1), reverse=True)[:cap])
        path = {cid: pk["path"][cid] for cid in fused if cid in pk["path"]}
        ordered = judged(with_page_evidence(fused, path, pk["title"], gain, params, pk.get("kind"), pk.get("closeness")),
                         path, head, params)
        scored = [(cid, score) for cid, score in sorted(ordered) if cid in path]
        if several:
            best: dict[str, float] = {}
            for cid, _ in scored:
                best[path[cid]] = max(best.get(path[cid], 0.0), pk["coverage"][cid])
            scored = [(cid, score * cross_package_factor(best[path[cid]], pk["weight"])) for cid, score in scored]
        ranked += [(p, cid, score if math.isfinite(score) else 0.0) for cid, score in scored]
    ranked.sort(key=itemgetter(2), reverse=True)
    return ranked
