"""Warm `get_docs` round-trip latency over MCP stdio, as an agent sees it, and the server's memory.

Starts `context serve` as a subprocess on a CONTEXT_HOME, connects with the MCP SDK's own
client, warms up, then times sequential `get_docs` calls (client send to parsed result)
and reports p50/p95. A second pass fires calls concurrently to show throughput.

Standalone it builds the anthropic eval corpus with `context add` (vectors from the shipped
model) into a temporary home; `run_all.py` calls `latency()` on the Django package and
`serve_rss()` on ten 2,000-section packages.

    python bench/bench_mcp.py [--calls 200] [--concurrency 8] [--lexical] [--json]

Neuledge Context on a similar package (FACTS.md): p50 5.9 ms, p95 12.4 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from common import ROOT, Summary, bench_env, children_of, context_cmd, rss_mb

SHARED = Path(os.environ.get("CONTEXT_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "eval" / "anthropic-docs" / "corpus"
QUESTIONS = SHARED / "eval" / "anthropic-docs" / "questions.jsonl"
NAME, VERSION = "anthropic-docs", "2024.7.0"
WARMUP = 20


def build(home: Path, lexical: bool) -> float:
    """`context add CORPUS` into `home`; returns the build time in seconds."""
    args = context_cmd("add", str(CORPUS), "--name", NAME, "--pkg-version", VERSION)
    if lexical:
        args.append("--no-embed")
    started = time.perf_counter()
    subprocess.run(args, env=bench_env(home), check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


@asynccontextmanager
async def serving(home: Path) -> AsyncIterator[tuple[Any, int]]:
    """An initialised MCP client session on `context serve` over stdio, and the server's pid."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: v for k, v in bench_env(home).items() if k in ("CONTEXT_HOME", "HF_HUB_OFFLINE", "PYTHONPATH",
                                                             "PATH", "HOME", "OPENBLAS_NUM_THREADS")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "context_cli", "serve"], env=env)
    before = set(children_of(os.getpid()))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                pid = next(iter(set(children_of(os.getpid())) - before), 0)
                yield session, pid


async def call(session: Any, library: str | None, topic: str) -> tuple[float, dict[str, Any]]:
    """One `get_docs` call: (round-trip ms, the parsed answer)."""
    args = {"topic": topic, **({"library": library} if library else {})}
    t = time.perf_counter()
    result = await session.call_tool("get_docs", args)
    if result.is_error:
        raise RuntimeError(result.content[0].text)
    answer = json.loads(result.content[0].text)
    return (time.perf_counter() - t) * 1000, answer


async def _latency(home: Path, library: str, topic_sets: dict[str, list[str]], calls: int) -> dict[str, Summary]:
    async with serving(home) as (session, _):
        every = [t for topics in topic_sets.values() for t in topics]
        for i in range(WARMUP):
            await call(session, library, every[i % len(every)])
        out = {}
        for label, topics in topic_sets.items():
            out[label] = Summary.of([(await call(session, library, topics[i % len(topics)]))[0] for i in range(calls)])
        return out


def latency(home: Path, library: str, topic_sets: dict[str, list[str]], calls: int = 100) -> dict[str, Summary]:
    """Warm sequential `get_docs` ms for each named list of topics, on one server."""
    return anyio.run(_latency, home, library, topic_sets, calls)


async def _serve_rss(home: Path, topics: list[str]) -> tuple[float, float]:
    async with serving(home) as (session, pid):
        for topic in topics:
            await call(session, None, topic)  # every visible package: all of them loaded
        return rss_mb(pid)


def serve_rss(home: Path, topics: list[str]) -> tuple[float, float]:
    """(RSS, peak RSS) in MB of `context serve` after `get_docs` over every package in `home`."""
    return anyio.run(_serve_rss, home, topics)


async def measure(home: Path, topics: list[str], calls: int, concurrency: int) -> dict[str, Any]:
    started = time.perf_counter()
    library = f"{NAME}@{VERSION}"
    async with serving(home) as (session, pid):
        ready = time.perf_counter() - started
        first, answer = await call(session, library, topics[0])
        for i in range(WARMUP):
            await call(session, library, topics[i % len(topics)])
        times, tokens, empty = [], [], 0
        for i in range(calls):
            ms, answer = await call(session, library, topics[i % len(topics)])
            times.append(ms)
            tokens.append(answer["tokens"])
            empty += not answer["results"]
        burst: list[float] = []

        async def worker(k: int) -> None:
            for i in range(k, calls, concurrency):
                burst.append((await call(session, library, topics[i % len(topics)]))[0])

        t = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for k in range(concurrency):
                tg.start_soon(worker, k)
        wall = time.perf_counter() - t
        rss, _ = rss_mb(pid)
    s = Summary.of(times)
    return {
        "calls": calls, "mode": answer.get("searched", {}).get(library, "?"), "server_ready_s": round(ready, 2),
        "first_call_ms": round(first, 1), "p50_ms": round(s.p50, 2), "p95_ms": round(s.p95, 2),
        "mean_ms": round(sum(times) / len(times), 2), "max_ms": round(s.high, 2),
        "mean_tokens": round(sum(tokens) / len(tokens)), "empty_answers": empty, "server_rss_mb": round(rss),
        "concurrency": concurrency, "concurrent_calls_per_s": round(calls / wall, 1),
        "concurrent_p50_ms": round(Summary.of(burst).p50, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--lexical", action="store_true", help="build without vectors (BM25 only)")
    parser.add_argument("--home", type=Path, help="reuse (or create) this CONTEXT_HOME")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    topics = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        home = args.home or Path(tmp)
        built = None
        if not list((home / "packages").glob("*.db")):
            built = round(build(home, args.lexical), 1)
        report = {"package": f"{NAME}@{VERSION}", "build_s": built,
                  **anyio.run(measure, home, topics, args.calls, args.concurrency)}
    if args.json:
        print(json.dumps(report))
        return
    print(f"get_docs over stdio, {report['package']} ({report['mode']}), {report['calls']} warm calls:")
    print(f"  p50 {report['p50_ms']} ms   p95 {report['p95_ms']} ms   mean {report['mean_ms']} ms   "
          f"max {report['max_ms']} ms")
    print(f"  first call {report['first_call_ms']} ms, server ready in {report['server_ready_s']} s, "
          f"answers average {report['mean_tokens']} tokens, {report['empty_answers']} empty, "
          f"server RSS {report['server_rss_mb']} MB")
    print(f"  {report['concurrency']} concurrent callers: {report['concurrent_calls_per_s']} calls/s, "
          f"p50 {report['concurrent_p50_ms']} ms")
    print("  Neuledge Context (FACTS.md): p50 5.9 ms, p95 12.4 ms")


if __name__ == "__main__":
    main()
