"""Released artefacts as documentation sources: a PyPI sdist (else a wheel) or an npm tarball.

Building from the artefact itself gives docs that match the released version exactly, with no
git clone and no guessing at tags. `pypi:NAME[==VER]` and `npm:NAME[@VER]` (scoped:
`npm:@scope/pkg@1.2.3`) resolve the version (latest stable when none), download the
artefact with a size cap, check it against the registry's digest, extract it safely and point
the builder at its docs folder (`docs/`, `doc/`, `documentation/`; else the README). A PyPI
release without an sdist is read from one of its wheels (wheel.py).

The registry HTTP helpers live here too because the publisher's version discovery talks to the
same registries with the same retry rules and the same base-URL overrides:
`CONTEXT_NPM_REGISTRY_URL`, `CONTEXT_PYPI_URL`, `CONTEXT_MAVEN_URL`,
`CONTEXT_MAVEN_SEARCH_URL`, `CONTEXT_HEX_URL` (tests point them at a loopback server).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import requests

from ..environment import HEX_URL, MAVEN_SEARCH_URL, MAVEN_URL, NPM_REGISTRY_URL, PYPI_URL
from ..errors import SourceError
from ..retry import RetryPolicy, send
from .archive import extract
from .base import Fetched
from .transfer import IDENTITY, TransferError, describe_error, download_deadline, read_body
from .unpacked import Layout, sdist_layout

URL_VARIABLES = {"npm": NPM_REGISTRY_URL, "pypi": PYPI_URL, "maven": MAVEN_URL, "maven_search": MAVEN_SEARCH_URL,
                 "hex": HEX_URL}  # each one's default is the public registry's URL
DEFAULT_URLS = {kind: (v.name, v.default) for kind, v in URL_VARIABLES.items()}
USER_AGENT = "context-docs/0.1 (documentation packages for coding agents)"
_HEADERS = {"User-Agent": USER_AGENT}
ATTEMPTS = 4  # one try and three retries on 5xx, 429 and network errors
RETRY_BACKOFF = 1.0  # seconds; doubles each retry
MAX_RETRY_AFTER = 60.0  # a longer Retry-After is shortened to this
TIMEOUT = (10, 60)  # connect, read
_sleep = time.sleep  # tests replace it to skip or record the waits
MAX_JSON_BYTES = 256 * 1024 * 1024  # npm documents of big packages run to tens of MB
MAX_ARTEFACT_BYTES = 256 * 1024 * 1024
# The registry each artefact kind is filed under, in the publisher's names (packages.yaml keys).
REGISTRY_OF = {"pypi": "pip", "npm": "npm"}

_PYPI_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?\Z")
_NPM_NAME = re.compile(r"^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9_][a-z0-9._~-]*\Z", re.IGNORECASE)
_VERSION = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._+!-]{0,63}\Z")
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+!-]{0,250}\Z")  # an index's file name shown or recorded


# ---- registry HTTP -----------------------------------------------------------------------


def base_url(kind: str, override: str | None = None) -> str:
    """The base URL for `kind` (npm, pypi, maven, maven_search, hex): override, env, default."""
    variable = URL_VARIABLES[kind]
    return (override or variable.value() or variable.default).rstrip("/")


def http_get(url: str, *, what: str, not_found: str, stream: bool = False,
             attempts: int = ATTEMPTS, headers: dict[str, str] | None = None) -> requests.Response:
    """GET with bounded retries on 5xx, 429 and network errors; other 4xx stop at once.

    `what` names the service in messages ("npm registry"); `not_found` is the whole message
    for a 404. Every failure is one `SourceError` line.
    """
    policy = RetryPolicy(attempts, RETRY_BACKOFF, retry_on=(requests.RequestException,),
                         max_retry_after=MAX_RETRY_AFTER)
    try:
        r = send(lambda: requests.get(url, timeout=TIMEOUT, stream=stream,
                                      headers={**_HEADERS, **(headers or {})}), policy, sleep=_sleep)
    except requests.RequestException as e:
        host = urlsplit(url).netloc or url
        raise SourceError(f"could not reach {what} at {host}: {describe_error(e)}") from None
    if r.status_code < 400:
        return r
    r.close()
    if r.status_code == 404:
        raise SourceError(not_found)
    if policy.retries_status(r.status_code):
        raise SourceError(f"{what} failed with HTTP {r.status_code} after {attempts} attempts "
                          f"({url}); try again later")
    raise SourceError(f"{what} refused {url} with HTTP {r.status_code}")


def get_json(url: str, *, what: str, not_found: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """A JSON document from a registry, read with a size cap."""
    r = http_get(url, what=what, not_found=not_found, stream=True)
    with r:
        body = _read_capped(r, max_bytes, f"answer from {what}")
    try:
        return json.loads(body)
    except ValueError:
        raise SourceError(f"{what} sent an answer that is not JSON ({url})") from None


def _read_capped(r: requests.Response, max_bytes: int, label: str) -> bytes:
    chunks, total = [], 0
    for chunk in r.iter_content(1024 * 1024):
        total += len(chunk)
        if total > max_bytes:
            raise SourceError(f"{label} is larger than {max_bytes} bytes; refusing it")
        chunks.append(chunk)
    return b"".join(chunks)


# ---- specs -------------------------------------------------------------------------------


def parse_artefact_spec(spec: str) -> tuple[str, str, str | None]:
    """`pypi:NAME[==VER]` or `npm:NAME[@VER]` (scoped `npm:@scope/pkg@1.2.3`) ->
    (kind, name, version or None)."""
    kind, _, rest = spec.partition(":")
    if kind == "pypi":
        name, sep, version = rest.partition("==")
        ok = bool(_PYPI_NAME.match(name))
    elif kind == "npm":
        at = rest.find("@", 1)  # a leading @ is the scope
        name, sep, version = (rest[:at], "@", rest[at + 1:]) if at > 0 else (rest, "", "")
        ok = bool(_NPM_NAME.match(name))
    else:
        raise SourceError(f"{spec!r} is not an artefact spec (pypi:NAME[==VER] or npm:NAME[@VER])")
    if not ok:
        raise SourceError(f"{spec!r}: {name!r} is not a valid {kind} package name")
    if sep and not _VERSION.match(version):
        raise SourceError(f"{spec!r}: {version!r} is not a valid version")
    return kind, name, (version if sep else None)


def fetch_artefact(spec: str, *, docs_path: str | None = None) -> Fetched:
    """Fetch `pypi:...` or `npm:...`; see `fetch_pypi` and `fetch_npm`."""
    kind, name, version = parse_artefact_spec(spec)
    fetch = fetch_pypi if kind == "pypi" else fetch_npm
    return fetch(name, version, docs_path=docs_path)


# ---- PyPI --------------------------------------------------------------------------------


def fetch_pypi(name: str, version: str | None = None, *, index_url: str | None = None,
               docs_path: str | None = None, max_bytes: int = MAX_ARTEFACT_BYTES) -> Fetched:
    """Download and extract the sdist of `name` (latest stable release when no version)."""
    from packaging.utils import canonicalize_name

    if not _PYPI_NAME.match(name):
        raise SourceError(f"{name!r} is not a valid PyPI package name")
    base = base_url("pypi", index_url)
    project = quote(name, safe="")
    doc_url = f"{base}/pypi/{project}/json"
    doc = get_json(doc_url, what="PyPI", not_found=f"no such package on PyPI: {name}")
    version = version or latest_pypi(doc)
    releases = doc.get("releases")
    if isinstance(releases, dict) and version in releases:
        files = releases[version] or []
    elif isinstance(releases, dict) and releases:
        raise SourceError(f"no version {version} of {name} on PyPI")
    else:  # an index that leaves out `releases`: ask for the one version
        files = get_json(f"{base}/pypi/{project}/{quote(version, safe='')}/json", what="PyPI",
                         not_found=f"no version {version} of {name} on PyPI").get("urls") or []
    info = doc.get("info") or {}
    sdists = [f for f in files if isinstance(f, dict) and f.get("packagetype") == "sdist"]
    # Prefer a file that is not yanked, then .tar.gz over the .zip sdists of old releases.
    sdists.sort(key=lambda f: (bool(f.get("yanked")), not str(f.get("filename")).endswith("gz")))
    layout: Layout = sdist_layout
    if sdists:
        chosen, label = sdists[0], f"{name} {version} sdist"
    else:
        from .wheel import choose_wheel, wheel_layout

        wheel = choose_wheel([f for f in files if isinstance(f, dict) and f.get("packagetype") == "bdist_wheel"
                              and FILE_NAME.match(str(f.get("filename")))])
        if wheel is None:
            raise SourceError(f"{name} {version} has no sdist and no wheel on PyPI; "
                              "build its docs from its git repository")
        chosen, label, layout = wheel, f"{name} {version} wheel {wheel['filename']}", wheel_layout
    digest = (chosen.get("digests") or {}).get("sha256")
    fetched = _fetch_archive(
        _absolute(doc_url, chosen.get("url")), label, prefix="context-pypi-", max_bytes=max_bytes,
        expected=("sha256", digest, "hex") if digest else None, docs_path=docs_path, layout=layout,
    )
    if FILE_NAME.match(str(chosen.get("filename"))):
        fetched.meta["artefact"] = chosen["filename"]  # which file of the release the docs were read from
    fetched.source_type = "pypi"
    fetched.registry = REGISTRY_OF["pypi"]
    fetched.name = canonicalize_name(name)
    fetched.version = version
    fetched.source_url = f"pypi:{fetched.name}=={version}"
    fetched.description = info.get("summary") or None
    return fetched


def latest_pypi(doc: dict[str, Any]) -> str:
    """The newest release that is not a pre-release and has a file that is not yanked.

    PyPI's `info.version` is the fallback: it is the newest upload, which may be a
    pre-release when nothing else qualifies.
    """
    from packaging.version import InvalidVersion, Version

    best: tuple[Version, str] | None = None
    for text, files in (doc.get("releases") or {}).items():
        try:
            v = Version(text)
        except InvalidVersion:
            continue
        if v.is_prerelease or v.local or not any(not f.get("yanked") for f in files or []):
            continue
        if best is None or v > best[0]:
            best = (v, text)
    if best:
        return best[1]
    fallback = (doc.get("info") or {}).get("version")
    if not isinstance(fallback, str) or not fallback:
        raise SourceError("PyPI gave no releases to choose from")
    return fallback


# ---- npm ---------------------------------------------------------------------------------


def fetch_npm(name: str, version: str | None = None, *, registry_url: str | None = None,
              docs_path: str | None = None, max_bytes: int = MAX_ARTEFACT_BYTES,
              choose: Callable[[list[str], dict[str, Any]], str] | None = None) -> Fetched:
    """Download and extract the tarball of `name` (the `latest` dist-tag when no version).

    A version may also be a dist-tag (`next`, `beta`). `choose`, given the versions the
    registry has and its dist-tags, picks the version instead (raising SourceError when none
    fits), from the one package document this fetches.
    """
    if not _NPM_NAME.match(name):
        raise SourceError(f"{name!r} is not a valid npm package name")
    base = base_url("npm", registry_url)
    doc_url = f"{base}/{quote(name, safe='@')}"
    doc = get_json(doc_url, what="npm registry", not_found=f"no such package on npm: {name}")
    doc = _mapping(doc)  # (another shape has no versions: refused below)
    tags, versions = _mapping(doc.get("dist-tags")), _mapping(doc.get("versions"))
    if choose is not None:
        version = choose(list(versions), tags)
    wanted = version or "latest"
    resolved = tags.get(wanted) if wanted in tags else version
    if not resolved or resolved not in versions:
        raise SourceError(f"no version {wanted} of {name} on npm")
    meta = versions[resolved] or {}
    dist = meta.get("dist") or {}
    fetched = _fetch_archive(
        _absolute(doc_url, dist.get("tarball")), f"{name}@{resolved} tarball",
        prefix="context-npm-", max_bytes=max_bytes, expected=_npm_digest(dist), docs_path=docs_path,
    )
    fetched.source_type = "npm"
    fetched.registry = REGISTRY_OF["npm"]
    fetched.name = name
    fetched.version = resolved
    fetched.source_url = f"npm:{name}@{resolved}"
    fetched.description = meta.get("description") or doc.get("description") or None
    return fetched


def _mapping(value: Any) -> dict[str, Any]:
    """A registry answer's object, or {} for any other JSON."""
    return value if isinstance(value, dict) else {}


def _npm_digest(dist: dict[str, Any]) -> tuple[str, str, str] | None:
    """The strongest digest npm gives: an SRI sha512 `integrity`, else the sha1 `shasum`."""
    for item in str(dist.get("integrity") or "").split():
        algo, _, value = item.partition("-")
        if algo == "sha512" and value:
            return ("sha512", value, "base64")
    if dist.get("shasum"):
        return ("sha1", str(dist["shasum"]).lower(), "hex")
    return None


# ---- download, verify, extract -----------------------------------------------------------


def _absolute(doc_url: str, url: Any) -> str | None:
    """Registry mirrors and private indexes may answer with URLs relative to the document."""
    return urljoin(doc_url, url) if isinstance(url, str) and url else None


def _fetch_archive(url: Any, label: str, *, prefix: str, max_bytes: int,
                   expected: tuple[str, str, str] | None, docs_path: str | None,
                   layout: Layout | None = None) -> Fetched:
    """Download, verify and unpack the artefact into a temp folder; `layout` (an sdist's or
    tarball's by default, wheel.py's for a wheel) says where in it the docs and code are."""
    if not isinstance(url, str) or not re.match(r"^https?://", url):
        raise SourceError(f"{label}: the registry gave no usable download URL")
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        archive = tmp / "artefact"
        digest = _download(url, archive, label, max_bytes, expected[0] if expected else "sha256")
        if expected:
            algo, want, encoding = expected
            raw = digest.digest()
            got = base64.b64encode(raw).decode() if encoding == "base64" else raw.hex()
            if got != want:
                raise SourceError(
                    f"{label}: {algo} checksum mismatch (expected {want}, got {got}); "
                    "the download is corrupt or was tampered with"
                )
        extracted = extract(archive, tmp / "src")
        archive.unlink()
        fetched = (layout or sdist_layout)(tmp / "src", docs_path, label)
        fetched.notes[:0] = [f"downloaded {label} from {urlsplit(url).netloc}"
                             + (f" ({expected[0]} verified)" if expected else " (no checksum published)")]
        fetched.notes += extracted.notes()
        fetched.temp_dirs.append(tmp)
        return fetched
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _download(url: str, dest: Path, label: str, max_bytes: int, algo: str) -> Any:
    """Stream the artefact to `dest` raw (never decoded), within `max_bytes` and the deadline."""
    r = http_get(url, what=f"download of {label}", not_found=f"{label}: download not found ({url})",
                 stream=True, headers=IDENTITY)
    digest = hashlib.new(algo)
    with r, dest.open("wb") as out:
        try:
            for chunk in read_body(r, limit=max_bytes, deadline=download_deadline()):
                digest.update(chunk)
                out.write(chunk)
        except TransferError as e:
            raise SourceError(f"download of {label}: {e}") from None
    return digest
