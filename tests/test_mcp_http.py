"""`context serve --http` over Streamable HTTP: many sessions, notifications, pinning, errors."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import requests
from mcp_fixtures import (  # noqa: F401
    _wait_for_url,
    answer_of,
    anyio_backend,
    build_package,
    http_server,
    http_session,
    is_list_changed,
    make_home,
    publish,
    registry_server,
    serve_env,
    text_of,
    tool_named,
)

pytestmark = pytest.mark.anyio


async def test_sessions_list_tools_and_answer_concurrently(tmp_path: Path) -> None:
    with http_server(make_home(tmp_path)) as url:
        assert url.endswith("/mcp")
        async with http_session(url) as session:
            init = session.initialize_result
            assert init.capabilities.tools is not None and init.capabilities.tools.list_changed is True
            listing = await session.list_tools()
            assert [t.name for t in listing.tools] == ["get_docs", "search_packages", "download_package",
                                                      "get_api", "get_changes"]
            assert tool_named(listing, "get_docs").input_schema["properties"]["library"]["enum"] == [
                "mylib@2.0.0", "mylib@1.0.0", "other@0.3"]
            answer = answer_of(await session.call_tool("get_docs", {"library": "mylib", "topic": "timeout",
                                                                    "tokens": 150}))
            assert answer["library"] == "mylib@2.0.0" and answer["tokens"] <= 150
            bad = await session.call_tool("get_docs", {"library": "nope", "topic": "x"})
            assert bad.is_error and "Package not found: nope" in text_of(bad)

        answers: dict[tuple[int, int], dict] = {}

        async def client(n: int) -> None:
            async with http_session(url) as session:
                async def call(i: int) -> None:
                    result = await session.call_tool("get_docs", {"topic": f"cancel pipeline {i}"})
                    answers[n, i] = answer_of(result)

                async with anyio.create_task_group() as tg:
                    for i in range(10):
                        tg.start_soon(call, i)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for n in range(5):
                    tg.start_soon(client, n)
        assert len(answers) == 50
        assert all(a["query"] == f"cancel pipeline {i}" for (_, i), a in answers.items())

        base = url.removesuffix("/mcp")
        assert requests.get(f"{base}/other", timeout=5).status_code == 404


async def test_a_download_tells_every_session(tmp_path: Path) -> None:
    events = {"a": anyio.Event(), "b": anyio.Event()}

    def handler(name: str):
        async def handle(message) -> None:
            if is_list_changed(message):
                events[name].set()
        return handle

    with registry_server(tmp_path / "registry") as registry_url:
        publish(registry_url, build_package(tmp_path / "d.db", "delta", "0.9", registry="pip"), "pip", "delta", "0.9")
        with http_server(make_home(tmp_path, registry_url=registry_url)) as url:
            async with http_session(url, handler("a")) as a, http_session(url, handler("b")) as b:
                await b.list_tools()
                await anyio.sleep(1.0)  # let b's standalone (GET) stream open: nothing is replayed
                done = answer_of(await a.call_tool("download_package",
                                                   {"registry": "pip", "name": "delta", "version": "0.9"}))
                assert done["package"]["library"] == "delta@0.9"
                with anyio.fail_after(5):
                    await events["a"].wait()
                    await events["b"].wait()
                enum = tool_named(await b.list_tools(), "get_docs").input_schema["properties"]["library"]["enum"]
                assert "delta@0.9" in enum
                assert answer_of(await b.call_tool("get_docs", {"library": "delta", "topic": "streaming"}))[
                    "library"] == "delta@0.9"


async def test_libs_pins_every_http_session(tmp_path: Path) -> None:
    with http_server(make_home(tmp_path), "--libs", "other") as url:
        async with http_session(url) as session:
            listing = await session.list_tools()
            assert [t.name for t in listing.tools] == ["get_docs", "get_api", "get_changes"]
            assert tool_named(listing, "get_docs").input_schema["properties"]["library"]["enum"] == ["other@0.3"]
            refused = await session.call_tool("get_docs", {"library": "mylib", "topic": "cancel"})
            assert refused.is_error and "not available in this session" in text_of(refused)


def test_a_busy_port_is_one_line_and_a_non_zero_exit(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "context_cli", "serve", "--http", str(port)],
                              env={**serve_env(make_home(tmp_path, [])), "PATH": "/usr/bin:/bin"},
                              capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].startswith(f"Error: cannot listen on 127.0.0.1:{port}")


async def test_sigterm_stops_quietly_with_exit_zero(tmp_path: Path) -> None:
    """A service manager's SIGTERM, with a session open: a graceful stop, no traceback, exit 0."""
    home = make_home(tmp_path)
    log = tmp_path / "stderr.log"
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "context_cli", "serve", "--http", "0"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, **serve_env(home)})
    try:
        url = _wait_for_url(proc, log, 20)
        async with http_session(url) as session:
            assert answer_of(await session.call_tool("get_docs", {"library": "mylib", "topic": "timeout"}))
            proc.send_signal(signal.SIGTERM)
            code = await anyio.to_thread.run_sync(proc.wait, 15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert code == 0, text
    assert "Traceback" not in text and "ERROR" not in text, text
