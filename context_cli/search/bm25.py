"""BM25 scoring over our packages' own index, without FTS5 at query time.

FTS5's `bm25()` scores every row that matches any query term, which costs milliseconds per
package. Our packages also carry a compact inverted index (its format, writing and checks
are `package/bm25.py`), from which the same score is computed in numpy, reading only the
rows for the query's terms.

The score is FTS5's BM25 (k1 = 1.2, b = 0.75, column weights applied to each occurrence,
document length = all columns, IDF floored at 1e-6). BM25 over an OR of terms and phrases is a sum
of per-unit parts, so each term's part is precomputed once per process from its posting
list, and each phrase (a split identifier such as `max_tokens` or `Claude's`) gets its part
from FTS5 searched for that phrase alone, then cached. Scores match FTS5's to ~1e-15.
The user's words reach SQLite only as bound parameters (terms to look up, quoted phrases).
"""

from __future__ import annotations

import math
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..package.bm25 import decode_many, read_lengths, stemmer

if TYPE_CHECKING:
    import numpy as np

K1 = 1.2
B = 0.75
MAX_PHRASE_ROWS = 1_000_000


# --- searching -------------------------------------------------------------------------------

@lru_cache(maxsize=64)  # one query's units are the same for every package searched
def _unit_tokens(units: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType(stemmer().tokens(units))


@dataclass
class Posting:
    ids: np.ndarray  # sorted chunk ids (int64)
    tfs: np.ndarray | None  # (3, df) uint8: doc_title, section_title, content (None for a phrase)
    contrib: np.ndarray  # this term's BM25 contribution to each of those chunks
    _titled: frozenset[int] | None = field(default=None, repr=False, compare=False)

    @property
    def df(self) -> int:
        return len(self.ids)

    @property
    def titled(self) -> frozenset[int]:
        """The chunks whose section title holds this term (worked out once)."""
        if self._titled is None:
            self._titled = frozenset(self.ids[self.tfs[1] > 0].tolist() if self.tfs is not None else ())
        return self._titled


class Bm25Index:
    """One package's BM25 tables, loaded term by term and cached (bounded) per process."""

    MAX_CACHED_POSTINGS = 2_000_000  # ids held across cached terms and phrases

    def __init__(self, db: sqlite3.Connection, n: int, doc_len: np.ndarray, weights: Sequence[float]) -> None:
        import numpy as np

        self.db = db
        self.n = n
        self.weights = np.asarray(weights, dtype=np.float64)
        total = float(doc_len.sum())
        avgdl = total / n if n else 1.0
        # Per chunk id (index 0 unused): the length part of BM25's denominator.
        self._k = np.concatenate(([K1], K1 * (1 - B + B * doc_len / (avgdl or 1.0))))
        self._cache: OrderedDict[object, Posting | None] = OrderedDict()
        self._held = 0
        self._last: _Query | None = None

    @classmethod
    def load(cls, db: sqlite3.Connection, weights: Sequence[float]) -> Bm25Index:
        lengths = read_lengths(db)
        return cls(db, lengths.shape[1], lengths.sum(axis=0), weights)

    def idf(self, df: int) -> float:
        v = math.log((self.n - df + 0.5) / (df + 0.5))
        return v if v > 0 else 1e-6

    def _decode(self, rows: Sequence[tuple[object, object]]) -> list[Posting]:
        """`bm25_terms` rows (df, postings) -> their postings, decoded and scored together.

        (Each posting's arrays are views of the batch's: a batch is freed with its last term.)"""
        import numpy as np

        ids, tfs, sizes = decode_many(rows, self.n)
        if not sizes:
            return []
        idf: float | np.ndarray = (self.idf(sizes[0]) if len(sizes) == 1
                                   else np.repeat(np.array([self.idf(n) for n in sizes]), sizes))
        f = self.weights @ tfs.astype(np.float64)  # whole numbers: exact
        contrib = idf * f * (K1 + 1) / (f + self._k[ids])
        out, start = [], 0
        for n in sizes:
            end = start + n
            out.append(Posting(ids=ids[start:end], tfs=tfs[:, start:end], contrib=contrib[start:end]))
            start = end
        return out

    def _remember(self, key: object, value: Posting | None) -> None:
        self._cache[key] = value
        self._held += value.df if value is not None else 1
        while self._held > self.MAX_CACHED_POSTINGS and len(self._cache) > 1:
            _, old = self._cache.popitem(last=False)
            self._held -= old.df if old is not None else 1

    def postings(self, terms: Sequence[str]) -> dict[str, Posting | None]:
        """Posting lists of FTS5 terms (None: not in the package), one indexed query for all."""
        out: dict[str, Posting | None] = {}
        todo = []
        for t in dict.fromkeys(terms):
            if t in self._cache:
                self._cache.move_to_end(t)
                out[t] = self._cache[t]
            else:
                todo.append(t)
        if todo:
            marks = ",".join("?" * len(todo))
            found = {term: (df, blob) for term, df, blob in self.db.execute(
                f"SELECT term, df, postings FROM bm25_terms WHERE term IN ({marks})", todo)}
            hits = [t for t in todo if t in found]
            decoded = dict(zip(hits, self._decode([found[t] for t in hits]), strict=True))
            for t in todo:
                p = decoded.get(t)
                self._remember(t, p)
                out[t] = p
        return out

    def phrase(self, text: str, tokens: tuple[str, ...]) -> Posting | None:
        """A phrase's rows and BM25 contributions, from FTS5 itself (exact), cached.

        BM25 over an OR of phrases is a sum of per-phrase parts, so the part FTS5 gives a
        phrase searched alone is exactly its part in the full query. Skipped (no rows)
        when one of its words is not in the package at all.
        """
        import numpy as np

        key = ("phrase", tokens)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        parts = self.postings(list(tokens))
        result = None
        if tokens and all(p is not None for p in parts.values()):
            w = ", ".join(repr(float(x)) for x in self.weights)
            q = '"' + text.replace('"', '""') + '"'
            found = self.db.execute(
                f"SELECT rowid, bm25(chunks_fts, {w}) FROM chunks_fts WHERE chunks_fts MATCH ? "
                f"ORDER BY rowid LIMIT {MAX_PHRASE_ROWS}", (q,)).fetchall()
            if found:
                ids = np.fromiter((r[0] for r in found), dtype=np.int64, count=len(found))
                contrib = -np.fromiter((r[1] for r in found), dtype=np.float64, count=len(found))
                ok = (ids >= 1) & (ids <= self.n)
                result = Posting(ids=ids[ok], tfs=None, contrib=contrib[ok])
        self._remember(key, result)
        return result

    def units(self, words: Sequence[str], phrases: Sequence[str]) -> list[Posting | None]:
        """Postings of each query unit: quoted words (a word FTS5 splits is a phrase) and phrases."""
        toks = _unit_tokens((*words, *phrases))
        singles = [toks[w][0] for w in words if len(toks[w]) == 1]
        plist = self.postings(singles) if singles else {}
        out: list[Posting | None] = []
        for w in list(words) + list(phrases):
            t = toks[w]
            if not t:
                out.append(None)
            elif len(t) == 1 and w in words:
                out.append(plist[t[0]])
            else:
                out.append(self.phrase(w, t))
        return out

    def _units_cached(self, words: Sequence[str], phrases: Sequence[str]) -> _Query:
        # The engine asks for the ranking and then the term statistics of the same query.
        key = (tuple(words), tuple(phrases))
        last = self._last
        if last is not None and last.key == key:
            return last
        self._last = _Query(key, self.units(words, phrases))
        return self._last

    def search(self, words: Sequence[str], phrases: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """(chunk id, BM25; higher is better), best first, ties by id: FTS5's ranking."""
        import numpy as np

        q = self._units_cached(words, phrases)
        found = [u for u in q.units if u is not None]
        if not found:
            return []
        if len(found) == 1:
            ids, scores = found[0].ids, found[0].contrib
            if len(ids) > limit:  # those at least as good as the `limit`-th best (ties kept)
                keep = scores >= np.partition(scores, len(scores) - limit)[len(scores) - limit]
                ids, scores = ids[keep], scores[keep]
        else:
            acc = np.bincount(np.concatenate([u.ids for u in found]),
                              weights=np.concatenate([u.contrib for u in found]), minlength=self.n + 1)
            kth = np.partition(acc, len(acc) - limit)[len(acc) - limit] if len(acc) > limit else 0.0
            ids = np.flatnonzero(acc >= kth) if kth > 0 else np.flatnonzero(acc)  # (fewer matches than `limit`)
            scores = acc[ids]
        # Best first; among equal scores the lowest ids, which also settles ties at the cut.
        order = np.lexsort((ids, -scores))[:limit]
        return list(zip(ids[order].tolist(), scores[order].tolist(), strict=True))

    def in_titles(self, tokens: Iterable[str], cids: Iterable[int]) -> list[int]:
        """Those of `cids` whose section title holds every one of these index tokens: the
        only sections whose own heading can hold them all (`pages.heading_matcher`)."""
        cache = self._cache
        if all(t in cache for t in tokens):  # (this search looked them up a moment ago: marked used then)
            postings = [cache[t] for t in tokens]
        else:
            postings = list(self.postings(list(tokens)).values())
        found = [p.titled for p in postings if p is not None]
        if not found or len(found) < len(postings):
            return []
        found.sort(key=len)  # the rarest in titles first: most sections fail there
        kept = list(cids)
        for titled in found:
            kept = [cid for cid in kept if cid in titled]
            if not kept:
                break
        return kept

    def frequencies(self, words: Sequence[str]) -> list[int]:
        """Each query word's document frequency (0: not in the package)."""
        units = self._word_units(words)
        return [u.df if u is not None else 0 for u in units]

    def presence(self, words: Sequence[str], weights: Sequence[float]) -> Callable[[np.ndarray], np.ndarray]:
        """Candidates -> the sum of the weights of the words each contains, added in the
        words' order (so the same sum, bit for bit, whatever the backend). Every section's
        sum is taken now, in one pass over the words' postings, and looked up when asked."""
        import numpy as np

        units = self._word_units(words)
        found = [(u, w) for u, w in zip(units, weights, strict=True) if u is not None]
        if not found:
            return lambda candidates: np.zeros(len(candidates))
        acc = np.bincount(np.concatenate([u.ids for u, _ in found]),
                          weights=np.repeat([w for _, w in found], [u.df for u, _ in found]), minlength=self.n + 1)
        return acc.__getitem__

    def _word_units(self, words: Sequence[str]) -> list[Posting | None]:
        last = self._last
        if last is not None and last.key[0] == tuple(words):
            return last.units[:len(words)]
        return self.units(words, ())


@dataclass(slots=True)
class _Query:
    """The last query's units (the engine ranks, then asks for its term statistics)."""

    key: tuple[tuple[str, ...], tuple[str, ...]]
    units: list[Posting | None]
