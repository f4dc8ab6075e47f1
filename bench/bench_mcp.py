"""Warm `get_docs` round-trip latency over MCP stdio, as an agent sees it.

Builds a realistic package from the anthropic eval corpus with `context add` (vectors from
the shipped model) into a temporary CONTEXT_HOME, starts `context serve` as a subprocess,
connects with the MCP SDK's own client, warms up, then times sequential `get_docs` calls
with the eval questions as topics (client send to parsed result) and reports p50/p95.
A second pass fires calls concurrently to show throughput.

    python bench/bench_mcp.py [--calls 200] [--concurrency 8] [--lexical] [--json]

Neuledge Context on a similar package (FACTS.md): p50 5.9 ms, p95 12.4 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CONTEXT_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "eval" / "anthropic-docs" / "corpus"
QUESTIONS = SHARED / "eval" / "anthropic-docs" / "questions.jsonl"
NAME, VERSION = "anthropic-docs", "2024.7.0"
WARMUP = 20


def build(home: Path, lexical: bool) -> float:
    """`context add CORPUS` into `home`; returns the build time in seconds."""
    args = [sys.executable, "-m", "context_cli", "add", str(CORPUS), "--name", NAME, "--pkg-version", VERSION]
    if lexical:
        args.append("--no-embed")
    started = time.perf_counter()
    subprocess.run(args, env={**os.environ, "CONTEXT_HOME": str(home)}, check=True,
                   stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


async def measure(home: Path, topics: list[str], calls: int, concurrency: int) -> dict:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "context_cli", "serve"],
                                   env={"CONTEXT_HOME": str(home), "HF_HUB_OFFLINE": "1"})
    started = time.perf_counter()
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                ready = time.perf_counter() - started
                library = f"{NAME}@{VERSION}"

                async def call(topic: str) -> tuple[float, dict]:
                    t = time.perf_counter()
                    result = await session.call_tool("get_docs", {"library": library, "topic": topic})
                    answer = json.loads(result.content[0].text)
                    if result.is_error:
                        raise RuntimeError(result.content[0].text)
                    return (time.perf_counter() - t) * 1000, answer

                first, _ = await call(topics[0])
                for i in range(WARMUP):
                    await call(topics[i % len(topics)])
                times, tokens, empty = [], [], 0
                for i in range(calls):
                    ms, answer = await call(topics[i % len(topics)])
                    times.append(ms)
                    tokens.append(answer["tokens"])
                    empty += not answer["results"]

                burst: list[float] = []

                async def worker(k: int) -> None:
                    for i in range(k, calls, concurrency):
                        burst.append((await call(topics[i % len(topics)]))[0])

                t = time.perf_counter()
                async with anyio.create_task_group() as tg:
                    for k in range(concurrency):
                        tg.start_soon(worker, k)
                wall = time.perf_counter() - t
                mode = answer.get("searched", {}).get(library, "?")
    return {
        "calls": calls, "mode": mode, "server_ready_s": round(ready, 2), "first_call_ms": round(first, 1),
        "p50_ms": round(statistics.median(times), 2), "p95_ms": round(pct(times, 0.95), 2),
        "mean_ms": round(statistics.fmean(times), 2), "max_ms": round(max(times), 2),
        "mean_tokens": round(statistics.fmean(tokens)), "empty_answers": empty,
        "concurrency": concurrency, "concurrent_calls_per_s": round(calls / wall, 1),
        "concurrent_p50_ms": round(statistics.median(burst), 2),
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
          f"answers average {report['mean_tokens']} tokens, {report['empty_answers']} empty")
    print(f"  {report['concurrency']} concurrent callers: {report['concurrent_calls_per_s']} calls/s, "
          f"p50 {report['concurrent_p50_ms']} ms")
    print("  Neuledge Context (FACTS.md): p50 5.9 ms, p95 12.4 ms")


if __name__ == "__main__":
    main()
