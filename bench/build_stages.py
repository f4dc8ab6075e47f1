"""Where a build's CPU goes: one in-process build of a docs tree, split into its stages.

    python bench/build_stages.py                           # the Django 5.1.4 docs, 3 runs
    python bench/build_stages.py --runs 5 --baseline ../other-checkout   # before/after, alternating
    python bench/build_stages.py --tree DIR

Each run is a fresh process that builds the tree with `build()` and no worker processes (so
every stage runs in it, as on a machine with one core), with thread CPU time taken around the
functions each stage is: reading the files and rewriting their references, the fast reST
reader, docutils, the rest of parsing (decoding, splitting, Markdown), chunking, embedding,
BM25 counting (of it the token streams phrases need), and the package write (the main
thread's part, and the helper thread's postings, merged and encoded while SQLite builds the
full-text index). `--baseline DIR` runs another checkout of ours the same way, alternately.
Figures are medians of the runs. Workers' pickling and process start-up are not in these
figures (`bench/build.py` and `bench/peer.py` time whole `context add` processes).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import DJANGO, ROOT, docs_tree

# (stage, module, attribute): the functions timed; a stage indented under another is part of it.
STAGES = [
    ("collect pages", "context_cli.build", "_collect"),
    ("  parse, chunk, embed, count", "context_cli.build", "build_pages"),
    ("    parse", "context_cli.parse", "parse_file"),
    ("      fast reST reader", "context_cli.parse.rst", "render_fast"),
    ("      docutils", "context_cli.parse.rst", "render_docutils"),
    ("    chunk", "context_cli.build_pages", "chunk_document"),
    ("    dedupe keys", "context_cli.build_pages", "content_key"),
    ("    embed", "context_cli.embed.model", "Embedder.encode"),
    ("    BM25 counting", "context_cli.build_pages", "count_terms"),
    ("      token streams (phrases)", "context_cli.package.bm25", "_stream"),
    ("write (main thread)", "context_cli.package.writer", "_fill"),
    ("  BM25 tables, checked", "context_cli.package.bm25", "write"),
    ("postings (helper thread)", "context_cli.package.bm25", "prepare"),
    ("  merge", "context_cli.package.bm25", "merge_counts"),
    ("  phrases", "context_cli.package.bm25", "phrase_postings"),
]


def _timed(spent: dict[str, float], stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[stage] = spent.get(stage, 0.0) + time.thread_time() - start
    return run


def inside(tree: Path) -> dict[str, float]:
    """This process: one build of `tree` with every stage timed (thread CPU seconds)."""
    from context_cli import build_pages
    from context_cli.build import BuildOptions, build
    from context_cli.embed.model import load_model
    from context_cli.sources.resolve import fetch_folder

    spent: dict[str, float] = {}
    for stage, module, attr in STAGES:
        owner: Any = importlib.import_module(module)
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, name, _timed(spent, stage.strip(), getattr(owner, name)))
    build_pages.PARALLEL_MIN_FILES = sys.maxsize  # no workers: every stage runs here
    load_model(None)
    spent["start (interpreter, imports, model)"] = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.process_time()
        build(fetch_folder(tree), Path(tmp) / "p.db", BuildOptions(name="bench", version="1.0"))
        spent["build(), all threads"] = time.process_time() - start
    return spent


def run_once(root: Path, tree: Path) -> dict[str, float]:
    """A fresh process of the checkout at `root`."""
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1", "OPENBLAS_NUM_THREADS": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, __file__, "--inside", str(tree)], env=env, cwd=root,
                          capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--tree", type=Path, help="a docs folder (default: the Django 5.1.4 docs)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="another checkout of ours, run alternately")
    ap.add_argument("--inside", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside:
        print(json.dumps(inside(args.inside)))
        return
    tree = args.tree or docs_tree(DJANGO)
    roots = {"ours": ROOT, **({"base": args.baseline.resolve()} if args.baseline else {})}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in roots}
    for _ in range(args.runs):
        for name, root in reversed(roots.items()):
            runs[name].append(run_once(root, tree))
    names = [s.strip() for s, _, _ in STAGES] + ["build(), all threads", "start (interpreter, imports, model)"]
    labels = [s for s, _, _ in STAGES] + ["build(), all threads", "start (interpreter, imports, model)"]
    print(f"CPU seconds, median of {args.runs} runs (load {os.getloadavg()[0]:.1f} at the end)")
    print(f"{'stage':<38}" + "".join(f"{n:>10}" for n in reversed(roots)))
    for name, label in zip(names, labels, strict=True):
        cells = [statistics.median(r.get(name, 0.0) for r in runs[n]) for n in reversed(roots)]
        print(f"{label:<38}" + "".join(f"{c:>10.3f}" for c in cells))


if __name__ == "__main__":
    main()
