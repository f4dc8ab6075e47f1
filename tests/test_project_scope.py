"""Project scope: inside a project synced with `context sync`, search and the MCP server see
exactly the packages its .context/docs.lock lists, and a bare name means the project's version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp_fixtures import anyio_backend, make_home, stdio_session, text_of  # noqa: F401

from context_cli.surfaces.cli import cli
from context_cli.sync.docslock import Entry, lock_path, write_lock


def synced_project(root: Path, *pins: tuple[str, str]) -> Path:
    """A project folder whose docs.lock pins these (name, version) of the `local` registry."""
    project = root / "project"
    (project / "src" / "deep").mkdir(parents=True)
    write_lock(lock_path(project), [Entry("local", n, v, "0" * 64, 1, "test") for n, v in pins])
    return project


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    found = make_home(tmp_path)  # mylib 1.0.0 and 2.0.0, other 0.3
    monkeypatch.setenv("CONTEXT_HOME", str(found))
    return found


def search(*args: str) -> dict:
    result = CliRunner().invoke(cli, ["search", "cancel a running pipeline", "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_search_inside_a_project_sees_only_its_versions(home: Path, tmp_path: Path, monkeypatch) -> None:
    project = synced_project(tmp_path, ("mylib", "1.0.0"))
    monkeypatch.chdir(project / "src" / "deep")  # found from the working folder upward
    answer = search()
    assert set(answer["searched"]) == {"mylib@1.0.0"}
    assert {r["library"] for r in answer["results"]} == {"mylib@1.0.0"}
    assert search("--lib", "mylib")["library"] == "mylib@1.0.0"  # a bare name: the project's version
    assert search("--lib", "other")["library"] == "other@0.3"  # others only when named
    assert set(search("--no-project")["searched"]) == {"mylib@1.0.0", "mylib@2.0.0", "other@0.3"}


def test_query_and_an_explicit_project_path(home: Path, tmp_path: Path, monkeypatch) -> None:
    project = synced_project(tmp_path, ("mylib", "1.0.0"))
    result = CliRunner().invoke(cli, ["query", "mylib", "pipelines", "--project", str(project)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["library"] == "mylib@1.0.0"
    outside = CliRunner().invoke(cli, ["query", "mylib", "pipelines"])
    assert json.loads(outside.output)["library"] == "mylib@2.0.0"  # no project: the highest


def test_a_lock_whose_packages_are_missing_says_to_sync(home: Path, tmp_path: Path, monkeypatch) -> None:
    project = synced_project(tmp_path, ("absent", "9.9.9"))
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli, ["search", "pipelines"])
    assert result.exit_code == 1 and "run `context sync`" in result.output


def test_a_locked_version_without_docs_is_said_not_answered_from_another(home: Path, tmp_path: Path,
                                                                          monkeypatch) -> None:
    project = synced_project(tmp_path, ("mylib", "3.0.0"), ("other", "0.3"))
    monkeypatch.chdir(project)
    for args in (["search", "pipelines", "--lib", "mylib"], ["query", "mylib", "pipelines"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1, result.output
        assert "local/mylib@3.0.0 is what" in result.output and "run `context sync`" in result.output
        assert "2.0.0" not in result.output and len(result.output.strip().splitlines()) == 1
    assert search("--lib", "mylib", "--no-project")["library"] == "mylib@2.0.0"


def test_a_damaged_lock_is_an_error_not_a_wider_scope(home: Path, tmp_path: Path, monkeypatch) -> None:
    project = synced_project(tmp_path, ("mylib", "1.0.0"))
    lock_path(project).write_text("{not json", "utf-8")
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli, ["search", "pipelines"])
    assert result.exit_code == 1 and "docs.lock" in result.output and len(result.output.splitlines()) == 1


@pytest.mark.anyio
async def test_mcp_server_started_inside_a_project(home: Path, tmp_path: Path) -> None:
    project = synced_project(tmp_path, ("mylib", "1.0.0"))
    async with stdio_session(home, cwd=project) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["get_docs"].input_schema["properties"]["library"]["enum"] == ["mylib@1.0.0"]
        result = await session.call_tool("get_docs", {"library": "mylib", "topic": "cancel a running pipeline"})
        assert not result.is_error
        assert json.loads(text_of(result))["library"] == "mylib@1.0.0"
        hidden = await session.call_tool("get_docs", {"library": "other", "topic": "anything"})
        assert hidden.is_error
    assert "project scope: 1 package from" in (home / "serve-stderr.log").read_text()
