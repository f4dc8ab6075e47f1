"""Warm `get_docs` calls answered by the stdio transport itself (`stdio.Incoming` with the
server's `quick_call`): the real server in process, over real pipes, with a middleware on the
SDK's pipeline to see which calls went through it."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_fixtures import anyio_backend, make_home  # noqa: F401

from context_cli.mcp_server.server import build_server, clean_line
from context_cli.mcp_server.stdio import Incoming, Outgoing
from context_cli.mcp_server.tools import Catalog
from context_cli.store.store import Store

TOPIC = "cancel a running pipeline"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Wire:
    """The client's ends of the server's pipes: JSON lines out, JSON lines back."""

    def __init__(self, to_server: int, from_server: int) -> None:
        self.to_server, self.from_server = to_server, from_server
        self.pending = b""

    def send(self, message: dict[str, Any]) -> None:
        os.write(self.to_server, json.dumps(message).encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(30):
            while b"\n" not in self.pending:
                await anyio.wait_readable(self.from_server)
                self.pending += os.read(self.from_server, 1 << 16)
        line, self.pending = self.pending.split(b"\n", 1)
        return dict(json.loads(line))

    async def call(self, n: int, params: dict[str, Any], method: str = "tools/call") -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
        answer = await self.receive()
        assert answer["id"] == n, answer
        return answer


@asynccontextmanager
async def serving(home: Path) -> AsyncIterator[tuple[Wire, list[str]]]:
    """`build_server` on `home` over two pipes, as `run_stdio` wires it; yields the client's
    wire and the methods of the requests that went through the SDK's pipeline."""
    server = build_server(Catalog(Store(home / "packages")))
    seen: list[str] = []

    async def spy(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        if ctx.request_id is not None:  # requests, not notifications
            seen.append(f"{ctx.method} {(ctx.params or {}).get('name', '')}".strip())
        return await call_next(ctx)

    server.middleware = [spy]
    server_in, client_out = os.pipe()
    client_in, server_out = os.pipe()
    out = Outgoing(server_out)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, Incoming(server_in, clean_line, quick=server.quick_call, out=out), out,
                          server.create_initialization_options())
            yield Wire(client_out, client_in), seen
            os.close(client_out)  # end of input: the server winds down
            client_out = -1
    finally:
        for fd in (server_in, client_out, client_in, server_out):
            if fd >= 0:
                os.close(fd)


def get_docs(**arguments: Any) -> dict[str, Any]:
    return {"name": "get_docs", "arguments": arguments}


@pytest.mark.anyio
async def test_a_warm_get_docs_skips_the_sdk_and_answers_the_same(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with serving(home) as (wire, seen):
        wire.send(INIT)
        assert (await wire.receive())["result"]["serverInfo"]["name"] == "context"
        wire.send(INITIALIZED)
        missing = await wire.call(1, get_docs(library="nope", topic=TOPIC))
        answers = [await wire.call(n, get_docs(library="mylib", topic=TOPIC)) for n in (2, 3, 4, 5)]
        # Cold: the first call reads the listing in a worker thread, the second searches there.
        assert seen == ["initialize", "tools/call get_docs", "tools/call get_docs"]
        assert all(a["result"] == answers[0]["result"] for a in answers)
        result = answers[0]["result"]
        assert result["isError"] is False and json.loads(result["content"][0]["text"])["results"]
        assert "structuredContent" not in result

        # Errors from a warm catalogue are answered at once too, with the pipeline's words.
        assert (await wire.call(6, get_docs(library="nope", topic=TOPIC)))["result"] == missing["result"]
        assert missing["result"]["isError"] and "Package not found: nope" in missing["result"]["content"][0]["text"]
        assert len(seen) == 3

        # A call with `_meta`, another tool, a malformed call: the SDK's, as before.
        with_meta = await wire.call(7, {**get_docs(library="mylib", topic=TOPIC), "_meta": {"progressToken": 7}})
        assert with_meta["result"] == result
        listed = await wire.call(8, {"name": "search_packages", "arguments": {"registry": "pip"}})
        assert listed["result"]["isError"] and "name is required" in listed["result"]["content"][0]["text"]
        assert (await wire.call(9, {"name": "get_docs", "arguments": ["x"]}))["error"]["code"] == -32602
        assert seen[3:] == ["tools/call get_docs", "tools/call search_packages", "tools/call get_docs"]


@pytest.mark.anyio
async def test_nothing_is_answered_before_the_handshake_is_confirmed(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with serving(home) as (wire, seen):
        wire.send(INIT)
        await wire.receive()
        for n in range(1, 5):  # warm, yet the client never sent notifications/initialized
            assert not (await wire.call(n, get_docs(library="mylib", topic=TOPIC)))["result"]["isError"]
        assert seen == ["initialize", *["tools/call get_docs"] * 4]


@pytest.mark.anyio
async def test_a_client_gone_mid_answer_ends_the_session(tmp_path: Path) -> None:
    """A quick answer that cannot be written ends the session as end of input does."""
    home = make_home(tmp_path)
    server_in, client_out = os.pipe()
    client_in, server_out = os.pipe()
    server = build_server(Catalog(Store(home / "packages")))
    out = Outgoing(server_out)
    wire = Wire(client_out, client_in)
    try:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.run, Incoming(server_in, clean_line, quick=server.quick_call, out=out), out,
                              server.create_initialization_options())
                wire.send(INIT)
                await wire.receive()
                wire.send(INITIALIZED)
                for n in (1, 2):  # cold, then warm
                    await wire.call(n, get_docs(library="mylib", topic=TOPIC))
                os.close(client_in)  # the client stops reading, its end of our input still open
                client_in = -1
                wire.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                           "params": get_docs(library="mylib", topic=TOPIC)})
            # the task group ends only because server.run returned by itself
    finally:
        for fd in (server_in, client_out, client_in, server_out):
            if fd >= 0:
                os.close(fd)
