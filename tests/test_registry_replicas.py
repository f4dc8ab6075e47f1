"""Several `context-registry-server` processes over one PostgreSQL database and one S3 bucket.

Real engines only (engine_fixtures.py): a throwaway PostgreSQL cluster and moto's S3
server; the replicas are real server processes on loopback ports; installs go through
the real `context install` command.
"""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner
from engine_fixtures import PostgresCluster, S3Server, bucket, pg_cluster, pg_url, s3_server  # noqa: F401
from registry_fixtures import AUTH, KEY, ServerProcess, assert_error, make_package, package_url

from context_cli.store.store import Store
from context_cli.surfaces.cli import cli
from registry_server.cli import main as server_cli


@pytest.fixture
def shared(pg_url: str, bucket: str, s3_server: S3Server) -> list[str]:
    """Options naming one database and one bucket (no data folder: replicas are stateless)."""
    return ["--database", pg_url, "--blobs", f"s3://{bucket}/registry", "--s3-endpoint",
            s3_server.endpoint, "--log-level", "warning"]


@pytest.fixture
def replicas(shared: list[str], tmp_path: Path):
    started = [ServerProcess(args=shared, log=tmp_path / f"replica{i}.log").start() for i in range(2)]
    try:
        yield started
    finally:
        for r in started:
            r.stop()


def post(replica: ServerProcess, pkg: Path, name: str, version: str, registry: str = "npm") -> requests.Response:
    return requests.post(replica.url + package_url(registry, name, version), data=pkg.read_bytes(),
                         headers=AUTH, timeout=30)


def blob_keys(s3: S3Server, bucket_name: str) -> list[str]:
    return s3.keys(bucket_name, "registry/blobs/")


def test_publish_on_one_search_and_install_through_the_other(replicas, tmp_path, monkeypatch):
    a, b = replicas
    pkgs = {v: make_package(tmp_path / f"zod{v}.db", "zod", v, description="Schema validation")
            for v in ("3.0.0", "3.1.0")}
    for v, pkg in pkgs.items():
        assert post(a, pkg, "zod", v).status_code == 201
    found = requests.get(b.url + "/search?registry=npm&name=zod", timeout=5).json()
    assert [e["version"] for e in found] == ["3.1.0", "3.0.0"]
    assert found[0]["sha256"] == hashlib.sha256(pkgs["3.1.0"].read_bytes()).hexdigest()
    hits = requests.get(b.url + "/api/search?q=schema", timeout=5).json()["results"]
    assert [h["name"] for h in hits] == ["zod"]
    dl = requests.get(b.url + package_url("npm", "zod", "3.0.0") + "/download", timeout=5)
    assert dl.content == pkgs["3.0.0"].read_bytes()
    assert dl.headers["content-length"] == str(len(dl.content))

    monkeypatch.setenv("CONTEXT_REGISTRY_URL", b.url)
    r = CliRunner().invoke(cli, ["install", "npm/zod"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["install", "npm/zod@3.0.0"])
    assert r.exit_code == 0, r.output
    assert {i.id.qualified for i in Store().installed()} == {"npm/zod@3.1.0", "npm/zod@3.0.0"}


def race(targets: list[tuple[ServerProcess, Path]], name: str, version: str) -> list[requests.Response]:
    """POST each (replica, file) at the same moment; answers in the order given."""
    gate = threading.Barrier(len(targets))
    answers: list[requests.Response | None] = [None] * len(targets)

    def send(i: int, replica: ServerProcess, pkg: Path) -> None:
        gate.wait()
        answers[i] = post(replica, pkg, name, version)

    threads = [threading.Thread(target=send, args=(i, r, p)) for i, (r, p) in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(a is not None for a in answers)
    return [a for a in answers if a is not None]


def test_same_version_through_two_replicas_at_once(replicas, tmp_path, s3_server, bucket):
    a, b = replicas
    for round_ in range(3):
        version = f"1.0.{round_}"
        one = make_package(tmp_path / f"one{round_}.db", "race", version, text="one")
        two = make_package(tmp_path / f"two{round_}.db", "race", version, text="two")
        answers = race([(a, one), (b, two)], "race", version)
        assert sorted(r.status_code for r in answers) == [201, 409]
        loser = next(r for r in answers if r.status_code == 409)
        assert "immutable" in assert_error(loser, 409)
        winner = next(r for r in answers if r.status_code == 201).json()["sha256"]
        for replica in (a, b):
            dl = requests.get(replica.url + package_url("npm", "race", version) + "/download", timeout=5)
            assert hashlib.sha256(dl.content).hexdigest() == winner
    assert len(blob_keys(s3_server, bucket)) == 3  # one blob per version: the losers wrote none


def test_replica_killed_mid_upload_leaves_nothing(shared, tmp_path, s3_server, bucket):
    data = tmp_path / "scratch"
    a = ServerProcess(args=[*shared, "--data", str(data)], log=tmp_path / "a.log").start()
    b = ServerProcess(args=shared, log=tmp_path / "b.log").start()
    try:
        pkg = make_package(tmp_path / "big.db", "docs", "1.0.0", text="words " * 50000)
        body = pkg.read_bytes()
        url = package_url("npm", "docs", "1.0.0")
        with socket.create_connection(("127.0.0.1", a.port)) as s:
            s.sendall((f"POST {url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
                       f"Content-Length: {len(body)}\r\n\r\n").encode() + body[: len(body) // 2])
            deadline = time.monotonic() + 20  # a loaded host may take seconds to start the write
            while not any((data / "tmp").glob("*")) and time.monotonic() < deadline:
                time.sleep(0.05)
            a.kill()
        assert list((data / "tmp").iterdir())  # the partial upload of the dead process...
        assert_error(requests.get(b.url + url, timeout=5), 404)
        assert requests.get(b.url + "/search?registry=npm&name=docs", timeout=5).json() == []
        assert blob_keys(s3_server, bucket) == []
        a.start()
        assert list((data / "tmp").iterdir()) == []  # ...removed when a server starts there
        assert post(b, pkg, "docs", "1.0.0").status_code == 201
        assert requests.get(a.url + url + "/download", timeout=5).content == body
    finally:
        a.stop()
        b.stop()


def test_orphans_of_a_crash_are_swept(shared, tmp_path, s3_server, bucket):
    """A replica killed between writing the blob and committing the row leaves a blob no row
    references, and a killed multipart upload leaves parts: both go after the grace period."""
    client = s3_server.client()
    orphan = "registry/blobs/ab/" + "ab" * 32 + ".db"
    client.put_object(Bucket=bucket, Key=orphan, Body=b"never committed")
    started = client.create_multipart_upload(Bucket=bucket, Key="registry/blobs/cd/" + "cd" * 32 + ".db")
    keeper = ServerProcess(args=shared, log=tmp_path / "keep.log").start()
    try:
        pkg = make_package(tmp_path / "p.db", "kept", "1.0.0")
        assert post(keeper, pkg, "kept", "1.0.0").status_code == 201
    finally:
        keeper.stop()
    assert orphan in blob_keys(s3_server, bucket)  # younger than the default hour: kept
    sweeper = ServerProcess(args=[*shared, "--orphan-grace", "0"], log=tmp_path / "sweep.log").start()
    try:
        def open_uploads() -> set[str]:
            return {u["UploadId"] for u in client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])}

        deadline = time.monotonic() + 10  # the sweep removes the blob first, then the parts
        while (orphan in blob_keys(s3_server, bucket) or started["UploadId"] in open_uploads()) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        keys = blob_keys(s3_server, bucket)
        assert orphan not in keys and len(keys) == 1  # the published package's blob stays
        assert started["UploadId"] not in open_uploads()
        assert requests.get(sweeper.url + package_url("npm", "kept", "1.0.0") + "/download",
                            timeout=5).content == pkg.read_bytes()
    finally:
        sweeper.stop()


def test_database_restart_under_load(replicas, pg_cluster: PostgresCluster, tmp_path):
    a, _ = replicas
    pkg = make_package(tmp_path / "p.db", "steady", "1.0.0")
    assert post(a, pkg, "steady", "1.0.0").status_code == 201
    statuses: list[int] = []
    bodies: list[requests.Response] = []
    stop = threading.Event()

    def hammer() -> None:
        with requests.Session() as session:
            while not stop.is_set():
                for path in ("/search?registry=npm&name=steady", "/api/search?q=steady"):
                    r = session.get(a.url + path, timeout=30)
                    statuses.append(r.status_code)
                    if r.status_code != 200:
                        bodies.append(r)

    workers = [threading.Thread(target=hammer) for _ in range(4)]
    for w in workers:
        w.start()
    time.sleep(0.5)
    pg_cluster.restart()
    deadline = time.monotonic() + 20
    recovered = False
    while time.monotonic() < deadline and not recovered:
        before = len(statuses)
        time.sleep(0.5)
        recovered = len(statuses) > before and all(s == 200 for s in statuses[before:])
    stop.set()
    for w in workers:
        w.join(30)
    assert recovered, "the replica did not recover after the database restarted"
    assert set(statuses) <= {200, 503}, sorted(set(statuses))
    assert 503 in statuses  # the pooled connections the restart broke failed cleanly, once each
    for r in bodies:
        assert "unavailable" in assert_error(r, 503) and r.headers["retry-after"]
    health = requests.get(a.url + "/health", timeout=5).json()
    assert health["database"] == "ok" and health["blobs"] == "ok" and health["packages"] == 1


def test_health_reports_a_down_database(replicas, pg_cluster: PostgresCluster):
    a, _ = replicas
    pg_cluster.stop()
    try:
        r = requests.get(a.url + "/health", timeout=30)
        assert r.status_code == 503
        body = r.json()
        assert body["status"] == "unavailable" and body["blobs"] == "ok" and body["database"] != "ok"
        assert_error(requests.get(a.url + "/search?registry=npm&name=x", timeout=30), 503)
    finally:
        pg_cluster.start()
    deadline = time.monotonic() + 20
    while requests.get(a.url + "/health", timeout=30).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_redirect_downloads_go_straight_to_the_bucket(shared, tmp_path, monkeypatch, s3_server):
    replica = ServerProcess(args=[*shared, "--redirect-downloads", "--presign-seconds", "60"],
                            log=tmp_path / "r.log").start()
    try:
        pkg = make_package(tmp_path / "p.db", "zod", "3.0.0")
        sha = hashlib.sha256(pkg.read_bytes()).hexdigest()
        assert post(replica, pkg, "zod", "3.0.0").status_code == 201
        url = replica.url + package_url("npm", "zod", "3.0.0") + "/download"
        hop = requests.get(url, allow_redirects=False, timeout=5)
        assert hop.status_code == 302 and hop.headers["x-content-sha256"] == sha
        assert hop.headers["location"].startswith(s3_server.endpoint) and "Signature=" in hop.headers["location"]
        followed = requests.get(url, timeout=5)
        assert hashlib.sha256(followed.content).hexdigest() == sha
        found = requests.get(replica.url + "/search?registry=npm&name=zod", timeout=5).json()
        assert found[0]["sizeBytes"] == pkg.stat().st_size and found[0]["sha256"] == sha

        monkeypatch.setenv("CONTEXT_REGISTRY_URL", replica.url)
        for spec in ("npm/zod", "npm/zod@3.0.0"):
            r = CliRunner().invoke(cli, ["install", spec])
            assert r.exit_code == 0, r.output
        assert [i.id.qualified for i in Store().installed()] == ["npm/zod@3.0.0"]
    finally:
        replica.stop()


def test_migrate_moves_a_registry_and_verifies_checksums(tmp_path, pg_url, bucket, s3_server):
    from context_cli.package.identity import PackageId
    from registry_server.storage import Storage

    source = Storage(tmp_path / "old")
    source.open()
    pkgs = {}
    for v in ("1.0.0", "2.0.0", "latest"):
        pkgs[v] = make_package(tmp_path / f"{v}.db", "flask", v, registry="pip")
        upload = source.new_upload()
        upload.write(pkgs[v].read_bytes())
        source.publish(PackageId("pip", "flask", v), upload, upload.finish())
    before = {r.version: r for r in source.index.all_records()}
    source.close()
    target = ["--database", pg_url, "--blobs", f"s3://{bucket}/registry", "--s3-endpoint", s3_server.endpoint]

    r = CliRunner().invoke(server_cli, ["migrate", "--from-data", str(tmp_path / "old"), *target])
    assert r.exit_code == 0, r.output
    assert "3 copied, 0 already there, 0 failed" in r.output
    again = CliRunner().invoke(server_cli, ["migrate", "--from-data", str(tmp_path / "old"), *target])
    assert again.exit_code == 0 and "0 copied, 3 already there" in again.output

    replica = ServerProcess(args=[*target, "--log-level", "warning"], log=tmp_path / "m.log").start()
    try:
        for v, pkg in pkgs.items():
            meta = requests.get(replica.url + package_url("pip", "flask", v), timeout=5).json()
            assert meta["sha256"] == before[v].sha256 and meta["published_at"] == before[v].published_at
            dl = requests.get(replica.url + package_url("pip", "flask", v) + "/download", timeout=5)
            assert dl.content == pkg.read_bytes()
    finally:
        replica.stop()


def test_migrate_refuses_a_damaged_source(tmp_path, pg_url, bucket, s3_server):
    from context_cli.package.identity import PackageId
    from registry_server.storage import Storage

    source = Storage(tmp_path / "old")
    source.open()
    pkg = make_package(tmp_path / "p.db", "flask", "1.0.0", registry="pip")
    upload = source.new_upload()
    upload.write(pkg.read_bytes())
    record = source.publish(PackageId("pip", "flask", "1.0.0"), upload, upload.finish()).record
    blob = source.blobs.file_path(record.sha256)
    source.close()
    assert blob is not None
    blob.write_bytes(blob.read_bytes()[:-1] + b"\x01")  # one byte flipped on disk
    r = CliRunner().invoke(server_cli, ["migrate", "--from-data", str(tmp_path / "old"), "--database",
                                        pg_url, "--blobs", f"s3://{bucket}/registry",
                                        "--s3-endpoint", s3_server.endpoint])
    assert r.exit_code == 1 and "does not match its recorded sha256" in r.output
    assert "0 copied, 0 already there, 1 failed" in r.output
    assert blob_keys(s3_server, bucket) == []
