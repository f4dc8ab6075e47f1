"""Compact vector blobs: int8 (default) or float16, one blob per chunk, no JSON.

int8 blobs are scaled per vector to use the full [-127, 127] range; since search only
needs directions, the scale is not stored and vectors are re-normalised when decoded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import InvalidPackage
from .schema import QUALITY_PREFIX_META

if TYPE_CHECKING:
    import numpy as np

DTYPES = {"int8": 1, "float16": 2}


class MalformedVectors(InvalidPackage):
    """Vector blobs that do not decode to finite rows of the declared size."""


class QualitySet:
    """A package's second vector set: one row per chunk, and what made it (schema.QUALITY_META)."""

    __slots__ = ("matrix", "source", "model", "fingerprint", "dtype", "prefixes")

    def __init__(self, matrix: np.ndarray, source: str, model: str, fingerprint: str, dtype: str = "int8",
                 prefixes: tuple[str, str] = ("", "")) -> None:
        self.matrix, self.model, self.fingerprint, self.dtype = matrix, model, fingerprint, dtype
        self.source = source  # embed.quality.SOURCES
        self.prefixes = prefixes  # (query, document): what an endpoint's model was sent before each

    def meta(self) -> dict[str, str]:
        prefixes = {key: p for key, p in zip(QUALITY_PREFIX_META, self.prefixes, strict=True) if p}
        return {"quality_source": self.source, "quality_model": self.model, "quality_fingerprint": self.fingerprint,
                "quality_dim": str(self.matrix.shape[1]), "quality_dtype": self.dtype, **prefixes}


def bytes_per_vector(dtype: str, dim: int) -> int:
    return DTYPES[dtype] * dim


def encode(matrix: np.ndarray, dtype: str = "int8") -> list[bytes]:
    """Rows of a float matrix to blobs."""
    import numpy as np

    m = np.asarray(matrix, dtype=np.float32)
    if not np.isfinite(m).all():
        raise ValueError("cannot store vectors that are not finite (NaN or infinity)")
    if dtype == "int8":
        scale = np.abs(m).max(axis=1, keepdims=True)
        scale[scale == 0] = 1.0
        q = np.rint(m / scale * 127.0).astype(np.int8)
        return [row.tobytes() for row in q]
    if dtype == "float16":
        return [row.tobytes() for row in m.astype(np.float16)]
    raise ValueError(f"unknown vector dtype {dtype!r}")


def decode(raw: bytes, dtype: str, dim: int) -> np.ndarray:
    """Blobs end to end to an (n, dim) float32 matrix of unit rows (zero rows stay zero)."""
    import numpy as np

    if len(raw) % bytes_per_vector(dtype, dim):
        raise MalformedVectors("vector blobs do not match the declared size")
    stored: np.ndarray = np.frombuffer(raw, dtype=_numpy_dtype(dtype)).reshape(-1, dim)
    m = stored.astype(np.float32)
    if dtype == "int8" and dim * 128 * 128 < 2**24:
        # Squares of int8 summed in float32 are exact in any order (every partial sum is an
        # integer below 2**24, which float32 holds exactly): the norms `linalg.norm` gives,
        # without its temporary. And int8 values are always finite.
        norms = np.sqrt(np.einsum("ij,ij->i", m, m))[:, None]
    else:
        if not np.isfinite(m).all():
            raise MalformedVectors("vectors hold values that are not finite (NaN or infinity)")
        norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    m /= norms
    return m


def finite(blobs: Sequence[bytes], dtype: str, dim: int) -> bool:
    """Do these blobs hold only finite numbers? (int8 always does; float16 may hold NaN/inf.)"""
    import numpy as np

    if dtype == "int8":
        return True
    return bool(np.isfinite(np.frombuffer(b"".join(blobs), dtype=_numpy_dtype(dtype))).all())


def _numpy_dtype(dtype: str) -> type:
    import numpy as np

    return {"int8": np.int8, "float16": np.float16}[dtype]
