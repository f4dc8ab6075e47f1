"""Which package a question is about, from what each package is, in a search over several.

Searched together, every package offers its best sections whatever the question; the one the
question is about should weigh more. Two pieces of evidence, both known once BM25 has looked
the question's terms up in each package (no extra read):

- its **name** in the question ("fastapi: how do i ...", `Query.names_library`);
- its **vocabulary**: how much likelier the question's terms are in this package's text than
  in the others' (a smoothed share of its sections holding the term, per token of its mean
  section, against the packages' mean, averaged over the terms every package was asked; a
  term no package has says nothing). Per token, because a package of long sections holds
  every word in more of them: per section, the packages of long pages (Flask's) drew the
  questions of the others. The question's phrases count as terms (a split identifier's or
  hyphenated word's parts in a row, `send_file`, `built-in`): two packages may both hold
  send and file, and only one `send_file`.

`log_weights` gives each package a log-weight; `rank.package_priors` turns them into factors
(the best package 1.0) beside the cosine prior. A third piece, each package's dense centroid,
was measured and left out: alone it picks the right library 0.393 of the time, and any weight
on it lost (bench/sets/README.md, "Package prior").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

SMOOTH = 0.5  # added to each term's section count


def log_weights(named: Sequence[bool], df: Sequence[Mapping[str, int]], sections: Sequence[int],
                lengths: Sequence[float] | None, name_weight: float, vocabulary_weight: float) -> list[float]:
    """Each package's log-weight: `name_weight` if the question names it, plus
    `vocabulary_weight` x the mean, over the terms (and phrases) every package was asked (`df`: term ->
    sections holding it, of `sections`), of log((df + SMOOTH) / (sections + 1) / its mean
    section's tokens) less the packages' mean. Without every package's `lengths`, the name only."""
    out = [name_weight if said else 0.0 for said in named]
    if len(df) < 2 or not vocabulary_weight or lengths is None:
        return out
    common = set(df[0]).intersection(*df[1:])
    shared = [t for t in df[0] if t in common]
    if not shared:
        return out
    import numpy as np

    counts = np.array([[d[t] for t in shared] for d in df], dtype=np.float64)  # packages x terms
    scale = (np.maximum(np.asarray(sections, dtype=np.float64), 1) + 1) * np.maximum(np.asarray(lengths), 1.0)
    logs = np.log((counts + SMOOTH) / scale[:, None])
    said = counts.any(axis=0)  # (a term no package holds says nothing, but is counted)
    vocab = (logs - logs.mean(axis=0))[:, said].sum(axis=1) * (vocabulary_weight / len(shared))
    return [o + v for o, v in zip(out, vocab.tolist(), strict=True)]


def weights(log_weights: Sequence[float]) -> list[float]:
    """Factors in (0, 1], the most likely package's 1.0: exp(score - best)."""
    if not log_weights:
        return []
    best = max(log_weights)
    return [math.exp(s - best) for s in log_weights]
