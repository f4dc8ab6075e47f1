"""Package prior, offline: does `search/prior.py` pick a query's library, and what would it buy?

Over the cross-library set's packages (or, with `--together`, every graded set's questions
over all their packages), for each question:

- which library today's search (`engine.rank`, all packages, no library) puts first;
- which library each prior picks: today's (`rank.package_priors`'s evidence, the best
  cosine of each package, redone here from the vectors), and `prior.scores` (name, vocabulary,
  centroid, and each part alone);
- a simulated re-weighting: the ranked list today's search returns, each candidate's score
  multiplied by `prior.weights(...)[its package]`, re-sorted; page MRR and Hit@1 of the gold
  page (own library only) before and after. The judged pool is today's (30 sections over all
  packages), so a package the prior would lift but whose sections were not judged cannot gain:
  a lower bound of what wiring the prior into the fusion would give.

    python bench/scout_prior.py --home H            # crosslib
    python bench/scout_prior.py --home H --together # every set's questions over the 12 packages
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import retrieval  # noqa: E402

STRENGTHS = (0.5, 1.0, 2.0)


def signatures(installed: dict[str, Any]) -> tuple[list[str], list[Any], list[Any]]:
    """(library names, their `prior.Signature`s, their searchables)."""
    from context_cli.search.prior import signature
    from context_cli.search.searcher import open_searcher

    names, sigs, searchables = [], [], []
    for lib, inst in installed.items():
        s = open_searcher(inst)
        rows = s.pkg.db.execute("SELECT term, df FROM bm25_terms").fetchall()
        n = s.pkg.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        dense = s.dense()
        vectors = dense[1].matrix if dense else None
        sigs.append(signature(lib, rows, n, vectors, s.pkg.meta.get("embedding_model", "")))
        names.append(lib)
        searchables.append(s)
    return names, sigs, searchables


def mrr_hit1(ranked: list[tuple[str, str]], lib: str, gold: set[str]) -> tuple[float, float]:
    pages = list(dict.fromkeys(ranked))
    first = next((i for i, (lb, p) in enumerate(pages, 1) if lb == lib and p in gold), None)
    return (1 / first if first else 0.0), float(first == 1)


def evaluate(questions: list[dict[str, Any]], installed: dict[str, Any],
             weighted: tuple[float, float, float] | None = None) -> dict[str, float]:
    import numpy as np

    from context_cli.package.bm25 import stemmer
    from context_cli.search.engine import rank
    from context_cli.search.prior import CENTROID_WEIGHT, NAME_WEIGHT, VOCAB_WEIGHT, scores, weights
    from context_cli.search.query import terms, words

    names, sigs, searchables = signatures(installed)
    label = {s.label: n for n, s in zip(names, searchables, strict=True)}
    model, _ = searchables[0].dense()
    model_name = sigs[0].model
    tot: dict[str, float] = {}

    def add(key: str, v: float) -> None:
        tot[key] = tot.get(key, 0.0) + v

    wn, wv, wc = weighted or (NAME_WEIGHT, VOCAB_WEIGHT, CENTROID_WEIGHT)
    parts = {"prior": (wn, wv, wc), "name only": (wn, 0.0, 0.0), "vocab only": (0.0, wv, 0.0),
             "centroid only": (0.0, 0.0, wc)}
    for q in questions:
        text, lib = q["question"], q["lib"]
        gold = {p for p, g in (q.get("grades") or {p: 2 for p in q["gold"]}).items() if g == 2}
        qv = model.encode([text])[0].astype("float32")
        stems = [t for ts in stemmer().tokens(terms(text)).values() for t in ts]
        ranked, _, _ = rank(text, searchables, "hybrid")
        add("n", 1)
        add("first result wrong library", float(bool(ranked) and label[ranked[0].library] != lib))
        peaks = [float(np.max(s.dense()[1].scores(qv))) for s in searchables]
        add("today's prior (best cosine) right", float(names[int(np.argmax(peaks))] == lib))
        for part, weights_of_part in parts.items():
            sc = scores(words(text), stems, sigs, qv, model_name, weights_of_part)
            add(f"{part} right", float(names[int(np.argmax(sc))] == lib))
            if part != "prior":
                continue
            base = [(label[c.library], c.doc_path) for c in ranked]
            m, h = mrr_hit1(base, lib, gold)
            add("MRR as returned", m)
            add("Hit@1 as returned", h)
            for strength in STRENGTHS:
                w = dict(zip(names, weights(sc, strength), strict=True))
                order = sorted(range(len(ranked)), key=lambda i: -ranked[i].score * w[label[ranked[i].library]])
                m, h = mrr_hit1([base[i] for i in order], lib, gold)
                add(f"first result wrong library, re-weighted x{strength}", float(bool(order) and base[order[0]][0] != lib))
                add(f"MRR re-weighted x{strength}", m)
                add(f"Hit@1 re-weighted x{strength}", h)
            order = sorted(range(len(ranked)), key=lambda i: -ranked[i].score)
            m, _ = mrr_hit1([base[i] for i in order], lib, gold)
            add("MRR re-sorted, no weights", m)
        # with the right library alone: the target the prior aims at
        alone, _, _ = rank(text, [searchables[names.index(lib)]], "hybrid")
        m, h = mrr_hit1([(lib, c.doc_path) for c in alone], lib, gold)
        add("MRR with lib", m)
        add("Hit@1 with lib", h)
    n = tot.pop("n")
    return {"n": n, **{k: v / n for k, v in tot.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--home", type=Path)
    ap.add_argument("--together", action="store_true", help="every graded set's questions, not crosslib's")
    ap.add_argument("--parts", nargs=3, type=float, metavar=("NAME", "VOCAB", "CENTROID"),
                    help="weights of the prior's evidence (default: prior.py's)")
    args = ap.parse_args()
    os.environ["CONTEXT_HOME"] = str(args.home or tempfile.mkdtemp(prefix="bench-home-"))
    cross = retrieval.load_questions(retrieval.CROSS["crosslib"])
    libs = sorted({q["lib"] for q in cross})
    installed = {lib: (retrieval._built(lib) if args.home else None) or retrieval.build(lib, retrieval.SETS[lib][0], True)
                 for lib in libs}
    if args.together:
        questions = [dict(q, lib=lib) for lib in libs for q in retrieval.load_questions(retrieval.SETS[lib][1])]
    else:
        questions = cross
    out = evaluate(questions, installed, tuple(args.parts) if args.parts else None)
    print(f"{'crosslib' if not args.together else 'together'}: {int(out.pop('n'))} questions over {len(libs)} packages")
    for k, v in out.items():
        print(f"| {k} | {v:.3f} |")


if __name__ == "__main__":
    main()
