"""Server storage that loses nothing: an index (SQLite or PostgreSQL) plus content-addressed blobs.

Default layout under the data folder:

    blobs/ab/abcdef….db   package files, named by their SHA-256 (identical uploads share one)
    tmp/                  uploads in flight, named after the process that receives them
    locks/                one lock file per running server process (flock, freed at death)
    registry.sqlite       one row per (registry, name, version) and an FTS5 index

A publish streams into `tmp/`, is validated, and is then committed in one index transaction
that holds a lock on the version and on the blob: the blob is written (if not already
there), then the row. So of two replicas publishing one version at once, the second sees
the first's row and answers 409 without writing a blob. A crash before the commit leaves
either nothing (the upload in `tmp/` of a dead process, removed at the next start-up) or an
unreferenced blob, which `sweep` removes once it is older than the grace period.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Protocol

from context_cli.errors import InvalidPackage
from context_cli.package.identity import PackageId
from context_cli.package.reader import open_package

from .blobs import BlobStore, FileBlobs
from .records import (
    MAX_DESCRIPTION,
    MAX_META_VALUE,
    MUTABLE_VERSIONS,
    Conflict,
    Outcome,
    Record,
    Rejected,
    Unavailable,
    check_query,
)

# Re-exported: pages and tests import the record types from here, beside `Storage`.
__all__ = ["MUTABLE_VERSIONS", "Conflict", "Index", "Outcome", "Record", "Rejected", "Storage",
           "StorageConfig", "Unavailable", "Upload", "open_storage"]
log = logging.getLogger("registry_server")
ORPHAN_GRACE = 3600.0  # seconds an unreferenced blob may be an upload still being committed


class Txn(Protocol):
    def get(self, pid: PackageId) -> Record | None: ...
    def save(self, record: Record) -> None: ...
    def referenced(self, sha256: str) -> bool: ...


class Index(Protocol):
    """What `Storage` needs from an index (index_sqlite.py, index_postgres.py)."""

    def describe(self) -> str: ...
    def open(self) -> None: ...
    def close(self) -> None: ...
    def ping(self) -> None: ...
    def generation(self) -> object | None: ...
    def get(self, pid: PackageId) -> Record | None: ...
    def versions(self, registry: str, name: str, version: str | None = None) -> list[Record]: ...
    def count(self) -> int: ...
    def catalogue(self, limit: int) -> list[list[Record]]: ...
    def text_search(self, query: str, limit: int) -> list[list[Record]]: ...
    def all_records(self) -> list[Record]: ...
    def referenced_shas(self) -> set[str]: ...
    def transaction(self, locks: list[str]) -> AbstractContextManager[Txn]: ...


@dataclass(frozen=True)
class StorageConfig:
    """Where the index and the blobs live; `None` means "in the data folder"."""

    data_dir: Path | None = None
    database: str | None = None
    blobs: str | None = None
    s3_endpoint: str | None = None
    db_pool: int = 20

    def __post_init__(self) -> None:
        if self.data_dir is None and not (self.database and self.blobs):
            raise ValueError("--data is needed unless both --database and --blobs are given")


class Upload:
    """A temp file that an upload streams into, hashing as it goes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.size = 0
        self._hash = hashlib.sha256()
        self._file = open(path, "wb")

    def write(self, data: bytes) -> None:
        self._file.write(data)
        self._hash.update(data)
        self.size += len(data)

    def finish(self) -> str:
        """Flush to disk and return the SHA-256; the bytes are durable before any rename."""
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        return self._hash.hexdigest()

    def discard(self) -> None:
        if not self._file.closed:
            self._file.close()
        _remove_with_sidecars(self.path)


class Scratch:
    """This process's local folder for uploads in flight, told apart from other processes'.

    Each process holds an flock on `locks/<token>.lock`; the kernel frees it when the process
    dies (even by SIGKILL), so start-up removes exactly the uploads of dead processes and
    never those of a live server sharing the folder.
    """

    def __init__(self, root: Path | None) -> None:
        self.owned = root is None
        self.root = Path(tempfile.mkdtemp(prefix="context-registry-")) if root is None else Path(root)
        self.tmp = self.root / "tmp"
        self.locks = self.root / "locks"
        self.token = os.urandom(6).hex()
        self._lock_file: IO[bytes] | None = None

    def open(self) -> None:
        for folder in (self.root, self.tmp, self.locks):
            folder.mkdir(parents=True, exist_ok=True)
        lock = open(self.locks / f"{self.token}.lock", "wb")
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._lock_file = lock
        self.remove_dead()

    def close(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()
            (self.locks / f"{self.token}.lock").unlink(missing_ok=True)
            self._lock_file = None
        if self.owned:
            shutil.rmtree(self.root, ignore_errors=True)

    def new_path(self) -> Path:
        return self.tmp / f"upload-{self.token}-{os.urandom(8).hex()}.db"

    def remove_dead(self) -> None:
        """Drop uploads (and lock files) of processes that no longer run."""
        alive = {self.token}
        for lock in self.locks.glob("*.lock"):
            if lock.stem != self.token and not _is_locked(lock):
                lock.unlink(missing_ok=True)
            elif lock.stem != self.token:
                alive.add(lock.stem)
        for stray in self.tmp.iterdir():
            owner = re.fullmatch(r"upload-([0-9a-f]+)-.*", stray.name)
            if owner is None or owner.group(1) not in alive:
                _remove_tree_entry(stray)


class Storage:
    """An index and a blob store, opened once (the app's lifespan) and shared by requests."""

    def __init__(self, root: Path | None = None, *, index: Index | None = None,
                 blobs: BlobStore | None = None) -> None:
        if root is None and (index is None or blobs is None):
            raise ValueError("a data folder is needed for the default index or blobs")
        self.root = Path(root) if root is not None else None
        if index is None:
            from .index_sqlite import SqliteIndex

            assert self.root is not None
            index = SqliteIndex(self.root / "registry.sqlite")
        if blobs is None:
            assert self.root is not None
            blobs = FileBlobs(self.root / "blobs")
        self.index: Index = index
        self.blobs: BlobStore = blobs
        self.scratch = Scratch(self.root)
        self._housekeeping = threading.Lock()  # a sweep and close() never overlap
        self._closed = False

    @property
    def inline_reads(self) -> bool:
        """Index reads cheap enough to run on the event loop (the local SQLite file)."""
        return bool(getattr(self.index, "inline_reads", False))

    @property
    def tmp(self) -> Path:
        return self.scratch.tmp

    def describe(self) -> str:
        return f"index {self.index.describe()}, blobs {self.blobs.describe()}"

    # -- lifecycle -------------------------------------------------------------------

    def open(self) -> None:
        self.scratch.open()
        self.index.open()
        self.blobs.open()

    def close(self) -> None:
        """Waits for a sweep in progress: closing SQLite under a running query crashes."""
        with self._housekeeping:
            self._closed = True
            self.index.close()
            self.blobs.close()
            self.scratch.close()

    def health(self) -> dict[str, str]:
        """`ok` or the reason, per store: what `/health` shows."""
        out = {}
        for part, store in (("database", self.index), ("blobs", self.blobs)):
            try:
                store.ping()
                out[part] = "ok"
            except Unavailable as e:
                out[part] = str(e)
        return out

    # -- reading ---------------------------------------------------------------------

    def generation(self) -> object | None:
        """A token that changes whenever a commit (by any replica) may change what the reads
        below return, or None when the index cannot tell; cheap enough for every request."""
        return self.index.generation()

    def get(self, pid: PackageId) -> Record | None:
        return self.index.get(pid)

    def versions(self, registry: str, name: str, version: str | None = None) -> list[Record]:
        """Every version of one package (or just `version`), newest first."""
        return self.index.versions(registry, name, version)

    def count(self) -> int:
        return self.index.count()

    def catalogue(self, limit: int = 500) -> list[list[Record]]:
        """Packages grouped by (registry, name), each group newest first, sorted by name."""
        return self.index.catalogue(limit)

    def text_search(self, query: str, limit: int = 20) -> list[list[Record]]:
        """Full-text search over names and descriptions; one group per package, best first.
        `QueryTooLong` for a query over the bounds, whichever index is behind."""
        check_query(query)
        return self.index.text_search(query, limit)

    def local_copy(self, record: Record) -> Path:
        """A local, read-only file of the package (the blob itself, or a verified cached copy)."""
        return self.blobs.local_copy(record)

    # -- publishing ------------------------------------------------------------------

    def new_upload(self) -> Upload:
        return Upload(self.scratch.new_path())

    def publish(self, pid: PackageId, upload: Upload, sha256: str) -> Outcome:
        """Validate a finished upload, then commit blob and row. Consumes `upload`."""
        try:
            existing = self.index.get(pid)
            if existing and existing.sha256 == sha256:
                return Outcome(existing, "unchanged")
            if existing and pid.version not in MUTABLE_VERSIONS:
                raise Conflict(f"{pid.qualified} is already published with different content; "
                               "versions are immutable, publish a new version")
            meta, chunks = _validate(upload.path, pid)
            stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            record = Record.build(pid.registry, pid.name, pid.version, sha256, upload.size, chunks,
                                  meta.get("description", "")[:MAX_DESCRIPTION], stamp, meta)
            outcome, replaced = self.commit(record, upload.path)
        finally:
            upload.discard()
        if replaced:
            self.drop_if_unreferenced(replaced)
        return outcome

    def commit(self, record: Record, path: Path) -> tuple[Outcome, str | None]:
        """Blob then row, under locks on both; returns the outcome and a blob it may have freed."""
        pid = record.id
        with self.index.transaction([f"package:{pid.qualified}", f"blob:{record.sha256}"]) as tx:
            old = tx.get(pid)
            if old and old.sha256 == record.sha256:
                return Outcome(old, "unchanged"), None
            if old and pid.version not in MUTABLE_VERSIONS:
                raise Conflict(f"{pid.qualified} is already published with different content; "
                               "versions are immutable, publish a new version")
            if not self.blobs.has(record.sha256, record.size):  # absent, or damaged
                self.blobs.put(path, record.sha256)
            tx.save(record)
        return Outcome(record, "replaced" if old else "created"), (old.sha256 if old else None)

    def drop_if_unreferenced(self, sha256: str) -> bool:
        """Delete a blob no version points at, locked against a publish adopting it meanwhile."""
        with self.index.transaction([f"blob:{sha256}"]) as tx:
            if tx.referenced(sha256):
                return False
            self.blobs.delete(sha256)
            return True

    # -- housekeeping ----------------------------------------------------------------

    def unrecorded_blobs(self) -> list[str]:
        """SHA-256s of blobs no version points at (a crash between blob and row)."""
        known = self.index.referenced_shas()
        return sorted(sha for sha, _ in self.blobs.listing() if sha not in known)

    def sweep(self, grace: float = ORPHAN_GRACE) -> int:
        """Remove unreferenced blobs and abandoned multipart uploads older than `grace` seconds.

        An empty index over a non-empty blob store is left alone: that is a lost or
        unrestored database, and its package files must not go with it.
        """
        with self._housekeeping:
            return 0 if self._closed else self._sweep(grace)

    def _sweep(self, grace: float) -> int:
        known = self.index.referenced_shas()
        listing = list(self.blobs.listing())
        if not known and listing:
            log.warning("the index is empty but %s holds %d blob(s): not sweeping",
                        self.blobs.describe(), len(listing))
            return 0
        cutoff = time.time() - grace
        removed = sum(1 for sha, mtime in listing
                      if sha not in known and mtime < cutoff and self.drop_if_unreferenced(sha))
        return removed + self.blobs.abort_stale_uploads(cutoff)


def open_storage(config: StorageConfig) -> Storage:
    """Build (not open) the storage the options describe; engines are imported only if used."""
    index: Index | None = None
    blobs: BlobStore | None = None
    if config.database:
        from .index_postgres import PostgresIndex

        index = PostgresIndex(config.database, max_size=config.db_pool)
    if config.blobs:
        from .blobs_s3 import S3Blobs

        cache = (config.data_dir / "cache") if config.data_dir else None
        blobs = S3Blobs.from_url(config.blobs, endpoint=config.s3_endpoint, cache_dir=cache)
    return Storage(config.data_dir, index=index, blobs=blobs)


# -- helpers --------------------------------------------------------------------------

def _validate(path: Path, pid: PackageId) -> tuple[dict[str, str], int]:
    """A real package whose meta names this URL's package; returns the meta worth keeping."""
    try:
        with open_package(path, registry=pid.registry, deep=True) as pkg:
            meta, chunks = dict(pkg.meta), pkg.chunk_count()
    except InvalidPackage as e:
        raise Rejected(str(e).replace(path.name, "upload")) from None
    finally:
        _remove_sidecars(path)
    if meta["name"] != pid.name or meta["version"] != pid.version:
        raise Rejected(f"the file is {meta['name']}@{meta['version']} but the URL says "
                       f"{pid.name}@{pid.version}")
    own = meta.get("registry")
    if own and own not in ("local", pid.registry):
        raise Rejected(f"the file says registry {own!r} but the URL says {pid.registry!r}")
    kept = {k: v for k, v in meta.items() if len(k) <= 64 and len(v) <= MAX_META_VALUE}
    kept["registry"] = pid.registry
    return kept, chunks


def _is_locked(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(f, fcntl.LOCK_UN)
            return False
    except FileNotFoundError:
        return False


def _remove_sidecars(path: Path) -> None:
    for suffix in ("-wal", "-shm", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def _remove_with_sidecars(path: Path) -> None:
    path.unlink(missing_ok=True)
    _remove_sidecars(path)


def _remove_tree_entry(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
