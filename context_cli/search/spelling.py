"""Spelling correction of a query term against one package's own vocabulary.

A term the package does not hold ("parralel") matches nothing lexically; the frequent term a
small edit away ("parallel") usually is what was meant. Only the package's own words are
candidates, so a correction never leaves the package's language.

Terms are compared as the package stores them (FTS5 `porter unicode61` stems, the `term`
column of `bm25_terms`), so the caller stems the query word first and gets a stem back. The
lookup is a symmetric-delete index (SymSpell's idea): every frequent term is filed under
itself and its one-letter deletes; a query term looks up its deletes up to two letters, and the
few candidates found are checked with the Damerau (optimal string alignment) distance.
Deleting one letter on the term's side and up to two on the query's finds every candidate at
distance 1 and the distance-2 ones except two substitutions, or a substitution beside a
transposition, a trade for an index a third the size.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
from typing import TYPE_CHECKING

from .english import english_words

if TYPE_CHECKING:
    from .query import Query

MIN_LENGTH = 5  # shorter words are corrected never: too many neighbours ("vite" -> "site")
LONG_LENGTH = 8  # from this length two edits are allowed, below it one
MIN_DF = 3  # a correction must be a term of at least this many sections
RATIO = 2  # ... and this many times as frequent as any neighbour it beats on frequency alone


def allowed_distance(term: str) -> int:
    """The edits a term may be corrected by: 0 for short words, numbers and identifiers
    (digits or underscores: `utf8`, `max_length` are meant as typed), else by length."""
    if len(term) < MIN_LENGTH or not term.isalpha():
        return 0
    return 2 if len(term) >= LONG_LENGTH else 1


def distance(a: str, b: str, limit: int) -> int:
    """Damerau (optimal string alignment) distance of `a` and `b`, or `limit + 1` when it
    exceeds `limit` (the rows stop early)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    if a == b:
        return 0
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = ca != cb
            d = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                d = min(d, prev2[j - 2] + 1)
            cur[j] = d
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return min(prev[-1], limit + 1)


def plausible(term: str, cand: str) -> bool:
    """Whether `cand` may be a typo's fix: typists rarely get the first letter wrong, and a
    term that is a known one with letters added at an end is a compound or a derived word
    ("ontrack", "reconnect", "thrown"), not a typo."""
    return term[0] == cand[0] and not (cand in term and len(cand) < len(term))


def _deletes(term: str, depth: int) -> set[str]:
    """`term` and every string made from it by deleting up to `depth` letters."""
    out = {term}
    edge = {term}
    for _ in range(depth):
        edge = {w[:i] + w[i + 1:] for w in edge for i in range(len(w))} - out
        out |= edge
    return out


class Vocabulary:
    """A package's terms with their document frequencies, and the delete index over the
    frequent ones (made once per package and process by `of`)."""

    __slots__ = ("df", "index")

    def __init__(self, df: dict[str, int], index: dict[str, tuple[str, ...]]) -> None:
        self.df, self.index = df, index  # index: a frequent term or one of its one-letter deletes -> terms

    @classmethod
    def of(cls, rows: Iterable[tuple[str, int]]) -> Vocabulary:
        """From `(term, df)` rows: `SELECT term, df FROM bm25_terms` (no postings read)."""
        df = dict(rows)
        index: dict[str, list[str]] = {}
        for term, n in df.items():
            if n >= MIN_DF and len(term) >= MIN_LENGTH - 1 and term.isalpha():
                for key in _deletes(term, 1):
                    index.setdefault(key, []).append(term)
        return cls(df, {k: tuple(v) for k, v in index.items()})

    def correct(self, term: str) -> str | None:
        """The term `term` was probably meant as, or None: `term` is in the vocabulary, may
        not be corrected (`allowed_distance`), or no frequent term is near enough. Among the
        candidates the nearest wins, then the most frequent; a tie within `RATIO` of the most
        frequent at the nearest distance is no correction (the user's intent is unclear)."""
        limit = allowed_distance(term)
        if not limit or term in self.df:
            return None
        found: dict[str, int] = {}
        for key in _deletes(term, limit):
            for cand in self.index.get(key, ()):
                if cand not in found:
                    found[cand] = distance(term, cand, limit)
        near = [(d, -self.df[c], c) for c, d in found.items() if d <= limit and plausible(term, c)]
        if not near:
            return None
        near.sort()
        best_d, best_df, best = near[0]
        rival = next((df for d, df, _ in near[1:] if d == best_d), None)
        if rival is not None and -best_df < RATIO * -rival:
            return None
        return best


def corrections(query: Query, found: Sequence[object | None], vocabulary: Callable[[str], Vocabulary | None],
                held: Container[str] = ()) -> list[tuple[str, str]]:
    """(word, the package's term it was probably meant as) for each word of `query` the package
    lacks (`found`: each term's posting, None where the package has none) that may be
    corrected: not a term another package of the search holds (`held`), nor an English word.
    `vocabulary(letter)` gives the package's terms of that first letter (a correction keeps
    it), read only for such a word. The correction is searched beside the word, never instead
    of it: a word frequent elsewhere but absent here is "corrected" 6-8 % of the time (react
    -> reach)."""
    lacking = [t for t, posting in zip(query.terms, found, strict=False)
               if posting is None and t not in held and allowed_distance(t)]
    if not lacking or not (lacking := [t for t in lacking if t not in english_words()]):
        return []
    tokens = query.unit_tokens
    return [(t, fix) for t in lacking for token in tokens[t]
            if (vocab := vocabulary(token[:1])) is not None and (fix := vocab.correct(token)) is not None]
