"""Dump every answer and ranking of every question set, to hold a reshaping byte-identical.

A reshaping of `context_cli/search/` must not change a single answer. This dumps, for every
question of every set that bench/retrieval.py knows (bench/sets/* and the shared anthropic
set), the full answer JSON and the judged ranking (chunk ids, scores as `repr`, verdicts,
signals): each package searched alone ("with library") at two budgets and in the three modes,
and all packages together ("without library"); the first questions of each set on a package
opened afresh (the cold path), the rest on a package being served (the warm path); and a list
of hostile strings; and the cross-library and unanswerable questions, with and without
their library. `compare` names the first line that differs.

    python bench/dump_answers.py dump /tmp/base --home /tmp/dump-home     # builds once into --home
    python bench/dump_answers.py dump /tmp/after --home /tmp/dump-home
    python bench/dump_answers.py compare /tmp/base /tmp/after
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

COLD = 6  # questions per set asked of a package opened afresh
BUDGETS = (2000, 500)
MODES = ("hybrid", "lexical", "dense")
HOSTILE = ["", "   ", "the of and", "???", "\ud800", "x" * 20_000, "a.b.c", "__init__", '"unclosed phrase',
           'foo" OR bar* NEAR(a b)', "NUL\0byte", "日本語のクエリ", "🙂 emoji", "-", "AND OR NOT", "*",
           "flask flask flask", "how do I", "$ref", "a" * 300, "C++ std::vector<int>", "'; DROP TABLE chunks; --"]


def _answer_json(a: Any) -> str:
    data = a.to_dict() if hasattr(a, "to_dict") else a.to_json()
    return json.dumps(data, ensure_ascii=True, sort_keys=False)


def _ranking(ranked: list[Any], notes: list[str], modes: dict[str, str]) -> str:
    rows = [[c.library, c.chunk_id, repr(c.score), c.verdict, {k: repr(v) for k, v in c.signals.items()}]
            for c in ranked]
    return json.dumps({"ranked": rows, "notes": notes, "modes": modes}, ensure_ascii=True)


def _outcome(fn: Callable[..., str], *args: Any) -> str:
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - the error is part of what is dumped
        return f"error {type(e).__name__}: {e}"


def _answer(text: str, packages: list[Any], budget: int = 2000) -> str:
    from context_cli.search import engine

    return _outcome(lambda: _answer_json(engine.answer(text, packages, _options(budget, "hybrid"))))


def _warm(searchers: list[Any], packages: list[Any]) -> None:
    """Make each package warm: `warm()` where the searcher has it, else two throwaway
    searches (the second read the whole map, before `warm()` existed)."""
    from context_cli.search import engine

    for s, p in zip(searchers, packages, strict=True):
        if hasattr(s, "warm"):
            s.warm()
        else:
            for _ in range(2):
                engine.answer("configuration option", [p])


def _rank(text: str, packages: list[Any], mode: str = "hybrid") -> str:
    from context_cli.search import engine

    return _outcome(lambda: _ranking(*engine.rank(text, _searchers(packages), mode)))


def _options(budget: int, mode: str) -> Any:
    from context_cli.search.engine import SearchOptions

    return SearchOptions(budget=budget, mode=mode)


def _fresh(packages: list[Any], cold: bool) -> list[Any]:
    """The packages, opened afresh first when `cold` (every read of theirs is a first one)."""
    from context_cli.search.searcher import clear_cache

    if cold:
        clear_cache()
    return packages


def _searchers(packages: list[Any]) -> list[Any]:
    from context_cli.search.searcher import open_searcher

    return [open_searcher(p) for p in packages]


def lines(home: Path) -> Iterator[str]:
    """Every dumped line, in a fixed order."""
    import retrieval

    from context_cli.search.searcher import clear_cache

    os.environ["CONTEXT_HOME"] = str(home)
    installed = {}
    for name, (corpus, path) in retrieval.SETS.items():
        if path.exists():
            installed[name] = retrieval._built(name) or retrieval.build(name, corpus, embed=True)
    every = list(installed.values())
    sets: dict[str, list[dict[str, Any]]] = {n: retrieval.load_questions(retrieval.SETS[n][1]) for n in installed}
    for name, questions in sets.items():
        pkg = installed[name]
        for i, q in enumerate(questions):
            text, cold = q["question"], i < COLD
            if i == COLD:
                clear_cache()
                _warm(_searchers([pkg]), [pkg])
            state = "cold" if cold else "warm"
            for budget in BUDGETS:
                yield f"{name} {i} {state} alone b{budget} " + _answer(text, _fresh([pkg], cold), budget)
            for mode in MODES:
                yield f"{name} {i} {state} rank {mode} " + _rank(text, _fresh([pkg], cold), mode)
    first = next(iter(sets))
    for name, questions in sets.items():  # without library: every package; the first set's first ones cold
        for i, q in enumerate(questions):
            cold = name == first and i < COLD
            if name == first and i == COLD:
                clear_cache()
                _warm(_searchers(every), every)
            yield f"{name} {i} all b2000 " + _answer(q["question"], _fresh(every, cold))
            yield f"{name} {i} all rank " + _rank(q["question"], _fresh(every, cold))
    asked = [(n, q["question"], installed[q["lib"]]) for n, path in retrieval.CROSS.items()
             for q in retrieval.load_questions(path) if q["lib"] in installed]
    unanswerable = ROOT / "bench" / "sets" / "anthropic-unanswerable.jsonl"
    if "anthropic" in installed and unanswerable.exists():
        asked += [("unanswerable", q["question"], installed["anthropic"]) for q in retrieval.load_questions(unanswerable)]
    for i, (name, text, pkg) in enumerate(asked):  # a question for one library, with and without it
        yield f"{name} {i} lib b2000 " + _answer(text, [pkg])
        yield f"{name} {i} nolib b2000 " + _answer(text, every)
        yield f"{name} {i} nolib rank " + _rank(text, every)
    for i, text in enumerate(HOSTILE):
        for where, pkgs in (("one", every[:1]), ("all", every)):
            yield f"hostile {i} {where} " + _answer(text, pkgs)
            yield f"hostile {i} {where} rank " + _rank(text, pkgs)


def dump(out: Path, home: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    with gzip.open(out / "answers.jsonl.gz", "wt", encoding="utf-8", compresslevel=6) as f:
        for line in lines(home):
            f.write(line.replace("\n", "\\n") + "\n")
            n += 1
    print(f"{n} answers and rankings dumped to {out / 'answers.jsonl.gz'}")


def compare(a: Path, b: Path) -> int:
    with gzip.open(a / "answers.jsonl.gz", "rt", encoding="utf-8") as fa, \
            gzip.open(b / "answers.jsonl.gz", "rt", encoding="utf-8") as fb:
        n = 0
        for n, (x, y) in enumerate(zip(fa, fb, strict=False), start=1):
            if x != y:
                at = next((i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), min(len(x), len(y)))
                print(f"line {n} differs at character {at}:\n  {x[max(0, at - 200):at + 200]}\n  {y[max(0, at - 200):at + 200]}")
                return 1
        rest_a, rest_b = fa.read(), fb.read()
        if rest_a or rest_b:
            print(f"after {n} identical lines, one dump has more")
            return 1
    print(f"identical: {n} lines")
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--home", type=Path, required=True, help="CONTEXT_HOME that holds (or gets) the sets' packages")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "dump":
        dump(args.out, args.home.resolve())
    else:
        sys.exit(compare(args.a, args.b))


if __name__ == "__main__":
    main()
