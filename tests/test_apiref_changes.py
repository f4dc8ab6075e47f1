"""`context changes LIB FROM TO`: two real releases compared, got through the install chain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apiref_fixtures import install_release, pypi, unpack_sdist  # noqa: F401 - a fixture
from click.testing import CliRunner

from context_cli.apiref.changes import compare, parameters, same_parameters
from context_cli.package.reader import open_package
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
    assert want["annotationsOnly"] is True
    # 2.2.0 annotated it; a bare class setting (2.1.2's `default_serializer = _CompactJSON`) is no entry
    assert [a["name"] for a in answer["added"]] == ["itsdangerous.url_safe.URLSafeSerializerMixin.default_serializer"]
    assert answer["removed"] == []
    assert [n["version"] for n in answer["releaseNotes"]] == ["2.2.0"]
    assert "Drop support for Python 3.7" in answer["releaseNotes"][0]["content"]
    assert {i.label for i in Store().installed()} == {"itsdangerous@2.1.2", "itsdangerous@2.2.0"}
    again = CliRunner().invoke(cli, ["changes", "itsdangerous", "2.1.2", "2.2.0", "--no-fetch"])  # installed now
    assert again.exit_code == 0 and "## Changed (" in again.stdout and "### " in again.stdout
    retyped = sum(c["annotationsOnly"] for c in answer["changed"])
    assert f"### In annotations only ({retyped})" in again.stdout


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


@pytest.mark.parametrize(("old", "new", "same"), [
    ("f(a: int, b: str = 'x') -> None", "f(a: int | None, b: bytes = 'x') -> bool", True),
    ("Flask.open_resource(resource: str, mode: str = 'rb')",
     "Flask.open_resource(resource: str, mode: str = 'rb', encoding: str | None = None)", False),
    ("f(a, b=1)", "f(a, b=2)", False),  # a default changed
    ("f(a, b)", "f(b, a)", False),  # the order changed
    ("f(a, *, b)", "f(a, b)", False),  # keyword-only no longer
    ("class S(MutableMapping) S(x=None)", "class S(MutableMapping[str, Any]) S(x: dict | None = None)", True),
    ("class S(Base)", "class S(Other)", False),
    ("View.decorators: list[Callable] = []", "View.decorators: list[Callable[..., Any]] = []", True),
    ("f(sep: str = ',', key=lambda x: (x, 1))", "f(sep: Literal[','] = ',', key=lambda x: (x, 1))", True),
    ("f(x: str = ')')", "f(x: bytes = ')')", True),  # a bracket in a string is no bracket
    ("on(event: string, cb: (err: Error, n: number) => void): this",
     "on(event: 'close' | 'data', cb: (err?: Error) => void): this", True),
    ("create(opts?: { a: string, b: number }): Client", "create(options?: Options): Client", False),
    ("f(a", "f(a", False),  # unbalanced: never called the same
    ("f(a='", "f(a='", False),
])
def test_annotations_only_changes_are_told_apart(old: str, new: str, same: bool) -> None:
    assert same_parameters(old, new) is same


def test_parameters_of_a_class_and_its_constructor() -> None:
    assert parameters("class C(Base[T], Mixin) C(a: int, *args, b=(1, 2), **kw) -> None") == [
        [("Base", ""), ("Mixin", "")], [("a", ""), ("*args", ""), ("b", "(1, 2)"), ("**kw", "")]]
    assert parameters("x: int") == [] and parameters("f)") is None


def test_a_package_built_before_the_api_is_rebuilt_with_it(pypi, context_home: Path, tmp_path: Path) -> None:  # noqa: F811
    old = install_release(context_home / "packages", "2.1.2", tmp_path, api=False)
    install_release(context_home / "packages", "2.2.0", tmp_path)
    with open_package(old) as pkg:
        assert not pkg.has_symbols
    refused = CliRunner().invoke(cli, ["changes", "pip/itsdangerous", "2.1.2", "2.2.0", "--no-fetch"])
    assert refused.exit_code == 1 and len(refused.stderr.strip().splitlines()) == 1, refused.output
    assert "itsdangerous@2.1.2 has no API reference" in refused.stderr
    assert "`context add pypi:itsdangerous==2.1.2` rebuilds it" in refused.stderr
    result = CliRunner().invoke(cli, ["changes", "pip/itsdangerous", "2.1.2", "2.2.0", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "itsdangerous.encoding.want_bytes" in {c["name"] for c in json.loads(result.stdout)["changed"]}
    with open_package(Store().resolve("itsdangerous@2.1.2").path) as pkg:
        assert pkg.has_symbols  # rebuilt through the ladder (its sdist) and installed in its place


def test_a_registry_package_without_the_api_is_not_replaced_silently(pypi, tmp_path: Path) -> None:  # noqa: F811
    from context_cli.build import BuildOptions, build
    from context_cli.sources.base import Fetched

    root = unpack_sdist("itsdangerous-2.1.2", tmp_path)
    fetched = Fetched(source_type="pypi", source_url="pypi:itsdangerous==2.1.2", folder=root, docs_path="docs",
                      code=root, name="itsdangerous", version="2.1.2", registry="pip")
    built = build(fetched, tmp_path / "old.db", BuildOptions(embed=False, registry="pip", api=False))
    Store().install(built.path, server="https://registry.example.com")
    result = CliRunner().invoke(cli, ["changes", "pip/itsdangerous", "2.1.2", "2.2.0"])
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1, result.output
    assert "installed from a registry server without its API reference" in result.stderr
    assert "`context add pypi:itsdangerous==2.1.2 --replace` rebuilds it" in result.stderr
    with open_package(Store().resolve("itsdangerous@2.1.2").path) as pkg:
        assert not pkg.has_symbols  # left as it was


def test_changes_are_cut_to_a_budget_what_to_act_on_first() -> None:
    """Removed entries first, then parameter changes, deprecations, additions, annotation-only
    changes and release notes; what does not fit is counted."""
    from context_cli.apiref.changes import Changes, Note

    def s(name: str, sig: str = "") -> Symbol:
        return Symbol(f"pkg.{name}", "function", sig or f"{name}(x)")

    full = Changes("pkg", "pkg@1", "pkg@2", added=[s(f"new{i}") for i in range(50)], removed=[s("gone")],
                   changed=[(s("typed", "typed(x)"), s("typed", "typed(x: int)")), (s("grew"), s("grew", "grew(x, y)"))],
                   deprecated=[Symbol("pkg.old", "function", "old()", deprecated="use new")],
                   notes=[Note("2.0", "Version 2.0", "x" * 5000, "CHANGES.rst")])
    assert full.within(100_000).to_dict()["leftOut"] == {"added": 0, "removed": 0, "changed": 0, "deprecated": 0}
    cut = full.within(400).to_dict()
    assert [c["name"] for c in cut["removed"]] == ["pkg.gone"] and [c["name"] for c in cut["changed"]] == ["pkg.grew"]
    assert cut["deprecated"] and 0 < len(cut["added"]) < 50 and cut["releaseNotes"] == []
    assert cut["leftOut"] == {"added": 50 - len(cut["added"]), "removed": 0, "changed": 1, "deprecated": 0}
    assert cut["releaseNotesLeftOut"] == 1 and len(json.dumps(cut)) < 400 * 4


def test_the_markdown_counts_what_a_budget_left_out(pypi) -> None:  # noqa: F811
    result = CliRunner().invoke(cli, ["changes", "pip/itsdangerous", "2.1.2", "2.2.0", "--budget", "100"])
    assert result.exit_code == 0, result.output
    assert "## Changed (" in result.stdout and " of " in result.stdout
    assert result.stdout.rstrip().splitlines()[-1].startswith("Left out to fit the budget:")
