"""The note an answer carries when a package's docs are not exact to its version."""

from __future__ import annotations

from context_cli.package.docs_cover import covers_note, docs_note


def test_exact_docs_carry_no_note():
    assert docs_note({"name": "flask", "version": "3.0.3"}) is None
    assert docs_note({"name": "flask", "version": "3.0.3", "docs_source": "definition", "docs_ref": "3.0.3"}) is None
    assert docs_note({"name": "flask", "version": "3.0.3", "docs_version": "3.0.3"}) is None
    assert docs_note({}) is None


def test_latest_docs_say_so_with_where_they_were_read():
    note = docs_note({"name": "next", "version": "15.1.3", "docs_version": "latest",
                      "docs_ref": "https://nextjs.org/docs"})
    assert note == ("next@15.1.3: these are the project's latest docs (https://nextjs.org/docs), not docs of "
                    "15.1.3; check what changed since 15.1.3")


def test_docs_of_a_range_name_it():
    assert docs_note({"name": "vue", "version": "3.5.13", "docs_version": "3.x", "docs_ref": "abc123"}) == (
        "vue@3.5.13: these docs cover 3.x (abc123), not exactly 3.5.13")
    assert covers_note("vue", "3.5.13", "3.x") == "vue@3.5.13: these docs cover 3.x, not exactly 3.5.13"
