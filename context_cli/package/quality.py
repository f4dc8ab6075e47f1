"""A package's second vector set, ready for search: its vectors and the embedder for queries.

Search calls `load_quality` once per package (it reads every vector, like `Package.vectors`).
It answers the set and the model that made it, or nothing and a note saying why the static
vectors are used instead: the extra or the model missing on this machine, a set that names a
model we do not know or other weights, a table of the wrong dimension or damaged rows. None of
these is an error: the package stays searchable as it was without the set.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InvalidPackage, ModelUnavailable

if TYPE_CHECKING:
    import numpy as np

    from ..embed.quality import TextEmbedder
    from .reader import Package


@dataclass(frozen=True)
class QualityVectors:
    """The set (chunk ids ascending, (n, dim) float32 unit rows) and the embedder for queries."""

    model: TextEmbedder
    ids: np.ndarray
    matrix: np.ndarray


def load_quality(pkg: Package) -> tuple[QualityVectors | None, str | None]:
    """(the set, None) when it can be used; (None, None) when the package has none; (None, a
    note) when it has one that cannot be used here, and search uses the static vectors."""
    meta = pkg.meta
    if not pkg.has_quality:
        return None, ("its quality vectors are malformed; searched with the static vectors"
                      if any(k.startswith("quality_") for k in meta) else None)
    from ..embed.quality import query_embedder

    try:
        model = query_embedder(meta["quality_source"], meta["quality_model"], meta.get("quality_fingerprint", ""),
                               int(meta["quality_dim"]), meta.get("quality_query_prefix", ""))
    except ModelUnavailable as e:
        return None, f"{e}; searched with the static vectors"
    try:
        ids, matrix = pkg.quality_vectors()
    except (InvalidPackage, sqlite3.Error) as e:  # (MalformedVectors, too slow, a damaged table)
        return None, f"its quality vectors are unusable ({e}); searched with the static vectors"
    return QualityVectors(model, ids, matrix), None
