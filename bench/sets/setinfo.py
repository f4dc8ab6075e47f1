"""Where a question set's corpus is and which page paths it has, shared by validate and retrieval.

A set's `corpus/` is either a docs folder (page paths are file paths relative to it) or a single
OpenAPI/Swagger file (page paths are the pages the builder renders from it: `overview`,
`operations/<tag>/<operationId>`, `schemas/<Name>`). A cross-library set has no corpus: each of
its questions names the set (`lib`) whose corpus holds its gold pages.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SPEC_SUFFIXES = (".json", ".yaml", ".yml")
STYLES = ("keyword", "question")
# The sets retrieval is tuned on, and those kept apart to measure it (issue 33's second round:
# read once at the end of a round, never tuned on).
TUNING = ("click", "flask", "django", "docker-api", "fastapi", "pydantic", "shadcn", "sphinx", "sqlalchemy",
          "starlight", "trpc", "vue")
HELD_OUT = ("pytest", "httpx", "tanstack-query")
# ... and the third round's, written on 2026-12-07 after six rounds of tuning (issue 33).
HELD_OUT_3 = ("fastify", "celery")


def _first_record(setdir: Path) -> dict[str, object]:
    return json.loads((setdir / "questions.jsonl").read_text(encoding="utf-8").split("\n", 1)[0])


def graded_sets() -> list[Path]:
    """Set folders with their own corpus whose questions carry graded page relevance (`grades`)."""
    return [q.parent for q in sorted(HERE.glob("*/questions.jsonl"))
            if "grades" in (r := _first_record(q.parent)) and "lib" not in r]


def cross_sets() -> list[Path]:
    """Cross-library set folders: graded questions that each name the set (`lib`) they are for."""
    return [q.parent for q in sorted(HERE.glob("*/questions.jsonl")) if "lib" in _first_record(q.parent)]


def spec_file(setdir: Path) -> Path | None:
    """The OpenAPI file when the corpus is one, else None."""
    files = [p for p in (setdir / "corpus").iterdir() if p.is_file()]
    if len(files) == 1 and files[0].suffix in SPEC_SUFFIXES:
        return files[0]
    return None


def corpus_source(setdir: Path) -> Path:
    """What to hand the builder: the spec file, or the docs folder."""
    return spec_file(setdir) or setdir / "corpus"


def corpus_pages(setdir: Path) -> set[str]:
    """Every page path a gold entry may name."""
    spec = spec_file(setdir)
    if spec is None:
        corpus = setdir / "corpus"
        return {p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file()}
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from context_cli.sources.openapi import sniff_file, spec_documents

    data = sniff_file(spec)
    if data is None:
        raise SystemExit(f"{spec}: not an OpenAPI or Swagger spec")
    return {d.path for d in spec_documents(data)}
