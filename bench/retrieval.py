"""Retrieval quality: page and section Recall@1/5/10 and MRR, lexical vs dense vs hybrid.

Builds each question set's corpus into a package (with vectors, in a temp CONTEXT_HOME),
ranks every question with the real engine, and scores the ranking against gold sections.

    python bench/retrieval.py                 # every set found
    python bench/retrieval.py --set anthropic --modes lexical hybrid
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI does: see context_cli/surfaces/cli.py
SHARED = Path(os.environ.get("CONTEXT_SHARED", ROOT.parent / "shared"))
SETS = {
    "anthropic": (SHARED / "eval" / "anthropic-docs" / "corpus", SHARED / "eval" / "anthropic-docs" / "questions.jsonl"),
    "click": (ROOT / "bench" / "sets" / "click" / "corpus", ROOT / "bench" / "sets" / "click" / "questions.jsonl"),
    "flask": (ROOT / "bench" / "sets" / "flask" / "corpus", ROOT / "bench" / "sets" / "flask" / "questions.jsonl"),
}
KS = (1, 5, 10)
_PART = re.compile(r" \(part \d+\)$")


@dataclass
class Scores:
    n: int = 0
    page_mrr: float = 0.0
    sec_mrr: float = 0.0
    page_recall: dict | None = None
    sec_recall: dict | None = None

    def __post_init__(self) -> None:
        self.page_recall = {k: 0.0 for k in KS}
        self.sec_recall = {k: 0.0 for k in KS}

    def row(self, label: str) -> str:
        n = max(self.n, 1)
        pr = " ".join(f"{self.page_recall[k] / n:.3f}" for k in KS)
        sr = " ".join(f"{self.sec_recall[k] / n:.3f}" for k in KS)
        return f"{label:<10} {self.page_mrr / n:.3f}  {pr}   {self.sec_mrr / n:.3f}  {sr}"


def section_hits(chunk, gold: dict) -> bool:
    """Does a ranked chunk stand for a gold section (by path and heading)?"""
    if chunk.doc_path != gold["path"]:
        return False
    heading = gold["heading"].strip()
    parts = [_PART.sub("", p).strip() for p in chunk.section_title.split(" > ")]
    parts = [p for part in parts for p in part.split(" + ")]
    if heading in parts:
        return True
    if heading == chunk.doc_title and parts[0] == "Introduction":
        return True
    return re.search(r"^#{1,6} " + re.escape(heading) + r"\s*$", chunk.content, re.M) is not None


def evaluate(installed, questions: list[dict], mode: str) -> tuple[Scores, float]:
    from context_cli.search.engine import rank
    from context_cli.search.index import open_searchable

    s = open_searchable(installed)
    scores = Scores()
    times = []
    for q in questions:
        t0 = time.perf_counter()
        ranked, _, _ = rank(q["question"], [s], mode)
        times.append(time.perf_counter() - t0)
        top = ranked[:max(KS)]
        scores.n += 1
        pages: list[str] = []
        for c in top:
            if c.doc_path not in pages:
                pages.append(c.doc_path)
        gold_pages = set(q["gold"])
        first = next((i for i, p in enumerate(pages, 1) if p in gold_pages), None)
        scores.page_mrr += 1 / first if first else 0
        for k in KS:
            scores.page_recall[k] += len(gold_pages & set(pages[:k])) / len(gold_pages)
        gold_secs = q["gold_sections"]
        hit_rank = [next((i for i, c in enumerate(top, 1) if section_hits(c, g)), None) for g in gold_secs]
        found = [r for r in hit_rank if r]
        scores.sec_mrr += 1 / min(found) if found else 0
        for k in KS:
            scores.sec_recall[k] += sum(1 for r in hit_rank if r and r <= k) / len(gold_secs)
    times.sort()
    return scores, times[len(times) // 2] * 1000


def build(name: str, corpus: Path, embed: bool):
    from context_cli.adding import AddRequest, add_source

    t0 = time.perf_counter()
    res = add_source(AddRequest(source=str(corpus), name=f"{name}-eval", version="1.0.0", embed=embed))
    print(f"[{name}] built {res.build.chunks} sections from {res.build.pages} pages in "
          f"{time.perf_counter() - t0:.1f}s ({'vectors: ' + str(res.build.embedding_model) if embed else 'no vectors'})")
    return res.installed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", dest="sets", action="append", choices=sorted(SETS))
    ap.add_argument("--modes", nargs="+", default=["lexical", "dense", "hybrid"])
    ap.add_argument("--json", dest="json_out", type=Path, help="also write the scores here")
    args = ap.parse_args()
    os.environ["CONTEXT_HOME"] = tempfile.mkdtemp(prefix="bench-home-")
    sys.path.insert(0, str(ROOT))
    results = {}
    for name in args.sets or [n for n, (c, q) in SETS.items() if q.exists()]:
        corpus, qfile = SETS[name]
        questions = [json.loads(line) for line in qfile.read_text().splitlines() if line.strip()]
        installed = build(name, corpus, embed=any(m != "lexical" for m in args.modes))
        print(f"\n{name}: {len(questions)} questions")
        print(f"{'mode':<10} {'page MRR':<8} {'R@1   R@5   R@10':<19}   {'sec MRR':<7} R@1   R@5   R@10")
        for mode in args.modes:
            sc, p50 = evaluate(installed, questions, mode)
            print(sc.row(mode) + f"   (p50 {p50:.1f} ms)")
            n = max(sc.n, 1)
            results[f"{name}/{mode}"] = {
                "page_mrr": sc.page_mrr / n, "section_mrr": sc.sec_mrr / n,
                **{f"page_r@{k}": sc.page_recall[k] / n for k in KS},
                **{f"section_r@{k}": sc.sec_recall[k] / n for k in KS},
            }
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
