"""What a cold query reads of a package: the section map in one scan, the vectors in one read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from helpers import make_package

from context_cli.errors import InvalidPackage
from context_cli.package import vectors
from context_cli.package.reader import SectionMap, open_package
from context_cli.search.engine import search
from context_cli.store.store import Store

SECTIONS = [("guide/stream.md", "Streaming", "Streams send events as they happen. " * 3),
            ("guide/stream.md", "Cancelling", "Call cancel() to stop a stream halfway."),
            ("api/errors.md", "Errors — ñ", "Errors carry a code: ERR_CLOSED means the sink was closed.")]


def test_section_map_holds_every_section_page_title_and_length(tmp_path: Path) -> None:
    with open_package(make_package(tmp_path / "lib.db", sections=SECTIONS)) as pkg:
        found = pkg.section_map()
        rows = pkg.chunks()
    assert found.pages == {cid: (c.doc_path, c.doc_title) for cid, c in rows}
    assert found.titles == {cid: c.section_title for cid, c in rows}
    assert found.chars == {cid: len(c.content) for cid, c in rows}
    with open_package(make_package(tmp_path / "lib2.db", sections=SECTIONS)) as pkg:
        some = pkg.section_map([3, 1, 99])  # what one query ranks; an unknown id is absent
        assert pkg.section_map([]) == SectionMap({}, {}, {})
    assert some == SectionMap({i: found.pages[i] for i in (1, 3)}, {i: found.titles[i] for i in (1, 3)},
                              {i: found.chars[i] for i in (1, 3)})


def test_a_hostile_blob_title_reaches_search_as_text_or_skips_the_package(tmp_path: Path) -> None:
    """Blobs in text columns (SQLite's type affinity allows them; an install refuses them, a
    file changed after it is not checked again) never reach search as bytes: a blob of UTF-8
    is its text, one that is not UTF-8 makes the package damaged."""
    lib = Store(tmp_path / "home").install(make_package(tmp_path / "lib.db", sections=SECTIONS))
    with sqlite3.connect(lib.path) as db:
        db.execute("UPDATE chunks SET section_title = CAST('Cancelling a stream' AS BLOB) WHERE id = 2")
    with open_package(lib.path) as pkg:
        assert pkg.section_map().titles[2] == "Cancelling a stream"
    assert "Cancelling a stream" in search("cancel a stream", [lib])["results"][0]["title"]
    with sqlite3.connect(lib.path) as db:
        db.execute("UPDATE chunks SET doc_title = X'FF00FE' WHERE id = 1")
    with open_package(lib.path) as pkg, pytest.raises(InvalidPackage, match="damaged"):
        pkg.section_map()


@pytest.mark.parametrize("dim", [1, 8, 256, 1023, 1024, 3000])
def test_int8_vectors_decode_to_the_float_norms_bit_for_bit(dim: int) -> None:
    """The integer norms of int8 rows equal numpy's float32 ones exactly (and past the size
    where float32 sums stop being exact, the float path is taken)."""
    rng = np.random.default_rng(dim)
    q = rng.integers(-128, 128, size=(50, dim), dtype=np.int8)
    q[0], q[1] = 0, -128  # a zero row stays zero; the extreme value
    m = q.astype(np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    got = vectors.decode(q.tobytes(), "int8", dim)
    assert got.dtype == np.float32 and np.array_equal(got, m / norms)
