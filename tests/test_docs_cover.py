"""The note an answer carries when a package's docs are not exact to its version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import make_package
from mcp_fixtures import answer_of, anyio_backend, make_home, stdio_session  # noqa: F401

from context_cli.package.docs_cover import covers_note, docs_note
from context_cli.store.store import Store
from context_cli.surfaces.cli import cli


def test_exact_docs_carry_no_note():
    assert docs_note({"name": "flask", "version": "3.0.3"}) is None
    assert docs_note({"name": "flask", "version": "3.0.3", "docs_source": "definition", "docs_ref": "3.0.3"}) is None
    assert docs_note({"name": "flask", "version": "3.0.3", "docs_version": "3.0.3"}) is None
    assert docs_note({}) is None


def test_latest_docs_say_so_with_where_they_were_read():
    note = docs_note({"name": "next", "version": "15.1.3", "docs_version": "latest",
                      "docs_ref": "https://nextjs.org/docs"})
    assert note == ("next@15.1.3: these are the project's latest docs (https://nextjs.org/docs), not docs of "
                    "15.1.3; check what changed since 15.1.3")


def test_docs_of_a_range_name_it():
    assert docs_note({"name": "vue", "version": "3.5.13", "docs_version": "3.x", "docs_ref": "abc123"}) == (
        "vue@3.5.13: these docs cover 3.x (abc123), not exactly 3.5.13")
    assert covers_note("vue", "3.5.13", "3.x") == "vue@3.5.13: these docs cover 3.x, not exactly 3.5.13"


# An answer drawn from such a package says so: in `notes` (JSON, `context query`, MCP) and in
# the Markdown, once per package that the answer draws from.

LATEST = "next@15.1.3: these are the project's latest docs (https://nextjs.org/docs), not docs of 15.1.3"
RANGE = "vue@3.5.13: these docs cover 3.x (abc123), not exactly 3.5.13"


def covering(notes: list[str]) -> list[str]:
    """The notes on what docs cover (a package without vectors also says it was searched lexically)."""
    return [n for n in notes if "docs" in n]


def _install_both(tmp_path: Path) -> None:
    Store().install(make_package(tmp_path / "next.db", "next", "15.1.3",
                                 [("routing.md", "Routing", "Dynamic routes stream pages to the client.")],
                                 registry="npm", docs_version="latest", docs_ref="https://nextjs.org/docs"))
    Store().install(make_package(tmp_path / "vue.db", "vue", "3.5.13",
                                 [("guide.md", "Components", "Components stream slots to children.")],
                                 registry="npm", docs_version="3.x", docs_ref="abc123"))
    Store().install(make_package(tmp_path / "exact.db", "exact", "1.0.0",
                                 [("a.md", "Intro", "Nothing about the topic at all.")], registry="npm"))


def test_the_cli_answer_says_what_the_docs_cover(tmp_path: Path) -> None:
    _install_both(tmp_path)
    runner = CliRunner()
    data = json.loads(runner.invoke(cli, ["search", "stream", "--format", "json"]).output)
    assert {r["library"] for r in data["results"]} == {"next@15.1.3", "vue@3.5.13"}
    assert covering(data["notes"]) == [LATEST + "; check what changed since 15.1.3", RANGE]
    one = json.loads(runner.invoke(cli, ["query", "vue", "slots"]).output)
    assert covering(one["notes"]) == [RANGE]
    md = runner.invoke(cli, ["search", "stream", "--lib", "next"]).output
    assert f"> {LATEST}" in md and RANGE not in md


def test_a_package_the_answer_does_not_draw_from_adds_no_note(tmp_path: Path) -> None:
    _install_both(tmp_path)
    data = json.loads(CliRunner().invoke(cli, ["search", "routes", "--format", "json"]).output)
    assert {r["library"] for r in data["results"]} == {"next@15.1.3"}
    assert covering(data["notes"]) == [LATEST + "; check what changed since 15.1.3"]


@pytest.mark.anyio
async def test_mcp_get_docs_says_what_the_docs_cover(tmp_path: Path) -> None:
    home = make_home(tmp_path, [])
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CONTEXT_HOME", str(home))
        _install_both(tmp_path)
    async with stdio_session(home) as session:
        found = answer_of(await session.call_tool("get_docs", {"library": "vue", "topic": "slots"}))
        assert covering(found["notes"]) == [RANGE]
        exact = answer_of(await session.call_tool("get_docs", {"library": "exact", "topic": "topic"}))
        assert exact["results"] and covering(exact.get("notes", [])) == []
