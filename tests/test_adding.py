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
