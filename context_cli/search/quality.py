"""A package's quality vectors in a search: their cosines mixed with the static ones'.

A package may carry a second vector set from a transformer (docs/quality-vectors.md). Where
this machine can embed queries for it, the package's dense ranking is neither model's alone:
each candidate of either model's best `pool` gets `quality_share` x its quality z-score plus
the rest x its static z-score (a section one model has no vector for counts 0 there), and
the best `pool` of those are the package's dense candidates, fused with BM25 as any package's
are (docs/search.md, "The ranking rules", 1).

Measured on the tuning sets (bench/retrieval.py, hybrid, every package carrying both sets),
question-style page Hit@1 over the ten graded sets, static alone -> mixed 1 : 1: 0.600 ->
0.620, no set down; the quality set in place of the static one: 0.614, with starlight,
trpc and vue down 0.027-0.032 and crosslib without a library unchanged (0.854), where the
mix gives 0.876 (with the library 0.882).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from ..embed.quality import TextEmbedder
    from .dense import DenseHits


class MixedHits:
    """One package's dense answer from both vector sets (what `DenseHits` answers): its best
    candidates by the mixed z-score; a section's own `z` signal stays the static model's, on
    which the verdict's thresholds were measured. Across packages, the quality set's cosines
    weigh the packages (`model`, `best_cosine`): all of them must carry it."""

    def __init__(self, static: DenseHits, quality: DenseHits, share: float) -> None:
        self.static, self.quality, self.share = static, quality, share
        self.usable = static.usable or quality.usable
        self.model: TextEmbedder = quality.model
        self.best_cosine = quality.best_cosine

    def top(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, mixed z) of the `k` best of both models' best `k`, best first (ties:
        the static model's order, then the quality set's new ones)."""
        import numpy as np

        a, _ = self.static.top(k)
        b, _ = self.quality.top(k)
        ids = np.concatenate((a, b[~np.isin(b, a)]))
        z = (1 - self.share) * _z(self.static, ids) + self.share * _z(self.quality, ids)
        best = (-z).argsort(kind="stable")[:k]
        return ids[best], z[best]

    def z_of(self, cid: int) -> float | None:
        return self.static.z_of(cid)

    def row_deviations(self) -> tuple[np.ndarray, int] | None:
        return self.static.row_deviations()


def _z(hits: DenseHits, ids: np.ndarray) -> np.ndarray:
    """Each section's z-score among this model's cosines (0 where it has no vector, or the
    model no usable z-scores)."""
    import numpy as np

    if not hits.usable or not len(ids):
        return np.zeros(len(ids))
    rows = hits.index.positions(ids.tolist())
    z = hits.stats.z(np.maximum(rows, 0))
    return np.where(rows >= 0, z, 0.0)
