"""Every figure of the performance targets (issue 12) in one run, as one table.

    python bench/run_all.py [--build-runs 3] [--query-runs 10] [--calls 100] [--skip-build]

1. build: `context add` of the Django 5.1.4 docs (its sdist, ~600 pages, ~5,200 sections),
   vectors included: wall time and peak RSS (median and range over --build-runs), package size.
2. cold `context query django "<question>"`, a fresh process per run: p50 over --query-runs.
3. MCP `get_docs` over stdio with the real MCP client, warm: p50/p95 for two-word topics and
   for full questions, on the Django package.
4. warm in-process hybrid search over ten 2,000-section packages: p50/p95.
5. RSS of `context serve` once all ten of those packages are loaded.

Everything built is cached (see common.py): a second run rebuilds only what step 1 times.
Timings on a shared or busy machine are upper bounds; the targets are for a quiet 2-core one.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import bench_mcp
import build
import latency
from common import ROOT, Summary
from django_topics import QUESTIONS, TWO_WORDS

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def row(figure: str, ours: str, spread: str, target: str) -> str:
    return f"| {figure} | {ours} | {spread} | {target} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-runs", type=int, default=3)
    ap.add_argument("--query-runs", type=int, default=10)
    ap.add_argument("--calls", type=int, default=100, help="get_docs calls per topic kind")
    ap.add_argument("--skip-build", action="store_true", help="reuse the cached Django package, do not time builds")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    started = time.perf_counter()
    rows = ["| figure | ours (p50) | spread | target |", "|---|---|---|---|"]

    def say(step: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {step}", file=sys.stderr, flush=True)

    if args.skip_build:
        home = build.django_home()
    else:
        say(f"building the Django docs {args.build_runs}x")
        secs, rss, size, home = build.django_builds(args.build_runs)
        rows += [row("build Django docs (`add`, vectors)", f"{secs.p50:.1f} s", secs.spread("s"), "≤ 7.7 s"),
                 row("peak RSS of that build", f"{rss.p50:.0f} MB", rss.spread("MB", ".0f"), "≤ +20 % of before"),
                 row("package size", f"{size:.1f} MB", "-", "≤ 1.25× peer (8.1 MB on the issue's tree)")]
    say("cold query")
    cold = latency.cold_query(home, "django", QUESTIONS, args.query_runs)
    helps = latency.cold(home, ["--help"], 5)
    rows += [row("cold `context query django \"<question>\"`", f"{cold.p50:.3f} s", cold.spread("s", ".3f"), "≤ 0.35 s"),
             row("cold `context --help` (floor)", f"{helps.p50:.3f} s", helps.spread("s", ".3f"), "-")]
    say("MCP get_docs over stdio")
    mcp: dict[str, Summary] = bench_mcp.latency(home, "django", {"2-word topics": TWO_WORDS, "full questions": QUESTIONS},
                                                args.calls)
    for label, target in (("2-word topics", "≤ 6 ms"), ("full questions", "≤ 4 ms")):
        s = mcp[label]
        rows += [row(f"MCP `get_docs` warm, stdio, {label}", f"{s.p50:.1f} ms (p95 {s.p95:.1f})",
                     s.spread("ms"), target)]
    say("ten 2,000-section packages")
    ten = latency.ten_packages_home()
    warm = latency.warm(ten)
    rows += [row("warm search, 10 × 2,000 sections, hybrid", f"{warm.all.p50:.1f} ms (p95 {warm.all.p95:.1f})",
                 warm.all.spread("ms"), "≤ 5 ms p50, ≤ 8 ms p95"),
             row("the same at the host's fastest pace (`common.pace_ms`)", f"{warm.quiet.p50:.1f} ms (p95 {warm.quiet.p95:.1f})",
                 f"n={warm.quiet.n}, pace {warm.pace.low:.1f}-{warm.pace.high:.1f} ms", "≤ 5 ms p50, ≤ 8 ms p95")]
    say("serve RSS")
    rss_now, rss_peak = bench_mcp.serve_rss(ten, QUESTIONS[:5])
    rows += [row("RSS of `context serve`, 10 packages loaded", f"{rss_now:.0f} MB", f"peak {rss_peak:.0f} MB",
                 "≤ +20 % of before")]
    say("done")
    print("\n".join(rows))
    print(f"\n{time.perf_counter() - started:.0f} s in all; a busy machine makes every time an upper bound.")


if __name__ == "__main__":
    main()
