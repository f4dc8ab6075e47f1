"""What the answer's pack holds at a budget: the gold pages and sections that reach it, and the
STRONG sections it leaves out for a weaker section of the same page.

`bench/retrieval.py` scores the ranking (every judged section); this scores the pack that
`engine.answer` makes from it, as an agent reads it, at each budget:

- page MRR and Hit@1 over the pack's pages in their order (grade-2 pages, as retrieval.py's
  graded table counts them);
- section Hit and MRR: a gold section among the pack's sections (questions with section gold);
- STRONG lost: questions where the pack shows a page but leaves out a STRONG section of it
  that the ranking judged, while it keeps a weaker one of the same page;
- the tokens used.

    python bench/pack_quality.py --home H                     # every set, budgets 500 and 2000
    python bench/pack_quality.py --home H --set flask --budget 300 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import retrieval  # noqa: E402

COLUMNS = ("n", "page MRR", "page Hit@1", "n sec", "sec Hit", "sec MRR", "STRONG lost", "tokens")


def score(installed: Any, questions: list[dict[str, Any]], budget: int) -> dict[str, float]:
    """The pack's scores over `questions` at `budget` (means, and counts for n)."""
    from context_cli.search.engine import SearchOptions, answer, rank
    from context_cli.search.searcher import open_searcher

    searcher = open_searcher(installed)
    sums = dict.fromkeys(COLUMNS, 0.0)
    for q in questions:
        found = answer(q["question"], [installed], SearchOptions(budget=budget))
        sections = [_as_section(h) for h in found.results]
        grades = q.get("grades") or {p: 2 for p in q["gold"]}
        pages = list(dict.fromkeys(s.doc_path for s in sections))
        first = next((i for i, p in enumerate(pages, 1) if grades.get(p) == 2), None)
        sums["n"] += 1
        sums["page MRR"] += 1 / first if first else 0.0
        sums["page Hit@1"] += first == 1
        sums["tokens"] += found.tokens
        if q.get("gold_sections"):
            at = next((i for i, s in enumerate(sections, 1)
                       if any(retrieval.section_hits(s, g, plain_text=True) for g in q["gold_sections"])), None)
            sums["n sec"] += 1
            sums["sec Hit"] += at is not None
            sums["sec MRR"] += 1 / at if at else 0.0
        sums["STRONG lost"] += _strong_lost(rank(q["question"], [searcher])[0], sections)
    n, ns = max(sums["n"], 1), max(sums["n sec"], 1)
    return {k: v if k in ("n", "n sec", "STRONG lost") else v / (ns if k.startswith("sec") else n)
            for k, v in sums.items()}


def _as_section(hit: Any) -> Any:
    """A hit as the ranked sections `retrieval.section_hits` reads (its page's title split off)."""
    doc_title = hit.page.title if hit.page else hit.title.split(" > ", 1)[0]
    section = hit.title[len(doc_title) + 3:] if hit.title.startswith(doc_title + " > ") else hit.title
    return SimpleNamespace(doc_path=hit.source, doc_title=doc_title, section_title=section, content=hit.content,
                           verdict=hit.verdict, parts=set(section.split(" + ")))


def _strong_lost(ranked: list[Any], sections: list[Any]) -> bool:
    """Whether a page of the pack lacks one of its judged STRONG sections while it shows a
    weaker one of its own."""
    for page in {s.doc_path for s in sections}:
        shown = [s for s in sections if s.doc_path == page]
        if all(s.verdict == "STRONG" for s in shown):
            continue
        if any(c.doc_path == page and c.verdict == "STRONG" and not any(c.section_title in s.parts for s in shown)
               for c in ranked):
            return True
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    retrieval.set_options(ap)
    ap.add_argument("--budget", dest="budgets", type=int, action="append")
    args = ap.parse_args()
    names = retrieval.chosen_sets(args)
    out: dict[str, dict[str, dict[str, float]]] = {}
    print("| set | budget | " + " | ".join(COLUMNS) + " |\n|---|---|" + "---|" * len(COLUMNS))
    for name in names:
        installed = retrieval.set_package(name, reuse=args.home is not None)
        for budget in args.budgets or [500, 2000]:
            row = out.setdefault(name, {})[str(budget)] = score(installed, retrieval.load_questions(retrieval.SETS[name][1]),
                                                                budget)
            print(f"| {name} | {budget} | " + " | ".join(
                f"{int(row[c])}" if c in ("n", "n sec", "STRONG lost") else f"{row[c]:.3f}" if c != "tokens"
                else f"{row[c]:.0f}" for c in COLUMNS) + " |", flush=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
