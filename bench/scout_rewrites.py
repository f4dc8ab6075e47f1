"""Scout the query-side changes of issue 33 from outside today's search: which to wire first.

Each set's package searched alone (hybrid, `engine.rank`), page MRR and Hit@1 of the
grade-2 pages (as bench/retrieval.py counts them), today against:

- **spelling**: each query word whose stem the package lacks gets the correction
  `spelling.Vocabulary.correct` offers appended to the query (the absent word stays);
- **typos**: the same correction on the queries with one typo made in their longest word
  (of 6+ letters; a deletion, insertion, substitution or transposition after the first
  letter, seeded): "before" is the typo's query, "after" the corrected one (the sets'
  own queries have almost no typos, so this is where the correction can show);
- **comparison**: for a query `intent.comparison` recognises, each side is searched on its
  own as well, and the three page rankings (the query's, each side's) are fused by reciprocal
  rank (k = `RRF_K`), so a page that ranks for both sides rises;
- **comparison-both**: instead, the query's own ranking with the pages that every side's
  search ranks in its top `BOTH_TOP` moved first;
- **changelog demotion**: pages of kind `changelog` (the package's `pages.kind`) move below
  every other page, unless the query asks about versions or changes (`_ASKS_CHANGES`).

Each change is reported on the whole set and on the queries it touched (`touched`).

    python bench/scout_rewrites.py --home H [--set NAME ...]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import retrieval  # noqa: E402

RRF_K = 10
_ASKS_CHANGES = re.compile(r"\b(?:releas\w*|changelog|changes|changed|new in|what's new|versions?|deprecat\w*|"
                           r"removed|upgrad\w*|migrat\w*|\d+\.\d+|when (?:did|was|were|will)|available|"
                           r"launch\w*|introduc\w*|date)\b", re.I)
CHANGES = ("spelling", "typos", "comparison", "comparison-both", "changelog")
BOTH_TOP = 10  # comparison-both: a page in the top this many of every side's search


def typo(query: str, seed: int) -> str | None:
    """The query with one typo in its longest word of 6+ letters, or None."""
    import random

    rng = random.Random(seed)
    words = re.findall(r"[A-Za-z]{6,}", query)
    if not words:
        return None
    w = max(words, key=len)
    i = rng.randrange(1, len(w) - 1)
    c = rng.choice("abcdefghijklmnopqrstuvwxyz")
    made = rng.choice([w[:i] + w[i + 1:], w[:i] + c + w[i:], w[:i] + c + w[i + 1:], w[:i] + w[i + 1] + w[i] + w[i + 2:]])
    return None if made == w else query.replace(w, made, 1)


def _metrics(pages: list[str], gold: set[str]) -> tuple[float, float]:
    first = next((i for i, p in enumerate(pages, 1) if p in gold), None)
    return (1 / first if first else 0.0), float(first == 1)


def _pages(query: str, s: Any) -> list[str]:
    from context_cli.search.engine import rank

    ranked, _, _ = rank(query, [s], "hybrid")
    return retrieval.distinct_pages(ranked)


def spelled(query: str, vocab: Any) -> str | None:
    """The query with corrections of the words the package lacks appended, or None."""
    from context_cli.package.bm25 import stemmer
    from context_cli.search.query import terms

    stems = stemmer().tokens(terms(query))
    fixes = [fix for toks in stems.values() for t in toks if (fix := vocab.correct(t))]
    return f"{query} {' '.join(fixes)}" if fixes else None


def compared(query: str, s: Any, base: list[str]) -> list[str] | None:
    from context_cli.search.intent import comparison

    found = comparison(query)
    if found is None:
        return None
    lists = [base, *(_pages(side, s) for side in found.sides)]
    score: dict[str, float] = {}
    for pages in lists:
        for r, p in enumerate(pages, 1):
            score[p] = score.get(p, 0.0) + 1 / (RRF_K + r)
    return sorted(score, key=lambda p: -score[p])


def both_first(query: str, s: Any, base: list[str]) -> list[str] | None:
    """comparison-both: the query's own ranking, with the pages that every side's search
    also ranks in its top `BOTH_TOP` moved first (in the query's order)."""
    from context_cli.search.intent import comparison

    found = comparison(query)
    if found is None:
        return None
    tops = [set(_pages(side, s)[:BOTH_TOP]) for side in found.sides]
    both = [p for p in base if all(p in t for t in tops)]
    return both + [p for p in base if p not in both]


def demoted(query: str, base: list[str], changelog: set[str]) -> list[str] | None:
    if _ASKS_CHANGES.search(query) or not changelog & set(base):
        return None
    return [p for p in base if p not in changelog] + [p for p in base if p in changelog]


def scout(installed: Any, questions: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    from context_cli.search.searcher import open_searcher
    from context_cli.search.spelling import Vocabulary

    s = open_searcher(installed)
    vocab = Vocabulary.of(s.pkg.db.execute("SELECT term, df FROM bm25_terms"))
    changelog = {r[0] for r in s.pkg.db.execute("SELECT doc_path FROM pages WHERE kind = 'changelog'")}
    out: dict[str, dict[str, float]] = {c: {} for c in CHANGES}
    for n, q in enumerate(questions):
        gold = {p for p, g in (q.get("grades") or {p: 2 for p in q["gold"]}).items() if g == 2}
        base = _pages(q["question"], s)
        fixed = spelled(q["question"], vocab)
        after = {"spelling": _pages(fixed, s) if fixed else None, "comparison": compared(q["question"], s, base),
                 "comparison-both": both_first(q["question"], s, base),
                 "changelog": demoted(q["question"], base, changelog)}
        typed = typo(q["question"], n)
        typed_fixed = spelled(typed, vocab) if typed else None
        before = {"typos": _pages(typed, s) if typed else base}
        after["typos"] = _pages(typed_fixed, s) if typed_fixed else None
        for change, pages in after.items():
            m0, h0 = _metrics(before.get(change, base), gold)
            m1, h1 = _metrics(pages, gold) if pages is not None else (m0, h0)
            row = out[change]
            for k, v in (("n", 1), ("touched", pages is not None), ("MRR before", m0), ("MRR after", m1),
                         ("Hit@1 before", h0), ("Hit@1 after", h1)):
                row[k] = row.get(k, 0) + v
            if pages is not None:
                for k, v in (("touched MRR before", m0), ("touched MRR after", m1)):
                    row[k] = row.get(k, 0) + v
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--set", dest="sets", action="append", choices=sorted(retrieval.SETS))
    ap.add_argument("--home", type=Path)
    args = ap.parse_args()
    os.environ["CONTEXT_HOME"] = str(args.home or tempfile.mkdtemp(prefix="bench-home-"))
    names = args.sets or [n for n, (_, q) in retrieval.SETS.items() if q.exists()]
    print("| set | change | n | touched | MRR before | MRR after | Δ MRR | Hit@1 before | Hit@1 after | Δ Hit@1 "
          "| touched Δ MRR |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        corpus, qpath = retrieval.SETS[name]
        installed = (retrieval._built(name) if args.home else None) or retrieval.build(name, corpus, embed=True)
        for change, r in scout(installed, retrieval.load_questions(qpath)).items():
            n, t = r["n"], r["touched"]
            dt = (r.get("touched MRR after", 0) - r.get("touched MRR before", 0)) / t if t else 0.0
            print(f"| {name} | {change} | {int(n)} | {int(t)} | {r['MRR before'] / n:.3f} | {r['MRR after'] / n:.3f} | "
                  f"{(r['MRR after'] - r['MRR before']) / n:+.3f} | {r['Hit@1 before'] / n:.3f} | "
                  f"{r['Hit@1 after'] / n:.3f} | {(r['Hit@1 after'] - r['Hit@1 before']) / n:+.3f} | {dt:+.3f} |",
                  flush=True)


if __name__ == "__main__":
    main()
