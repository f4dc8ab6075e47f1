"""`context serve` against hostile clients and a failing store (issue 32, items 4, 5, 6, 8):
the real server in a child process, hostile clients on raw sockets (hostile_mcp_clients.py),
the MCP SDK's own client as the agent that must keep being served.

The promises: a store-watcher error is logged and retried, never the end of the server;
half-sent heads and bodies are cut off at the registry server's deadlines, connections are
bounded, and what is refused costs rate-limited log lines, not megabytes of tracebacks; a
flood of sessions evicts the oldest idle ones (unused first) instead of locking agents
out; a client that never reads is dropped; every stdio line that does not parse, or nests
too deep, is answered with a JSON-RPC error where its id can be read.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_fixtures import _wait_for_url, anyio_backend, http_session, serve_env, stdio_session  # noqa: F401

from . import hostile_mcp_clients as hc
from .runner import kill_group, peak_rss_kb
from .test_hostile_mcp import RawStdio

TOPIC = "streaming cancellation"
DOCS = {"library": "goodlib", "topic": TOPIC}


@dataclass
class Served:
    url: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024

    def stderr_bytes(self) -> int:
        return self.log.stat().st_size

    def alive(self) -> bool:
        return self.proc.poll() is None


@contextmanager
def serving(home: Path, *args: str) -> Iterator[Served]:
    """`context serve --http 0 ARGS` in its own session, stderr to a file."""
    log = home / "serve-http.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "context_cli", "serve", "--http", "0", *args],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, **serve_env(home)}, start_new_session=True)
    try:
        url = _wait_for_url(proc, log, 30)
        yield Served(url, int(url.rsplit(":", 1)[1].split("/")[0]), proc, log)
    finally:
        kill_group(proc)
        proc.wait(10)


async def agent_call(url: str, args: dict[str, Any] | None = None, timeout: float = 20) -> Any:
    """A fresh agent (the SDK's client): initialize, then one get_docs call."""
    with anyio.fail_after(timeout):
        async with http_session(url) as session:
            return await session.call_tool("get_docs", args or DOCS)


def assert_docs(result: Any) -> None:
    assert not result.is_error and "goodlib" in result.content[0].text, result


# -- item 4: the store watcher -----------------------------------------------------------

def _break_store(home: Path) -> Path:
    """The package folder becomes a file: every listing of it fails (NotADirectoryError)."""
    moved = home / "packages-away"
    (home / "packages").rename(moved)
    (home / "packages").write_text("not a folder")
    return moved


def _mend_store(home: Path, moved: Path) -> None:
    (home / "packages").unlink()
    moved.rename(home / "packages")


pytestmark = pytest.mark.anyio


async def test_watcher_error_over_stdio_is_retried(home: Path) -> None:
    """Before: the watcher's OSError ended the server (the client saw the pipe close)."""
    async with stdio_session(home) as session:
        with anyio.fail_after(20):
            assert_docs(await session.call_tool("get_docs", DOCS))
        moved = _break_store(home)
        await anyio.sleep(5)  # two watcher rounds
        with anyio.fail_after(20):
            listing = await session.list_tools()
            await session.call_tool("get_docs", DOCS)  # an answer (an error result is one)
        _mend_store(home, moved)
        await anyio.sleep(3)
        with anyio.fail_after(20):
            assert_docs(await session.call_tool("get_docs", DOCS))
    assert {t.name for t in listing.tools} >= {"get_docs"}
    log = (home / "serve-stderr.log").read_text(errors="replace")
    assert "package folder" in log and log.count("Traceback") == 0, log[-2000:]


async def test_watcher_error_over_http_is_retried(home: Path) -> None:
    """Before: every request after the watcher's OSError answered 500."""
    with serving(home) as srv:
        assert_docs(await agent_call(srv.url))
        moved = _break_store(home)
        await anyio.sleep(5)
        status, _, body = hc.exchange(srv.port, hc.INIT)
        assert status == 200, body[:300]
        _mend_store(home, moved)
        await anyio.sleep(3)
        assert_docs(await agent_call(srv.url))
        assert srv.alive()


# -- item 5: heads and bodies, connections, logging ----------------------------------------

async def test_half_sent_heads_are_cut_off(home: Path) -> None:
    """1,100 heads that never end, against a server allowed 1,024 descriptors. Before: no
    head deadline; agents were locked out, the watcher died of EMFILE, stderr filled with
    tracebacks. Now: each is closed within the head deadline, at most `--max-connections`
    are held, stderr gets a few lines, and agents are served once the heads are gone."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    with serving(home) as srv:
        resource.prlimit(srv.proc.pid, resource.RLIMIT_NOFILE, (1024, 1024))
        with hc.slow_heads(srv.port, 1100, every=0.5) as heads:
            assert heads.wait_all_closed(20), f"{len(heads.sockets) - len(heads.closed_after)} heads still open"
            assert max(heads.closed_after) < 13, max(heads.closed_after)  # the 10 s head deadline
        assert_docs(await agent_call(srv.url))
        assert srv.alive()
        assert srv.stderr_bytes() < 64 * 1024, srv.log.read_text(errors="replace")[-3000:]
        log = srv.log.read_text(errors="replace")
        assert "Traceback" not in log and "request head" in log, log[-3000:]


async def test_slow_body_is_cut_off(home: Path) -> None:
    with serving(home) as srv:
        with hc.slow_body(srv.port, every=0.5) as body:
            assert body.wait_all_closed(20), "a body sent a byte every half second was never cut off"
        assert_docs(await agent_call(srv.url))


async def test_connections_are_bounded(home: Path) -> None:
    """More idle connections than the default 256: the extra ones are answered 503 and
    closed at once, never held; the server lives on."""
    with serving(home) as srv:
        with hc.slow_heads(srv.port, 320, every=0.5) as heads:
            time.sleep(3)
            assert len(heads.closed_after) >= 60, f"only {len(heads.closed_after)} of 320 closed"
        assert_docs(await agent_call(srv.url))
        assert srv.alive()


# -- item 6: session floods ----------------------------------------------------------------

async def test_session_flood_evicts_idle_sessions(home: Path) -> None:
    """1,000 sessions opened and never used, against the default cap of 100. Before: all
    1,000 kept (up to 10,000, with 503 for every agent after). Now: the flood's oldest are
    evicted first (their ids answer 404), an agent that was using its session keeps it, new
    agents are served, and memory stays bounded."""
    with serving(home) as srv:
        agent = hc.open_session(srv.port)
        assert hc.exchange(srv.port, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, agent)[0] == 200
        before = srv.rss_mb()
        ids, statuses = hc.session_flood(srv.port, 1000)
        after = srv.rss_mb()
        assert statuses == {200: 1000}, statuses
        gone = [hc.exchange(srv.port, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, sid)[0] for sid in ids[:50]]
        assert set(gone) == {404}, gone
        status, _, body = hc.exchange(srv.port, {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                                                 "params": {"name": "get_docs", "arguments": DOCS}}, agent)
        assert status == 200 and b"goodlib" in body, (status, body[:300])
        assert_docs(await agent_call(srv.url))
        assert after - before < 40, f"RSS grew {after - before:.0f} MB for 1,000 idle sessions"


async def test_never_reading_client_is_dropped(home: Path) -> None:
    """A client pipelines 300 get_docs calls and reads none of the answers: its connection
    is dropped once writing to it has stalled for the write deadline (30 s), and other
    agents are answered meanwhile."""
    with serving(home) as srv:
        sid = hc.open_session(srv.port)
        s = hc.never_reading(srv.port, sid, 300, {**DOCS, "tokens": 20000})
        try:
            assert_docs(await agent_call(srv.url))
            deadline = time.monotonic() + 45
            while not hc.is_closed(s) and time.monotonic() < deadline:
                await anyio.sleep(0.5)
            assert hc.is_closed(s), "a client that never reads was held for 45 s"
        finally:
            s.close()
        assert peak_rss_kb(srv.proc.pid) / 1024 < 400
        assert_docs(await agent_call(srv.url))


# -- item 8: stdio lines that do not parse --------------------------------------------------

def test_every_bad_stdio_line_with_an_id_gets_an_error(home: Path) -> None:
    """Before: no answer at all to any of these; the caller waited forever."""
    client = RawStdio(home)
    deep = "[" * 100_000 + "]" * 100_000
    lines = {
        7: b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list", ',  # cut off
        8: ('{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "get_docs", "arguments": '
            '{"library": "goodlib", "topic": ' + deep + '}}}').encode(),
        9: b'{"jsonrpc": "2.0", "id": 9, "method": 5}',
        10: b'{"jsonrpc": "2.0", "id": 10, "params": {}}',
        "s": b'{"id": "s", "jsonrpc": "2.0", "method": "tools/list", "params": [1, 2, }',
        12: b'{"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"x": "' + b"x" * (20 << 20) + b'"}}',
    }
    try:
        assert client.proc.stdin is not None
        for line in [b"not json at all", b"[" * 200_000, *lines.values()]:
            client.proc.stdin.write(line + b"\n")
        client.proc.stdin.flush()
        client.request(11, "tools/list", {})
        healthy = client.wait(11, 30)
        answers = {rid: client.wait(rid, 2) for rid in lines}
    finally:
        client.close()
    assert healthy is not None and "result" in healthy
    missing = [rid for rid, a in answers.items() if a is None]
    assert not missing, f"no answer to {missing}"
    codes = {rid: a["error"]["code"] for rid, a in answers.items() if a}
    assert codes[7] == -32700 and codes["s"] == -32700, codes
    assert codes[9] == -32600 and codes[10] == -32600 and codes[12] == -32600, codes
    assert codes[8] in (-32700, -32600), codes
    assert all(len(json.dumps(a)) < 1000 for a in answers.values() if a)


def test_watcher_keeps_stdio_alive_after_store_returns(home: Path, tmp_path: Path) -> None:
    """The store folder removed outright (not replaced by a file) and put back: still served."""
    client = RawStdio(home)
    try:
        shutil.move(str(home / "packages"), str(tmp_path / "away"))
        time.sleep(5)
        shutil.move(str(tmp_path / "away"), str(home / "packages"))
        time.sleep(3)
        client.request(2, "tools/call", {"name": "get_docs", "arguments": DOCS})
        answer = client.wait(2, 20)
    finally:
        client.close()
    assert answer is not None and not answer["result"].get("isError"), answer
