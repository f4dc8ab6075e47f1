"""Small builders shared by tests: real package files written by our own writer."""

from __future__ import annotations

import os
from pathlib import Path

from context_cli.document import Chunk, estimate_tokens
from context_cli.package.writer import write_package

# shared/ lies beside the repository (in a session and in CI alike).
SHARED = Path(os.environ.get("CONTEXT_SHARED", Path(__file__).resolve().parents[2] / "shared"))
PEER_DB = SHARED / "peer-data" / "anthropic-docs@2024.7.0.db"
EVAL_CORPUS = SHARED / "eval" / "anthropic-docs" / "corpus"


def make_package(path: Path, name: str = "lib", version: str = "1.0.0", sections: list[tuple[str, str, str]] | None = None,
                 **meta: str) -> Path:
    """A lexical package: sections are (doc_path, section_title, content)."""
    sections = sections or [("guide.md", "Intro", f"{name} {version} explains streaming and cancellation.")]
    chunks = [Chunk(doc_path=p, doc_title=p.rsplit(".", 1)[0].title(), section_title=t, content=c,
                    tokens=estimate_tokens(c), has_code="```" in c) for p, t, c in sections]
    return write_package(path, {"name": name, "version": version, **meta}, chunks)
