"""Release notes are marked `changelog` by file name, folder and title; other pages stay guides."""

from __future__ import annotations

from pathlib import Path

import pytest

from context_cli.parse import parse_file
from context_cli.parse.kind import page_kind

FIXTURES = Path(__file__).parent / "fixtures" / "fidelity"


@pytest.mark.parametrize(("tree", "rel"), [
    ("django", "docs/releases/5.1.txt"),
    ("django", "docs/releases/index.txt"),
    ("fastapi", "docs/en/docs/release-notes.md"),
    ("alembic", "docs/build/changelog.rst"),
    ("matplotlib", "doc/release/prev_whats_new/whats_new_3.10.0.rst"),
    ("keyring", "docs/history.rst"),
])
def test_real_release_notes_are_changelogs(tree, rel):
    root = FIXTURES / tree
    assert parse_file(rel, (root / rel).read_bytes(), root=str(root)).kind == "changelog"


def test_a_release_keeps_its_version_in_the_title_path():
    root = FIXTURES / "django"
    doc = parse_file("docs/releases/5.1.txt", (root / "docs/releases/5.1.txt").read_bytes(), root=str(root))
    assert doc.title == "Django 5.1 release notes"
    assert "What's new in Django 5.1" in [b.title for b in doc.blocks]


@pytest.mark.parametrize(("path", "title"), [
    ("CHANGELOG.md", "Changelog"), ("CHANGES.rst", "Changes"), ("HISTORY.md", "History"), ("NEWS", "News"),
    ("docs/changes/0.6.rst", "Release 0.6 (released Jul 23, 2009)"), ("doc/api/api_changes_3.5.0.rst", "API Changes"),
    ("docs/whatsnew/3.12.rst", "Python 3.12"), ("docs/upgrading.md", "What's new in 2.0"),
    ("docs/notes.md", "Version 2.0 release notes"), ("doc/build/changelog/changelog_20.rst", "2.0 Changelog"),
])
def test_release_notes_by_name_folder_or_title(path, title):
    assert page_kind(path, title) == "changelog"


@pytest.mark.parametrize(("path", "title"), [
    ("docs/topics/http/urls.txt", "URL dispatcher"), ("docs/newsletter.md", "Newsletter"),
    ("docs/guide/changing-state.md", "Changing state"), ("docs/history-api.md", "The History API guide"),
    ("docs/howto/release-process.md", "How we make a release"),
])
def test_guides_stay_guides(path, title):
    assert page_kind(path, title) is None
