"""registry_server.storage: content-addressed blobs, the index, and crash leftovers.

The `storage` fixture runs each behaviour on every engine pair: SQLite + files (the
default), PostgreSQL + files, SQLite + S3 and PostgreSQL + S3 (moto's server) — real engines all.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from engine_fixtures import bucket, pg_cluster, pg_url, s3_server  # noqa: F401
from registry_fixtures import PEER_PACKAGE, make_package

from context_cli.package.identity import PackageId
from registry_server.index_sqlite import fts_query
from registry_server.storage import Conflict, Rejected, Storage, StorageConfig, open_storage


@pytest.fixture(params=["sqlite+files", "postgres+files", "sqlite+s3", "postgres+s3"])
def storage(request: pytest.FixtureRequest, tmp_path: Path):
    config = StorageConfig(tmp_path / "data")
    if request.param.startswith("postgres"):
        config = StorageConfig(tmp_path / "data", database=request.getfixturevalue("pg_url"))
    if request.param.endswith("s3"):
        server = request.getfixturevalue("s3_server")
        config = StorageConfig(tmp_path / "data", database=config.database,
                               blobs=f"s3://{request.getfixturevalue('bucket')}/reg",
                               s3_endpoint=server.endpoint)
    s = open_storage(config)
    s.open()
    yield s
    s.close()


def put(storage: Storage, path: Path, registry: str, name: str, version: str):
    upload = storage.new_upload()
    upload.write(path.read_bytes())
    sha = upload.finish()
    return storage.publish(PackageId(registry, name, version), upload, sha)


def blobs(storage: Storage) -> list[str]:
    return sorted(sha for sha, _ in storage.blobs.listing())


def test_publish_stores_blob_by_sha256_and_records_it(storage, tmp_path):
    pkg = make_package(tmp_path / "p.db", "flask", "3.0.0", registry="pip", description="Web apps")
    outcome = put(storage, pkg, "pip", "flask", "3.0.0")
    sha = hashlib.sha256(pkg.read_bytes()).hexdigest()
    assert outcome.status == "created"
    assert outcome.record.sha256 == sha and outcome.record.size == pkg.stat().st_size
    assert blobs(storage) == [sha]
    assert list(storage.tmp.iterdir()) == []
    assert storage.get(PackageId("pip", "flask", "3.0.0")).description == "Web apps"
    assert storage.get(PackageId("pip", "flask", "3.0.0")).chunks == 2


def test_same_bytes_again_is_unchanged(storage, tmp_path):
    pkg = make_package(tmp_path / "p.db", "flask", "3.0.0", registry="pip")
    put(storage, pkg, "pip", "flask", "3.0.0")
    assert put(storage, pkg, "pip", "flask", "3.0.0").status == "unchanged"
    assert len(blobs(storage)) == 1 and list(storage.tmp.iterdir()) == []


def test_different_bytes_for_a_published_version_conflict(storage, tmp_path):
    put(storage, make_package(tmp_path / "a.db", "flask", "3.0.0", registry="pip"), "pip", "flask", "3.0.0")
    other = make_package(tmp_path / "b.db", "flask", "3.0.0", registry="pip", text="changed")
    with pytest.raises(Conflict):
        put(storage, other, "pip", "flask", "3.0.0")
    assert len(blobs(storage)) == 1 and list(storage.tmp.iterdir()) == []


def test_latest_moves_and_its_old_blob_goes(storage, tmp_path):
    first = make_package(tmp_path / "a.db", "docs", "latest", registry="pip")
    second = make_package(tmp_path / "b.db", "docs", "latest", registry="pip", text="newer")
    put(storage, first, "pip", "docs", "latest")
    assert put(storage, second, "pip", "docs", "latest").status == "replaced"
    sha = hashlib.sha256(second.read_bytes()).hexdigest()
    assert storage.get(PackageId("pip", "docs", "latest")).sha256 == sha
    assert blobs(storage) == [sha]
    assert len(storage.text_search("docs")) == 1


def test_identical_files_share_one_blob(storage, tmp_path):
    pkg = make_package(tmp_path / "p.db", "shared", "1.0.0", registry=None)  # registry "local"
    put(storage, pkg, "npm", "shared", "1.0.0")
    put(storage, pkg, "pip", "shared", "1.0.0")
    assert len(blobs(storage)) == 1
    assert {r.registry for g in storage.catalogue() for r in g} == {"npm", "pip"}


@pytest.mark.parametrize("name,version,registry,message", [
    ("other", "1.0.0", "npm", "URL says"),
    ("pkg", "2.0.0", "npm", "URL says"),
    ("pkg", "1.0.0", "pip", "registry"),
])
def test_meta_must_match_the_url(storage, tmp_path, name, version, registry, message):
    pkg = make_package(tmp_path / "p.db", "pkg", "1.0.0", registry="npm")
    with pytest.raises(Rejected, match=message):
        put(storage, pkg, registry, name, version)
    assert blobs(storage) == [] and list(storage.tmp.iterdir()) == []


def test_not_a_package_is_rejected(storage, tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(Rejected, match="not a package"):
        put(storage, junk, "npm", "junk", "1.0.0")
    plain = tmp_path / "plain.db"
    with sqlite3.connect(plain) as db:
        db.execute("CREATE TABLE t(x)")
    with pytest.raises(Rejected):
        put(storage, plain, "npm", "plain", "1.0.0")
    assert blobs(storage) == [] and list(storage.tmp.iterdir()) == []


def test_peer_package_without_registry_meta_publishes(storage):
    outcome = put(storage, PEER_PACKAGE, "npm", "anthropic-docs", "2024.7.0")
    assert outcome.status == "created"
    assert outcome.record.meta["registry"] == "npm"
    assert outcome.record.chunks > 0


def test_versions_are_newest_first(storage, tmp_path):
    for v in ["1.9.0", "1.10.0", "2.0.0rc1", "2.0.0", "latest", "1.2.0"]:
        put(storage, make_package(tmp_path / f"{v}.db", "zod", v), "npm", "zod", v)
    assert [r.version for r in storage.versions("npm", "zod")] == [
        "2.0.0", "2.0.0rc1", "1.10.0", "1.9.0", "1.2.0", "latest"]
    assert [r.version for r in storage.versions("npm", "zod", "1.9.0")] == ["1.9.0"]


def test_reopen_keeps_everything_and_clears_crash_leftovers(tmp_path):
    s = Storage(tmp_path / "data")
    s.open()
    pkg = make_package(tmp_path / "p.db", "flask", "3.0.0", registry="pip")
    put(s, pkg, "pip", "flask", "3.0.0")
    s.close()
    # What a kill can leave: a half upload, and a complete blob renamed in but never recorded.
    (s.tmp / "upload-dead.db").write_bytes(b"half")
    late = make_package(tmp_path / "late.db", "flask", "3.1.0", registry="pip")
    sha = hashlib.sha256(late.read_bytes()).hexdigest()
    orphan = s.blobs.root / sha[:2] / f"{sha}.db"
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_bytes(late.read_bytes())
    s2 = Storage(tmp_path / "data")
    s2.open()
    try:
        assert s2.get(PackageId("pip", "flask", "3.0.0")) is not None
        assert s2.get(PackageId("pip", "flask", "3.1.0")) is None
        assert list(s2.tmp.iterdir()) == []
        assert s2.unrecorded_blobs() == [sha]  # kept: younger than the sweep's grace period
        assert s2.sweep() == 0 and orphan.exists()
        assert put(s2, late, "pip", "flask", "3.1.0").status == "created"  # adopted
        assert s2.unrecorded_blobs() == [] and len(blobs(s2)) == 2
    finally:
        s2.close()


def test_discarded_upload_leaves_nothing(storage):
    upload = storage.new_upload()
    upload.write(b"partial")
    upload.discard()
    assert list(storage.tmp.iterdir()) == []


@pytest.mark.parametrize("text", ['"', "NOT", "(((", "*", "a OR b", "NEAR(a b)", "col:x", "^x",
                                  "'; DROP TABLE packages; --", "日本語", "naïve café", "\x00", ""])
def test_hostile_search_text_is_quoted(storage, tmp_path, text):
    put(storage, make_package(tmp_path / "p.db", "naive-cafe", "1.0.0", description="naïve café docs"),
        "npm", "naive-cafe", "1.0.0")
    match = fts_query(text)
    if match is not None:
        assert all(t.startswith('"') and t.endswith('"*') for t in match.split(" "))
        with sqlite3.connect(":memory:") as db:  # the query parses as plain terms
            db.execute("CREATE VIRTUAL TABLE f USING fts5(name, description)")
            db.execute("SELECT * FROM f WHERE f MATCH ?", (match,)).fetchall()
    storage.text_search(text)  # never raises


def test_text_search_finds_names_and_descriptions(storage, tmp_path):
    put(storage, make_package(tmp_path / "a.db", "@trpc/server", "10.0.0", description="End-to-end typesafe APIs"),
        "npm", "@trpc/server", "10.0.0")
    put(storage, make_package(tmp_path / "b.db", "naive-cafe", "1.0.0", description="naïve café docs"),
        "npm", "naive-cafe", "1.0.0")
    assert [g[0].name for g in storage.text_search("trpc")] == ["@trpc/server"]
    assert [g[0].name for g in storage.text_search("typesafe")] == ["@trpc/server"]
    assert [g[0].name for g in storage.text_search("cafe")] == ["naive-cafe"]
    assert [g[0].name for g in storage.text_search("caf")] == ["naive-cafe"]  # prefix
    assert storage.text_search("nothing-like-this") == []


def test_local_copy_is_the_package_verified(storage, tmp_path):
    pkg = make_package(tmp_path / "p.db", "flask", "3.0.0", registry="pip")
    record = put(storage, pkg, "pip", "flask", "3.0.0").record
    copy = storage.local_copy(record)
    assert copy.read_bytes() == pkg.read_bytes()
    assert storage.local_copy(record) == copy  # cached (S3) or the blob itself (files)
    with sqlite3.connect(f"file:{copy}?mode=ro", uri=True) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'name'").fetchone() == ("flask",)


def test_record_carries_build_facts(storage, tmp_path):
    pkg = make_package(tmp_path / "p.db", "flask", "3.0.0", registry="pip")
    put(storage, pkg, "pip", "flask", "3.0.0")
    record = storage.get(PackageId("pip", "flask", "3.0.0"))
    assert record.built_at.endswith("Z") and record.section_count == 2
    assert record.built_at == record.meta["built_at"]
