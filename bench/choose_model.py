"""Score candidate embedding models and embed-text recipes on the anthropic-docs eval, dense only.

Used to choose the shipped model's precision and PCA width, and the defaults of
context_cli/embed/text.py. Sections are the corpus pages split at `## ` headings (232 of them);
each question's gold is a list of (path, heading) sections. Reports section-level MRR,
Recall@5 and Recall@10, page-level MRR, and model size. A "fused" column adds a plain FTS5 BM25
ranking by reciprocal rank fusion (k=60), to show what dense adds where it is actually used.

    .venv/bin/python bench/choose_model.py --candidates /tmp/candidates   # folders from
        # scripts/distill_model.py --candidates; without it, only the shipped model is scored
    .venv/bin/python bench/choose_model.py --recipes                      # embed_text variants
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from context_cli.document import Chunk, estimate_tokens  # noqa: E402
from context_cli.embed.model import DEFAULT_MODEL_DIR, Embedder, load_model  # noqa: E402
from context_cli.embed.text import MAX_CHARS, TITLE_REPEAT, embed_text  # noqa: E402

EVAL = Path(os.environ.get("CONTEXT_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "eval" / "anthropic-docs"
RRF_K = 60


def load_sections(corpus: Path) -> list[Chunk]:
    """Every `## ` section of every page, titled like our parser titles a page without an H1."""
    chunks: list[Chunk] = []
    for page in sorted(corpus.rglob("*.md")):
        rel = page.relative_to(corpus).as_posix()
        stem = page.stem if page.stem != "index" else page.parent.name
        title = stem.replace("-", " ").replace("_", " ").strip().capitalize()
        heading, body = None, []
        for line in page.read_text(encoding="utf-8").splitlines() + ["## "]:
            if line.startswith("## "):
                if heading is not None:
                    content = "\n".join(body).strip()
                    chunks.append(Chunk(rel, title, heading, content, estimate_tokens(content), "```" in content))
                heading, body = line[3:].strip(), []
            else:
                body.append(line)
    return chunks


def load_questions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def bm25_ranking(chunks: list[Chunk], questions: list[dict]) -> list[list[int]]:
    """A plain FTS5 baseline: question words OR-ed, titles weighted above the body."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(title, body, tokenize='porter unicode61')")
    db.executemany("INSERT INTO f(rowid, title, body) VALUES (?, ?, ?)",
                   [(i, c.breadcrumb, c.content) for i, c in enumerate(chunks)])
    out = []
    for q in questions:
        words = re.findall(r"\w+", q["question"].lower())
        match = " OR ".join(f'"{w}"' for w in words)
        rows = db.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f, 3.0, 1.0)", (match,)).fetchall()
        out.append([r[0] for r in rows])
    return out


def dense_ranking(model: Embedder, chunks: list[Chunk], questions: list[dict],
                  text_fn: Callable[[Chunk], str]) -> list[list[int]]:
    import numpy as np

    docs = model.encode([text_fn(c) for c in chunks])
    queries = model.encode([q["question"] for q in questions])
    return [list(np.argsort(-row, kind="stable")) for row in queries @ docs.T]


def fuse(*rankings: list[int]) -> list[int]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, idx in enumerate(ranking):
            scores[idx] = scores.get(idx, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores, key=lambda i: -scores[i])


def metrics(rankings: list[list[int]], chunks: list[Chunk], questions: list[dict]) -> dict[str, float]:
    keys = [(c.doc_path, c.section_title) for c in chunks]
    mrr = r5 = r10 = page_mrr = 0.0
    for ranking, q in zip(rankings, questions, strict=True):
        gold = {(g["path"], g["heading"]) for g in q["gold_sections"]}
        gold_pages = {g["path"] for g in q["gold_sections"]}
        ranked = [keys[i] for i in ranking]
        first = next((r for r, k in enumerate(ranked) if k in gold), None)
        mrr += 0.0 if first is None else 1.0 / (first + 1)
        r5 += len(gold & set(ranked[:5])) / len(gold)
        r10 += len(gold & set(ranked[:10])) / len(gold)
        pages = list(dict.fromkeys(k[0] for k in ranked))
        first_page = next((r for r, p in enumerate(pages) if p in gold_pages), None)
        page_mrr += 0.0 if first_page is None else 1.0 / (first_page + 1)
    n = len(questions)
    return {"mrr": mrr / n, "r5": r5 / n, "r10": r10 / n, "page_mrr": page_mrr / n}


def model_size(folder: Path) -> float:
    return sum((folder / f).stat().st_size for f in ("model.safetensors", "tokenizer.json")) / 1e6


def row(label: str, dense: dict, fused: dict, extra: str = "") -> str:
    return (f"| {label} | {extra}{dense['mrr']:.3f} | {dense['r5']:.3f} | {dense['r10']:.3f} | "
            f"{dense['page_mrr']:.3f} | {fused['mrr']:.3f} | {fused['r10']:.3f} |")


def score_models(folders: list[Path], chunks: list[Chunk], questions: list[dict], bm25: list[list[int]]) -> None:
    print("| model | MB | sec MRR | sec R@5 | sec R@10 | page MRR | fused MRR | fused R@10 |")
    print("|---|---|---|---|---|---|---|---|")
    for folder in folders:
        model = load_model(str(folder))
        dense = dense_ranking(model, chunks, questions, embed_text)
        d, f = metrics(dense, chunks, questions), metrics([fuse(b, r) for b, r in zip(bm25, dense, strict=True)], chunks, questions)
        print(row(f"{folder.name} ({model.dim}d)", d, f, f"{model_size(folder):.1f} | "))


RECIPES: dict[str, Callable[[Chunk], str]] = {
    "body only, whole": lambda c: c.content,
    "title + body, whole": lambda c: f"{c.breadcrumb}\n{c.content}",
    f"default (title x{TITLE_REPEAT}, first sentence, cleaned body, cap {MAX_CHARS})": embed_text,
    "no summary line": lambda c: embed_text(c, summary=False),
    "title x1": lambda c: embed_text(c, title_repeat=1),
    "title x3": lambda c: embed_text(c, title_repeat=3),
    "code kept whole": lambda c: embed_text(c, squash_code=False),
    **{f"cap {n}": functools.partial(embed_text, max_chars=n) for n in (300, 400, 600, 800, 1000, 2000)},
    "no cap": lambda c: embed_text(c, max_chars=0),
}


def score_recipes(model: Embedder, chunks: list[Chunk], questions: list[dict], bm25: list[list[int]]) -> None:
    print(f"embed text recipes, model {model.name}")
    print("| recipe | sec MRR | sec R@5 | sec R@10 | page MRR | fused MRR | fused R@10 |")
    print("|---|---|---|---|---|---|---|")
    for label, fn in RECIPES.items():
        dense = dense_ranking(model, chunks, questions, fn)
        d, f = metrics(dense, chunks, questions), metrics([fuse(b, r) for b, r in zip(bm25, dense, strict=True)], chunks, questions)
        print(row(label, d, f))


def main() -> None:
    parser = argparse.ArgumentParser(description="choose the shipped embedding model by measurement")
    parser.add_argument("--eval", type=Path, default=EVAL)
    parser.add_argument("--candidates", type=Path, help="folder of candidate model folders")
    parser.add_argument("--recipes", action="store_true", help="score embed_text variants instead")
    parser.add_argument("--model", default=None, help="model for --recipes (default: the shipped one)")
    args = parser.parse_args()

    chunks = load_sections(args.eval / "corpus")
    questions = load_questions(args.eval / "questions.jsonl")
    bm25 = bm25_ranking(chunks, questions)
    b = metrics(bm25, chunks, questions)
    print(f"{len(chunks)} sections, {len(questions)} questions; BM25 alone: sec MRR {b['mrr']:.3f}, "
          f"R@5 {b['r5']:.3f}, R@10 {b['r10']:.3f}, page MRR {b['page_mrr']:.3f}\n")
    if args.recipes:
        score_recipes(load_model(args.model), chunks, questions, bm25)
        return
    folders = sorted(p for p in args.candidates.iterdir() if p.is_dir()) if args.candidates else []
    folders = sorted(folders, key=lambda p: (int(p.name.split("-")[0]) if p.name[0].isdigit() else 0, p.name))
    if (DEFAULT_MODEL_DIR / "model.safetensors").exists():
        folders.append(DEFAULT_MODEL_DIR)
    score_models(folders, chunks, questions, bm25)


if __name__ == "__main__":
    main()
