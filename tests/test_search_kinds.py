"""Release notes answer questions about versions and changes, not how-to questions: a page
of kind `changelog`, or a guide to moving between versions, weighs less unless the question
asks about changes (docs/search.md, "The ranking rules", 2)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import context_cli as cx
from context_cli.search.engine import rank
from context_cli.search.options import DEFAULT_PARAMS
from context_cli.search.query import Query
from context_cli.search.reference import page_kind, page_kind_weight
from context_cli.search.searcher import open_searcher


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    # The release notes name the feature more often than the guide does, as real ones do.
    (folder / "CHANGELOG.md").write_text(
        "# Changelog\n\n## 2.1.0\n\n- Streaming responses: stream a response body in chunks; streaming responses "
        "now close the stream when the client disconnects.\n- Streaming responses accept a chunk size.\n", "utf-8")
    (folder / "bodies.md").write_text(
        "# Response bodies\n\n## A body in pieces\n\nReturn a generator to stream the response to the client "
        "piece by piece.\n", "utf-8")
    return folder


def pages(question: str, installed: cx.Installed, changelog_weight: float) -> list[str]:
    params = replace(DEFAULT_PARAMS, changelog_weight=changelog_weight)
    ranked, _, _ = rank(question, [open_searcher(installed)], "lexical", params)
    return list(dict.fromkeys(c.doc_path for c in ranked))


def test_release_notes_rank_below_a_guide_unless_the_question_asks_about_changes(docs: Path, tmp_path: Path) -> None:
    installed = cx.build(docs, tmp_path / "p.db", name="p", version="1.0.0", embed=False)
    assert open_searcher(installed).page_kinds() == {"CHANGELOG.md": "changelog"}
    how = "how do I stream streaming responses in chunks"
    assert pages(how, installed, 1.0)[0] == "CHANGELOG.md"  # (without the rule, the notes win)
    assert pages(how, installed, DEFAULT_PARAMS.changelog_weight)[0] == "bodies.md"
    assert pages("which release changed streaming responses", installed, DEFAULT_PARAMS.changelog_weight)[0] \
        == "CHANGELOG.md"


def test_an_upgrade_guide_ranks_below_a_guide_unless_the_question_asks_about_changes(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    (folder / "guides").mkdir(parents=True)
    # The upgrade guide names the feature more often than the guide does, as real ones do.
    (folder / "guides" / "migrating-to-v5.md").write_text(
        "# Migrating to v5\n\n## Retries\n\nRetries of failed queries: the retry delay of failed queries is now "
        "a function; failed queries retry three times.\n", "utf-8")
    (folder / "guides" / "retries.md").write_text(
        "# Errors\n\n## When a query fails\n\nA failed query is tried again after a delay: set `retryDelay`.\n", "utf-8")
    installed = cx.build(folder, tmp_path / "p.db", name="p", version="1.0.0", embed=False)
    assert open_searcher(installed).page_kinds() == {}  # (the builder keeps it a guide)
    how = "how do I change the retry delay of failed queries"
    assert pages(how, installed, 1.0)[0] == "guides/migrating-to-v5.md"  # (without the rule, the guide to v5 wins)
    assert pages(how, installed, DEFAULT_PARAMS.changelog_weight)[0] == "guides/retries.md"
    assert pages("retry delay of failed queries after upgrading from v4", installed,
                 DEFAULT_PARAMS.changelog_weight)[0] == "guides/migrating-to-v5.md"


def test_which_guides_are_upgrade_guides() -> None:
    for path in ("migration.md", "guides/migrating-to-react-query-4.md", "migration/migrate-from-v10-to-v11.mdx",
                 "how-to/migrate-from-pydantic-v1-to-pydantic-v2.md", "upgrade-guides.md", "howto/upgrade-version.txt",
                 "docs/upgrading.rst", "client/migrating.mdx", "migration_2_0.md"):
        assert page_kind(None, path) == "changelog", path
    for path in ("topics/migrations.txt", "howto/writing-migrations.txt", "ref/migration-operations.txt",
                 "guides/retries.md", "migration/index.md", "upgrades/notes.md", "MIGRATION.md"):
        assert page_kind(None, path) is None, path
    assert page_kind("reference", "api/migration.md") == "reference"  # (a kind of its own stays)


def test_what_a_question_asks_of_a_page_kind() -> None:
    p = replace(DEFAULT_PARAMS, changelog_weight=0.5, reference_weight=0.25)
    assert page_kind_weight("guide", False, False, p) == 1.0
    assert page_kind_weight("changelog", False, False, p) == 0.5
    assert page_kind_weight("changelog", True, False, p) == 1.0
    assert page_kind_weight("reference", False, False, p) == 0.25
    assert page_kind_weight("reference", False, True, p) == 1.0
    for asks in ("what changed in 2.0", "is it deprecated", "how do I upgrade", "when did streaming launch",
                 "release notes", "breaking changes in v3", "what has changed", "moving from pydantic v1 to v2"):
        assert Query.of(asks).asks_changes, asks
    for how in ("how do I stream a response", "add a form field", "what does the client do", "an h2 heading",
                "changes inside my JSON column are not saved", "update when the row changes"):
        assert not Query.of(how).asks_changes, how
    for code in ("send_file options", "useEffect cleanup", "z.string min length", "call render() twice", "`Session`"):
        assert Query.of(code).names_symbol, code
    for prose in ("how do I send a file", "e.g. a login form", "version 2.0 notes"):
        assert not Query.of(prose).names_symbol, prose


def test_a_package_without_kinds_or_a_pages_table_weighs_every_page_alike(docs: Path, tmp_path: Path) -> None:
    installed = cx.build(docs, tmp_path / "p.db", name="p", version="1.0.0", embed=False)
    import sqlite3

    db = sqlite3.connect(installed.path)
    db.execute("DROP TABLE pages")
    db.commit()
    db.close()
    from context_cli.search.searcher import clear_cache

    clear_cache()
    s = open_searcher(installed)
    assert s.page_kinds() == {}
    assert pages("how do I stream streaming responses in chunks", installed, 0.5)[0] == "CHANGELOG.md"
