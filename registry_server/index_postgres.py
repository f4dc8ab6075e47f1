"""The shared index: PostgreSQL through psycopg 3 and a connection pool.

Every replica reads and writes the same table. A publish runs in one transaction holding
transaction-scoped advisory locks on the version and on the blob (`pg_advisory_xact_lock`),
so two replicas committing one version serialise and the second sees the first's row.
Full-text search uses a `tsvector` of terms folded in Python (`search_terms`), the same
folding for documents and queries, so no server-side dictionary or extension is needed.

A lost connection (database restart, network) surfaces as `Unavailable` (HTTP 503); the
pool drops broken connections and opens new ones, so the server recovers by itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from context_cli.package.identity import PackageId

from .records import MAX_QUERY_TERMS, Record, Unavailable, by_name, group, newest_first, ranked_groups, search_terms

SCHEMA = """
CREATE TABLE IF NOT EXISTS packages (
  id BIGSERIAL PRIMARY KEY,
  registry TEXT NOT NULL,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  size BIGINT NOT NULL,
  chunks INTEGER NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  meta TEXT NOT NULL,
  published_at TEXT NOT NULL,
  search TSVECTOR NOT NULL,
  UNIQUE (registry, name, version)
);
CREATE INDEX IF NOT EXISTS packages_sha ON packages (sha256);
CREATE INDEX IF NOT EXISTS packages_search ON packages USING GIN (search);
"""
COLUMNS = "registry, name, version, sha256, size, chunks, description, meta, published_at"
ROW = f"SELECT {COLUMNS} FROM packages WHERE registry = %s AND name = %s AND version = %s"
# Names weigh ten times descriptions: weight A is 1.0, D is 0.1 in ts_rank's defaults.
SEARCH_VECTOR = ("setweight(array_to_tsvector(%s::text[]), 'A') ||"
                 " setweight(array_to_tsvector(%s::text[]), 'D')")


def ts_query(text: str) -> str | None:
    """User words as a tsquery of quoted prefix terms (ANDed): no user syntax survives."""
    terms = search_terms(text)[:MAX_QUERY_TERMS]
    if not terms:
        return None
    return " & ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "':*" for t in terms)


def search_sql() -> str:
    return (f"SELECT {COLUMNS} FROM packages WHERE search @@ %s::tsquery"
            " ORDER BY ts_rank(search, %s::tsquery) DESC, name, registry LIMIT %s")


def _lock_key(name: str) -> str:
    return "context-registry:" + name


class PostgresTxn:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def get(self, pid: PackageId) -> Record | None:
        row = self.conn.execute(ROW, (pid.registry, pid.name, pid.version)).fetchone()
        return Record.from_row(row) if row else None

    def save(self, record: Record) -> None:
        self.conn.execute(
            f"INSERT INTO packages ({COLUMNS}, search) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,"
            f" {SEARCH_VECTOR}) ON CONFLICT (registry, name, version) DO UPDATE SET"
            " sha256 = EXCLUDED.sha256, size = EXCLUDED.size, chunks = EXCLUDED.chunks,"
            " description = EXCLUDED.description, meta = EXCLUDED.meta,"
            " published_at = EXCLUDED.published_at, search = EXCLUDED.search",
            (record.registry, record.name, record.version, record.sha256, record.size,
             record.chunks, record.description, record.meta_json, record.published_at,
             search_terms(record.name), search_terms(record.description)))

    def referenced(self, sha256: str) -> bool:
        return self.conn.execute("SELECT 1 FROM packages WHERE sha256 = %s LIMIT 1",
                                 (sha256,)).fetchone() is not None


class PostgresIndex:
    """`--database postgresql://…`: a pool of autocommit connections, explicit transactions."""

    def __init__(self, url: str, *, min_size: int = 2, max_size: int = 20,
                 wait_timeout: float = 5.0) -> None:
        self.url = url
        self.min_size, self.max_size, self.wait_timeout = min_size, max(max_size, min_size), wait_timeout
        self.pool: Any = None

    def describe(self) -> str:
        from psycopg.conninfo import conninfo_to_dict

        try:
            info = conninfo_to_dict(self.url)
        except Exception:  # a malformed URL is reported by open()
            return "postgresql"
        return f"postgresql://{info.get('host', '')}:{info.get('port', '5432')}/{info.get('dbname', '')}"

    def open(self) -> None:
        try:
            import psycopg
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise SystemExit("--database needs psycopg 3: pip install 'psycopg[binary]' psycopg-pool") from None
        try:  # one direct attempt first: a wrong URL or a down server fails in seconds, clearly
            psycopg.connect(self.url, connect_timeout=5).close()
        except psycopg.Error as e:
            raise Unavailable(f"cannot connect to the database: {_first_line(e)}") from None
        self.pool = ConnectionPool(
            self.url, min_size=self.min_size, max_size=self.max_size, timeout=self.wait_timeout,
            kwargs={"autocommit": True, "row_factory": dict_row, "connect_timeout": 5},
            open=False, name="context-registry")
        try:
            self.pool.open(wait=True, timeout=30)
            with self._conn() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                             (_lock_key("schema"),))
                for statement in filter(str.strip, SCHEMA.split(";")):
                    conn.execute(statement)
        except (psycopg.Error, Unavailable) as e:
            self.pool.close()
            raise Unavailable(f"cannot open the database: {e}") from None
        except Exception as e:  # PoolTimeout
            self.pool.close()
            raise Unavailable(f"cannot reach the database: {e}") from None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        """A pooled connection; any connection-level failure becomes `Unavailable`."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self.pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as e:
            raise Unavailable(f"database: {_first_line(e)}") from None

    def _all(self, sql: str, args: tuple[Any, ...] | list[Any]) -> list[dict[str, Any]]:
        with self._conn() as conn:
            rows: list[dict[str, Any]] = conn.execute(sql, args).fetchall()
            return rows

    def ping(self) -> None:
        if self.pool is None:
            raise Unavailable("the database is not open")
        self._all("SELECT 1", ())

    def generation(self) -> None:
        """Unknown, so answers are never reused. Asking the database costs a round trip (what
        a cached answer would save), and a LISTEN/NOTIFY signal arrives after the publishing
        replica's 201: a client could then read an older answer from this replica."""
        return None

    def get(self, pid: PackageId) -> Record | None:
        rows = self._all(ROW, (pid.registry, pid.name, pid.version))
        return Record.from_row(rows[0]) if rows else None

    def versions(self, registry: str, name: str, version: str | None = None) -> list[Record]:
        sql = f"SELECT {COLUMNS} FROM packages WHERE registry = %s AND name = %s"
        args: list[str] = [registry, name]
        if version is not None:
            sql += " AND version = %s"
            args.append(version)
        return newest_first(Record.from_row(r) for r in self._all(sql, args))

    def count(self) -> int:
        return int(self._all("SELECT count(*) AS n FROM packages", ())[0]["n"])

    def catalogue(self, limit: int) -> list[list[Record]]:
        rows = self._all(
            f"SELECT {COLUMNS} FROM packages WHERE (registry, name) IN (SELECT DISTINCT registry,"
            " name FROM packages ORDER BY registry, name LIMIT %s)", (limit,))
        return group((Record.from_row(r) for r in rows), key=by_name)

    def text_search(self, query: str, limit: int) -> list[list[Record]]:
        match = ts_query(query)
        if match is None:
            return []
        rows = self._all(search_sql(), (match, match, limit * 20))
        return ranked_groups([Record.from_row(r) for r in rows], limit)

    def all_records(self) -> list[Record]:
        return [Record.from_row(r) for r in self._all(f"SELECT {COLUMNS} FROM packages ORDER BY id", ())]

    def referenced_shas(self) -> set[str]:
        return {r["sha256"] for r in self._all("SELECT DISTINCT sha256 FROM packages", ())}

    @contextmanager
    def transaction(self, locks: list[str]) -> Iterator[PostgresTxn]:
        """One transaction holding advisory locks on `locks` (taken in order: no deadlock)."""
        with self._conn() as conn, conn.transaction():
            for key in sorted(set(locks)):
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (_lock_key(key),))
            yield PostgresTxn(conn)


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
