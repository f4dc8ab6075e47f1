"""BM25 over a package, and the term statistics the verdict needs.

Our packages carry a compact BM25 index (`bm25.py`) scored in numpy; any other package
(Neuledge Context's, older ours, or one whose index fails a check) is ranked by FTS5's
`bm25()`. Both give the same ranking: the index reproduces FTS5's terms and formula.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .fts import build_match, phrases, terms

if TYPE_CHECKING:
    from .bm25 import Bm25Index

# bm25() column weights: doc_title, section_title, content (tuned with bench/retrieval.py).
WEIGHTS = (5.0, 10.0, 1.0)


def search_sql(limit: int) -> str:
    """SQL text for one BM25 search; the MATCH argument is bound, never interpolated."""
    w = ", ".join(str(x) for x in WEIGHTS)
    return (f"SELECT rowid, bm25(chunks_fts, {w}) AS score FROM chunks_fts "
            f"WHERE chunks_fts MATCH ? ORDER BY score LIMIT {int(limit)}")


def lexical(db: sqlite3.Connection, query: str, limit: int = 50,
            index: Bm25Index | None = None) -> list[tuple[int, float]]:
    """(chunk id, BM25 score; higher is better), best first: from `index` when given,
    else from FTS5. The query units are the same either way (`fts.build_match`)."""
    if index is not None:
        ts = terms(query)
        if not ts:
            return []
        return index.search(ts, [" ".join(p) for p in phrases(query)], limit)
    match = build_match(query)
    if match is None:
        return []
    rows = db.execute(search_sql(limit), (match,)).fetchall()
    return [(int(rowid), -float(score)) for rowid, score in rows]


@dataclass
class TermStats:
    """How rare each query term is in a package, and which candidates contain it."""

    idf: dict[str, float]
    present: dict[int, set[str]]  # chunk id -> query terms it contains
    missing: list[str]  # query terms found nowhere in the package

    def coverage(self, chunk_id: int) -> float:
        """Share of the query's IDF mass that the chunk contains (0..1)."""
        total = sum(self.idf.values())
        if total <= 0:
            return 0.0
        return sum(self.idf[t] for t in self.present.get(chunk_id, ())) / total


class Postings:
    """Which chunks contain each term, cached per package: a warm server answers the
    verdict's questions from memory instead of re-running one FTS query per term."""

    MAX_TERMS = 4096

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.n = max(1, int(db.execute("SELECT count(*) FROM chunks").fetchone()[0]))
        self._cache: dict[str, frozenset[int]] = {}

    def get(self, term: str) -> frozenset[int]:
        hit = self._cache.get(term)
        if hit is None:
            q = '"' + term.replace('"', '""') + '"'
            hit = frozenset(r[0] for r in self.db.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (q,)))
            if len(self._cache) >= self.MAX_TERMS:
                self._cache.clear()
            self._cache[term] = hit
        return hit

    def stats(self, words: list[str], candidates: list[int]) -> list[tuple[str, int, frozenset[int]]]:
        """For each query word: its document frequency and the chunks containing it
        (the same shape as `Bm25Index.stats`)."""
        return [(w, len(ids), ids) for w in words for ids in (self.get(w),)]


def term_stats(postings: Postings | Bm25Index, query: str, candidates: list[int]) -> TermStats:
    idf: dict[str, float] = {}
    present: dict[int, set[str]] = {}
    missing = []
    n = postings.n
    for t, df, ids in postings.stats(terms(query), candidates):
        # Terms absent from the corpus weigh like the rarest possible term: the query asks
        # for something this package does not have.
        idf[t] = math.log(1 + (n - df + 0.5) / (df + 0.5))
        if df == 0:
            missing.append(t)
            continue
        for cid in candidates:
            if cid in ids:
                present.setdefault(cid, set()).add(t)
    return TermStats(idf=idf, present=present, missing=missing)
