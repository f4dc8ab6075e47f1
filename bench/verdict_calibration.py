"""Calibrate the STRONG / MODERATE / WEAK verdict on measured hits and misses.

For each question set: answerable questions (top result is a gold section = hit, else miss)
and questions about things the corpus does not contain. Prints each group's signal
quantiles and how the current thresholds label them. A good verdict labels unanswerable
questions WEAK and hits STRONG, and rarely calls a miss STRONG.

    python bench/verdict_calibration.py
"""

from __future__ import annotations

import argparse
import json
import os
import random
import string
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from retrieval import CROSS, SETS, build, section_hits, set_package  # noqa: E402

UNANSWERABLE = {
    "anthropic": ROOT / "bench" / "sets" / "anthropic-unanswerable.jsonl",
    "click": ROOT / "bench" / "sets" / "click" / "unanswerable.jsonl",
    "flask": ROOT / "bench" / "sets" / "flask" / "unanswerable.jsonl",
}


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def quantiles(xs: list[float]) -> str:
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return "-"
    pick = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
    return f"p10 {pick(0.1):.2f}  p50 {pick(0.5):.2f}  p90 {pick(0.9):.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--noise", action="store_true", help="calibrate the empty answer instead of the verdict")
    ap.add_argument("--home", type=Path, help="build into (and reuse packages from) this CONTEXT_HOME")
    args = ap.parse_args()
    os.environ["CONTEXT_HOME"] = str(args.home or tempfile.mkdtemp(prefix="bench-verdict-"))
    if args.noise:
        noise(reuse=args.home is not None)
    else:
        verdicts()


def verdicts() -> None:
    from context_cli.search.engine import rank
    from context_cli.search.searcher import open_searcher

    for name, (corpus, qfile) in SETS.items():
        if not qfile.exists():
            continue
        searchable = open_searcher(build(name, corpus, embed=True))
        groups: dict[str, list] = {"hit": [], "miss": [], "unanswerable": []}
        for q in load(qfile):
            top = rank(q["question"], [searchable])[0][:1]
            if top:
                group = "hit" if any(section_hits(top[0], g) for g in q["gold_sections"]) else "miss"
                groups[group].append(top[0])
        for q in load(UNANSWERABLE.get(name, Path("-"))):
            top = rank(q["question"], [searchable])[0][:1]
            if top:
                groups["unanswerable"].append(top[0])
        print(f"\n{name}")
        for group, cands in groups.items():
            labels = Counter(c.verdict for c in cands)
            print(f"  {group:<13} n={len(cands):<3} STRONG {labels['STRONG']:<3} MODERATE {labels['MODERATE']:<3} "
                  f"WEAK {labels['WEAK']:<3} | coverage {quantiles([c.signals['coverage'] for c in cands])} "
                  f"| z {quantiles([c.signals['z'] for c in cands])}")


GROUPS = ("questions", "unanswerable", "nonsense", "absent words", "misspelt", "misspelt, gold first")
SPREADS = (0.0, 0.5, 1.0, 1.5, 2.0)  # NOISE_SPREAD values compared; the per-set table is for the one in use


def noise(reuse: bool) -> None:
    """The empty answer's firing rate per set and group, and over all packages at once."""
    from context_cli.search.query import Query
    from context_cli.search.verdict import NOISE_SPREAD

    rng = random.Random(11)
    packages = {name: set_package(name, reuse) for name, (_, qfile) in SETS.items() if qfile.exists()}
    questions = {name: load(SETS[name][1]) for name in packages}
    vocabulary = sorted({t for qs in questions.values() for q in qs for t in Query.of(q["question"]).terms
                         if t.isalpha() and len(t) > 3})
    print(f"NOISE_SPREAD {NOISE_SPREAD}: answers that came back empty, of those asked\n")
    print("| set | " + " | ".join(GROUPS) + " | floor (z) |\n|---|" + "---|" * (len(GROUPS) + 1))
    totals = {c: {g: [0, 0] for g in GROUPS} for c in SPREADS}
    for name, installed in packages.items():
        asked = {
            "questions": [(q["question"], set(q["gold"])) for q in questions[name]],
            "unanswerable": [(q["question"], set()) for q in load(UNANSWERABLE.get(name, Path("-")))],
            "nonsense": [(_nonsense(rng), set()) for _ in range(30)],
            "absent words": _absent(installed, vocabulary, rng, 30),
            "misspelt": _misspelt(installed, questions[name], rng),
        }
        rows = _fire_rates([installed], asked)
        for c, row in rows.items():
            for g, (fired, n) in row.items():
                totals[c][g][0] += fired
                totals[c][g][1] += n
        print(f"| {name} | " + " | ".join(_share(*rows[NOISE_SPREAD][g]) for g in GROUPS)
              + f" | {_floor(installed):.2f} |", flush=True)
    everything = list(packages.values())
    crossed = [(q["question"], set(q["gold"])) for path in CROSS.values() for q in load(path)]
    together = _fire_rates(everything, {"questions": crossed, "nonsense": [(_nonsense(rng), set()) for _ in range(30)],
                                        "unanswerable": [(q["question"], set()) for f in UNANSWERABLE.values()
                                                         for q in load(f)]})
    print(f"\nAll sets, and all {len(everything)} packages searched at once (the cross-library sets' questions, "
          "the unanswerable ones, 30 more nonsense questions), by NOISE_SPREAD:\n")
    print("| spread | " + " | ".join(GROUPS) + " | together: questions | unanswerable | nonsense |\n"
          "|---|" + "---|" * (len(GROUPS) + 3))
    for c in SPREADS:
        print(f"| {c} | " + " | ".join(_share(*totals[c][g]) for g in GROUPS) + " | "
              + " | ".join(_share(*together[c][g]) for g in ("questions", "unanswerable", "nonsense")) + " |")


def _fire_rates(installed: list[Any], asked: dict[str, list[tuple[str, set[str]]]]) -> dict[float, dict[str, list[int]]]:
    """For each NOISE_SPREAD of SPREADS and each group: [answers that came back empty for
    nothing matched, questions]; a misspelt question whose gold page the search would have put
    first also counts in "misspelt, gold first"."""
    from context_cli.search import verdict
    from context_cli.search.engine import answer, rank
    from context_cli.search.searcher import open_searcher

    searchers = [open_searcher(i) for i in installed]
    out = {c: {g: [0, 0] for g in GROUPS} for c in SPREADS}
    default = verdict.NOISE_SPREAD
    for group, items in asked.items():
        for text, gold in items:
            first = group == "misspelt" and (top := rank(text, searchers)[0][:1]) and top[0].doc_path in gold
            for c in SPREADS:
                verdict.NOISE_SPREAD = c
                found = answer(text, installed)
                fired = not found.results and any(n.startswith("nothing matched") for n in found.notes)
                for g in (group, "misspelt, gold first") if first else (group,):
                    out[c][g][0] += fired
                    out[c][g][1] += 1
    verdict.NOISE_SPREAD = default
    return out


def _nonsense(rng: random.Random) -> str:
    return " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(5, 9)))
                    for _ in range(rng.randint(1, 3)))


def _absent(installed: Any, vocabulary: list[str], rng: random.Random, n: int) -> list[tuple[str, set[str]]]:
    """`n` questions of 1-3 words of `vocabulary` that none of is in the package."""
    from context_cli.search.searcher import open_searcher

    lexicon = open_searcher(installed)
    out: list[tuple[str, set[str]]] = []
    for _ in range(100 * n):
        if len(out) == n:
            break
        text = " ".join(rng.sample(vocabulary, rng.randint(1, 3)))
        if _none_present(lexicon, text):
            out.append((text, set()))
    return out


def _misspelt(installed: Any, questions: list[dict[str, Any]], rng: random.Random) -> list[tuple[str, set[str]]]:
    """Keyword questions with a letter dropped from every word of five letters or more, kept
    when no word is left that the package has."""
    from context_cli.search.searcher import open_searcher

    lexicon = open_searcher(installed)
    out = []
    for q in questions:
        if q.get("style", "keyword") != "keyword":
            continue
        words = []
        for w in q["question"].split():
            at = rng.randrange(1, len(w) - 1) if len(w) >= 5 and w.isalpha() else None
            words.append(w if at is None else w[:at] + w[at + 1:])
        text = " ".join(words)
        if _none_present(lexicon, text):
            out.append((text, set(q["gold"])))
    return out


def _none_present(searcher: Any, text: str) -> bool:
    from context_cli.search.engine import ranked
    from context_cli.search.options import SearchOptions
    from context_cli.search.query import Query
    from context_cli.search.run import SearchRun

    query = Query.of(text)
    run = SearchRun.of([searcher], query)
    ranked(query, run, SearchOptions(mode="lexical"))
    pq = run.packages[0]
    return pq.lexical is not None and len(pq.lexical.missing) == len(pq.query.terms) > 0


def _floor(installed: Any) -> float:
    """The package's floor when it is searched alone: the probes' mean best z-score plus
    NOISE_SPREAD deviations."""
    import numpy as np

    from context_cli.search.searcher import open_searcher
    from context_cli.search.verdict import NOISE_SPREAD, PROBES, probe_z

    found = open_searcher(installed).dense()
    if found is None:
        return float("nan")
    model, index = found
    probes = probe_z(model.encode(list(PROBES)).astype(np.float32), index)
    probes = probes[np.isfinite(probes)]
    return float(probes.mean() + NOISE_SPREAD * probes.std())


def _share(fired: int, n: int) -> str:
    return f"{fired}/{n}" if n else "–"


if __name__ == "__main__":
    main()
