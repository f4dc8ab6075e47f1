"""Installing, listing, resolving and removing packages."""

import sqlite3

import pytest
from helpers import PEER_DB, make_package

from context_cli.errors import AmbiguousPackage, InvalidPackage, NotInstalled
from context_cli.store.store import Spec, Store
from context_cli.versions import version_key


def test_version_ordering():
    ordered = sorted(["1.15.9", "latest", "1.15.10", "2.0.0rc2", "2.0.0rc10", "2.0.0", "main"], key=version_key)
    assert ordered == ["latest", "main", "1.15.9", "1.15.10", "2.0.0rc2", "2.0.0rc10", "2.0.0"]


def test_spec_parsing():
    assert Spec.parse("npm/@trpc/server@10.1") == Spec("@trpc/server", "10.1", "npm")
    assert Spec.parse("@trpc/server") == Spec("@trpc/server", None, None)
    assert Spec.parse("flask@2.0") == Spec("flask", "2.0", None)


def test_versions_side_by_side_and_bare_name_is_highest(tmp_path):
    store = Store()
    for v in ("1.15.9", "1.15.10", "2.0.0rc1"):
        store.install(make_package(tmp_path / f"{v}.db", "lib", v))
    assert [i.id.version for i in store.find("lib")] == ["2.0.0rc1", "1.15.10", "1.15.9"]
    assert store.resolve("lib").id.version == "2.0.0rc1"
    assert store.resolve("lib@1.15.9").id.version == "1.15.9"


def test_registries_do_not_collide(tmp_path):
    store = Store()
    store.install(make_package(tmp_path / "a.db", "foo", registry="npm"))
    store.install(make_package(tmp_path / "b.db", "foo", registry="pip"))
    assert len(store.installed()) == 2
    with pytest.raises(AmbiguousPackage):
        store.resolve("foo")
    assert store.resolve("pip/foo").id.registry == "pip"


def test_remove_refuses_when_several_versions(tmp_path):
    store = Store()
    store.install(make_package(tmp_path / "1.db", "lib", "1.0.0"))
    store.install(make_package(tmp_path / "2.db", "lib", "2.0.0"))
    with pytest.raises(AmbiguousPackage, match="lib@1.0.0"):
        store.remove("lib")
    assert store.remove("lib@1.0.0").id.version == "1.0.0"
    assert store.remove("lib").id.version == "2.0.0"
    with pytest.raises(NotInstalled):
        store.remove("lib")


def test_peer_package_installs():
    installed = Store().install(PEER_DB)
    assert str(installed.id) == "anthropic-docs@2024.7.0"
    assert installed.meta["chunk_count"] == "384"


def _corrupt(path, sql):
    db = sqlite3.connect(path)
    db.executescript(sql)
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize("sql, message", [
    ("DROP TABLE chunks_fts; DROP TABLE chunks; CREATE VIEW chunks AS SELECT 1 AS id;", "no 'chunks' table"),
    ("DELETE FROM meta WHERE key = 'version';", "lacks 'version'"),
    ("UPDATE meta SET value = '../../etc' WHERE key = 'name';", "invalid package name"),
    ("UPDATE chunks SET tokens = 'many';", "wrong value types"),
    ("UPDATE meta SET value = '1.0/../../x' WHERE key = 'version';", "invalid package version"),
])
def test_hostile_or_broken_packages_are_refused_and_nothing_installed(tmp_path, sql, message):
    store = Store()
    good = store.install(make_package(tmp_path / "good.db", "lib", "1.0.0"))
    bad = _corrupt(make_package(tmp_path / "bad.db", "lib", "1.0.0"), sql)
    with pytest.raises(InvalidPackage, match=message):
        store.install(bad)
    assert [i.id for i in store.installed()] == [good.id]
    assert not list(store.root.glob(".incoming-*"))


def test_not_sqlite_is_refused(tmp_path):
    f = tmp_path / "x.db"
    f.write_bytes(b"PK\x03\x04 definitely a zip")
    with pytest.raises(InvalidPackage, match="not an SQLite database"):
        Store().install(f)
    f.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    with pytest.raises(InvalidPackage):
        Store().install(f)


def test_triggers_in_a_package_do_nothing_on_read(tmp_path):
    path = _corrupt(make_package(tmp_path / "t.db"),
                    "CREATE TABLE log(x); CREATE TRIGGER t AFTER INSERT ON meta BEGIN INSERT INTO log VALUES (1); END;")
    installed = Store().install(path)
    from context_cli.search.engine import search
    assert search("streaming", [installed])["results"]


@pytest.mark.parametrize("version, pre", [
    ("1.0.0-0", True), ("1.0.0-beta.1", True), ("v3.0.0-alpha", True), ("5.0.0-next.3", True),
    ("2.0.0-SNAPSHOT", True), ("1.0.0-rc.1+build.5", True), ("2.0.0rc1", True), ("1.0a1", True),
    ("1.0b2", True), ("1.0.dev3", True), ("1.0.0.M1", True), ("3.0-SNAPSHOT", True),
    ("1.0.0", False), ("1.0.0+build.5", False), ("1.0.post1", False), ("2024.7.0", False),
    ("latest", False), ("main", False), ("1.0.0.RELEASE", False), ("2024-01-15", False), ("v2.1.0", False),
])
def test_one_prerelease_rule(version, pre):
    from context_cli.versions import is_prerelease

    assert is_prerelease(version) is pre


def test_temp_files_never_count_as_packages_and_stale_ones_go(tmp_path):
    import os
    import time

    store = Store()
    real = store.install(make_package(tmp_path / "a.db", "real", "1.0.0"))
    copy = make_package(tmp_path / "b.db", "huge", "1.0.0")
    leftovers = [".downloading-x1.db", ".incoming-x2.db", ".building-x3.db", ".tmp-x4.partial",
                 "local__huge__1.0.0.db.partial", ".incoming-x2.db-wal", ".incoming-x2.db-shm"]
    for name in leftovers:
        (store.root / name).write_bytes(copy.read_bytes())
    assert [i.id.qualified for i in store.installed()] == ["local/real@1.0.0"]
    assert [name for name, *_ in store.fingerprint()] == [real.path.name]
    assert store.resolve("real").path == real.path
    with pytest.raises(NotInstalled):
        store.resolve("huge")
    assert sorted(p.name for p in store.root.iterdir() if p.name in leftovers) == sorted(leftovers)  # in progress?
    old = time.time() - 7200
    for name in leftovers:
        os.utime(store.root / name, (old, old))
    store.installed()  # listing cleans up what a killed process left
    assert sorted(p.name for p in store.root.iterdir()) == [real.path.name]


def test_a_file_never_silently_replaces_a_registry_install(tmp_path):
    from context_cli.store.store import Replaced

    store = Store()
    official = make_package(tmp_path / "official.db", "alpha", "1.0.0", registry="npm", description="official")
    spoof = make_package(tmp_path / "spoof.db", "alpha", "1.0.0", registry="npm", description="spoof")
    first = store.install(official, server="https://registry.example")
    assert first.origin == "https://registry.example"
    with pytest.raises(Replaced, match="installed from the registry https://registry.example.*--replace"):
        store.install(spoof)
    kept = store.resolve("npm/alpha")
    assert kept.meta["description"] == "official" and kept.origin == "https://registry.example"
    assert store.install(official, server="https://registry.example").origin  # the registry may update it
    replaced = Store(replace=True).install(spoof)
    assert replaced.origin == "file:spoof.db" and store.resolve("npm/alpha").meta["description"] == "spoof"
    store.remove("npm/alpha")
    assert store.installed() == []


def test_a_refused_file_is_named_in_the_error_and_nothing_is_left(tmp_path):
    path = make_package(tmp_path / "deep.db", "deep", "1.0.0")
    db = sqlite3.connect(path)
    db.execute("UPDATE chunks SET tokens = 'x'")
    db.commit()
    db.close()
    store = Store()
    with pytest.raises(InvalidPackage, match=r"^deep\.db: .*wrong value types"):
        store.install(path)
    assert not store.root.exists() or list(store.root.iterdir()) == []


def test_pypi_is_the_pip_registry():
    assert Spec.parse("pypi/flask@3.1.0") == Spec("flask", "3.1.0", "pip")


def test_a_name_not_installed_gets_the_close_ones_or_the_versions(tmp_path):
    store = Store()
    store.install(make_package(tmp_path / "a.db", "flask", "3.1.0"), registry="pip")
    store.install(make_package(tmp_path / "b.db", "flask", "3.0.0"), registry="pip")
    store.install(make_package(tmp_path / "c.db", "fastapi", "0.110.0"), registry="pip")
    with pytest.raises(NotInstalled, match=r"^flsk is not installed; did you mean flask\? "):
        store.resolve("flsk")
    with pytest.raises(NotInstalled, match=r"^pip/flask@9\.9\.9 is not installed; installed: 3\.0\.0, 3\.1\.0 "):
        store.resolve("pypi/flask@9.9.9")
    with pytest.raises(NotInstalled, match=r"^zzqxv is not installed \(see `context list`\)$"):
        store.remove("zzqxv")
    assert store.resolve("pypi/flask").id.version == "3.1.0"
