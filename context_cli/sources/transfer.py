"""Reading an HTTP answer from a stranger's server within bounds: size, time and encoding.

Every download in the project (registry packages, sdists and tarballs, zipped doc sites, `.db`
URLs) goes through `read_body`, so one set of rules holds everywhere:

* bytes are read raw and never decoded: we ask for `Accept-Encoding: identity`, and an answer
  compressed anyway is refused (`check_identity`), since a 200 KB gzip can stand for 200 MB;
* the size is capped before and while reading (a declared `Content-Length` over the cap is
  refused at once; a body without one is cut off at the cap);
* an overall deadline bounds the whole transfer, not just the wait between two reads, so a
  server dripping a byte every few seconds cannot keep a download alive forever (a read
  blocks at most the caller's read timeout, so the deadline is overshot by at most that);
* a minimum rate ends a stalled transfer well before that: fewer than `CONTEXT_DOWNLOAD_MIN_RATE`
  bytes a second (1 KiB) over `CONTEXT_DOWNLOAD_SLOW_SECONDS` (30 s) in a row is an error
  that says so (0 turns the check off);
* header numbers are read strictly (ASCII digits only): `Content-Length: ²` is no number.

A raw download reports its bytes to the caller's `progress`, or else to the watcher a surface
installed with `watching` (the CLI's progress bars on a terminal): sdists and tarballs are
fetched deep inside the sources, whose callers have no callback to pass.

Errors are `TransferError`, one short line without the URL; callers add what and where.
"""

from __future__ import annotations

import http.client
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import unquote, urlsplit

import requests

from ..environment import DOWNLOAD_DEADLINE, DOWNLOAD_MIN_RATE, DOWNLOAD_SLOW_SECONDS
from ..errors import ContextError, clip

IDENTITY = {"Accept-Encoding": "identity"}
DEFAULT_DEADLINE = 900  # seconds for one whole download
DEFAULT_MIN_RATE = 1024  # bytes a second, judged per window
DEFAULT_SLOW_SECONDS = 30  # the window
_CHUNK = 64 * 1024
_MAX_DIGITS = 19  # anything longer is not a size we would accept anyway


Progress = Callable[[int, "int | None"], None]
"""Called with (bytes received, declared size or None) as a download proceeds."""
Watcher = Callable[[str], Progress]
"""Given a download's label (its file name), the callback that hears how it goes."""
_watcher: Watcher | None = None  # process-wide: a build's worker threads download too


@contextmanager
def watching(watcher: Watcher) -> Iterator[None]:
    """While inside, every raw download whose caller passes no `progress` reports to
    `watcher(label)`."""
    global _watcher
    previous, _watcher = _watcher, watcher
    try:
        yield
    finally:
        _watcher = previous


def _label(resp: requests.Response) -> str:
    """What a person would call the download: the file name at the end of its URL."""
    parts = urlsplit(resp.url or "")
    return clip(unquote(parts.path.rstrip("/").rsplit("/", 1)[-1]) or parts.netloc or "download", 80)


class TransferError(ContextError):
    """A body that broke a bound (size, deadline, encoding) or was cut off."""


def header_int(value: str | None) -> int | None:
    """A non-negative number from a header or setting, ASCII digits only; None otherwise."""
    text = (value or "").strip()
    if not text or len(text) > _MAX_DIGITS or not text.isascii() or not text.isdigit():
        return None
    return int(text)


def content_length(resp: requests.Response) -> int | None:
    """The declared body size, None when absent; an unreadable one (`²`, `-1`) is refused."""
    value = resp.headers.get("Content-Length")
    if value is None:
        return None
    length = header_int(value)
    if length is None:
        raise TransferError(f"the server sent an unreadable Content-Length ({clip(value, 40)!r})")
    return length


def download_deadline() -> float:
    """Seconds one whole download may take (`CONTEXT_DOWNLOAD_DEADLINE` overrides)."""
    return float(header_int(DOWNLOAD_DEADLINE.value()) or DEFAULT_DEADLINE)


def min_rate() -> tuple[int, float]:
    """(bytes a second, over how many seconds) below which a transfer is stalled; rate 0: never."""
    rate = header_int(DOWNLOAD_MIN_RATE.value())
    seconds = header_int(DOWNLOAD_SLOW_SECONDS.value())
    return (DEFAULT_MIN_RATE if rate is None else rate), float(seconds or DEFAULT_SLOW_SECONDS)


def check_identity(resp: requests.Response) -> None:
    """Refuse a body the server encoded although we asked for identity (a compression bomb)."""
    encoding = resp.headers.get("Content-Encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        raise TransferError(f"the server sent {clip(encoding, 40)!r}-encoded data although "
                            "identity was asked for; refusing it")


def read_body(resp: requests.Response, *, limit: int, deadline: float | None = None,
              decode: bool = False, chunk: int = _CHUNK, progress: Progress | None = None) -> Iterator[bytes]:
    """The body in pieces; raises `TransferError` past `limit` bytes or `deadline` seconds,
    slower than `min_rate()` for its whole window, or when fewer bytes arrive than
    `Content-Length` declared. Each piece is reported to `progress` (else, for a raw body, to
    the `watching` surface, if any).

    Raw bytes by default, and an encoded body is refused; `decode=True` (web pages, which sites
    compress whatever we ask) decodes gzip/deflate, and then `limit` counts decoded bytes.
    """
    if not decode:
        check_identity(resp)
    declared = content_length(resp)
    if progress is None and not decode and _watcher is not None:
        progress = _watcher(_label(resp))
    if declared is not None and declared > limit:
        raise TransferError(f"the server declares {declared} bytes, over the {limit}-byte limit")
    start, total = time.monotonic(), 0
    rate, window = min_rate()
    mark, marked = start, 0  # the start of the current rate window, and the bytes before it
    raw = resp.raw
    read1 = getattr(raw, "read1", None)  # one socket read at most: the deadline gets a say
    while True:
        now = time.monotonic()
        if deadline is not None and now - start > deadline:
            raise TransferError(f"took longer than {deadline:g} s in all; stopped")
        if rate and now - mark >= window:
            if total - marked < rate * (now - mark):
                raise TransferError(f"slower than {rate} bytes a second for {now - mark:.0f} s ({total - marked} "
                                    f"bytes); stopped (set {DOWNLOAD_MIN_RATE.name} to allow slower links, 0 for any)")
            mark, marked = now, total
        try:
            data = read1(chunk, decode_content=decode) if read1 else raw.read(chunk, decode_content=decode)
        except (requests.RequestException, http.client.HTTPException, OSError, ValueError) as e:
            raise TransferError(f"interrupted ({describe_error(e)})") from None
        except Exception as e:  # urllib3's own errors (ProtocolError, ReadTimeoutError, DecodeError)
            if type(e).__module__.startswith("urllib3"):
                raise TransferError(f"interrupted ({describe_error(e)})") from None
            raise
        if not data:
            break
        total += len(data)
        if total > limit:
            raise TransferError(f"larger than {limit} bytes; stopped")
        if progress is not None:
            progress(total, declared)
        yield data
    if declared is not None and not decode and total != declared:
        raise TransferError(f"cut short ({total} of {declared} bytes)")


def describe_error(e: BaseException) -> str:
    """`connection refused` rather than urllib3's nested repr: one short lower-case phrase."""
    if isinstance(e, requests.Timeout) or "timed out" in str(e).lower() or "ReadTimeout" in type(e).__name__:
        return "timed out"
    text = str(e)
    match = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", text)
    if match:
        return clip(match.group(1).strip().lower(), 100)
    if "RemoteDisconnected" in text or "Connection aborted" in text or "IncompleteRead" in text:
        return "the connection was closed"
    if isinstance(e, requests.ConnectionError):
        return "connection failed"
    return type(e).__name__


