"""Retrieval quality: page and section Recall@1/5/10 and MRR, lexical vs dense vs hybrid.

Builds each question set's corpus into a package (with vectors, in a temp CONTEXT_HOME),
ranks every question with the real engine, and scores the ranking against gold sections.

Per set it prints the original table (page and section MRR and Recall@1/5/10 over the top 10
sections). At the end it prints one Markdown table over every set, per query style where a
set has styles: page MRR, Hit@1, Hit@5 and graded nDCG@5, and section MRR and Hit@5 where the
set has section gold. See `GradedScores` for the definitions.

    python bench/retrieval.py                 # every set found
    python bench/retrieval.py --set anthropic --modes lexical hybrid
    python bench/retrieval.py --together --modes hybrid   # every set's questions over all packages
    python bench/retrieval.py --set crosslib             # a cross-library set, with and without its library
    python bench/retrieval.py --by-kind --param lexical_weight=0.6   # per intent too; another RankingParams value
    python bench/retrieval.py --set django --dump ranks.jsonl   # each question's first pages and the gold's rank
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI does: see context_cli/surfaces/cli.py
sys.path.insert(0, str(ROOT / "bench" / "sets"))
from setinfo import corpus_source, cross_sets, graded_sets  # noqa: E402

SHARED = Path(os.environ.get("CONTEXT_SHARED", ROOT.parent / "shared"))
SETS = {
    "anthropic": (SHARED / "eval" / "anthropic-docs" / "corpus", SHARED / "eval" / "anthropic-docs" / "questions.jsonl"),
    "click": (ROOT / "bench" / "sets" / "click" / "corpus", ROOT / "bench" / "sets" / "click" / "questions.jsonl"),
    "flask": (ROOT / "bench" / "sets" / "flask" / "corpus", ROOT / "bench" / "sets" / "flask" / "questions.jsonl"),
}
SETS.update({d.name: (corpus_source(d), d / "questions.jsonl") for d in graded_sets()})
CROSS = {d.name: d / "questions.jsonl" for d in cross_sets()}  # each question names its set (`lib`)
KS = (1, 5, 10)
_PART = re.compile(r" \(part \d+\)$")
_ROLE = re.compile(r":[\w:.+-]+:(?=`)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_HEADING_ID = re.compile(r"\s*\{\s*#[^}]*\}\s*$")  # {#id}, and MkDocs' { #id }
_ESCAPE = re.compile(r"\\([^\w\s])")
_MD_HEADING = re.compile(r"^#{1,6} (.*?)\s*$", re.M)


@dataclass
class Scores:
    n: int = 0
    n_sec: int = 0  # questions with section gold
    page_mrr: float = 0.0
    sec_mrr: float = 0.0
    page_recall: dict[int, float] = field(default_factory=lambda: {k: 0.0 for k in KS})
    sec_recall: dict[int, float] = field(default_factory=lambda: {k: 0.0 for k in KS})

    def row(self, label: str) -> str:
        n = max(self.n, 1)
        pr = " ".join(f"{self.page_recall[k] / n:.3f}" for k in KS)
        if not self.n_sec:
            return f"{label:<10} {self.page_mrr / n:.3f}  {pr}   (no section gold)"
        s = self.n_sec
        sr = " ".join(f"{self.sec_recall[k] / s:.3f}" for k in KS)
        return f"{label:<10} {self.page_mrr / n:.3f}  {pr}   {self.sec_mrr / s:.3f}  {sr}"


@dataclass
class GradedScores:
    """Page metrics on the distinct pages of the whole ranking, in order of first appearance.

    MRR, Hit@1 and Hit@5 count a page of grade 2 (the page about it; for sets without grades,
    any gold page). nDCG@5 uses every grade, gain 2^grade - 1. Section MRR and Hit@5 rank the
    sections themselves and count only questions that have section gold.
    """

    n: int = 0
    mrr: float = 0.0
    hit1: float = 0.0
    hit5: float = 0.0
    ndcg5: float = 0.0
    n_sec: int = 0
    sec_mrr: float = 0.0
    sec_hit5: float = 0.0

    def add(self, pages: list[str], grades: dict[str, int], sec_rank: int | None, has_sections: bool) -> None:
        self.n += 1
        first = next((i for i, p in enumerate(pages, 1) if grades.get(p) == 2), None)
        self.mrr += 1 / first if first else 0.0
        self.hit1 += first == 1
        self.hit5 += first is not None and first <= 5
        dcg = sum((2 ** grades.get(p, 0) - 1) / math.log2(i + 1) for i, p in enumerate(pages[:5], 1))
        ideal = sorted(grades.values(), reverse=True)[:5]
        self.ndcg5 += dcg / sum((2**g - 1) / math.log2(i + 1) for i, g in enumerate(ideal, 1))
        if has_sections:
            self.n_sec += 1
            self.sec_mrr += 1 / sec_rank if sec_rank else 0.0
            self.sec_hit5 += sec_rank is not None and sec_rank <= 5

    def merge(self, other: GradedScores) -> None:
        """Add another group's questions to this one's."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def summary(self) -> dict[str, float | int | None]:
        n, s = max(self.n, 1), max(self.n_sec, 1)
        return {"n": self.n, "page_mrr": self.mrr / n, "page_hit@1": self.hit1 / n,
                "page_hit@5": self.hit5 / n, "page_ndcg@5": self.ndcg5 / n,
                "section_n": self.n_sec,
                "section_mrr": self.sec_mrr / s if self.n_sec else None,
                "section_hit@5": self.sec_hit5 / s if self.n_sec else None}


def section_hits(chunk: Any, gold: dict[str, Any], plain_text: bool = False) -> bool:
    """Does a ranked chunk stand for a gold section (by path and heading)?

    The original table compares heading text verbatim (so its numbers stay comparable);
    `plain_text=True`, used by the graded table, first strips inline markup from both sides,
    because the builder renders a heading such as `` `syncKey` `` or ``:mod:`x` `` as plain text.
    """
    if chunk.doc_path != gold["path"]:
        return False
    norm = _plain if plain_text else str.strip
    heading = norm(gold["heading"])
    parts = [norm(_PART.sub("", p)) for p in chunk.section_title.split(" > ")]
    parts = [p for part in parts for p in part.split(" + ")]
    if heading in parts:
        return True
    if heading == norm(chunk.doc_title) and parts[0] == "Introduction":
        return True
    if not plain_text:
        return re.search(r"^#{1,6} " + re.escape(heading) + r"\s*$", chunk.content, re.M) is not None
    return any(_plain(h) == heading for h in _MD_HEADING.findall(chunk.content))


def _plain(text: str) -> str:
    """Heading text without inline markup: roles, backticks, emphasis, links, `\\` escapes,
    a trailing MDX/Docusaurus `{#id}` or MkDocs `{ #id }`, extra spaces."""
    text = _HEADING_ID.sub("", _LINK.sub(r"\1", _ROLE.sub("", text)))
    text = _ESCAPE.sub(r"\1", text).replace("`", "").replace("**", "")
    return " ".join(text.split())


def distinct_pages(ranked: list[Any], library: str | None = None) -> list[str]:
    """The pages of `ranked` in order; a page of another library than `library` (when given)
    is kept apart, so it takes a rank but never matches the gold."""
    pages: list[str] = []
    for c in ranked:
        page = c.doc_path if library is None or c.library == library else f"{c.library}\0{c.doc_path}"
        if page not in pages:
            pages.append(page)
    return pages


def evaluate(installed: Any, questions: list[dict[str, Any]], mode: str, others: list[Any] | None = None,
             params: Any = None, dump: list[dict[str, Any]] | None = None) -> tuple[Scores, dict[str, GradedScores], float]:
    """The original scores, graded scores per group ("all", each style and each kind, as
    "kind:howto"), and p50 ms. With `others`, every question searches them too, as `get_docs`
    without a library does, and only `installed`'s pages and sections count as found.
    `params`: the `RankingParams` to rank with (the defaults when None). `dump`: each
    question's ranking is appended to it (`ranking_record`)."""
    from context_cli.search.engine import rank
    from context_cli.search.options import DEFAULT_PARAMS
    from context_cli.search.searcher import open_searcher

    s = open_searcher(installed)
    searched = [s, *(open_searcher(o) for o in others or [])]
    library = s.label if others else None

    def own(c: Any) -> bool:  # another library's section with the same words is not the answer
        return library is None or c.library == library

    scores = Scores()
    graded: dict[str, GradedScores] = {}
    times = []
    for q in questions:
        t0 = time.perf_counter()
        ranked, _, _ = rank(q["question"], searched, mode, params or DEFAULT_PARAMS)
        times.append(time.perf_counter() - t0)
        top = ranked[:max(KS)]
        scores.n += 1
        pages = distinct_pages(top, library)
        gold_pages = set(q["gold"])
        first = next((i for i, p in enumerate(pages, 1) if p in gold_pages), None)
        scores.page_mrr += 1 / first if first else 0
        for k in KS:
            scores.page_recall[k] += len(gold_pages & set(pages[:k])) / len(gold_pages)
        gold_secs = q["gold_sections"]
        if gold_secs:
            scores.n_sec += 1
            hit_rank = [next((i for i, c in enumerate(top, 1) if own(c) and section_hits(c, g)), None)
                        for g in gold_secs]
            found = [r for r in hit_rank if r]
            scores.sec_mrr += 1 / min(found) if found else 0
            for k in KS:
                scores.sec_recall[k] += sum(1 for r in hit_rank if r and r <= k) / len(gold_secs)
        grades = q.get("grades") or {p: 2 for p in q["gold"]}
        sec_rank = next((i for i, c in enumerate(ranked, 1)
                         if own(c) and any(section_hits(c, g, plain_text=True) for g in gold_secs)), None)
        all_pages = distinct_pages(ranked, library)
        for group in ("all", q.get("style"), q.get("kind") and f"kind:{q['kind']}"):
            if group:
                graded.setdefault(group, GradedScores()).add(all_pages, grades, sec_rank, bool(gold_secs))
        if dump is not None:
            dump.append(ranking_record(q, all_pages, grades))
    times.sort()
    return scores, graded, times[len(times) // 2] * 1000


def ranking_record(q: dict[str, Any], pages: list[str], grades: dict[str, int]) -> dict[str, Any]:
    """One question's ranking as `--dump` writes it: its id, style, kind and text, the rank of
    its first grade-2 page (None: not among the ranked pages) and the first 10 pages with
    their grades (another library's page as `library\0path`)."""
    first = next((i for i, p in enumerate(pages, 1) if grades.get(p) == 2), None)
    return {"id": q.get("id"), "style": q.get("style"), "kind": q.get("kind"), "question": q["question"],
            "gold_rank": first, "pages": [[p, grades.get(p, 0)] for p in pages[:10]]}


def evaluate_cross(questions: list[dict[str, Any]], installed: dict[str, Any], mode: str, params: Any = None,
                   dump: list[dict[str, Any]] | None = None) -> dict[str, GradedScores]:
    """A cross-library set's graded scores: each question asked of its own library's package alone
    ("with lib") and of all the set's packages at once ("without lib", as `get_docs` without a
    library), overall, per style, and split by whether the question names its library."""
    out: dict[str, GradedScores] = {}
    for lib in sorted({q["lib"] for q in questions}):
        others = [i for n, i in installed.items() if n != lib]
        for named in (True, False):
            qs = [q for q in questions if q["lib"] == lib and q["names_lib"] == named]
            for where, pool in (("with lib", None), ("without lib", others)):
                found: list[dict[str, Any]] = []
                graded = evaluate(installed[lib], qs, mode, pool, params, found)[1] if qs else {}
                if dump is not None:
                    dump += [{**r, "where": where} for r in found]
                for group, v in graded.items():
                    keys = [where, f"{where} {'named' if named else 'unnamed'}"] if group == "all" else [f"{where} {group}"]
                    for key in keys:
                        out.setdefault(key, GradedScores()).merge(v)
    return out


def load_questions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def build(name: str, corpus: Path, embed: bool) -> Any:
    from context_cli.adding import AddRequest, add_source

    t0 = time.perf_counter()
    # Named as the library is (`django`, `tanstack-query`), so that what a question says of a
    # library (`Query.names_library`) is read against real names; until 2026-12-07 they were
    # `NAME-eval`, where every short form of a name was a prefix.
    res = add_source(AddRequest(source=str(corpus), name=name, version="1.0.0", embed=embed))
    b = res.build
    assert b is not None, f"{corpus}: nothing was built"
    print(f"[{name}] built {b.chunks} sections from {b.pages} pages in "
          f"{time.perf_counter() - t0:.1f}s ({'vectors: ' + str(b.embedding_model) if embed else 'no vectors'})")
    return res.installed


def fmt(x: float | int | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def markdown_table(graded: dict[tuple[str, str, str], dict[str, Any]]) -> str:
    head = ("| set | queries | n | mode | page MRR | Hit@1 | Hit@5 | nDCG@5 | sec MRR | sec Hit@5 |\n"
            "|---|---|---|---|---|---|---|---|---|---|")
    rows = [f"| {s} | {g} | {v['n']} | {m} | {fmt(v['page_mrr'])} | {fmt(v['page_hit@1'])} | "
            f"{fmt(v['page_hit@5'])} | {fmt(v['page_ndcg@5'])} | {fmt(v['section_mrr'])} | "
            f"{fmt(v['section_hit@5'])} |" for (s, g, m), v in graded.items()]
    return "\n".join([head, *rows])


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--set", dest="sets", action="append", choices=sorted([*SETS, *CROSS]))
    ap.add_argument("--modes", nargs="+", default=["lexical", "dense", "hybrid"])
    ap.add_argument("--together", action="store_true",
                    help="search every question over all the sets' packages at once (get_docs without a library)")
    ap.add_argument("--home", type=Path, help="build into (and reuse packages from) this CONTEXT_HOME")
    ap.add_argument("--json", dest="json_out", type=Path, help="also write the scores here")
    ap.add_argument("--by-kind", action="store_true", help="also print each kind of question (intent) apart")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="rank with this RankingParams value instead of the default (repeatable)")
    ap.add_argument("--dump", type=Path, help="write each question's ranking here (JSON lines: set, mode, gold rank, pages)")
    args = ap.parse_args()
    os.environ["CONTEXT_HOME"] = str(args.home or tempfile.mkdtemp(prefix="bench-home-"))
    sys.path.insert(0, str(ROOT))
    params = ranking_params(args.param)
    embed = any(m != "lexical" for m in args.modes)
    wanted = args.sets or [*(n for n, (c, q) in SETS.items() if q.exists()), *CROSS]
    cross = {n: load_questions(CROSS[n]) for n in wanted if n in CROSS}
    scored = [n for n in wanted if n in SETS]
    packages = {}  # the scored sets' packages, and those a cross set's questions need
    for name in dict.fromkeys([*scored, *(q["lib"] for qs in cross.values() for q in qs)]):
        packages[name] = (_built(name) if args.home else None) or build(name, SETS[name][0], embed=embed)
    sets = {name: (load_questions(SETS[name][1]), packages[name]) for name in scored}
    results: dict[str, Any] = {}
    table: dict[tuple[str, str, str], dict[str, Any]] = {}
    dumped: list[dict[str, Any]] = []
    for name, (questions, installed) in sets.items():
        others = [i for n, (_, i) in sets.items() if n != name] if args.together else None
        together = f", searched with {len(others)} other packages" if others else ""
        print(f"\n{name}: {len(questions)} questions{together}")
        print(f"{'mode':<10} {'page MRR':<8} {'R@1   R@5   R@10':<19}   {'sec MRR':<7} R@1   R@5   R@10")
        for mode in args.modes:
            found: list[dict[str, Any]] = []
            sc, graded, p50 = evaluate(installed, questions, mode, others, params, found)
            dumped += [{"set": name, "mode": mode, **r} for r in found]
            print(sc.row(mode) + f"   (p50 {p50:.1f} ms)")
            n, ns = max(sc.n, 1), sc.n_sec or None
            results[f"{name}/{mode}"] = {
                "page_mrr": sc.page_mrr / n, "section_mrr": sc.sec_mrr / ns if ns else None,
                **{f"page_r@{k}": sc.page_recall[k] / n for k in KS},
                **{f"section_r@{k}": sc.sec_recall[k] / ns if ns else None for k in KS},
                "graded": {g: v.summary() for g, v in graded.items()},
            }
            for group, v in graded.items():
                table[(name, group, mode)] = v.summary()
    for name, questions in cross.items():
        libs = {q["lib"]: packages[q["lib"]] for q in questions}
        print(f"\n{name}: {len(questions)} questions for {len(libs)} libraries, each asked with and without its library")
        for mode in args.modes:
            found = []
            graded = evaluate_cross(questions, libs, mode, params, found)
            dumped += [{"set": name, "mode": mode, **r} for r in found]
            results[f"{name}/{mode}"] = {"graded": {g: v.summary() for g, v in graded.items()}}
            for group, v in graded.items():
                table[(name, group, mode)] = v.summary()
    shown = {k: v for k, v in table.items() if args.by_kind or "kind:" not in k[1]}
    print("\n" + markdown_table(dict(sorted(shown.items(), key=lambda kv: kv[0][:2]))))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=2))
    if args.dump:
        args.dump.write_text("".join(json.dumps(r) + "\n" for r in dumped))


def ranking_params(settings: list[str]) -> Any:
    """The default `RankingParams` with these `NAME=VALUE` settings (a tuple as `0.25,0.1`)."""
    import dataclasses

    from context_cli.search.options import DEFAULT_PARAMS

    changes: dict[str, Any] = {}
    kinds = {f.name: f.type for f in dataclasses.fields(DEFAULT_PARAMS)}
    for setting in settings:
        name, _, value = setting.partition("=")
        if name not in kinds:
            raise SystemExit(f"--param: no RankingParams field {name!r} (fields: {', '.join(kinds)})")
        current = getattr(DEFAULT_PARAMS, name)
        changes[name] = (tuple(float(v) for v in value.split(",") if v) if isinstance(current, tuple)
                         else value.lower() in ("1", "true", "yes") if isinstance(current, bool)
                         else type(current)(value))
    return dataclasses.replace(DEFAULT_PARAMS, **changes)


def set_options(ap: argparse.ArgumentParser) -> None:
    """The options of a benchmark over each set's package alone: --set, --home, --json."""
    ap.add_argument("--set", dest="sets", action="append", choices=sorted(SETS))
    ap.add_argument("--home", type=Path, help="build into (and reuse packages from) this CONTEXT_HOME")
    ap.add_argument("--json", dest="json_out", type=Path, help="also write the scores here")


def chosen_sets(args: argparse.Namespace) -> list[str]:
    """The sets `set_options` chose (all that have questions), with CONTEXT_HOME set to --home
    or a fresh folder."""
    os.environ["CONTEXT_HOME"] = str(args.home or tempfile.mkdtemp(prefix="bench-home-"))
    return args.sets or [n for n, (_, q) in SETS.items() if q.exists()]


def set_package(name: str, reuse: bool) -> Any:
    """The set's package: the one already in this home when `reuse` (`--home`), else built."""
    return (_built(name) if reuse else None) or build(name, SETS[name][0], embed=True)


def _built(name: str) -> Any:
    """The set's package already in this home, if one is (`--home`)."""
    from context_cli.home import packages_dir
    from context_cli.store.store import Store

    return next((i for i in Store(packages_dir()).installed() if i.id.name == name), None)


if __name__ == "__main__":
    main()
