"""A running `context serve` follows the package folder: what `context add` and `context remove`
do in another process shows in the tool list and in answers without a restart, over both
transports, and a session pinned with --libs stays pinned."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp_fixtures import (  # noqa: F401
    answer_of,
    anyio_backend,
    build_package,
    http_server,
    http_session,
    make_home,
    serve_env,
    stdio_session,
    text_of,
    tool_named,
)

pytestmark = pytest.mark.anyio


def context(home: Path, *args: str) -> None:
    """The CLI in a process of its own, as a person in another terminal would run it."""
    done = subprocess.run([sys.executable, "-m", "context_cli", *args], env={**serve_env(home), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr


async def enum_of(session) -> list[str]:
    schema = tool_named(await session.list_tools(), "get_docs").input_schema["properties"]["library"]
    return list(schema.get("enum", []))


async def until(session, predicate, seconds: float = 10.0) -> list[str]:
    """The library choices once `predicate` holds for them (the watcher looks every second or so)."""
    with anyio.fail_after(seconds):
        while not predicate(choices := await enum_of(session)):
            await anyio.sleep(0.2)
    return choices


async def test_add_and_remove_in_another_process_show_without_a_restart(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    late = build_package(tmp_path / "late.db", "late", "1.0", [("a.md", "Late", "Intro", "late arrivals stream in")])
    with http_server(home) as url:
        async with http_session(url) as session:
            assert "late@1.0" not in await enum_of(session)
            context(home, "add", str(late))
            await until(session, lambda c: "late@1.0" in c)
            found = answer_of(await session.call_tool("get_docs", {"library": "late", "topic": "late arrivals"}))
            assert found["library"] == "late@1.0" and found["results"]
            everywhere = answer_of(await session.call_tool("get_docs", {"topic": "late arrivals stream"}))
            assert "late@1.0" in everywhere["searched"]

            context(home, "remove", "late")
            assert "late@1.0" not in await until(session, lambda c: "late@1.0" not in c)
            gone = await session.call_tool("get_docs", {"library": "late", "topic": "late arrivals"})
            assert gone.is_error and "Package not found: late" in text_of(gone)
            everywhere = answer_of(await session.call_tool("get_docs", {"topic": "late arrivals stream"}))
            assert "late@1.0" not in everywhere["searched"]


async def test_libs_pins_stay_pinned_while_the_folder_changes(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with stdio_session(home, "--libs", "other") as session:
        assert await enum_of(session) == ["other@0.3"]
        context(home, "add", str(build_package(tmp_path / "late.db", "late", "1.0")))
        context(home, "add", str(build_package(tmp_path / "other4.db", "other", "0.4")))
        # A new version of the pinned name comes in (a bare name pins all its versions) ...
        assert await until(session, lambda c: "other@0.4" in c) == ["other@0.4", "other@0.3"]
        # ... and nothing else does.
        refused = await session.call_tool("get_docs", {"library": "late", "topic": "streaming"})
        assert refused.is_error and "late is not available in this session (limited by --libs to: " \
            "other@0.4, other@0.3)" in text_of(refused)
        assert set(answer_of(await session.call_tool("get_docs", {"topic": "streaming"}))["searched"]) == {
            "other@0.4", "other@0.3"}
        context(home, "remove", "late")
        context(home, "remove", "other@0.4")
        assert await until(session, lambda c: "other@0.4" not in c) == ["other@0.3"]
