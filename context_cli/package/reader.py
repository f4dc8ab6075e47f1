"""Open package files safely: read-only, schema checked, hostile content contained.

Package files come from teammates, registries and other tools, so they are untrusted.
They are opened read-only with `trusted_schema` off and tight limits; their tables must be
real tables (not views) of the expected shape, and their meta must name a valid identity.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ..errors import InvalidPackage
from . import bm25
from .identity import InvalidIdentity, PackageId, check_identity
from .schema import REQUIRED_CHUNK_COLUMNS, REQUIRED_META
from .vectors import DTYPES, bytes_per_vector

SQLITE_MAGIC = b"SQLite format 3\x00"
MAX_VALUE_BYTES = 64 * 1024 * 1024  # no single text or blob in a package may exceed this
MAX_META_ROWS = 1000


def connect_readonly(path: Path, *, immutable: bool = False) -> sqlite3.Connection:
    """A read-only connection with an untrusted-schema posture."""
    uri = f"file:{quote(str(Path(path).resolve()))}?mode=ro" + ("&immutable=1" if immutable else "")
    db = sqlite3.connect(uri, uri=True, check_same_thread=False)
    db.execute("PRAGMA trusted_schema=OFF")
    db.execute("PRAGMA query_only=ON")
    db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    db.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, 1_000_000)
    return db


@dataclass
class Package:
    """An open, validated package. Close it (or use `with`) when done."""

    path: Path
    meta: dict[str, str]
    id: PackageId
    db: sqlite3.Connection = field(repr=False)
    has_vectors: bool = False
    has_bm25: bool = False  # our compact BM25 index is present and well-formed (else FTS5 is used)
    has_url: bool = False  # chunks carry our `url` column (Context's packages do not)

    @property
    def name(self) -> str:
        return self.id.name

    @property
    def version(self) -> str:
        return self.id.version

    @property
    def label(self) -> str:
        return f"{self.id.name}@{self.id.version}"

    def chunk_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Package:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_package(path: Path, *, registry: str | None = None, deep: bool = False,
                 immutable: bool = False) -> Package:
    """Open and check a package file; raise InvalidPackage with one clear line otherwise.

    `deep` adds the checks worth paying for once, at install or upload time: page-level
    integrity, value types in every row and vector blob sizes. `registry` overrides the
    file's own (Context packages do not record one).
    """
    path = Path(path)
    _check_header(path)
    try:
        db = connect_readonly(path, immutable=immutable)
    except sqlite3.Error as e:
        raise InvalidPackage(f"{path.name}: cannot open as SQLite ({e})") from None
    try:
        found = _check(db, path.name, deep)
        meta = found["meta"]
        reg = registry or meta.get("registry") or "local"
        try:
            pid = check_identity(reg, meta["name"], meta["version"])
        except InvalidIdentity as e:
            raise InvalidPackage(f"{path.name}: {e}") from None
        return Package(path=path, id=pid, db=db, **found)
    except InvalidPackage:
        db.close()
        raise
    except sqlite3.Error as e:
        db.close()
        raise InvalidPackage(f"{path.name}: not a valid package ({e})") from None


def read_meta(path: Path) -> dict[str, str]:
    """Validate a package file and return its meta (used by install and the registry server)."""
    with open_package(path, deep=True) as pkg:
        return dict(pkg.meta)


def _check_header(path: Path) -> None:
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as e:
        raise InvalidPackage(f"{path}: cannot read ({e.strerror})") from None
    if head != SQLITE_MAGIC:
        raise InvalidPackage(f"{path.name}: not a package (not an SQLite database)")


def _check(db: sqlite3.Connection, label: str, deep: bool) -> dict:
    """Check the file; return the Package fields it determines (meta and capability flags)."""
    objects = {
        name: (kind, sql or "")
        for kind, name, sql in db.execute("SELECT type, name, sql FROM sqlite_master")
    }
    for table in ("meta", "chunks"):
        kind, sql = objects.get(table, (None, ""))
        if kind != "table" or sql.upper().startswith("CREATE VIRTUAL"):
            raise InvalidPackage(f"{label}: not a package (no '{table}' table)")
    kind, sql = objects.get("chunks_fts", (None, ""))
    if kind != "table" or "fts5" not in sql.lower():
        raise InvalidPackage(f"{label}: not a package (no FTS5 'chunks_fts' index)")
    columns = {row[1] for row in db.execute("PRAGMA table_info(chunks)")}
    missing = [c for c in REQUIRED_CHUNK_COLUMNS if c not in columns]
    if missing:
        raise InvalidPackage(f"{label}: chunks table lacks column(s) {', '.join(missing)}")

    rows = db.execute(f"SELECT key, value FROM meta LIMIT {MAX_META_ROWS + 1}").fetchall()
    if len(rows) > MAX_META_ROWS:
        raise InvalidPackage(f"{label}: meta table is too large")
    meta = {str(k): str(v) for k, v in rows if isinstance(k, str) and v is not None}
    for key in REQUIRED_META:
        if not meta.get(key):
            raise InvalidPackage(f"{label}: meta lacks '{key}'")

    # The FTS index must answer (a broken shadow table fails here, not at query time).
    db.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH '\"the\"' LIMIT 1").fetchall()

    has_vectors = _check_vectors(db, objects, meta, label, deep)
    has_bm25 = _check_bm25(db, objects, meta, label, deep)
    if deep:
        result = db.execute("PRAGMA quick_check").fetchone()[0]
        if result != "ok":
            raise InvalidPackage(f"{label}: database is corrupt ({result})")
        bad = db.execute(
            "SELECT count(*) FROM chunks WHERE typeof(id) != 'integer' OR typeof(doc_path) != 'text'"
            " OR typeof(doc_title) != 'text' OR typeof(section_title) != 'text'"
            " OR typeof(content) != 'text' OR typeof(tokens) != 'integer'"
        ).fetchone()[0]
        if bad:
            raise InvalidPackage(f"{label}: {bad} chunk row(s) have wrong value types")
    return {"meta": meta, "has_vectors": has_vectors, "has_bm25": has_bm25, "has_url": "url" in columns}


def _check_bm25(db: sqlite3.Connection, objects: dict[str, tuple[str, str]], meta: dict[str, str],
                label: str, deep: bool) -> bool:
    """Is our BM25 index usable? Absent or of another shape: no (FTS5 is used). At install
    (`deep`), an index that is present but does not decode refuses the package."""
    if not bm25.present(db, objects, meta):
        return False
    if deep:
        try:
            bm25.check(db)
        except bm25.MalformedIndex as e:
            raise InvalidPackage(f"{label}: BM25 index is malformed ({e})") from None
    return True


def _check_vectors(db: sqlite3.Connection, objects: dict, meta: dict[str, str], label: str,
                   deep: bool) -> bool:
    if "embedding_dim" not in meta:
        return False
    kind, sql = objects.get("vectors", (None, ""))
    dtype = meta.get("embedding_dtype", "int8")
    try:
        dim = int(meta["embedding_dim"])
    except ValueError:
        raise InvalidPackage(f"{label}: meta embedding_dim is not a number") from None
    if kind != "table" or sql.upper().startswith("CREATE VIRTUAL") or dtype not in DTYPES or not 0 < dim <= 4096:
        raise InvalidPackage(f"{label}: vector table or its meta is malformed")
    if deep:
        size = bytes_per_vector(dtype, dim)
        bad = db.execute(
            "SELECT count(*) FROM vectors WHERE typeof(vector) != 'blob' OR length(vector) != ?"
            " OR chunk_id NOT IN (SELECT id FROM chunks)", (size,)
        ).fetchone()[0]
        if bad:
            raise InvalidPackage(f"{label}: {bad} vector(s) have the wrong size")
    return True
