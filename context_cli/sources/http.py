"""One careful HTTP fetcher for every web source (sites, llms.txt, sitemaps, specs, .db files).

Documentation sites are strangers' servers, so every request here has connect and read
timeouts, a cap on the body size, rejects binaries where text is expected (by content type
and by sniffing the first bytes: servers lie), retries transient failures (connection errors,
5xx, 429) with exponential backoff honouring Retry-After, and respects robots.txt for our
user agent. Redirects are followed by hand so that credentials from `context auth` are
attached per hop for that hop's host only: a redirect to another domain never carries them.
Read timeouts are not retried: a server that is too slow once is usually slow again.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urljoin, urlsplit, urlunsplit
from urllib.robotparser import RobotFileParser

import requests

from ..environment import HTTP_BACKOFF, HTTP_RETRIES, HTTP_TIMEOUT, Variable
from ..errors import SourceError, clip
from ..retry import RetryPolicy, send
from ..version import __version__
from .auth import AuthStore
from .transfer import IDENTITY, TransferError, content_length, download_deadline, read_body

USER_AGENT = f"context-docs/{__version__} (documentation indexer)"
ROBOTS_AGENT = "context-docs"
TEXT_TYPES = frozenset({
    "application/json", "application/xml", "application/yaml", "application/x-yaml",
    "application/xhtml+xml", "application/javascript", "application/x-ndjson", "application/toml",
})
_MAGIC = (b"%PDF", b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"PK\x03\x04", b"\x1f\x8b", b"BZh",
          b"\xfd7zXZ", b"7z\xbc\xaf", b"Rar!", b"\x7fELF", b"MZ", b"SQLite format 3", b"RIFF",
          b"\x00\x00\x01\x00", b"wOFF", b"wOF2", b"OggS", b"ID3", b"\xca\xfe\xba\xbe")


@dataclass(frozen=True)
class HttpOptions:
    """Limits for one fetch session. `from_env` lets tests and users shorten them."""

    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    max_bytes: int = 10 * 1024 * 1024  # one text page
    max_download_bytes: int = 1024 * 1024 * 1024  # one .db file
    page_deadline: float = 120.0  # seconds for one whole page, however steadily it trickles
    retries: int = 2
    backoff: float = 0.5  # seconds before the first retry; doubles each time
    max_redirects: int = 5
    respect_robots: bool = True
    user_agent: str = USER_AGENT

    @classmethod
    def from_env(cls, **overrides: object) -> HttpOptions:
        """Defaults, then CONTEXT_HTTP_TIMEOUT / _RETRIES / _BACKOFF, then `overrides`."""
        env: dict[str, object] = {}
        if (t := _env_number(HTTP_TIMEOUT)) is not None:
            env["connect_timeout"] = env["read_timeout"] = t
        if (r := _env_number(HTTP_RETRIES)) is not None:
            env["retries"] = int(r)
        if (b := _env_number(HTTP_BACKOFF)) is not None:
            env["backoff"] = b
        env.update({k: v for k, v in overrides.items() if v is not None})
        return replace(cls(), **env)  # type: ignore[arg-type]


class FetchError(SourceError):
    """A request that failed. `status` is the HTTP status; `network` marks unreachable hosts."""

    def __init__(self, url: str, reason: str, *, status: int | None = None, network: bool = False):
        super().__init__(f"{safe_url(url)}: {reason}")
        self.url = url
        self.status = status
        self.network = network


@dataclass
class Response:
    url: str  # after redirects
    status: int
    content_type: str  # media type, lower case, no parameters
    charset: str | None
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names (etag, last-modified, ...)

    @property
    def text(self) -> str:
        charset = self.charset
        if not charset and self.content_type in ("text/html", "application/xhtml+xml"):
            m = re.search(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_-]+)""", self.body[:4096], re.I)
            charset = m.group(1).decode("ascii") if m else None
        try:
            return self.body.decode(charset or "utf-8", "replace")
        except LookupError:
            return self.body.decode("utf-8", "replace")


def safe_url(url: str) -> str:
    """The URL without userinfo, query or fragment: safe to print and to store in a package."""
    try:
        p = urlsplit(url)
    except ValueError:
        return url.split("?")[0].split("#")[0]
    host = p.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{p.port}" if p.port else "") if p.netloc else ""
    return urlunsplit((p.scheme, netloc, p.path, "", ""))


def origin(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc.rsplit('@', 1)[-1].lower()}"


def looks_binary(head: bytes) -> bool:
    """NUL bytes or a well-known file signature in the first bytes."""
    head = head[:1024]
    return b"\x00" in head or any(head.startswith(m) for m in _MAGIC)


def is_text_type(content_type: str) -> bool:
    return (not content_type or content_type.startswith("text/") or content_type in TEXT_TYPES
            or content_type.endswith(("+xml", "+json", "+yaml")))


class HttpClient:
    """A thread-safe fetcher; one `requests.Session` per thread, robots.txt cached per origin."""

    def __init__(self, opts: HttpOptions | None = None, auth: AuthStore | None = None):
        self.opts = opts or HttpOptions.from_env()
        self.auth = auth if auth is not None else AuthStore.load()
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._robots: dict[str, RobotFileParser | None] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            for s in self._sessions:
                s.close()
            self._sessions.clear()

    # -- public --------------------------------------------------------------------------

    def get(self, url: str, *, text_only: bool = True, max_bytes: int | None = None,
            check_robots: bool = True, headers: dict[str, str] | None = None,
            deadline: float | None = None) -> Response:
        """GET a page into memory; raise FetchError on any failure (status, size, binary).
        `headers` are extra request headers (Accept, If-None-Match); a 304 comes back empty.
        `deadline` (seconds for the whole body) may shorten `page_deadline` for this request."""
        limit = max_bytes or self.opts.max_bytes
        resp = self._open(url, check_robots, headers)
        try:
            ctype, charset = _content_type(resp)
            if text_only and not is_text_type(ctype) and ctype != "application/octet-stream":
                raise FetchError(url, f"served {ctype}, not a text page")
            _check_length(url, resp, limit)
            body = bytearray()
            sniffed = not text_only
            whole = min(deadline, self.opts.page_deadline) if deadline else self.opts.page_deadline
            for part in read_body(resp, limit=limit, deadline=whole, decode=True):
                body += part
                if not sniffed and len(body) >= 1024:
                    _sniff(url, body, ctype)
                    sniffed = True
            if not sniffed:
                _sniff(url, body, ctype)
            return Response(url=resp.url, status=resp.status_code, content_type=ctype,
                            charset=charset, body=bytes(body),
                            headers={k.lower(): v for k, v in resp.headers.items()})
        except TransferError as e:
            raise FetchError(url, f"{_mb_text(e, limit)}; not fetched") from None
        except requests.RequestException as e:
            raise _network_error(url, e) from None
        finally:
            resp.close()

    def download(self, url: str, dest: Path, *, max_bytes: int | None = None) -> Path:
        """Stream a binary file to `dest` raw (identity asked for, never decoded) within the
        download cap and the overall deadline; a partial file is removed."""
        limit = max_bytes or self.opts.max_download_bytes
        resp = self._open(url, check_robots=False, headers=IDENTITY)
        dest = Path(dest)
        try:
            with open(dest, "wb") as f:
                for part in read_body(resp, limit=limit, deadline=download_deadline()):
                    f.write(part)
            return dest
        except TransferError as e:
            dest.unlink(missing_ok=True)
            raise FetchError(url, f"download {e}") from None
        except BaseException:
            dest.unlink(missing_ok=True)
            raise
        finally:
            resp.close()

    def allowed(self, url: str) -> bool:
        """Whether robots.txt of the URL's origin lets our user agent fetch it."""
        if not self.opts.respect_robots:
            return True
        key = origin(url)
        with self._lock:
            known = key in self._robots
            parser = self._robots.get(key)
        if not known:
            parser = self._load_robots(key)
            with self._lock:
                self._robots[key] = parser
        return parser is None or parser.can_fetch(ROBOTS_AGENT, url)

    def sitemaps_from_robots(self, url: str) -> list[str]:
        self.allowed(url)
        parser = self._robots.get(origin(url))
        return list(parser.site_maps() or []) if parser else []

    # -- internals -----------------------------------------------------------------------

    def _session(self) -> requests.Session:
        s = getattr(self._local, "session", None)
        if s is None:
            s = requests.Session()
            s.headers["User-Agent"] = self.opts.user_agent
            s.max_redirects = self.opts.max_redirects
            self._local.session = s
            with self._lock:
                self._sessions.append(s)
        return s

    def _open(self, url: str, check_robots: bool,
              headers: dict[str, str] | None = None) -> requests.Response:
        """Follow redirects by hand (credentials per hop); return a streaming 2xx response."""
        current = url
        for _ in range(self.opts.max_redirects + 1):
            scheme = urlsplit(current).scheme
            if scheme not in ("http", "https"):
                raise FetchError(url, f"refusing to fetch a {scheme or 'schemeless'} URL")
            if check_robots and not self.allowed(current):
                raise FetchError(current, "disallowed by robots.txt", status=403)
            resp = self._request_with_retries(current, headers or {})
            if resp.is_redirect or resp.status_code in (301, 302, 303, 307, 308):
                location = resp.headers.get("Location")
                resp.close()
                if not location:
                    raise FetchError(current, f"HTTP {resp.status_code} without a Location")
                current = urljoin(current, location)
                continue
            if resp.status_code >= 400:
                status, reason = resp.status_code, resp.reason or ""
                resp.close()
                hint = " (private docs? see `context auth add`)" if status in (401, 403) else ""
                raise FetchError(current, f"HTTP {status} {reason}".rstrip() + hint, status=status)
            return resp
        raise FetchError(url, f"more than {self.opts.max_redirects} redirects")

    def _request_with_retries(self, url: str, extra: dict[str, str]) -> requests.Response:
        """The last answer whatever its status; read timeouts are not retried (see above)."""
        creds = self.auth.for_url(url)
        headers = {**extra, **(creds.as_headers() if creds else {})}
        retry_on = (requests.ConnectionError, requests.exceptions.ChunkedEncodingError)
        policy = RetryPolicy(self.opts.retries + 1, self.opts.backoff, retry_on=retry_on,
                             backoff_is_minimum=True)
        try:
            return send(lambda: self._session().get(
                url, headers=headers, stream=True, allow_redirects=False,
                timeout=(self.opts.connect_timeout, self.opts.read_timeout)), policy)
        except requests.RequestException as e:
            raise _network_error(url, e) from None

    def _load_robots(self, key: str) -> RobotFileParser | None:
        """None means "everything allowed": no robots.txt, a 4xx, or an unreachable one
        (RFC 9309 lets crawlers proceed when the file is unavailable)."""
        try:
            resp = self.get(key + "/robots.txt", check_robots=False, max_bytes=512 * 1024)
        except SourceError:
            return None
        parser = RobotFileParser(key + "/robots.txt")
        parser.parse(resp.text.splitlines())
        return parser


def _content_type(resp: requests.Response) -> tuple[str, str | None]:
    raw = resp.headers.get("Content-Type", "")
    media = raw.split(";")[0].strip().lower()
    m = re.search(r"charset=\"?([A-Za-z0-9_.:-]+)", raw, re.I)
    return media, (m.group(1) if m else None)


def _sniff(url: str, body: bytearray, ctype: str) -> None:
    if looks_binary(bytes(body[:1024])):
        raise FetchError(url, f"served binary data as {ctype or 'text'}; not a text page")


def _check_length(url: str, resp: requests.Response, limit: int) -> None:
    try:
        length = content_length(resp)
    except TransferError as e:
        raise FetchError(url, str(e)) from None
    if length is not None and length > limit:
        raise FetchError(url, f"larger than {_mb(limit)} ({_mb(length)}); not fetched")


def _env_number(variable: Variable) -> float | None:
    """A number from the environment, ASCII only (`CONTEXT_HTTP_TIMEOUT=²` is an error)."""
    value = (variable.value() or "").strip()
    if not value:
        return None
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", value):
        raise SourceError(f"{variable.name}={clip(value, 20)!r} is not a number of seconds or tries")
    return float(value)


def _network_error(url: str, e: Exception) -> FetchError:
    if isinstance(e, requests.exceptions.Timeout):
        return FetchError(url, "timed out (the server did not answer in time)", network=True)
    if isinstance(e, requests.ConnectionError):
        text = str(e)
        if "Name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text:
            return FetchError(url, "host not found", network=True)
        if "refused" in text.lower():
            return FetchError(url, "connection refused", network=True)
        return FetchError(url, "cannot connect", network=True)
    return FetchError(url, f"request failed ({type(e).__name__})", network=True)


def _mb_text(e: TransferError, limit: int) -> str:
    """A size error in megabytes (`larger than 10 MB`); other transfer errors as they are."""
    text = str(e)
    return f"larger than {_mb(limit)}" if text.startswith("larger than") else text.removesuffix("; stopped")


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.0f} MB" if n >= 1024 * 1024 else f"{n // 1024} KB"
