#!/usr/bin/env python3
"""Reference floor for a question set: plain SQLite FTS5 BM25, no tuning.

Splits every corpus file into one chunk per heading (Markdown `#` headings
outside code fences; reStructuredText titles with an underline), indexes
heading + body with FTS5 (porter tokenizer), and searches each question with
all of its words OR-ed. It reports MRR, R@5 and R@10 at page level (ranked
distinct paths) and at section level (a hit is a chunk whose path and
heading line equal a gold section's), overall, per question `kind` and per `style`
(questions without section gold count at page level only). A set whose corpus is one OpenAPI
file is skipped: plain FTS5 has no page structure for it.

It mirrors the baseline quoted in shared/eval/anthropic-docs/README.md, so the
numbers can be compared across sets. It is not the project's search.

Usage: python bench/sets/bm25_baseline.py bench/sets/click [more sets...]
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path

from setinfo import spec_file

FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
MD_H = re.compile(r"^#{1,6}[ \t]+(.*?)[ \t]*$")
UNDER = re.compile(r"^([=\-~^\"'`#*+.:_])\1{2,}\s*$")


def md_headings(lines: list[str]) -> list[tuple[int, str]]:
    out, fence = [], None
    for i, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                continue
            h = MD_H.match(line)
            if h:
                out.append((i, h.group(1)))
        elif m and set(line.strip()) == {fence[0]}:
            fence = None
    return out


def rst_headings(lines: list[str]) -> list[tuple[int, str]]:
    out = []
    for i in range(len(lines) - 1):
        t, u = lines[i].rstrip(), lines[i + 1].rstrip()
        if t.strip() and not UNDER.match(t) and UNDER.match(u) and len(u) >= len(t.strip()):
            if t[:1].isspace():
                continue
            out.append((i + 1, t))
    return out


def chunks(path: Path) -> list[tuple[int, str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    heads = md_headings(lines) if path.suffix in (".md", ".mdx") else rst_headings(lines)
    bounds = [(0, "")] + heads
    res = []
    for k, (line, head) in enumerate(bounds):
        end = bounds[k + 1][0] - 1 if k + 1 < len(bounds) else len(lines)
        res.append((line, head, "\n".join(lines[line:end])))
    return res


def run(setdir: Path) -> None:
    corpus = setdir / "corpus"
    if spec_file(setdir) is not None:
        print(f"== {setdir.name}: skipped (the corpus is an OpenAPI spec)")
        return
    db = sqlite3.connect(":memory:")
    db.execute(
        "create virtual table c using fts5(path unindexed, line unindexed, "
        "heading, body, tokenize='porter')"
    )
    for p in sorted(corpus.rglob("*")):
        if p.is_file() and p.suffix in (".md", ".mdx", ".rst", ".txt"):
            rel = p.relative_to(corpus).as_posix()
            for line, head, body in chunks(p):
                db.execute("insert into c values (?,?,?,?)", (rel, line, head, body))

    qs = [json.loads(x) for x in (setdir / "questions.jsonl").open(encoding="utf-8")]
    tot: dict[str, list[float]] = {"page": [0, 0, 0], "section": [0, 0, 0]}
    counted = {"page": 0, "section": 0}
    kinds: dict[str, list[tuple[float, float]]] = {}
    styles: dict[str, list[tuple[float, float]]] = {}
    for q in qs:
        toks = sorted(set(re.findall(r"[a-z0-9]+", q["question"].lower())))
        match = " OR ".join(f'"{t}"' for t in toks)
        rows = db.execute(
            "select path, line from c where c match ? order by bm25(c) limit 50", (match,)
        ).fetchall()
        pages: list[str] = []
        for p, _ in rows:
            if p not in pages:
                pages.append(p)
        secs = [(p, int(line)) for p, line in rows]
        gold_p = set(q["gold"])
        gold_s = {(s["path"], int(s["line"])) for s in q["gold_sections"]}
        for lvl, ranked, gold in (("page", pages, gold_p), ("section", secs, gold_s)):
            if not gold:
                continue
            counted[lvl] += 1
            rr = next((1 / (i + 1) for i, x in enumerate(ranked) if x in gold), 0.0)
            r5 = len(gold & set(ranked[:5])) / len(gold)
            r10 = len(gold & set(ranked[:10])) / len(gold)
            t = tot[lvl]
            t[0] += rr
            t[1] += r5
            t[2] += r10
            if lvl == "section":
                kinds.setdefault(q.get("kind", "-"), []).append((rr, r5))
            if lvl == "page" and "style" in q:
                styles.setdefault(q["style"], []).append((rr, r5))
    print(f"== {setdir.name} ({len(qs)} questions)")
    for lvl, (a, b, c) in tot.items():
        n = max(counted[lvl], 1)
        print(f"{lvl:8s} MRR {a / n:.3f}  R@5 {b / n:.3f}  R@10 {c / n:.3f}")
    for label, groups in (("section, kind", kinds), ("page, style", styles)):
        for k, v in sorted(groups.items()):
            mrr = sum(a for a, _ in v) / len(v)
            r5 = sum(b for _, b in v) / len(v)
            print(f"  {label}={k:10s} n={len(v):3d}  MRR {mrr:.3f}  R@5 {r5:.3f}")


if __name__ == "__main__":
    for arg in sys.argv[1:] or [str(Path(__file__).resolve().parent / "click")]:
        run(Path(arg))
