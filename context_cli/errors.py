"""Exceptions that surfaces turn into one clear line (CLI), a tool error (MCP) or a JSON error (HTTP).

Every message should say what went wrong and, where possible, what to do next, and never
what a URL in it carried as credentials (`redact`).
"""

from __future__ import annotations

import re


class ContextError(Exception):
    """Base class: anything the user can act on. Never carries a traceback to the user, nor
    a password or token from a URL in its message (see `redact`)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class InvalidPackage(ContextError):
    """A file that is not a usable package (not SQLite, missing tables or meta, hostile schema)."""


class NotInstalled(ContextError):
    """A library spec that matches no installed package."""


class AmbiguousPackage(ContextError):
    """A spec that matches several installed packages where exactly one is needed."""


class SourceError(ContextError):
    """A documentation source that cannot be read (missing folder, 404, not a git repo, ...)."""


class RegistryError(ContextError):
    """A registry server that refused, failed or could not be reached."""


class ModelUnavailable(ContextError):
    """An embedding model that cannot be loaded; search falls back to lexical."""


def clip(text: str, n: int = 100) -> str:
    """At most `n` characters of one line: what a hostile name may take up in a message."""
    one = " ".join(str(text).split())
    return one if len(one) <= n else one[: n - 1] + "…"


# (Patterns as text: `re` compiles and caches them on first use, not at every CLI start.)
# `scheme://USERINFO@`: a password after the colon, or a lone user part that is a token
# (`https://ghp_x@github.com`); `git@`, `anonymous@` and the like say nothing secret.
_USERINFO = r"(?i)\b([a-z][a-z0-9+.-]*://)([^/?#\s@]+)@"
_PLAIN_USERS = frozenset({"git", "hg", "anonymous", "ftp", "user"})
# A query or fragment parameter whose name says it is a secret; its value is masked.
_SECRET_PARAM = (r"(?i)([?&#;](?:[\w.-]*(?:token|key|secret|passw(?:or)?d|pwd|sig|signature|credential|auth)"
                 r"[\w.-]*)=)[^&#;\s'\"<>]+")
_BEARER = r"(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=-]{8,}"
MASK = "***"


def redact(text: str) -> str:
    """`text` with the credentials of every URL in it masked: the password (or token) in its
    userinfo and the values of query parameters named like secrets (`token`, `key`, `sig`,
    `X-Amz-Signature`, ...), and bearer tokens. Used wherever a message may hold a URL from a
    lockfile, package metadata or a server: such messages end up in CI logs."""
    if "://" not in text and "=" not in text and "earer" not in text:
        return text
    text = re.sub(_USERINFO, _mask_userinfo, text)
    text = re.sub(_SECRET_PARAM, lambda m: m.group(1) + MASK, text)
    return re.sub(_BEARER, lambda m: m.group(1) + m.group(2) + MASK, text)


def _mask_userinfo(m: re.Match[str]) -> str:
    user, colon, _ = m.group(2).partition(":")
    if colon:
        return f"{m.group(1)}{user}:{MASK}@"
    return m.group(0) if user.lower() in _PLAIN_USERS else f"{m.group(1)}{MASK}@"
