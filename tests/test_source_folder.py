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
                                "docs/topics/security.md", "docs/examples/tutorial.md", "docs/CHANGELOG.md"}


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


FIDELITY = Path(__file__).parent / "fixtures" / "fidelity"


def test_sphinx_sources_in_build_win_over_the_rendered_output():
    assert _found(FIDELITY / "alembic") == {"docs/build/changelog.rst", "docs/build/index.rst"}


def test_rendered_output_without_sources_keeps_its_pages_not_its_copies(tmp_path):
    _tree(tmp_path, ["pyproject.toml", "docs/index.html", "docs/guide.html", "docs/genindex.html", "docs/search.html",
                     "docs/_sources/index.rst.txt", "docs/_modules/pkg/core.html", "docs/_static/x.html"])
    (tmp_path / "docs" / "searchindex.js").write_text("Search.setIndex({})\n")
    assert _found(tmp_path) == {"docs/index.html", "docs/guide.html"}


def test_a_build_folder_without_conf_py_is_still_output(tmp_path):
    _tree(tmp_path, ["pyproject.toml", "docs/source/index.rst", "docs/build/html/index.html"])
    (tmp_path / "docs" / "source" / "conf.py").write_text("")
    assert _found(tmp_path) == {"docs/source/index.rst"}


def test_translations_that_mirror_the_english_tree_are_skipped():
    assert _found(FIDELITY / "fastapi") == {
        "docs/en/docs/index.md", "docs/en/docs/release-notes.md", "docs/en/docs/tutorial/bigger-applications.md",
        "docs/en/docs/tutorial/first-steps.md"}  # not de/, em/, yo/, nor the theme's overrides/


def test_the_wanted_language_is_kept():
    assert "docs/de/docs/tutorial/first-steps.md" in _found(FIDELITY / "fastapi", lang="de")


def test_locale_folders_mirroring_their_parent_are_translations(tmp_path):
    pages = ["index.md", "guides/install.md", "guides/config.md", "reference/api.md"]
    _tree(tmp_path, [*pages, *(f"fr/{p}" for p in pages[:3]), *(f"zh-cn/{p}" for p in pages),
                     "js/index.md", "js/bindings.md", "ui/widgets.md"])
    assert _found(tmp_path) == {*pages, "js/index.md", "js/bindings.md", "ui/widgets.md"}


def test_docusaurus_i18n_is_translations(tmp_path):
    _tree(tmp_path, ["docs/intro.md", "i18n/fr/docusaurus-plugin-content-docs/current/intro.md"])
    assert _found(tmp_path) == {"docs/intro.md"}


def test_theme_templates_are_not_docs():
    assert _found(FIDELITY / "pydantic") == {"docs/index.md", "docs/concepts/models.md", "docs/concepts/alias.md"}
    assert not any("_theme" in p for p in _found(FIDELITY / "django"))


def test_sphinx_gallery_scripts_are_pages_beside_the_docs():
    assert _found(FIDELITY / "matplotlib") == {
        "doc/index.rst", "doc/release/prev_whats_new/whats_new_3.10.0.rst",
        "galleries/users_explain/index.rst", "galleries/users_explain/quick_start.py",
        "galleries/examples/lines_bars_and_markers/GALLERY_HEADER.rst",
        "galleries/examples/lines_bars_and_markers/simple_plot.py"}


def test_changelogs_are_kept_licences_are_not(tmp_path):
    _tree(tmp_path, ["README.md", "CHANGELOG.md", "CHANGES.rst", "HISTORY.md", "NEWS.txt", "LICENSE.md", "AUTHORS.rst"])
    assert _found(tmp_path) == {"README.md", "CHANGELOG.md", "CHANGES.rst", "HISTORY.md", "NEWS.txt"}
