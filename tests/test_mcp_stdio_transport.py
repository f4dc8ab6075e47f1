"""`context serve`'s own stdio transport (`mcp_server/stdio.py`) and where `get_docs` runs
(`server.Searches`): raw JSON-RPC lines in awkward pieces to a real server subprocess, stdin
from a regular file, the wire kept clear of stray output, and warm searches on the loop."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_fixtures import anyio_backend, build_package, make_home, serve_env, slow_package  # noqa: F401

from context_cli.errors import ContextError
from context_cli.mcp_server.server import Searches, json_text
from context_cli.mcp_server.tools import Catalog
from context_cli.package.identity import PackageId
from context_cli.store.store import Store

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
TOPIC = "cancel a running pipeline"


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def get_docs(n: int, library: str = "mylib@2.0.0") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "get_docs", "arguments": {"library": library, "topic": TOPIC}}}


def test_lines_in_pieces_garbage_and_unknown_methods(tmp_path: Path) -> None:
    """A line split across writes is read whole; blank and malformed lines are passed over;
    an unknown method is a JSON-RPC error; the server then exits cleanly when stdin closes."""
    home = make_home(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "context_cli", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **serve_env(home)})
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    answers: dict[int, Any] = {}

    def wait_for(n: int) -> dict[str, Any]:
        while n not in answers:
            message = json.loads(lines.get(timeout=30))
            answers[message.get("id")] = message
        return answers[n]

    try:
        init = line(INIT)
        proc.stdin.write(init[:20])
        proc.stdin.flush()
        time.sleep(0.2)  # the server reads half a line, then the rest
        proc.stdin.write(init[20:])
        proc.stdin.flush()
        assert wait_for(1)["result"]["serverInfo"]["name"] == "context"
        proc.stdin.write(b"".join([
            line({"jsonrpc": "2.0", "method": "notifications/initialized"}), b"\n", b"   \n", b"not json at all\n",
            b'{"jsonrpc": "2.0", "id": 2, "method": \n',  # cut short
            line({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"}),
            line({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
            line(get_docs(5)),
        ]))
        proc.stdin.flush()
        assert wait_for(3)["error"]["code"] == -32601
        assert wait_for(4)["result"] == {}
        first = wait_for(5)["result"]
        for n in (6, 7):  # the package is warm by now: these are searched on the event loop
            proc.stdin.write(line(get_docs(n)))
            proc.stdin.flush()
            assert wait_for(n)["result"] == first
        assert not first["isError"] and json.loads(first["content"][0]["text"])["results"]
        assert "structuredContent" not in first
        assert wait_for(2)["error"]["code"] == -32700  # the cut-short line is answered by its id
        proc.stdin.close()
        assert proc.wait(20) == 0
        assert "Traceback" not in proc.stderr.read().decode(errors="replace")
    finally:
        proc.kill()
        proc.wait()


def test_stdin_from_a_regular_file(tmp_path: Path) -> None:
    """A file cannot be polled; it is read directly, and its end closes the session."""
    home = make_home(tmp_path)
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(line(INIT))
    with open(requests, "rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "context_cli", "serve"], stdin=stdin, capture_output=True,
                              env={**os.environ, **serve_env(home)}, timeout=60)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "context"


@pytest.mark.skipif(sys.platform == "win32", reason="the lean transport is POSIX-only (Windows keeps the SDK's)")
def test_stray_output_never_reaches_the_wire(tmp_path: Path) -> None:
    """While serving, fd 1 goes to stderr and fd 0 reads nothing; both come back afterwards."""
    script = (
        "import os, sys\n"
        "from context_cli.mcp_server.stdio import claimed_stdio\n"
        "with claimed_stdio() as (wire_in, wire_out):\n"
        "    print('stray print', flush=True)\n"
        "    os.write(1, b'stray write\\n')\n"
        "    assert sys.stdin.buffer.raw.read() == b''\n"
        "    os.write(wire_out, os.read(wire_in, 100).upper())\n"
        "print('after')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], input=b"request\n", capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"REQUEST\nafter\n"
    assert b"stray print" in done.stderr and b"stray write" in done.stderr


@pytest.mark.anyio
async def test_a_package_that_answered_quickly_is_searched_on_the_loop(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    catalog = Catalog(Store(home / "packages"))
    searches = Searches(30.0)
    args = {"library": "mylib@2.0.0", "topic": TOPIC}
    first = await searches.get_docs(catalog, args)  # the listing is read in a worker thread
    second = await searches.get_docs(catalog, args)  # searched in a worker thread, quickly
    assert searches.warm == {catalog.resolve("mylib@2.0.0").path}
    searches.limiter.total_tokens = 1
    async with searches.limiter:  # no worker slot is free, yet a warm search answers
        with anyio.fail_after(10):
            third = await searches.get_docs(catalog, args)
    assert first == second == third and first["results"]

    Store(home / "packages").install(build_package(tmp_path / "new.db", "mylib", "3.0.0"))
    for _ in range(2):  # a new listing: nothing is warm until it has answered again
        await searches.get_docs(catalog, {"library": "mylib@3.0.0", "topic": TOPIC})
    assert searches.warm == {catalog.resolve("mylib@3.0.0").path}


@pytest.mark.anyio
async def test_a_slow_package_never_runs_on_the_loop(tmp_path: Path) -> None:
    home = make_home(tmp_path, [("mylib", "1.0.0")])
    shutil.copyfile(slow_package(tmp_path / "slow.db"), home / "packages" / PackageId("local", "slow", "1.0.0").filename)
    catalog = Catalog(Store(home / "packages"))
    searches = Searches(1.0)
    for _ in range(2):
        with pytest.raises(ContextError):
            await searches.get_docs(catalog, {"library": "slow", "topic": "slow streams"})
        assert not searches.warm


def test_answer_text_is_strict_json_whatever_it_holds() -> None:
    def strict(text: str) -> Any:
        return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON text"))

    answer = {"query": "naïve ünïcode", "score": float("nan"), "big": float("inf"), "results": [{"rank": 1}]}
    assert strict(json_text(answer)) == {**answer, "score": None, "big": None}
    assert json_text({"query": "naïve"}) == '{"query":"naïve"}'
    echoed = json_text({"echo": "bad \ud800 text"})  # cannot be UTF-8: escaped instead
    assert strict(echoed) == {"echo": "bad \ud800 text"} and echoed.isascii()
