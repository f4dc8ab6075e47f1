"""A request's path split into segments, shared by the API (`app.py`) and the HTML pages
(`pages.py`), so neither imports the other for it."""

from __future__ import annotations

from urllib.parse import unquote

from starlette.exceptions import HTTPException
from starlette.requests import Request

MAX_PATH = 2048


def raw_segments(request: Request, prefix: str) -> list[str]:
    """The path after `prefix`, split on literal `/` and only then percent-decoded."""
    raw = request.scope.get("raw_path") or request.scope["path"].encode()
    text = raw.decode("latin-1")
    if len(text) > MAX_PATH:
        raise HTTPException(400, "request path is too long")
    at = text.find(prefix)
    rest = text[at + len(prefix):] if at >= 0 else ""
    try:
        return [unquote(s, errors="strict") for s in rest.split("/")]
    except UnicodeDecodeError:
        raise HTTPException(400, "request path is not valid UTF-8") from None
