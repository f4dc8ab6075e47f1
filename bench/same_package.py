"""Are two packages the same build? Chunks, pages, BM25 tables and phrases, FTS5 index and meta must be
equal row for row (meta less its build time), vectors equal or within one int8 step.

    python bench/same_package.py A.db B.db

Used to check that a faster build writes what the slower one wrote (docs/performance.md).
"""

from __future__ import annotations

import sqlite3
import sys

import numpy as np

TABLES = {  # table -> its key column
    "chunks": "id", "pages": "doc_path", "bm25_terms": "term", "bm25_lengths": "field", "bm25_phrases": "phrase",
    "chunks_fts_data": "id", "chunks_fts_idx": "segid, term", "chunks_fts_docsize": "id", "chunks_fts_config": "k",
}


def rows(db: sqlite3.Connection, table: str, key: str) -> list[tuple]:
    return db.execute(f"SELECT * FROM {table} ORDER BY {key}").fetchall()


def differences(a_path: str, b_path: str) -> list[str]:
    a, b = sqlite3.connect(a_path), sqlite3.connect(b_path)
    out = []
    for table, key in TABLES.items():
        ra, rb = rows(a, table, key), rows(b, table, key)
        if ra != rb:
            diff = sum(x != y for x, y in zip(ra, rb, strict=False)) + abs(len(ra) - len(rb))
            out.append(f"{table}: {diff} of {max(len(ra), len(rb))} rows differ")
    ma, mb = (dict(rows(db, "meta", "key")) for db in (a, b))
    for m in (ma, mb):
        m.pop("built_at", None)
    if ma != mb:
        out.append(f"meta differs: {sorted(k for k in ma.keys() | mb.keys() if ma.get(k) != mb.get(k))}")
    va, vb = (rows(db, "vectors", "chunk_id") for db in (a, b))
    if [i for i, _ in va] != [i for i, _ in vb]:
        out.append("vectors: different chunk ids")
    elif va:
        xa = np.frombuffer(b"".join(v for _, v in va), dtype=np.int8).astype(int)
        xb = np.frombuffer(b"".join(v for _, v in vb), dtype=np.int8).astype(int)
        worst = int(np.abs(xa - xb).max()) if len(xa) == len(xb) else 999
        if worst > 1:
            out.append(f"vectors: differ by up to {worst} int8 steps")
        elif worst:
            print(f"note: vectors differ by one int8 step in {int((xa != xb).sum())} values")
    return out


def main() -> None:
    diffs = differences(sys.argv[1], sys.argv[2])
    print("\n".join(diffs) if diffs else "same")
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
