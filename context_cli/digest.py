"""The SHA-256 of a file, read in blocks: how packages are identified by content everywhere
(registry checksums, `.context/docs.lock`, update checks)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
