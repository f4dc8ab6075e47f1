"""A package that makes search hang costs one call an error result, never the MCP server.

The server runs as a real `context serve` subprocess driven by the SDK client; the hostile
package sits in the store as a file that got past an older install (mcp_fixtures.slow_package).
If install-time checks later refuse such a file at open, the slow call is a plain error.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import anyio
import pytest
from mcp_fixtures import answer_of, anyio_backend, make_home, slow_package, stdio_session, text_of  # noqa: F401

from context_cli.package.identity import PackageId

pytestmark = pytest.mark.anyio


async def test_a_hanging_package_does_not_stall_the_server(tmp_path: Path) -> None:
    home = make_home(tmp_path, [("mylib", "1.0.0")])
    hostile = slow_package(tmp_path / "slow.db")
    shutil.copyfile(hostile, home / "packages" / PackageId("local", "slow", "1.0.0").filename)
    async with stdio_session(home, env={"CONTEXT_MCP_SEARCH_SECONDS": "1.5"}) as session:
        slow_results: list[tuple[float, object]] = []

        async def slow_call() -> None:
            start = time.monotonic()
            result = await session.call_tool("get_docs", {"library": "slow", "topic": "slow streams"})
            slow_results.append((time.monotonic() - start, result))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(slow_call)
                await anyio.sleep(0.3)
                listing = await session.list_tools()  # answers while the slow searches run
                assert "get_docs" in [t.name for t in listing.tools]
                healthy = await session.call_tool("get_docs", {"library": "mylib", "topic": "cancel a pipeline"})
                assert answer_of(healthy)["library"] == "mylib@1.0.0"
        assert len(slow_results) == 3
        for seconds, result in slow_results:
            assert result.is_error and seconds < 10, (seconds, text_of(result))
        # The time limit stopped them (or, once packages like this are refused at open, the refusal).
        assert all("took longer than 1.5s" in text_of(r) or "Package not found: slow" in text_of(r)
                   for _, r in slow_results)
        again = await session.call_tool("get_docs", {"library": "mylib", "topic": "retries backoff"})
        assert not again.is_error
