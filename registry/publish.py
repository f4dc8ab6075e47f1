"""Publish package files to a registry server: one file, or a whole catalogue.

`publish_file` uploads one `.db` with `POST /packages/R/N/V` and a bearer key. `publish_all`
walks the definitions: it discovers the releases worth building, asks the server which it
already has, builds the rest into a temp dir, uploads them, and returns a summary.

What the server already has is skipped without building:

* a versioned release that `GET /packages/R/N/V` finds (published versions are immutable);
* an unversioned (`latest`) git source whose server copy has the `source_commit` that
  `git ls-remote` reports for its branch now; an unversioned zip whose archive has the same
  SHA-256 (recorded as `source_commit` `sha256:...`, checked after the download);
* a release whose git tag does not exist (yet): a skip with its reason, not a failure.

HTTP: 5xx, 429 and dropped connections are retried (bounded, with backoff); any other 4xx
is final at once. A refused key (401/403) or an unreachable server stops the whole run,
since every later upload would fail the same way; other 4xx answers (409 conflict, 413, 422)
fail that one release and the run goes on. The run ends with counts and the failures' reasons.

Server and key: `--server NAME` from `config.json`, else `REGISTRY_SERVER_URL` (Neuledge's
name); the key from `REGISTRY_PUBLISH_KEY` (Neuledge's name), else `CONTEXT_REGISTRY_KEY`.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from context_cli import __version__
from context_cli.environment import REGISTRY_KEY
from context_cli.errors import ContextError, InvalidPackage, RegistryError
from context_cli.package.identity import PackageId, check_identity
from context_cli.remote.protocol import error_text, package_path, read_json
from context_cli.retry import RetryPolicy, send
from context_cli.sources.transfer import TransferError, describe_error

from .definitions import Definition, GitSource, find_definition

SERVER_URL_ENV = "REGISTRY_SERVER_URL"
KEY_ENVS = ("REGISTRY_PUBLISH_KEY", REGISTRY_KEY.name)
ATTEMPTS = 4  # one try and three retries on 5xx, 429 and dropped connections
BACKOFF = 1.0  # seconds before the first retry; doubles after that
TIMEOUT = (10, 600)  # connect, read: the server validates a large upload before answering
_HEADERS = {"User-Agent": f"context-registry/{__version__}"}
_sleep = time.sleep  # tests replace it to record the waits


class PublishError(RegistryError):
    """The server refused or failed; `fatal` means no later request can succeed either."""

    def __init__(self, message: str, status: int | None = None, *, fatal: bool = False):
        super().__init__(message)
        self.status = status
        self.fatal = fatal


@dataclass(frozen=True)
class Target:
    """Where to publish: the server's base URL, its name for messages, and the key."""

    url: str
    name: str
    key: str | None = None


def resolve_target(server: str | None = None, *, key: str | None = None,
                   need_key: bool = True) -> Target:
    """`--server NAME` from config.json, else $REGISTRY_SERVER_URL; the key from the env."""
    from context_cli.remote.config import get_server

    if server:
        srv = get_server(server)
        url, name = srv.url, srv.name
    else:
        url = os.environ.get(SERVER_URL_ENV, "").strip().rstrip("/")
        if not url:
            raise PublishError(f"no registry server to publish to: pass --server NAME "
                               f"(from config.json) or set {SERVER_URL_ENV}")
        if not re.match(r"^https?://[^/\s]+", url):
            raise PublishError(f"{SERVER_URL_ENV}={url!r} is not an http(s) URL")
        name = url
    key = key or next((v.strip() for v in (os.environ.get(KEY_ENVS[0]), REGISTRY_KEY.value()) if v and v.strip()),
                      None)
    if need_key and not key:
        raise PublishError(f"no publish key: set {KEY_ENVS[0]} (or {KEY_ENVS[1]})")
    return Target(url, name, key)


# ---- one file ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Published:
    id: PackageId
    status: str  # created | replaced | unchanged (the server's word)
    sha256: str | None
    size: int


def publish_file(path: Path, target: Target, *, registry: str | None = None) -> Published:
    """Upload one package file under its own name and version.

    The registry is `registry`, else the file's own `registry` meta key; a file built with
    `--registry local` (or a Context package, which records none) needs `registry`.
    """
    from context_cli.package.reader import open_package

    try:
        with open_package(Path(path), deep=True) as pkg:
            meta = dict(pkg.meta)
    except InvalidPackage as e:
        raise PublishError(f"{e}; only package files made by `context` can be published") from None
    own = meta.get("registry")
    if registry and own and own not in ("local", registry):
        raise PublishError(f"{Path(path).name} was built for registry {own!r}, not {registry!r}; "
                           "rebuild it or drop --registry")
    chosen = registry or (own if own and own != "local" else None)
    if not chosen:
        file = Path(path).name
        what = "was built as a local package" if own == "local" else "records no registry"
        raise PublishError(f"{file} {what}: it does not say which registry (npm, pip, maven, ...) its "
                           "library comes from, and the server files every package under one. Say it: "
                           f"`context-registry publish {file} --registry pip` (or rebuild it with "
                           "`context add SOURCE --registry pip`)")
    pid = check_identity(chosen, meta["name"], meta["version"])
    body = upload(target, Path(path), pid)
    return Published(pid, str(body.get("status", "created")), body.get("sha256"),
                     Path(path).stat().st_size)


def upload(target: Target, path: Path, pid: PackageId) -> dict[str, Any]:
    """`POST /packages/R/N/V` with the file as the body; returns the server's JSON answer."""
    if not target.key:
        raise PublishError(f"no publish key: set {KEY_ENVS[0]} (or {KEY_ENVS[1]})")
    headers = {"Authorization": f"Bearer {target.key}", "Content-Type": "application/octet-stream"}
    resp = _send("POST", target, package_path(pid), headers=headers, body=path,
                 what=f"publishing {pid.qualified}")
    with resp:
        if resp.status_code in (401, 403):
            raise PublishError(f"{target.name} refused the publish key ({resp.status_code} "
                               f"{error_text(resp)}); check {KEY_ENVS[0]}", resp.status_code,
                               fatal=True)
        if resp.status_code == 409:
            raise PublishError(f"{pid.qualified} is already on {target.name} with different "
                               "content; published versions cannot be replaced", 409)
        if resp.status_code >= 400:
            raise PublishError(f"{target.name} refused {pid.qualified}: {resp.status_code} "
                               f"{error_text(resp)}", resp.status_code)
        try:
            body = read_json(resp)
        except (ValueError, TransferError):
            body = {}
    return body if isinstance(body, dict) else {}


def server_metadata(target: Target, registry: str, name: str, version: str) -> dict[str, Any] | None:
    """`GET /packages/R/N/V`: the server's metadata, or None when it does not have it."""
    pid = check_identity(registry, name, version)
    resp = _send("GET", target, package_path(pid), what=f"checking {pid.qualified}")
    with resp:
        if resp.status_code == 404:
            return None
        if resp.status_code >= 400:
            raise PublishError(f"{target.name} refused to look up {pid.qualified}: "
                               f"{resp.status_code} {error_text(resp)}", resp.status_code)
        try:
            data = read_json(resp)
        except (ValueError, TransferError):
            raise PublishError(f"{target.name} did not answer with JSON for {pid.qualified}") from None
    if not isinstance(data, dict):
        raise PublishError(f"{target.name} sent unexpected metadata for {pid.qualified}")
    return data


def _send(method: str, target: Target, path: str, *, what: str,
          headers: dict[str, str] | None = None, body: Path | None = None) -> requests.Response:
    """One request with bounded retries on 5xx, 429 and dropped connections.

    Returns any answer below 500 (other than 429) for the caller to judge; raises
    `PublishError` when the retries run out (fatal when the server could not be reached).
    """
    url, headers = target.url + path, {**_HEADERS, **(headers or {})}

    def request() -> requests.Response:
        if body is None:
            return requests.request(method, url, timeout=TIMEOUT, headers=headers, stream=True)
        with body.open("rb") as f:
            return requests.request(method, url, data=f, timeout=TIMEOUT, headers=headers, stream=True)

    policy = RetryPolicy(ATTEMPTS, BACKOFF, honour_retry_after=False)
    try:
        resp = send(request, policy, sleep=_sleep)
    except (requests.ConnectionError, requests.Timeout) as e:
        raise PublishError(f"{what}: cannot reach registry server {target.url} "
                           f"({describe_error(e)}) after {ATTEMPTS} attempts; choose the server with "
                           f"--server NAME (from `context server list`) or {SERVER_URL_ENV}", fatal=True) from None
    except requests.RequestException as e:
        raise PublishError(f"{what}: request to {target.url} failed ({describe_error(e)})") from None
    if not policy.retries_status(resp.status_code):
        return resp
    with resp:
        raise PublishError(f"{what}: {target.name} answered {resp.status_code} "
                           f"({error_text(resp)}) {ATTEMPTS} times; try again later",
                           resp.status_code)


# ---- the whole catalogue -------------------------------------------------------------------


@dataclass
class PublishAllOptions:
    since_days: float | None = None
    latest: int | None = None
    only: str | None = None  # REGISTRY/NAME
    dry_run: bool = False
    embed: bool = True
    embed_model: str | None = None
    quality: bool | None = None  # the second vector set (BuildOptions.quality)


@dataclass(frozen=True)
class Outcome:
    label: str  # registry/name@version (registry/name when discovery failed)
    status: str  # published | skipped | failed | planned (dry run)
    reason: str = ""

    def line(self) -> str:
        return f"{self.status:<9} {self.label}" + (f": {self.reason}" if self.reason else "")


@dataclass
class Summary:
    outcomes: list[Outcome] = field(default_factory=list)
    stopped: str | None = None  # why the run ended early

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def ok(self) -> bool:
        return not self.count("failed") and not self.stopped

    def lines(self) -> list[str]:
        """The closing report: counts, then each failure with its one-line reason."""
        counts = [f"{self.count('published')} published", f"{self.count('skipped')} skipped",
                  f"{self.count('failed')} failed"]
        if self.count("planned"):
            counts.insert(0, f"{self.count('planned')} to publish (dry run)")
        out = ["Summary: " + ", ".join(counts)]
        if self.stopped:
            out.append(f"Stopped early: {self.stopped}")
        failures = [o for o in self.outcomes if o.status == "failed"]
        if failures:
            out.append("Failures:")
            out += [f"  {o.label}: {o.reason}" for o in failures]
        return out


Report = Callable[[Outcome], None]


def publish_all(definitions: Iterable[Definition], target: Target,
                opts: PublishAllOptions | None = None, report: Report | None = None) -> Summary:
    """Discover, skip what the server has, build and publish the rest; never raises for one
    release's failure (it is in the summary), only for a bad `only`."""
    from .build import releases

    opts = opts or PublishAllOptions()
    defs = list(definitions)
    if opts.only:
        defs = [find_definition(defs, opts.only)]
    summary = Summary()

    def record(outcome: Outcome) -> None:
        summary.outcomes.append(outcome)
        if report:
            report(outcome)

    for definition in defs:
        try:
            versions = releases(definition, since_days=opts.since_days, latest=opts.latest)
        except ContextError as e:
            record(Outcome(definition.key, "failed", f"version discovery: {e}"))
            continue
        for version in versions:
            try:
                record(_publish_one(definition, version, target, opts))
            except PublishError as e:  # fatal: a refused key or an unreachable server
                label = f"{definition.key}@{version}"
                record(Outcome(label, "failed", str(e)))
                summary.stopped = str(e)
                return summary
    return summary


def _publish_one(definition: Definition, version: str, target: Target,
                 opts: PublishAllOptions) -> Outcome:
    """One release: skip, build and upload, or fail with a one-line reason.

    Raises only a fatal `PublishError` (the run cannot go on).
    """
    from .build import build_fetched, fetch_for
    from .fetch import MissingRef, remote_head

    label = f"{definition.key}@{version}"
    try:
        have = server_metadata(target, definition.registry, definition.name, version)
        if have is not None and definition.versioned:
            return Outcome(label, "skipped", "already on the server")
        if have is not None and isinstance(definition.source, GitSource):
            head = remote_head(definition.source.url, definition.source.ref)
            if have.get("source_commit") == head.commit:
                return Outcome(label, "skipped", f"unchanged (commit {head.commit[:12]})")
        if opts.dry_run:
            return Outcome(label, "planned", "not on the server" if have is None
                           else "the source has changed")
        fetched, source = fetch_for(definition, version)
        try:
            commit = fetched.source_commit
            if have is not None and commit and have.get("source_commit") == commit:
                return Outcome(label, "skipped", f"unchanged ({commit[:19]})")
            with tempfile.TemporaryDirectory(prefix="context-publish-") as tmp:
                result = build_fetched(definition, version, fetched, source, Path(tmp),
                                       embed=opts.embed, embed_model=opts.embed_model, quality=opts.quality)
                size = result.path.stat().st_size
                upload(target, result.path, result.id)
        finally:
            fetched.cleanup()
        return Outcome(label, "published",
                       f"{result.chunks} sections, {size / 1e6:.1f} MB, {result.seconds:.1f}s")
    except MissingRef as e:
        return Outcome(label, "skipped", f"source tag missing ({e})")
    except PublishError as e:
        if e.fatal:
            raise
        return Outcome(label, "failed", str(e))
    except ContextError as e:
        return Outcome(label, "failed", str(e))
    except Exception as e:  # noqa: BLE001 - one broken release must not cost the others
        return Outcome(label, "failed", f"unexpected {type(e).__name__}: {e}")
