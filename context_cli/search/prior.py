"""Which package a query is about, from what each package is about, before any ranking.

Searched together, every package offers its best sections whatever the question; the one
the question is about should weigh more. Three pieces of evidence, each cheap to keep per
package (a `Signature`):

- its **name and aliases** named in the query ("fastapi: how do i ...");
- its **vocabulary**: how much likelier the query's terms are in this package's sections than
  in the others' (a smoothed per-section term probability against the packages' mean, summed
  over the query's terms; terms no package has say nothing);
- its **dense centroid**: the query vector's cosine with the mean of the package's section
  vectors, against the other packages' (the same model's vectors only).

`scores` gives each package a log-weight; `weights` turns them into factors (the best package
1.0) for the engine to multiply a package's fused scores by. This module only scores; where
the factors go is the engine's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

NAME_WEIGHT = 3.0  # a package the query names
VOCAB_WEIGHT = 1.0  # per unit of mean log-likelihood ratio per query term
CENTROID_WEIGHT = 0.0  # per unit of cosine above the mean: off, measured to lose (bench/scout_prior.py)
SMOOTH = 0.5  # added to each term's section count
_SPLIT = re.compile(r"[-_.\s]+")


@dataclass(frozen=True)
class Signature:
    """What one package is about: its names, its terms' section counts, its centroid."""

    names: frozenset[str]  # lower-case words that name it: "sqlalchemy", "sqla"
    df: Mapping[str, int]  # FTS5 term -> sections holding it (`bm25_terms`)
    sections: int
    centroid: np.ndarray | None = None  # unit mean of its section vectors
    model: str = ""  # the centroid's embedding model


def signature(name: str, rows: Iterable[tuple[str, int]], sections: int, vectors: np.ndarray | None = None,
              model: str = "", aliases: Iterable[str] = ()) -> Signature:
    """A package's signature from its name, `SELECT term, df FROM bm25_terms`, its section
    count and (optionally) its vector matrix (rows of unit vectors)."""
    names = {name.lower(), *(a.lower() for a in aliases)}
    names |= {p for n in list(names) for p in _SPLIT.split(n) if len(p) >= 4}
    centroid = None
    if vectors is not None and len(vectors):
        import numpy as np

        mean = np.asarray(vectors, dtype=np.float64).mean(axis=0)
        norm = float(np.linalg.norm(mean))
        centroid = (mean / norm).astype(np.float32) if norm > 0 else None
    return Signature(frozenset(names), dict(rows), max(sections, 1), centroid, model)


def scores(words: Sequence[str], terms: Sequence[str], signatures: Sequence[Signature],
           query_vector: np.ndarray | None = None, model: str = "",
           parts: tuple[float, float, float] = (NAME_WEIGHT, VOCAB_WEIGHT, CENTROID_WEIGHT)) -> list[float]:
    """Each package's log-weight for a query: `words` are its lower-case words (to find a
    package's name), `terms` its FTS5 terms (stemmed, stopwords out), `query_vector` its
    embedding by `model` (the centroids of other models are not compared). `parts` weigh
    the name, vocabulary and centroid evidence."""
    name_weight, vocab_weight, centroid_weight = parts
    n = len(signatures)
    out = [0.0] * n
    if n < 2:
        return out
    said = set(words)
    for i, sig in enumerate(signatures):
        if sig.names & said:
            out[i] += name_weight
    for t in dict.fromkeys(terms):
        logs = [math.log((sig.df.get(t, 0) + SMOOTH) / (sig.sections + 1)) for sig in signatures]
        if not any(t in sig.df for sig in signatures):
            continue
        mean = sum(logs) / n
        for i, lp in enumerate(logs):
            out[i] += vocab_weight * (lp - mean) / max(len(terms), 1)
    if query_vector is not None and centroid_weight:
        cos = [float(sig.centroid @ query_vector) if sig.centroid is not None and sig.model == model else None
               for sig in signatures]
        known = [c for c in cos if c is not None]
        if len(known) == n:
            mean = sum(known) / n
            for i, c in enumerate(known):
                out[i] += centroid_weight * (c - mean)
    return out


def weights(log_weights: Sequence[float], strength: float = 1.0) -> list[float]:
    """Factors in (0, 1], the most likely package's 1.0: exp(strength x (score - best))."""
    if not log_weights:
        return []
    best = max(log_weights)
    return [math.exp(strength * (s - best)) for s in log_weights]
