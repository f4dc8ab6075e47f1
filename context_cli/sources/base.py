"""What every documentation source hands to the builder.

A source either yields a local folder (a clone, an extracted sdist, the user's folder) that
folder discovery then walks, or ready-made `Document`s (web pages, OpenAPI operations).
It also says what it knows of the package identity and provenance.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..document import Document


@dataclass
class Fetched:
    """The result of fetching a source. Call `cleanup()` when the build is done."""

    source_type: str  # folder | git | web | openapi | pypi | npm | db
    source_url: str  # never a local absolute path
    folder: Path | None = None  # a tree to discover docs in
    docs_path: str | None = None  # sub-path of `folder` already known to hold the docs
    documents: Iterable[Document] | None = None  # ready-made pages (web, OpenAPI)
    db_file: Path | None = None  # a ready package file (a `.db` URL)
    name: str | None = None
    version: str | None = None
    description: str | None = None
    source_commit: str | None = None
    # The registry a released artefact belongs to, in the publisher's names ("pip" for a PyPI
    # sdist, "npm"), so `context add pypi:NAME` is filed where `context install pip/NAME` looks.
    registry: str | None = None
    # A released artefact's unpacked tree (`pypi:`, `npm:`), whose code the build reads for the
    # API reference (context_cli/apiref); None for sources that are docs only.
    code: Path | None = None
    notes: list[str] = field(default_factory=list)  # things to tell the user ("using tag v2.1.0")
    meta: dict[str, str] = field(default_factory=dict)  # extra package meta (docs_source, docs_version)
    temp_dirs: list[Path] = field(default_factory=list)
    skipped: int = 0  # pages that failed to fetch or parse

    def cleanup(self) -> None:
        for d in self.temp_dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.temp_dirs.clear()


@dataclass
class SourceOptions:
    """How to fetch a source: what `context add` and the publisher may say beyond SOURCE."""

    tag: str | None = None
    path: str | None = None
    interactive: bool = False
    # Called with (version-like tags newest first, suggested tag) when interactive on a TTY.
    choose_tag: Callable[[list[str], str], str] | None = None
    timeout: float | None = None  # seconds for connect and read; default from HttpOptions
    max_pages: int | None = None  # website crawl bound
    browser: str = "auto"  # websites: render JavaScript-only pages (auto), never, or always
    progress: Callable[[str, int, int], None] | None = None  # same shape as build's Progress
    near: str | None = None  # a monorepo package's folder: the docs tree is looked for near it
    untrusted: bool = False  # a URL from package metadata: git runs under docsources.guard's rules
    require_docs: bool = False  # no docs tree found in the repository: fail, never fetch it whole
