"""Which kind of page a parsed page is, from its path and title: release notes are marked
`changelog`, so search can weigh them apart from guides (a question about changes or a version
wants them; a how-to question does not).

A page is release notes when its file is named so (`CHANGELOG.md`, `CHANGES.rst`, `HISTORY`,
`NEWS`, `release-notes`, `whats_new_3.5`, `api_changes_3.5.0`, `github_stats`), when it sits in a
folder of them (Django's `releases/`, Sphinx's `changes/`, matplotlib's `prev_whats_new/`,
SQLAlchemy's `changelog/`), or when its title says so ("Django 5.1 release notes", "What's new
in Matplotlib 3.10", "2.0 Changelog"). Other pages keep the kind their parser gave them.
"""

from __future__ import annotations

import posixpath
import re

from ..document import Document

_NOTES = (r"change[-_ ]?logs?|changes|history|news|release[-_ ]?notes?|releases?|whats[-_ ]?new|"
          r"what[-_]s[-_]new|api[-_]changes|github[-_]stats")
_FILE = re.compile(rf"^(?:{_NOTES})(?:[-_ ]?v?\d[\w.-]*)?$", re.I)  # `changelog_20`, `whats_new_3.5`
_FOLDER = re.compile(rf"^(?:(?:prev|next|old)[-_])?(?:{_NOTES})$|^unreleased", re.I)
_TITLE = re.compile(
    r"^(?:what[’']?s new|release notes|change ?log|changes (?:in|for|since)|release history|version history)\b"
    r"|\b(?:release notes|change ?log|what[’']?s new)$", re.I)


def page_kind(path: str, title: str) -> str | None:
    """"changelog" when the page is release notes (see the module docstring), else None."""
    parts = path.split("/")
    stem = posixpath.basename(path).split(".", 1)[0]
    if _FILE.match(stem) or any(_FOLDER.match(p) for p in parts[:-1]) or _TITLE.search(title.strip()):
        return "changelog"
    return None


def mark_kind(doc: Document) -> Document:
    """`doc` with its kind set to "changelog" when it is release notes."""
    if doc.kind == "guide" and page_kind(doc.path, doc.title):
        doc.kind = "changelog"
    return doc
