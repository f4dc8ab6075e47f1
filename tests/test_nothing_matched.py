"""An honest answer when nothing matches: no word of the question in the packages searched and
no section closer in meaning than nonsense gets there gives no sections and a note naming the
absent words, through the engine, the CLI (Markdown and JSON), MCP `get_docs` over the SDK's
client and the registry's page; a question with any word of the docs still gets its answer.

The package with vectors is the eval corpus (45 real pages) built with the shipped model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import EVAL_CORPUS, make_package
from mcp_fixtures import answer_of, anyio_backend, build_package, make_home, stdio_session  # noqa: F401

import context_cli as cx
from context_cli.search.engine import SearchOptions, answer
from context_cli.store.store import Installed, Store
from context_cli.surfaces.cli import cli

NONSENSE = "zzqxv frobnicate"
NOTE = "nothing matched: no section of"


@pytest.fixture(scope="module")
def eval_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The eval corpus as a package file with vectors, built once for the module."""
    out = tmp_path_factory.mktemp("eval") / "anthropic@1.0.0.db"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CONTEXT_HOME", str(tmp_path_factory.mktemp("build-home")))
        cx.build(EVAL_CORPUS, out, name="anthropic", version="1.0.0", registry="pip")
    return out


@pytest.fixture
def eval_pkg(eval_db: Path) -> Installed:
    return Store().install(eval_db)


def nothing_noted(notes: list[str]) -> list[str]:
    return [n for n in notes if n.startswith(NOTE)]


def test_nonsense_gets_no_sections_and_a_note_naming_the_absent_words(eval_pkg: Installed) -> None:
    found = answer(NONSENSE, [eval_pkg])
    assert found.searched == {"anthropic@1.0.0": "hybrid"}  # the dense side was asked, and was at its floor
    assert found.results == [] and found.tokens == 0 and found.verdict == "WEAK"
    (note,) = nothing_noted(found.notes)
    assert "anthropic@1.0.0" in note and "'zzqxv' or 'frobnicate'" in note
    assert found.to_dict()["notes"] == found.notes


@pytest.mark.parametrize("question", ["How do I stream responses?", "prompt caching", "vision image size",
                                      "rate limits and errors"])
def test_a_question_with_words_of_the_docs_is_answered(eval_pkg: Installed, question: str) -> None:
    found = answer(question, [eval_pkg])
    assert found.results and not nothing_noted(found.notes)


@pytest.mark.parametrize("word", ["pictures", "photographs"])
def test_a_word_absent_but_close_in_meaning_is_still_answered(eval_pkg: Installed, word: str) -> None:
    """The docs never say "pictures", but their vision page is about images: closer in meaning
    than nonsense gets, so the answer stands."""
    found = answer(word, [eval_pkg])
    assert found.results and not nothing_noted(found.notes)
    assert found.results[0].signals["missingTerms"] == [word]
    assert found.results[0].source == "docs/build-with-claude/vision.md"


def test_over_several_packages_every_one_must_lack_the_words(eval_pkg: Installed, tmp_path: Path) -> None:
    other = Store().install(make_package(tmp_path / "o.db", "other", "1.0.0",
                                         [("a.md", "Frobnicate", "How to frobnicate a widget.")]))
    assert answer(NONSENSE, [eval_pkg, other]).results  # `other` has "frobnicate"
    lexical = Store().install(make_package(tmp_path / "l.db", "plain", "1.0.0"))
    both = answer(NONSENSE, [eval_pkg, lexical])
    assert both.results == [] and "of the 2 packages searched" in nothing_noted(both.notes)[0]


def test_a_lexical_package_lacking_every_word_says_so(tmp_path: Path) -> None:
    pkg = Store().install(make_package(tmp_path / "l.db", "plain", "1.0.0"))
    found = answer("kubernetes ingress", [pkg], SearchOptions())
    assert found.results == [] and nothing_noted(found.notes) == [
        "nothing matched: no section of plain@1.0.0 contains 'kubernetes' or 'ingress', and none comes closer "
        "in meaning than unrelated text does; try other words, or check that this is the right library"]


def test_cli_markdown_and_json_say_nothing_matched(eval_db: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["add", str(eval_db)]).exit_code == 0
    md = runner.invoke(cli, ["search", NONSENSE, "--lib", "anthropic"])
    assert md.exit_code == 0, md.output
    assert f"> {NOTE} anthropic@1.0.0 contains 'zzqxv' or 'frobnicate'" in md.output
    assert "No matching sections." in md.output and "## 1." not in md.output
    data = json.loads(runner.invoke(cli, ["search", NONSENSE, "--lib", "anthropic", "--format", "json"]).output)
    assert data["results"] == [] and data["tokens"] == 0 and nothing_noted(data["notes"])
    query = json.loads(runner.invoke(cli, ["query", "anthropic", NONSENSE]).output)
    assert query["results"] == [] and nothing_noted(query["notes"])


def test_markdown_names_the_words_a_library_lacks(eval_db: Path) -> None:
    runner = CliRunner()
    runner.invoke(cli, ["add", str(eval_db)])
    md = runner.invoke(cli, ["search", "streaming frobnicate", "--lib", "anthropic"]).output
    assert "*not in anthropic@1.0.0: frobnicate*" in md and "## 1." in md
    assert "*not in" not in runner.invoke(cli, ["search", "streaming responses", "--lib", "anthropic"]).output


@pytest.mark.anyio
async def test_mcp_get_docs_answers_nothing_with_the_note(tmp_path: Path) -> None:
    home = make_home(tmp_path, [("mylib", "1.0.0")])
    async with stdio_session(home) as session:
        found = answer_of(await session.call_tool("get_docs", {"library": "mylib", "topic": NONSENSE}))
        assert found["results"] == [] and nothing_noted(found["notes"]) and found["message"]
        assert answer_of(await session.call_tool("get_docs", {"library": "mylib", "topic": "cancel a pipeline"}))[
            "results"]


def test_the_registry_page_says_nothing_matched(eval_db: Path, tmp_path: Path) -> None:
    from registry_fixtures import AUTH, KEY, package_url
    from starlette.testclient import TestClient

    from registry_server.app import create_app

    with TestClient(create_app(tmp_path / "data", publish_key=KEY)) as client:
        assert client.post(package_url("pip", "anthropic", "1.0.0"), content=eval_db.read_bytes(),
                           headers=AUTH).status_code == 201
        html = client.get("/docs/pip/anthropic/1.0.0", params={"q": NONSENSE}).text
        partly = client.get("/docs/pip/anthropic/1.0.0", params={"q": "streaming frobnicate"}).text
    assert f'<p class="notice">{NOTE} anthropic@1.0.0 contains &#x27;zzqxv&#x27;' in html
    assert "No matching sections." in html and '<article class="result">' not in html
    assert '<p class="muted">not in anthropic@1.0.0: frobnicate</p>' in partly and '<article class="result">' in partly


def test_build_package_of_the_mcp_fixtures_is_lexical(tmp_path: Path) -> None:
    """(The MCP test above relies on it: a package without vectors reaches the note by its
    words alone.)"""
    pkg = Store().install(build_package(tmp_path / "m.db", "m", "1.0.0"))
    assert answer("pipelines", [pkg]).searched == {"m@1.0.0": "lexical"}
