"""Issue 33's headline figures from `bench/retrieval.py --json` files: page Hit@1 and MRR pooled
over the tuning sets and over each round's held-out ones, per query style, and the cross-library sets
with and without a library; with two files, each set's change too.

    python bench/pooled.py RUN.json [...]          # the pooled figures of each run
    python bench/pooled.py BEFORE.json AFTER.json --by-set   # ... and each set's page MRR change

click and flask have no query styles: their questions count as question-style (as the rounds'
notes count them). Hit@1 and MRR are over grade-2 pages (retrieval.py's graded columns).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "sets"))
from setinfo import HELD_OUT, HELD_OUT_3, STYLES, TUNING  # noqa: E402

CROSS = ("crosslib", "crosslib2")
DROP = 0.01  # a set's page MRR falling more than this is flagged (issue 33: "no set down by more than 0.01")


def graded(run: dict[str, Any], name: str) -> dict[str, Any]:
    return run.get(f"{name}/hybrid", {}).get("graded", {})


def group(run: dict[str, Any], name: str, style: str) -> dict[str, Any] | None:
    """One set's figures for a style (a set without styles counts as question-style)."""
    g = graded(run, name)
    return g.get(style) or (g.get("all") if style == "question" and not any(s in g for s in STYLES) else None)


def pooled(run: dict[str, Any], names: tuple[str, ...], style: str) -> tuple[int, float, float]:
    """(questions, Hit@1, MRR) over the sets' questions of this style, each question once."""
    n = hits = mrr = 0.0
    for name in names:
        v = group(run, name, style)
        if v:
            n += v["n"]
            hits += v["page_hit@1"] * v["n"]
            mrr += v["page_mrr"] * v["n"]
    return int(n), hits / (n or 1), mrr / (n or 1)


def summary(run: dict[str, Any]) -> list[str]:
    lines = []
    for label, names in (("tuning", TUNING), ("held out", HELD_OUT), ("held out 3", HELD_OUT_3)):
        for style in reversed(STYLES):
            n, hit, mrr = pooled(run, names, style)
            if n:
                lines.append(f"{label:10} {style:8} n={n:3}  Hit@1 {hit:.3f}  MRR {mrr:.3f}")
    for name in CROSS:
        g = graded(run, name)
        if "with lib" in g and "without lib" in g:
            w, wo = g["with lib"]["page_mrr"], g["without lib"]["page_mrr"]
            lines.append(f"{name:18} MRR with its library {w:.3f}, without {wo:.3f} (drop {w - wo:+.3f})")
    return lines


def by_set(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    lines = []
    for name in (*TUNING, *HELD_OUT, *HELD_OUT_3):
        for style in reversed(STYLES):
            a, b = group(before, name, style), group(after, name, style)
            if a and b:
                d = b["page_mrr"] - a["page_mrr"]
                lines.append(f"{name:15} {style:8} n={a['n']:3}  MRR {a['page_mrr']:.3f} -> {b['page_mrr']:.3f} "
                             f"({d:+.3f})  Hit@1 {a['page_hit@1']:.3f} -> {b['page_hit@1']:.3f}"
                             + ("  down" if d < -DROP else ""))
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="bench/retrieval.py --json files")
    ap.add_argument("--by-set", action="store_true", help="each set's change from the first file to the last")
    args = ap.parse_args()
    runs = [json.loads(p.read_text()) for p in args.runs]
    for path, run in zip(args.runs, runs, strict=True):
        print(path)
        print("\n".join("  " + line for line in summary(run)))
    if args.by_set and len(runs) > 1:
        print(f"\n{args.runs[0]} -> {args.runs[-1]}")
        print("\n".join("  " + line for line in by_set(runs[0], runs[-1])))


if __name__ == "__main__":
    main()
