"""MCP `get_api` and `get_changes` over the real SDK client, on two real releases."""

from __future__ import annotations

from pathlib import Path

import pytest
from apiref_fixtures import install_release
from mcp_fixtures import answer_of, anyio_backend, stdio_session  # noqa: F401 - a fixture

from context_cli.mcp_server.api_tools import get_api, get_changes
from context_cli.mcp_server.tools import Catalog, ToolError
from context_cli.store.store import Store

pytestmark = pytest.mark.anyio


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for version in ("2.1.2", "2.2.0"):
        install_release(home / "packages", version, tmp_path / "scratch")
    return home


async def test_get_api_and_get_changes_over_stdio(home: Path) -> None:
    async with stdio_session(home) as session:
        names = [t.name for t in (await session.list_tools()).tools]
        assert {"get_api", "get_changes"} <= set(names)
        entry = answer_of(await session.call_tool("get_api", {"library": "itsdangerous", "name": "Signer.sign"}))
        assert entry["library"] == "itsdangerous@2.2.0"
        assert [s["signature"] for s in entry["symbols"]] == ["Signer.sign(value: str | bytes) -> bytes"]
        diff = answer_of(await session.call_tool("get_changes", {"library": "itsdangerous", "from": "2.1.2"}))
        assert diff["to"] == "itsdangerous@2.2.0" and any(c["name"] == "itsdangerous.encoding.want_bytes"
                                                          for c in diff["changed"])
        assert diff["leftOut"] == {"added": 0, "removed": 0, "changed": 0, "deprecated": 0}
        small = await session.call_tool("get_changes", {"library": "itsdangerous", "from": "2.1.2", "tokens": 100})
        cut = answer_of(small)
        assert len(small.content[0].text) < 1000 and cut["leftOut"]["changed"] + cut["releaseNotesLeftOut"] > 0


async def test_a_session_limited_by_libs_may_look_up_its_api(home: Path) -> None:
    async with stdio_session(home, "--libs", "itsdangerous@2.1.2") as session:
        entry = answer_of(await session.call_tool("get_api", {"name": "want_bytes"}))
        assert entry["library"] == "itsdangerous@2.1.2" and "_t_str_bytes" in entry["symbols"][0]["signature"]


def test_unknown_names_and_bad_arguments(home: Path) -> None:
    catalog = Catalog(Store(home / "packages"))
    answer = get_api(catalog, {"library": "itsdangerous@2.2.0", "name": "URLSafeSerialiser"})
    assert answer["symbols"] == [] and "Did you mean: itsdangerous.url_safe.URLSafeSerializer" in answer["message"]
    with pytest.raises(ToolError, match="name is required"):
        get_api(catalog, {"library": "itsdangerous"})
    with pytest.raises(ToolError, match="tokens must be a whole number"):
        get_changes(catalog, {"library": "itsdangerous", "from": "2.1.2", "tokens": 10**9})
    with pytest.raises(ToolError, match="name must be a string"):
        get_api(catalog, {"name": ["x"]})
