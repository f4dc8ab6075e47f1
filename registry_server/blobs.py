"""Package files on the local disk, named by their SHA-256 (identical uploads share one).

`FileBlobs` and `S3Blobs` (blobs_s3.py) answer the same calls, so `Storage` does not care
where the bytes live. A blob is only ever written whole (rename, or a single S3 PUT).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from context_cli.atomic import fsync_dir, fsync_file

from .records import SHA256, BlobMissing, Record, Unavailable

CHUNK = 1024 * 1024


class BlobStore(Protocol):
    """What `Storage` needs from a place that holds package files."""

    def describe(self) -> str: ...
    def open(self) -> None: ...
    def close(self) -> None: ...
    def ping(self) -> None: ...
    def has(self, sha256: str, size: int) -> bool: ...
    def put(self, path: Path, sha256: str) -> None: ...
    def delete(self, sha256: str) -> None: ...
    def listing(self) -> Iterator[tuple[str, float]]: ...
    def abort_stale_uploads(self, older_than: float) -> int: ...
    def file_path(self, sha256: str) -> Path | None: ...
    def stream(self, sha256: str) -> Iterator[bytes]: ...
    def presign(self, sha256: str, filename: str, seconds: int) -> str | None: ...
    def local_copy(self, record: Record) -> Path: ...


class FileBlobs:
    """`blobs/ab/abcdef….db` under the data folder."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def describe(self) -> str:
        return f"files:{self.root}"

    def open(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)

    def close(self) -> None:
        pass

    def ping(self) -> None:
        if not os.access(self.root, os.R_OK | os.W_OK | os.X_OK):
            raise Unavailable(f"the blob folder {self.root} is not readable and writable")

    def path(self, sha256: str) -> Path:
        if not SHA256.fullmatch(sha256):
            raise ValueError("not a SHA-256")
        return self.root / sha256[:2] / f"{sha256}.db"

    def has(self, sha256: str, size: int) -> bool:
        try:
            return self.path(sha256).stat().st_size == size
        except FileNotFoundError:
            return False

    def put(self, path: Path, sha256: str) -> None:
        """Move (or, across file systems, copy then move) a finished upload into place."""
        blob = self.path(sha256)
        blob.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(path, blob)
        except OSError:
            staged = blob.with_name(f".{blob.name}.{os.getpid()}.partial")
            shutil.copyfile(path, staged)
            fsync_file(staged)
            os.replace(staged, blob)
        fsync_dir(blob.parent)

    def delete(self, sha256: str) -> None:
        self.path(sha256).unlink(missing_ok=True)

    def listing(self) -> Iterator[tuple[str, float]]:
        for blob in self.root.glob("*/*.db"):
            if SHA256.fullmatch(blob.stem):
                try:
                    yield blob.stem, blob.stat().st_mtime
                except FileNotFoundError:
                    continue

    def abort_stale_uploads(self, older_than: float) -> int:
        return 0  # a file is renamed in whole; there is nothing half-made here

    def file_path(self, sha256: str) -> Path | None:
        return self.path(sha256)

    def stream(self, sha256: str) -> Iterator[bytes]:
        try:
            f = open(self.path(sha256), "rb")
        except FileNotFoundError:
            raise BlobMissing(sha256) from None
        with f:
            while chunk := f.read(CHUNK):
                yield chunk

    def presign(self, sha256: str, filename: str, seconds: int) -> str | None:
        return None  # files are served by this process

    def local_copy(self, record: Record) -> Path:
        blob = self.path(record.sha256)
        if not blob.exists():
            raise BlobMissing(record.sha256)
        return blob


