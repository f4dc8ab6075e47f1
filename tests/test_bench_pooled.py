"""bench/pooled.py: issue 33's pooled figures weigh each question once and read set styles right."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("bench_pooled", BENCH / "pooled.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def figures(n: int, hit: float, mrr: float) -> dict[str, Any]:
    return {"n": n, "page_hit@1": hit, "page_mrr": mrr}


RUN = {
    "click/hybrid": {"graded": {"all": figures(60, 0.5, 0.6)}},  # no styles: counts as question-style
    "django/hybrid": {"graded": {"question": figures(20, 1.0, 1.0), "keyword": figures(10, 0.0, 0.5)}},
    "pytest/hybrid": {"graded": {"question": figures(50, 0.8, 0.9)}},
    "crosslib/hybrid": {"graded": {"with lib": figures(9, 0.9, 0.9), "without lib": figures(9, 0.8, 0.85)}},
}


def test_pooled_weighs_each_question_once() -> None:
    pooled = _load()
    n, hit, mrr = pooled.pooled(RUN, pooled.TUNING, "question")
    assert n == 80 and abs(hit - (30 + 20) / 80) < 1e-9 and abs(mrr - (36 + 20) / 80) < 1e-9
    assert pooled.pooled(RUN, pooled.TUNING, "keyword") == (10, 0.0, 0.5)
    assert pooled.pooled(RUN, pooled.HELD_OUT, "question") == (50, 0.8, 0.9)


def test_the_command_prints_the_drop_and_flags_a_set_down(tmp_path: Path) -> None:
    after = json.loads(json.dumps(RUN))
    after["django/hybrid"]["graded"]["question"]["page_mrr"] = 0.95
    (tmp_path / "a.json").write_text(json.dumps(RUN))
    (tmp_path / "b.json").write_text(json.dumps(after))
    out = subprocess.run([sys.executable, str(BENCH / "pooled.py"), str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                          "--by-set"], capture_output=True, text=True, check=True).stdout
    assert "crosslib           MRR with its library 0.900, without 0.850 (drop +0.050)" in out
    assert "django          question n= 20  MRR 1.000 -> 0.950 (-0.050)  Hit@1 1.000 -> 1.000  down" in out
    assert "click           question n= 60  MRR 0.600 -> 0.600 (+0.000)" in out
