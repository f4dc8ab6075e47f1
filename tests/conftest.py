"""Shared fixtures: every test gets its own $CONTEXT_HOME; nothing touches the real home."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")



@pytest.fixture(autouse=True)
def context_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("context-home")
    monkeypatch.setenv("CONTEXT_HOME", str(home))
    from context_cli.search.searcher import clear_cache

    clear_cache()
    return home


@pytest.fixture
def docs_folder(tmp_path: Path) -> Path:
    """A small real docs tree: Markdown pages with headings, code and an intro."""
    root = tmp_path / "mylib-docs"
    (root / "guide").mkdir(parents=True)
    (root / "index.md").write_text(
        "---\ntitle: MyLib\ndescription: A tiny library\n---\n\n"
        "MyLib streams data from sources to sinks with backpressure and retries.\n\n"
        "## Installation\n\nInstall it with pip:\n\n```bash\npip install mylib\n```\n\n"
        "## Quick start\n\nCreate a `Pipeline`, add a source and a sink, then call `run()`.\n\n"
        "```python\nfrom mylib import Pipeline\np = Pipeline()\np.run()\n```\n", "utf-8")
    (root / "guide" / "cancel.md").write_text(
        "# Cancelling a pipeline\n\n## Stopping halfway\n\n"
        "Call `Pipeline.cancel()` from another thread to stop a running pipeline halfway; "
        "pending items are dropped and sinks are flushed.\n\n"
        "## Timeouts\n\nPass `timeout=30` to `run()` to abort a pipeline that takes too long.\n", "utf-8")
    (root / "guide" / "errors.md").write_text(
        "# Errors\n\n## ERR_SINK_CLOSED\n\nRaised when a sink is written to after `close()`. "
        "Reopen the sink or create a new one before writing again.\n\n"
        "## Retries\n\nFailed writes are retried three times with exponential backoff "
        "before the error is raised to the caller.\n", "utf-8")
    return root
