"""Ours next to Neuledge Context (the peer) on the same Django 5.1.4 docs tree, on this machine.

    python bench/peer.py --peer /work/peer/packages/context [--runs 3] [--query-runs 20] [--calls 100]
    python bench/peer.py --peer ... --build-only --runs 7 [--cpus all --cpus 0] [--baseline DIR]
    python bench/peer.py --peer ... --runs 1 --cpus all --baseline DIR --wheel VENV   # + the installed wheel

For both tools, alternating run by run (or call by call), it times:
1. `add FOLDER` of the docs tree, a fresh home and a fresh process per build: wall time, CPU
   time and peak RSS (from `wait4`), the package's size and its sections; on every CPU set
   of `--cpus` in turn (`taskset -c`; default: all cores, then core 0 alone, since the peer
   builds on one thread and a CI runner may have one vCPU). Each figure is the median of the
   runs with their range, and the ratio ours/theirs both of the medians and of each run's
   pair (the two builds of a pair ran back to back, under the same load). `--baseline DIR`
   adds another checkout of ours (`ours@base`) to each round, for before/after in one run;
2. cold `query django@5.1.4 "<question>"`, a fresh process per run (after one untimed query in
   the home), over run_all's questions: p50; `--baseline`'s checkout takes its turn too, and
   so does `--wheel`'s install (a user's cold start has no editable checkout's finder), which
   is then the headline row;
3. warm `get_docs` over stdio with the real MCP client (both servers up at once, called in
   turn), two-word topics and full questions from django_topics.py: p50 and p95, and how many
   calls returned no sections (the peer ANDs every word of a topic, so a full question often
   finds nothing: fast and empty). The floor takes its turn too (bench_mcp.py's server that
   answers every call at once with our answer to the first question): what the client and
   the pipes cost, below which no server's figure can go.

The tree: the peer reads `.rst` but not `.txt`, and Django's docs are reStructuredText in
`.txt` files (on the raw tree it finds 7 files and 8 sections). So both tools build the same
copy of the tree with every `.txt` renamed `.rst` (cached in the bench cache; the content is
untouched). Ours builds the same package from either (5,454 sections from 610 pages, 12.0 MB, on
2026-12-01), as it reads a `.txt` that looks like reStructuredText as such.

Building the peer (commit 84be69a, version 1.2.2; Node 20, Debian's nodejs headers under
/usr/include/node):

    git clone /work/.mirror/neuledge+context/repo /work/peer     # github.com/neuledge/context
    cd /work/peer
    npx --yes pnpm@10.27.0 install --frozen-lockfile --ignore-scripts --filter @neuledge/context
    (cd node_modules/.pnpm/better-sqlite3@11.10.0/node_modules/better-sqlite3 &&
     npx --yes node-gyp rebuild --release --nodedir=/usr -j 2)
    cd packages/context && npx tsc -p tsconfig.build.json       # dist/cli.js

Without better-sqlite3 the peer silently falls back to sql.js (WebAssembly), which would be
unfairly slow, so this script checks that better-sqlite3 loads from the peer's dist/ first.
The peer keeps its data under `$HOME/.context`: each of its runs gets its own HOME.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import bench_mcp
from common import DJANGO, ROOT, Summary, bench_env, cache_dir, context_cmd, docs_tree, pace_ms
from django_topics import QUESTIONS, TWO_WORDS

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
NAME, VERSION = "django", "5.1.4"
LIBRARY = f"{NAME}@{VERSION}"
FLOOR = "floor"  # the same client against a server that answers every call at once with our answer
HOW_TO_BUILD = ("no peer: build Neuledge Context (see this script's docstring: clone, pnpm install, node-gyp "
                "rebuild better-sqlite3, tsc) and pass --peer PATH/packages/context or set CONTEXT_PEER")


@dataclass(frozen=True)
class Tool:
    """How to run one tool: its build, query and serve commands and its environment, per home."""

    name: str
    add: Callable[[Path], list[str]]
    query: Callable[[str], list[str]]
    serve: Callable[[Path], list[str] | None]
    env: Callable[[Path], dict[str, str]]
    packages: Callable[[Path], Path]
    cwd: Path | None = None  # where its processes start (another checkout of ours runs from its root)


def ours() -> Tool:
    """This checkout's `context` (CONTEXT_HOME=home)."""
    return Tool("ours", lambda tree: context_cmd("add", str(tree), "--name", NAME, "--pkg-version", VERSION),
                lambda topic: context_cmd("query", LIBRARY, topic), lambda home: None, bench_env,
                lambda home: home / "packages")


def baseline(root: Path) -> Tool:
    """Another checkout of ours (`--baseline`): its `context_cli` first on the path, run from its root."""
    def env(home: Path) -> dict[str, str]:
        return {**bench_env(home), "PYTHONPATH": str(root)}

    return Tool("ours@base", lambda tree: context_cmd("add", str(tree), "--name", NAME, "--pkg-version", VERSION),
                lambda topic: context_cmd("query", LIBRARY, topic), lambda home: None, env,
                lambda home: home / "packages", cwd=root)


def wheel(venv: Path) -> Tool:
    """Ours installed from its wheel into `venv` (`--wheel`; `pip install` of a wheel built from
    this checkout), for the cold queries only: it queries the package ours built."""
    context = str(venv / "bin" / "context")
    return Tool("ours (wheel)", lambda tree: [], lambda topic: [context, "query", LIBRARY, topic], lambda home: None,
                lambda home: {**os.environ, "CONTEXT_HOME": str(home), "HF_HUB_OFFLINE": "1"},
                lambda home: home / "packages")


def theirs(peer: Path) -> Tool:
    """Neuledge Context's `node dist/cli.js` (HOME=home, data under home/.context)."""
    node, cli = shutil.which("node") or "node", str(peer / "dist" / "cli.js")
    return Tool("theirs", lambda tree: [node, cli, "add", str(tree), "--name", NAME, "--pkg-version", VERSION],
                lambda topic: [node, cli, "query", LIBRARY, topic],
                lambda home: ["env", f"HOME={home}", node, cli, "serve"],
                lambda home: {**os.environ, "HOME": str(home)}, lambda home: home / ".context" / "packages")


def check_peer(peer: Path) -> None:
    """Exit unless the peer is built and loads better-sqlite3 (with FTS5) the way its dist/ does."""
    cli = peer / "dist" / "cli.js"
    probe = ("const r = require('module').createRequire(process.argv[1]); const D = r('better-sqlite3');"
             "new D(':memory:').exec('create virtual table t using fts5(a)')")
    if not cli.exists() or subprocess.run(["node", "-e", probe, str(cli)], capture_output=True).returncode:
        sys.exit(f"{cli} missing, or better-sqlite3 does not load from it (the peer would fall back to sql.js); "
                 + HOW_TO_BUILD)


def rst_tree(docs: Path) -> Path:
    """A copy of `docs` with every `.txt` renamed `.rst` (made once, in the bench cache)."""
    target = cache_dir() / "trees" / f"{docs.parent.name.lower()}-docs-rst"
    if not target.exists():
        partial = target.with_suffix(".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(docs, partial)
        for f in list(partial.rglob("*.txt")):
            f.rename(f.with_suffix(".rst"))
        partial.rename(target)
    return target


@dataclass(frozen=True)
class Run:
    """One process, timed."""

    seconds: float  # wall
    cpu: float  # user + system, its children (the parse workers) included
    rss_mb: float  # peak RSS of it or its largest child
    out: str


def timed(args: list[str], env: dict[str, str], cwd: Path | None = None) -> Run:
    """Run `args` in a fresh process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)  # not proc.wait(): wait4 also gives the peak RSS
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            raise RuntimeError(f"{args[:4]} failed: {err.read().decode(errors='replace')[-2000:]}")
        return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                   out.read().decode(errors="replace"))


@dataclass(frozen=True)
class Built:
    run: Run
    package: Path


def build(tool: Tool, tree: Path, home: Path, cpus: str = "all") -> Built:
    """`add tree` into a fresh `home`, on the CPUs `cpus` names (`taskset -c`; "all": any)."""
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    pin = [] if cpus == "all" else ["taskset", "-c", cpus]
    return Built(timed(pin + tool.add(tree), tool.env(home), tool.cwd), next(tool.packages(home).glob("*.db")))


def sections(package: Path) -> tuple[int, int]:
    """(sections, pages) in a package: both tools write the same `chunks` table."""
    with sqlite3.connect(f"file:{package}?mode=ro", uri=True) as db:
        return db.execute("SELECT count(*), count(DISTINCT doc_path) FROM chunks").fetchone()


def is_empty(answer: dict[str, Any]) -> bool:
    """Whether an answer holds no sections (an error answer is not an answer: it raises)."""
    if "error" in answer:
        raise RuntimeError(f"error answer: {answer}")
    return not answer.get("results")


@dataclass(frozen=True)
class Call:
    """One timed `get_docs` call."""

    ms: float
    empty: bool
    chars: int  # the answer's JSON, as sent


async def _paired_get_docs(tools: list[Tool], homes: dict[str, Path], topic_sets: dict[str, list[str]],
                           calls: int, floor: list[str]) -> dict[str, dict[str, list[Call]]]:
    """Both servers and the floor (`floor`, bench_mcp's canned-answer server) up at once,
    called in turn: {tool or FLOOR: {kind: [Call]}}."""
    async with bench_mcp.serving(homes[tools[0].name], tools[0].serve(homes[tools[0].name])) as (a, _), \
            bench_mcp.serving(homes[tools[1].name], tools[1].serve(homes[tools[1].name])) as (b, _), \
            bench_mcp.serving(homes[tools[0].name], floor) as (c, _):
        sessions = {tools[0].name: a, tools[1].name: b, FLOOR: c}
        every = [t for topics in topic_sets.values() for t in topics]
        for i in range(bench_mcp.WARMUP):
            for session in sessions.values():
                await bench_mcp.call(session, LIBRARY, every[i % len(every)])
        out: dict[str, dict[str, list[Call]]] = {name: {kind: [] for kind in topic_sets} for name in sessions}
        for kind, topics in topic_sets.items():
            for i in range(calls):
                for name in list(sessions) if i % 2 == 0 else list(sessions)[::-1]:
                    ms, answer = await bench_mcp.call(sessions[name], LIBRARY, topics[i % len(topics)])
                    out[name][kind].append(Call(ms, is_empty(answer), len(json.dumps(answer, ensure_ascii=False))))
        return out


def cold_queries(tools: list[Tool], homes: dict[str, Path], runs: int) -> dict[str, tuple[Summary, int]]:
    """Cold `query` seconds per tool, alternating, cycling through QUESTIONS: {tool: (summary, empty)}.
    With `--baseline`, the other checkout takes its turn too (before and after in one run)."""
    for root in {ROOT, *(t.cwd for t in tools if t.cwd is not None)}:  # as an installed wheel has it
        compileall.compile_dir(str(root / "context_cli"), quiet=1)
    for tool in tools:  # untimed: ours' first query writes what the home remembers of the model
        timed(tool.query(QUESTIONS[0]), tool.env(homes[tool.name]), tool.cwd)
    times: dict[str, list[float]] = {t.name: [] for t in tools}
    empty = dict.fromkeys(times, 0)
    for i in range(runs):
        for tool in tools if i % 2 == 0 else tools[::-1]:
            run = timed(tool.query(QUESTIONS[i % len(QUESTIONS)]), tool.env(homes[tool.name]), tool.cwd)
            times[tool.name].append(run.seconds)
            empty[tool.name] += is_empty(json.loads(run.out))
    return {name: (Summary.of(xs), empty[name]) for name, xs in times.items()}


def answers(calls: list[Call]) -> str:
    """Empty answers, mean answer size, and the p50 of the calls that returned sections."""
    full = [c.ms for c in calls if not c.empty]
    p50 = f"{Summary.of(full).p50:.2f} ms" if full else "-"
    return (f"{sum(c.empty for c in calls)}/{len(calls)} empty, answers {sum(c.chars for c in calls) / len(calls) / 1000:.1f}"
            f" kB mean, p50 of the {len(full)} with sections {p50}")


def row(figure: str, a: str, b: str, ratio: float, target: str) -> str:
    return f"| {figure} | {a} | {b} | {ratio:.2f}× | {target} |"


Builds = dict[str, dict[str, list[Built]]]  # CPU set -> tool -> builds in order


def build_rounds(tools: list[Tool], tree: Path, homes: dict[str, Path], runs: int, cpu_sets: list[str],
                 say: Callable[[str], None]) -> Builds:
    """`runs` rounds; in each, every CPU set in turn, every tool on it, the order of the tools
    reversed every other round."""
    out: Builds = {cpus: {t.name: [] for t in tools} for cpus in cpu_sets}
    for r in range(runs):
        for cpus in cpu_sets:
            for tool in tools if r % 2 == 0 else tools[::-1]:
                out[cpus][tool.name].append(build(tool, tree, homes[tool.name], cpus))
        say(f"round {r + 1} of {runs} built")
    return out


def build_table(builds: Builds, names: list[str]) -> list[str]:
    """One row per CPU set and figure: each tool's median (range), ours / theirs as the ratio of
    the medians and the median (range) of each round's ratio, and ours / ours@base if there."""
    o, t = "ours", "theirs"
    base = "ours@base" if "ours@base" in names else None
    head = "| build Django docs (ours with vectors, theirs FTS only) | " + " | ".join(names)
    head += " | ours / theirs: of medians; each round's, median (range) |" + (" ours / ours@base |" if base else "")
    rows = [head, "|---" * (len(names) + 2 + bool(base)) + "|"]
    figures: list[tuple[str, Callable[[Run], float], str, str]] = [
        ("wall", lambda r: r.seconds, "s", ".2f"), ("CPU (user+system)", lambda r: r.cpu, "s", ".2f"),
        ("peak RSS", lambda r: r.rss_mb, "MB", ".0f")]
    for cpus, by_tool in builds.items():
        where = "all cores" if cpus == "all" else f"`taskset -c {cpus}`"
        for label, value, unit, fmt in figures:
            xs = {n: [value(b.run) for b in by_tool[n]] for n in names}
            sums = {n: Summary.of(v) for n, v in xs.items()}
            paired = Summary.of([a / b for a, b in zip(xs[o], xs[t], strict=True)])
            cells = [f"{sums[n].p50:{fmt}} {unit} ({sums[n].low:{fmt}}–{sums[n].high:{fmt}})" for n in names]
            line = (f"| {label}, {where} | " + " | ".join(cells)
                    + f" | {sums[o].p50 / sums[t].p50:.2f}×; {paired.p50:.2f}× ({paired.low:.2f}–{paired.high:.2f}) |")
            if base:
                line += f" {sums[o].p50 / sums[base].p50:.2f}× |"
            rows.append(line)
    n_runs = len(next(iter(next(iter(builds.values())).values())))
    rows.append(f"\n{n_runs} rounds per CPU set.")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--peer", type=Path, default=os.environ.get("CONTEXT_PEER"),
                    help="Neuledge Context's packages/context folder, built (or $CONTEXT_PEER)")
    ap.add_argument("--runs", type=int, default=3, help="build rounds (each tool once per CPU set a round)")
    ap.add_argument("--cpus", action="append", help="a CPU set for `taskset -c`, or `all` (repeatable; "
                                                    "default: all, then 0)")
    ap.add_argument("--baseline", type=Path, help="another checkout of ours, built beside (`ours@base`)")
    ap.add_argument("--wheel", type=Path, help="a virtual environment with this checkout's wheel installed: "
                                                "its cold queries too, in ours' home (`ours (wheel)`)")
    ap.add_argument("--build-only", action="store_true", help="time the builds only")
    ap.add_argument("--query-runs", type=int, default=20, help="cold queries per tool (at least 10)")
    ap.add_argument("--calls", type=int, default=100, help="get_docs calls per tool and topic kind (at least 100)")
    args = ap.parse_args()
    if not args.peer:
        print(HOW_TO_BUILD)
        sys.exit(2)
    check_peer(args.peer.resolve())
    tools = [ours(), theirs(args.peer.resolve())]
    builders = tools + ([baseline(args.baseline.resolve())] if args.baseline else [])
    cpu_sets = args.cpus or ["all", "0"]
    tree = rst_tree(docs_tree(DJANGO))
    load_before, pace_before = os.getloadavg(), pace_ms()
    started = time.perf_counter()

    def say(step: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {step}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-peer-") as tmp:
        homes = {t.name: Path(tmp) / t.name for t in builders}
        say(f"building {tree}: {args.runs} rounds on {', '.join(cpu_sets)}")
        builds = build_rounds(builders, tree, homes, args.runs, cpu_sets, say)
        last = {name: b[-1].package for name, b in builds[cpu_sets[-1]].items()}
        counts = {name: sections(p) for name, p in last.items()}
        sizes = {name: p.stat().st_size / 1e6 for name, p in last.items()}
        if not args.build_only:
            say(f"cold query {args.query_runs}x per tool")
            queried = builders + ([wheel(args.wheel.resolve())] if args.wheel else [])
            homes.setdefault("ours (wheel)", homes["ours"])
            cold = cold_queries(queried, homes, max(10, args.query_runs))
            say(f"get_docs over stdio, {args.calls} calls per tool and kind")
            kinds = {"2-word topics": TWO_WORDS, "full questions": QUESTIONS}
            floor = bench_mcp.floor_command(homes["ours"], LIBRARY, QUESTIONS[0], Path(tmp) / "floor.json")
            mcp = anyio.run(_paired_get_docs, tools, homes, kinds, max(100, args.calls), floor)
    say("done")
    o, t = (tool.name for tool in tools)
    print("\n".join(build_table(builds, [b.name for b in builders])))
    print(f"\npackage size: ours {sizes[o]:.1f} MB, theirs {sizes[t]:.1f} MB ({sizes[o] / sizes[t]:.2f}×; target ≤ 1.15×)"
          + "".join(f", {n} {sizes[n]:.1f} MB" for n in sizes if n not in (o, t)))
    print("sections (pages): " + ", ".join(f"{n} {c[0]} ({c[1]})" for n, c in counts.items()) + f"; tree {tree}")
    if not args.build_only:
        user = "ours (wheel)" if args.wheel else o  # the headline: installed as a user has it, when given
        rows = ["| figure | ours p50 (spread) | theirs p50 (spread) | ratio | target ratio |", "|---|---|---|---|---|",
                row(f"cold `query django@5.1.4 \"<question>\"`, {user}",
                    f"{cold[user][0].p50:.3f} s ({cold[user][0].spread('s', '.3f')})",
                    f"{cold[t][0].p50:.3f} s ({cold[t][0].spread('s', '.3f')})", cold[user][0].p50 / cold[t][0].p50,
                    "≤ 0.25×")]
        rows += [row(f"cold `query`, {n}", f"{cold[n][0].p50:.3f} s ({cold[n][0].spread('s', '.3f')})",
                     f"{cold[t][0].p50:.3f} s", cold[n][0].p50 / cold[t][0].p50, "≤ 0.25×") for n in cold if n not in (user, t)]
        for kind in kinds:
            s = {n: Summary.of([c.ms for c in mcp[n][kind]]) for n in (o, t, FLOOR)}
            rows.append(row(f"MCP `get_docs` warm, stdio, {kind}", *(f"{s[n].p50:.2f} ms (p95 {s[n].p95:.2f}; "
                                                                      f"{s[n].spread('ms', '.2f')})" for n in (o, t)),
                            s[o].p50 / s[t].p50, "≤ 0.5×"))
            rows.append(row(f"the floor, {kind}: the client against a canned answer of ours",
                            f"{s[FLOOR].p50:.2f} ms ({s[FLOOR].spread('ms', '.2f')})", f"{s[t].p50:.2f} ms",
                            s[FLOOR].p50 / s[t].p50, "< 0.5× for the target to be reachable"))
        print("\n" + "\n".join(rows))
        print(f"cold queries with no sections: ours {cold[o][1]}/{cold[o][0].n}, theirs {cold[t][1]}/{cold[t][0].n}")
        for kind in kinds:
            print(f"get_docs {kind}: " + "; ".join(f"{n} {answers(mcp[n][kind])}" for n in (o, t)))
    load_after = os.getloadavg()
    print(f"load average (1/5/15 min): {' '.join(f'{x:.2f}' for x in load_before)} before, "
          f"{' '.join(f'{x:.2f}' for x in load_after)} after; host pace (common.pace_ms) {pace_before:.2f} ms "
          f"before, {pace_ms():.2f} ms after; {time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
