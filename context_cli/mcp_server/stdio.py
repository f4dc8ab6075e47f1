"""A lean stdio transport for the MCP SDK's server (POSIX).

The SDK's `stdio_server` reads stdin and writes stdout through `anyio.wrap_file`, so every
message costs worker-thread hops (readline; write, then flush) and a memory-stream handoff
each way: about 16 context switches per tool call, measured, which a busy 2-core machine
turns into milliseconds. Here the streams the server reads and writes *are* the pipes:
stdin is read on the event loop when epoll says it is readable (one `os.read` per burst,
split into lines), and each message goes out in one `os.write`. Like the SDK's transport it
keeps the wire to itself while serving: fd 0 reads the null device and fd 1 goes to stderr,
so stray output from a library cannot corrupt the protocol.

A `tools/call` the server can answer at once (`quick`: a `get_docs` whose packages are warm)
is answered here, as soon as its line is parsed, and never enters the SDK's pipeline: that
saves its per-request work (two task hand-overs, a context, validating the parameters twice,
dumping and re-validating the 20 KB result) and writes the same response. Only a plain call
qualifies (name and arguments, no `_meta`: no progress token, no 2026-era envelope, no
invalid-text mark) on a connection that opened with the `initialize` handshake and finished
it; everything else goes the SDK's way.

A line that does not parse as a JSON-RPC message (not JSON, cut off, nested too deep, the
wrong shape) never reaches the SDK, which would drop it without a word and leave the caller
waiting: it is answered here with a parse error (-32700) or an invalid request (-32600) when
its id can be read (`request_id`, a scan that does not need the line to parse), and logged
otherwise.

Windows has no `epoll` for pipes: `server.run_stdio` keeps the SDK's transport there.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import sys
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Self

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

READ_SIZE = 1 << 16
MAX_LINE_BYTES = 16 << 20  # a request line; real ones are a few kilobytes (topics stop at 10,000 characters)
OVERLONG = b"\x00overlong"  # marks the kept head of a longer line (a NUL never starts valid JSON text)
log = logging.getLogger("context.mcp")
# JSON tokens as far as `request_id` needs them: strings, brackets, separators, and the rest.
_TOKEN = r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+'
QUICK_PARAMS = frozenset({"name", "arguments"})

QuickCall = Callable[[str, Mapping[str, Any]], dict[str, Any] | None]
"""(tool name, arguments) -> the call's result as sent, or None to leave the call to the SDK."""


@contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private descriptors of the client's pipes (stdin, stdout), with fd 0 and fd 1 diverted
    meanwhile (to the null device and to stderr) and put back afterwards."""
    sys.stdout.flush()
    try:
        wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:  # a standard descriptor is closed: serve what there is, undiverted
        yield 0, 1
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        yield wire_in, wire_out
    finally:
        sys.stdout.flush()
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)
        for fd in (null, wire_in, wire_out):
            os.close(fd)


class _Closable:
    """What both streams share: closing marks them closed; `async with` closes them."""

    _closed = False

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


class Incoming(_Closable):
    """The server's read stream: each line of `fd` as a parsed JSON-RPC message, or the error
    a malformed line raised (the SDK answers that and reads on). `clean` rewrites a line's text
    before it is parsed. Tool calls that `quick` answers are written to `out` instead."""

    def __init__(self, fd: int, clean: Callable[[str], str], *, quick: QuickCall | None = None,
                 out: Outgoing | None = None) -> None:
        self.fd = fd
        self.clean = clean
        self.quick = quick if out is not None else None
        self.out = out
        self._lines: deque[bytes] = deque()
        self._partial: list[bytes] = []  # the start of a line still arriving
        self._partial_size = 0
        self._overlong = False  # the line arriving is past MAX_LINE_BYTES: only its head is kept
        self._pollable = True
        self._eof = False
        self._closed = False
        self._handshake = ""  # "asked" after an opening `initialize`, "done" once the client confirmed it

    async def receive(self) -> SessionMessage | Exception:
        while True:
            line = await self._next_line()
            text = self.clean(line.decode("utf-8", errors="replace"))
            try:
                message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
            except Exception as e:  # noqa: BLE001 - answered (or logged) here; the SDK would drop it
                if self.out is None:
                    return e
                self._refuse(text)
                continue
            if not self._answered(message):
                return SessionMessage(message)

    def _refuse(self, text: str) -> None:
        """Answer a line that is no JSON-RPC message, if its id can be read; else log it."""
        assert self.out is not None
        if text.endswith(OVERLONG.decode()):
            text = text[:-len(OVERLONG)]
            code, why = types.INVALID_REQUEST, f"Invalid request: the line is over {MAX_LINE_BYTES} bytes"
        else:
            code, why = _malformed(text)
        rid = request_id(text)
        if rid is None:
            log.warning("ignored a stdio line with no readable id (%s): %.80r", why, text)
            return
        error = types.ErrorData(code=code, message=why)
        try:
            self.out.write(types.JSONRPCError(jsonrpc="2.0", id=rid, error=error))
        except anyio.BrokenResourceError as e:
            raise anyio.EndOfStream from e

    def _answered(self, message: types.JSONRPCMessage) -> bool:
        """Follow the handshake; answer a plain tool call when `quick` can (True)."""
        if isinstance(message, types.JSONRPCNotification):
            if message.method == "notifications/initialized" and self._handshake == "asked":
                self._handshake = "done"
            return False
        if not isinstance(message, types.JSONRPCRequest):
            return False
        if not self._handshake:  # the first request decides the protocol era
            self._handshake = "asked" if message.method == "initialize" else "never"
        params = message.params
        if (self.quick is None or self.out is None or self._handshake != "done" or message.method != "tools/call"
                or not isinstance(params, dict) or not params.keys() <= QUICK_PARAMS):
            return False
        name, args = params.get("name"), params.get("arguments", {})
        if not isinstance(name, str) or not isinstance(args, dict):
            return False
        result = self.quick(name, args)
        if result is None:
            return False
        try:
            self.out.write(types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result))
        except anyio.BrokenResourceError as e:  # the client went away: so does the server
            raise anyio.EndOfStream from e
        return True

    async def _next_line(self) -> bytes:
        while not self._lines:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._eof:
                raise anyio.EndOfStream
            await self._readable()
            chunk = os.read(self.fd, READ_SIZE)
            if not chunk:
                self._eof = True
                self._take(b"".join(self._partial).split(b"\n"))
            elif b"\n" not in chunk:
                self._grow(chunk)
            else:
                head, _, tail = chunk.partition(b"\n")
                self._grow(head)
                first = b"".join(self._partial)
                *lines, rest = tail.split(b"\n")
                self._take([first + OVERLONG if self._overlong else first, *lines])
                self._partial, self._partial_size, self._overlong = ([rest] if rest else []), len(rest), False
        return self._lines.popleft()

    def _grow(self, piece: bytes) -> None:
        """Add to the line arriving; past MAX_LINE_BYTES keep only its head (for its id)."""
        if self._overlong:
            return
        self._partial.append(piece)
        self._partial_size += len(piece)
        if self._partial_size > MAX_LINE_BYTES:
            self._partial = [b"".join(self._partial)[:READ_SIZE]]
            self._overlong = True

    def _take(self, lines: list[bytes]) -> None:
        self._lines.extend(line for line in lines if line.strip())

    async def _readable(self) -> None:
        """Wait until a read will not block. A regular file or the null device cannot be
        polled (EPERM), but reading one never blocks either."""
        if self._pollable:
            try:
                await anyio.wait_readable(self.fd)
            except PermissionError:
                self._pollable = False

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


def _malformed(text: str) -> tuple[int, str]:
    """(JSON-RPC error code, message) for a line the SDK's model refused."""
    try:
        json.loads(text)
    except RecursionError:
        return types.PARSE_ERROR, "Parse error: the message is nested too deeply"
    except ValueError as e:
        return types.PARSE_ERROR, f"Parse error: {str(e)[:120]}"
    return types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 request, notification or response"


def request_id(text: str) -> int | str | None:
    """The top-level `"id"` of a JSON object line, read by a token scan that needs neither the
    whole line nor a parse of it (cut-off lines, lines nested too deep); None when there is none
    of the JSON-RPC kinds (an integer or a string)."""
    depth, prev, want = 0, "", False
    for m in re.finditer(_TOKEN, text):
        token = m.group()
        if want:
            if token.startswith('"'):
                try:
                    value: object = json.loads(token)
                except ValueError:
                    return None
            else:
                value = int(token) if re.fullmatch(r"-?\d{1,18}", token) else None
            return value if isinstance(value, (int, str)) else None
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
            if depth <= 0:
                return None
        elif token == ":" and depth == 1 and prev == '"id"':
            want = True
        elif depth == 0:
            return None  # not an object
        prev = token
    return None


class Outgoing(_Closable):
    """The server's write stream: each message as one JSON line, written whole before `send`
    returns (so concurrent senders never interleave)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._closed = False

    async def send(self, item: SessionMessage) -> None:
        self.write(item.message)

    def write(self, message: types.JSONRPCMessage) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        line = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
        data = memoryview(line.encode("utf-8", errors="replace"))
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except OSError as e:  # the client went away (EPIPE)
            self._closed = True
            raise anyio.BrokenResourceError from e
