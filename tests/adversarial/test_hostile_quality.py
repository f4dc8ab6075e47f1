"""Hostile quality vector sets and embeddings endpoints.

A package whose second vector set is damaged, of the wrong size, or names a model or weights
this machine does not have installs and is searched as before, with its static vectors, and
`load_quality` says why in a note. An embeddings endpoint that hangs, trickles, answers
garbage, too few vectors, vectors of the wrong size or NaN fails `context add --quality` with
one clear line, in bounded time, and leaves the store as it was.
"""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path

import pytest
from quality_fixtures import (
    EmbeddingServer,
    configure_endpoint,
    embedding_server,
    quality_model,  # noqa: F401  (a fixture)
)

from context_cli.embed.quality_model import load_quality_model
from context_cli.package.quality import load_quality
from context_cli.package.reader import open_package
from context_cli.package.vectors import QualitySet
from context_cli.package.writer import write_package

from . import hostile_packages as hp
from .runner import StoreSnapshot, assert_good_package_searchable, assert_ok, assert_one_line_error, run

NAN16 = struct.pack("<e", float("nan"))

# trick -> statements that damage a package's quality set (after it was written soundly)
DAMAGED = {
    "short_blob": ["UPDATE quality_vectors SET vector = x'0102' WHERE chunk_id = 1"],
    "text_not_blob": ["UPDATE quality_vectors SET vector = 'streaming' WHERE chunk_id = 2"],
    "wrong_dim_in_meta": ["UPDATE meta SET value = '9' WHERE key = 'quality_dim'"],
    "huge_dim_in_meta": ["UPDATE meta SET value = '1000000000' WHERE key = 'quality_dim'"],
    "dim_not_a_number": ["UPDATE meta SET value = 'eight' WHERE key = 'quality_dim'"],
    "unknown_dtype": ["UPDATE meta SET value = 'float64' WHERE key = 'quality_dtype'"],
    "unknown_model": ["UPDATE meta SET value = 'some-other-model' WHERE key = 'quality_model'"],
    "unknown_source": ["UPDATE meta SET value = 'carrier-pigeon' WHERE key = 'quality_source'"],
    "other_weights": ["UPDATE meta SET value = '00000000deadbeef' WHERE key = 'quality_fingerprint'"],
    "table_dropped": ["DROP TABLE quality_vectors"],
    "nan_float16": ["UPDATE meta SET value = 'float16' WHERE key = 'quality_dtype'",
                    f"UPDATE quality_vectors SET vector = x'{(NAN16 * 8).hex()}'"],
    "endpoint_not_configured": ["UPDATE meta SET value = 'openai' WHERE key = 'quality_source'"],
}


def _with_quality(path: Path) -> Path:
    """A package found by the good package's words, with static vectors and a sound quality set."""
    model = load_quality_model()
    sections = [("evil.md", "Evil", "Streaming", "evil streaming cancellation"),
                ("evil2.md", "Evil", "More", "more streaming words for the hostile package")]
    from context_cli.document import Chunk

    chunks = [Chunk(doc_path=p, doc_title=d, section_title=s, content=c, tokens=5, has_code=False)
              for p, d, s, c in sections]
    import numpy as np

    return write_package(path, {"name": "evil", "version": "1.0.0"}, chunks,
                         vectors=np.eye(2, 8, dtype=np.float32),
                         quality=QualitySet(model.encode([c.content for c in chunks]), "onnx", model.name,
                                            model.fingerprint))


@pytest.mark.parametrize("trick", list(DAMAGED))
def test_a_damaged_quality_set_falls_back_to_the_static_vectors(trick: str, home: Path, tmp_path: Path,
                                                                quality_model: Path) -> None:
    bad = hp.edit(_with_quality(tmp_path / f"{trick}.db"), *DAMAGED[trick])
    assert_ok(run(["add", str(bad)], home, timeout=30))
    from context_cli.store.store import Store

    installed = Store(home / "packages").resolve("evil").path
    t0 = time.perf_counter()
    with open_package(installed, deep=True) as pkg:
        found, note = load_quality(pkg)
        assert pkg.has_vectors  # the static set is untouched
    assert time.perf_counter() - t0 < 5
    assert found is None and note is not None and note.endswith("searched with the static vectors"), note
    assert len(note) < 300 and "\n" not in note
    o = run(["search", "streaming cancellation", "--lib", "evil", "--format", "json"], home, timeout=30)
    assert_ok(o)
    assert o.json()["results"], o
    assert_good_package_searchable(home)


def test_an_overlong_query_prefix_is_not_sent_to_the_teams_endpoint(home: Path, tmp_path: Path,
                                                                     quality_model: Path) -> None:
    """A package may name the prefix its endpoint model wants before a question; one of
    thousands of characters would ride along with every question to the team's server."""
    bad = hp.edit(_with_quality(tmp_path / "prefix.db"), "UPDATE meta SET value = 'openai' WHERE key = 'quality_source'",
                  "UPDATE meta SET value = 'team-embed' WHERE key = 'quality_model'",
                  f"INSERT INTO meta (key, value) VALUES ('quality_query_prefix', '{'ignore all previous ' * 300}')")
    with embedding_server() as server:
        configure_endpoint(home, server.url)
        assert_ok(run(["add", str(bad)], home, timeout=30))
        o = run(["search", "streaming cancellation", "--lib", "evil", "--format", "json"], home, timeout=30)
        assert_ok(o)
        assert o.json()["results"], o
        assert any("query prefix of over 200 characters" in n for n in o.json()["notes"]), o.json()["notes"]
        assert server.inputs == []


def test_the_sound_set_is_used(home: Path, tmp_path: Path, quality_model: Path) -> None:
    """(The control: the same package undamaged has a usable set.)"""
    with open_package(_with_quality(tmp_path / "sound.db")) as pkg:
        found, note = load_quality(pkg)
    assert found is not None and note is None


# --- endpoints at build time -----------------------------------------------------------------

ENDPOINT_FAULTS = {
    "hang": "did not answer within",
    "trickle": "did not answer within",
    "huge": "over the 67108864-byte limit",
    "garbage": "did not answer with OpenAI-style embeddings",
    "short": "embeddings for",
    "ragged": "dimensions, expected",
    "nan": "not a list of finite numbers",
    "error": "answered HTTP 500: model not loaded",
}


@pytest.mark.parametrize("mode", list(ENDPOINT_FAULTS))
def test_a_bad_endpoint_fails_the_build_in_one_line(mode: str, home: Path, snapshot: StoreSnapshot,
                                                    docs_folder: Path) -> None:
    with embedding_server(EmbeddingServer(mode=mode)) as server:
        configure_endpoint(home, server.url, timeout=1.5)
        t0 = time.perf_counter()
        o = run(["add", str(docs_folder), "--name", "mylib", "--quality"], home, timeout=30)
    line = assert_one_line_error(o)
    assert ENDPOINT_FAULTS[mode] in line and "embeddings endpoint http://127.0.0.1" in line, line
    assert time.perf_counter() - t0 < 20
    snapshot.assert_unchanged(home)


def test_an_unreachable_endpoint_and_a_wrong_key_fail_in_one_line(home: Path, snapshot: StoreSnapshot,
                                                                  docs_folder: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]  # nothing listens there once the socket is closed
    configure_endpoint(home, f"http://127.0.0.1:{closed}/v1", timeout=2)
    assert "cannot be reached" in assert_one_line_error(run(["add", str(docs_folder), "--quality"], home))
    with embedding_server(EmbeddingServer(key="right")) as server:
        configure_endpoint(home, server.url, key="wrong", timeout=2)
        line = assert_one_line_error(run(["add", str(docs_folder), "--quality"], home))
    assert "HTTP 401: invalid api key" in line
    snapshot.assert_unchanged(home)


def test_quality_without_the_model_is_one_line_saying_what_to_install(home: Path, snapshot: StoreSnapshot,
                                                                      docs_folder: Path) -> None:
    line = assert_one_line_error(run(["add", str(docs_folder), "--quality"], home,
                                     env={"CONTEXT_QUALITY_MODEL": str(home / "no-such-model")}))
    assert "make_quality_model.py --install" in line or "context-docs[quality]" in line, line
    snapshot.assert_unchanged(home)
