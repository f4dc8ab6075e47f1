"""Learning to rank, offline: every judged section's features with its page's grade, a
listwise fit on the tuning sets, and the ranking it would give.

    python bench/rerank_features.py dump --home H --set django ... --out F.jsonl   # the features
    python bench/rerank_features.py fit F.jsonl [--features a,b,...] [--held-out]  # fit and score

`dump` ranks each set's questions with the real engine (each set's package alone, the default
parameters) and writes, per question, its judged sections in rank order: each one's features
(`FEATURES`), its final score and its page's grade. `fit` learns weights w for
final' = final + w . f (features scaled by their spread on the tuning questions; `final`
itself is a feature, so the fit can also sharpen or flatten the current score) that make a
gold page's section likeliest first (`fit`), re-ranks each question's judged sections and
reports page MRR and Hit@1 per set and style, before and after: each tuning set scored with
a fit that left it out, the held-out sets (only with --held-out) with the fit on all tuning
sets. A re-ranker of the judged sections can do no better than the share of questions whose
gold page is among them (`ceiling`)."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
from retrieval import SETS, load_questions  # noqa: E402
from setinfo import HELD_OUT, TUNING  # noqa: E402

FEATURES = ("fused", "lex", "dense", "lex_rank", "dense_rank", "next", "title", "closeness", "gain", "coverage",
            "page_coverage", "reference", "changelog", "log_chars", "best_of_page", "page_candidates", "depth",
            "heading_terms", "bigrams", "first_on_page", "page_union", "share_of_page", "heading_cosine", "final")  # (`final`: added when read, the score itself)
_WORD = re.compile(r"\w+")


def dump_set(name: str, questions: list[dict[str, Any]], installed: Any) -> list[dict[str, Any]]:
    """Each question's judged sections, best first, with their features and grades."""
    from context_cli.search.engine import ranked
    from context_cli.search.options import SearchOptions
    from context_cli.search.pack import read_sections
    from context_cli.search.query import Query
    from context_cli.search.run import READING, SearchRun
    from context_cli.search.searcher import open_searcher

    searcher = open_searcher(installed)
    out = []
    for q in questions:
        query = Query.of(q["question"])
        run = SearchRun.of([searcher], query)
        ranking = ranked(query, run, SearchOptions())
        run.phase = READING
        texts = read_sections(ranking, range(len(ranking)), query, run)
        grades = q.get("grades") or {p: 2 for p in q["gold"]}
        rows = features(ranking, run, texts)
        out.append({"set": name, "id": q.get("id"), "style": q.get("style", "question"), "kind": q.get("kind"),
                    "rows": [{"page": t.doc_path, "grade": grades.get(t.doc_path, 0), "final": s, "f": f}
                             for t, s, f in zip(texts, ranking.score.tolist(), rows, strict=True)]})
    return out


def features(ranking: Any, run: Any, texts: list[Any]) -> list[list[float]]:
    """`FEATURES` of each judged section of a one-package ranking, in rank order."""
    import numpy as np

    c, rows = ranking.candidates, ranking.rows
    pq = run.packages[0]
    query = pq.query
    stems = query.stems.terms
    lex_ids, lex_scores = pq.lexical.ids.tolist(), pq.lexical.scores.tolist()
    top = (lex_scores[0] or 1.0) if lex_scores else 1.0
    lex = {cid: (s / top, k) for k, (cid, s) in enumerate(zip(lex_ids, lex_scores, strict=True))}
    dense_ids, dense_z = pq.dense.top(50) if pq.dense is not None else (np.zeros(0), np.zeros(0))
    dense = {int(cid): (float(z), k) for k, (cid, z) in enumerate(zip(dense_ids.tolist(), dense_z.tolist(), strict=True))}
    page = c.page
    # Each page's fused scores among all its candidates, best first.
    per_page: dict[int, list[float]] = {}
    for p, f in zip(page.tolist(), c.fused.tolist(), strict=True):
        per_page.setdefault(p, []).append(f)
    for v in per_page.values():
        v.sort(reverse=True)
    page_cov: dict[int, float] = {}
    for r in rows.tolist():
        page_cov[int(page[r])] = max(page_cov.get(int(page[r]), 0.0), float(c.coverage[r]))
    kinds = pq.searcher.page_kinds() or {}
    bigrams = _bigrams(query)
    idf = pq.lexical.idf
    total_idf = sum(idf.values()) or 1.0
    held = [_held(query, text.content + " " + text.section_title) for text in texts]
    union: dict[int, set[str]] = {}
    for r, terms in zip(rows.tolist(), held, strict=True):
        union.setdefault(int(page[r]), set()).update(terms)
    cosines = _heading_cosines(pq, [t.title for t in texts])
    seen: set[int] = set()
    out = []
    for r, text, terms, cosine in zip(rows.tolist(), texts, held, cosines, strict=True):
        p, cid = int(page[r]), int(c.chunk_id[r])
        fused = float(c.fused[r])
        best = per_page[p]
        lv, lk = lex.get(cid, (0.0, None))
        dz, dk = dense.get(cid, (0.0, None))
        kind = kinds.get(c.paths[p], "guide")
        heading = set(_stemmed(text.section_title))
        words = [w.lower() for w in _WORD.findall(text.content)]
        out.append([
            fused, lv, min(max(dz, 0.0), 6.0) / 6.0,
            1 / (1 + lk) if lk is not None else 0.0, 1 / (1 + dk) if dk is not None else 0.0,
            0.25 * (best[1] if len(best) > 1 else 0) + 0.1 * (best[2] if len(best) > 2 else 0),
            float(c.title_match[p]), float(c.closeness[p]) if c.closeness is not None else 0.0,
            float(c.heading_gain[r]), float(c.coverage[r]), page_cov[p],
            float(kind == "reference"), float(kind == "changelog"),
            math.log1p(float(c.chars[r])), float(fused >= best[0]), math.log1p(len(best)),
            float(text.section_title.count(" > ")),
            len(heading & stems) / max(len(stems), 1),
            _bigram_share(bigrams, words),
            float(p not in seen),
            sum(idf.get(t, 0.0) for t in union[p]) / total_idf,
            sum(idf.get(t, 0.0) for t in terms) / max(sum(idf.get(t, 0.0) for t in union[p]), 1e-9),
            cosine,
        ])
        seen.add(p)
    return out


def _heading_cosines(pq: Any, titles: list[str]) -> list[float]:
    """The query's cosine with each section's page and heading titles ("Page > Section"),
    embedded by the package's own model (0 without one)."""
    found = pq.searcher.dense()
    if found is None or not titles:
        return [0.0] * len(titles)
    vectors = found[0].encode([pq.query.text, *titles])
    return (vectors[1:] @ vectors[0]).tolist()  # type: ignore[no-any-return]


def _held(query: Any, text: str) -> set[str]:
    """The query's terms whose index tokens the text holds."""
    tokens = set(_stemmed(text))
    return {t for t, stems in query.stems.per_term.items() if stems and stems <= tokens}


def _stemmed(text: str) -> list[str]:
    from context_cli.package.bm25 import stemmer

    found = stemmer().tokens(tuple(w.lower() for w in _WORD.findall(text)))
    return [t for ts in found.values() for t in ts]


def _bigrams(query: Any) -> set[tuple[str, str]]:
    """The query's adjacent term pairs, lower-cased."""
    terms = [t.lower() for t in query.terms]
    return {(a, b) for a, b in zip(terms, terms[1:], strict=False)}


def _bigram_share(bigrams: set[tuple[str, str]], words: list[str]) -> float:
    """The share of the query's adjacent term pairs that stand adjacent in the text (a
    stopword between them allowed)."""
    if not bigrams:
        return 0.0
    found = set(zip(words, words[1:], strict=False)) | set(zip(words, words[2:], strict=False))
    return len(bigrams & found) / len(bigrams)


def page_order(rows: list[dict[str, Any]], score: list[float]) -> list[dict[str, Any]]:
    """The distinct pages of the rows ranked by `score` (ties: the rows' order)."""
    order = sorted(range(len(rows)), key=lambda k: -score[k])
    seen, pages = set(), []
    for k in order:
        if rows[k]["page"] not in seen:
            seen.add(rows[k]["page"])
            pages.append(rows[k])
    return pages


def reciprocal_rank(rows: list[dict[str, Any]], score: list[float]) -> float:
    first = next((i for i, r in enumerate(page_order(rows, score), 1) if r["grade"] == 2), None)
    return 1 / first if first else 0.0


def lists(records: list[dict[str, Any]], cols: list[int]) -> list[tuple[Any, Any, Any]]:
    """Per question with a gold page among its judged sections: every judged section's current
    score, its chosen features, and whether its page is a gold one."""
    import numpy as np

    out = []
    for rec in records:
        gold = np.array([r["grade"] == 2 for r in rec["rows"]])
        if gold.any() and not gold.all():
            out.append((np.array([r["final"] for r in rec["rows"]]), np.array([[r["f"][c] for c in cols] for r in rec["rows"]]),
                        gold))
    return out


def fit(records: list[dict[str, Any]], cols: list[int], scale: Any, l2: float, sharpness: float = 20.0) -> Any:
    """Weights w (on scaled features) for final + w . f that make a gold page's section likeliest
    first: the chance that the first of a softmax over the judged sections (scores x
    `sharpness`) is a gold page's, its log's mean over the questions less l2 |w|^2, maximised
    by Newton steps (the softmax's covariance as the curvature) with a backtracking line."""
    import numpy as np

    data = [(base * sharpness, x / scale * sharpness, gold) for base, x, gold in lists(records, cols)]
    n = len(data)

    def loss_grad(w: Any, curvature: bool = True) -> tuple[float, Any, Any]:
        loss, grad, hess = l2 * w @ w, 2 * l2 * w, 2 * l2 * np.eye(len(w))
        for base, x, gold in data:
            s = base + x @ w
            e = np.exp(s - s.max())
            p = e / e.sum()
            q = np.where(gold, p, 0.0)
            q_sum = q.sum()
            loss -= np.log(max(q_sum, 1e-300)) / n
            mean, gold_mean = p @ x, (q @ x) / max(q_sum, 1e-300)
            grad += (mean - gold_mean) / n
            if curvature:
                hess += ((x.T * p) @ x - np.outer(mean, mean)) / n
        return loss, grad, hess

    w = np.zeros(len(cols))
    for _ in range(40):
        loss, grad, hess = loss_grad(w)
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while loss_grad(w - t * step, False)[0] > loss - 0.25 * t * grad @ step and t > 1e-4:
            t /= 2
        w = w - t * step
        if abs(grad @ step) < 1e-9:
            break
    return w


def rescored(rec: dict[str, Any], cols: list[int], scale: Any, w: Any) -> list[float]:
    return [r["final"] + sum(w[k] * r["f"][c] / scale[k] for k, c in enumerate(cols)) for r in rec["rows"]]


def report(records: list[dict[str, Any]], cols: list[int], l2: float, sharpness: float) -> None:
    """Page MRR and Hit@1 per set and style, before and after: tuning sets left out of their
    own fit, the held-out sets scored with the fit on all tuning sets."""
    import numpy as np

    tuning = [r for r in records if r["set"] in TUNING]
    every = np.array([r["f"] for rec in tuning for r in rec["rows"]])
    scale = every[:, cols].std(axis=0) + 1e-9
    w_all = fit(tuning, cols, scale, l2, sharpness)
    print("weights (per spread):", ", ".join(f"{FEATURES[c]} {v:+.3f}" for c, v in zip(cols, w_all, strict=True)))
    print("weights (raw):", ", ".join(f"{FEATURES[c]} {v / s:+.4f}" for c, v, s in zip(cols, w_all, scale, strict=True)))
    pooled: dict[str, list[int]] = {}
    for name in dict.fromkeys(r["set"] for r in records):
        w = fit([r for r in tuning if r["set"] != name], cols, scale, l2, sharpness) if name in TUNING else w_all
        for style in ("question", "keyword"):
            recs = [r for r in records if r["set"] == name and r["style"] == style]
            if not recs:
                continue
            before = [reciprocal_rank(r["rows"], [x["final"] for x in r["rows"]]) for r in recs]
            after = [reciprocal_rank(r["rows"], rescored(r, cols, scale, w)) for r in recs]
            b1, a1 = sum(x == 1 for x in before) / len(recs), sum(x == 1 for x in after) / len(recs)
            print(f"{name:15} {style:8} n={len(recs):3}  MRR {sum(before) / len(recs):.3f} -> {sum(after) / len(recs):.3f}"
                  f"  Hit@1 {b1:.3f} -> {a1:.3f}")
            group = ("held-out " if name in HELD_OUT else "tuning ") + style
            counts = pooled.setdefault(group, [0, 0, 0, 0])
            counts[0] += len(recs)
            counts[1] += sum(x == 1 for x in before)
            counts[2] += sum(x == 1 for x in after)
            counts[3] += sum(ceiling(r["rows"]) for r in recs)
    for group, (n, b, a, c) in pooled.items():
        print(f"pooled {group}: Hit@1 {b / n:.3f} -> {a / n:.3f}, at most {c / n:.3f} (n={n})")


def ceiling(rows: list[dict[str, Any]]) -> bool:
    """Whether a re-ranker of these judged sections could put a gold page first."""
    return any(r["grade"] == 2 for r in rows)


def main() -> None:
    import os

    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--home", type=Path, required=True)
    d.add_argument("--set", dest="sets", action="append", required=True, choices=sorted(SETS))
    d.add_argument("--out", type=Path, required=True)
    f = sub.add_parser("fit")
    f.add_argument("dumped", type=Path)
    f.add_argument("--features", default=",".join(FEATURES))
    f.add_argument("--l2", type=float, default=0.01)
    f.add_argument("--sharpness", type=float, default=20.0)
    f.add_argument("--held-out", action="store_true", help="also score the held-out sets (once, at the end)")
    args = ap.parse_args()
    if args.command == "dump":
        os.environ["CONTEXT_HOME"] = str(args.home)
        from retrieval import _built

        with args.out.open("w") as out:
            for name in args.sets:
                for rec in dump_set(name, load_questions(SETS[name][1]), _built(name)):
                    out.write(json.dumps(rec) + "\n")
        return
    records = [json.loads(line) for line in args.dumped.read_text().splitlines()]
    for rec in records:
        for r in rec["rows"]:
            r["f"].append(r["final"])
    if not args.held_out:
        records = [r for r in records if r["set"] not in HELD_OUT]
    report(records, [FEATURES.index(n) for n in args.features.split(",")], args.l2, args.sharpness)


if __name__ == "__main__":
    main()
