"""Embedding speed of the shipped model: cold load, one query, and bulk chunk throughput.

    .venv/bin/python bench/bench_embed.py [--model SPEC] [--chunks 5000]

Cold load runs in fresh subprocesses (import + load + first encode), so it includes what a
`context query` pays. Throughput embeds realistic chunks (the anthropic-docs eval sections,
repeated) through `embed_text` and `Embedder.encode`, as a package build does. Target on the
2-core machine: > 2,000 chunks/s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from choose_model import EVAL, load_questions, load_sections  # noqa: E402

COLD = """
import time, sys
t0 = time.perf_counter()
from context_cli.embed.model import load_model
t1 = time.perf_counter()
import numpy
t2 = time.perf_counter()
m = load_model({spec!r})
t3 = time.perf_counter()
m.encode(["how do I stream a response"])
t4 = time.perf_counter()
import resource
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def cold_load(spec: str | None, runs: int = 5) -> None:
    rows = []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", COLD.format(spec=spec)], cwd=REPO, check=True,
                             capture_output=True, text=True).stdout.split()
        rows.append([time.perf_counter() - start, *map(float, out)])
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    print(f"cold start (median of {runs}): process wall {med[0] * 1000:.0f} ms, of which import module "
          f"{med[1] * 1000:.0f} ms + import numpy {med[2] * 1000:.0f} ms + load {med[3] * 1000:.0f} ms"
          f" + first encode {med[4] * 1000:.1f} ms; peak RSS {med[5]:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="model spec (default: the shipped model)")
    parser.add_argument("--chunks", type=int, default=5000)
    args = parser.parse_args()

    from context_cli.embed.model import load_model
    from context_cli.embed.text import embed_text

    cold_load(args.model)
    model = load_model(args.model)
    print(f"model {model.name}: dim {model.dim}, fingerprint {model.fingerprint}")

    queries = [q["question"] for q in load_questions(EVAL / "questions.jsonl")]
    times = []
    for q in queries * 3:
        start = time.perf_counter()
        model.encode([q])
        times.append(time.perf_counter() - start)
    times.sort()
    print(f"one query: p50 {times[len(times) // 2] * 1000:.3f} ms, p95 {times[int(len(times) * 0.95)] * 1000:.3f} ms")

    sections = load_sections(EVAL / "corpus")
    chunks = (sections * (args.chunks // len(sections) + 1))[: args.chunks]
    start = time.perf_counter()
    texts = [embed_text(c) for c in chunks]
    t_text = time.perf_counter() - start
    start = time.perf_counter()
    model.encode(texts)
    t_enc = time.perf_counter() - start
    avg = sum(map(len, texts)) / len(texts)
    print(f"{len(chunks)} chunks (embed text avg {avg:.0f} chars): embed_text {t_text * 1000:.0f} ms, "
          f"encode {t_enc * 1000:.0f} ms -> {len(chunks) / (t_text + t_enc):,.0f} chunks/s")
    raw = [c.content for c in chunks]
    start = time.perf_counter()
    model.encode(raw)
    t_raw = time.perf_counter() - start
    print(f"same chunks, whole bodies (avg {sum(map(len, raw)) / len(raw):.0f} chars): "
          f"{len(raw) / t_raw:,.0f} chunks/s")


if __name__ == "__main__":
    main()
