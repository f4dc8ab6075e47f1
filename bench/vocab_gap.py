"""Which of a question's words its gold page lacks, and of what kind, over a run's misses.

    python bench/vocab_gap.py DUMP --home H [--set NAME ...] [--style question] [--show N]

Reads `bench/retrieval.py --dump` (hybrid rows) and each set's package in the home H. For each
question whose gold page is not first (a miss) and, for contrast, each it gets right (a hit),
every content term (stemmed as the index stems it) is put in one class:

- `on gold`: the gold page holds it;
- `variant`: the gold page lacks it but holds a form of it the stemmer keeps apart: one stem
  a prefix of the other with at least 5 letters shared (`config` / `configur`), or the two
  of 5 letters or more, their first 4 shared, one edit apart (`colour` / `color`,
  `serialis` / `serializ`; also near words such as `model` / `modal`, listed to be read);
- `elsewhere`: the gold page lacks it in any form and other pages of the package hold it
  (the docs say it of other things: the page uses another word, a synonym or an API name);
- `absent`: no page of the package holds it; `typo` when a package term within one or two
  edits (the same first letter) is on the gold page.

It also counts the misses whose gold section's heading is written as code (`send_file`,
`Session.execute`, `useQuery`) that the question does not say: the user described what an
API does without its name. Prints the shares (weighted by the terms' IDF in the package, and
by count), and with --show the commonest `elsewhere` terms and the gold pages' words that
stand in for them (the heading's).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sqlite3
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from retrieval import SETS, load_questions  # noqa: E402

_WORD = re.compile(r"[^\W_]+")
_CODE = re.compile(r"[A-Za-z]_[A-Za-z]|[a-z][A-Z]|\w\.\w|\(\)|`")
CLASSES = ("on gold", "variant", "elsewhere", "absent", "typo")


def page_stems(db: sqlite3.Connection) -> tuple[dict[str, set[str]], Counter[str], int]:
    """Each page's stems (titles and text), each stem's section count, and the sections'."""
    from context_cli.package.bm25 import stemmer

    rows = db.execute("SELECT doc_path, doc_title || ' ' || section_title || ' ' || content FROM chunks").fetchall()
    words = {w for _, text in rows for w in _WORD.findall(text.lower())}
    stems = stemmer().tokens(sorted(words))
    pages: dict[str, set[str]] = defaultdict(set)
    df: Counter[str] = Counter()
    for path, text in rows:
        held = {s for w in set(_WORD.findall(text.lower())) for s in stems.get(w, ())}
        pages[path] |= held
        df.update(held)
    return pages, df, len(rows)


def variant(stem: str, held: set[str]) -> str | None:
    """The page's other form of `stem` that the stemmer keeps apart, if it holds one."""
    from context_cli.search.spelling import distance

    if len(stem) < 5:
        return None
    for other in held:
        if other == stem or other[:4] != stem[:4] or len(other) < 5:
            continue
        if (other[:5] == stem[:5] and (other.startswith(stem) or stem.startswith(other))) or distance(stem, other, 1) <= 1:
            return other
    return None


def typo(stem: str, held: set[str]) -> bool:
    """Is a term of the page within one or two edits of `stem` (a misspelling)?"""
    from context_cli.search.spelling import distance

    limit = 2 if len(stem) >= 8 else 1
    return len(stem) >= 4 and any(o[:1] == stem[:1] and distance(stem, o, limit) <= limit for o in held if o != stem)


def classify(stem: str, gold: set[str], df: Counter[str]) -> str:
    if stem in gold:
        return "on gold"
    if variant(stem, gold):
        return "variant"

    if df[stem]:
        return "elsewhere"
    return "typo" if typo(stem, gold) else "absent"


def dump_options(doc: str | None) -> argparse.ArgumentParser:
    """The options of a script that reads a `bench/retrieval.py --dump`: the dump, --home,
    --set and --style."""
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    ap.add_argument("dump", type=Path)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--set", dest="sets", action="append")
    ap.add_argument("--style", default="question", help="question, keyword, or all")
    return ap


def dump_rows(args: argparse.Namespace) -> list[dict]:  # type: ignore[type-arg]
    """The dump's hybrid rows of the chosen sets and style."""
    return [r for r in map(json.loads, args.dump.read_text().splitlines()) if r["mode"] == "hybrid"
            and (not args.sets or r["set"] in args.sets) and r["set"] in SETS
            and (args.style == "all" or (r["style"] or "question") == args.style)]


def main() -> None:
    ap = dump_options(__doc__)
    ap.add_argument("--show", type=int, default=0, help="list the commonest `elsewhere` terms of the misses")
    args = ap.parse_args()
    from context_cli.search.query import Query

    rows = dump_rows(args)
    counts = {k: Counter[str]() for k in ("miss", "hit")}
    mass = {k: Counter[str]() for k in ("miss", "hit")}
    questions = Counter[str]()
    code_gold = Counter[str]()
    elsewhere: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    variants: list[str] = []
    for name in dict.fromkeys(r["set"] for r in rows):
        db = sqlite3.connect(args.home / "packages" / f"local__{name}__1.0.0.db")
        pages, df, n = page_stems(db)
        gold_q = {q["id"]: q for q in load_questions(SETS[name][1])}
        for r in (r for r in rows if r["set"] == name):
            q = gold_q[r["id"]]
            outcome = "hit" if r["gold_rank"] == 1 else "miss"
            questions[outcome] += 1
            gold = set().union(*(pages.get(p, set()) for p in q["gold"]))
            query = Query.of(q["question"])
            toks = query.unit_tokens
            for term in query.terms:
                for stem in toks[term]:
                    kind = classify(stem, gold, df)
                    weight = math.log(1 + (n - df[stem] + 0.5) / (df[stem] + 0.5))
                    counts[outcome][kind] += 1
                    mass[outcome][kind] += weight
                    if outcome == "miss" and kind == "variant":
                        variants.append(f"{stem}/{variant(stem, gold)}")
                    if outcome == "miss" and kind == "elsewhere":
                        elsewhere[stem] += 1
                        examples[stem].append(f"{name}:{q['id']}")
            if outcome == "miss":
                heads = [s.get("heading", "") for s in q.get("gold_sections") or []]
                said = {w.lower() for w in _WORD.findall(q["question"])}
                if any(_CODE.search(h) and not ({w.lower() for w in _WORD.findall(h)} <= said) for h in heads):
                    code_gold["heading is code, unsaid"] += 1
                elif heads:
                    code_gold["heading is words (or said)"] += 1
                else:
                    code_gold["no gold section"] += 1
        db.close()
    print(f"questions: {questions['miss']} misses (gold page not first), {questions['hit']} hits; style {args.style}\n")
    print("| class | misses: terms | misses: IDF mass | hits: terms | hits: IDF mass |")
    print("|---|---|---|---|---|")
    for kind in CLASSES:
        cells = []
        for outcome in ("miss", "hit"):
            total, weight = sum(counts[outcome].values()) or 1, sum(mass[outcome].values()) or 1
            cells += [f"{counts[outcome][kind]} ({counts[outcome][kind] / total:.1%})",
                      f"{mass[outcome][kind] / weight:.1%}"]
        print(f"| {kind} | " + " | ".join(cells) + " |")
    print("\nmisses by gold heading:", dict(code_gold))
    print("variants in misses (question's stem / the gold page's):", ", ".join(variants))
    if args.show:
        print("\ncommonest `elsewhere` stems in misses:")
        for stem, k in elsewhere.most_common(args.show):
            print(f"  {stem:<14} {k:>3}  {', '.join(examples[stem][:4])}")


if __name__ == "__main__":
    main()
