"""Stage recall: at which step of a search the gold page is lost.

For each question (each set's package searched alone, hybrid), whether a grade-2 page is
among the pages of: BM25's top 10 and top 50 sections, the dense side's top 10 and top 50,
the union of the two top 50s, the fused pool (`candidates.fuse_rankings`, capped as one package's search
caps it), the judged candidates (`engine.rank`), their first 10 pages, and the pack
(`engine.answer`, default budget). A question whose gold is in the union but not in the fused
pool was lost by fusion; one in the pool but not judged, by the evidence ranking.

Read-only use of today's search: `PackageSearcher.lexical` (the same BM25 the engine runs, with
the library's name stripped as the engine does), the package's vectors and model
(`PackageSearcher.dense`, cosines and z-scores as `scoring.start_dense` computes them: that step is
not public, so it is redone here from `VectorIndex.scores` and `dense.standardise`), then the
public `candidates.fuse_rankings`, `engine.rank` and `engine.answer`.

    python bench/stage_recall.py --home H                 # every set, packages built into H
    python bench/stage_recall.py --home H --set django --set fastapi --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import retrieval  # noqa: E402

STAGES = ("bm25@10", "bm25@50", "dense@10", "dense@50", "union@50", "fused", "judged", "judged@10", "pack")


def stages(installed: Any, query: str) -> dict[str, set[str]]:
    """The pages each stage holds for `query` over one package."""
    import numpy as np

    from context_cli.search.candidates import fuse_rankings
    from context_cli.search.dense import standardise
    from context_cli.search.engine import answer, rank
    from context_cli.search.options import DEFAULT_PARAMS
    from context_cli.search.query import Query
    from context_cli.search.searcher import open_searcher

    pool = DEFAULT_PARAMS.pool
    s = open_searcher(installed)
    words = Query.of(query).without_library(s.name)
    lex_ids, lex_scores = s.lexical(words, pool)
    dense = s.dense()
    dense_ids = np.zeros(0, dtype=np.int64)
    dense_z = np.zeros(0, dtype=np.float64)
    if dense is not None:
        model, index = dense
        scores = index.scores(model.encode([query])[0].astype("float32"))
        rows = index.top_rows(scores, pool)
        dense_ids = index.ids[rows].astype(np.int64)
        dense_z = standardise(scores, [(0, len(scores))])[0].z(rows)
    fused = fuse_rankings([(np.asarray(lex_ids, dtype=np.int64), np.asarray(lex_scores, dtype=np.float64), dense_ids,
                            dense_z)], [None], DEFAULT_PARAMS.page_pool * DEFAULT_PARAMS.judged, DEFAULT_PARAMS)
    ids = {int(i) for i in [*lex_ids, *dense_ids, *fused.chunk_id]}
    page = {cid: c.doc_path for cid, c in s.texts(sorted(ids))}

    def pages(cids: Any) -> set[str]:
        return {page[int(c)] for c in cids if int(c) in page}

    ranked, _, _ = rank(query, [s], "hybrid")
    judged = retrieval.distinct_pages(ranked)
    return {
        "bm25@10": pages(lex_ids[:10]), "bm25@50": pages(lex_ids[:50]),
        "dense@10": pages(dense_ids[:10]), "dense@50": pages(dense_ids[:50]),
        "union@50": pages(lex_ids[:50]) | pages(dense_ids[:50]),
        "fused": pages(fused.chunk_id), "judged": set(judged), "judged@10": set(judged[:10]),
        "pack": {h.source for h in answer(query, [installed]).results},
    }


def recall(installed: Any, questions: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per group ("all" and each style): the share of questions whose gold reaches each stage,
    and how many were lost between the union and the fused pool, and the pool and judging."""
    out: dict[str, dict[str, float]] = {}
    for q in questions:
        got = stages(installed, q["question"])
        gold = {p for p, g in (q.get("grades") or {p: 2 for p in q["gold"]}).items() if g == 2}
        hit = {k: bool(gold & v) for k, v in got.items()}
        hit["lost in fusion"] = hit["union@50"] and not hit["fused"]
        hit["lost in judging"] = hit["fused"] and not hit["judged"]
        hit["dense@10 only, lost"] = (bool(gold & got["dense@10"]) and not hit["bm25@50"]
                                     and not hit["judged@10"])
        for group in ("all", q.get("style")):
            if group:
                row = out.setdefault(group, {"n": 0})
                row["n"] += 1
                for k, v in hit.items():
                    row[k] = row.get(k, 0) + v
    return {g: {k: (v if k == "n" else v / row["n"]) for k, v in row.items()} for g, row in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    retrieval.set_options(ap)
    args = ap.parse_args()
    names = retrieval.chosen_sets(args)
    table: dict[str, dict[str, dict[str, float]]] = {}
    cols = [*STAGES, "lost in fusion", "lost in judging", "dense@10 only, lost"]
    print("| set | queries | n | " + " | ".join(cols) + " |")
    print("|---|---|---|" + "---|" * len(cols))
    for name in names:
        installed = retrieval.set_package(name, reuse=args.home is not None)
        table[name] = recall(installed, retrieval.load_questions(retrieval.SETS[name][1]))
        for group, row in table[name].items():
            print(f"| {name} | {group} | {int(row['n'])} | " + " | ".join(f"{row[c]:.3f}" for c in cols) + " |",
                  flush=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
