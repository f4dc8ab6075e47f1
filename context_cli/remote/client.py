"""The registry client: search a server, download a package safely, update what is installed.

A download streams into a temp file inside the store folder, is checked against the
server's SHA-256 (response header and/or search entry) and its Content-Length, is
validated as a package naming what was asked for, and only then renamed into place by
`Store.install_owned`. Anything else raises `RegistryError` with one line and leaves the
store exactly as it was. 429 and 5xx answers and dropped connections are retried a few
times with backoff (honouring `Retry-After`); other 4xx answers are final.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests

from .. import __version__
from ..errors import InvalidPackage, NotInstalled, RegistryError
from ..package.identity import InvalidIdentity, PackageId, check_identity, check_name, check_registry
from ..package.reader import open_package
from ..retry import RetryPolicy, parse_retry_after, send
from ..store.store import Installed, Spec, Store
from ..store.versions import version_key
from .config import Server, get_server

Progress = Callable[[int, "int | None"], None]
"""Called with (bytes received, total bytes or None) as a download proceeds."""

ATTEMPTS = 3           # tries per request for 429, 5xx and dropped connections
BACKOFF = 0.5          # seconds before the 2nd try; doubles after that
MAX_WAIT = 30.0        # a longer Retry-After is reported rather than waited for
TIMEOUT = (10, 60)     # connect, read (between bytes) in seconds
CHUNK = 64 * 1024
MUTABLE_VERSIONS = frozenset({"latest"})
HEADERS = {"User-Agent": f"context/{__version__}", "Accept-Encoding": "identity"}


class PackageNotFound(RegistryError):
    """The server does not have the requested package or version."""


def search_remote(registry: str, name: str, version: str | None = None,
                  server: str | Server | None = None) -> list[dict[str, Any]]:
    """Context's `/search`: entries `{name, registry, version, description?, size?}`, newest first."""
    _check(registry, name, version)
    srv = get_server(server)
    params = {"registry": registry, "name": name}
    if version:
        params["version"] = version
    with _request(srv, "/search", params=params) as resp:
        data = _json(resp, srv)
    if not isinstance(data, list):
        raise RegistryError(f"{srv.url}/search did not answer with a list")
    return [e for e in data if isinstance(e, dict) and isinstance(e.get("version"), str)]


def package_info(registry: str, name: str, version: str,
                 server: str | Server | None = None) -> dict[str, Any]:
    """`GET /packages/R/N/V`: the server's metadata for one version."""
    pid = _identity(registry, name, version)
    srv = get_server(server)
    with _request(srv, _package_path(pid)) as resp:
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
    expected = None
    if version is None:
        entries = search_remote(registry, name, server=srv)
        if not entries:
            raise PackageNotFound(f"{registry}/{name} is not on {srv.name} ({srv.url})")
        best = max(entries, key=lambda e: version_key(e["version"]))
        version, expected = best["version"], best.get("sha256")
    pid = _identity(registry, name, version)
    return _download(pid, srv, store or Store(), expected, progress)


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
             and isinstance(best.get("sha256"), str) and best["sha256"] != _file_sha256(old.path))
    if not moved and version_key(best["version"]) <= version_key(old.id.version):
        return None
    pid = _identity(old.id.registry, old.id.name, best["version"])
    progress = progress_for(pid) if progress_for else None
    return _download(pid, srv, store, best.get("sha256"), progress)


# -- downloading ----------------------------------------------------------------------

def _download(pid: PackageId, srv: Server, store: Store, expected: str | None,
              progress: Progress | None) -> Installed:
    with _request(srv, _package_path(pid) + "/download", stream=True) as resp:
        if resp.status_code == 404:
            raise PackageNotFound(f"{pid.qualified} is not on {srv.name} ({srv.url})")
        _raise_for_status(resp, srv)
        return _install_stream(resp, pid, srv, store, expected, progress)


def _install_stream(resp: requests.Response, pid: PackageId, srv: Server, store: Store,
                    expected: str | None, progress: Progress | None) -> Installed:
    header = (resp.headers.get("X-Content-SHA256") or "").strip().lower() or None
    expected = expected.strip().lower() if isinstance(expected, str) and expected else None
    if header and expected and header != expected:
        raise RegistryError(f"{srv.url} gave two different checksums for {pid.qualified}; "
                            "nothing was installed")
    want = header or expected
    encoded = resp.headers.get("Content-Encoding", "identity").lower() not in ("", "identity")
    total = None if encoded else _content_length(resp)
    store.root.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".downloading-", suffix=".db", dir=store.root)
    tmp = Path(tmp_name)
    try:
        digest, size = _receive(resp, fd, total, progress, pid, srv)
        if total is not None and size != total:
            raise RegistryError(f"download of {pid.qualified} from {srv.url} was cut short "
                                f"({size} of {total} bytes); nothing was installed")
        if want and digest != want:
            raise RegistryError(f"checksum mismatch for {pid.qualified} from {srv.url}: the file "
                                "was altered or damaged; nothing was installed")
        with open_package(tmp, registry=pid.registry) as pkg:
            got = (pkg.meta["name"], pkg.meta["version"])
        if got != (pid.name, pid.version):
            raise RegistryError(f"{srv.url} sent {got[0]}@{got[1]} when asked for {pid}; "
                                "nothing was installed")
        return store.install_owned(tmp, registry=pid.registry)
    except InvalidPackage as e:
        raise RegistryError(f"{srv.url} sent a file for {pid.qualified} that is not a valid "
                            f"package ({e}); nothing was installed") from None
    finally:
        tmp.unlink(missing_ok=True)


def _receive(resp: requests.Response, fd: int, total: int | None, progress: Progress | None,
             pid: PackageId, srv: Server) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with os.fdopen(fd, "wb") as out:
        try:
            for chunk in resp.iter_content(CHUNK):
                out.write(chunk)
                digest.update(chunk)
                size += len(chunk)
                if progress:
                    progress(size, total)
        except requests.RequestException:
            expected = f" (expected {total} bytes)" if total is not None else ""
            raise RegistryError(f"download of {pid.qualified} from {srv.url} was interrupted"
                                f"{expected}; nothing was installed") from None
    return digest.hexdigest(), size


# -- HTTP -----------------------------------------------------------------------------

def _request(srv: Server, path: str, *, params: dict[str, str] | None = None,
             stream: bool = False) -> requests.Response:
    """GET with bounded retries for 429, 5xx and dropped connections; other answers returned."""
    policy = RetryPolicy(ATTEMPTS, BACKOFF, max_retry_after=MAX_WAIT, give_up_beyond_max=True)
    try:
        resp = send(lambda: requests.get(srv.url + path, params=params, stream=stream,
                                         timeout=TIMEOUT, headers=HEADERS), policy)
    except (requests.ConnectionError, requests.Timeout) as e:
        raise RegistryError(f"cannot reach registry server {srv.url}: {_reason(e)}") from None
    except requests.RequestException as e:
        raise RegistryError(f"request to registry server {srv.url} failed: {_reason(e)}") from None
    if not policy.retries_status(resp.status_code):
        return resp
    wait = parse_retry_after(resp.headers.get("Retry-After"))
    with resp:
        hint = f"retry in {wait:.0f} s" if wait else "try again later"
        raise RegistryError(f"registry server {srv.url} answered {resp.status_code} "
                            f"({_error_text(resp)}); {hint}")


def _json(resp: requests.Response, srv: Server) -> Any:
    _raise_for_status(resp, srv)
    try:
        return resp.json()
    except ValueError:
        raise RegistryError(f"{srv.url} did not answer with JSON ({resp.url})") from None


def _raise_for_status(resp: requests.Response, srv: Server) -> None:
    if resp.status_code >= 400:
        raise RegistryError(f"registry server {srv.url} refused: {resp.status_code} "
                            f"{_error_text(resp)}")


def _error_text(resp: requests.Response) -> str:
    """The server's `{"error": ...}` message, else its status reason; one short line."""
    try:
        raw = next(resp.iter_content(4096), b"")
    except requests.RequestException:
        raw = b""
    text = raw.decode("utf-8", "replace")
    match = re.search(r'"error"\s*:\s*"((?:[^"\\]|\\.)*)"', text)
    message = match.group(1) if match else (resp.reason or "")
    return " ".join(message.split())[:200] or str(resp.status_code)


def _content_length(resp: requests.Response) -> int | None:
    value = resp.headers.get("Content-Length", "").strip()
    return int(value) if value.isdigit() else None


def _reason(e: Exception) -> str:
    """`Connection refused` rather than urllib3's nested repr."""
    if isinstance(e, requests.Timeout):
        return "timed out"
    match = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", str(e))
    if match:
        return match.group(1).strip().lower()
    text = str(e)
    if "RemoteDisconnected" in text or "Connection aborted" in text:
        return "the connection was closed"
    return type(e).__name__


# -- small helpers --------------------------------------------------------------------

def _package_path(pid: PackageId) -> str:
    return "/packages/" + "/".join(quote(p, safe="") for p in (pid.registry, pid.name, pid.version))


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


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
