"""The held-out question sets under bench/sets are sound, and the graded metrics add up."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SETS = Path(__file__).resolve().parents[1] / "bench" / "sets"


def load(path: Path) -> ModuleType:
    if str(SETS) not in sys.path:  # the scripts import their sibling setinfo.py
        sys.path.insert(0, str(SETS))
    name = f"bench_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def validate() -> ModuleType:
    return load(SETS / "validate.py")


def test_every_set_in_the_repository_validates(validate: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert validate.main([]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    for name in ("starlight", "trpc", "sphinx", "docker-api", "shadcn", "django", "fastapi", "pydantic", "vue",
                 "sqlalchemy", "pytest", "httpx", "tanstack-query"):
        assert f"== {name} (graded)" in out
    for name in ("crosslib", "crosslib2"):
        assert f"== {name} (cross-library)" in out


def graded_set(root: Path, rows: list[dict[str, Any]]) -> Path:
    d = root / "demo"
    (d / "corpus" / "guide").mkdir(parents=True)
    (d / "corpus" / "guide" / "tabs.mdx").write_text("---\ntitle: Tabs\n---\n\n## Sync tabs\n\ntext\n")
    (d / "corpus" / "index.md").write_text("# Home\n")
    (d / "README.md").write_text("demo\n")
    (d / "LICENSE.txt").write_text("MIT\n")
    (d / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return d


def row(rid: str, style: str, q: str, grades: dict[str, int], secs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": rid, "style": style, "kind": "howto", "question": q, "grades": grades,
            "gold": [p for p, g in grades.items() if g == 2], "gold_sections": secs or []}


def test_a_sound_graded_set_has_no_errors(validate: ModuleType, tmp_path: Path) -> None:
    sec = {"path": "guide/tabs.mdx", "heading": "Sync tabs", "line": 5}
    d = graded_set(tmp_path, [row("d-1", "keyword", "sync tabs", {"guide/tabs.mdx": 2, "index.md": 1}, [sec]),
                              row("d-2", "question", "How do tabs remember my choice?", {"guide/tabs.mdx": 2})])
    assert validate.validate_graded(d) == 0


def test_graded_set_errors_are_each_reported(validate: ModuleType, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    d = graded_set(tmp_path, [
        row("d-1", "keyword", "sync tabs", {"guide/missing.mdx": 2}),
        row("d-2", "keyword", "Sync  Tabs", {"guide/tabs.mdx": 2},
            [{"path": "guide/tabs.mdx", "heading": "Sync tabs", "line": 4}]),
        row("d-3", "keyword", "a query of far too many words here", {"guide/tabs.mdx": 1}),
    ])
    assert validate.validate_graded(d) == 6
    out = capsys.readouterr().out
    for needle in ("graded page not in corpus: guide/missing.mdx", "duplicate question 'sync tabs'",
                   "line 4 is not a Markdown heading", "longer than 6 words", "non-empty) list of grade-2",
                   "no 'question' queries"):
        assert needle in out


def cross_row(rid: str, lib: str, grades: dict[str, int], **extra: Any) -> dict[str, Any]:
    return {"lib": lib, "names_lib": False, **row(rid, "question", f"question {rid}?", grades), **extra}


def test_a_cross_library_set_is_checked_against_each_librarys_corpus(
        validate: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    graded_set(tmp_path, [row("d-1", "keyword", "sync tabs", {"guide/tabs.mdx": 2})])
    cross = tmp_path / "cross"
    cross.mkdir()
    (cross / "README.md").write_text("cross\n")
    sec = {"path": "guide/tabs.mdx", "heading": "Sync tabs", "line": 5}
    rows = [cross_row("x-1", "demo", {"guide/tabs.mdx": 2, "index.md": 1}, gold_sections=[sec]),
            {**cross_row("x-2", "demo", {"index.md": 2}), "style": "keyword", "question": "home"}]
    (cross / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert validate.validate_graded(cross) == 0
    assert "== cross (cross-library)" in capsys.readouterr().out
    rows += [cross_row("x-3", "nowhere", {"index.md": 2}), cross_row("x-4", "demo", {"missing.md": 2}),
             cross_row("x-5", "demo", {"index.md": 2}, names_lib="yes")]
    (cross / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert validate.validate_graded(cross) == 3
    out = capsys.readouterr().out
    for needle in ("x-3: lib 'nowhere' is not a set with a corpus", "x-4: graded page not in corpus: missing.md",
                   "x-5: names_lib must be true or false"):
        assert needle in out


def test_graded_scores_merge_adds_the_questions_of_two_groups() -> None:
    retrieval = load(SETS.parent / "retrieval.py")
    a, b, both = retrieval.GradedScores(), retrieval.GradedScores(), retrieval.GradedScores()
    for s in (a, both):
        s.add(["b", "a"], {"a": 2}, sec_rank=1, has_sections=True)
    for s in (b, both):
        s.add(["x"], {"a": 2}, sec_rank=None, has_sections=False)
    a.merge(b)
    assert a.summary() == both.summary()
    assert a.summary()["n"] == 2 and a.summary()["page_mrr"] == pytest.approx(0.25)


def test_graded_scores_follow_their_definitions() -> None:
    retrieval = load(SETS.parent / "retrieval.py")
    s = retrieval.GradedScores()
    s.add(["b", "a", "c"], {"a": 2, "c": 1}, sec_rank=3, has_sections=True)
    s.add(["x", "y"], {"a": 2}, sec_rank=None, has_sections=False)
    out = s.summary()
    assert out["page_mrr"] == pytest.approx(0.25)  # 1/2 for the first question, 0 for the second
    assert (out["page_hit@1"], out["page_hit@5"]) == (0.0, 0.5)
    ndcg_1 = (3 / math.log2(3) + 1 / math.log2(4)) / (3 + 1 / math.log2(3))
    assert out["page_ndcg@5"] == pytest.approx(ndcg_1 / 2)
    assert (out["section_n"], out["section_mrr"], out["section_hit@5"]) == (1, pytest.approx(1 / 3), 1.0)


def test_heading_match_ignores_inline_markup_only_when_asked() -> None:
    retrieval = load(SETS.parent / "retrieval.py")

    class Chunk:
        doc_path, doc_title, content = "tabs.mdx", "Tabs", "### syncKey\n\ntext"
        section_title = "<Tabs> Props"

    gold = {"path": "tabs.mdx", "heading": "`<Tabs>` Props"}
    assert not retrieval.section_hits(Chunk(), gold)
    assert retrieval.section_hits(Chunk(), gold, plain_text=True)
    assert retrieval.section_hits(Chunk(), {"path": "tabs.mdx", "heading": "`syncKey`"}, plain_text=True)
    assert not retrieval.section_hits(Chunk(), {"path": "other.mdx", "heading": "`syncKey`"}, plain_text=True)
    assert retrieval._plain(r"Using [superjson](https://x.y) \<-> `tracked()` {#tracked}") == "Using superjson <-> tracked()"
    assert retrieval._plain(":mod:`sphinx.ext.todo` -- Todo") == "sphinx.ext.todo -- Todo"
    assert retrieval._plain("Use `Depends` { #use-depends }") == "Use Depends"
