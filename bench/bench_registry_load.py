"""Load benchmark for the registry server: concurrent searches and downloads on loopback.

Starts `context-registry-server` in a subprocess on a free loopback port, publishes
`--packages` small packages, then runs two timed phases from a second process (or
`--procs` of them): `--clients` concurrent keep-alive connections hammering `/search` and
`/api/search`, then the same number downloading package files. Each phase stops after `--seconds` or
`--max-requests`, whichever comes first. Prints requests/s, MB/s, latency percentiles and
the error count (the target is zero).

    .venv/bin/python bench/bench_registry_load.py [--clients 50] [--seconds 10]
    .venv/bin/python bench/bench_registry_load.py --replicas 2 [--engines postgres-s3]

`--replicas 2` starts two server processes over one storage and spreads the clients over
them (as a load balancer would): over one `--data` folder (`--engines files`, SQLite +
files), or over a throwaway PostgreSQL cluster and moto's S3 server (`--engines
postgres-s3`, started as the tests start them; moto is a test double, so download MB/s
there measures moto, not S3).

Not part of the test run. Numbers depend on the machine; see the docs for recorded runs.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeVar, cast

REPO = Path(__file__).resolve().parent.parent
KEY = "bench-key"
T = TypeVar("T")
WORDS = ["router", "schema", "async", "database", "template", "signal", "cache", "stream",
         "widget", "query", "parser", "render", "socket", "token", "graph", "plugin"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build_packages(folder: Path, count: int, chunks: int) -> list[tuple[str, Path]]:
    from context_cli.document import Chunk
    from context_cli.package.writer import write_package

    out = []
    for i in range(count):
        name = f"bench-{WORDS[i % len(WORDS)]}-{i}"
        body = [Chunk(f"docs/page{j}.md", f"Page {j}", f"Section {j}",
                      f"{WORDS[(i + j) % len(WORDS)]} " * 80 + f"chunk {j} of {name}", 120, False)
                for j in range(chunks)]
        meta = {"name": name, "version": "1.0.0", "registry": "npm",
                "description": f"Benchmark docs about {WORDS[i % len(WORDS)]} and {WORDS[(i + 3) % len(WORDS)]}"}
        out.append((name, write_package(folder / f"{name}.db", meta, body)))
    return out


def start_server(storage: list[str], port: int) -> subprocess.Popen[bytes]:
    import requests

    env = {**os.environ, "CONTEXT_REGISTRY_KEY": KEY}
    proc = subprocess.Popen([sys.executable, "-m", "registry_server", *storage,
                             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                            cwd=REPO, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/health", timeout=1).ok:
                return proc
        except requests.RequestException:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


def engines(kind: str, work: Path, stack: ExitStack) -> list[str]:
    """Storage options for the servers; for postgres-s3, start the engines the tests use."""
    if kind == "files":
        return ["--data", str(work / "data")]
    sys.path.insert(0, str(REPO / "tests"))
    from engine_fixtures import S3_ENV, PostgresCluster, S3Server, postgres_bin

    bindir = postgres_bin()
    if bindir is None:
        raise SystemExit("PostgreSQL server binaries are not installed")
    cluster = PostgresCluster(bindir).start()
    stack.callback(cluster.destroy)
    os.environ.update(S3_ENV)
    s3 = S3Server()
    s3.server.start()
    stack.callback(s3.server.stop)
    return ["--database", cluster.new_database(), "--blobs", f"s3://{s3.new_bucket()}/bench",
            "--s3-endpoint", s3.endpoint, "--db-pool", "40"]


def publish(url: str, packages: list[tuple[str, Path]]) -> None:
    import requests

    for name, path in packages:
        r = requests.post(f"{url}/packages/npm/{name}/1.0.0", data=path.read_bytes(),
                          headers={"Authorization": f"Bearer {KEY}"}, timeout=60)
        if r.status_code not in (200, 201):
            raise SystemExit(f"publish {name}: {r.status_code} {r.text}")


# -- a client process -------------------------------------------------------------------

class Connection(asyncio.Protocol):
    """One HTTP/1.1 keep-alive connection that checks and counts answers without keeping them.

    The clients share the machine's CPUs with the server, so every microsecond they spend
    is one the server does not get: an `asyncio.Protocol` parses the head once and only
    counts body bytes as they arrive (no stream buffers, no copies), on uvloop when it is
    installed. An answer counts as good only with status 200 and a body of exactly its
    Content-Length; downloads must also carry the checksum and size published.
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[tuple[int, dict[bytes, bytes], int]] | None = None
        self.head = bytearray()
        self.status = 0
        self.headers: dict[bytes, bytes] = {}
        self.left = -1  # body bytes still to come; -1 while reading the head
        self.got = 0

    @classmethod
    async def open(cls, host: str, port: int) -> Connection:
        _, conn = await asyncio.get_running_loop().create_connection(cls, host, port)
        return conn

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError("connection closed mid-answer"))

    def data_received(self, data: bytes) -> None:
        if self.left < 0:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = bytes(self.head[:end]).split(b"\r\n")
            self.status = int(lines[0].split(b" ", 2)[1])
            self.headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(b":") for ln in lines[1:])}
            self.left = int(self.headers.get(b"content-length", b"0"))
            self.got = len(self.head) - end - 4
            self.head.clear()
        else:
            self.got += len(data)
        if self.got >= self.left and self.waiter is not None and not self.waiter.done():
            self.waiter.set_result((self.status, self.headers, self.got))
            self.left = -1

    async def get(self, path: str) -> tuple[int, dict[bytes, bytes], int]:
        """Status, headers (names in lower case) and the number of body bytes received."""
        if self.transport is None:
            raise ConnectionError("connection closed")
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        answer = await self.waiter
        if answer[1].get(b"connection", b"").lower() == b"close":
            self.close()
        return answer

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            self.transport = None


async def worker_main(urls: list[str], phase: str, clients: int, seconds: float, max_requests: int,
                      names: list[str], files: dict[str, tuple[int, str]]) -> dict[str, object]:
    from urllib.parse import urlsplit

    targets = [(urlsplit(u).hostname or "127.0.0.1", urlsplit(u).port or 80) for u in urls]
    deadline = time.monotonic() + seconds
    state = {"requests": 0, "errors": 0, "bytes": 0}
    latencies: list[float] = []
    first_error: list[str] = []

    async def one(i: int) -> None:
        conn: Connection | None = None
        n = 0
        while time.monotonic() < deadline and state["requests"] < max_requests:
            state["requests"] += 1
            n += 1
            name = names[(i + n) % len(names)]
            if phase == "search":
                path = (f"/search?registry=npm&name={name}" if n % 2 else
                        f"/api/search?q={WORDS[(i + n) % len(WORDS)]}")
            else:
                path = f"/packages/npm/{name}/1.0.0/download"
            t0 = time.perf_counter()
            try:
                if conn is None or conn.transport is None:
                    conn = await Connection.open(*targets[i % len(targets)])
                status, headers, size = await conn.get(path)
                state["bytes"] += size
                ok = status == 200 and size == int(headers.get(b"content-length", b"-1"))
                if ok and phase == "download":
                    ok = (size, headers.get(b"x-content-sha256", b"").decode()) == files[name]
                if not ok and not first_error:
                    first_error.append(f"{status} {path}")
            except (OSError, ValueError, IndexError) as e:
                ok = False
                if conn is not None:
                    conn.close()
                conn = None
                if not first_error:
                    first_error.append(f"{type(e).__name__} {path}")
            latencies.append(time.perf_counter() - t0)
            if not ok:
                state["errors"] += 1
        if conn is not None:
            conn.close()

    started = time.monotonic()
    await asyncio.gather(*(one(i) for i in range(clients)))
    latencies.sort()
    return {**state, "elapsed": time.monotonic() - started,
            "p50": latencies[len(latencies) // 2] if latencies else 0,
            "p95": latencies[int(len(latencies) * 0.95)] if latencies else 0,
            "first_error": first_error[0] if first_error else None}


def run_loop(main: Coroutine[Any, Any, T]) -> T:
    """On uvloop when installed (less CPU per request, which the server then has), else asyncio."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def run_phase(urls: list[str], phase: str, clients: int, procs: int, seconds: float, max_requests: int,
              files: dict[str, tuple[int, str]]) -> dict[str, float]:
    per = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
    cmd = [sys.executable, __file__, "--worker", ",".join(urls), "--phase", phase, "--seconds", str(seconds),
           "--max-requests", str(max_requests // procs), "--files", json.dumps(files)]
    children = [subprocess.Popen(cmd + ["--clients", str(n)], stdout=subprocess.PIPE) for n in per if n]
    results = [json.loads(c.communicate()[0]) for c in children]
    elapsed = max(r["elapsed"] for r in results)
    total = {k: sum(r[k] for r in results) for k in ("requests", "errors", "bytes")}
    return {**total, "elapsed": elapsed, "rps": total["requests"] / elapsed,
            "mbps": total["bytes"] / elapsed / 1e6,
            "p50_ms": 1000 * max(r["p50"] for r in results),
            "p95_ms": 1000 * max(r["p95"] for r in results),
            "first_error": next((r["first_error"] for r in results if r["first_error"]), None)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--procs", type=int, default=1, help="client processes sharing the clients")
    ap.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    ap.add_argument("--max-requests", type=int, default=200_000, help="cap per phase")
    ap.add_argument("--packages", type=int, default=20)
    ap.add_argument("--chunks", type=int, default=150, help="chunks per package (sets file size)")
    ap.add_argument("--replicas", type=int, default=1, help="server processes over one storage")
    ap.add_argument("--engines", choices=["files", "postgres-s3"], default="files")
    ap.add_argument("--workers", type=int, default=1, help="uvicorn worker processes per server")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("--files", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        files = {name: (size, sha) for name, (size, sha) in json.loads(args.files).items()}
        result = run_loop(worker_main(args.worker.split(","), args.phase, args.clients, args.seconds,
                                      args.max_requests, list(files), files))
        print(json.dumps(result))
        return

    sys.path.insert(0, str(REPO))
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        work = Path(tmp)
        (work / "pkgs").mkdir()
        packages = build_packages(work / "pkgs", args.packages, args.chunks)
        sizes = [p.stat().st_size for _, p in packages]
        storage = [*engines(args.engines, work, stack), "--workers", str(args.workers)]
        ports = [free_port() for _ in range(args.replicas)]
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        servers = [start_server(storage, port) for port in ports]
        try:
            t0 = time.perf_counter()
            publish(urls[0], packages)
            publish_s = time.perf_counter() - t0
            files = {n: (p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest()) for n, p in packages}
            print(f"{len(urls)} server(s) over {args.engines}, {len(packages)} packages of "
                  f"~{sum(sizes) / len(sizes) / 1024:.0f} KB published in {publish_s:.2f} s; "
                  f"{args.clients} clients in {args.procs} processes, {args.seconds:.0f} s per phase, "
                  f"{os.cpu_count()} CPUs shared with the server(s)")
            search = run_phase(urls, "search", args.clients, args.procs, args.seconds,
                               args.max_requests, files)
            print(f"search   : {search['requests']:>7} requests  {search['rps']:8.0f} req/s  "
                  f"p50 {search['p50_ms']:.1f} ms  p95 {search['p95_ms']:.1f} ms  "
                  f"errors {search['errors']}")
            download = run_phase(urls, "download", args.clients, args.procs, args.seconds,
                                 args.max_requests, files)
            print(f"download : {download['requests']:>7} files     {download['rps']:8.0f} files/s "
                  f"{download['mbps']:.1f} MB/s  p50 {download['p50_ms']:.1f} ms  "
                  f"p95 {download['p95_ms']:.1f} ms  errors {download['errors']}")
            for phase in (search, download):
                if phase["first_error"]:
                    print(f"first error: {phase['first_error']}")
            errors = search["errors"] + download["errors"]
            print(f"total errors: {errors}")
        finally:
            for server in servers:
                server.terminate()
                server.wait(10)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
