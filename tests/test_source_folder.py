"""Which files `context add FOLDER` indexes: test and example folders are code beside a
project, but topics inside a docs tree (Django's docs/topics/testing/, security.txt)."""

from __future__ import annotations

from pathlib import Path

from context_cli.sources.folder import discover


def _tree(root: Path, files: list[str]) -> None:
    for rel in files:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("# Title\n\nText.\n")


def _found(root: Path, **kw: str) -> set[str]:
    d = discover(root, **kw)
    return {p.relative_to(d.root).as_posix() for p in d.files}


def test_a_docs_tree_keeps_its_testing_examples_and_security_pages(tmp_path):
    _tree(tmp_path, ["pyproject.toml", "SECURITY.md", "tests/test_x.md", "examples/demo/README.md",
                     "docs/index.md", "docs/topics/testing/overview.md", "docs/topics/security.md",
                     "docs/examples/tutorial.md", "docs/tests/harness.md", "docs/_build/index.md",
                     "docs/CHANGELOG.md"])
    assert _found(tmp_path) == {"docs/index.md", "docs/topics/testing/overview.md",
                                "docs/topics/security.md", "docs/examples/tutorial.md"}


def test_a_project_without_docs_folder_skips_tests_examples_and_the_policy(tmp_path):
    _tree(tmp_path, ["package.json", "README.md", "SECURITY.md", "testing/notes.md",
                     "examples/demo.md", "guide/usage.md"])
    assert _found(tmp_path) == {"README.md", "guide/usage.md"}


def test_a_folder_that_is_not_a_project_is_read_as_docs(tmp_path):
    _tree(tmp_path, ["index.md", "testing/index.md", "security.md", "tests/x.md"])
    assert _found(tmp_path) == {"index.md", "testing/index.md", "security.md"}


def test_a_path_inside_docs_is_docs(tmp_path):
    _tree(tmp_path, [".git/HEAD", "site/docs/testing/a.md", "site/docs/security.md"])
    (tmp_path / ".git" / "HEAD").write_text("ref: x\n")
    assert _found(tmp_path, path="site/docs") == {"site/docs/testing/a.md", "site/docs/security.md"}
