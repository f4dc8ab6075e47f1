"""A compact inverted index for BM25 without FTS5 at query time (our packages only).

FTS5's `bm25()` scores every row that matches any query term, which costs milliseconds per
package. Our packages also carry `bm25_terms` (one row per indexed term: document frequency
and a compressed posting list with per-column term frequencies) and `bm25_lengths` (tokens
per chunk and column), from which the same score is computed in numpy, reading only the
rows for the query's terms (see docs/package-format.md).

Exactness: terms are FTS5's own tokens. Text is split in Python the way `unicode61` splits
it, and every distinct word is folded and stemmed by SQLite's `porter unicode61` tokenizer
itself (an in-memory FTS5 table), so the stems are FTS5's by construction. The writer then
checks the index against the package's FTS5 index (`fts5vocab`) and rebuilds any term that
differs from FTS5's own instance list; chunk lengths are read from FTS5's docsize table.
The score is FTS5's BM25 (k1 = 1.2, b = 0.75, column weights applied to each occurrence,
document length = all columns, IDF floored at 1e-6). BM25 over an OR of terms and phrases is a sum
of per-unit parts, so each term's part is precomputed once per process from its posting
list, and each phrase (a split identifier such as `max_tokens` or `Claude's`) gets its part
from FTS5 searched for that phrase alone, then cached. Scores match FTS5's to ~1e-15.
The user's words reach SQLite only as bound parameters (terms to look up, quoted phrases).

Packages without these tables (Neuledge Context's, older ours), or whose tables fail a
check, are searched through FTS5 exactly as before.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
import zlib
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..package.schema import BM25_DDL

if TYPE_CHECKING:
    import numpy as np

FORMAT = "1"
FIELDS = ("doc_title", "section_title", "content")
K1 = 1.2
B = 0.75
TF_MAX = 255  # per-column term frequencies are stored as uint8, saturated here
MAX_ID_FOR_U16 = 0xFFFF
MAX_PHRASE_ROWS = 1_000_000


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class MalformedIndex(ValueError):
    """The package's BM25 tables do not decode; the package is searched through FTS5."""


# --- tokenising with SQLite's own tokenizer --------------------------------------------------

class Stemmer:
    """Words -> FTS5 `porter unicode61` tokens, by SQLite itself, cached per process."""

    MAX_CACHE = 200_000

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute("CREATE VIRTUAL TABLE w USING fts5(x, tokenize='porter unicode61')")
        self._db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(w, instance)")
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[str, ...]] = {}

    def tokens(self, words: Iterable[str]) -> dict[str, tuple[str, ...]]:
        words = list(dict.fromkeys(words))
        out = {}
        todo = []
        for w in words:
            hit = self._cache.get(w)
            if hit is None:
                todo.append(w)
            else:
                out[w] = hit
        if todo:
            with self._lock:
                db = self._db
                db.executemany("INSERT INTO w(rowid, x) VALUES (?, ?)", enumerate(todo, start=1))
                found: dict[int, list[tuple[int, str]]] = {}
                for term, doc, off in db.execute("SELECT term, doc, offset FROM v"):
                    found.setdefault(doc, []).append((off, term))
                db.execute("DELETE FROM w")
                keep = len(todo) <= self.MAX_CACHE // 4  # a whole corpus (a build) is not kept
                if keep and len(self._cache) + len(todo) > self.MAX_CACHE:
                    self._cache.clear()
                for i, w in enumerate(todo, start=1):
                    toks = tuple(t for _, t in sorted(found.get(i, ())))
                    out[w] = toks
                    if keep:
                        self._cache[w] = toks
        return out


_STEMMER: Stemmer | None = None
_STEMMER_LOCK = threading.Lock()


def stemmer() -> Stemmer:
    global _STEMMER
    with _STEMMER_LOCK:
        if _STEMMER is None:
            _STEMMER = Stemmer()
        return _STEMMER


# --- building (package writer) ---------------------------------------------------------------

def _encode(ids: np.ndarray, tfs: np.ndarray, wide: bool) -> bytes:
    """zlib(id deltas as uint16, or uint32 past 65,535 chunks; then three uint8 tf columns)."""
    import numpy as np

    delta = np.array(ids, dtype=np.int64)
    delta[1:] -= ids[:-1]
    delta = delta.astype("<u4" if wide else "<u2")
    cols = np.minimum(tfs, TF_MAX).astype(np.uint8)
    return zlib.compress(delta.tobytes() + np.ascontiguousarray(cols.T).tobytes(), 9)


def build(db: sqlite3.Connection, rows: Sequence[tuple[int, str, str, str]]) -> dict[str, int]:
    """Fill `bm25_terms` and `bm25_lengths` from (id, doc_title, section_title, content) rows,
    ids 1..N, after `chunks_fts` is built. Returns counts (terms, postings, terms rebuilt from
    FTS5 because Python's split disagreed)."""
    import numpy as np

    n = len(rows)
    if any(cid != i for i, (cid, *_) in enumerate(rows, start=1)):
        raise ValueError("chunk ids must be 1..N")
    counts = [[Counter(_WORD.findall(text or "")) for text in (t, s, c)] for _, t, s, c in rows]
    vocab: set[str] = set()
    for per_field in counts:
        for cnt in per_field:
            vocab.update(cnt)
    stems = stemmer().tokens(sorted(vocab))
    names: dict[str, int] = {}
    first = {w: names.setdefault(t[0], len(names)) for w, t in stems.items() if len(t) == 1}
    extra = {w: [names.setdefault(x, len(names)) for x in t] for w, t in stems.items() if len(t) != 1}
    T: list[int] = []
    C: list[int] = []
    F: list[int] = []
    K: list[int] = []
    for cid, per_field in enumerate(counts, start=1):
        for f, cnt in enumerate(per_field):
            if not cnt:
                continue
            if extra and any(w in extra for w in cnt):
                for w, k in cnt.items():
                    for ti in extra.get(w, [first.get(w)]):
                        if ti is not None:
                            T.append(ti), C.append(cid), F.append(f), K.append(k)
                continue
            T.extend(map(first.__getitem__, cnt.keys()))
            K.extend(cnt.values())
            C.extend([cid] * len(cnt))
            F.extend([f] * len(cnt))
    del counts
    tok = np.asarray(T, dtype=np.int64)
    key = tok * (n + 1) + np.asarray(C, dtype=np.int64)
    uniq, inv = np.unique(key, return_inverse=True)
    tf = np.zeros((len(uniq), 3), dtype=np.int64)
    np.add.at(tf, (inv, np.asarray(F, dtype=np.int64)), np.asarray(K, dtype=np.int64))
    p_tok, p_cid = uniq // (n + 1), uniq % (n + 1)
    term_of = [""] * len(names)
    for name, i in names.items():
        term_of[i] = name
    bounds = np.searchsorted(p_tok, np.arange(len(names) + 1))
    post: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for i, name in enumerate(term_of):
        a, b = bounds[i], bounds[i + 1]
        if b > a:
            post[name] = (p_cid[a:b], tf[a:b])

    # Check against FTS5's own index; rebuild any term that differs from its instances.
    fixed = 0
    db.execute("CREATE VIRTUAL TABLE temp.bm25_vrow USING fts5vocab(main, chunks_fts, row)")
    db.execute("CREATE VIRTUAL TABLE temp.bm25_vinst USING fts5vocab(main, chunks_fts, instance)")
    try:
        truth = {term: (docs, cnt) for term, docs, cnt in db.execute("SELECT term, doc, cnt FROM temp.bm25_vrow")}
        for term in [t for t in post if t not in truth]:
            del post[term]
            fixed += 1
        col_of = {name: i for i, name in enumerate(FIELDS)}
        for term, (docs, cnt) in truth.items():
            p = post.get(term)
            if p is not None and len(p[0]) == docs and int(p[1].sum()) == cnt:
                continue
            fixed += 1
            acc: dict[int, list[int]] = {}
            for doc, col, k in db.execute(
                "SELECT doc, col, count(*) FROM temp.bm25_vinst WHERE term = ? GROUP BY doc, col", (term,)
            ):
                acc.setdefault(int(doc), [0, 0, 0])[col_of[col]] += int(k)
            ids = sorted(acc)
            post[term] = (np.asarray(ids, dtype=np.int64), np.asarray([acc[i] for i in ids], dtype=np.int64))
        lengths = _fts_lengths(db, n)
    finally:
        db.execute("DROP TABLE temp.bm25_vrow")
        db.execute("DROP TABLE temp.bm25_vinst")

    wide = n > MAX_ID_FOR_U16
    db.executescript(BM25_DDL)
    db.executemany(
        "INSERT INTO bm25_lengths(field, lengths) VALUES (?, ?)",
        ((name, lengths[:, i].astype("<u4").tobytes()) for i, name in enumerate(FIELDS)),
    )
    db.executemany(
        "INSERT INTO bm25_terms(term, df, postings) VALUES (?, ?, ?)",
        ((term, len(ids), _encode(ids, tfs, wide)) for term, (ids, tfs) in sorted(post.items())),
    )
    return {"terms": len(post), "postings": sum(len(p[0]) for p in post.values()), "fixed": fixed}


def _fts_lengths(db: sqlite3.Connection, n: int) -> np.ndarray:
    """Tokens per chunk and column, as FTS5 counted them (its docsize table of varints)."""
    import numpy as np

    out = np.zeros((n, 3), dtype=np.int64)
    for cid, sz in db.execute("SELECT id, sz FROM chunks_fts_docsize"):
        vals, i = [], 0
        while i < len(sz) and len(vals) < 3:
            v = 0
            for _ in range(9):
                b = sz[i]
                i += 1
                v = (v << 7) | (b & 0x7F)
                if not b & 0x80:
                    break
            vals.append(v)
        if 1 <= cid <= n:
            out[cid - 1, :len(vals)] = vals
    return out


# --- searching -------------------------------------------------------------------------------

@dataclass
class Posting:
    ids: np.ndarray  # sorted chunk ids (int64)
    tfs: np.ndarray | None  # (3, df) uint8: doc_title, section_title, content (None for a phrase)
    contrib: np.ndarray  # this term's BM25 contribution to each of those chunks

    @property
    def df(self) -> int:
        return len(self.ids)


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
        self.wide = n > MAX_ID_FOR_U16
        self._cache: OrderedDict[object, Posting | None] = OrderedDict()
        self._held = 0
        self._last: tuple[tuple, list[Posting | None]] | None = None

    @classmethod
    def load(cls, db: sqlite3.Connection, weights: Sequence[float]) -> Bm25Index:
        import numpy as np

        rows = dict(db.execute("SELECT field, lengths FROM bm25_lengths").fetchall())
        cols = []
        for name in FIELDS:
            blob = rows.get(name)
            if not isinstance(blob, bytes) or len(blob) % 4:
                raise MalformedIndex(f"bm25_lengths.{name} is malformed")
            cols.append(np.frombuffer(blob, dtype="<u4").astype(np.float64))
        n = len(cols[0])
        if any(len(c) != n for c in cols):
            raise MalformedIndex("bm25_lengths columns differ in length")
        return cls(db, n, cols[0] + cols[1] + cols[2], weights)

    def idf(self, df: int) -> float:
        v = math.log((self.n - df + 0.5) / (df + 0.5))
        return v if v > 0 else 1e-6

    def _decode(self, df: object, blob: object) -> Posting:
        import numpy as np

        if not isinstance(df, int) or not isinstance(blob, bytes) or not 0 < df <= self.n:
            raise MalformedIndex("bm25_terms row has a bad df or postings")
        width = 4 if self.wide else 2
        want = df * (width + 3)
        d = zlib.decompressobj()
        try:
            raw = d.decompress(blob, want + 1)
        except zlib.error:
            raise MalformedIndex("bm25_terms postings do not decompress") from None
        if len(raw) != want or not d.eof or d.unconsumed_tail:
            raise MalformedIndex("bm25_terms postings have the wrong size")
        delta = np.frombuffer(raw, dtype="<u4" if self.wide else "<u2", count=df).astype(np.int64)
        if df > 1 and not (delta[1:] > 0).all():
            raise MalformedIndex("bm25_terms postings are not increasing")
        ids = np.cumsum(delta)
        if ids[0] < 1 or ids[-1] > self.n:
            raise MalformedIndex("bm25_terms postings name chunks that do not exist")
        tfs = np.frombuffer(raw, dtype=np.uint8, offset=df * width).reshape(3, df)
        f = self.weights @ tfs.astype(np.float64)
        contrib = self.idf(df) * f * (K1 + 1) / (f + self._k[ids])
        return Posting(ids=ids, tfs=tfs, contrib=contrib)

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
            for t in todo:
                hit = found.get(t)
                p = self._decode(*hit) if hit is not None else None
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
        toks = stemmer().tokens(list(words) + list(phrases))
        singles = [toks[w][0] for w in words if len(toks[w]) == 1]
        plist = self.postings(singles) if singles else {}
        out = []
        for w in list(words) + list(phrases):
            t = toks[w]
            if not t:
                out.append(None)
            elif len(t) == 1 and w in words:
                out.append(plist[t[0]])
            else:
                out.append(self.phrase(w, t))
        return out

    def _units_cached(self, words: Sequence[str], phrases: Sequence[str]) -> list[Posting | None]:
        # The engine asks for the ranking and then the term statistics of the same query.
        key = (tuple(words), tuple(phrases))
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        units = self.units(words, phrases)
        self._last = (key, units)
        return units

    def search(self, words: Sequence[str], phrases: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """(chunk id, BM25; higher is better), best first, ties by id: FTS5's ranking."""
        import numpy as np

        units = [u for u in self._units_cached(words, phrases) if u is not None]
        if not units:
            return []
        if len(units) == 1:
            ids, scores = units[0].ids, units[0].contrib
        else:
            acc = np.bincount(np.concatenate([u.ids for u in units]),
                              weights=np.concatenate([u.contrib for u in units]), minlength=self.n + 1)
            if self.n + 1 > 4 * limit:
                top = np.argpartition(-acc, limit)[:limit + 1]
                top = top[acc[top] > 0]
            else:
                top = np.flatnonzero(acc)
            ids, scores = top, acc[top]
        if len(ids) > limit:
            keep = np.argpartition(-scores, limit - 1)[:limit]
            ids, scores = ids[keep], scores[keep]
        order = np.lexsort((ids, -scores))[:limit]
        return list(zip(ids[order].tolist(), scores[order].tolist()))

    def stats(self, words: Sequence[str], candidates: Sequence[int]) -> list[tuple[str, int, set[int]]]:
        """For each query word: its document frequency and which candidates contain it."""
        import numpy as np

        last = self._last
        if last is not None and last[0][0] == tuple(words):
            units = last[1][:len(words)]
        else:
            units = self.units(words, ())
        cand = np.asarray(list(candidates), dtype=np.int64)
        out = []
        for w, u in zip(words, units):
            if u is None:
                out.append((w, 0, set()))
                continue
            pos = np.minimum(np.searchsorted(u.ids, cand), len(u.ids) - 1)
            out.append((w, u.df, set(cand[u.ids[pos] == cand].tolist())))
        return out


def check_all(db: sqlite3.Connection) -> None:
    """Decode every row of the index (at install time); raise MalformedIndex on the first bad one."""
    try:
        n_chunks = int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])
        index = Bm25Index.load(db, (1.0, 1.0, 1.0))
        if index.n != n_chunks:
            raise MalformedIndex("bm25_lengths does not cover the chunks")
        for term, df, blob in db.execute("SELECT term, df, postings FROM bm25_terms"):
            if not isinstance(term, str) or not term:
                raise MalformedIndex("bm25_terms has a bad term")
            index._decode(df, blob)
    except sqlite3.Error as e:
        raise MalformedIndex(str(e)) from None


def has_tables(objects: dict[str, tuple[str, str]]) -> bool:
    """Are both BM25 tables present as real tables (not views or virtual tables)?"""
    for name in ("bm25_terms", "bm25_lengths"):
        kind, sql = objects.get(name, (None, ""))
        if kind != "table" or (sql or "").upper().startswith("CREATE VIRTUAL"):
            return False
    return True
