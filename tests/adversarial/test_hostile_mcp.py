"""`context serve` under attack: the real server in a child process, driven by the MCP SDK's
own client (stdio), and raw HTTP for the DNS-rebinding checks.

The promise: one slow or hostile package never starves the server, every request gets an
answer (an error result is an answer), and text content is strict JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
import requests
from mcp_fixtures import anyio_backend, http_server, stdio_session  # noqa: F401 - fixture

from context_cli.errors import ContextError
from context_cli.store.store import Store

from . import hostile_http as web
from . import hostile_packages as hp
from .runner import StoreSnapshot

pytestmark = pytest.mark.anyio
TOPIC = "streaming cancellation"


def install_or_refused(home: Path, path: Path) -> bool:
    """Install a hostile file the way `context add` does; False when the store refuses it."""
    try:
        Store(home / "packages").install(path)
    except ContextError:
        return False
    return True


def strict_json(text: str) -> Any:
    return json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(f"{name} in JSON")))


async def _get_docs(session: Any, args: dict[str, Any]) -> None:
    try:
        await session.call_tool("get_docs", args)
    except Exception:  # noqa: BLE001 - the stalled calls' own fate is not what is tested
        pass


async def test_stalled_package_cannot_starve_the_server(home: Path, tmp_path: Path) -> None:
    if not install_or_refused(home, hp.fts_endless_view(tmp_path / "endless.db")):
        return  # refused at the door: nothing can stall
    async with stdio_session(home) as session:
        async with anyio.create_task_group() as tg:
            for _ in range(41):  # more than anyio's 40 worker threads
                tg.start_soon(_get_docs, session, {"library": "evil", "topic": TOPIC})
            await anyio.sleep(1.0)
            with anyio.fail_after(8):
                listing = await session.list_tools()
                result = await session.call_tool("get_docs", {"library": "goodlib", "topic": TOPIC})
            tg.cancel_scope.cancel()
    assert {t.name for t in listing.tools} >= {"get_docs"}
    assert not result.is_error and "goodlib" in result.content[0].text


class RawStdio:
    """JSON-RPC lines straight to `context serve`'s stdin: the SDK's client refuses to encode
    a lone surrogate, but any other client can send `"\\ud800"` (valid JSON text)."""

    def __init__(self, home: Path) -> None:
        import subprocess
        import sys

        from mcp_fixtures import serve_env

        self.proc = subprocess.Popen([sys.executable, "-m", "context_cli", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env={**__import__("os").environ, **serve_env(home)})
        self.lines: list[dict[str, Any]] = []
        import threading

        threading.Thread(target=self._read, daemon=True).start()
        self.request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": "adv", "version": "0"}})
        assert self.wait(1, 20) is not None, "no answer to initialize"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.lines.append(json.loads(line))
            except ValueError:
                pass

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")  # ensure_ascii: \\ud800 escapes
        self.proc.stdin.flush()

    def request(self, rid: int, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})

    def wait(self, rid: int, timeout: float) -> dict[str, Any] | None:
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for m in list(self.lines):
                if m.get("id") == rid:
                    return m
            time.sleep(0.05)
        return None

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def test_lone_surrogate_gets_an_answer(home: Path) -> None:
    """Surrogates in topic and in library: each call answered (an error is an answer), and
    a healthy call after them too, all within 10 s."""
    client = RawStdio(home)
    try:
        client.request(2, "tools/call", {"name": "get_docs", "arguments": {
            "library": "goodlib", "topic": "streaming \ud800 cancellation"}})
        client.request(3, "tools/call", {"name": "get_docs", "arguments": {"library": "good\udfff", "topic": TOPIC}})
        client.request(4, "tools/call", {"name": "get_docs", "arguments": {"library": "goodlib", "topic": TOPIC}})
        client.wait(4, 10)  # one shared deadline: the rest have had as long by then
        answers = {rid: client.wait(rid, 0.5) for rid in (2, 3, 4)}
    finally:
        client.close()
    assert all(answers.values()), f"no response to {[rid for rid, a in answers.items() if a is None]}"
    healthy = answers[4]
    assert healthy is not None and not healthy["result"].get("isError")


async def test_nan_vectors_never_reach_mcp_text(home: Path, tmp_path: Path) -> None:
    if not install_or_refused(home, hp.nan_vectors(tmp_path / "nan.db")):
        return
    async with stdio_session(home) as session:
        with anyio.fail_after(20):
            result = await session.call_tool("get_docs", {"topic": TOPIC})
    assert not result.is_error, result.content[0].text
    strict_json(result.content[0].text)


async def test_hostile_arguments_get_error_results(home: Path) -> None:
    """Oversized, mistyped and absurd arguments: an error result each, and the session lives on."""
    cases = [
        {"library": "goodlib", "topic": "x" * 200_000},
        {"library": "a" * 10_000, "topic": TOPIC},
        {"library": "../../etc/passwd", "topic": TOPIC},
        {"library": "goodlib", "topic": TOPIC, "tokens": -5},
        {"library": "goodlib", "topic": TOPIC, "tokens": 10**12},
        {"library": ["goodlib"], "topic": TOPIC},
        {"library": "goodlib", "topic": ""},
    ]
    async with stdio_session(home) as session:
        for args in cases:
            with anyio.fail_after(15):
                result = await session.call_tool("get_docs", args)
            text = result.content[0].text if result.content else ""
            assert len(text) < 200_000, (args, len(text))
            assert "Traceback" not in text, (args, text[:300])
        with anyio.fail_after(15):
            healthy = await session.call_tool("get_docs", {"library": "goodlib", "topic": TOPIC})
    assert not healthy.is_error and "goodlib" in healthy.content[0].text


@pytest.mark.parametrize("answer", ["wrong_checksum", "other_package"])
async def test_download_package_from_hostile_registry(answer: str, home: Path, tmp_path: Path) -> None:
    """An agent calls download_package on its own; the registry lies. An error result of one
    short line, and the store as it was."""
    alpha = hp.base_package(tmp_path / "alpha.db", name="alpha", registry="npm").read_bytes()
    beta = hp.base_package(tmp_path / "beta.db", name="beta", registry="npm").read_bytes()
    replies = {"wrong_checksum": lambda r: web.reply(alpha, headers={"X-Content-SHA256": "0" * 64}),
               "other_package": lambda r: web.reply(beta)}
    before = StoreSnapshot.take(home)
    with web.HostileServer({"/packages/npm/alpha/1.0.0/download": replies[answer]}) as srv:
        (home / "config.json").write_text(json.dumps(
            {"servers": [{"name": "evil", "url": srv.url, "default": True}]}), "utf-8")
        async with stdio_session(home) as session:
            with anyio.fail_after(30):
                result = await session.call_tool("download_package",
                                                  {"registry": "npm", "name": "alpha", "version": "1.0.0"})
    text = result.content[0].text if result.content else ""
    assert result.is_error, text
    assert "\n" not in text.strip() and len(text) < 600, text
    before.assert_unchanged(home)


def _initialize(url: str, host: str) -> requests.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "adv", "version": "0"}}}
    return requests.post(url, json=body, timeout=10, headers={
        "Host": host, "Origin": f"http://{host}", "Accept": "application/json, text/event-stream"})


def test_dns_rebinding_refused_on_loopback(home: Path) -> None:
    with http_server(home) as url:
        port = url.split(":")[2].split("/")[0]
        assert _initialize(url, f"attacker.example:{port}").status_code in (400, 403, 421)
        assert _initialize(url, f"127.0.0.1:{port}").status_code == 200


def test_dns_rebinding_refused_on_other_loopback_address(home: Path) -> None:
    with http_server(home, "--host", "127.0.0.2") as url:
        port = url.split(":")[2].split("/")[0]
        assert _initialize(url, f"attacker.example:{port}").status_code in (400, 403, 421)
