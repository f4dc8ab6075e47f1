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


def _pages(n: int) -> list[tuple[str, bytes]]:
    items = [(f"p{i:03}.md", f"# Page {i}\n\n## Section {i}\n\nBody of page number {i} with words.\n".encode())
             for i in range(n)]
    return items + [("bad.md", b"\x00\x01\x02" * 100)]


def _same_pages(got, want) -> None:
    import numpy as np

    assert isinstance(got[-1], Exception) and isinstance(want[-1], Exception)
    for g, w in zip(got[:-1], want[:-1], strict=True):
        assert (g.title, g.url, g.chunks) == (w.title, w.url, w.chunks)
        assert np.array_equal(g.vectors, w.vectors)
        assert _counted(g.terms) == _counted(w.terms)


def _counted(t) -> dict[tuple[str, int], list[int]]:
    """(term, chunk) -> per-field frequencies: the numbering of terms is each process's own."""
    return {(t.terms[k], int(c)): f.tolist() for k, c, f in zip(t.term, t.chunk, t.tf, strict=True)}


def test_big_trees_are_parsed_chunked_and_embedded_in_worker_processes_in_order():
    from context_cli.build_pages import PARALLEL_MIN_FILES, build_pages, page_pool
    from context_cli.embed.model import load_model

    items = _pages(PARALLEL_MIN_FILES + 6)
    model = load_model("default")
    with page_pool(len(items), "default", embed=True) as pool:
        assert pool is not None
        pages = build_pages(items, model, pool)
    assert [p.title for p in pages[:-1]] == [f"Page {i}" for i in range(PARALLEL_MIN_FILES + 6)]
    assert pages[0].vectors.shape == (len(pages[0].chunks), model.dim)
    _same_pages(pages, build_pages(items, model))  # in this process: the same pages


def test_a_rebuild_with_few_changed_pages_starts_no_workers():
    import multiprocessing

    from context_cli.build_pages import PARALLEL_MIN_FILES, build_pages, page_pool

    items = _pages(3)
    with page_pool(PARALLEL_MIN_FILES * 2, None, embed=False, start=False) as pool:
        assert pool is not None
        pages = build_pages(items, None, pool)
        assert not multiprocessing.active_children()
    assert [p.title for p in pages[:-1]] == ["Page 0", "Page 1", "Page 2"] and pages[0].vectors is None


def test_workers_that_cannot_load_the_model_leave_the_work_to_the_caller(tmp_path):
    from context_cli.build_pages import PARALLEL_MIN_FILES, build_pages, page_pool
    from context_cli.embed.model import load_model

    items = _pages(PARALLEL_MIN_FILES)
    model = load_model("default")
    with page_pool(len(items), str(tmp_path / "no-model"), embed=True) as pool:
        pages = build_pages(items, model, pool)
    _same_pages(pages, build_pages(items, model))


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
