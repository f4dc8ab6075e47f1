"""The registry server's Starlette app: one explicit route list, one error shape.

Neuledge Context's API (`/search`, `/packages/R/N/V[/download]`, `POST /packages/R/N/V`) so
their client and publisher work unchanged, plus ours: checksums, conditional downloads,
full-text search, all versions of a package, a health check, Prometheus metrics and HTML pages.
Storage (SQLite or PostgreSQL index, files or S3 blobs) is chosen by `StorageConfig` and
opened in the lifespan; every handler sees the same `Storage` API. Repeated searches,
metadata and downloads are answered from memory until the index changes (cache.py).

Package paths are parsed from the raw request path, one percent-decoded segment at a
time, so `%40trpc%2Fserver` is one name while a decoded `..`, NUL or stray `/` is refused
by `check_identity` with a 400.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from context_cli.package.identity import InvalidIdentity, PackageId, check_identity, check_name, check_registry

from . import pages
from .blobs import BlobStore
from .cache import AnswerCacheMiddleware, Cache, mark_cacheable
from .observe import Metrics, ObserveMiddleware
from .paths import raw_segments
from .records import FULL_ERRNOS, MUTABLE_VERSIONS, BlobMissing, Conflict, QueryTooLong, Record, Rejected, Unavailable
from .storage import ORPHAN_GRACE, Storage, StorageConfig, Upload, open_storage

WRITE_BUFFER = 1024 * 1024  # upload bytes gathered before one write in the threadpool
WHOLE_READ = 4 * 1024 * 1024  # package files up to this size are read (and sent) in one piece
MAX_DIGITS = 18
log = logging.getLogger("registry_server")
T = TypeVar("T")


@dataclass(frozen=True)
class Settings:
    """Options of one server process; the defaults suit a single machine."""

    data_dir: Path | None = None
    publish_key: str | None = None
    max_upload_bytes: int = 512 * 1024 * 1024
    storage: StorageConfig | None = None
    redirect_downloads: bool = False
    presign_seconds: int = 300
    body_grace: float = 10.0        # seconds an upload may take before the rate counts
    min_upload_rate: int = 16 * 1024  # bytes per second, averaged, after the grace
    orphan_grace: float = ORPHAN_GRACE
    sweep_every: float = 600.0
    answer_cache_bytes: int = 16 * 1024 * 1024  # whole answers to repeated GETs, per index generation
    blob_cache_bytes: int = 64 * 1024 * 1024    # package files kept in memory (0: none)


def create_app(data_dir: Path | None = None, *, publish_key: str | None = None,
               max_upload_bytes: int = 512 * 1024 * 1024, storage: StorageConfig | None = None,
               **options: Any) -> Starlette:
    """Build the app; storage is opened (and crash leftovers cleaned) in the lifespan.

    `storage` chooses the index and blob store (default: both in `data_dir`); `options`
    are further `Settings` fields (redirect_downloads, min_upload_rate, …).
    """
    config = storage or StorageConfig(Path(data_dir) if data_dir is not None else None)
    settings = Settings(config.data_dir, publish_key or None, max_upload_bytes, config, **options)
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        store = open_storage(config)
        await run_in_threadpool(store.open)
        app.state.storage = store
        sweeper = asyncio.create_task(sweep_forever(store, settings))
        try:
            yield
        finally:
            sweeper.cancel()  # a sweep still running in its thread is awaited by store.close()
            with suppress(asyncio.CancelledError):
                await sweeper
            await run_in_threadpool(store.close)

    def generation() -> object | None:
        store: Storage = app.state.storage
        return store.generation()

    answers = Cache(settings.answer_cache_bytes)
    app = Starlette(routes=[*PAGE_ROUTES, *ROUTES], lifespan=lifespan,
                    exception_handlers=EXCEPTION_HANDLERS,
                    middleware=[Middleware(ObserveMiddleware, metrics=metrics),
                                Middleware(AnswerCacheMiddleware, cache=answers, generation=generation)])
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.files = Cache(settings.blob_cache_bytes)
    return app


async def sweep_forever(store: Storage, settings: Settings) -> None:
    """Remove orphans a crashed replica left, at start-up and then every `sweep_every` seconds."""
    while True:
        try:
            removed = await run_in_threadpool(store.sweep, settings.orphan_grace)
            if removed:
                log.warning("removed %d unreferenced blob(s) or abandoned upload(s)", removed)
        except Unavailable as e:
            log.warning("sweep skipped: %s", e)
        except Exception:  # a sweep must never take the server down
            log.exception("sweep failed")
        await asyncio.sleep(settings.sweep_every)


# -- errors ---------------------------------------------------------------------------

def fail(status: int, message: str, headers: dict[str, str] | None = None) -> HTTPException:
    return HTTPException(status, message, headers)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)


async def unavailable(request: Request, exc: Exception) -> Response:
    """The database or bucket is down: a clean, retryable answer instead of a traceback."""
    log.warning("%s %s: %s", request.method, request.url.path, exc)
    return JSONResponse({"error": f"the registry's storage is unavailable ({exc}); try again shortly"},
                        status_code=503, headers={"Retry-After": "5"})


async def server_error(request: Request, exc: Exception) -> Response:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"error": "internal server error"}, status_code=500)


async def query_too_long(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": str(exc)}, status_code=400)


EXCEPTION_HANDLERS: dict[Any, Any] = {HTTPException: http_error, Unavailable: unavailable,
                                      QueryTooLong: query_too_long, Exception: server_error}


# -- helpers --------------------------------------------------------------------------

def storage_of(request: Request) -> Storage:
    store: Storage = request.app.state.storage
    return store


def settings_of(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def read(request: Request, fn: Callable[..., T], *args: Any) -> T:
    """Run an index read: inline for SQLite (a local, indexed lookup takes microseconds, less
    than a threadpool hand-off), in the threadpool for a networked database."""
    if storage_of(request).inline_reads:
        return fn(*args)
    return await run_in_threadpool(fn, *args)


def whole_number(raw: str) -> int | None:
    """ASCII digits only: `isdigit()` also accepts '²' and other digits `int()` refuses."""
    if not raw or len(raw) > MAX_DIGITS or not raw.isascii() or not raw.isdigit():
        return None
    return int(raw)


def identity(registry: str, name: str, version: str) -> PackageId:
    try:
        return check_identity(registry, name, version)
    except InvalidIdentity as e:
        raise fail(400, str(e)) from None


def checksum_headers(record: Record) -> dict[str, str]:
    immutable = record.version not in MUTABLE_VERSIONS
    return {
        "X-Content-SHA256": record.sha256,
        "ETag": f'"{record.sha256}"',
        "Cache-Control": "public, max-age=31536000, immutable" if immutable else "no-cache",
    }


def etag_matches(header: str, sha256: str) -> bool:
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or any(t.removeprefix("W/") == f'"{sha256}"' for t in tags)


class BlobResponse(FileResponse):
    """A file response without byte ranges (whole files only, so errors keep one shape)."""

    chunk_size = 1024 * 1024  # each chunk is a thread hand-off: few, large ones

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(k, v) for k, v in scope["headers"] if k not in (b"range", b"if-range")]
        await super().__call__({**scope, "headers": headers}, receive, send)


# -- Context's API --------------------------------------------------------------------

async def search(request: Request) -> Response:
    """`GET /search?registry=R&name=N[&version=V]`: exact name, newest first, `[]` when none."""
    q = request.query_params
    registry, name, version = q.get("registry", ""), q.get("name", ""), q.get("version") or None
    if not registry or not name:
        raise fail(400, "registry and name are required, e.g. /search?registry=npm&name=react")
    try:
        check_registry(registry)
        check_name(name)
        if version is not None:
            identity(registry, name, version)
    except InvalidIdentity as e:
        raise fail(400, str(e)) from None
    records = await read(request, storage_of(request).versions, registry, name, version)
    mark_cacheable(request.scope)
    return JSONResponse([r.summary() for r in records])


async def packages(request: Request) -> Response:
    """`/packages/R/N/V` (GET/HEAD metadata, POST publish) and `/packages/R/N/V/download`."""
    segments = raw_segments(request, "/packages/")
    download = len(segments) >= 4 and segments[-1] == "download"
    if download:
        segments = segments[:-1]
    if len(segments) < 3:
        raise fail(404, "not found: use /packages/REGISTRY/NAME/VERSION[/download]")
    pid = identity(segments[0], "/".join(segments[1:-1]), segments[-1])
    if request.method == "POST":
        if download:
            raise fail(405, "publish with POST /packages/REGISTRY/NAME/VERSION", {"Allow": "GET, HEAD"})
        return await publish(request, pid)
    record = await read(request, storage_of(request).get, pid)
    if record is None:
        raise fail(404, f"package {pid.qualified} not found")
    if download:
        return await send_blob(request, record)
    mark_cacheable(request.scope)
    return JSONResponse(record.metadata(), headers=checksum_headers(record))


async def send_blob(request: Request, record: Record) -> Response:
    """The file from disk, streamed from the bucket, or (`--redirect-downloads`) a 302 to it."""
    headers = checksum_headers(record)
    inm = request.headers.get("if-none-match")
    if inm and etag_matches(inm, record.sha256):
        return Response(status_code=304, headers=headers)
    settings, blobs = settings_of(request), storage_of(request).blobs
    filename = f"{record.name.replace('/', '__')}@{record.version}.db"
    if settings.redirect_downloads:
        url = await run_in_threadpool(blobs.presign, record.sha256, filename, settings.presign_seconds)
        if url is not None:
            headers["Cache-Control"] = "no-store"  # the signed URL expires; the file does not
            return RedirectResponse(url, status_code=302, headers=headers)
    missing = f"the file of {record.id.qualified} is missing on the server"
    headers["Accept-Ranges"] = "none"
    headers["Content-Disposition"] = f"attachment; filename*=utf-8''{quote(filename)}"
    if request.method == "HEAD":
        headers["Content-Length"] = str(record.size)
        return Response(headers=headers, media_type="application/octet-stream")
    if record.size <= WHOLE_READ:
        files: Cache = request.app.state.files
        data: bytes | None = files.get(record.sha256)
        if data is None:
            data = await run_in_threadpool(_whole_blob, blobs, record, missing)
            files.put(record.sha256, data, len(data))
        mark_cacheable(request.scope)
        return Response(data, headers=headers, media_type="application/octet-stream")
    path = blobs.file_path(record.sha256)
    if path is not None:
        try:
            stat = await run_in_threadpool(path.stat)
        except FileNotFoundError:
            raise fail(500, missing) from None
        return BlobResponse(path, headers=headers, media_type="application/octet-stream",
                            stat_result=stat)
    headers["Content-Length"] = str(record.size)
    chunks = await run_in_threadpool(_first_chunk, blobs.stream(record.sha256), missing)
    return StreamingResponse(iterate_in_threadpool(chunks), headers=headers,
                             media_type="application/octet-stream")


def _whole_blob(blobs: BlobStore, record: Record, missing: str) -> bytes:
    """A small package file in one piece: one thread hand-off, one write to the socket.

    The bytes are named by their checksum, so they may be kept for later downloads."""
    try:
        data = b"".join(blobs.stream(record.sha256))
    except BlobMissing:
        raise fail(500, missing) from None
    if len(data) != record.size:
        raise fail(500, f"the file of {record.id.qualified} on the server is damaged")
    return data


def _first_chunk(stream: Iterator[bytes], missing: str) -> Iterator[bytes]:
    """Start the stream before answering, so a missing blob is a 500 and not a cut-off 200."""
    try:
        first = next(stream, b"")
    except BlobMissing:
        raise fail(500, missing) from None

    def rest() -> Iterator[bytes]:
        yield first
        yield from stream

    return rest()


async def publish(request: Request, pid: PackageId) -> Response:
    """Stream the body to a temp file (never into memory), validate it, then commit it."""
    settings = settings_of(request)
    authorize(request, settings)
    limit = settings.max_upload_bytes
    declared = request.headers.get("content-length")
    if declared is not None:
        length = whole_number(declared.strip())
        if length is None:
            raise fail(400, "invalid Content-Length")
        if length > limit:
            raise fail(413, f"upload too large: the limit is {limit} bytes")
    storage = storage_of(request)
    upload = await run_in_threadpool(storage.new_upload)
    try:
        await receive_body(request, upload, settings)
        sha256 = await run_in_threadpool(upload.finish)
        outcome = await run_in_threadpool(storage.publish, pid, upload, sha256)
    except ClientDisconnect:
        upload.discard()
        return Response(status_code=400)  # nobody is listening; the temp file is gone
    except Conflict as e:
        raise fail(409, str(e)) from None
    except Rejected as e:
        raise fail(422, str(e)) from None
    except OSError as e:
        if e.errno not in FULL_ERRNOS:
            raise
        log.warning("publish %s refused: no room to store it (%s)", pid.qualified, e)
        raise fail(507, f"the registry has no room to store {pid.qualified} ({e.strerror or e}); "
                        "nothing was published", {"Retry-After": "60"}) from None
    finally:
        upload.discard()
    status = 200 if outcome.status == "unchanged" else 201
    body = {**outcome.record.metadata(), "status": outcome.status}
    return JSONResponse(body, status_code=status, headers=checksum_headers(outcome.record))


def authorize(request: Request, settings: Settings) -> None:
    if not settings.publish_key:
        raise fail(403, "publishing is disabled: start the server with --publish-key "
                        "or CONTEXT_REGISTRY_KEY")
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise fail(401, "publishing needs 'Authorization: Bearer KEY'", {"WWW-Authenticate": "Bearer"})
    if not hmac.compare_digest(token.strip().encode(), settings.publish_key.encode()):
        raise fail(401, "invalid publish key", {"WWW-Authenticate": "Bearer"})


async def receive_body(request: Request, upload: Upload, settings: Settings) -> None:
    """Write the body to `upload`, refusing more than the limit or less than the minimum rate.

    The deadline grows with the bytes received (`body_grace` + bytes / `min_upload_rate`), so
    a large upload on a slow but honest link goes through while a client trickling one
    byte a second is cut off (408) and its temp file removed.
    """
    limit = settings.max_upload_bytes
    loop = asyncio.get_running_loop()
    start = loop.time()
    stream = request.stream().__aiter__()
    buffer = bytearray()
    received = 0
    while True:
        remaining = start + settings.body_grace + received / settings.min_upload_rate - loop.time()
        try:
            async with asyncio.timeout(max(remaining, 0.0)):
                chunk = await anext(stream)
        except StopAsyncIteration:
            break
        except TimeoutError:
            raise fail(408, f"upload too slow: send at least {settings.min_upload_rate} bytes a "
                            "second", {"Connection": "close"}) from None
        received += len(chunk)
        if upload.size + len(buffer) + len(chunk) > limit:
            raise fail(413, f"upload too large: the limit is {limit} bytes")
        buffer += chunk
        if len(buffer) >= WRITE_BUFFER:
            await run_in_threadpool(upload.write, bytes(buffer))
            buffer.clear()
    if buffer:
        await run_in_threadpool(upload.write, bytes(buffer))


# -- ours -----------------------------------------------------------------------------

async def api_search(request: Request) -> Response:
    """`GET /api/search?q=…[&limit=N]`: full-text over names and descriptions."""
    query = request.query_params.get("q", "")
    limit = int_param(request, "limit", 20, 1, 100)
    groups = await read(request, storage_of(request).text_search, query, limit)
    results = [{**g[0].summary(), "versions": [r.version for r in g]} for g in groups]
    mark_cacheable(request.scope)
    return JSONResponse({"query": query, "results": results})


async def api_package(request: Request) -> Response:
    """`GET /api/packages/R/N`: every version of one package with its metadata, newest first."""
    segments = raw_segments(request, "/api/packages/")
    if len(segments) < 2:
        raise fail(404, "not found: use /api/packages/REGISTRY/NAME")
    registry, name = segments[0], "/".join(segments[1:])
    try:
        check_registry(registry)
        check_name(name)
    except InvalidIdentity as e:
        raise fail(400, str(e)) from None
    records = await read(request, storage_of(request).versions, registry, name)
    if not records:
        raise fail(404, f"package {registry}/{name} not found")
    return JSONResponse({"registry": registry, "name": name,
                         "versions": [r.metadata() for r in records]})


async def health(request: Request) -> Response:
    """200 when the index and the blob store answer, else 503 naming what is wrong."""
    storage = storage_of(request)
    parts = await run_in_threadpool(storage.health)
    ok = all(v == "ok" for v in parts.values())
    body: dict[str, Any] = {"status": "ok" if ok else "unavailable"}
    if parts["database"] == "ok":
        try:
            body["packages"] = await run_in_threadpool(storage.count)
        except Unavailable as e:
            parts["database"], ok, body["status"] = str(e), False, "unavailable"
    body.update(parts)
    return JSONResponse(body, status_code=200 if ok else 503)


async def metrics(request: Request) -> Response:
    """Prometheus text format; the package count is left out while the index is down."""
    try:
        count: int | None = await run_in_threadpool(storage_of(request).count)
    except Unavailable:
        count = None
    text = request.app.state.metrics.render(count)
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")


def index(request: Request) -> Response:
    query = request.query_params.get("q", "").strip()
    storage = storage_of(request)
    groups = storage.text_search(query, 100) if query else storage.catalogue()
    return HTMLResponse(pages.render_index(groups, query, storage.count()), headers=pages.HEADERS)


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    value = whole_number(raw)
    if value is None or not low <= value <= high:
        raise fail(400, f"{name} must be a whole number from {low} to {high}")
    return value


ROUTES = [
    Route("/", index, methods=["GET"]),
    Route("/health", health, methods=["GET"]),
    Route("/metrics", metrics, methods=["GET"]),
    Route("/search", search, methods=["GET"]),
    Route("/api/search", api_search, methods=["GET"]),
    Route("/api/packages/{rest:path}", api_package, methods=["GET"]),
    Route("/packages/{rest:path}", packages, methods=["GET", "HEAD", "POST"]),
]
# The HTML pages may add their own routes (`pages.ROUTES`, matched before ours, so a page
# route for `/` replaces `index`).
PAGE_ROUTES: list[Route] = pages.ROUTES
