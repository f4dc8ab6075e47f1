"""The embedded index: one SQLite file (WAL) with an FTS5 table, safe for several processes.

Writes run inside `BEGIN IMMEDIATE`, SQLite's database-wide write lock, which holds across
processes: two servers on one `--data` folder serialise their commits instead of racing.
"""

from __future__ import annotations

import errno
import re
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from context_cli.package.identity import PackageId

from .records import MAX_QUERY_TERMS, Record, Unavailable, by_name, group, newest_first, ranked_groups

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
ROW = "SELECT * FROM packages WHERE registry = ? AND name = ? AND version = ?"


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


class SqliteTxn:
    """Reads and writes inside one `BEGIN IMMEDIATE` transaction."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def get(self, pid: PackageId) -> Record | None:
        row = self.db.execute(ROW, (pid.registry, pid.name, pid.version)).fetchone()
        return Record.from_row(row) if row else None

    def save(self, record: Record) -> None:
        """Insert the version, or move it (a mutable version), keeping FTS in step."""
        row = self.db.execute("SELECT id FROM packages WHERE registry = ? AND name = ? AND version = ?",
                              (record.registry, record.name, record.version)).fetchone()
        values = (record.sha256, record.size, record.chunks, record.description, record.meta_json,
                  record.published_at)
        if row:
            rowid = row[0]
            self.db.execute("UPDATE packages SET sha256=?, size=?, chunks=?, description=?, meta=?,"
                            " published_at=? WHERE id=?", (*values, rowid))
            self.db.execute("DELETE FROM packages_fts WHERE rowid = ?", (rowid,))
        else:
            rowid = self.db.execute(
                "INSERT INTO packages(registry, name, version, sha256, size, chunks, description,"
                " meta, published_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (record.registry, record.name, record.version, *values)).lastrowid
        self.db.execute("INSERT INTO packages_fts(rowid, name, description) VALUES (?, ?, ?)",
                        (rowid, record.name, record.description))

    def referenced(self, sha256: str) -> bool:
        return self.db.execute("SELECT 1 FROM packages WHERE sha256 = ?", (sha256,)).fetchone() is not None


class SqliteIndex:
    """`registry.sqlite` in the data folder: per-thread readers, one writer per process."""

    inline_reads = True  # WAL readers never wait for a writer; lookups are indexed

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._writer: sqlite3.Connection | None = None
        self._generation = 0

    def describe(self) -> str:
        return f"sqlite:{self.path}"

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = _connect(self.path)
        self._writer.execute("PRAGMA journal_mode=WAL")
        self._writer.executescript(SCHEMA)
        self._writer.commit()

    def close(self) -> None:
        with self._lock:
            for db in self._readers:
                db.close()
            self._readers.clear()
            if self._writer is not None:
                self._writer.close()
                self._writer = None

    def ping(self) -> None:
        try:
            self._reader().execute("SELECT 1").fetchone()
        except sqlite3.Error as e:
            raise Unavailable(f"the index cannot be read: {e}") from None

    def _reader(self) -> sqlite3.Connection:
        """One read connection per thread: WAL lets them read while a publish commits."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = _connect(self.path)
            db.execute("PRAGMA query_only=ON")
            self._local.db = db
            with self._lock:
                self._readers.append(db)
        return db

    def generation(self) -> int:
        """A number that moves after any commit, by this process or another one.

        `PRAGMA data_version` changes when another connection (our writer, or another
        server's) has committed since this thread's reader last asked; it is read from the
        shared WAL index, so asking costs microseconds.
        """
        seen = self._reader().execute("PRAGMA data_version").fetchone()[0]
        if seen != getattr(self._local, "data_version", None):
            self._local.data_version = seen
            with self._lock:
                self._generation += 1
        return self._generation

    def get(self, pid: PackageId) -> Record | None:
        return SqliteTxn(self._reader()).get(pid)

    def versions(self, registry: str, name: str, version: str | None = None) -> list[Record]:
        sql = "SELECT * FROM packages WHERE registry = ? AND name = ?"
        args: list[str] = [registry, name]
        if version is not None:
            sql += " AND version = ?"
            args.append(version)
        return newest_first(Record.from_row(r) for r in self._reader().execute(sql, args))

    def count(self) -> int:
        return int(self._reader().execute("SELECT count(*) FROM packages").fetchone()[0])

    def catalogue(self, limit: int) -> list[list[Record]]:
        rows = self._reader().execute(
            "SELECT * FROM packages WHERE (registry, name) IN (SELECT DISTINCT registry, name"
            " FROM packages ORDER BY registry, name LIMIT ?)", (limit,)).fetchall()
        return group((Record.from_row(r) for r in rows), key=by_name)

    def text_search(self, query: str, limit: int) -> list[list[Record]]:
        match = fts_query(query)
        if match is None:
            return []
        rows = self._reader().execute(search_sql(), (match, limit * 20)).fetchall()
        return ranked_groups([Record.from_row(r) for r in rows], limit)

    def all_records(self) -> list[Record]:
        return [Record.from_row(r) for r in self._reader().execute("SELECT * FROM packages ORDER BY id")]

    def referenced_shas(self) -> set[str]:
        return {row[0] for row in self._reader().execute("SELECT DISTINCT sha256 FROM packages")}

    @contextmanager
    def transaction(self, locks: list[str]) -> Iterator[SqliteTxn]:
        """`BEGIN IMMEDIATE` locks the whole index (every process), so `locks` are implied."""
        with self._lock:
            db = self._writer
            if db is None:
                raise Unavailable("the index is not open")
            try:
                db.execute("BEGIN IMMEDIATE")  # waits up to the busy timeout for other processes
            except sqlite3.OperationalError as e:
                raise Unavailable(f"the index is busy: {e}") from None
            try:
                yield SqliteTxn(db)
                db.commit()
            except BaseException as e:
                db.rollback()
                if isinstance(e, sqlite3.OperationalError) and "full" in str(e):  # SQLITE_FULL
                    raise OSError(errno.ENOSPC, f"the index's disk is full ({e})") from None
                raise


def _connect(path: Path) -> sqlite3.Connection:
    """Autocommit mode (transactions are explicit); closable from another thread at shutdown."""
    db = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA synchronous=FULL")
    return db
