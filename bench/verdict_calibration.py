"""Calibrate the STRONG / MODERATE / WEAK verdict on measured hits and misses.

For each question set: answerable questions (top result is a gold section = hit, else miss)
and questions about things the corpus does not contain. Prints each group's signal
quantiles and how the current thresholds label them. A good verdict labels unanswerable
questions WEAK and hits STRONG, and rarely calls a miss STRONG.

    python bench/verdict_calibration.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from retrieval import SETS, build, section_hits  # noqa: E402

UNANSWERABLE = {
    "anthropic": ROOT / "bench" / "sets" / "anthropic-unanswerable.jsonl",
    "click": ROOT / "bench" / "sets" / "click" / "unanswerable.jsonl",
    "flask": ROOT / "bench" / "sets" / "flask" / "unanswerable.jsonl",
}


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def quantiles(xs: list[float]) -> str:
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return "-"
    pick = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
    return f"p10 {pick(0.1):.2f}  p50 {pick(0.5):.2f}  p90 {pick(0.9):.2f}"


def main() -> None:
    os.environ["CONTEXT_HOME"] = tempfile.mkdtemp(prefix="bench-verdict-")
    from context_cli.search.engine import rank
    from context_cli.search.searcher import open_searcher

    for name, (corpus, qfile) in SETS.items():
        if not qfile.exists():
            continue
        searchable = open_searcher(build(name, corpus, embed=True))
        groups: dict[str, list] = {"hit": [], "miss": [], "unanswerable": []}
        for q in load(qfile):
            top = rank(q["question"], [searchable])[0][:1]
            if top:
                group = "hit" if any(section_hits(top[0], g) for g in q["gold_sections"]) else "miss"
                groups[group].append(top[0])
        for q in load(UNANSWERABLE[name]):
            top = rank(q["question"], [searchable])[0][:1]
            if top:
                groups["unanswerable"].append(top[0])
        print(f"\n{name}")
        for group, cands in groups.items():
            labels = Counter(c.verdict for c in cands)
            print(f"  {group:<13} n={len(cands):<3} STRONG {labels['STRONG']:<3} MODERATE {labels['MODERATE']:<3} "
                  f"WEAK {labels['WEAK']:<3} | coverage {quantiles([c.signals['coverage'] for c in cands])} "
                  f"| z {quantiles([c.signals['z'] for c in cands])}")


if __name__ == "__main__":
    main()
