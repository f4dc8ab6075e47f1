"""Phrase postings: the exact rows and per-column counts of the package's split words.

A question's split word (`max_tokens`, `Claude's`, `3.5`) is searched as a phrase, and
FTS5 answers a phrase of common words slowly (0.4-1.5 ms a package: it merges the words'
position lists, then `bm25()` reads every row's length and counts the rows again). So a
package carries, for each split word of its own text whose words are all common, what FTS5
would find for it: the chunks where its tokens stand next to each other, counted per
column, in the `bm25_terms` encoding (table `bm25_phrases`, docs/package-format.md).

Exactness: the counts are taken over every chunk's full token sequence (not only where the
word is written split), so they are FTS5's phrase counts wherever Python's split of the
text agrees with FTS5's; `bm25.write` drops any phrase that could meet a chunk where it does
not. A phrase not in the table is still searched through FTS5.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

Postings = dict[str, tuple["np.ndarray", "np.ndarray"]]  # phrase -> (chunk ids, (k, 3) counts), as `bm25.Postings`


class Counts(Protocol):
    """What a phrase count reads of `bm25.TermCounts` (one part of a package, counted)."""

    @property
    def terms(self) -> tuple[str, ...]: ...
    @property
    def stream(self) -> np.ndarray: ...
    @property
    def split_words(self) -> np.ndarray: ...


FORMAT = "1"
MIN_DF = 16  # a phrase whose rarest word is in fewer chunks is cheap for FTS5: not stored
_MIX = 0x9E3779B97F4A7C15  # odd: windows of more than two tokens are hashed, then compared whole


def phrase_postings(parts: Sequence[tuple[Counts, np.ndarray]], n: int, df: Mapping[str, int],
                    tf_max: int) -> Postings:
    """Each stored phrase ("tok tok", FTS5's tokens) -> (chunk ids, (k, 3) counts), from the
    counted parts of a package of `n` chunks (each part with the package id of each of its
    chunks, 0 for one left out) and the document frequency of every term. A phrase counted
    past `tf_max` in some column (the encoding's limit) is left to FTS5."""
    import numpy as np

    vocab: dict[str, int] = {}
    streams, slot_ids, tables = [], [], []
    for counts, ids in parts:
        to_global = np.fromiter((vocab.setdefault(t, len(vocab)) for t in counts.terms),
                                dtype=np.int32, count=len(counts.terms))
        to_global = np.append(to_global, np.int32(-1))  # index -1 (a field's end, a row's padding) stays -1
        streams.append(to_global[counts.stream])
        slot_ids.append(np.repeat(np.asarray(ids, dtype=np.int64), 3))
        tables.append(to_global[counts.split_words])
    names = list(vocab)
    dfs = np.append(np.fromiter((df.get(t, 0) for t in names), dtype=np.int64, count=len(names)), np.iinfo(np.int64).max)
    table = np.unique(np.concatenate(tables), axis=0).astype(np.int64) if tables else np.zeros((0, 2), dtype=np.int64)
    table = table[dfs[table].min(axis=1) >= MIN_DF]
    if not len(table):
        return {}
    seq = np.concatenate(streams)  # int32: a Django-sized package's 1.5 M tokens in 6 MB
    del streams
    pid, pos = _occurrences(seq, table, len(vocab))
    slot = np.searchsorted(np.flatnonzero(seq < 0), pos)  # the -1 closing each field counts them
    cid = np.concatenate(slot_ids)[slot]
    real = cid > 0
    pid, cid, field = pid[real], cid[real], slot[real] % 3
    uniq, inv = np.unique(pid * (n + 1) + cid, return_inverse=True)
    tf = np.bincount(inv * 3 + field, minlength=3 * len(uniq)).reshape(-1, 3)
    rows = uniq // (n + 1)
    bounds = np.searchsorted(rows, np.arange(len(table) + 1)).tolist()
    past = set(rows[tf.max(axis=1) > tf_max].tolist())
    out: Postings = {}
    for i, row in enumerate(table.tolist()):
        lo, hi = bounds[i], bounds[i + 1]
        if hi > lo and i not in past:
            out[" ".join(names[t] for t in row if t >= 0)] = (uniq[lo:hi] % (n + 1), tf[lo:hi])
    return out


def _occurrences(seq: np.ndarray, table: np.ndarray, base: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (phrase row, start) where a phrase of `table` (token ids below `base`, -1 after
    them) stands in `seq` (-1 between fields) token after token. Only starts whose first two
    tokens begin some phrase are looked at, one phrase length at a time; a window is keyed by
    its first two tokens, or by a hash of all of them and then compared whole. Phrases whose
    hashes collide get no occurrences (FTS5 answers them)."""
    import numpy as np

    sizes = (table >= 0).sum(axis=1)
    firsts = table[:, 0] * base + table[:, 1]
    first, second = np.zeros((2, base + 1), dtype=bool)  # (index -1, a field's end: neither)
    first[table[:, 0]] = True
    second[table[:, 1]] = True
    start = np.flatnonzero(first[seq[:-1]] & second[seq[1:]])  # then the first two tokens together
    pairs = seq[start].astype(np.int64) * base + seq[start + 1]
    # Each start's first two tokens looked up once among the phrases' (by binary search: a few
    # bytes a start, where `np.isin` sorts both together, tens of MB for a package's pairs);
    # a phrase length then only marks which of those keys open a phrase of that length.
    keys, key_of = np.unique(firsts, return_inverse=True)
    key = np.minimum(np.searchsorted(keys, pairs), len(keys) - 1)
    begins = keys[key] == pairs
    start, pairs, key = start[begins], pairs[begins], key[begins]
    last = len(seq) - 1  # a field's closing -1: a window running past the end reads it
    pids, starts = [], []
    for size in np.unique(sizes).tolist():
        which = np.flatnonzero(sizes == size)
        opens = np.zeros(len(keys), dtype=bool)
        opens[key_of[which]] = True
        mine = opens[key]
        at, want, seen = start[mine], firsts[which], pairs[mine]
        if size > 2:
            windows = seq[np.minimum(at[:, None] + np.arange(size), last)]
            want, seen = _hash(table[which, :size]), _hash(windows)
        order = np.argsort(want, kind="stable")
        want = want[order]
        clash = np.zeros(len(want), dtype=bool)
        clash[1:] = want[1:] == want[:-1]
        clash[:-1] |= clash[1:]
        k = np.minimum(np.searchsorted(want, seen), len(want) - 1)
        hit = (want[k] == seen) & ~clash[k]
        found, at = which[order[k[hit]]], at[hit]
        if size > 2:  # a hash names a window; its tokens decide
            same = (windows[hit] == table[found, :size]).all(axis=1)
            found, at = found[same], at[same]
        pids.append(found)
        starts.append(at)
    return np.concatenate(pids), np.concatenate(starts)


def _hash(windows: np.ndarray) -> np.ndarray:
    """Rows of tokens -> one uint64 each (wrapping arithmetic), viewed as int64."""
    import numpy as np

    h = np.zeros(len(windows), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for col in windows.T:
            h = h * np.uint64(_MIX) + col.astype(np.uint64)
    return h.view(np.int64)
