"""Exceptions that surfaces turn into one clear line (CLI), a tool error (MCP) or a JSON error (HTTP).

Every message should say what went wrong and, where possible, what to do next.
"""


class ContextError(Exception):
    """Base class: anything the user can act on. Never carries a traceback to the user."""


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
