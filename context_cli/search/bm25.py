"""BM25 scoring over our packages' own index, without FTS5 at query time.

FTS5's `bm25()` scores every row that matches any query term, which costs milliseconds per
package. Our packages also carry a compact inverted index (its format, writing and checks
are `package/bm25.py`), from which the same score is computed in numpy, reading only the
rows for the query's terms.

The score is FTS5's BM25 (k1 = 1.2, b = 0.75, column weights applied to each occurrence,
document length = all columns, IDF floored at 1e-6). BM25 over an OR of terms and phrases is a sum
of per-unit parts, so each term's part is precomputed once per process from its posting
list, and each phrase (a split identifier such as `max_tokens` or `Claude's`) gets its part
from the package's stored phrase postings (`package/phrases.py`: its own split words of common
words) or else from FTS5 searched for that phrase alone, then cached. A warm package keeps
every term's and stored phrase's postings decoded and scored (`preload`).
Scores match FTS5's to ~1e-15.
The user's words reach SQLite only as bound parameters (terms to look up, quoted phrases).
"""

from __future__ import annotations

import functools
import math
import sqlite3
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING

from ..package.bm25 import MAX_ID_FOR_U16, decode_many, read_lengths

if TYPE_CHECKING:
    import numpy as np

    from .query import Query

K1 = 1.2
B = 0.75
MAX_PHRASE_ROWS = 1_000_000
# A warm package keeps its postings in memory up to this many (14 bytes each with the terms'
# index, Django's; keeping them peaks at 56 bytes each), and up to this many terms.
MAX_KEPT_POSTINGS = 1_000_000
MAX_KEPT_TERMS = 100_000
_DF = attrgetter("df")


# --- searching -------------------------------------------------------------------------------

def bm25_weight(idf: float | np.ndarray, f: np.ndarray, k: np.ndarray) -> np.ndarray:
    """A term's BM25 part in each of its sections: idf x f x (k1 + 1) / (f + k), where f is
    its weighted count in the section (column weights applied to each occurrence) and k is
    k1 x (1 - b + b x the section's length / the average length) (`Bm25Index._k`)."""
    return idf * f * (K1 + 1) / (f + k)  # type: ignore[no-any-return]


def phrase_weight(idf: np.ndarray, f: np.ndarray, k: np.ndarray) -> np.ndarray:
    """A phrase's part: `bm25_weight`, with its operations in the order FTS5's `bm25()` does
    them for a phrase, idf x (f x (k1 + 1) / (f + k)), so that the bits are FTS5's."""
    return idf * ((f * (K1 + 1)) / (f + k))  # type: ignore[no-any-return]


@dataclass(slots=True, eq=False, repr=False)
class Posting:
    ids: np.ndarray  # sorted chunk ids (int64; uint16 or uint32 where preloaded: `DecodedPostings`)
    contrib: np.ndarray  # this term's BM25 contribution to each of those chunks
    df: int  # how many (len(ids): a field, as a search reads it a few hundred times)
    in_title: np.ndarray | None = None  # bool per chunk: its section title holds the term (None for a phrase)
    _titled: frozenset[int] | None = None

    @property
    def titled(self) -> frozenset[int]:
        """The chunks whose section title holds this term (worked out once)."""
        if self._titled is None:
            self._titled = frozenset(self.ids[self.in_title].tolist() if self.in_title is not None else ())
        return self._titled


class Bm25Index:
    """One package's BM25 tables, loaded term by term and cached (bounded) per process."""

    MAX_CACHED_POSTINGS = 2_000_000  # ids held across cached terms and phrases

    def __init__(self, db: sqlite3.Connection, n: int, doc_len: np.ndarray, weights: Sequence[float],
                 phrases: bool = False) -> None:
        import numpy as np

        self.db = db
        self.n = n
        self.has_phrases = phrases  # the package stores its split words' phrase postings
        self.weights = np.asarray(weights, dtype=np.float64)
        total = float(doc_len.sum())
        avgdl = total / n if n else 1.0
        # Per chunk id (index 0 unused): the length part of BM25's denominator.
        self._k = np.concatenate(([K1], K1 * (1 - B + B * doc_len / (avgdl or 1.0))))
        self._cache: OrderedDict[object, Posting | None] = OrderedDict()
        self._held = 0
        self._preloaded: DecodedPostings | None = None  # every term's postings, inflated once warm (`preload`)
        self._preloaded_phrases: DecodedPostings | None = None  # and every stored phrase's

    @classmethod
    def load(cls, db: sqlite3.Connection, weights: Sequence[float], phrases: bool = False) -> Bm25Index:
        lengths = read_lengths(db)
        return cls(db, lengths.shape[1], lengths.sum(axis=0), weights, phrases)

    def idf(self, df: int) -> float:
        v = math.log((self.n - df + 0.5) / (df + 0.5))
        return v if v > 0 else 1e-6

    def _decode(self, rows: Sequence[tuple[object, object]]) -> list[Posting]:
        """`bm25_terms` rows (df, postings) -> their postings, decoded and scored together.

        (Each posting's arrays are views of the batch's: a batch is freed with its last term.)"""
        ids, tfs, sizes = decode_many(rows, self.n)
        if not sizes:
            return []
        contrib, in_title = self._parts(ids, tfs, sizes)
        out, start = [], 0
        for n in sizes:
            end = start + n
            out.append(Posting(ids=ids[start:end], contrib=contrib[start:end], df=n, in_title=in_title[start:end]))
            start = end
        return out

    def _parts(self, ids: np.ndarray, tfs: np.ndarray, sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Terms' postings one after another (chunk ids, (3, total) tfs, each term's count) ->
        each posting's BM25 part, and whether its section title holds the term."""
        import numpy as np

        idf: float | np.ndarray = (self.idf(sizes[0]) if len(sizes) == 1
                                   else np.array([self.idf(n) for n in sizes]).repeat(sizes))
        f = self.weights @ tfs.astype(np.float64)  # whole numbers: exact
        return bm25_weight(idf, f, self._k[ids]), tfs[1] > 0

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
        cache = self._cache
        for t in dict.fromkeys(terms):
            p = cache.get(t, cache)  # (`cache` itself: not cached; None: not in the package)
            if p is cache:
                todo.append(t)
            else:
                cache.move_to_end(t)
                out[t] = p  # type: ignore[assignment]
        if todo:
            kept = self._preloaded
            if kept is not None:
                decoded = {t: kept.posting(j) for t in todo if (j := kept.at.get(t)) is not None}
            else:
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

    def preload(self) -> None:
        """Read, inflate and score every term's postings now, and keep them, and the stored
        phrases' too (a warm package's: `PackageSearcher.warm`): a question's new words are
        then slices of memory, not rows read, inflated and scored (a sixth of a new
        question's cost). A 2,000-section package's 5,490 terms and 192,000 postings take
        2.6 MB (11 bytes a posting, and the terms' index) and 25 ms, once; its 1,076 phrases
        0.4 MB more. A package of more than MAX_KEPT_POSTINGS or MAX_KEPT_TERMS keeps none,
        and its phrases are kept only within what its terms leave of those. A damaged row
        raises here (`MalformedIndex`), as it would when its word is searched: a term's keeps
        nothing, a phrase's keeps the terms alone.
        (Kept postings are cached as read ones are: at most MAX_KEPT_POSTINGS, well within
        MAX_CACHED_POSTINGS, so they never push a phrase FTS5 found out.)"""
        found = self._all_rows("SELECT term, df, postings FROM bm25_terms", MAX_KEPT_POSTINGS, MAX_KEPT_TERMS)
        if found is None:
            return
        terms, ids, tfs, sizes = found
        if not sizes:
            return
        wide = self.n > MAX_ID_FOR_U16  # (as the package stores them)
        self._preloaded = DecodedPostings.of(terms, ids, sizes, *self._parts(ids, tfs, sizes), wide=wide)
        if self.has_phrases:
            held = len(ids)
            found = self._all_rows("SELECT phrase, df, postings FROM bm25_phrases", MAX_KEPT_POSTINGS - held,
                                   MAX_KEPT_TERMS - len(terms))
            if found is not None:
                phrases, ids, tfs, sizes = found
                self._preloaded_phrases = DecodedPostings.of(phrases, ids, sizes, self._phrase_parts(ids, tfs, sizes), None,
                                                             wide=wide)

    def _all_rows(self, sql: str, most: int, rows: int) -> tuple[list[str], np.ndarray, np.ndarray, list[int]] | None:
        """Every row of an index table (key, df, postings), decoded: the keys, and the postings
        one after another (`decode_many`); None past `most` postings or `rows` rows."""
        # (Three lists, not a list of rows: 5,490 tuples alive through a garbage collection reach
        # its oldest generation, and a later search then pays for a full collection, 11 ms.)
        keys: list[str] = []
        dfs: list[object] = []
        blobs: list[object] = []
        total = 0
        for key, df, blob in self.db.execute(sql):
            total += abs(df) if isinstance(df, int) else 0  # (a bad df fails in `decode_many`, after this cap)
            if total > most or len(keys) >= rows:
                return None
            keys.append(key)
            dfs.append(df)
            blobs.append(blob)
        return (keys, *decode_many(zip(dfs, blobs, strict=True), self.n))

    def phrase(self, text: str, tokens: tuple[str, ...]) -> Posting | None:
        """A phrase's rows and BM25 contributions, cached: from the package's phrase postings
        when it stores this phrase, else from FTS5 itself. Both are exact.

        BM25 over an OR of phrases is a sum of per-phrase parts, so the part FTS5 gives a
        phrase searched alone is exactly its part in the full query. Skipped (no rows)
        when one of its words is not in the package at all.
        """
        import numpy as np

        key = ("phrase", tokens)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        stored = self._stored_phrase(tokens) if self.has_phrases else None
        if stored is not None:
            self._remember(key, stored)
            return stored
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
                ids = ids[ok]
                result = Posting(ids=ids, contrib=contrib[ok], df=len(ids))
        self._remember(key, result)
        return result

    def _stored_phrase(self, tokens: tuple[str, ...]) -> Posting | None:
        """The phrase's part from `bm25_phrases` (or preloaded from it: `preload`); None when
        the package does not store the phrase."""
        phrase, kept = " ".join(tokens), self._preloaded_phrases
        if kept is not None:
            j = kept.at.get(phrase)
            return kept.posting(j) if j is not None else None
        row = self.db.execute("SELECT df, postings FROM bm25_phrases WHERE phrase = ?", (phrase,)).fetchone()
        if row is None:
            return None
        ids, tfs, sizes = decode_many([row], self.n)
        return Posting(ids=ids, contrib=self._phrase_parts(ids, tfs, sizes), df=len(ids))

    def _phrase_parts(self, ids: np.ndarray, tfs: np.ndarray, sizes: list[int]) -> np.ndarray:
        """Phrases' postings one after another (as `_parts` has terms') -> each posting's BM25
        part, computed in the order FTS5's `bm25()` computes a phrase's (so the same bits)."""
        import numpy as np

        idf = np.array([self.idf(n) for n in sizes]).repeat(sizes)
        f = self.weights @ tfs.astype(np.float64)
        return phrase_weight(idf, f, self._k[ids])

    def units(self, query: Query, with_phrases: bool = True) -> list[Posting | None]:
        """Postings of each query unit: its terms (a term the index splits is a phrase), then
        its phrases and its joined words (none when not `with_phrases`)."""
        toks = query.unit_tokens
        joined = [toks[w][0] for w in query.joined if len(toks[w]) == 1] if with_phrases else []
        singles = [toks[w][0] for w in query.terms if len(toks[w]) == 1] + joined
        plist = self.postings(singles) if singles else {}
        out: list[Posting | None] = []
        for w in query.terms:  # (a word of several tokens is a phrase)
            t = toks[w]
            out.append(plist[t[0]] if len(t) == 1 else self.phrase(w, t) if t else None)
        if with_phrases:
            for p in query.phrases:
                text = " ".join(p)
                out.append(self.phrase(text, toks[text]) if toks[text] else None)
            out += [plist[t] for t in joined]
        return out

    def search(self, query: Query, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, BM25 scores; higher is better), best first, ties by id: FTS5's ranking."""
        found = score_packages([(self.n, self.units(query), ())], limit)
        return found.cid, found.score

    def in_titles(self, tokens: Iterable[str], cids: Iterable[int]) -> list[int]:
        """Those of `cids` whose section title holds every one of these index tokens: the
        only sections whose own heading can hold them all (`evidence.heading_matcher`)."""
        return self._in_titles(list(self.postings(list(tokens)).values()), cids)

    def in_titles_known(self, tokens: Iterable[str], cids: Iterable[int]) -> list[int] | None:
        """`in_titles` from the cached postings alone; None when one of the tokens is not cached."""
        cache = self._cache
        postings = []
        for t in tokens:
            p = cache.get(t, cache)  # (`cache` itself: not cached; None: not in the package)
            if p is cache:
                return None
            postings.append(p)
        return self._in_titles(postings, cids)  # type: ignore[arg-type]

    @staticmethod
    def _in_titles(postings: list[Posting | None], cids: Iterable[int]) -> list[int]:
        if not postings or any(p is None for p in postings):
            return []
        left = list(cids)
        # The rarest first: most sections fail there, and later terms' title sets (a common
        # word's are thousands of ids) are seldom needed at all.
        for p in sorted(postings, key=_DF):
            titled = p.titled  # type: ignore[union-attr]
            left = [cid for cid in left if cid in titled]
            if not left:
                break
        return left

    def frequencies(self, query: Query) -> list[int]:
        """Each query term's document frequency (0: not in the package)."""
        return [u.df if u is not None else 0 for u in self.units(query, with_phrases=False)]

    def matched_idf(self, query: Query, weights: Sequence[float]) -> Callable[[np.ndarray], np.ndarray]:
        """Candidates -> the sum of the weights of the terms each contains, added in the
        terms' order (so the same sum, bit for bit, whatever the backend). Every section's
        sum is taken now, in one pass over the terms' postings, and looked up when asked."""
        return score_packages([(self.n, self.units(query, with_phrases=False), weights)], 0).matched_idf_of(0)


@dataclass(eq=False, repr=False)
class DecodedPostings:
    """A warm package's postings, inflated and scored (`Bm25Index.preload`): each term's (or
    stored phrase's) are a span of three arrays."""

    at: dict[str, int]  # term -> its place j: its postings are [bounds[j]:bounds[j + 1]] of the arrays
    bounds: array[int]  # (a fifth of a list's memory; its items are ints, as slices want)
    ids: np.ndarray  # uint16 (uint32 past 65,535 chunks): every term's sorted chunk ids, term after term
    contrib: np.ndarray  # float64: their BM25 parts
    in_title: np.ndarray | None  # bool (None for phrases)

    @classmethod
    def of(cls, keys: list[str], ids: np.ndarray, sizes: list[int], contrib: np.ndarray, in_title: np.ndarray | None,
           wide: bool) -> DecodedPostings:
        import numpy as np

        return cls(at={key: j for j, key in enumerate(keys)}, bounds=array("q", [0, *np.array(sizes).cumsum().tolist()]),
                   ids=ids.astype(np.uint32 if wide else np.uint16), contrib=contrib, in_title=in_title)

    def posting(self, j: int) -> Posting:
        a, b = self.bounds[j], self.bounds[j + 1]
        in_title = self.in_title
        return Posting(ids=self.ids[a:b], contrib=self.contrib[a:b], df=b - a,
                       in_title=in_title[a:b] if in_title is not None else None)


class PackageScores:
    """BM25 over several packages' indexes at once: each one's best, best first (`row` says
    whose), and every section's matched IDF (`matched_idf_of`)."""

    __slots__ = ("row", "cid", "score", "matched")

    def __init__(self, row: np.ndarray, cid: np.ndarray, score: np.ndarray, matched: np.ndarray) -> None:
        self.row = row  # which of the packages
        self.cid, self.score = cid, score
        self.matched = matched  # (packages, width): per package and chunk id, the summed weights of its terms

    def matched_idf_of(self, k: int) -> Callable[[np.ndarray], np.ndarray]:
        """Package k's candidates -> their matched IDF (0 for an id the index lacks)."""
        return functools.partial(self.matched_idf_at, k)

    def matched_idf_at(self, rows: np.ndarray | int, candidates: np.ndarray) -> np.ndarray:
        """Candidates of several packages (each one's row, or one row for all) -> their
        matched IDF (0 for an id the index lacks)."""
        import numpy as np

        width = self.matched.shape[1]
        inside = (candidates > 0) & (candidates < width)
        return self.matched[rows, np.where(inside, candidates, 0)]  # type: ignore[no-any-return]  # (column 0 is 0)


def score_packages(parts: Sequence[tuple[int, Sequence[Posting | None], Sequence[float]]], limit: int
                   ) -> PackageScores:
    """BM25 of one query in several packages at once: each part is a package's chunk count, its
    query units' postings (None: not in the package) and the weight each unit adds to a
    section's matched IDF (missing weights: 0).

    The packages' sums are the rows of one array as wide as the largest package, made by one
    `bincount` over every package's chunk ids (package k's shifted by k rows), in the packages'
    and then their units' order: each section's sum adds its package's units in their order,
    as a package searched alone adds them. One partition then finds every row's `limit`-th
    best. Each package's best are those at least as good as its `limit`-th (ties kept), best
    first, among equal scores the lowest ids, cut at `limit`: FTS5's ranking.
    """
    import numpy as np

    width = max((n for n, _, _ in parts), default=0) + 1
    found: list[Posting] = []
    weights: list[float] = []
    ends: list[int] = []  # where each package's units end in `found`
    for _, units, unit_weights in parts:
        words, phrases = units[:len(unit_weights)], [u for u in units[len(unit_weights):] if u is not None]
        found += [u for u in words if u is not None]
        weights += [w for u, w in zip(words, unit_weights, strict=False) if u is not None]  # (fewer units: weights to spare)
        found += phrases
        weights += [0.0] * len(phrases)
        ends.append(len(found))
    cells = len(parts) * width
    grid: np.ndarray
    matched: np.ndarray
    if found:
        lengths = [len(u.ids) for u in found]
        ids = np.concatenate([u.ids for u in found], dtype=np.intp)
        if len(parts) > 1:
            ids += (np.arange(len(parts)) * width).repeat([sum(lengths[a:b]) for a, b in zip([0, *ends[:-1]], ends, strict=True)])
        grid = np.bincount(ids, weights=np.concatenate([u.contrib for u in found]), minlength=cells)
        matched = np.bincount(ids, weights=np.array(weights).repeat(lengths), minlength=cells)
    else:
        grid = matched = np.zeros(cells)
    grid, matched = grid.reshape(len(parts), width), matched.reshape(len(parts), width)
    if limit <= 0:  # (with no score above 0, the steps below find none)
        none = np.zeros(0, dtype=np.int64)
        return PackageScores(none, none, np.zeros(0), matched)
    positive = grid > 0.0
    kth = _kth_best(grid, positive, limit)
    if len(parts) == 1:  # (one row: no rows to sort the best by)
        acc = grid[0]
        cid = (positive[0] & (acc >= kth[0])).nonzero()[0]
        score = acc[cid]
        best = (-score).argsort(kind="stable")[:limit]  # (ids came ascending: ties keep the lowest first)
        return PackageScores(np.zeros(len(best), dtype=np.int64), cid[best], score[best], matched)
    # (A flat nonzero, split into row and id, is the 2-D one's result at a third of its cost.)
    row, cid = np.divmod((positive & (grid >= kth[:, None])).ravel().nonzero()[0], width)
    score = grid[row, cid]
    o = np.lexsort((-score, row))  # (stable, and (row, cid) came sorted: ties keep the lowest ids first)
    row, cid, score = row[o], cid[o], score[o]
    first = np.searchsorted(row, np.arange(len(parts)))
    keep = np.arange(len(row)) - first[row] < limit
    return PackageScores(row[keep], cid[keep], score[keep], matched)


def _kth_best(grid: np.ndarray, positive: np.ndarray, limit: int) -> np.ndarray:
    """Each row's `limit`-th best score among its scores above 0 (`positive`), or 0 for a row
    with fewer: a section is among the row's best when its score is above 0 and at least that.

    Only a row's positive scores are partitioned: the rest are zeros, and numpy's partition
    of an array of mostly equal values is slow (a 5,445-wide row, a tenth of it matched:
    0.5 ms, against 0.04 ms for as many distinct values).
    """
    import numpy as np

    kth = np.zeros(len(grid))
    counts = positive.sum(axis=1)
    for r in np.flatnonzero(counts >= limit).tolist():
        found = grid[r][positive[r]]  # (a copy: partitioned in place)
        k = len(found) - limit
        found.partition(k)
        kth[r] = found[k]
    return kth
