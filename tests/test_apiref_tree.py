"""Folder and git sources that are packages get the API too (real temp repositories over
file://); other trees get none; `--no-api` turns it off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apiref_fixtures import write_tree
from click.testing import CliRunner
from sync_fixtures import git

from context_cli.apiref.tree import code_in, find_code
from context_cli.package.reader import open_package
from context_cli.sources.git import fetch_git
from context_cli.sources.resolve import SourceOptions
from context_cli.store.store import Store
from context_cli.surfaces.cli import cli

PYTHON_PROJECT = {
    "pyproject.toml": '[project]\nname = "widgets"\nversion = "1.4.0"\n',
    "src/widgets/__init__.py": '"""Widgets, rendered."""\nfrom .core import render\n__all__ = ["render"]\n',
    "src/widgets/core.py": 'def render(widget: str, *, width: int = 80) -> str:\n    """Render one widget."""\n',
    "tests/test_core.py": "def test_render(): pass\n",
    "docs/index.md": "# Widgets\n\nThe widget library renders widgets in any terminal width you give it.\n",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("git") / "widgets", PYTHON_PROJECT)
    git(root.parent, "init", "-q", "-b", "main", str(root))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "widgets 1.4.0")
    git(root, "tag", "v1.4.0")
    return root


def test_git_build_of_a_python_package_gains_its_api(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["add", repo.as_uri(), "--no-embed"])
    assert result.exit_code == 0, result.output
    assert "API: 3 symbols in 2 modules" in result.output  # widgets, widgets.core, render
    found = json.loads(CliRunner().invoke(cli, ["api", "widgets.render", "--format", "json"]).stdout)
    [entry] = found["symbols"]
    assert entry["signature"] == "render(widget: str, *, width: int = 80) -> str"
    assert entry["source"] == "src/widgets/core.py" and entry["doc"] == "Render one widget."
    with open_package(Store().resolve("widgets@1.4.0").path) as pkg:
        kinds = {p.doc_path: p.kind for p in pkg.pages()}
    assert kinds == {"docs/index.md": "guide", "src/widgets/__init__.py": "reference",
                     "src/widgets/core.py": "reference"}  # the docs folder, then the code; never tests/


def test_no_api_flag_builds_the_docs_alone(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["add", repo.as_uri(), "--no-embed", "--no-api"])
    assert result.exit_code == 0 and "API:" not in result.output, result.output
    with open_package(Store().resolve("widgets@1.4.0").path) as pkg:
        assert not pkg.has_symbols and [p.doc_path for p in pkg.pages()] == ["docs/index.md"]


def test_untrusted_clone_checks_out_the_code_under_its_rules(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clone of a URL from package metadata keeps the guard's rules in its config, so the
    code fetched later for the API comes under them too."""
    monkeypatch.setenv("CONTEXT_GIT_ALLOW_PROTOCOL", "file")
    fetched = fetch_git(repo.as_uri(), SourceOptions(tag="v1.4.0", untrusted=True))
    try:
        assert fetched.folder is not None and not (fetched.folder / "src").exists()  # sparse: docs only
        config = git(fetched.folder, "config", "--local", "--list")
        assert "protocol.allow=never" in config and "http.followredirects=false" in config
        code = find_code(fetched)
        assert code is not None and code.language == "python" and code.folders == ("src/widgets",)
        assert (fetched.folder / "src" / "widgets" / "core.py").is_file()
        assert not (fetched.folder / "tests").exists()  # only the package's folders
    finally:
        fetched.cleanup()


def test_folder_with_typescript_declarations(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "kit", {
        "package.json": json.dumps({"name": "@acme/kit", "version": "2.0.1", "types": "./types/index.d.ts"}),
        "types/index.d.ts": "/** Start the kit. */\nexport declare function start(port: number): void;\n",
        "docs/guide.md": "# Guide\n\nStart the kit on a port of your choosing and it serves requests.\n"})
    assert code_in(root) is not None
    result = CliRunner().invoke(cli, ["add", str(root), "--no-embed"])
    assert result.exit_code == 0 and "API: 2 symbols in 1 module" in result.output, result.output
    found = json.loads(CliRunner().invoke(cli, ["api", "start", "--format", "json"]).stdout)
    assert found["symbols"][0]["name"] == "@acme/kit.start" and found["symbols"][0]["doc"] == "Start the kit."


@pytest.mark.parametrize("files", [
    {"docs/index.md": "# Docs\n"},  # a docs folder
    {"pyproject.toml": "[project]\nname = 'app'\n", "app.py": "def main(): pass\n"},  # no package
    {"src/pkg/__init__.py": "def f(): pass\n"},  # a package, but no project around it
    {"pyproject.toml": "", "tests/__init__.py": "", "docs/__init__.py": ""},  # only folders that are not code
    {"package.json": json.dumps({"name": "app", "main": "index.js"}), "index.js": ""},  # no declarations
    {"package.json": json.dumps({"name": "x", "types": "dist/index.d.ts"})},  # named, not there (unbuilt)
])
def test_trees_that_are_not_packages_get_no_api(tmp_path: Path, files: dict[str, str]) -> None:
    assert code_in(write_tree(tmp_path, files)) is None


def test_one_file_of_a_package_is_that_file_alone(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "widgets", PYTHON_PROJECT)
    result = CliRunner().invoke(cli, ["add", str(root / "docs" / "index.md"), "--no-embed"])
    assert result.exit_code == 0 and "API:" not in result.output, result.output
