"""Where a URL that package metadata names may lead: public hosts over https only.

A package's author chooses the repository and documentation URLs in its metadata, and sync
follows them on the user's machine (and the publisher in CI). So a URL taken from metadata
must be `https://` (or `git://`) to a named public host: no userinfo, no IP literal or host
name that resolves to a private, loopback, link-local, multicast or reserved address (checked
after DNS resolution, and again by the caller on every redirect). A URL the user typed is not
checked here: it may be anything.

A host that does not resolve is let through: nothing can be reached there, unless the user's
own git configuration rewrites it (`url.<base>.insteadOf`), which is theirs to choose.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from ...errors import SourceError

SCHEMES = ("https", "git")


class UnsafeURL(SourceError):
    """A metadata URL sync refuses to follow."""


def check_public(url: str, *, schemes: tuple[str, ...] = SCHEMES) -> str:
    """`url` when it may be followed; UnsafeURL saying why not."""
    try:
        p = urlsplit(url)
        host = p.hostname
        p.port  # noqa: B018 - a port that is no number raises here, not later
    except ValueError:
        raise UnsafeURL(f"{_shown(url)}: not a valid URL") from None
    if p.scheme.lower() not in schemes:
        raise UnsafeURL(f"{_shown(url)}: only {' and '.join(s + '://' for s in schemes)} URLs from "
                        "package metadata are followed")
    if p.username is not None or p.password is not None:
        raise UnsafeURL(f"{_shown(url)}: a URL from package metadata may not carry credentials")
    if not host:
        raise UnsafeURL(f"{_shown(url)}: no host")
    for address in _addresses(host):
        if not _public(address):
            raise UnsafeURL(f"{_shown(url)}: {host} is a {_kind(address)} address, not a public host")
    return url


def _addresses(host: str) -> list[str]:
    """The IP literal itself, else what the host resolves to (nothing when it does not)."""
    try:
        return [str(ipaddress.ip_address(host.strip("[]")))]
    except ValueError:
        pass
    try:
        return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, None)})
    except (OSError, UnicodeError):
        return []


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _kind(address: str) -> str:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    for kind in ("unspecified", "loopback", "link_local", "private", "multicast", "reserved"):
        if getattr(ip, f"is_{kind}", False):
            return kind.replace("_", "-")
    return "non-public"


def _shown(url: str) -> str:
    from ...errors import redact

    return redact(url)[:200]
