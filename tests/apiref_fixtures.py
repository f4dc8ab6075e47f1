"""Real releases unpacked for the API-reference tests (tests/fixtures/apiref/README.md)."""

from __future__ import annotations

import tarfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "apiref"


def unpack_sdist(name: str, dest: Path) -> Path:
    """Unpack `tests/fixtures/apiref/NAME.tar.gz` under `dest`; return its top folder."""
    with tarfile.open(FIXTURES / f"{name}.tar.gz") as tar:
        tar.extractall(dest, filter="data")
    return dest / name
