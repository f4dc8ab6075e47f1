"""`context api NAME`: entries of a release's API, qualified or not, with did-you-mean."""

from __future__ import annotations

import json

import pytest
from apiref_fixtures import pypi  # noqa: F401 - a fixture
from click.testing import CliRunner

from context_cli.surfaces.cli import cli


@pytest.fixture
def installed(pypi) -> None:  # noqa: F811
    for version in ("2.1.2", "2.2.0"):
        result = CliRunner().invoke(cli, ["add", f"pypi:itsdangerous=={version}", "--no-embed"])
        assert result.exit_code == 0, result.output


def api(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["api", *args])
    return result.exit_code, result.stdout, result.stderr


def test_qualified_and_unqualified_names(installed) -> None:
    code, out, _ = api("Signer.sign", "--lib", "itsdangerous@2.2.0", "--format", "json")
    assert code == 0
    answer = json.loads(out)
    assert answer["library"] == "itsdangerous@2.2.0" and answer["query"] == "Signer.sign"
    [entry] = answer["symbols"]
    assert entry["name"] == "itsdangerous.signer.Signer.sign" and entry["kind"] == "method"
    assert entry["signature"] == "Signer.sign(value: str | bytes) -> bytes"
    assert entry["source"] == "src/itsdangerous/signer.py" and entry["line"] > 0
    assert set(entry) >= {"name", "kind", "signature", "doc", "deprecated", "since", "source", "line"}
    names = [s["name"] for s in json.loads(api("sign", "--lib", "itsdangerous@2.2.0", "--format", "json")[1])["symbols"]]
    assert names == ["itsdangerous.signer.Signer.sign", "itsdangerous.timed.TimestampSigner.sign"]
    code, out, _ = api("itsdangerous.URLSafeSerializer", "--lib", "itsdangerous@2.2.0")  # a re-export name
    assert code == 0 and "## itsdangerous.url_safe.URLSafeSerializer (class, itsdangerous@2.2.0)" in out


def test_unknown_name_suggests_close_ones(installed) -> None:
    code, _, err = api("TimestampSignr", "--lib", "itsdangerous@2.2.0")
    assert code == 1 and "did you mean: itsdangerous.timed.TimestampSigner" in err
    code, out, _ = api("TimestampSignr", "--lib", "itsdangerous@2.2.0", "--format", "json")
    assert code == 1 and json.loads(out)["symbols"] == []


def test_package_without_api_says_how_to_get_one(docs_folder) -> None:
    assert CliRunner().invoke(cli, ["add", str(docs_folder), "--name", "plain", "--pkg-version", "1",
                                    "--no-embed"]).exit_code == 0
    code, _, err = api("anything", "--lib", "plain")
    assert code == 1 and "no API reference" in err and "context add pypi:" in err


def test_a_deprecation_is_shown_once(tmp_path) -> None:
    from apiref_fixtures import write_tree

    root = write_tree(tmp_path / "hello", {
        "pyproject.toml": '[project]\nname = "hello"\nversion = "1.0"\n', "docs/index.md": "# Hello\n\nGreets.\n",
        "hello/__init__.py": 'def old(name: str) -> str:\n    """Say hi.\n\n    .. deprecated:: 1.0\n'
                             '       Use :func:`greet`.\n    """\n'})
    added = CliRunner().invoke(cli, ["add", str(root), "--no-embed"])
    assert added.exit_code == 0, added.output
    code, out, _ = api("old")
    assert code == 0 and out.count("Deprecated") == 1 and "Use `greet`." in out, out


def test_a_name_found_nowhere_among_many_libraries_is_one_short_line(tmp_path) -> None:
    """With more libraries than an error names, it counts them; the suggestion for a tail is
    its shallowest name (`pkgN.wave`, not a class's method of that name)."""
    from apiref_fixtures import write_tree

    for n in range(7):
        root = write_tree(tmp_path / f"pkg{n}", {
            "pyproject.toml": f'[project]\nname = "pkg{n}"\nversion = "1.0"\n', "docs/index.md": "# Pkg\n\nText.\n",
            f"pkg{n}/__init__.py": 'class Hand:\n    def wave(self) -> None:\n        """Wave it."""\n\n\n'
                                   'def wave() -> None:\n    """Wave."""\n'})
        assert CliRunner().invoke(cli, ["add", str(root), "--no-embed"]).exit_code == 0
    code, _, err = api("wavve")
    assert code == 1 and len(err.strip().splitlines()) == 1 and "any of the 7 installed libraries" in err, err
    assert "did you mean: pkg" in err and ".wave" in err and "Hand.wave" not in err.split("did you mean: ")[1].split(",")[0]
