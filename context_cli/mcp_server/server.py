"""Wire the tools of `tools.py` to the MCP SDK's low-level server, over stdio or Streamable HTTP.

The low-level `Server` is used (not `MCPServer`) because the tool list is dynamic: the
`get_docs` schema carries an enum of what is installed, rebuilt on every `tools/list`, and a
download must announce `notifications/tools/list_changed`. Registry calls run in worker
threads. `get_docs` runs in a worker thread too, under its own limit of concurrent calls and
a time limit, until the packages it searches have proved quick (`Searches`); then it runs
on the event loop, which saves the thread hops a millisecond search cannot afford. A
package that makes a search hang costs that call an error result, never the server
(`tools/list`, other searches). Over stdio the transport is our own lean one (`stdio.py`), and
it answers a warm `get_docs` call itself (`quick_call`), without the SDK's per-request pipeline.
Streamable HTTP, and the limits that hold it, are `http.py`'s.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import anyio
import mcp_types as types
import pydantic_core
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..environment import MCP_SEARCH_SECONDS
from ..errors import ContextError
from ..search.answer import dumps
from ..version import __version__
from . import api_tools, tools
from .tools import Catalog

log = logging.getLogger("context.mcp")

WATCH_SECONDS = 2.0  # how often the store folder is checked for packages added by other processes
WATCH_MAX_SECONDS = 30.0  # the longest wait between two tries while the folder cannot be read
MAX_TRACKED_SESSIONS = 256  # handshake-era sessions told of tool-list changes; above the HTTP session cap
FAST_SECONDS = 0.25  # a search this quick marks its packages warm: later ones run on the event loop
SEARCH_SECONDS = 30.0  # a get_docs call that takes longer answers with an error (CONTEXT_MCP_SEARCH_SECONDS)
MAX_SEARCHES = 8  # get_docs calls searching at once; more wait for a slot (within their time limit)
MAX_STUCK = 32  # searches still running after their time limit; beyond this get_docs is refused
INVALID_TEXT = "context/invalid-text"  # request _meta key set by `clean_line`
INSTRUCTIONS = ("Version-specific library documentation, searched locally. Call get_docs with a library and a "
                "topic before answering from memory. " + tools.WORKFLOW)

ToolFn = Callable[[Catalog, Mapping[str, Any]], dict[str, Any]]
TOOLS: dict[str, ToolFn] = {
    "get_docs": tools.get_docs,
    "search_packages": tools.search_packages,
    "download_package": tools.download_package,
    **api_tools.TOOLS,
}
SESSION_TOOLS = {"get_docs", *api_tools.TOOLS}  # what a session limited by --libs may call


def tool_specs(catalog: Catalog) -> list[dict[str, Any]]:
    """Every tool's spec: tools.py's three and the API-reference two."""
    return tools.tool_specs(catalog) + api_tools.specs(catalog)


class _Server(Server[dict[str, Any]]):
    """Declares `tools.listChanged` however the transport builds its initialization options
    (the Streamable HTTP manager asks with no notification options at all), and offers our
    stdio transport `quick_call`: a tool call's result (the wire dict) when it can be had at
    once, on the event loop, else None."""

    quick_call: Callable[[str, Mapping[str, Any]], dict[str, Any] | None]

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      experimental_capabilities: dict[str, dict[str, Any]] | None = None,
                                      extensions: dict[str, dict[str, Any]] | None = None) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), experimental_capabilities, extensions)


class Notifier:
    """Tells clients that the tool list changed.

    Handshake-era clients (every client today) hear it on their own connection: the caller of
    `download_package` on that call's response stream (so it arrives before the result), other
    sessions on their standalone stream. 2026-era clients hear it on `subscriptions/listen`.
    """

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.bus = InMemorySubscriptionBus()
        self.announced = catalog.fingerprint()
        self.busy = 0  # downloads in flight: the watcher stays quiet, the download announces
        self._sessions: OrderedDict[str, ServerSession] = OrderedDict()

    def remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        key = _connection_key(ctx)
        self._sessions[key] = ctx.session
        self._sessions.move_to_end(key)
        while len(self._sessions) > MAX_TRACKED_SESSIONS:
            self._sessions.popitem(last=False)

    async def changed(self, caller: ServerRequestContext[Any, Any] | None = None) -> None:
        self.announced = self.catalog.fingerprint()
        skip = None
        if caller is not None and caller.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            skip = _connection_key(caller)
            await _quietly(caller.session.send_notification(
                types.ToolListChangedNotification(), related_request_id=caller.request_id))
        for key, session in list(self._sessions.items()):
            if key != skip and not await _quietly(session.send_tool_list_changed()):
                self._sessions.pop(key, None)
        await self.bus.publish(ToolsListChanged())

    async def watch(self) -> None:
        """Announce packages installed or removed by other processes (`context add`, `remove`).

        A failure to look (the folder replaced, unreadable, out of descriptors) is logged once
        and retried, waiting longer each time up to `WATCH_MAX_SECONDS`: the server goes on
        answering from what it has, and announces again once the folder can be read."""
        pause, failing = WATCH_SECONDS, ""
        while True:
            await anyio.sleep(pause)
            try:
                if not self.busy and self.catalog.store.fingerprint() != self.announced:
                    await self.changed()
            except Exception as e:  # noqa: BLE001 - the watcher is advisory; the server lives on
                reason = f"{type(e).__name__}: {e}"
                if reason != failing:
                    log.warning("cannot watch the package folder %s (%s); retrying", self.catalog.store.root, reason)
                failing, pause = reason, min(pause * 2, WATCH_MAX_SECONDS)
                continue
            if failing:
                log.warning("the package folder %s can be read again", self.catalog.store.root)
            pause, failing = WATCH_SECONDS, ""


def _connection_key(ctx: ServerRequestContext[Any, Any]) -> str:
    """One key per client connection: the HTTP session id, or the single stdio peer."""
    headers = getattr(ctx.request, "headers", None)
    return (headers.get("mcp-session-id") if headers is not None else None) or "stdio"


async def _quietly(send: Any) -> bool:
    """Best-effort delivery: a client that went away must not fail the caller."""
    try:
        await send
        return True
    except Exception as e:  # noqa: BLE001 - notifications are advisory
        log.debug("notification not delivered: %s", e)
        return False


class Searches:
    """Runs `get_docs` calls: on the event loop once their packages are warm, else in worker
    threads, a few at a time, each with a time limit.

    A warm search is CPU-bound Python and numpy under the GIL: a worker thread buys it no
    concurrency, only two thread hops per call. A package is warm once a search over it
    finished in a worker within `FAST_SECONDS` (its index is loaded and it is not
    pathological); it turns cold again when a search over it fails or runs longer, and all
    turn cold when the package files change. Every SQLite query keeps its own deadline
    (`package/deadline.py`), so a warm package that turns slow holds the loop that long, once.

    A worker thread cannot be killed: a search past its limit is abandoned (its caller gets an
    error result) and runs on until SQLite gives up; `MAX_STUCK` such threads and new searches
    are refused at once rather than piling up.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.limiter = anyio.CapacityLimiter(MAX_SEARCHES)
        self._lock = threading.Lock()
        self.running = 0  # threads inside a search, abandoned ones included
        self.warm: set[Path] = set()
        self._listing: object = None  # the catalogue listing `warm` belongs to

    async def get_docs(self, catalog: Catalog, args: Mapping[str, Any]) -> dict[str, Any]:
        answer = self.answer_now(catalog, args)
        return answer if answer is not None else await self._in_thread(self._search, catalog, args)

    def answer_now(self, catalog: Catalog, args: Mapping[str, Any]) -> dict[str, Any] | None:
        """The answer, searched here and now, when no package file changed and every package
        the call searches is warm; None when the search must go to a worker thread."""
        if not catalog.fresh():  # re-reading the listing opens every package file: not on the loop
            return None
        request = tools.docs_request(catalog, args, refresh=False)
        if catalog.listing != self._listing:
            self.warm.clear()
            self._listing = catalog.listing
        if not all(p.path in self.warm for p in request.packages):
            return None
        return self._timed(request)

    def _search(self, catalog: Catalog, args: Mapping[str, Any]) -> dict[str, Any]:
        """The search in a worker thread, with the listing re-read first if a file changed."""
        return self._timed(tools.docs_request(catalog, args))

    def _timed(self, request: tools.DocsRequest) -> dict[str, Any]:
        """Search, and note whether its packages are warm from now on."""
        paths = {p.path for p in request.packages}
        started = time.monotonic()
        fast = False
        try:
            answer = tools.search_docs(request)
            fast = time.monotonic() - started <= FAST_SECONDS
            return answer
        finally:
            if fast:
                self.warm |= paths
            else:
                self.warm -= paths

    async def _in_thread(self, fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
        if self.running >= MAX_STUCK:
            raise tools.ToolError("the server is busy with searches that do not finish; try again later "
                                  "or remove the package that makes them hang")
        with anyio.move_on_after(self.seconds):
            return await anyio.to_thread.run_sync(self._counted, fn, *args,
                                                  limiter=self.limiter, abandon_on_cancel=True)
        raise tools.ToolError(f"the search took longer than {self.seconds:g}s and was stopped; a package may be "
                              "damaged or hostile: try another library or a narrower topic")

    def _counted(self, fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
        with self._lock:
            self.running += 1
        try:
            return fn(*args)
        finally:
            with self._lock:
                self.running -= 1


def _search_seconds() -> float:
    raw = MCP_SEARCH_SECONDS.value() or ""
    try:
        value = float(raw) if raw.strip() else SEARCH_SECONDS
    except ValueError:
        return SEARCH_SECONDS
    return value if 0 < value < float("inf") else SEARCH_SECONDS


def build_server(catalog: Catalog) -> _Server:
    """The MCP server for one catalog; the same instance serves every session."""
    notifier = Notifier(catalog)
    searches = Searches(_search_seconds())

    @asynccontextmanager
    async def lifespan(_: Server[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(notifier.watch)
            yield {}
            tg.cancel_scope.cancel()

    async def list_tools(ctx: ServerRequestContext[Any, Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        notifier.remember(ctx)
        specs = await anyio.to_thread.run_sync(tool_specs, catalog)
        return types.ListToolsResult(tools=[
            types.Tool(name=s["name"], description=s["description"], input_schema=s["inputSchema"]) for s in specs
        ])

    async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> dict[str, Any]:
        notifier.remember(ctx)
        invalid = (params.meta or {}).get(INVALID_TEXT) if isinstance(params.meta, dict) else None
        if invalid:
            return _error(f"{invalid} is not valid text (it contains a lone surrogate)")
        fn = TOOLS.get(params.name)
        if fn is None or (catalog.locked and params.name not in SESSION_TOOLS):
            return _error(f"Unknown tool: {params.name}. Available: "
                          f"{', '.join(s for s in TOOLS if not catalog.locked or s in SESSION_TOOLS)}")
        args = params.arguments if isinstance(params.arguments, Mapping) else {}
        downloading = params.name == "download_package"
        notifier.busy += int(downloading)
        try:
            if params.name == "get_docs":
                answer = await searches.get_docs(catalog, args)
            else:
                answer = await anyio.to_thread.run_sync(fn, catalog, args)
        except Exception as e:  # noqa: BLE001 - the server stays up; the agent gets one line
            return _failure(params.name, e)
        finally:
            notifier.busy -= int(downloading)
        if downloading:
            await notifier.changed(ctx)
        return _result(answer)

    def quick_call(name: str, args: Mapping[str, Any]) -> dict[str, Any] | None:
        """A `get_docs` call whose packages are warm, answered without the SDK's pipeline."""
        if name != "get_docs":
            return None
        try:
            answer = searches.answer_now(catalog, args)
        except Exception as e:  # noqa: BLE001 - as in call_tool
            return _failure(name, e)
        return None if answer is None else _result(answer)

    def input_schema(name: str) -> Mapping[str, Any] | None:
        return next((s["inputSchema"] for s in tool_specs(catalog) if s["name"] == name), None)

    server = _Server(
        "context", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
        get_tool_input_schema=input_schema, on_list_tools=list_tools,
        on_call_tool=cast(Any, call_tool),  # the SDK's pipeline takes a wire dict as well as its model
        on_subscriptions_listen=ListenHandler(notifier.bus),
    )
    # The SDK's one default middleware opens an OpenTelemetry span per message, a no-op
    # without an exporter (we install none) that still costs ≈ 70 µs of a get_docs call.
    server.middleware = []
    server.quick_call = quick_call
    return server


def json_text(answer: dict[str, Any]) -> str:
    """The answer as compact JSON text, made by pydantic's Rust encoder (about 5x quicker than
    `json.dumps` on a 10 KB answer). Never NaN or Infinity (null, as `dumps` writes them too);
    text with a lone surrogate goes through `dumps`, which escapes it."""
    try:
        return pydantic_core.to_json(answer, inf_nan_mode="null").decode()
    except pydantic_core.PydanticSerializationError:
        return dumps(answer)


def _result(answer: dict[str, Any]) -> dict[str, Any]:
    """A tool's answer as the `tools/call` result on the wire: the answer's JSON as text, keys
    in the order the SDK's own serialiser writes them.

    Text only, as Neuledge Context sends it. `structuredContent` is optional for a tool without
    an `outputSchema`, and the MCP spec asks for the JSON text in any case; a second copy
    doubled what went over the pipe, and the SDK's client spent ≈ 0.13 ms a call (a third of
    its share of the round trip) reading it (docs/performance.md, sixth round)."""
    return {"content": [{"text": json_text(answer), "type": "text"}], "isError": False}


def _error(message: str) -> dict[str, Any]:
    line = " ".join(message.split()) or "unknown error"
    return {"content": [{"text": line, "type": "text"}], "isError": True}


def _failure(tool: str, e: Exception) -> dict[str, Any]:
    """A failed call's error result: our errors as they are, anything else logged and named."""
    if isinstance(e, ContextError):
        return _error(str(e))
    if isinstance(e, OSError):  # a package file gone or unreadable under a running server: no bug of ours
        line = f"cannot read {e.filename or 'a package file'} ({e.strerror or e}); see `context list`"
        log.warning("tool %s: %s", tool, line)
        return _error(line)
    log.exception("tool %s failed", tool)
    return _error(f"internal error in {tool}: {type(e).__name__}: {e}")


def run_stdio(catalog: Catalog) -> None:
    """Serve one client over stdin/stdout until it closes them."""
    server = build_server(catalog)

    async def main() -> None:
        if sys.platform == "win32":
            await _serve_sdk_stdio(server)
            return
        from .stdio import Incoming, Outgoing, claimed_stdio

        with claimed_stdio() as (wire_in, wire_out):
            out = Outgoing(wire_out)
            await server.run(Incoming(wire_in, clean_line, quick=server.quick_call, out=out), out,
                             server.create_initialization_options())

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass


async def _serve_sdk_stdio(server: Server[dict[str, Any]]) -> None:
    """The SDK's own stdio transport (threaded file I/O), where pipes cannot be polled."""
    import io

    from mcp.server.stdio import stdio_server

    lines = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    async with stdio_server(stdin=cast(Any, _CleanLines(lines))) as (read, write):
        await server.run(read, write, server.create_initialization_options())


class _CleanLines:
    """stdin's lines with lone surrogates taken out (see `clean_line`)."""

    def __init__(self, source: AsyncIterable[str]) -> None:
        self.source = source

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self.source:
            yield clean_line(line)


def clean_line(line: str) -> str:
    """A JSON-RPC line whose strings hold a lone surrogate (`"\\ud800"`) cannot be read by the
    SDK, which then drops it and the client waits forever. Such a line is rewritten: the
    surrogates become U+FFFD and the request's `_meta` names the arguments that held them,
    so the tool call answers with an error result instead."""
    if "\\ud" not in line.lower():
        return line
    try:
        message = json.loads(line)
    except ValueError:
        return line
    if not _has_surrogate(message):
        return line  # only proper surrogate pairs
    params = message.get("params") if isinstance(message, dict) else None
    if isinstance(params, dict):
        args = params.get("arguments")
        bad = [str(k) for k, v in args.items() if _has_surrogate(v) or _has_surrogate(k)] \
            if isinstance(args, dict) else []
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, dict) else {}), INVALID_TEXT: " and ".join(bad) or "the request"}
    return json.dumps(_replace_surrogates(message))


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in value)
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value


def say(message: str) -> None:
    """Status for humans on stderr: stdout belongs to the protocol in stdio mode."""
    print(message, file=sys.stderr, flush=True)
