"""Server storage that loses nothing: content-addressed blobs plus an SQLite (WAL) index.

Layout under the data folder:

    blobs/ab/abcdef….db   package files, named by their SHA-256 (identical uploads share one)
    tmp/                  uploads in flight; emptied at start-up
    registry.sqlite       one row per (registry, name, version) and an FTS5 index

A publish streams into `tmp/`, is validated, renamed into `blobs/` and only then recorded
in SQLite. A crash at any point leaves either the old row (still pointing at its blob) or
the new one; stray temp files and unrecorded blobs are removed at the next start-up.
Commits run under one lock, so the server must run as a single process (one worker).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from context_cli.errors import InvalidPackage
from context_cli.package.identity import PackageId
from context_cli.package.reader import open_package
from context_cli.store.versions import version_key

MUTABLE_VERSIONS = frozenset({"latest"})
MAX_DESCRIPTION = 1000
MAX_META_VALUE = 2000
MAX_QUERY_TERMS = 16

SCHEMA = """
CREATE TABLE IF NOT EXISTS packages (
  id INTEGER PRIMARY KEY,
  registry TEXT NOT NULL,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  size INTEGER NOT NULL,
  chunks INTEGER NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  meta TEXT NOT NULL,
  published_at TEXT NOT NULL,
  UNIQUE (registry, name, version)
);
CREATE INDEX IF NOT EXISTS packages_sha ON packages(sha256);
CREATE VIRTUAL TABLE IF NOT EXISTS packages_fts USING fts5(
  name, description, tokenize='unicode61 remove_diacritics 2'
);
"""


class Conflict(Exception):
    """A published version re-sent with different bytes (versions are immutable)."""


class Rejected(Exception):
    """An upload that is not a package, or whose meta does not match its URL."""


@dataclass(frozen=True)
class Record:
    """One published package version as the index knows it."""

    registry: str
    name: str
    version: str
    sha256: str
    size: int
    chunks: int
    description: str
    published_at: str
    meta: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def id(self) -> PackageId:
        return PackageId(self.registry, self.name, self.version)

    def summary(self) -> dict[str, Any]:
        """A `/search` entry: Context's fields (`size` and SERVER_API's `sizeBytes`) plus ours."""
        entry: dict[str, Any] = {"name": self.name, "registry": self.registry, "version": self.version}
        if self.description:
            entry["description"] = self.description
        entry.update(size=self.size, sizeBytes=self.size, sha256=self.sha256)
        return entry

    def metadata(self) -> dict[str, Any]:
        """`GET /packages/R/N/V`: the package's own meta keys, then the server's facts on top."""
        out: dict[str, Any] = {k: v for k, v in self.meta.items()}
        out.update(self.summary())
        out.update(sectionCount=self.chunks, published_at=self.published_at)
        return out


@dataclass(frozen=True)
class Outcome:
    """What a publish did: `created`, `replaced` (a mutable version moved) or `unchanged`."""

    record: Record
    status: str


class Upload:
    """A temp file in the data folder that an upload streams into, hashing as it goes."""

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


class Storage:
    """The data folder: open it once (the app's lifespan), share it between requests."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.blobs = self.root / "blobs"
        self.tmp = self.root / "tmp"
        self.db_path = self.root / "registry.sqlite"
        self._lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._writer: sqlite3.Connection | None = None

    # -- lifecycle -------------------------------------------------------------------

    def open(self) -> None:
        """Create the layout and drop uploads a crash left in `tmp/`.

        Unrecorded blobs (a crash between rename and commit) are kept, not deleted: they
        are complete files, are adopted if the same bytes are published again, and a lost
        or restored index must never cost the package files themselves.
        """
        for folder in (self.root, self.blobs, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)
        self._writer = _connect(self.db_path)
        self._writer.execute("PRAGMA journal_mode=WAL")
        self._writer.executescript(SCHEMA)
        self._writer.commit()
        for stray in self.tmp.iterdir():
            _remove_tree_entry(stray)

    def unrecorded_blobs(self) -> list[Path]:
        """Blob files no version points at (reported at start-up, never removed silently)."""
        known = {row[0] for row in self._reader().execute("SELECT DISTINCT sha256 FROM packages")}
        return [b for b in self.blobs.glob("*/*.db") if b.stem not in known]

    def close(self) -> None:
        with self._lock:
            for db in self._readers:
                db.close()
            self._readers.clear()
            if self._writer is not None:
                self._writer.close()
                self._writer = None

    # -- reading ---------------------------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        """One read connection per thread: WAL lets them read while a publish commits."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = _connect(self.db_path)
            db.execute("PRAGMA query_only=ON")
            self._local.db = db
            with self._lock:
                self._readers.append(db)
        return db

    def get(self, pid: PackageId) -> Record | None:
        row = self._reader().execute(
            "SELECT * FROM packages WHERE registry = ? AND name = ? AND version = ?",
            (pid.registry, pid.name, pid.version)).fetchone()
        return _record(row) if row else None

    def versions(self, registry: str, name: str, version: str | None = None) -> list[Record]:
        """Every version of one package (or just `version`), newest first."""
        sql = "SELECT * FROM packages WHERE registry = ? AND name = ?"
        args: list[str] = [registry, name]
        if version is not None:
            sql += " AND version = ?"
            args.append(version)
        return _newest_first(_record(r) for r in self._reader().execute(sql, args))

    def count(self) -> int:
        return int(self._reader().execute("SELECT count(*) FROM packages").fetchone()[0])

    def catalogue(self, limit: int = 500) -> list[list[Record]]:
        """Packages grouped by (registry, name), each group newest first, sorted by name."""
        rows = self._reader().execute(
            "SELECT * FROM packages WHERE (registry, name) IN (SELECT DISTINCT registry, name"
            " FROM packages ORDER BY registry, name LIMIT ?)", (limit,)).fetchall()
        return _group([_record(r) for r in rows], key=lambda g: (g[0].name.lower(), g[0].registry))

    def text_search(self, query: str, limit: int = 20) -> list[list[Record]]:
        """Full-text search over names and descriptions; one group per package, best first."""
        match = fts_query(query)
        if match is None:
            return []
        rows = self._reader().execute(search_sql(), (match, limit * 20)).fetchall()
        records = [_record(r) for r in rows]
        rank = {}
        for i, r in enumerate(records):
            rank.setdefault((r.registry, r.name), i)
        groups = _group(records, key=lambda g: rank[(g[0].registry, g[0].name)])
        return groups[:limit]

    def blob_path(self, sha256: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{64}", sha256):
            raise ValueError("not a SHA-256")
        return self.blobs / sha256[:2] / f"{sha256}.db"

    # -- publishing ------------------------------------------------------------------

    def new_upload(self) -> Upload:
        return Upload(self.tmp / f"upload-{os.urandom(8).hex()}.db")

    def publish(self, pid: PackageId, upload: Upload, sha256: str) -> Outcome:
        """Validate a finished upload, move it into `blobs/` and record it. Consumes `upload`."""
        try:
            existing = self.get(pid)
            if existing and existing.sha256 == sha256:
                return Outcome(existing, "unchanged")
            if existing and pid.version not in MUTABLE_VERSIONS:
                raise Conflict(f"{pid.qualified} is already published with different content; "
                               "versions are immutable, publish a new version")
            meta, chunks = _validate(upload.path, pid)
            return self._commit(pid, upload.path, sha256, upload.size, meta, chunks)
        finally:
            upload.discard()

    def _commit(self, pid: PackageId, tmp: Path, sha256: str, size: int,
                meta: dict[str, str], chunks: int) -> Outcome:
        blob = self.blob_path(sha256)
        with self._lock:
            assert self._writer is not None, "storage is not open"
            db = self._writer
            row = db.execute("SELECT * FROM packages WHERE registry = ? AND name = ? AND version = ?",
                             (pid.registry, pid.name, pid.version)).fetchone()
            old = _record(row) if row else None
            if old and old.sha256 == sha256:
                return Outcome(old, "unchanged")
            if old and pid.version not in MUTABLE_VERSIONS:
                raise Conflict(f"{pid.qualified} is already published with different content")
            if not blob.exists() or blob.stat().st_size != size:  # absent, or damaged on disk
                blob.parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp, blob)
                _fsync_dir(blob.parent)
            description = meta.get("description", "")[:MAX_DESCRIPTION]
            stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            meta_json = json.dumps(meta, ensure_ascii=False, sort_keys=True)
            with db:
                if old:
                    db.execute("UPDATE packages SET sha256=?, size=?, chunks=?, description=?, meta=?,"
                               " published_at=? WHERE id=?",
                               (sha256, size, chunks, description, meta_json, stamp, row["id"]))
                    db.execute("DELETE FROM packages_fts WHERE rowid = ?", (row["id"],))
                    rowid = row["id"]
                else:
                    rowid = db.execute(
                        "INSERT INTO packages(registry, name, version, sha256, size, chunks,"
                        " description, meta, published_at) VALUES (?,?,?,?,?,?,?,?,?)",
                        (pid.registry, pid.name, pid.version, sha256, size, chunks, description,
                         meta_json, stamp)).lastrowid
                db.execute("INSERT INTO packages_fts(rowid, name, description) VALUES (?, ?, ?)",
                           (rowid, pid.name, description))
            if old and not db.execute("SELECT 1 FROM packages WHERE sha256 = ?", (old.sha256,)).fetchone():
                self.blob_path(old.sha256).unlink(missing_ok=True)
            record = Record(pid.registry, pid.name, pid.version, sha256, size, chunks, description,
                            stamp, meta)
            return Outcome(record, "replaced" if old else "created")


# -- SQL built apart from running it --------------------------------------------------

def fts_query(text: str) -> str | None:
    """Turn user words into an FTS5 query of quoted prefix terms (ANDed): no user syntax survives."""
    terms = re.findall(r"\w+", text or "")[:MAX_QUERY_TERMS]
    if not terms:
        return None
    return " ".join('"' + t.replace('"', '""') + '"*' for t in terms)


def search_sql() -> str:
    """Names weigh ten times descriptions."""
    return ("SELECT p.* FROM packages_fts JOIN packages p ON p.id = packages_fts.rowid"
            " WHERE packages_fts MATCH ? ORDER BY bm25(packages_fts, 10.0, 1.0) LIMIT ?")


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


def _connect(path: Path) -> sqlite3.Connection:
    """Connections may be closed from another thread at shutdown; FULL sync survives power loss."""
    db = sqlite3.connect(path, check_same_thread=False, timeout=30)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA synchronous=FULL")
    return db


def _record(row: sqlite3.Row) -> Record:
    try:
        meta = json.loads(row["meta"])
    except ValueError:
        meta = {}
    return Record(row["registry"], row["name"], row["version"], row["sha256"], row["size"],
                  row["chunks"], row["description"], row["published_at"], meta)


def _newest_first(records: Iterator[Record] | list[Record]) -> list[Record]:
    return sorted(records, key=lambda r: version_key(r.version), reverse=True)


def _group(records: list[Record], key: Any) -> list[list[Record]]:
    groups: dict[tuple[str, str], list[Record]] = {}
    for r in records:
        groups.setdefault((r.registry, r.name), []).append(r)
    return sorted((_newest_first(g) for g in groups.values()), key=key)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_sidecars(path: Path) -> None:
    for suffix in ("-wal", "-shm", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def _remove_with_sidecars(path: Path) -> None:
    path.unlink(missing_ok=True)
    _remove_sidecars(path)


def _remove_tree_entry(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        import shutil

        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
