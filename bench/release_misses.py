"""How often release notes, blog posts or migration pages stand above the gold page (issue 33, item 7).

    python bench/release_misses.py DUMP --home H [--set NAME ...] [--kind howto]

Reads `bench/retrieval.py --dump` (hybrid rows) and each set's package in the home H. A page
is *news* when the builder gave it the kind `changelog` (`parse/kind.py`: release notes, which
the ranking weighs by `changelog_weight`), when the search weighs it so as a guide to moving
between versions (`reference.page_kind`, since issue 33's sixth round), or when its path says
it is release notes, a changelog, a blog post, news, or a migration/upgrade page (`NEWS`:
pages the builder keeps as guides; read the list, Django's database `migrations` among them). For the questions of `--kind` (every kind when not given), per set and style, it
counts the misses (gold page not first), those whose first page is news, and those with any
news page above the gold page; and how many of the questions ask about versions or changes
(`Query.asks_changes`), where a news page may be the answer.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from retrieval import SETS, load_questions  # noqa: E402

NEWS = re.compile(r"(^|[/_-])(changelog|changes|release[-_]?notes?|releases|history|whatsnew|what-?s-new|news|"
                  r"migrat\w*|upgrad\w*)([/._-]|$)|(^|/)blog/", re.I)  # (also Django's `migrations`: read the list)

def news_pages(db: sqlite3.Connection) -> dict[str, str]:
    """Each news page's path and why: `changelog` (its kind), `upgrade` (a guide the search
    weighs as release notes: `reference.page_kind`) or `path` (only its path says so)."""
    from context_cli.search.reference import page_kind

    out = {}
    for path, kind in db.execute("SELECT doc_path, kind FROM pages"):
        if kind == "changelog":
            out[path] = "changelog"
        elif page_kind(None, path) is not None:
            out[path] = "upgrade"
        elif NEWS.search(path):
            out[path] = "path"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("dump", type=Path)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--set", dest="sets", action="append")
    ap.add_argument("--kind", help="only questions of this kind (howto, api, ...)")
    ap.add_argument("--show", action="store_true", help="list the misses a news page stands above the gold in")
    args = ap.parse_args()
    from context_cli.search.query import Query

    rows = [r for r in map(json.loads, args.dump.read_text().splitlines()) if r["mode"] == "hybrid"
            and (not args.sets or r["set"] in args.sets) and r["set"] in SETS and (not args.kind or r["kind"] == args.kind)]
    total: Counter[str] = Counter()
    print("| set | news pages (kind / upgrade / path) | style | questions | misses | first page news | news above gold | asks changes |")
    print("|---|---|---|---|---|---|---|---|")
    for name in dict.fromkeys(r["set"] for r in rows):
        db = sqlite3.connect(args.home / "packages" / f"local__{name}__1.0.0.db")
        news = news_pages(db)
        db.close()
        why = Counter(news.values())
        questions = {q["id"]: q for q in load_questions(SETS[name][1])}
        for style in ("question", "keyword"):
            mine = [r for r in rows if r["set"] == name and (r["style"] or "question") == style]
            if not mine:
                continue
            c: Counter[str] = Counter()
            for r in mine:
                c["questions"] += 1
                c["asks changes"] += Query.of(r["question"]).asks_changes
                if r["gold_rank"] == 1:
                    continue
                c["misses"] += 1
                above = [p for p, _ in r["pages"][:(r["gold_rank"] or 11) - 1]]
                c["first page news"] += bool(above) and above[0] in news
                if any(p in news for p in above):
                    c["news above gold"] += 1
                    if args.show:
                        print(f"  {name}:{r['id']} {r['question']!r} gold {questions[r['id']]['gold']} rank "
                              f"{r['gold_rank']}; above: {[p for p in above if p in news]}")
            total.update({f"{style} {k}": v for k, v in c.items()})
            print(f"| {name} | {why['changelog']} / {why['upgrade']} / {why['path']} | {style} | {c['questions']} | {c['misses']} | "
                  f"{c['first page news']} | {c['news above gold']} | {c['asks changes']} |")
    for style in ("question", "keyword"):
        t = {k.split(" ", 1)[1]: v for k, v in total.items() if k.startswith(style)}
        if t:
            print(f"| **all** | | {style} | {t['questions']} | {t['misses']} | {t.get('first page news', 0)} | "
                  f"{t.get('news above gold', 0)} | {t.get('asks changes', 0)} |")


if __name__ == "__main__":
    main()
