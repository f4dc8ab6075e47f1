"""Rebuilding a package from an unchanged or slightly changed source reuses old pages."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from context_cli.build import BuildOptions, build
from context_cli.sources.openapi import fetched_from_spec
from context_cli.sources.resolve import fetch_folder


def make_docs(root: Path, n: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"page{i:03d}.md").write_text(
            f"# Topic {i}\n\nTopic {i} explains how widget number {i} is configured and deployed.\n\n"
            f"## Options for widget {i}\n\nSet `widget_{i}.size = {i * 3}` to change its size in pixels.\n")
    return root


def rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT c.doc_path, c.section_title, c.content, v.vector FROM chunks c "
                         "LEFT JOIN vectors v ON v.chunk_id = c.id ORDER BY c.id").fetchall()


def meta(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as c:
        return dict(c.execute("SELECT key, value FROM meta"))


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return make_docs(tmp_path / "docs", 30)


def test_unchanged_folder_reuses_every_page_and_vector(docs: Path, tmp_path: Path) -> None:
    first = build(fetch_folder(docs), tmp_path / "a.db", BuildOptions())
    assert first.reused_pages == 0 and first.embedding_model
    again = build(fetch_folder(docs), tmp_path / "b.db", BuildOptions(previous=tmp_path / "a.db"))
    assert again.reused_pages == 30
    assert rows(tmp_path / "a.db") == rows(tmp_path / "b.db")  # same chunks, same vector bytes


def test_changed_and_removed_pages_are_rebuilt(docs: Path, tmp_path: Path) -> None:
    build(fetch_folder(docs), tmp_path / "a.db", BuildOptions())
    (docs / "page005.md").write_text("# Topic 5\n\nWidget five was replaced by the new gadget subsystem entirely.\n")
    (docs / "page006.md").unlink()
    again = build(fetch_folder(docs), tmp_path / "b.db", BuildOptions(previous=tmp_path / "a.db"))
    assert again.reused_pages == 28
    new = rows(tmp_path / "b.db")
    contents = " ".join(r[2] for r in new)
    assert "gadget subsystem" in contents and "widget_5.size" not in contents
    assert not any(r[0] == "page006.md" for r in new)
    assert all(r[3] is not None for r in new)
    build(fetch_folder(docs), tmp_path / "c.db", BuildOptions())
    assert rows(tmp_path / "c.db") == new  # incremental result equals a full rebuild


def test_vectors_from_another_model_are_not_reused(docs: Path, tmp_path: Path) -> None:
    build(fetch_folder(docs), tmp_path / "lex.db", BuildOptions(embed=False))
    again = build(fetch_folder(docs), tmp_path / "b.db", BuildOptions(previous=tmp_path / "lex.db"))
    assert again.reused_pages == 0
    assert all(r[3] is not None for r in rows(tmp_path / "b.db"))
    with sqlite3.connect(tmp_path / "b.db") as c:
        c.execute("UPDATE meta SET value = 'other' WHERE key = 'embedding_fingerprint'")
    third = build(fetch_folder(docs), tmp_path / "c.db", BuildOptions(previous=tmp_path / "b.db"))
    assert third.reused_pages == 0


def test_lexical_rebuild_reuses_chunks_of_an_embedded_package(docs: Path, tmp_path: Path) -> None:
    build(fetch_folder(docs), tmp_path / "a.db", BuildOptions())
    again = build(fetch_folder(docs), tmp_path / "b.db", BuildOptions(embed=False, previous=tmp_path / "a.db"))
    assert again.reused_pages == 30
    assert all(r[3] is None for r in rows(tmp_path / "b.db"))
    assert "embedding_model" not in meta(tmp_path / "b.db")


def test_other_builder_version_is_not_trusted(docs: Path, tmp_path: Path) -> None:
    build(fetch_folder(docs), tmp_path / "a.db", BuildOptions(embed=False))
    with sqlite3.connect(tmp_path / "a.db") as c:
        c.execute("UPDATE meta SET value = 'context 0.0.1' WHERE key = 'builder'")
    again = build(fetch_folder(docs), tmp_path / "b.db", BuildOptions(embed=False, previous=tmp_path / "a.db"))
    assert again.reused_pages == 0


def test_missing_or_broken_previous_means_full_build(docs: Path, tmp_path: Path) -> None:
    (tmp_path / "junk.db").write_bytes(b"not sqlite")
    for prev in (tmp_path / "junk.db", tmp_path / "absent.db"):
        r = build(fetch_folder(docs), tmp_path / "b.db", BuildOptions(embed=False, previous=prev))
        assert r.reused_pages == 0 and r.chunks > 0


def test_page_that_lost_a_section_to_dedupe_is_rebuilt(tmp_path: Path) -> None:
    shared = "## Licence\n\nThis widget toolkit is released under the permissive MIT licence terms.\n"
    root = tmp_path / "d"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nPage A introduces the alpha widgets and their uses.\n\n" + shared)
    (root / "b.md").write_text("# B\n\nPage B introduces the beta widgets and their uses.\n\n" + shared)
    build(fetch_folder(root), tmp_path / "1.db", BuildOptions(embed=False))
    assert meta(tmp_path / "1.db")["deduped_pages"] == '["b.md"]'
    (root / "a.md").write_text("# A\n\nPage A now only talks about the alpha widgets and nothing else.\n")
    r = build(fetch_folder(root), tmp_path / "2.db", BuildOptions(embed=False, previous=tmp_path / "1.db"))
    assert r.reused_pages == 0  # a changed, b deduped before
    licence = [row for row in rows(tmp_path / "2.db") if "MIT licence" in row[2]]
    assert [row[0] for row in licence] == ["b.md"]


def test_page_repeating_its_own_section_is_still_reused(tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir()
    same = "Run `make install` from the project root to install every widget at once.\n"
    (root / "a.md").write_text(f"# A\n\n## Linux\n\n{same}\n## macOS\n\n{same}")
    build(fetch_folder(root), tmp_path / "1.db", BuildOptions(embed=False))
    assert "deduped_pages" not in meta(tmp_path / "1.db")
    r = build(fetch_folder(root), tmp_path / "2.db", BuildOptions(embed=False, previous=tmp_path / "1.db"))
    assert r.reused_pages == 1
    assert rows(tmp_path / "1.db") == rows(tmp_path / "2.db")


def test_ready_made_documents_are_reused_too(tmp_path: Path) -> None:
    spec = {"openapi": "3.0.0", "info": {"title": "T", "version": "1"},
            "paths": {f"/items/{i}": {"get": {"summary": f"Get item {i} with all its fields",
                                              "responses": {"200": {"description": "ok"}}}} for i in range(10)}}
    build(fetched_from_spec(spec, "t.yaml"), tmp_path / "a.db", BuildOptions())
    again = build(fetched_from_spec(spec, "t.yaml"), tmp_path / "b.db", BuildOptions(previous=tmp_path / "a.db"))
    assert again.reused_pages == again.pages == 11
    assert rows(tmp_path / "a.db") == rows(tmp_path / "b.db")


def test_ready_made_documents_partly_reused_index_as_a_fresh_build(tmp_path: Path) -> None:
    """Their sections are embedded and counted in one batch, the reused with the new."""
    def spec(changed: str) -> dict:
        return {"openapi": "3.0.0", "info": {"title": "T", "version": "1"},
                "paths": {f"/items/{i}": {"get": {"summary": changed if i == 4 else f"Get item {i} with its fields",
                                                  "responses": {"200": {"description": "ok"}}}} for i in range(10)}}

    build(fetched_from_spec(spec("Get item four"), "t.yaml"), tmp_path / "a.db", BuildOptions())
    again = build(fetched_from_spec(spec("Delete the widget_4 cache"), "t.yaml"), tmp_path / "b.db",
                  BuildOptions(previous=tmp_path / "a.db"))
    build(fetched_from_spec(spec("Delete the widget_4 cache"), "t.yaml"), tmp_path / "c.db", BuildOptions())
    assert 0 < again.reused_pages < again.pages
    assert rows(tmp_path / "b.db") == rows(tmp_path / "c.db")
    for table in ("bm25_terms", "bm25_phrases", "bm25_lengths"):
        with sqlite3.connect(tmp_path / "b.db") as b, sqlite3.connect(tmp_path / "c.db") as c:
            query = f"SELECT * FROM {table} ORDER BY 1"
            assert b.execute(query).fetchall() == c.execute(query).fetchall()


def test_a_page_keeps_its_kind_through_a_rebuild(tmp_path: Path) -> None:
    from context_cli.document import Block, Document
    from context_cli.package.reader import open_package
    from context_cli.sources.base import Fetched

    docs = [Document("api/widgets.md", "Widgets API", [Block(2, "make_widget", "Makes a widget of any size.")],
                     kind="reference"),
            Document("changes.md", "Changes", [Block(2, "1.2", "Widgets can now be resized.")], kind="changelog"),
            Document("guide.md", "Guide", [Block(2, "Start", "Make your first widget.")])]
    build(Fetched("folder", "docs", documents=docs, name="w", version="1"), tmp_path / "a.db", BuildOptions())
    build(Fetched("folder", "docs", documents=docs, name="w", version="1"), tmp_path / "b.db",
          BuildOptions(previous=tmp_path / "a.db"))
    for db in ("a.db", "b.db"):
        with open_package(tmp_path / db) as pkg:
            assert {p.doc_path: p.kind for p in pkg.pages()} == {
                "api/widgets.md": "reference", "changes.md": "changelog", "guide.md": "guide"}
    with sqlite3.connect(tmp_path / "a.db") as c:  # a package from before the column: every page a guide
        c.execute("ALTER TABLE pages DROP COLUMN kind")
    with open_package(tmp_path / "a.db") as pkg:
        assert {p.kind for p in pkg.pages()} == {"guide"}
