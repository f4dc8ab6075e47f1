"""A package's BM25 hits for a query (`LexicalHits`), and the term statistics the verdict needs.

Our packages carry a compact BM25 index (`bm25.py`) scored in numpy: all of a search's
packages that have one are scored together (`scoring.score_lexical`). Any other package
(Neuledge Context's, older ours, or one whose index fails a check) is ranked by FTS5's
`bm25()` (`lexical`, `Postings`). Both give the same ranking: the index reproduces FTS5's
terms and formula.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from .bm25 import Bm25Index, PackageScores
    from .query import Query

# bm25() column weights: doc_title, section_title, content (tuned with bench/retrieval.py).
WEIGHTS = (5.0, 10.0, 1.0)


class LexicalHits:
    """One package's BM25 answer to a query: its best sections (`ids`, `scores`, best first)
    and, known before the candidates are, each query term's IDF in the package, the terms it
    lacks, and every section's matched IDF (the summed IDF of the terms it holds); each term's
    section count (`df`) and the package's (`sections`), which the package prior weighs."""

    __slots__ = ("ids", "scores", "idf", "missing", "matched_idf", "scored", "df", "sections")

    def __init__(self, ids: np.ndarray, scores: np.ndarray, idf: dict[str, float], missing: list[str],
                 matched_idf: Callable[[np.ndarray], np.ndarray], scored: tuple[PackageScores, int] | None,
                 df: Mapping[str, int], sections: int) -> None:
        self.ids, self.scores, self.idf, self.missing = ids, scores, idf, missing  # int64 chunk ids, float64
        self.matched_idf = matched_idf  # chunk ids -> their matched IDF
        self.scored = scored  # where `matched_idf` comes from: row k of packages scored together
        self.df, self.sections = df, sections  # query term (and phrase, ours) -> sections holding it

    def coverage(self, ids: np.ndarray) -> np.ndarray:
        """Each section's share of the query's IDF mass (0..1)."""
        import numpy as np

        total = sum(self.idf.values())
        if total <= 0:
            return np.zeros(len(ids))
        return self.matched_idf(ids) / total


def search_sql(limit: int) -> str:
    """SQL text for one BM25 search; the MATCH argument is bound, never interpolated."""
    w = ", ".join(str(x) for x in WEIGHTS)
    return (f"SELECT rowid, bm25(chunks_fts, {w}) AS score FROM chunks_fts "
            f"WHERE chunks_fts MATCH ? ORDER BY score LIMIT {int(limit)}")


def lexical(db: sqlite3.Connection, query: Query, limit: int = 50,
            index: Bm25Index | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(chunk ids, BM25 scores; higher is better), best first: from `index` when given,
    else from FTS5. The query units are the same either way (`Query.fts_match`)."""
    import numpy as np

    if index is not None:
        if query.terms:
            return index.search(query, limit)
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    match = query.fts_match()
    rows = db.execute(search_sql(limit), (match,)).fetchall() if match is not None and limit > 0 else []
    return (np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows)),
            np.fromiter((-float(r[1]) for r in rows), dtype=np.float64, count=len(rows)))


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

    def frequencies(self, query: Query) -> list[int]:
        """Each term's document frequency (the same shape as `Bm25Index.frequencies`)."""
        return [len(self.get(w)) for w in query.terms]

    def matched_idf(self, query: Query, weights: Sequence[float]) -> Callable[[np.ndarray], np.ndarray]:
        """Candidates -> the weights of the terms each contains, summed in the terms' order
        (the same sums as `Bm25Index.matched_idf`): the terms' sections are read now."""
        import numpy as np

        held = [(have, weight) for have, weight in zip(map(self.get, query.terms), weights, strict=True) if have]

        def covered(candidates: np.ndarray) -> np.ndarray:
            acc = np.zeros(len(candidates))
            ids = candidates.tolist()
            for have, weight in held:
                acc += np.fromiter((c in have for c in ids), dtype=bool, count=len(ids)) * weight
            return acc

        return covered


def term_statistics(postings: Postings | Bm25Index, query: Query, top: tuple[np.ndarray, np.ndarray]) -> LexicalHits:
    """The package's hits `top`, with each term's IDF in it, its missing terms and every
    section's matched IDF, from `postings`."""
    dfs = postings.frequencies(query)
    idf, missing = term_weights(postings.n, query.terms, dfs)
    return LexicalHits(top[0], top[1], idf, missing, postings.matched_idf(query, list(idf.values())), None,
                       dict(zip(query.terms, dfs, strict=True)), postings.n)


def term_weights(n: int, words: Sequence[str], dfs: Sequence[int]) -> tuple[dict[str, float], list[str]]:
    """Each query word's weight in a package of `n` sections where the words are in `dfs` of
    them, and the words it lacks. Terms absent from the corpus weigh like the rarest possible
    term: the query asks for something this package does not have."""
    idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in zip(words, dfs, strict=True)}
    return idf, [t for t, df in zip(words, dfs, strict=True) if df == 0]
