#!/usr/bin/env python3
"""Validate the held-out question sets under bench/sets/<name>/.

Sets whose records carry `grades` (graded page relevance, two query styles) are checked by
`validate_graded`: see its docstring. For the other (older) sets it checks:

- each record has id, question, gold, gold_sections, reference_answer;
  ids are unique; 1-3 gold sections; `gold` lists exactly the paths used by
  `gold_sections`, in first-seen order;
- every gold path exists under <set>/corpus/;
- every gold heading sits at the given 1-based line:
  * Markdown (.md): the line is `#{1,6} <heading>` (exact text after the
    hashes) and is not inside a fenced code block;
  * reStructuredText (.rst/.txt): the line is exactly the heading text and
    the next line is an underline of one repeated punctuation character at
    least as long as the heading;
- unanswerable.jsonl, if present: records have id and question, ids unique and
  disjoint from the answerable ids;
- the set has a LICENSE.txt and README.md, and reports the corpus size;
- no question text appears twice.

It prints counts per set and every error, and exits 1 if any error was found.

Usage: python bench/sets/validate.py [SET ...]   (default: every set)
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from setinfo import STYLES, corpus_pages, cross_sets, graded_sets

HERE = Path(__file__).resolve().parent
REQUIRED = ("id", "question", "gold", "gold_sections", "reference_answer")
GRADED_REQUIRED = ("id", "style", "kind", "question", "grades", "gold", "gold_sections")
MD_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
MARKDOWN = (".md", ".mdx")
RST_UNDERLINE_CHARS = set("=-~^\"'`#*+.:_<>!$%&,;?@[]{}()/\\|")
WORD = re.compile(r"[a-z][a-z0-9_]+")
STOP = set(
    "the a an and or of to in on for with how do i my can what is it be "
    "does when why should that this as by from so not but are at use get "
    "want would like make there way".split()
)


def fenced_lines(lines: list[str]) -> set[int]:
    """1-based line numbers that are inside (or open/close) a fenced block."""
    inside: set[int] = set()
    fence: str | None = None
    for i, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                inside.add(i)
        else:
            inside.add(i)
            s = line.strip()
            if m and s and set(s) == {fence[0]} and len(s) >= len(fence):
                fence = None
    return inside


def check_heading(path: Path, lines: list[str], line: int, heading: str) -> str | None:
    if not (1 <= line <= len(lines)):
        return f"line {line} out of range (file has {len(lines)} lines)"
    text = lines[line - 1]
    if path.suffix in MARKDOWN:
        if line in fenced_lines(lines):
            return f"line {line} is inside a fenced code block"
        m = MD_HEADING.match(text)
        if not m:
            return f"line {line} is not a Markdown heading: {text!r}"
        if m.group(2) != heading:
            return f"heading mismatch at line {line}: {m.group(2)!r} != {heading!r}"
        return None
    # reStructuredText-style title: text line followed by an underline
    if text.rstrip() != heading:
        return f"heading mismatch at line {line}: {text.rstrip()!r} != {heading!r}"
    if line >= len(lines):
        return f"no underline after line {line}"
    under = lines[line].rstrip()
    if not under or len(set(under)) != 1 or under[0] not in RST_UNDERLINE_CHARS:
        return f"line {line + 1} is not an underline: {under!r}"
    if len(under) < len(heading):
        return f"underline at line {line + 1} shorter than heading"
    return None


def words(s: str) -> set[str]:
    return {w for w in WORD.findall(s.lower()) if w not in STOP}


RST_UNDER = re.compile(r"^([=\-~^\"'`#*+.:_])\1{2,}\s*$")


def heading_lines(path: Path, lines: list[str]) -> list[int]:
    """1-based line numbers of every heading in the file (any level)."""
    if path.suffix in MARKDOWN:
        fenced = fenced_lines(lines)
        return [i for i, text in enumerate(lines, 1) if i not in fenced and MD_HEADING.match(text)]
    out = []
    for i in range(len(lines) - 1):
        t, u = lines[i].rstrip(), lines[i + 1].rstrip()
        if t.strip() and not t[:1].isspace() and not RST_UNDER.match(t) and RST_UNDER.match(u) and len(u) >= len(t):
            out.append(i + 1)
    return out


def section_text(path: Path, lines: list[str], line: int) -> str:
    """Text from a heading to the next heading of any level."""
    nxt = [h for h in heading_lines(path, lines) if h > line]
    end = nxt[0] - 1 if nxt else len(lines)
    return "\n".join(lines[line - 1 : end])


def load_jsonl(path: Path, errors: list[str]) -> list[dict[str, Any]]:
    rows = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            rows.append(json.loads(raw))
        except json.JSONDecodeError as e:
            errors.append(f"{path.name}:{n}: bad JSON: {e}")
    return rows


def duplicate_questions(rows: list[dict[str, Any]]) -> list[str]:
    """Questions whose text (case and spacing aside) appears more than once."""
    seen = Counter(" ".join(str(r.get("question", "")).lower().split()) for r in rows)
    return [f"duplicate question {q!r} ({c}x)" for q, c in seen.items() if c > 1]


def validate_graded(d: Path) -> int:
    """Check a graded set; print its counts and errors; return the number of errors.

    - each record has id, style (keyword|question), kind, question, grades, gold and
      gold_sections; ids and question texts are unique; both styles occur;
    - grades map page paths to 1 (helps) or 2 (the page about it), at least one 2;
      `gold` lists exactly the grade-2 pages, in the order of `grades`;
    - every graded path is a page of the corpus (a file, or a page the builder makes from an
      OpenAPI corpus), and every gold section sits on a graded page at its heading line;
    - keyword queries have at most 6 words;
    - the set has LICENSE.txt and README.md.

    A cross-library set (no corpus of its own) is checked the same way, each record against the
    corpus of the sibling set its `lib` names; `names_lib` is true or false;
    it needs a README.md only (the licences are those of the sets it points into).
    """
    errors: list[str] = []
    rows = load_jsonl(d / "questions.jsonl", errors)
    cross = bool(rows) and "lib" in rows[0]  # as setinfo.cross_sets decides
    libs = {c.parent.name for c in d.parent.glob("*/corpus")}
    pages_of: dict[Path, set[str]] = {}
    cache: dict[Path, list[str]] = {}
    libs_seen: Counter[str] = Counter()
    errors += [f"duplicate id {i!r} ({c}x)" for i, c in Counter(r.get("id") for r in rows).items() if c > 1]
    errors += duplicate_questions(rows)
    styles: Counter[str] = Counter()
    kinds: Counter[tuple[str, str]] = Counter()
    graded: Counter[int] = Counter()
    n_sections = 0
    for r in rows:
        rid = r.get("id", "?")
        missing = [k for k in GRADED_REQUIRED if k not in r]
        if missing:
            errors.append(f"{rid}: missing fields {missing}")
            continue
        home = d
        if cross:
            lib = r.get("lib")
            if lib not in libs:
                errors.append(f"{rid}: lib {lib!r} is not a set with a corpus")
                continue
            if not isinstance(r.get("names_lib"), bool):
                errors.append(f"{rid}: names_lib must be true or false")
            libs_seen[lib] += 1
            home = d.parent / lib
        if home not in pages_of:  # setdefault would parse the corpus (an OpenAPI spec) every time
            pages_of[home] = corpus_pages(home)
        pages = pages_of[home]
        corpus = home / "corpus"
        style, grades = r["style"], r["grades"]
        styles[style] += 1
        kinds[(style, r["kind"])] += 1
        if style not in STYLES:
            errors.append(f"{rid}: style {style!r} not in {STYLES}")
        if style == "keyword" and len(str(r["question"]).split()) > 6:
            errors.append(f"{rid}: keyword query longer than 6 words")
        if not grades or any(g not in (1, 2) for g in grades.values()):
            errors.append(f"{rid}: grades must map paths to 1 or 2: {grades}")
        if r["gold"] != [p for p, g in grades.items() if g == 2] or not r["gold"]:
            errors.append(f"{rid}: gold {r['gold']} is not the (non-empty) list of grade-2 pages")
        for path, g in grades.items():
            graded[g] += 1
            if path not in pages:
                errors.append(f"{rid}: graded page not in corpus: {path}")
        for sec in r["gold_sections"]:
            n_sections += 1
            if sec.get("path") not in grades:
                errors.append(f"{rid}: gold section on an ungraded page: {sec}")
                continue
            f = corpus / sec["path"]
            if not f.is_file():
                errors.append(f"{rid}: gold section path is not a file: {sec['path']}")
                continue
            if f not in cache:
                cache[f] = f.read_text(encoding="utf-8").splitlines()
            lines = cache[f]
            err = check_heading(f, lines, int(sec["line"]), sec["heading"])
            if err:
                errors.append(f"{rid}: {sec['path']}: {err}")
    for style in STYLES:
        if not styles[style]:
            errors.append(f"no {style!r} queries")
    for f in ("README.md",) if cross else ("LICENSE.txt", "README.md"):
        if not (d / f).is_file():
            errors.append(f"missing {f}")
    if cross:
        print(f"== {d.name} (cross-library)")
        print(f"libraries: {dict(sorted(libs_seen.items()))}")
    else:
        size = sum(p.stat().st_size for p in (d / "corpus").rglob("*") if p.is_file())
        print(f"== {d.name} (graded)")
        print(f"corpus: {len(pages_of.get(d) or corpus_pages(d))} pages, {size / 1024:.0f} KiB")
    print(f"queries: {dict(styles)}  graded pages: {dict(sorted(graded.items()))}  gold sections: {n_sections}")
    for (style, kind), c in sorted(kinds.items()):
        print(f"  {style:8s} {kind:10s} {c}")
    for e in errors:
        print(f"ERROR {e}")
    print(f"errors: {len(errors)}")
    return len(errors)


def validate_set(d: Path) -> int:
    if d in graded_sets() or d in cross_sets():
        return validate_graded(d)
    errors: list[str] = []
    corpus = d / "corpus"
    qpath = d / "questions.jsonl"
    rows = load_jsonl(qpath, errors)
    errors += duplicate_questions(rows)
    cache: dict[Path, list[str]] = {}

    ids = Counter(r.get("id") for r in rows)
    for i, c in ids.items():
        if c > 1:
            errors.append(f"duplicate id {i!r} ({c}x)")

    n_sections = 0
    pages: set[str] = set()
    per_q: Counter[int] = Counter()
    kinds: Counter[str] = Counter()
    overlap_by_kind: dict[str, list[float]] = {}
    body_overlap_by_kind: dict[str, list[float]] = {}
    for r in rows:
        rid = r.get("id", "?")
        missing = [k for k in REQUIRED if k not in r]
        if missing:
            errors.append(f"{rid}: missing fields {missing}")
            continue
        if not str(r["question"]).strip() or not str(r["reference_answer"]).strip():
            errors.append(f"{rid}: empty question or reference_answer")
        secs = r["gold_sections"]
        if not (1 <= len(secs) <= 3):
            errors.append(f"{rid}: {len(secs)} gold sections (want 1-3)")
        per_q[len(secs)] += 1
        kinds[r.get("kind", "-")] += 1
        seen_paths: list[str] = []
        seen_secs = set()
        head_words: set[str] = set()
        body_words: set[str] = set()
        for s in secs:
            for k in ("path", "heading", "line"):
                if k not in s:
                    errors.append(f"{rid}: gold section missing {k!r}: {s}")
            if not all(k in s for k in ("path", "heading", "line")):
                continue
            key = (s["path"], s["line"])
            if key in seen_secs:
                errors.append(f"{rid}: duplicate gold section {key}")
            seen_secs.add(key)
            if s["path"] not in seen_paths:
                seen_paths.append(s["path"])
            p = corpus / s["path"]
            if not p.is_file():
                errors.append(f"{rid}: gold path not found: {s['path']}")
                continue
            if p not in cache:
                cache[p] = p.read_text(encoding="utf-8").splitlines()
            err = check_heading(p, cache[p], int(s["line"]), s["heading"])
            if err:
                errors.append(f"{rid}: {s['path']}: {err}")
            n_sections += 1
            pages.add(s["path"])
            head_words |= words(s["heading"])
            if not err:
                body_words |= words(section_text(p, cache[p], int(s["line"])))
        if r["gold"] != seen_paths:
            errors.append(f"{rid}: gold {r['gold']} != paths of gold_sections {seen_paths}")
        qw = words(r["question"])
        if qw:
            overlap_by_kind.setdefault(r.get("kind", "-"), []).append(
                len(qw & head_words) / len(qw)
            )
            body_overlap_by_kind.setdefault(r.get("kind", "-"), []).append(
                len(qw & body_words) / len(qw)
            )

    un_rows: list[dict[str, Any]] = []
    upath = d / "unanswerable.jsonl"
    if upath.exists():
        un_rows = load_jsonl(upath, errors)
        uids = Counter(r.get("id") for r in un_rows)
        for r in un_rows:
            if not r.get("id") or not str(r.get("question", "")).strip():
                errors.append(f"unanswerable: bad record {r}")
        for i, c in uids.items():
            if c > 1:
                errors.append(f"unanswerable: duplicate id {i!r}")
            if i in ids:
                errors.append(f"unanswerable id {i!r} also used in questions.jsonl")

    for f in ("LICENSE.txt", "README.md"):
        if not (d / f).is_file():
            errors.append(f"missing {f}")

    files = [p for p in corpus.rglob("*") if p.is_file()] if corpus.is_dir() else []
    size = sum(p.stat().st_size for p in files)
    bad_ext = [p for p in files if p.suffix not in (".md", ".rst", ".txt")]
    for p in bad_ext:
        errors.append(f"corpus file with unexpected type: {p.relative_to(corpus)}")

    print(f"== {d.name}")
    print(f"corpus: {len(files)} files, {size / 1024:.0f} KiB")
    print(
        f"questions: {len(rows)}  gold sections: {n_sections} on {len(pages)} pages  "
        f"sections per question: {dict(sorted(per_q.items()))}"
    )
    print(f"kinds: {dict(kinds)}")
    print("mean share of question words (minus stop words) found in the gold ...")
    for k, v in sorted(overlap_by_kind.items()):
        b = body_overlap_by_kind.get(k, [0.0])
        print(
            f"  kind={k:10s} headings {sum(v) / len(v):.2f}   "
            f"section text {sum(b) / len(b):.2f}"
        )
    print(f"unanswerable: {len(un_rows)}")
    for e in errors:
        print(f"ERROR {e}")
    print(f"errors: {len(errors)}")
    return len(errors)


def main(argv: list[str]) -> int:
    if argv:
        sets = [HERE / a for a in argv]
    else:
        sets = sorted(p.parent for p in HERE.glob("*/questions.jsonl"))
    if not sets:
        print("no sets found")
        return 1
    total = sum(validate_set(d) for d in sets)
    print(f"TOTAL errors: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
