"""`context changes LIB FROM TO`: two real releases compared, got through the install chain."""

from __future__ import annotations

import json

from apiref_fixtures import pypi  # noqa: F401 - a fixture
from click.testing import CliRunner

from context_cli.apiref.changes import compare
from context_cli.store.store import Store
from context_cli.surfaces.cli import cli
from context_cli.symbol import Symbol


def test_changes_between_two_releases_fetched_and_built(pypi) -> None:  # noqa: F811
    result = CliRunner().invoke(cli, ["changes", "pip/itsdangerous", "2.1.2", "2.2.0", "--format", "json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["from"] == "itsdangerous@2.1.2" and answer["to"] == "itsdangerous@2.2.0"
    changed = {c["name"]: c for c in answer["changed"]}
    want = changed["itsdangerous.encoding.want_bytes"]
    assert "s: _t_str_bytes" in want["old"] and "s: str | bytes" in want["new"]
    # 2.2.0 annotated it; a bare class setting (2.1.2's `default_serializer = _CompactJSON`) is no entry
    assert [a["name"] for a in answer["added"]] == ["itsdangerous.url_safe.URLSafeSerializerMixin.default_serializer"]
    assert answer["removed"] == []
    assert [n["version"] for n in answer["releaseNotes"]] == ["2.2.0"]
    assert "Drop support for Python 3.7" in answer["releaseNotes"][0]["content"]
    assert {i.label for i in Store().installed()} == {"itsdangerous@2.1.2", "itsdangerous@2.2.0"}
    again = CliRunner().invoke(cli, ["changes", "itsdangerous", "2.1.2", "2.2.0", "--no-fetch"])  # installed now
    assert again.exit_code == 0 and "## Changed (" in again.stdout and "### " in again.stdout


def test_no_fetch_refuses_a_version_not_installed(pypi) -> None:  # noqa: F811
    result = CliRunner().invoke(cli, ["changes", "pip/itsdangerous", "2.1.2", "2.2.0", "--no-fetch"])
    assert result.exit_code == 1 and "not installed" in result.output


def test_compare_matches_moved_entries_by_their_public_names() -> None:
    old = [Symbol("pkg.a.run", "function", "run(x)", aliases=("pkg.run",)),
           Symbol("pkg.a.gone", "function", "gone()"),
           Symbol("pkg.a.old", "function", "old()")]
    new = [Symbol("pkg.b.run", "function", "run(x, y=1)", aliases=("pkg.run",)),
           Symbol("pkg.a.old", "function", "old()", deprecated="use run"),
           Symbol("pkg.a.fresh", "function", "fresh()")]
    added, removed, changed, deprecated = compare(old, new)
    assert [s.name for s in added] == ["pkg.a.fresh"] and [s.name for s in removed] == ["pkg.a.gone"]
    assert [(o.signature, n.signature) for o, n in changed] == [("run(x)", "run(x, y=1)")]
    assert [s.name for s in deprecated] == ["pkg.a.old"]
