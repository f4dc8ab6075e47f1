"""Compact vector blobs: int8 (default) or float16, one blob per chunk, no JSON.

int8 blobs are scaled per vector to use the full [-127, 127] range; since search only
needs directions, the scale is not stored and vectors are re-normalised when decoded.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

DTYPES = {"int8": 1, "float16": 2}


def bytes_per_vector(dtype: str, dim: int) -> int:
    return DTYPES[dtype] * dim


def encode(matrix: np.ndarray, dtype: str = "int8") -> list[bytes]:
    """Rows of a float matrix to blobs."""
    import numpy as np

    m = np.asarray(matrix, dtype=np.float32)
    if dtype == "int8":
        scale = np.abs(m).max(axis=1, keepdims=True)
        scale[scale == 0] = 1.0
        q = np.rint(m / scale * 127.0).astype(np.int8)
        return [row.tobytes() for row in q]
    if dtype == "float16":
        return [row.tobytes() for row in m.astype(np.float16)]
    raise ValueError(f"unknown vector dtype {dtype!r}")


def decode(blobs: Iterable[bytes], dtype: str, dim: int) -> np.ndarray:
    """Blobs to an (n, dim) float32 matrix of unit rows (zero rows stay zero)."""
    import numpy as np

    np_dtype = {"int8": np.int8, "float16": np.float16}[dtype]
    raw = b"".join(blobs)
    m = np.frombuffer(raw, dtype=np_dtype).astype(np.float32).reshape(-1, dim)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms
