"""Cosine search over a package's vectors, held as one float32 matrix per process."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..package import vectors as vec

if TYPE_CHECKING:
    import numpy as np


@dataclass
class VectorIndex:
    ids: np.ndarray  # chunk ids, aligned with rows
    matrix: np.ndarray  # (n, dim) float32, unit rows

    @classmethod
    def load(cls, db: sqlite3.Connection, dim: int, dtype: str) -> VectorIndex:
        import numpy as np

        rows = db.execute("SELECT chunk_id, vector FROM vectors ORDER BY chunk_id").fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = vec.decode((r[1] for r in rows), dtype, dim) if rows else np.zeros((0, dim), np.float32)
        return cls(ids=ids, matrix=matrix)

    def positions(self, chunk_ids: list[int]) -> np.ndarray:
        """Row of each chunk id, -1 where it has no vector (ids are sorted: binary search)."""
        import numpy as np

        want = np.asarray(chunk_ids, dtype=np.int64)
        rows = np.searchsorted(self.ids, want)
        rows[rows >= len(self.ids)] = 0
        found = self.ids[rows] == want if len(self.ids) else np.zeros(len(want), dtype=bool)
        return np.where(found, rows, -1)

    def scores(self, query: np.ndarray) -> np.ndarray:
        return self.matrix @ query

    def top(self, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(chunk id, cosine), best first."""
        import numpy as np

        if not len(scores):
            return []
        k = min(k, len(scores))
        idx = np.argpartition(-scores, k - 1)[:k]
        idx = idx[np.argsort(-scores[idx])]
        return [(int(self.ids[i]), float(scores[i])) for i in idx]
