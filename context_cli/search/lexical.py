"""BM25 over a package's FTS5 index, and the term statistics the verdict needs."""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass

from .fts import build_match, terms

# bm25() column weights: doc_title, section_title, content (tuned with bench/retrieval.py).
WEIGHTS = (5.0, 10.0, 1.0)


def search_sql(limit: int) -> str:
    """SQL text for one BM25 search; the MATCH argument is bound, never interpolated."""
    w = ", ".join(str(x) for x in WEIGHTS)
    return (f"SELECT rowid, bm25(chunks_fts, {w}) AS score FROM chunks_fts "
            f"WHERE chunks_fts MATCH ? ORDER BY score LIMIT {int(limit)}")


def lexical(db: sqlite3.Connection, query: str, limit: int = 50) -> list[tuple[int, float]]:
    """(chunk id, BM25 score; higher is better), best first."""
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


def term_stats(db: sqlite3.Connection, query: str, candidates: list[int]) -> TermStats:
    ts = terms(query)
    n = max(1, int(db.execute("SELECT count(*) FROM chunks").fetchone()[0]))
    idf: dict[str, float] = {}
    present: dict[int, set[str]] = {}
    missing = []
    ids = ",".join(str(int(i)) for i in candidates) or "NULL"
    for t in ts:
        q = '"' + t.replace('"', '""') + '"'
        df = int(db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (q,)).fetchone()[0])
        # Terms absent from the corpus weigh like the rarest possible term: the query asks
        # for something this package does not have.
        idf[t] = math.log(1 + (n - df + 0.5) / (df + 0.5))
        if df == 0:
            missing.append(t)
            continue
        for (rowid,) in db.execute(
            f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN ({ids})", (q,)
        ):
            present.setdefault(int(rowid), set()).add(t)
    return TermStats(idf=idf, present=present, missing=missing)
