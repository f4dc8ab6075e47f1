"""What an agent reads when a tool call fails or succeeds, through the SDK's client: every
error names its next step, and numbers come as numbers (Neuledge Context's field names)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from mcp_fixtures import (  # noqa: F401
    answer_of,
    anyio_backend,
    build_package,
    make_home,
    publish,
    registry_server,
    stdio_session,
    text_of,
)

pytestmark = pytest.mark.anyio


def _nowhere() -> str:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


async def _error(session, tool: str, args: dict) -> str:
    result = await session.call_tool(tool, args)
    assert result.is_error, (tool, args, text_of(result))
    assert "\n" not in text_of(result)
    return text_of(result)


async def test_an_unreachable_registry_names_its_url_and_the_command_that_changes_it(tmp_path: Path) -> None:
    nowhere = _nowhere()
    async with stdio_session(make_home(tmp_path, registry_url=nowhere)) as session:
        for tool, args in [("search_packages", {"registry": "pip", "name": "flask"}),
                           ("download_package", {"registry": "pip", "name": "flask", "version": "3.1.0"})]:
            text = await _error(session, tool, args)
            assert f"cannot reach registry server {nowhere}: connection refused" in text
            assert "ask the user to run `context server add NAME URL --default`" in text


async def test_an_unreachable_registry_set_by_the_environment_says_so(tmp_path: Path) -> None:
    nowhere = _nowhere()
    home = make_home(tmp_path)
    async with stdio_session(home, env={"CONTEXT_REGISTRY_URL": nowhere}) as session:
        text = await _error(session, "search_packages", {"registry": "pip", "name": "flask"})
    assert nowhere in text and "change or unset CONTEXT_REGISTRY_URL" in text


async def test_misses_name_the_next_tool_to_call(tmp_path: Path) -> None:
    with registry_server(tmp_path / "registry") as url:
        for version in ("3.1.0", "3.0.3"):
            publish(url, build_package(tmp_path / f"f{version}.db", "flask", version, registry="pip"),
                    "pip", "flask", version)
        async with stdio_session(make_home(tmp_path, registry_url=url)) as session:
            text = await _error(session, "download_package", {"registry": "pip", "name": "flask", "version": "9.9.9"})
            assert "pip/flask@9.9.9 is not on test" in text and "it has 3.1.0, 3.0.3" in text
            assert "Call download_package with one of these versions" in text
            text = await _error(session, "download_package", {"registry": "pip", "name": "flsk", "version": "1.0"})
            assert "nor any version of pip/flsk" in text and "Call search_packages" in text

            text = await _error(session, "get_docs", {"library": "mylb", "topic": "cancel"})
            assert "Did you mean mylib?" in text and "search_packages" in text
            text = await _error(session, "get_docs", {"library": "mylib@9.9", "topic": "cancel"})
            assert "Installed versions: mylib@2.0.0, mylib@1.0.0" in text and "call search_packages" in text
            text = await _error(session, "search_packages", {"name": "flask"})
            assert text.startswith("registry is required (npm, pip")


async def test_a_pinned_session_says_what_the_agent_can_still_do(tmp_path: Path) -> None:
    async with stdio_session(make_home(tmp_path), "--libs", "other") as session:
        text = await _error(session, "get_docs", {"library": "mylib", "topic": "cancel"})
        assert "ask the user to add it to `context serve --libs`" in text


async def test_sizes_and_counts_are_numbers_under_contexts_names(tmp_path: Path) -> None:
    with registry_server(tmp_path / "registry") as url:
        pkg = build_package(tmp_path / "g.db", "gamma", "3.1.0", registry="npm")
        publish(url, pkg, "npm", "gamma", "3.1.0")
        async with stdio_session(make_home(tmp_path, registry_url=url)) as session:
            found = answer_of(await session.call_tool("search_packages", {"registry": "npm", "name": "gamma"}))
            entry = found["results"][0]
            assert entry["size"] == pkg.stat().st_size and "sizeBytes" not in entry
            done = answer_of(await session.call_tool("download_package",
                                                     {"registry": "npm", "name": "gamma", "version": "3.1.0"}))
    package = done["package"]
    assert package["sectionCount"] == 1 and package["sizeBytes"] == pkg.stat().st_size
    assert "Installed gamma@3.1.0 (1 section)" in done["message"]
