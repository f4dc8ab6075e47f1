"""The registry client: search a server, download a package safely, update what is installed.

A download streams into a temp file inside the store folder, is checked against the
server's SHA-256 (response header and/or search entry) and its Content-Length, is
bounded in size (the server's declared size, else `max_download_bytes()`) and in time (an
overall deadline, not only a per-read timeout), is never decoded (identity is asked for and
an encoded answer refused), is validated as a package naming what was asked for, and only then renamed into place by
`Store.install_owned`. Anything else raises `RegistryError` with one line and leaves the
store exactly as it was. 429 and 5xx answers and dropped connections are retried a few
times with backoff (honouring `Retry-After`); other 4xx answers are final.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import requests

from ..atomic import TEMP_SUFFIX
from ..digest import file_sha256
from ..environment import MAX_DOWNLOAD_BYTES, REGISTRY_URL
from ..errors import InvalidPackage, NotInstalled, RegistryError
from ..package.identity import InvalidIdentity, PackageId, check_identity, check_name, check_registry
from ..package.reader import open_package
from ..retry import RetryPolicy, parse_retry_after, send
from ..sources.http import HttpOptions
from ..sources.transfer import (
    IDENTITY,
    Progress,
    TransferError,
    describe_error,
    download_deadline,
    header_int,
    read_body,
)
from ..store.store import Installed, Spec, Store
from ..version import __version__
from ..versions import is_version, version_key
from .config import URL_ENV, Server, get_server
from .protocol import SEARCH_PATH, SHA256_HEADER, download_path, error_text, package_path, read_json

ATTEMPTS = 3           # tries per request for 429, 5xx and dropped connections
BACKOFF = 0.5          # seconds before the 2nd try; doubles after that
MAX_WAIT = 30.0        # a longer Retry-After is reported rather than waited for
MUTABLE_VERSIONS = frozenset({"latest"})
HEADERS = {"User-Agent": f"context/{__version__}", **IDENTITY}
DEFAULT_MAX_BYTES = 512 * 1024 * 1024


class PackageNotFound(RegistryError):
    """The server does not have the requested package or version; `versions` are the ones of
    that package it does have, newest first (empty when it has none)."""

    def __init__(self, message: str, versions: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.versions = tuple(versions)


class Unreachable(RegistryError):
    """The server did not answer (refused, unknown host, timed out). The message names it and
    how to choose another; `reason` and `server` let the MCP tools say it their way."""

    def __init__(self, srv: Server, reason: str) -> None:
        self.server, self.reason = srv, reason
        super().__init__(f"cannot reach registry server {srv.url}: {reason}; {switch_hint(srv)}")


def switch_hint(srv: Server) -> str:
    """How to point the client at another server: the command, or the variable that wins over it."""
    if from_env(srv):
        return f"the URL comes from {URL_ENV}: change or unset it"
    return "to use another: `context server add NAME URL --default`"


def from_env(srv: Server) -> bool:
    """True when `srv` is the default server re-pointed by `CONTEXT_REGISTRY_URL`."""
    return srv.default and (REGISTRY_URL.value() or "").strip().rstrip("/") == srv.url


def search_remote(registry: str, name: str, version: str | None = None,
                  server: str | Server | None = None) -> list[dict[str, Any]]:
    """Context's `/search`: entries `{name, registry, version, description?, size?}`, newest first."""
    _check(registry, name, version)
    srv = get_server(server)
    params = {"registry": registry, "name": name}
    if version:
        params["version"] = version
    with _request(srv, SEARCH_PATH, params=params) as resp:
        data = _json(resp, srv)
    if not isinstance(data, list):
        raise RegistryError(f"{srv.url}/search did not answer with a list")
    return [e for e in data if isinstance(e, dict) and is_version(e.get("version"))]


def package_info(registry: str, name: str, version: str,
                 server: str | Server | None = None) -> dict[str, Any]:
    """`GET /packages/R/N/V`: the server's metadata for one version."""
    pid = _identity(registry, name, version)
    srv = get_server(server)
    with _request(srv, package_path(pid)) as resp:
        if resp.status_code == 404:
            raise PackageNotFound(f"{pid.qualified} is not on {srv.name} ({srv.url})")
        data = _json(resp, srv)
    if not isinstance(data, dict):
        raise RegistryError(f"{srv.url} sent unexpected metadata for {pid.qualified}")
    return data


def download_and_install(registry: str, name: str, version: str | None = None, *,
                         server: str | Server | None = None, store: Store | None = None,
                         progress: Progress | None = None) -> Installed:
    """Install one package from a server; `version=None` means the newest it has."""
    srv = get_server(server)
    entry: dict[str, Any] = {}
    if version is None:
        entries = search_remote(registry, name, server=srv)
        if not entries:
            raise PackageNotFound(f"{registry}/{name} is not on {srv.name} ({srv.url})")
        entry = max(entries, key=lambda e: version_key(e["version"]))
        version = entry["version"]
    pid = _identity(registry, name, version)
    return _download(pid, srv, store or Store(), entry, progress)


def update_all(names: Iterable[str] | None = None, *, server: str | Server | None = None,
               store: Store | None = None,
               progress_for: Callable[[PackageId], Progress | None] | None = None,
               on_error: Callable[[Installed, RegistryError], None] | None = None,
               ) -> list[tuple[Installed, Installed]]:
    """Install newer versions of installed packages; return (old, new) pairs.

    `names` (`name` or `registry/name`) narrows the set. Older versions stay installed.
    A failure raises, unless `on_error` is given: then it is reported and the rest go on.
    """
    store = store or Store()
    srv = get_server(server)
    newest: dict[tuple[str, str], Installed] = {}
    for inst in store.installed():
        key = (inst.id.registry, inst.id.name)
        if key not in newest or version_key(inst.id.version) > version_key(newest[key].id.version):
            newest[key] = inst
    if names:
        specs = [Spec.parse(n) for n in names]
        for s in specs:
            if not any(s.name == n and s.registry in (None, r) for r, n in newest):
                raise NotInstalled(f"{s} is not installed from a registry (see `context list`)")
        newest = {k: v for k, v in newest.items()
                  if any(s.name == k[1] and s.registry in (None, k[0]) for s in specs)}
    updates = []
    for key in sorted(newest):
        old = newest[key]
        try:
            new = _update_one(old, srv, store, progress_for)
        except RegistryError as e:
            if on_error is None:
                raise
            on_error(old, e)
            continue
        if new is not None:
            updates.append((old, new))
    return updates


def _update_one(old: Installed, srv: Server, store: Store,
                progress_for: Callable[[PackageId], Progress | None] | None) -> Installed | None:
    entries = search_remote(old.id.registry, old.id.name, server=srv)
    if not entries:
        return None
    best = max(entries, key=lambda e: version_key(e["version"]))
    moved = (best["version"] == old.id.version and old.id.version in MUTABLE_VERSIONS
             and isinstance(best.get("sha256"), str) and best["sha256"] != file_sha256(old.path))
    if not moved and version_key(best["version"]) <= version_key(old.id.version):
        return None
    pid = _identity(old.id.registry, old.id.name, best["version"])
    progress = progress_for(pid) if progress_for else None
    return _download(pid, srv, store, best, progress)


# -- downloading ----------------------------------------------------------------------

def max_download_bytes() -> int:
    """The size cap for a download whose size the server did not declare."""
    return header_int(MAX_DOWNLOAD_BYTES.value()) or DEFAULT_MAX_BYTES


def _download(pid: PackageId, srv: Server, store: Store, entry: dict[str, Any],
              progress: Progress | None) -> Installed:
    """`entry` is the server's search entry for this version when we have it (sha256, size)."""
    with _request(srv, download_path(pid)) as resp:
        if resp.status_code == 404:
            raise _version_not_found(pid, srv)
        _raise_for_status(resp, srv)
        return _install_stream(resp, pid, srv, store, entry, progress)


SHOWN_VERSIONS = 10  # versions named in a "not on the server" message


def _version_not_found(pid: PackageId, srv: Server) -> PackageNotFound:
    """"X@V is not on the server", naming the versions of X it has (one more request, made
    only after a miss; if that fails too, the message goes without them)."""
    try:
        entries = search_remote(pid.registry, pid.name, server=srv)
    except RegistryError:
        entries = []
    versions = sorted({e["version"] for e in entries}, key=version_key, reverse=True)
    where = f"{pid.qualified} is not on {srv.name} ({srv.url})"
    if not versions:
        return PackageNotFound(f"{where}, nor any version of {pid.registry}/{pid.name}")
    shown = ", ".join(versions[:SHOWN_VERSIONS]) + (f" and {len(versions) - SHOWN_VERSIONS} more"
                                                     if len(versions) > SHOWN_VERSIONS else "")
    return PackageNotFound(f"{where}; it has {shown}", versions)


def _install_stream(resp: requests.Response, pid: PackageId, srv: Server, store: Store,
                    entry: dict[str, Any], progress: Progress | None) -> Installed:
    # Behind --redirect-downloads the checksum comes with the registry's 302, not the store's 200.
    sent = next((h.headers[SHA256_HEADER] for h in [resp, *reversed(resp.history)] if SHA256_HEADER in h.headers), "")
    header = sent.strip().lower() or None
    expected = entry.get("sha256")
    expected = expected.strip().lower() if isinstance(expected, str) and expected else None
    if header and expected and header != expected:
        raise RegistryError(f"{srv.url} gave two different checksums for {pid.qualified}; "
                            "nothing was installed")
    want = header or expected
    listed = entry.get("sizeBytes", entry.get("size"))  # the server's own word, when we have it
    limit = max_download_bytes()
    if isinstance(listed, int) and not isinstance(listed, bool) and 0 <= listed < limit:
        limit = listed
    store.root.mkdir(parents=True, exist_ok=True)
    # Named like every temp file of ours (never *.db): the store never lists it as a package.
    fd, tmp_name = tempfile.mkstemp(prefix=".downloading-", suffix=TEMP_SUFFIX, dir=store.root)
    tmp = Path(tmp_name)
    try:
        digest = _receive(resp, fd, limit, progress, pid, srv)
        if want and digest != want:
            raise RegistryError(f"checksum mismatch for {pid.qualified} from {srv.url}: the file "
                                "was altered or damaged; nothing was installed")
        with open_package(tmp, registry=pid.registry) as pkg:
            got = (pkg.meta["name"], pkg.meta["version"])
        if got != (pid.name, pid.version):
            raise RegistryError(f"{srv.url} sent {got[0]}@{got[1]} when asked for {pid}; "
                                "nothing was installed")
        return store.install_owned(tmp, registry=pid.registry, server=srv.url)
    except InvalidPackage as e:
        raise RegistryError(f"{srv.url} sent a file for {pid.qualified} that is not a valid "
                            f"package ({e}); nothing was installed") from None
    finally:
        tmp.unlink(missing_ok=True)


def _receive(resp: requests.Response, fd: int, limit: int,
             progress: Progress | None, pid: PackageId, srv: Server) -> str:
    """Stream the body into `fd` within the size cap and deadline; return its SHA-256."""
    digest = hashlib.sha256()
    with os.fdopen(fd, "wb") as out:
        try:
            for chunk in read_body(resp, limit=limit, deadline=download_deadline(), progress=progress):
                out.write(chunk)
                digest.update(chunk)
        except TransferError as e:
            raise RegistryError(f"download of {pid.qualified} from {srv.url}: {e}; "
                                "nothing was installed") from None
        except OSError as e:  # a full disk, a file size limit, a store that went read-only
            raise RegistryError(f"cannot write {pid.qualified} into the package store: "
                                f"{e.strerror or e}; nothing was installed") from None
    return digest.hexdigest()


# -- HTTP -----------------------------------------------------------------------------

def timeouts() -> tuple[float, float]:
    """(connect, read between bytes) in seconds: 10 and 30, or `CONTEXT_HTTP_TIMEOUT` for both,
    as for web sources; a silent stall ends at the read timeout."""
    opts = HttpOptions.from_env()
    return opts.connect_timeout, opts.read_timeout


def _request(srv: Server, path: str, *, params: dict[str, str] | None = None) -> requests.Response:
    """GET with bounded retries for 429, 5xx and dropped connections; other answers returned."""
    policy = RetryPolicy(ATTEMPTS, BACKOFF, max_retry_after=MAX_WAIT, give_up_beyond_max=True)
    try:
        resp = send(lambda: requests.get(srv.url + path, params=params, stream=True,
                                         timeout=timeouts(), headers=HEADERS), policy)
    except (requests.ConnectionError, requests.Timeout) as e:
        raise Unreachable(srv, describe_error(e)) from None
    except requests.RequestException as e:
        raise RegistryError(f"request to registry server {srv.url} failed: {describe_error(e)}") from None
    if not policy.retries_status(resp.status_code):
        return resp
    wait = parse_retry_after(resp.headers.get("Retry-After"))
    with resp:
        hint = f"retry in {wait:.0f} s" if wait else "try again later"
        raise RegistryError(f"registry server {srv.url} answered {resp.status_code} "
                            f"({error_text(resp)}); {hint}")


def _json(resp: requests.Response, srv: Server) -> Any:
    _raise_for_status(resp, srv)
    try:
        return read_json(resp)
    except ValueError:
        raise RegistryError(f"{srv.url} did not answer with JSON ({resp.url})") from None
    except TransferError as e:
        raise RegistryError(f"{srv.url} answered badly ({resp.url}): {e}") from None


def _raise_for_status(resp: requests.Response, srv: Server) -> None:
    if resp.status_code >= 400:
        raise RegistryError(f"registry server {srv.url} refused: {resp.status_code} "
                            f"{error_text(resp)}")


# -- small helpers --------------------------------------------------------------------

def _identity(registry: str, name: str, version: str) -> PackageId:
    try:
        return check_identity(registry, name, version)
    except InvalidIdentity as e:
        raise RegistryError(str(e)) from None


def _check(registry: str, name: str, version: str | None) -> None:
    try:
        check_registry(registry)
        check_name(name)
    except InvalidIdentity as e:
        raise RegistryError(str(e)) from None
    if version is not None:
        _identity(registry, name, version)


