"""Query latency where users feel it.

1. Warm query p50/p95 over about 20,000 chunks in 10 installed packages (target p50 < 5 ms),
   for a search across all packages and for one package.
2. Cold `context search` wall time, a fresh process each run (target < 0.5 s), and
   `context --help` for reference.

Packages are synthesised from the anthropic eval corpus (its sections, re-titled per
package) so the text is realistic; each carries vectors from the shipped model.

    python bench/latency.py
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI does: see context_cli/surfaces/cli.py
SHARED = Path(os.environ.get("CONTEXT_SHARED", ROOT.parent / "shared"))
QUESTIONS = SHARED / "eval" / "anthropic-docs" / "questions.jsonl"
CORPUS = SHARED / "eval" / "anthropic-docs" / "corpus"
N_PACKAGES = 10
CHUNKS_PER_PACKAGE = 2000


def make_packages(home: Path) -> None:
    from context_cli.build import embed_chunks
    from context_cli.chunk.chunker import chunk_document
    from context_cli.package.writer import write_package
    from context_cli.parse import parse_file
    from context_cli.store.store import Store

    base = []
    for f in sorted(CORPUS.rglob("*.md")):
        doc = parse_file(f.relative_to(CORPUS).as_posix(), f.read_bytes())
        base.extend(chunk_document(doc))
    store = Store(home / "packages")
    for p in range(N_PACKAGES):
        chunks = []
        for i in range(CHUNKS_PER_PACKAGE):
            c = base[i % len(base)]
            chunks.append(type(c)(**{**c.__dict__, "doc_path": f"v{i // len(base)}/{c.doc_path}",
                                     "section_title": f"{c.section_title} ({p}.{i})"}))
        vectors, meta = embed_chunks(chunks, None)
        tmp = home / f"p{p}.db"
        write_package(tmp, {"name": f"pkg{p}", "version": "1.0.0", **meta}, chunks, vectors=vectors)
        store.install(tmp)
        tmp.unlink()


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def warm(home: Path) -> None:
    from context_cli.search.engine import search
    from context_cli.store.store import Store

    questions = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines()]
    installed = Store(home / "packages").installed()
    for label, pkgs in (("all 10 packages", installed), ("one package", installed[:1])):
        search(questions[0], pkgs)  # load matrices and model once
        times = []
        for q in questions * 2:
            t0 = time.perf_counter()
            search(q, pkgs)
            times.append((time.perf_counter() - t0) * 1000)
        print(f"warm search, {label:<16} ({sum(1 for _ in pkgs) * CHUNKS_PER_PACKAGE} chunks): "
              f"p50 {statistics.median(times):.2f} ms  p95 {pct(times, 0.95):.2f} ms  over {len(times)} queries")


def cold(home: Path) -> None:
    env = {**os.environ, "CONTEXT_HOME": str(home)}
    exe = [sys.executable, "-m", "context_cli"]
    for label, args in (("context --help", ["--help"]),
                        ("context search (1 pkg)", ["search", "how do I stream a response?", "--lib", "pkg0"]),
                        ("context search (10 pkgs)", ["search", "how do I stream a response?"])):
        times = []
        for _ in range(7):
            t0 = time.perf_counter()
            subprocess.run(exe + args, env=env, check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
        print(f"cold {label:<26} median {statistics.median(times) * 1000:.0f} ms  (min {min(times) * 1000:.0f})")


def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="bench-latency-"))
    os.environ["CONTEXT_HOME"] = str(home)
    sys.path.insert(0, str(ROOT))
    t0 = time.perf_counter()
    make_packages(home)
    print(f"built {N_PACKAGES} packages x {CHUNKS_PER_PACKAGE} chunks in {time.perf_counter() - t0:.1f}s")
    warm(home)
    cold(home)


if __name__ == "__main__":
    main()
