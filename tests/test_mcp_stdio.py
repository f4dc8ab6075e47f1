"""`context serve` over stdio, driven by the MCP SDK's own client in a subprocess."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp_fixtures import (  # noqa: F401
    answer_of,
    anyio_backend,
    build_package,
    damage,
    is_list_changed,
    make_home,
    publish,
    registry_server,
    serve_env,
    stdio_session,
    text_of,
    tool_named,
)

from context_cli.store.store import Store

pytestmark = pytest.mark.anyio


async def test_initialize_lists_the_tools_with_the_library_enum(tmp_path: Path) -> None:
    async with stdio_session(make_home(tmp_path)) as session:
        init = session.initialize_result
        assert init.server_info.name == "context"
        assert init.capabilities.tools is not None and init.capabilities.tools.list_changed is True
        listing = await session.list_tools()
        assert [t.name for t in listing.tools] == ["get_docs", "search_packages", "download_package", "get_api",
                                                  "get_changes"]
        get_docs = tool_named(listing, "get_docs").input_schema
        assert get_docs["required"] == ["topic"]
        assert get_docs["properties"]["library"]["enum"] == ["mylib@2.0.0", "mylib@1.0.0", "other@0.3"]
        assert get_docs["properties"]["tokens"]["type"] == "integer"
        assert tool_named(listing, "search_packages").input_schema["required"] == ["registry", "name"]
        assert tool_named(listing, "download_package").input_schema["required"] == ["registry", "name", "version"]


async def test_get_docs_with_and_without_library_and_a_budget(tmp_path: Path) -> None:
    async with stdio_session(make_home(tmp_path)) as session:
        one = await session.call_tool("get_docs", {"library": "mylib@2.0.0", "topic": "cancel a running pipeline"})
        answer = answer_of(one)
        assert answer["library"] == "mylib@2.0.0" and answer["verdict"] in ("STRONG", "MODERATE")
        assert answer["results"][0]["source"] == "guide/cancel.md"
        assert one.structured_content is None  # the JSON text is the answer, sent once

        assert answer_of(await session.call_tool("get_docs", {"library": "mylib", "topic": "cancel"}))[
            "library"] == "mylib@2.0.0"

        everywhere = answer_of(await session.call_tool("get_docs", {"topic": "streaming cancellation pipelines"}))
        assert set(everywhere["searched"]) == {"mylib@2.0.0", "mylib@1.0.0", "other@0.3"}

        small = answer_of(await session.call_tool("get_docs", {"library": "mylib", "topic": "pipeline sink retries",
                                                               "tokens": 120}))
        big = answer_of(await session.call_tool("get_docs", {"library": "mylib", "topic": "pipeline sink retries"}))
        assert small["budget"] == 120 and 0 < small["tokens"] <= 120
        assert big["budget"] == 2000 and small["tokens"] < big["tokens"] <= 2000


async def test_failures_are_one_line_tool_errors_and_the_server_stays_up(tmp_path: Path) -> None:
    with socket.socket() as s:  # a registry port nobody listens on
        s.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{s.getsockname()[1]}"
    home = make_home(tmp_path, registry_url=nowhere)
    async with stdio_session(home) as session:
        cases = [
            ("get_docs", {"library": "nope@1.0", "topic": "x"}, "Package not found: nope@1.0"),
            ("get_docs", {"library": "mylib", "topic": ""}, "topic is empty"),
            ("get_docs", {"library": "mylib"}, "topic is required"),
            ("get_docs", {"topic": "x", "tokens": 3}, "tokens must be"),
            ("get_docs", {"topic": "x", "tokens": "lots"}, "tokens must be"),
            ("search_packages", {"name": "react"}, "registry is required"),
            ("search_packages", {"registry": "npm", "name": "react"}, "cannot reach registry server"),
            ("download_package", {"registry": "npm", "name": "react"}, "version is required"),
            ("no_such_tool", {}, "Unknown tool: no_such_tool"),
        ]
        for name, args, message in cases:
            result = await session.call_tool(name, args)
            assert result.is_error, (name, args)
            assert message in text_of(result) and "\n" not in text_of(result)
        hostile = ['NOT AND OR NEAR "x', "x" * 10_000, "🙂 キャンセル", "col:cancel*", "\x00"]
        for topic in hostile:
            assert not (await session.call_tool("get_docs", {"library": "mylib", "topic": topic})).is_error
        assert answer_of(await session.call_tool("get_docs", {"library": "mylib", "topic": "timeout"}))["results"]

        sections = [("p.md", "Page", f"S{i}", f"word{i} pipeline content " * 80) for i in range(100)]
        broken = Store(home / "packages").install(build_package(tmp_path / "b.db", "broken", "1.0", sections)).path
        damage(broken)
        result = await session.call_tool("get_docs", {"library": "broken", "topic": "pipeline"})
        assert result.is_error and "\n" not in text_of(result)
        assert "damaged" in text_of(result) or "Package not found: broken" in text_of(result)
        broken.unlink()  # the server recovers without a restart
        assert answer_of(await session.call_tool("get_docs", {"library": "mylib", "topic": "timeout"}))["results"]


async def test_fifty_concurrent_calls_on_one_session(tmp_path: Path) -> None:
    async with stdio_session(make_home(tmp_path)) as session:
        topics = ["cancel", "timeout", "retries", "sink closed", "install"]
        results: list = [None] * 50

        async def call(i: int) -> None:
            results[i] = await session.call_tool("get_docs", {"library": "mylib", "topic": topics[i % 5]})

        started = time.perf_counter()
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for i in range(50):
                    tg.start_soon(call, i)
        elapsed = time.perf_counter() - started
        assert all(not r.is_error for r in results)
        assert [answer_of(r)["query"] for r in results] == [topics[i % 5] for i in range(50)]
        assert elapsed < 10


async def test_nothing_installed_offers_a_plain_string(tmp_path: Path) -> None:
    async with stdio_session(make_home(tmp_path, [])) as session:
        library = tool_named(await session.list_tools(), "get_docs").input_schema["properties"]["library"]
        assert "enum" not in library and "No libraries are installed" in library["description"]
        result = await session.call_tool("get_docs", {"library": "react", "topic": "hooks"})
        assert result.is_error and "search_packages" in text_of(result)


async def test_libs_pins_the_session_and_hides_the_registry_tools(tmp_path: Path) -> None:
    async with stdio_session(make_home(tmp_path), "--libs", "mylib") as session:
        listing = await session.list_tools()
        assert [t.name for t in listing.tools] == ["get_docs", "get_api", "get_changes"]  # no registry tools
        assert tool_named(listing, "get_docs").input_schema["properties"]["library"]["enum"] == [
            "mylib@2.0.0", "mylib@1.0.0"]
        refused = await session.call_tool("get_docs", {"library": "other", "topic": "pipeline"})
        assert refused.is_error and "not available in this session" in text_of(refused)
        hidden = await session.call_tool("search_packages", {"registry": "npm", "name": "react"})
        assert hidden.is_error and "Unknown tool" in text_of(hidden)
        assert answer_of(await session.call_tool("get_docs", {"library": "mylib", "topic": "cancel"}))["results"]


async def test_libs_with_a_version_and_a_list(tmp_path: Path) -> None:
    async with stdio_session(make_home(tmp_path), "--libs", "mylib@1.0.0", "other") as session:
        enum = tool_named(await session.list_tools(), "get_docs").input_schema["properties"]["library"]["enum"]
        assert enum == ["mylib@1.0.0", "other@0.3"]


def test_an_unknown_libs_spec_stops_start_up(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    done = subprocess.run([sys.executable, "-m", "context_cli", "serve", "--libs", "mylib,other", "--libs", "nope@2"],
                          env={**serve_env(home), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert done.stderr.strip() == "Error: --libs nope@2: not installed (see `context list`)"
    assert done.stdout == ""


async def test_search_download_then_get_docs_with_list_changed(tmp_path: Path) -> None:
    changed = anyio.Event()
    seen: list = []

    async def handler(message) -> None:
        seen.append(message)
        if is_list_changed(message):
            changed.set()

    with registry_server(tmp_path / "registry") as url:
        sections = [("hooks.md", "Hooks", "useGamma", "Call useGamma() inside a component to read the gamma store.")]
        publish(url, build_package(tmp_path / "g.db", "gamma", "3.1.0", sections, registry="npm"),
                "npm", "gamma", "3.1.0")
        async with stdio_session(make_home(tmp_path, registry_url=url), handler=handler) as session:
            before = tool_named(await session.list_tools(), "get_docs").input_schema["properties"]["library"]["enum"]
            assert "gamma@3.1.0" not in before
            missing = await session.call_tool("get_docs", {"library": "gamma", "topic": "useGamma"})
            assert missing.is_error and "search_packages" in text_of(missing)

            found = answer_of(await session.call_tool("search_packages", {"registry": "npm", "name": "gamma"}))
            assert found["count"] == 1 and found["results"][0]["version"] == "3.1.0"
            version = found["results"][0]["version"]
            done = answer_of(await session.call_tool("download_package",
                                                     {"registry": "npm", "name": "gamma", "version": version}))
            assert done["success"] and done["package"]["library"] == "gamma@3.1.0"
            with anyio.fail_after(5):
                await changed.wait()
            assert sum(map(is_list_changed, seen)) == 1

            after = tool_named(await session.list_tools(), "get_docs").input_schema["properties"]["library"]["enum"]
            assert "gamma@3.1.0" in after
            answer = answer_of(await session.call_tool("get_docs", {"library": "gamma@3.1.0", "topic": "useGamma"}))
            assert answer["results"][0]["source"] == "hooks.md"

            absent = await session.call_tool("download_package", {"registry": "npm", "name": "gamma", "version": "9"})
            assert absent.is_error and "not on" in text_of(absent)


async def test_a_package_added_by_another_process_is_announced_in_both_eras(tmp_path: Path) -> None:
    from mcp.client.subscriptions import listen

    changed = anyio.Event()

    async def handler(message) -> None:
        if is_list_changed(message):
            changed.set()

    home = make_home(tmp_path)
    async with stdio_session(home, handler=handler) as legacy, stdio_session(home, modern=True) as modern:
        await legacy.list_tools()
        async with listen(modern, tools_list_changed=True) as subscription:
            Store(home / "packages").install(build_package(tmp_path / "late.db", "late", "1.0"))
            with anyio.fail_after(8):
                await changed.wait()
                assert type(await subscription.__anext__()).__name__ == "ToolsListChanged"
        for session in (legacy, modern):
            enum = tool_named(await session.list_tools(), "get_docs").input_schema["properties"]["library"]["enum"]
            assert "late@1.0" in enum


MODEL = Path(__file__).resolve().parents[1] / "context_cli" / "embed" / "default_model" / "model.safetensors"


@pytest.mark.skipif(not MODEL.exists(), reason="the shipped embedding model is not present")
async def test_a_package_added_with_embeddings_is_searched_hybrid(tmp_path: Path, docs_folder: Path) -> None:
    home = make_home(tmp_path, [])
    done = subprocess.run([sys.executable, "-m", "context_cli", "add", str(docs_folder), "--name", "mylib",
                           "--pkg-version", "3.0.0"], env={**serve_env(home), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    async with stdio_session(home) as session:
        answer = answer_of(await session.call_tool("get_docs", {"library": "mylib", "topic": "stop a pipeline early"}))
        assert answer["searched"] == {"mylib@3.0.0": "hybrid"}
        assert answer["results"][0]["source"] == "guide/cancel.md"
