"""Scout: does the quality vector set (all-MiniLM-L6-v2, int8 ONNX) help today's search?

Builds each held-out set with both vector sets (`context add --quality`, the real builder) and
ranks every question three ways with the current engine (`search.engine.rank`):

- `ours`: the shipped static vectors, as searched today (hybrid);
- `swap`: the same hybrid search with the quality set swapped in for the static vectors (its
  model embeds the query), what replacing our vectors in today's fusion gives;
- `fuse`: reciprocal rank fusion (k = 60) of `ours` (weight 2) with the quality set's own
  dense-only ranking (weight 1), over sections;

and, with `--together`, the same over all the sets' packages at once (`get_docs` without a
library). Prints page MRR, Hit@1, Hit@5 per set and query style, per intent (`kind`) over all
sets, a paired bootstrap 95 % interval of each variant's page-MRR change, the build time of
the quality set, query latency and the set's size; `--endpoint` times the endpoint path too.

The quality vectors of each text are cached (--cache, outside the repository): a second run
embeds nothing. The packages are kept in --home and reused when their sets are there.

    python bench/quality_dense.py                      # the six held-out graded sets
    python bench/quality_dense.py --set trpc --together --endpoint

Needs onnxruntime and the model (scripts/make_quality_model.py; CONTEXT_QUALITY_MODEL may name it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from retrieval import SETS, GradedScores, distinct_pages, section_hits  # noqa: E402

HELD_OUT = ("starlight", "trpc", "sphinx", "docker-api", "django", "shadcn")
CACHE = ROOT.parent / "quality-cache"
RRF_K = 60
WEIGHTS = {"ours": 2.0, "quality": 1.0}  # fuse: our ranking counts twice the quality set's
VARIANTS = ("ours", "swap", "fuse")


class CachedEmbedder:
    """The quality model with every text's vector remembered in one file per set (`--cache`)."""

    def __init__(self, inner: Any, path: Path) -> None:
        import numpy as np

        self.inner, self.path = inner, path
        self.name, self.fingerprint = inner.name, inner.fingerprint
        self.known: dict[str, Any] = {}
        if path.exists():
            data = np.load(path)
            self.known = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
        self.embedded, self.seconds = 0, 0.0

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def encode(self, texts: list[str], *, normalize: bool = True) -> Any:
        import numpy as np

        keys = [hashlib.sha1(f"{self.fingerprint}\0{t}".encode()).hexdigest() for t in texts]
        todo = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in self.known}.items())
        if todo:
            t0 = time.perf_counter()
            vectors = self.inner.encode([t for _, t in todo])
            self.seconds += time.perf_counter() - t0
            self.embedded += len(todo)
            self.known.update(zip([k for k, _ in todo], vectors, strict=True))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(self.path, keys=np.array(list(self.known)), vectors=np.vstack(list(self.known.values())))
        return np.vstack([self.known[k] for k in keys]) if keys else np.zeros((0, self.dim), np.float32)


def build_set(name: str, cache: Path) -> tuple[Any, dict[str, Any]]:
    """The set's package with both vector sets (built once per --home), and what building cost."""
    from context_cli.adding import AddRequest, add_source
    from context_cli.embed import quality
    from context_cli.embed.quality_model import load_quality_model
    from context_cli.home import packages_dir
    from context_cli.store.store import Store

    done = next((i for i in Store(packages_dir()).installed() if i.id.name == name), None)
    if done is not None and "quality_model" in done.meta:
        return done, {}
    cached = CachedEmbedder(load_quality_model(), cache / f"{name}.npz")
    real = quality.build_embedder
    quality.build_embedder = lambda settings: cached  # type: ignore[assignment]  # the scout's cache
    try:
        t0 = time.perf_counter()
        res = add_source(AddRequest(source=str(SETS[name][0]), name=name, version="1.0.0", quality=True))
        seconds = time.perf_counter() - t0
    finally:
        quality.build_embedder = real
    assert res.build is not None
    cost = {"sections": res.build.chunks, "build_s": seconds, "embedded": cached.embedded, "embed_s": cached.seconds}
    print(f"[{name}] {res.build.chunks} sections in {seconds:.1f}s, of which the quality set "
          f"{cached.seconds:.1f}s for {cached.embedded} new texts")
    return res.installed, cost


def quality_bytes(path: Path) -> int | None:
    """Bytes the quality table takes in the file (SQLite's dbstat), None where it is not compiled in."""
    import sqlite3

    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        try:
            return int(db.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'quality_vectors'").fetchone()[0])
        except sqlite3.Error:
            return None


class Swap:
    """A searchable's dense side, switchable between its static vectors and the quality set."""

    def __init__(self, s: Any) -> None:
        from context_cli.package.quality import load_quality
        from context_cli.search.dense import VectorIndex

        s.dense()  # load the static side first, as a search would
        self.s, self.static = s, (s._model, s._vectors)
        found, note = load_quality(s.pkg)
        assert found is not None, note
        self.quality = (found.model, VectorIndex(found.ids, found.matrix))

    def use(self, which: str) -> None:
        self.s._model, self.s._vectors = self.quality if which == "quality" else self.static


def rrf(rankings: dict[str, list[Any]]) -> list[Any]:
    scores: dict[tuple[str, int], float] = defaultdict(float)
    first: dict[tuple[str, int], Any] = {}
    for which, ranked in rankings.items():
        for r, c in enumerate(ranked, 1):
            key = (c.library, c.chunk_id)
            scores[key] += WEIGHTS[which] / (RRF_K + r)
            first.setdefault(key, c)
    return [first[k] for k in sorted(scores, key=lambda k: -scores[k])]


def run(swaps: list[Swap], questions: list[dict[str, Any]], own: str | None) -> dict[str, Any]:
    """Every variant's ranking of each question, scored; `own`: the label whose pages count
    (searching several packages), None for one."""
    from context_cli.search.engine import rank

    searched = [w.s for w in swaps]
    per: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    times: dict[str, list[float]] = defaultdict(list)

    def ranked_with(which: str, mode: str, q: str) -> list[Any]:
        for w in swaps:
            w.use(which)
        t0 = time.perf_counter()
        out = rank(q, searched, mode)[0]
        times[f"{which}/{mode}"].append(time.perf_counter() - t0)
        return out

    for q in questions:
        ours = ranked_with("static", "hybrid", q["question"])
        swap = ranked_with("quality", "hybrid", q["question"])
        dense = ranked_with("quality", "dense", q["question"])
        for variant, ranked in (("ours", ours), ("swap", swap), ("fuse", rrf({"ours": ours, "quality": dense}))):
            per[variant].append(_score(q, ranked, own))
    for w in swaps:
        w.use("static")
    return {"per": per, "p50_ms": {k: statistics.median(v) * 1000 for k, v in times.items()}}


def _score(q: dict[str, Any], ranked: list[Any], own: str | None) -> dict[str, Any]:
    grades = q.get("grades") or {p: 2 for p in q["gold"]}
    pages = distinct_pages(ranked, own)
    first = next((i for i, p in enumerate(pages, 1) if grades.get(p) == 2), None)
    secs = q.get("gold_sections") or []
    sec_rank = next((i for i, c in enumerate(ranked, 1) if (own is None or c.library == own)
                     and any(section_hits(c, g, plain_text=True) for g in secs)), None)
    return {"style": q.get("style"), "kind": q.get("kind"), "pages": pages, "grades": grades,
            "rr": 1 / first if first else 0.0, "sec_rank": sec_rank, "has_sections": bool(secs),
            "first_lib": ranked[0].library if ranked else None}


def table(rows: dict[tuple[str, str], dict[str, list[dict[str, Any]]]]) -> str:
    out = ["| set | queries | n | variant | page MRR | Hit@1 | Hit@5 | nDCG@5 | ΔMRR vs ours [95 % CI] |",
           "|---|---|---|---|---|---|---|---|---|"]
    for (name, group), per in rows.items():
        for variant in VARIANTS:
            g = GradedScores()
            for r in per[variant]:
                g.add(r["pages"], r["grades"], r["sec_rank"], r["has_sections"])
            s = g.summary()
            delta = "" if variant == "ours" else _delta(per["ours"], per[variant])
            out.append(f"| {name} | {group} | {s['n']} | {variant} | {s['page_mrr']:.3f} | {s['page_hit@1']:.3f} | "
                       f"{s['page_hit@5']:.3f} | {s['page_ndcg@5']:.3f} | {delta} |")
    return "\n".join(out)


def _delta(base: list[dict[str, Any]], other: list[dict[str, Any]], rounds: int = 2000) -> str:
    """Mean page-RR change with a paired bootstrap 95 % interval."""
    d = [o["rr"] - b["rr"] for b, o in zip(base, other, strict=True)]
    rnd = random.Random(0)
    means = sorted(statistics.fmean(rnd.choices(d, k=len(d))) for _ in range(rounds))
    return f"{statistics.fmean(d):+.3f} [{means[int(0.025 * rounds)]:+.3f}, {means[int(0.975 * rounds)]:+.3f}]"


def groups(name: str, per: dict[str, list[dict[str, Any]]], key: str) -> dict[tuple[str, str], Any]:
    """The rows of `per` split by a question field (style or kind), plus all of them."""
    out = {(name, "all"): per}
    values = sorted({r[key] for r in per["ours"] if r[key]})
    for v in values:
        out[(name, v)] = {variant: [r for r in rs if r[key] == v] for variant, rs in per.items()}
    return out


def latency(swaps: list[Swap], questions: list[dict[str, Any]]) -> dict[str, float]:
    """p50 / p95 ms of embedding one query with each model (warm), over the questions."""
    out = {}
    for which, model in (("static", swaps[0].static[0]), ("quality", swaps[0].quality[0])):
        out[f"{which} p50"], out[f"{which} p95"] = _query_ms(model, questions)
    return out


def _query_ms(model: Any, questions: list[dict[str, Any]]) -> tuple[float, float]:
    """p50 and p95 ms of `model.encode` on one question, warm."""
    model.encode(["warm up"])
    times = []
    for q in questions:
        t0 = time.perf_counter()
        model.encode([q["question"]])
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return times[len(times) // 2], times[int(len(times) * 0.95)]


def endpoint_latency(questions: list[dict[str, Any]], texts: list[str]) -> dict[str, float]:
    """The endpoint path's own cost: the quality model served over loopback as an
    OpenAI-compatible /v1/embeddings (a stand-in for a team's server), queried through
    EndpointEmbedder: p50/p95 ms a query, and sections a second in the build's batches."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from context_cli.embed.endpoint import EndpointConfig, EndpointEmbedder
    from context_cli.embed.quality_model import load_quality_model

    model = load_quality_model()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            rows = model.encode(body["input"]).tolist()
            out = json.dumps({"data": [{"index": i, "embedding": r} for i, r in enumerate(rows)]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        client = EndpointEmbedder(EndpointConfig(f"http://127.0.0.1:{httpd.server_address[1]}/v1", "minilm"))
        p50, p95 = _query_ms(client, questions)
        t0 = time.perf_counter()
        client.encode(texts)
        rate = len(texts) / (time.perf_counter() - t0)
    finally:
        httpd.shutdown()
        httpd.server_close()
    return {"endpoint p50": p50, "endpoint p95": p95, "endpoint sections/s": rate}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--set", dest="sets", action="append", choices=sorted(SETS))
    ap.add_argument("--home", type=Path, default=CACHE / "home", help="CONTEXT_HOME the packages are built into")
    ap.add_argument("--cache", type=Path, default=CACHE / "vectors", help="quality vectors of texts, per set")
    ap.add_argument("--together", action="store_true", help="also search all sets' packages at once")
    ap.add_argument("--endpoint", action="store_true",
                    help="also time the endpoint path (the model served over loopback)")
    ap.add_argument("--json", dest="json_out", type=Path)
    args = ap.parse_args()
    os.environ["CONTEXT_HOME"] = str(args.home)
    from context_cli.embed.quality import quality_text
    from context_cli.package.reader import open_package
    from context_cli.search.searcher import open_searcher

    names = args.sets or list(HELD_OUT)
    built, costs, questions = {}, {}, {}
    for name in names:
        built[name], costs[name] = build_set(name, args.cache)
        qfile = SETS[name][1]
        questions[name] = [json.loads(x) for x in qfile.read_text().splitlines() if x.strip()]
    swaps = {name: Swap(open_searcher(built[name])) for name in names}
    by_style: dict[tuple[str, str], Any] = {}
    every: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    timing = {}
    for name in names:
        res = run([swaps[name]], questions[name], None)
        timing[name] = res["p50_ms"]
        by_style.update(groups(name, res["per"], "style"))
        for v in VARIANTS:
            every[v].extend(res["per"][v])
    print("\n## One library at a time (page metrics)\n")
    print(table({**by_style, **groups("ALL", every, "style")}))
    print("\n## Per intent, all sets\n")
    print(table({k: v for k, v in groups("ALL", every, "kind").items() if k[1] != "all"}))
    results: dict[str, Any] = {"costs": costs, "rank_p50_ms": timing, "embed_query_ms": latency(
        list(swaps.values()), [q for qs in questions.values() for q in qs])}
    if args.together:
        together: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
        wrong = dict.fromkeys(VARIANTS, 0)
        for name in names:
            ordered = [swaps[name], *(swaps[n] for n in names if n != name)]
            res = run(ordered, questions[name], swaps[name].s.label)
            for v in VARIANTS:
                together[v].extend(res["per"][v])
                wrong[v] += sum(r["first_lib"] not in (None, swaps[name].s.label) for r in res["per"][v])
        print(f"\n## Without a library ({len(names)} packages searched together)\n")
        print(table(groups("TOGETHER", together, "style")))
        print("\nfirst result from the wrong library: " + ", ".join(f"{v} {n}" for v, n in wrong.items()))
        results["together_wrong_first"] = wrong
    if args.endpoint:
        with open_package(built[names[0]].path) as pkg:
            texts = [quality_text(c) for _, c in pkg.chunks()][:256]
        results["endpoint"] = endpoint_latency([q for qs in questions.values() for q in qs], texts)
        print("endpoint:", json.dumps(results["endpoint"], default=lambda x: round(x, 2)))
    sizes = {name: {"file": built[name].path.stat().st_size, "quality_table": quality_bytes(built[name].path)}
             for name in names}
    results["sizes"] = sizes
    print("\ncosts:", json.dumps(costs), "\nrank p50 ms:", json.dumps(timing, default=lambda x: round(x, 1)),
          "\nquery embedding ms:", json.dumps(results["embed_query_ms"], default=lambda x: round(x, 2)),
          "\nsizes:", json.dumps(sizes))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=2, default=float))


if __name__ == "__main__":
    main()
