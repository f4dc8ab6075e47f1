"""The on-disk BM25 index of our packages: its tables, terms, encoding, writing and checking.

Two tables (docs/package-format.md): `bm25_terms` holds one row per FTS5 term (document
frequency and a compressed posting list with per-column term frequencies) and
`bm25_lengths` the tokens per chunk and column. Scoring them is `search/bm25.py`'s job;
this module only defines what the bytes mean, so the writer, the validator and the
searcher agree on one format.

Exactness: terms are FTS5's own tokens. Text is split in Python the way `unicode61` splits
it, and every distinct word is folded and stemmed by SQLite's `porter unicode61` tokenizer
itself (an in-memory FTS5 table), so the stems are FTS5's by construction. `write` then
checks the index against the package's FTS5 index (`fts5vocab`) and rebuilds any term that
differs from FTS5's own instance list; chunk lengths are read from FTS5's docsize table.

Packages without these tables (Neuledge Context's, older ours), or whose tables fail a
check, are searched through FTS5.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from ..errors import InvalidPackage
from .phrases import FORMAT as PHRASES_FORMAT
from .phrases import phrase_postings
from .schema import BM25_DDL

if TYPE_CHECKING:
    import numpy as np

FORMAT = "1"
FIELDS = ("doc_title", "section_title", "content")
TABLES = {"bm25_terms": ["term", "df", "postings"], "bm25_lengths": ["field", "lengths"]}
PHRASE_COLUMNS = ["phrase", "df", "postings"]  # bm25_phrases: optional (older packages lack it)
TF_MAX = 255  # per-column term frequencies are stored as uint8, saturated here
MAX_ID_FOR_U16 = 0xFFFF  # past this many chunks, id deltas are stored as uint32
CHECK_BATCH = 1024  # rows decoded together when an installed index is checked
MAX_SPLIT_PARTS = 8  # a split word of more parts is no phrase (a question's too: `search/fts.phrases`)

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# For ASCII text `_WORD` matches exactly the runs of [A-Za-z0-9]: blank everything else, split.
_ASCII_BLANKS = bytes(c if chr(c).isascii() and chr(c).isalnum() else 0x20 for c in range(256))


def words(text: str) -> list[str]:
    """`_WORD.findall(text)`, about twice as fast for ASCII text (most documentation)."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_BLANKS).decode("ascii").split()
    return _WORD.findall(text)


class MalformedIndex(InvalidPackage):
    """The package's BM25 tables do not decode: refused at install, FTS5 used at search."""


# --- terms: SQLite's own tokenizer -----------------------------------------------------------

class Stemmer:
    """Words -> FTS5 `porter unicode61` tokens, by SQLite itself, cached per process."""

    MAX_CACHE = 200_000

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        # (Contentless, without sizes: only its index is read, and it is emptied at once,
        # 70 µs for ten words against 125 µs with content kept and deleted row by row.)
        self._db.execute("CREATE VIRTUAL TABLE w USING fts5(x, tokenize='porter unicode61', content='', columnsize=0)")
        self._db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(w, instance)")
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[str, ...]] = {}

    def tokens(self, words: Iterable[str]) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        todo = []
        for w in dict.fromkeys(words):
            hit = self._cache.get(w)
            if hit is None:
                todo.append(w)
            else:
                out[w] = hit
        if todo:
            with self._lock:
                out.update(self._stem(todo))
        return out

    def _stem(self, todo: list[str]) -> dict[str, tuple[str, ...]]:
        db = self._db
        # An ASCII word of letters and digits is exactly one unicode61 token, so all of them
        # go in one row, word k at offset k: one FTS5 insert instead of one per word.
        plain = [w for w in todo if w.isascii() and w.isalnum()]
        rows = [w for w in todo if not (w.isascii() and w.isalnum())]
        db.executemany("INSERT INTO w(rowid, x) VALUES (?, ?)", enumerate(rows, start=1))
        if plain:
            db.execute("INSERT INTO w(rowid, x) VALUES (?, ?)", (len(rows) + 1, " ".join(plain)))
        found: dict[int, list[tuple[int, str]]] = {}
        for term, doc, off in db.execute("SELECT term, doc, offset FROM v"):
            found.setdefault(doc, []).append((off, term))
        db.execute("INSERT INTO w(w) VALUES ('delete-all')")
        stems = {w: tuple(t for _, t in sorted(found.get(i, ()))) for i, w in enumerate(rows, start=1)}
        if plain:
            terms = [t for _, t in sorted(found.get(len(rows) + 1, ()))]
            if len(terms) != len(plain):  # not one token a word after all: never expected
                raise RuntimeError("FTS5 split a plain ASCII word")
            stems.update(zip(plain, ((t,) for t in terms), strict=True))
        keep = len(todo) <= self.MAX_CACHE // 4  # a whole corpus (a build) is not kept
        if keep and len(self._cache) + len(todo) > self.MAX_CACHE:
            self._cache.clear()
        if keep:
            self._cache.update(stems)
        return stems


_STEMMER: Stemmer | None = None
_STEMMER_LOCK = threading.Lock()


def stemmer() -> Stemmer:
    """The process's one stemmer (its in-memory FTS5 table is made once)."""
    global _STEMMER
    with _STEMMER_LOCK:
        if _STEMMER is None:
            _STEMMER = Stemmer()
        return _STEMMER


# --- encoding --------------------------------------------------------------------------------

def encode_postings(lists: Sequence[tuple[np.ndarray, np.ndarray]], wide: bool) -> Iterator[bytes]:
    """Each (sorted chunk ids, (df, 3) tfs) -> zlib(id deltas as uint16, or uint32 past 65,535
    chunks; then three uint8 tf columns). The arithmetic runs once over all lists together."""
    import numpy as np

    if not lists:
        return
    ids = np.concatenate([i for i, _ in lists])
    sizes = np.fromiter((len(i) for i, _ in lists), dtype=np.int64, count=len(lists))
    starts = np.concatenate(([0], np.cumsum(sizes)))
    delta = ids.copy()
    delta[1:] -= ids[:-1]
    delta[starts[:-1]] = ids[starts[:-1]]  # each list starts from zero
    width = 4 if wide else 2
    id_bytes = delta.astype("<u4" if wide else "<u2").tobytes()
    tf = np.minimum(np.concatenate([t for _, t in lists]), TF_MAX).astype(np.uint8)
    cols = [np.ascontiguousarray(tf[:, k]).tobytes() for k in range(3)]
    for lo, hi in zip(starts[:-1].tolist(), starts[1:].tolist(), strict=True):
        # A 4 KiB window and small state: as small as the default's output here, and much
        # cheaper to set up for thousands of short lists. Any zlib reader decodes it.
        z = zlib.compressobj(9, zlib.DEFLATED, 12, 4)
        yield z.compress(id_bytes[lo * width:hi * width] + cols[0][lo:hi] + cols[1][lo:hi] + cols[2][lo:hi]) + z.flush()


def decode_many(rows: Iterable[tuple[object, object]], n: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """`bm25_terms` or `bm25_phrases` rows (df, postings) of a package of `n` chunks -> every
    row's chunk ids one after another (each row's sorted), their (3, total) uint8 tfs, and
    each row's length.

    Every size is checked before it is trusted: no blob inflates past what its `df` says.
    Only the inflating runs per row; the numpy steps run once for all the rows. A question's
    eleven words new to a 2,000-section package: 0.13 ms decoded together, 0.20 ms one by one.
    """
    import numpy as np

    wide = n > MAX_ID_FOR_U16
    width = 4 if wide else 2
    id_parts: list[bytes] = []
    tf_parts: list[bytes] = []  # each row's three tf columns, one after another
    sizes: list[int] = []
    for df, blob in rows:
        if not isinstance(df, int) or not isinstance(blob, bytes) or not 0 < df <= n:
            raise MalformedIndex("a row has a bad df or postings")
        want = df * (width + 3)
        d = zlib.decompressobj()
        try:
            raw = d.decompress(blob, want + 1)
        except zlib.error:
            raise MalformedIndex("postings do not decompress") from None
        if len(raw) != want or not d.eof or d.unconsumed_tail:
            raise MalformedIndex("postings have the wrong size")
        id_parts.append(raw[:df * width])
        tf_parts.append(raw[df * width:])
        sizes.append(df)
    if not sizes:
        return np.zeros(0, dtype=np.int64), np.zeros((3, 0), dtype=np.uint8), sizes
    delta = np.frombuffer(b"".join(id_parts), dtype="<u4" if wide else "<u2")
    if np.count_nonzero(delta) < len(delta):  # a row's first delta is its first id (>= 1), the rest steps up
        raise MalformedIndex("postings are not increasing chunk ids")
    # Each row's ids are the running sum of its deltas: one running sum for all the rows, less
    # what the rows before each one added up to.
    ids = delta.cumsum(dtype=np.int64)
    if len(sizes) > 1:
        ends = np.array(sizes).cumsum()  # (numpy's functions take a detour, costing more than the sum, for a list)
        ids -= np.concatenate(([0], ids[ends[:-1] - 1])).repeat(sizes)
    if ids.max() > n:
        raise MalformedIndex("postings name chunks that do not exist")
    # (3, total): the rows' first columns, then their second, then their third
    tfs = np.concatenate([np.frombuffer(t, dtype=np.uint8).reshape(3, df) for t, df in zip(tf_parts, sizes, strict=True)],
                         axis=1) if len(sizes) > 1 else np.frombuffer(tf_parts[0], dtype=np.uint8).reshape(3, sizes[0])
    return ids, tfs, sizes


def read_lengths(db: sqlite3.Connection) -> np.ndarray:
    """Tokens per chunk and field from `bm25_lengths`, as a (3, n) float64 array."""
    import numpy as np

    rows = dict(db.execute("SELECT field, lengths FROM bm25_lengths").fetchall())
    cols = []
    for name in FIELDS:
        blob = rows.get(name)
        if not isinstance(blob, bytes) or len(blob) % 4:
            raise MalformedIndex(f"bm25_lengths.{name} is malformed")
        cols.append(np.frombuffer(blob, dtype="<u4").astype(np.float64))
    if any(len(c) != len(cols[0]) for c in cols):
        raise MalformedIndex("bm25_lengths columns differ in length")
    return np.vstack(cols)


# --- writing (package writer) ----------------------------------------------------------------

Postings = dict[str, tuple["np.ndarray", "np.ndarray"]]  # term -> (chunk ids, (df, 3) tfs)


class TermCounts:
    """The terms of some chunks, counted where the chunks are made (a build's page workers,
    in parallel) so that the writer only merges: row k says chunk `chunk[k]` (its position in
    the counted list) holds term `terms[term[k]]` `tf[k]` times per field."""

    __slots__ = ("terms", "chunk", "term", "tf", "stream", "split_words")

    def __init__(self, terms: tuple[str, ...], chunk: np.ndarray, term: np.ndarray, tf: np.ndarray,
                 stream: np.ndarray, split_words: np.ndarray) -> None:
        self.terms, self.chunk, self.term = terms, chunk, term  # chunk, term: int32, (k,)
        self.tf = tf  # uint16 (int32 if a count needs it), (k, 3): compact, as workers send it back
        # For phrase postings (`phrases.py`): every chunk's three fields' tokens in order, as
        # indexes into `terms`, each field closed by -1; and the token sequences of the split
        # words the chunks hold (`max_tokens`, `Claude's`), each once.
        self.stream = stream  # int32
        self.split_words = split_words  # int32, (w, MAX_SPLIT_PARTS): one split word's tokens a row, -1 after them


class Prepared:
    """The index of `n` chunks as far as it needs no database: its postings and their blobs.
    A writer makes it in a thread while SQLite builds the full-text index (numpy, zlib and
    SQLite all release the GIL), then `write` checks it against that index."""

    __slots__ = ("n", "postings", "blobs", "sizes", "phrases")

    def __init__(self, n: int, postings: Postings, blobs: dict[str, bytes], sizes: dict[str, tuple[int, int]],
                 phrases: Postings) -> None:
        self.n, self.postings, self.blobs = n, postings, blobs
        self.sizes = sizes  # term -> (chunks, occurrences): what FTS5's vocabulary says
        self.phrases = phrases  # `phrases.phrase_postings`: phrase -> its chunk ids and counts


Counted = Sequence[tuple[TermCounts, "np.ndarray"]]  # counted parts, each with its chunks' ids (merge_counts)


def prepare(rows: Sequence[tuple[int, str, str, str]], counted: Counted | None = None) -> Prepared:
    """Postings of (id, doc_title, section_title, content) rows, ids 1..N, and their blobs.
    The terms are counted here unless the caller counted them already (`counted`: a build
    counts each page where it is parsed)."""
    import numpy as np

    n = len(rows)
    if any(cid != i for i, (cid, *_) in enumerate(rows, start=1)):
        raise ValueError("chunk ids must be 1..N")
    if counted is None:
        counted = [(count_terms([r[1:] for r in rows]), np.arange(1, n + 1))]
    post = merge_counts(counted, n)
    terms = sorted(post)
    blobs = encode_postings([post[t] for t in terms], n > MAX_ID_FOR_U16)
    sizes = {t: (len(cids), int(tf.sum())) for t, (cids, tf) in post.items()}
    found = phrase_postings(counted, n, {t: len(cids) for t, (cids, _) in post.items()}, TF_MAX)
    return Prepared(n, post, dict(zip(terms, blobs, strict=True)), sizes, found)


def write(db: sqlite3.Connection, rows: Sequence[tuple[int, str, str, str]],
          prepared: Prepared | None = None) -> dict[str, int]:
    """Fill `bm25_terms` and `bm25_lengths` from (id, doc_title, section_title, content) rows,
    ids 1..N, after `chunks_fts` is built; `prepared` is `prepare(rows)` made in advance.
    Returns counts (terms, postings, terms rebuilt from FTS5 because Python's split disagreed,
    phrases)."""
    n = len(rows)
    prep = prepared if prepared is not None else prepare(rows)
    if prep.n != n:
        raise ValueError("the prepared index is not of these rows")
    post, blobs = prep.postings, prep.blobs
    changed, unsure = _agree_with_fts5(db, post, prep.sizes)
    for term in changed:
        if term in post:
            blobs[term] = next(encode_postings([post[term]], n > MAX_ID_FOR_U16))
        else:
            blobs.pop(term, None)
    found = _sure_phrases(prep.phrases, post, unsure)
    lengths = _fts_lengths(db, n)
    db.executescript(BM25_DDL)
    db.executemany(
        "INSERT INTO bm25_lengths(field, lengths) VALUES (?, ?)",
        ((name, lengths[:, i].astype("<u4").tobytes()) for i, name in enumerate(FIELDS)),
    )
    db.executemany(
        "INSERT INTO bm25_terms(term, df, postings) VALUES (?, ?, ?)",
        ((term, len(post[term][0]), blobs[term]) for term in sorted(blobs)),
    )
    names = sorted(found)
    db.executemany(
        "INSERT INTO bm25_phrases(phrase, df, postings) VALUES (?, ?, ?)",
        ((p, len(found[p][0]), blob) for p, blob in zip(
            names, encode_postings([found[p] for p in names], n > MAX_ID_FOR_U16), strict=True)),
    )
    return {"terms": len(post), "postings": sum(len(p[0]) for p in post.values()), "fixed": len(changed),
            "phrases": len(found)}


def _sure_phrases(found: Postings, post: Postings, unsure: np.ndarray) -> Postings:
    """The phrases whose counts are FTS5's: all, unless some chunks' text split differently
    in Python (`unsure`); then those a phrase might meet there (its words all in one of
    them, by FTS5's postings, or counted there by Python) are left to FTS5."""
    import numpy as np

    if not len(unsure) or not found:
        return found
    out = {}
    for phrase, (ids, tf) in found.items():
        meets = np.intersect1d(ids, unsure).size > 0
        if not meets:
            rows = unsure
            for t in phrase.split(" "):
                rows = np.intersect1d(rows, post[t][0]) if t in post else rows[:0]
            meets = rows.size > 0
        if not meets:
            out[phrase] = (ids, tf)
    return out


class _Terms:
    """Words -> term ids, remembered across `count_terms` calls in one process: a build counts
    page after page, and most of a page's words were seen (and stemmed) on earlier pages.
    A word FTS5 turns into one term maps to its id; one it turns into none or several maps
    to -1 - k, k indexing `split`."""

    MAX_WORDS = 500_000

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.names: list[str] = []
        self._name_ids: dict[str, int] = {}
        self.split: list[list[int]] = []
        self.lock = threading.Lock()

    def ids_of(self, words: list[str]) -> np.ndarray:
        """The id of every word in `words` (int64), stemming the words not seen before."""
        import numpy as np

        if len(self.ids) > self.MAX_WORDS:  # a long-lived process that builds many packages
            self.ids.clear()
            self.names.clear()
            self._name_ids.clear()
            self.split.clear()
        new = set(words).difference(self.ids)
        if new:
            for w, toks in stemmer().tokens(new).items():
                if len(toks) == 1:
                    self.ids[w] = self._id(toks[0])
                else:
                    self.ids[w] = -1 - len(self.split)
                    self.split.append([self._id(t) for t in toks])
        return np.fromiter(map(self.ids.__getitem__, words), dtype=np.int64, count=len(words))

    def _id(self, name: str) -> int:
        i = self._name_ids.get(name)
        if i is None:
            i = self._name_ids[name] = len(self.names)
            self.names.append(name)
        return i


_TERMS = _Terms()


def count_terms(texts: Sequence[Sequence[str | None]]) -> TermCounts:
    """The terms of chunks given as (doc_title, section_title, content), from Python's split and
    SQLite's stems, counted in bulk: one term id per word occurrence, then numpy counts
    (term, chunk, field) triples."""
    import numpy as np

    k = max(len(texts), 1)
    occurrences: list[str] = []  # every word, in order
    spans: list[int] = []  # chunk position * 3 + field, one per non-empty text ...
    lengths: list[int] = []  # ... and how many words it has
    for pos, fields in enumerate(texts):
        for f, text in enumerate(fields):
            found = words(text or "")
            if found:
                occurrences.extend(found)
                spans.append(pos * 3 + f)
                lengths.append(len(found))
    with _TERMS.lock:
        term = _TERMS.ids_of(occurrences)  # one id a word, in order; `where`: the field each is in
        where = np.repeat(np.asarray(spans, dtype=np.int64), lengths)
        if len(term) and term.min() < 0:  # a word FTS5 splits (or drops): its tokens in its place
            odd = np.flatnonzero(term < 0)
            split = [_TERMS.split[-1 - w] for w in term[odd].tolist()]
            per_word = np.ones(len(term), dtype=np.int64)
            per_word[odd] = [len(t) for t in split]
            at = np.cumsum(per_word) - per_word  # where each word's tokens begin
            term, where = np.repeat(term, per_word), np.repeat(where, per_word)
            for j, tokens in zip(at[odd].tolist(), split, strict=True):
                term[j:j + len(tokens)] = tokens
        # One row per (term, chunk); three columns of term frequency.
        uniq, inv = np.unique(term * k + where // 3, return_inverse=True)
        tf = np.bincount(inv * 3 + where % 3, minlength=3 * len(uniq)).reshape(-1, 3)
        pair_term = uniq // k  # sorted: number the distinct terms in order
        first = np.ones(len(pair_term), dtype=bool)
        first[1:] = pair_term[1:] != pair_term[:-1]
        used, local = pair_term[first], np.cumsum(first) - 1
        names = _TERMS.names
        small = np.uint16 if not len(tf) or tf.max() <= np.iinfo(np.uint16).max else np.int32
        stream, split_words = _stream(texts, term, where, used)
        return TermCounts(tuple(map(names.__getitem__, used.tolist())), (uniq % k).astype(np.int32),
                          local.astype(np.int32), tf.astype(small), stream, split_words)


def _stream(texts: Sequence[Sequence[str | None]], tokens: np.ndarray, where: np.ndarray,
            used: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`TermCounts.stream` and `.split_words` of `count_terms`' texts (under `_TERMS.lock`),
    from the `_TERMS` id of every token in order and the field (chunk position * 3 + field)
    it is in. `used` holds the sorted `_TERMS` ids of the terms the texts hold, so a token's
    index in it is its index in `TermCounts.terms`."""
    import numpy as np

    # Token i lands after one -1 for every field before its own.
    stream = np.full(len(tokens) + 3 * len(texts), -1, dtype=np.int32)
    stream[np.arange(len(tokens)) + where] = np.searchsorted(used, tokens)
    found: set[str] = set()  # the texts' words with more than letters and digits
    for fields in texts:
        for text in fields:
            if text:
                found.update(w for w in text.split() if not w.isalnum())
    ids, split = _TERMS.ids, _TERMS.split
    split_words: set[tuple[int, ...]] = set()
    for w in found:
        parts = words(w)
        if 1 < len(parts) <= MAX_SPLIT_PARTS:
            toks = tuple(t for i in map(ids.__getitem__, parts) for t in ((i,) if i >= 0 else split[-1 - i]))
            if 1 < len(toks) <= MAX_SPLIT_PARTS:  # (more tokens than parts: left to FTS5)
                split_words.add(toks + (-1,) * (MAX_SPLIT_PARTS - len(toks)))
    table = np.asarray(sorted(split_words), dtype=np.int64).reshape(-1, MAX_SPLIT_PARTS)
    return stream, np.where(table >= 0, np.searchsorted(used, table), -1).astype(np.int32)


def merge_counts(parts: Counted, n: int) -> Postings:
    """Every term's posting list over a package of `n` chunks, from counted parts; each part
    comes with the package id (1..n) of every chunk it counted, 0 for one left out (a dupe)."""
    import numpy as np

    if not parts:
        return {}
    every = [t for counts, _ in parts for t in counts.terms]
    names = sorted(set(every))
    index = {t: i for i, t in enumerate(names)}
    glob = np.fromiter(map(index.__getitem__, every), dtype=np.int64, count=len(every))
    rows = [len(counts.term) for counts, _ in parts]
    term_base = np.repeat(np.cumsum([0] + [len(c.terms) for c, _ in parts[:-1]]), rows)
    chunk_base = np.repeat(np.cumsum([0] + [len(ids) for _, ids in parts[:-1]]), rows)
    tok = glob[np.concatenate([c.term for c, _ in parts]) + term_base]
    ids = np.concatenate([np.asarray(ids, dtype=np.int64) for _, ids in parts])
    cid = ids[np.concatenate([c.chunk for c, _ in parts]) + chunk_base]
    tf = np.concatenate([c.tf for c, _ in parts])
    keep = cid > 0
    tok, cid, tf = tok[keep], cid[keep], tf[keep]
    # Each (term, chunk) pair is counted once, so the keys are distinct and every sort gives
    # the same order; the stable one (a timsort: the parts are sorted runs) takes half the time.
    order = np.argsort(tok * (n + 1) + cid, kind="stable")
    tok, cid, tf = tok[order], cid[order], tf[order]
    bounds = np.searchsorted(tok, np.arange(len(names) + 1)).tolist()
    post: Postings = {}
    for i, name in enumerate(names):
        lo, hi = bounds[i], bounds[i + 1]
        if hi > lo:
            post[name] = (cid[lo:hi], tf[lo:hi])
    return post


def _agree_with_fts5(db: sqlite3.Connection, post: Postings,
                     sizes: Mapping[str, tuple[int, int]]) -> tuple[list[str], np.ndarray]:
    """Make `post` equal FTS5's own index: drop terms it lacks, rebuild any whose `sizes`
    (chunks, occurrences) differ. Returns the terms dropped or rebuilt, and the chunks where
    they were or are (where Python's split of the text may not be FTS5's)."""
    import numpy as np

    fixed = []
    unsure = [np.zeros(0, dtype=np.int64)]
    db.execute("CREATE VIRTUAL TABLE temp.bm25_vrow USING fts5vocab(main, chunks_fts, row)")
    db.execute("CREATE VIRTUAL TABLE temp.bm25_vinst USING fts5vocab(main, chunks_fts, instance)")
    try:
        truth = {term: (docs, cnt) for term, docs, cnt in db.execute("SELECT term, doc, cnt FROM temp.bm25_vrow")}
        for term in [t for t in post if t not in truth]:
            unsure.append(post.pop(term)[0])
            fixed.append(term)
        col_of = {name: i for i, name in enumerate(FIELDS)}
        for term, (docs, cnt) in truth.items():
            if sizes.get(term) == (docs, cnt):
                continue
            fixed.append(term)
            acc: dict[int, list[int]] = {}
            for doc, col, k in db.execute(
                "SELECT doc, col, count(*) FROM temp.bm25_vinst WHERE term = ? GROUP BY doc, col", (term,)
            ):
                acc.setdefault(int(doc), [0, 0, 0])[col_of[col]] += int(k)
            ids = sorted(acc)
            if term in post:
                unsure.append(post[term][0])
            post[term] = (np.asarray(ids, dtype=np.int64), np.asarray([acc[i] for i in ids], dtype=np.int64))
            unsure.append(post[term][0])
    finally:
        db.execute("DROP TABLE temp.bm25_vrow")
        db.execute("DROP TABLE temp.bm25_vinst")
    return fixed, np.unique(np.concatenate(unsure))


def _fts_lengths(db: sqlite3.Connection, n: int) -> np.ndarray:
    """Tokens per chunk and column, as FTS5 counted them (its docsize table of varints)."""
    import numpy as np

    out = np.zeros((n, 3), dtype=np.int64)
    for cid, sz in db.execute("SELECT id, sz FROM chunks_fts_docsize"):
        vals: list[int] = []
        i = 0
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


# --- checking (package reader) ---------------------------------------------------------------

def present(db: sqlite3.Connection, objects: Mapping[str, tuple[str, str]], meta: Mapping[str, str]) -> bool:
    """Does the package declare our index, with both tables real and of our shape?"""
    return meta.get("bm25_index") == FORMAT and all(_our_table(db, objects, t, c) for t, c in TABLES.items())


def phrases_present(db: sqlite3.Connection, objects: Mapping[str, tuple[str, str]], meta: Mapping[str, str]) -> bool:
    """Does the package (one with our index) declare its phrase postings, in a table of our shape?"""
    return meta.get("bm25_phrases") == PHRASES_FORMAT and _our_table(db, objects, "bm25_phrases", PHRASE_COLUMNS)


def _our_table(db: sqlite3.Connection, objects: Mapping[str, tuple[str, str]], table: str, cols: list[str]) -> bool:
    kind, sql = objects.get(table, ("", ""))
    if kind != "table" or sql.upper().startswith("CREATE VIRTUAL"):
        return False
    return [r[1] for r in db.execute(f"PRAGMA table_info({table})")] == cols


def check(db: sqlite3.Connection, phrases: bool = False) -> None:
    """Decode every row of the index, its phrase postings too when it has them (at install
    time); raise MalformedIndex on the first bad one."""
    try:
        n_chunks = int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])
        n = read_lengths(db).shape[1]
        if n != n_chunks:
            raise MalformedIndex("bm25_lengths does not cover the chunks")
        for table, key in [("bm25_terms", "term"), *([("bm25_phrases", "phrase")] if phrases else [])]:
            rows = db.execute(f"SELECT {key}, df, postings FROM {table}")
            while batch := rows.fetchmany(CHECK_BATCH):
                if not all(isinstance(name, str) and name for name, _, _ in batch):
                    raise MalformedIndex(f"{table} has a bad {key}")
                try:
                    decode_many([(df, blob) for _, df, blob in batch], n)
                except MalformedIndex as e:
                    raise MalformedIndex(f"{table}: {e}") from None
    except sqlite3.Error as e:
        raise MalformedIndex(str(e)) from None
