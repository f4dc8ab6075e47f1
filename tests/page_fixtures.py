"""Packages for the registry page tests: built by `context add` from a small Markdown tree.

One hostile page title and a hostile description check that everything uploaded is escaped.
The tree is written in a temp folder (no files outside the repository are read).
"""

from __future__ import annotations

from pathlib import Path

from context_cli.adding import AddRequest, add_source
from context_cli.store.store import Store

HOSTILE = '<script>alert("x")</script>'
# Markdown a stranger might publish to make the rendered page run or leak something.
HOSTILE_MD = ('[click me](javascript:alert(1)) <a href="javascript:alert(2)">raw</a> '
              '<img src=x onerror=alert(3)> ![pic](javascript:alert(4)) [site](https://example.com/a) '
              '[data](data:text/html;base64,PHNjcmlwdD4=) <javascript:alert(5)>\n\n# A heading')
PAGES = {
    "index.md": "# Pipelines\n\nMyLib streams data from sources to sinks with backpressure.\n\n"
                "## Installation\n\nInstall it with pip:\n\n```bash\npip install mylib\n```\n",
    "guide/cancel.md": "# Cancelling a pipeline\n\n## Stopping halfway\n\n"
                       "Call `Pipeline.cancel()` from another thread to stop a running pipeline halfway; "
                       "pending items are dropped and sinks are flushed.\n\n"
                       "## Timeouts\n\nPass `timeout=30` to `run()` to abort a slow pipeline.\n",
    "guide/hostile.md": f"# Escaping `{HOSTILE}` in sinks\n\n## Markup & `{HOSTILE}`\n\n"
                        f"Sinks escape markup and `a < b && c > d` before writing:\n\n"
                        f"```html\n{HOSTILE}\n```\n",
}


def build_docs_package(work: Path, name: str = "mylib", version: str = "1.2.0", *,
                       description: str = f"Streams data {HOSTILE} with backpressure",
                       embed: bool = True) -> Path:
    """A real package file (FTS5, BM25 and, with `embed`, vectors of the shipped model)."""
    docs = work / f"docs-{version}"
    for rel, text in PAGES.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, "utf-8")
    out = work / f"{name}@{version}.db"
    add_source(AddRequest(source=str(docs), name=name, version=version, registry="pip",
                          description=description, embed=embed, save=out),
               store=Store(work / f"store-{version}"))
    return out
