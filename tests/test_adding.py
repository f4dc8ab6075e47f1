"""`add` as a library call: install, re-add reuses unchanged pages, failures install nothing."""

import pytest

from context_cli.adding import AddRequest, add_source
from context_cli.errors import ContextError
from context_cli.store.store import Store


def test_re_adding_an_unchanged_folder_reuses_its_pages(docs_folder):
    first = add_source(AddRequest(source=str(docs_folder), name="lib", version="1.0.0", embed=False))
    again = add_source(AddRequest(source=str(docs_folder), name="lib", version="1.0.0", embed=False))
    assert first.build.reused_pages == 0
    assert again.build.reused_pages == again.build.pages == 3
    (docs_folder / "guide" / "errors.md").write_text("# Errors\n\n## New\n\nA completely new section about failures.\n")
    changed = add_source(AddRequest(source=str(docs_folder), name="lib", version="1.0.0", embed=False))
    assert changed.build.reused_pages == 2
    assert [i.id.version for i in Store().installed()] == ["1.0.0"]


def test_a_failed_build_installs_nothing(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "image.png").write_bytes(b"\x89PNG")
    with pytest.raises(ContextError, match="no documentation found"):
        add_source(AddRequest(source=str(empty), name="x", version="1", embed=False))
    root = Store().root
    assert not root.exists() or not list(root.iterdir())  # no package, no temp file


def test_big_trees_parse_in_worker_processes_in_order(tmp_path):
    from context_cli.build import PARALLEL_MIN_FILES, parse_many

    items = [(f"p{i:03}.md", f"# Page {i}\n\n## Section {i}\n\nBody of page number {i} with words.\n".encode())
             for i in range(PARALLEL_MIN_FILES + 6)]
    items.append(("bad.md", b"\x00\x01\x02" * 100))
    docs = parse_many(items)
    assert [d.title for d in docs[:-1]] == [f"Page {i}" for i in range(PARALLEL_MIN_FILES + 6)]
    assert isinstance(docs[-1], Exception)


def test_project_root_is_narrowed_to_its_docs_folder_and_says_so(tmp_path):
    root = tmp_path / "proj"
    (root / "docs").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "2.1.0"\n')
    (root / "README.md").write_text("# Readme\n\n## Not docs\n\nThis readme should not be indexed at all.\n")
    (root / "docs" / "guide.md").write_text("# Guide\n\n## Usage\n\nCall the thing with the right arguments.\n")
    result = add_source(AddRequest(source=str(root), embed=False))
    assert str(result.installed.id) == "proj@2.1.0"
    assert result.build.pages == 1
    assert any("docs/ folder" in n for n in result.notes)
