"""Per-site cookies and headers for private documentation sites (`context auth`).

Stored in `$CONTEXT_HOME/auth.json`, mode 0600, replaced atomically so a crash never leaves
a half-written file of secrets. Credentials are scoped as browsers scope an origin:

* host: an entry for `example.com` covers that host and its direct subdomains
  (`docs.example.com`, not `a.b.example.com`, never `example.org`); the most specific entry
  wins. IP addresses and single-label hosts (`localhost`) match exactly.
* port: an entry names one port (`example.com:8443`), else the scheme's default one (443, or
  80 over http), so a redirect to another port of the same host never carries them.
* scheme: sent over https only, unless the entry says plain http is fine (`allow_http`, set by
  `add(..., allow_http=True)` or by adding the entry as an `http://` URL).

Nothing here is ever written into a package.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ..atomic import write_text
from ..errors import ContextError
from ..home import auth_path

_DOMAIN_RE = re.compile(r"^(?=.{1,253}\Z)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\Z")
_DEFAULT_PORTS = {"https": 443, "http": 80}
_HEADER_NAME_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")


class AuthError(ContextError):
    """A malformed domain, cookie or header given to `context auth`, or an unreadable auth.json."""


@dataclass
class Credentials:
    """What is sent to one domain: extra headers and cookies (name -> value)."""

    headers: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)
    allow_http: bool = False  # may they travel over plain http? only if the user said so

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def as_headers(self) -> dict[str, str]:
        """Headers to add to a request; the Cookie header merges with any header named Cookie."""
        out = dict(self.headers)
        if self.cookies:
            existing = next((k for k in out if k.lower() == "cookie"), None)
            cookie = self.cookie_header()
            if existing:
                cookie = out.pop(existing) + "; " + cookie
            out["Cookie"] = cookie
        return out


def normalise_domain(domain: str) -> str:
    """`https://Docs.Example.com:8443/x` -> `docs.example.com:8443`, `Example.com` ->
    `example.com`: the entry's key; raise AuthError if not a host."""
    host, port, _ = _split_entry(domain)
    return _key(host, port)


def _split_entry(domain: str) -> tuple[str, int | None, str | None]:
    """(host, explicit port or None, scheme or None) of what the user typed."""
    raw = domain.strip()
    try:
        parts = urlsplit(raw if "://" in raw else "//" + raw)
        host, port = parts.hostname or "", parts.port
    except ValueError:
        host, port = "", None
    host = host.strip(".").lower()
    if not (_is_ip(host) or _DOMAIN_RE.match(host)):
        raise AuthError(f"{domain!r} is not a domain name (expected e.g. docs.example.com)")
    return host, port, (parts.scheme.lower() or None)


def _key(host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}" if port is not None else host


def parse_cookies(text: str) -> dict[str, str]:
    """`"a=b; c=d"` -> {"a": "b", "c": "d"} (the form browsers' dev tools copy)."""
    cookies: dict[str, str] = {}
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or not name or not _HEADER_NAME_RE.match(name):
            raise AuthError(f"cookie {part!r} is not NAME=VALUE")
        if any(c in value for c in "\r\n"):
            raise AuthError(f"cookie {name!r} contains a line break")
        cookies[name] = value.strip()
    return cookies


def parse_header(text: str) -> tuple[str, str]:
    """`"Authorization: Bearer x"` -> ("Authorization", "Bearer x")."""
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name or not _HEADER_NAME_RE.match(name):
        raise AuthError(f"header {text!r} is not 'Name: value'")
    if any(c in value for c in "\r\n\0"):
        raise AuthError(f"header {name!r} contains a line break")
    return name, value


class AuthStore:
    """The contents of auth.json: domain -> Credentials."""

    def __init__(self, path: Path | None = None, entries: dict[str, Credentials] | None = None):
        self.path = Path(path) if path else auth_path()
        self.entries: dict[str, Credentials] = entries or {}

    @classmethod
    def load(cls, path: Path | None = None) -> AuthStore:
        store = cls(path)
        try:
            raw = json.loads(store.path.read_text("utf-8"))
        except FileNotFoundError:
            return store
        except (OSError, ValueError) as e:
            raise AuthError(f"{store.path}: cannot read auth file ({e}); fix or delete it") from None
        domains = raw.get("domains", {}) if isinstance(raw, dict) else {}
        for domain, entry in domains.items() if isinstance(domains, dict) else ():
            if not isinstance(entry, dict):
                continue
            store.entries[str(domain).lower()] = Credentials(
                headers={str(k): str(v) for k, v in (entry.get("headers") or {}).items()},
                cookies={str(k): str(v) for k, v in (entry.get("cookies") or {}).items()},
                allow_http=entry.get("allow_http") is True,
            )
        return store

    def save(self) -> None:
        """Write with mode 0600 from the first byte, then rename over the old file."""
        data = {"domains": {d: {"headers": c.headers, "cookies": c.cookies,
                                **({"allow_http": True} if c.allow_http else {})}
                            for d, c in sorted(self.entries.items())}}
        write_text(self.path, json.dumps(data, indent=2) + "\n", mode=0o600)

    def add(self, domain: str, cookies: str | None = None, headers: list[str] | tuple[str, ...] = (),
            *, allow_http: bool = False) -> str:
        """Merge cookies and headers into the entry for `domain` (a host, `host:port`, or a URL;
        an `http://` URL allows plain http like `allow_http`); returns the entry's key."""
        host, port, scheme = _split_entry(domain)
        key = _key(host, port)
        entry = self.entries.setdefault(key, Credentials())
        entry.allow_http = entry.allow_http or allow_http or scheme == "http"
        if cookies:
            entry.cookies.update(parse_cookies(cookies))
        for h in headers:
            name, value = parse_header(h)
            for old in [k for k in entry.headers if k.lower() == name.lower()]:
                del entry.headers[old]
            entry.headers[name] = value
        if not entry.cookies and not entry.headers:
            del self.entries[key]
            raise AuthError("give at least one --cookies or --header")
        return key

    def remove(self, domain: str) -> bool:
        return self.entries.pop(normalise_domain(domain), None) is not None

    def for_url(self, url: str) -> Credentials | None:
        """The credentials that may go with a request to `url`: scheme, host and port must fit."""
        try:
            parts = urlsplit(url)
            scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower().strip("."), parts.port
        except ValueError:
            return None
        if scheme not in _DEFAULT_PORTS or not host:
            return None
        default = _DEFAULT_PORTS[scheme]
        port = default if port is None else port
        for candidate in self._hosts(host):
            creds = self.entries.get(_key(candidate, port))
            if creds is None and port == default:
                creds = self.entries.get(candidate)
            if creds is not None:
                return creds if scheme == "https" or creds.allow_http else None
        return None

    @staticmethod
    def _hosts(host: str) -> list[str]:
        """`host` itself, then its parent domain (never a bare TLD such as `com`)."""
        if _is_ip(host) or "." not in host:
            return [host]
        parent = host.split(".", 1)[1]
        return [host, parent] if "." in parent else [host]


def mask(value: str) -> str:
    """Show enough to recognise a secret, never enough to use it."""
    if len(value) <= 8:
        return "*" * len(value)
    return value[:3] + "…" + "*" * 4


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False
