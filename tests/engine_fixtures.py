"""Real storage engines for the registry-server tests: a throwaway PostgreSQL cluster and moto's S3.

PostgreSQL: Debian's server binaries (`/usr/lib/postgresql/*/bin`, or `PG_BIN`). `initdb`
makes a cluster in a temp folder, `pg_ctl` starts it on a free loopback port with its
unix socket in that folder; it runs as the `postgres` user when the tests run as root
(PostgreSQL refuses root). One cluster per test session; each test gets its own database.

S3: moto's server (`ThreadedMotoServer`) on a free loopback port, used only through
boto3 and the server's own S3 code path; each test gets its own bucket.

The servers themselves are `registry_fixtures.ServerProcess(args=[...], log=...)`.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from registry_fixtures import free_port

S3_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
          "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}


def postgres_bin() -> Path | None:
    configured = os.environ.get("PG_BIN")
    candidates = [configured] if configured else sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in candidates:
        if folder and (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    found = shutil.which("initdb")
    return Path(found).parent if found and shutil.which("pg_ctl") else None


def _as_postgres_user() -> list[str]:
    """Root may not run PostgreSQL; drop to the `postgres` account (Debian creates it)."""
    if os.geteuid() != 0:
        return []
    return ["runuser", "-u", "postgres", "--"]


class PostgresCluster:
    """initdb + pg_ctl in a temp folder; `url(db)` for a database in it."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.folder = Path(tempfile.mkdtemp(prefix="context-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.user = "context"
        self.prefix = _as_postgres_user()
        if self.prefix:
            shutil.chown(self.folder, "postgres", "postgres")

    def _run(self, *args: str, timeout: float = 60) -> None:
        subprocess.run([*self.prefix, *args], check=True, timeout=timeout, cwd=self.folder,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def start(self) -> PostgresCluster:
        if not self.data.exists():
            self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", self.user,
                      "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync")
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
                   " -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"),
                  "-o", options, "-w", "-t", "60", "start")
        return self

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def destroy(self) -> None:
        try:
            self.stop("immediate")
        except subprocess.SubprocessError:
            pass
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) are not installed; "
                    "on Debian: apt-get install postgresql")
    pytest.importorskip("psycopg", reason="pip install 'psycopg[binary]' psycopg-pool")
    cluster = PostgresCluster(bindir).start()
    try:
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def pg_url(pg_cluster: PostgresCluster) -> str:
    """A fresh, empty database in the session's cluster."""
    return pg_cluster.new_database()


class S3Server:
    def __init__(self) -> None:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per S3 call otherwise
        self.port = free_port()
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self):  # type: ignore[no-untyped-def]
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    def new_bucket(self) -> str:
        name = "ctx-" + uuid.uuid4().hex[:12]
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        answer = self.client().list_objects_v2(Bucket=bucket, Prefix=prefix)
        return sorted(o["Key"] for o in answer.get("Contents", []))


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    pytest.importorskip("moto.server", reason="pip install 'moto[server]'")
    pytest.importorskip("boto3", reason="pip install boto3")
    saved = {k: os.environ.get(k) for k in S3_ENV}
    os.environ.update(S3_ENV)
    server = S3Server()
    server.server.start()
    try:
        yield server
    finally:
        server.server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def bucket(s3_server: S3Server) -> str:
    return s3_server.new_bucket()
