"""The registry HTTP protocol, written once for the client and the publisher.

Neuledge Context's SERVER_SPEC plus ours (docs/registry.md): packages live at
`/packages/R/N/V` with each part percent-encoded (`%40trpc%2Fserver`), the file at
`…/download` with its SHA-256 in `X-Content-SHA256`, and every error answer is
`{"error": "..."}`. `context_cli.remote.client` (search, install) and
`registry.publish` (upload, skip what the server has) both build requests and read error
answers through these functions, so the two can never disagree about the wire.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import requests

from ..errors import clip
from ..package.identity import PackageId
from ..sources.transfer import read_body

SHA256_HEADER = "X-Content-SHA256"
SEARCH_PATH = "/search"
_ERROR_PEEK = 4096  # an error body is read this far, never further
JSON_LIMIT = 16 * 1024 * 1024  # a search answer or metadata; real ones are a few KB
JSON_DEADLINE = 120.0  # seconds for one whole JSON answer


def package_path(pid: PackageId) -> str:
    """`/packages/R/N/V`, each part percent-encoded (a scoped npm name keeps no `/` or `@`)."""
    return "/packages/" + "/".join(quote(p, safe="") for p in (pid.registry, pid.name, pid.version))


def download_path(pid: PackageId) -> str:
    """Where the package file itself is served."""
    return package_path(pid) + "/download"


def error_text(resp: requests.Response) -> str:
    """The server's `{"error": ...}` message, else its reason phrase; one short line.

    Reads at most a few KB of the body, so a hostile error answer cannot fill memory.
    """
    try:
        raw = next(resp.iter_content(_ERROR_PEEK), b"")
    except (requests.RequestException, StopIteration):
        raw = b""
    message = None
    try:
        data = json.loads(raw.decode("utf-8", "replace"))
        message = data.get("error") if isinstance(data, dict) else None
    except ValueError:
        pass
    text = message if isinstance(message, str) else (resp.reason or "")
    return clip(text, 200) or str(resp.status_code)



def read_json(resp: requests.Response, limit: int = JSON_LIMIT) -> Any:
    """A JSON answer read within a size cap and a deadline (the response must be streamed).

    Raises `ValueError` when it is not JSON, `TransferError` when it breaks a bound.
    """
    body = b"".join(read_body(resp, limit=limit, deadline=JSON_DEADLINE, decode=True))
    return json.loads(body)
