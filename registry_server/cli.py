"""`context-registry-server`: turn options into an app and hand it to uvicorn; `migrate` moves data.

Any number of processes may serve one storage: SQLite commits take its write lock, and
PostgreSQL commits take advisory locks (see storage.py).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from context_cli.environment import (
    REGISTRY_BLOBS,
    REGISTRY_DATA,
    REGISTRY_DATABASE,
    REGISTRY_KEY,
    REGISTRY_S3_ENDPOINT,
    REGISTRY_SERVER_OPTIONS,
)

HELP = {"help_option_names": ["-h", "--help"]}
OPTIONS_ENV = REGISTRY_SERVER_OPTIONS.name  # the app's options, for worker processes


def storage_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Where the index and package files live (shared by serving and `migrate`)."""
    for option in reversed([
        click.option("--database", envvar=REGISTRY_DATABASE.name, default=None,
                     help="PostgreSQL URL for the index (postgresql://USER:PASS@HOST/DB). "
                          "Default: SQLite in --data."),
        click.option("--blobs", envvar=REGISTRY_BLOBS.name, default=None,
                     help="s3://BUCKET[/PREFIX] for package files (credentials from the standard "
                          "AWS_* variables). Default: files in --data."),
        click.option("--s3-endpoint", envvar=REGISTRY_S3_ENDPOINT.name, default=None,
                     help="Endpoint URL of an S3-compatible store (MinIO, R2, Ceph)."),
        click.option("--db-pool", default=20, show_default=True, type=click.IntRange(2, 500),
                     help="Most PostgreSQL connections this process holds."),
    ]):
        f = option(f)
    return f


def storage_config(data_dir: Path | None, database: str | None, blobs: str | None,
                   s3_endpoint: str | None, db_pool: int) -> Any:
    from .storage import StorageConfig

    if database and not database.startswith(("postgresql://", "postgres://")):
        raise click.UsageError("--database must be a postgresql:// URL")
    if blobs and not blobs.startswith("s3://"):
        raise click.UsageError("--blobs must be an s3://BUCKET[/PREFIX] URL")
    try:
        return StorageConfig(data_dir, database, blobs, s3_endpoint, db_pool)
    except ValueError as e:
        raise click.UsageError(str(e)) from None


@click.group(context_settings=HELP, invoke_without_command=True)
@click.option("--data", "data_dir", envvar=REGISTRY_DATA.name, default=None,
              type=click.Path(file_okay=False, path_type=Path),
              help="Folder for package files, the index and uploads in flight (created if "
                   "missing). Optional when both --database and --blobs are given.")
@storage_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on.")
@click.option("--publish-key", envvar=REGISTRY_KEY.name, default=None,
              help="Bearer key that allows publishing (or CONTEXT_REGISTRY_KEY). "
                   "Without one, publishing is refused.")
@click.option("--max-upload-mb", default=512, show_default=True, type=click.IntRange(1, 1 << 20),
              help="Largest package file accepted.")
@click.option("--redirect-downloads", is_flag=True,
              help="Answer downloads with a 302 to a short-lived presigned bucket URL.")
@click.option("--presign-seconds", default=300, show_default=True, type=click.IntRange(10, 604800),
              help="Lifetime of a presigned download URL.")
@click.option("--header-timeout", default=10.0, show_default=True, type=click.FloatRange(0.1, 600),
              help="Seconds a client has to send a complete request head.")
@click.option("--min-upload-rate", default=16, show_default=True, type=click.IntRange(1, 1 << 20),
              help="Slowest accepted upload, in KiB/s averaged, after --header-timeout "
                   "seconds of grace.")
@click.option("--orphan-grace", default=3600, show_default=True, type=click.IntRange(0, 10 ** 8),
              help="Seconds before an unreferenced blob or unfinished upload is removed.")
@click.option("--file-cache-mb", default=64, show_default=True, type=click.IntRange(0, 1 << 20),
              help="Memory per server process for package files of up to 4 MiB kept to answer "
                   "downloads (a file never changes once published). 0: read each download "
                   "from storage.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 256),
              help="Server processes on this port (they share the storage like replicas do).")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
@click.pass_context
def main(ctx: click.Context, data_dir: Path | None, database: str | None, blobs: str | None,
         s3_endpoint: str | None, db_pool: int, host: str, port: int, publish_key: str | None,
         max_upload_mb: int, redirect_downloads: bool, presign_seconds: int,
         header_timeout: float, min_upload_rate: int, orphan_grace: int, file_cache_mb: int,
         workers: int, log_level: str) -> None:
    """Host documentation packages over Neuledge Context's registry API.

    Serves GET /search, GET /packages/R/N/V[/download] and POST /packages/R/N/V, plus
    /api/search, /api/packages/R/N, /health, /metrics and HTML pages at /.
    One JSON access-log line per request goes to stderr.
    """
    if ctx.invoked_subcommand is not None:
        return
    import uvicorn

    from .protocol import HEADER_TIMEOUT_ENV, with_header_timeout

    config = storage_config(data_dir, database, blobs, s3_endpoint, db_pool)
    if redirect_downloads and not blobs:
        raise click.UsageError("--redirect-downloads needs --blobs s3://…")
    options = {
        "storage": {"data_dir": str(data_dir) if data_dir else None, "database": database,
                    "blobs": blobs, "s3_endpoint": s3_endpoint, "db_pool": db_pool},
        "publish_key": publish_key, "max_upload_bytes": max_upload_mb * 1024 * 1024,
        "redirect_downloads": redirect_downloads, "presign_seconds": presign_seconds,
        "min_upload_rate": min_upload_rate * 1024, "body_grace": header_timeout,
        "orphan_grace": float(orphan_grace), "blob_cache_bytes": file_cache_mb * 1024 * 1024,
        "log_level": log_level,
    }
    _check_storage(config)
    if not publish_key:
        click.echo("Publishing is disabled (no --publish-key or CONTEXT_REGISTRY_KEY).", err=True)
    common: dict[str, Any] = {"host": host, "port": port, "log_level": log_level,
                              "access_log": False, "timeout_graceful_shutdown": 10}
    if workers == 1:
        app = _app(options)
        uvicorn.run(app, workers=1, http=with_header_timeout(header_timeout), **common)
        return
    os.environ[OPTIONS_ENV] = json.dumps(options)
    os.environ[HEADER_TIMEOUT_ENV] = str(header_timeout)
    uvicorn.run("registry_server.cli:app_from_environment", factory=True, workers=workers,
                http="registry_server.protocol:EnvironmentProtocol", **common)


def app_from_environment() -> Any:
    """The app of one worker process (`--workers N`), built from the parent's options."""
    return _app(json.loads(REGISTRY_SERVER_OPTIONS.value() or "{}"))


def _app(options: dict[str, Any]) -> Any:
    from .app import create_app
    from .storage import StorageConfig

    options = dict(options)
    where = options.pop("storage")
    raw_dir = where.pop("data_dir")
    data_dir = Path(raw_dir) if raw_dir else None
    _log_json_access(options.pop("log_level"))
    return create_app(storage=StorageConfig(data_dir, **where), **options)


@main.command(context_settings=HELP)
@click.option("--from-data", "source", required=True,
              type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="The data folder of the registry to move (left unchanged).")
@click.option("--data", "data_dir", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="Target data folder (for whichever of index/files is not given below).")
@storage_options
def migrate(source: Path, data_dir: Path | None, database: str | None, blobs: str | None,
            s3_endpoint: str | None, db_pool: int) -> None:
    """Copy every version from --from-data into --database/--blobs, verifying each checksum."""
    from .migrate import migrate as run
    from .records import Unavailable

    if not database and not blobs:
        raise click.UsageError("give --database and/or --blobs to migrate into")
    config = storage_config(data_dir, database, blobs, s3_endpoint, db_pool)
    try:
        report = run(source, config, echo=click.echo)
    except (FileNotFoundError, Unavailable) as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{report.copied} copied, {report.skipped} already there, {len(report.failed)} failed")
    if report.failed:
        sys.exit(1)


def _check_storage(config: Any) -> None:
    """Open and close the storage once, so a wrong URL or a down database is one clear line."""
    from .records import Unavailable
    from .storage import open_storage

    try:
        store = open_storage(config)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    try:
        store.open()
    except Unavailable as e:
        raise click.ClickException(f"storage unavailable: {e}") from None
    finally:
        store.close()


def _log_json_access(level: str) -> None:
    """Access lines are JSON already: print them bare, one per line, on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    access = logging.getLogger("registry_server.access")
    access.addHandler(handler)
    access.propagate = False
    access.setLevel(logging.INFO if level in ("info", "debug") else logging.WARNING)
    server = logging.getLogger("registry_server")
    if not server.handlers:
        plain = logging.StreamHandler(sys.stderr)
        plain.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        server.addHandler(plain)
        server.setLevel(level.upper())


if __name__ == "__main__":
    main()
