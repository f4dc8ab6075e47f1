"""Warm `get_docs` round-trip latency over MCP stdio, as an agent sees it, and the server's memory.

Starts `context serve` as a subprocess on a CONTEXT_HOME, connects with the MCP SDK's own
client, warms up, then times sequential `get_docs` calls (client send to parsed result)
and reports p50/p95. A second pass fires calls concurrently to show throughput.

Standalone it builds the anthropic eval corpus with `context add` (vectors from the shipped
model) into a temporary home; `run_all.py` calls `latency()` on the Django package and
`serve_rss()` on ten 2,000-section packages.

`--django` instead times the cached Django package (two-word topics and full questions),
over `--runs` interleaved runs, next to the floor: the same client against a server that
answers every `tools/call` at once with a canned real answer (this script, run as
`--floor-server ANSWER.json`: raw JSON lines, one `os.write` per message). The floor is what
the client and the pipes cost; the rest of our figure is our server.

    python bench/bench_mcp.py [--calls 200] [--concurrency 8] [--lexical] [--json]
    python bench/bench_mcp.py --django [--calls 100] [--runs 3]

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
async def serving(home: Path, command: list[str] | None = None) -> AsyncIterator[tuple[Any, int]]:
    """An initialised MCP client session on `context serve` (or `command`) over stdio, and
    the server's pid."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: v for k, v in bench_env(home).items() if k in ("CONTEXT_HOME", "HF_HUB_OFFLINE", "PYTHONPATH",
                                                             "PATH", "HOME", "OPENBLAS_NUM_THREADS")}
    command = command or context_cmd("serve")
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
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


async def _latency(home: Path, library: str, topic_sets: dict[str, list[str]], calls: int,
                   command: list[str] | None = None) -> dict[str, Summary]:
    async with serving(home, command) as (session, _):
        every = [t for topics in topic_sets.values() for t in topics]
        for i in range(WARMUP):
            await call(session, library, every[i % len(every)])
        out = {}
        for label, topics in topic_sets.items():
            out[label] = Summary.of([(await call(session, library, topics[i % len(topics)]))[0] for i in range(calls)])
        return out


def latency(home: Path, library: str, topic_sets: dict[str, list[str]], calls: int = 100,
            command: list[str] | None = None) -> dict[str, Summary]:
    """Warm sequential `get_docs` ms for each named list of topics, on one server."""
    return anyio.run(_latency, home, library, topic_sets, calls, command)


async def _answer_of(home: Path, library: str, topic: str) -> dict[str, Any]:
    async with serving(home) as (session, _):
        return (await call(session, library, topic))[1]


def floor_command(home: Path, library: str, topic: str, into: Path) -> list[str]:
    """The floor server's command, answering with our real answer to `topic` (saved in `into`)."""
    into.write_text(json.dumps(anyio.run(_answer_of, home, library, topic)), "utf-8")
    return [sys.executable, str(Path(__file__).resolve()), "--floor-server", str(into)]


def floor_server(answer_file: Path) -> None:
    """Answer MCP over stdin/stdout as cheaply as Python can: `initialize` with the client's
    version, `tools/list` with one tool, every `tools/call` with the canned answer (as JSON
    text, as `context serve` sends it); notifications and responses are ignored."""
    answer = json.loads(answer_file.read_text("utf-8"))
    results = {
        "tools/list": {"tools": [{"name": "get_docs", "inputSchema": {"type": "object"}}]},
        "tools/call": {"content": [{"type": "text", "text": json.dumps(answer, ensure_ascii=False)}]},
    }
    pending = b""
    while chunk := os.read(0, 1 << 16):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in filter(bytes.strip, lines):
            message = json.loads(line)
            if "id" not in message or "method" not in message:
                continue
            if message["method"] == "initialize":
                result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                          "serverInfo": {"name": "floor", "version": "0"}}
            else:
                result = results.get(message["method"], {})
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            os.write(1, json.dumps(reply, ensure_ascii=False).encode() + b"\n")


def django(calls: int, runs: int) -> dict[str, dict[str, list[Summary]]]:
    """Ours and the floor on the cached Django package, interleaved `runs` times:
    {server: {topic kind: [Summary per run]}}."""
    from build import django_home
    from django_topics import QUESTIONS, TWO_WORDS

    home = django_home()
    topic_sets = {"2-word topics": TWO_WORDS, "full questions": QUESTIONS}
    out: dict[str, dict[str, list[Summary]]] = {"context serve": {}, "floor": {}}
    with tempfile.TemporaryDirectory(prefix="bench-mcp-floor-") as tmp:
        servers = {"context serve": None, "floor": floor_command(home, "django", QUESTIONS[0], Path(tmp) / "a.json")}
        for _ in range(runs):
            for name, command in servers.items():
                for label, s in latency(home, "django", topic_sets, calls, command).items():
                    out[name].setdefault(label, []).append(s)
    return out


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
    parser.add_argument("--django", action="store_true", help="the cached Django package, next to the floor")
    parser.add_argument("--runs", type=int, default=3, help="with --django: interleaved runs")
    parser.add_argument("--floor-server", type=Path, metavar="ANSWER", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor_server:
        floor_server(args.floor_server)
        return
    if args.django:
        print_django(django(args.calls, args.runs), args.calls)
        return
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


def print_django(figures: dict[str, dict[str, list[Summary]]], calls: int) -> None:
    load = os.getloadavg()[0]
    print(f"get_docs over stdio, Django 5.1.4, {calls} warm calls per run, load average {load:.1f} at the end")
    for name, kinds in figures.items():
        for label, runs in kinds.items():
            p50s = [s.p50 for s in runs]
            p95s = [s.p95 for s in runs]
            print(f"  {name:<14} {label:<15} p50 {statistics.median(p50s):5.2f} ms (runs {fmt(p50s)})   "
                  f"p95 {statistics.median(p95s):5.2f} ms (runs {fmt(p95s)})")


def fmt(xs: list[float]) -> str:
    return " ".join(f"{x:.2f}" for x in xs)


if __name__ == "__main__":
    main()
