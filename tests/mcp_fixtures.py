"""Helpers for the MCP tests: package homes, `context serve` subprocesses driven by the SDK's
own client (stdio and Streamable HTTP), and a real registry server on loopback.

Packages are lexical (no vectors) so the tests never depend on the embedding model.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from context_cli.document import Chunk, estimate_tokens
from context_cli.package.writer import write_package
from context_cli.store.store import Store

MYLIB_SECTIONS = [
    ("guide/cancel.md", "Cancelling a pipeline", "Stopping halfway",
     "Call `Pipeline.cancel()` from another thread to stop a running pipeline halfway; pending items are "
     "dropped and sinks are flushed."),
    ("guide/cancel.md", "Cancelling a pipeline", "Timeouts",
     "Pass `timeout=30` to `run()` to abort a pipeline that takes too long."),
    ("guide/errors.md", "Errors", "ERR_SINK_CLOSED",
     "Raised when a sink is written to after `close()`. Reopen the sink or create a new one before writing."),
    ("guide/retries.md", "Retries", "Backoff",
     "Failed writes are retried three times with exponential backoff before the error is raised. " * 12),
    ("index.md", "MyLib", "Installation", "Install it with pip: `pip install mylib`. Python 3.9 or newer. " * 6),
    ("index.md", "MyLib", "Quick start",
     "Create a `Pipeline`, add a source and a sink, then call `run()`. Sources stream data to sinks. " * 6),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def build_package(dest: Path, name: str, version: str, sections: list[tuple[str, str, str, str]] | None = None,
                  registry: str = "local") -> Path:
    """A lexical package; sections are (doc_path, doc_title, section_title, content)."""
    sections = sections or [("guide.md", name.title(), "Intro",
                              f"{name} {version} explains streaming and cancellation of pipelines.")]
    chunks = [Chunk(doc_path=p, doc_title=d, section_title=s, content=c, tokens=estimate_tokens(c),
                    has_code="`" in c) for p, d, s, c in sections]
    return write_package(dest, {"name": name, "version": version, "registry": registry,
                                "description": f"{name} docs"}, chunks)


def make_home(root: Path, packages: list[tuple[str, str]] | None = None, *, registry_url: str | None = None) -> Path:
    """A CONTEXT_HOME holding installed packages; `mylib` gets realistic sections."""
    home = root / "home"
    store = Store(home / "packages")
    build_dir = root / "built"
    for name, version in packages if packages is not None else [("mylib", "1.0.0"), ("mylib", "2.0.0"),
                                                               ("other", "0.3")]:
        sections = MYLIB_SECTIONS if name == "mylib" else None
        store.install(build_package(build_dir / f"{name}-{version}.db", name, version, sections))
    home.mkdir(parents=True, exist_ok=True)
    if registry_url:
        (home / "config.json").write_text(json.dumps(
            {"servers": [{"name": "test", "url": registry_url, "default": True}]}), "utf-8")
    return home


def serve_env(home: Path) -> dict[str, str]:
    return {"CONTEXT_HOME": str(home), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


@asynccontextmanager
async def stdio_session(home: Path, *args: str, handler: Any = None, modern: bool = False,
                        env: dict[str, str] | None = None, cwd: Path | None = None) -> AsyncIterator[Any]:
    """`context serve ARGS` as a subprocess, with an SDK client session: initialized by the
    handshake, or with `modern` by `server/discover` (the 2026-07-28 protocol)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "context_cli", "serve", *args],
                                   env={**serve_env(home), **(env or {})}, cwd=cwd)
    with open(home / "serve-stderr.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=handler) as session:
                await (session.discover() if modern else session.initialize())
                yield session


@asynccontextmanager
async def http_session(url: str, handler: Any = None) -> AsyncIterator[Any]:
    """An initialized SDK client session over Streamable HTTP."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, message_handler=handler) as session:
            await session.initialize()
            yield session


@contextmanager
def http_server(home: Path, *args: str, timeout: float = 20.0) -> Iterator[str]:
    """`context serve --http 0 ARGS` as a subprocess; yields its /mcp URL once it accepts connections."""
    log = home / "http-stderr.log"
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "context_cli", "serve", "--http", "0", *args],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, **serve_env(home)})
    try:
        url = _wait_for_url(proc, log, timeout)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_for_url(proc: subprocess.Popen, log: Path, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        for line in text.splitlines():
            if line.startswith("Listening on "):
                url = line.removeprefix("Listening on ").strip()
                host, port = url.split("//")[1].split("/")[0].rsplit(":", 1)
                with socket.create_connection((host.strip("[]"), int(port)), timeout=2):
                    return url
        if proc.poll() is not None:
            raise AssertionError(f"context serve exited with {proc.returncode}: {text.strip()}")
        time.sleep(0.05)
    raise AssertionError(f"context serve did not start in {timeout}s: {log.read_text(errors='replace')}")


@contextmanager
def registry_server(data_dir: Path, key: str = "test-key") -> Iterator[str]:
    """The project's registry server (docs/registry.md) in a thread on a free loopback port."""
    import uvicorn

    from registry_server.app import create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(data_dir, publish_key=key), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise AssertionError("registry server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def publish(url: str, path: Path, registry: str, name: str, version: str, key: str = "test-key") -> None:
    import requests

    resp = requests.post(f"{url}/packages/{registry}/{name}/{version}", data=path.read_bytes(),
                         headers={"Authorization": f"Bearer {key}",
                                  "Content-Type": "application/octet-stream"}, timeout=10)
    assert resp.status_code in (200, 201), resp.text


def damage(path: Path) -> None:
    """Overwrite the chunks table's leaf pages, leaving the schema, meta and FTS index intact."""
    import sqlite3

    with sqlite3.connect(path) as db:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = [r[0] for r in db.execute("SELECT pageno FROM dbstat WHERE name = 'chunks' AND pagetype = 'leaf'")]
    data = bytearray(path.read_bytes())
    for page in pages:
        data[(page - 1) * size:page * size] = b"\xff" * size
    path.write_bytes(bytes(data))


def text_of(result: Any) -> str:
    return result.content[0].text


def answer_of(result: Any) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


def tool_named(listing: Any, name: str) -> Any:
    return next(t for t in listing.tools if t.name == name)


def is_list_changed(message: Any) -> bool:
    return getattr(message, "method", None) == "notifications/tools/list_changed"


def slow_package(dest: Path, name: str = "slow", version: str = "1.0.0") -> Path:
    """A hostile package whose every lexical search runs forever: its FTS5 table keeps no
    column sizes and takes its content from a view over an endless recursive CTE, so BM25
    reads the view. It has no BM25 index of ours, so search goes through FTS5."""
    import sqlite3

    path = build_package(dest, name, version, [("a.md", name.title(), "Intro", f"{name} streams data")])
    db = sqlite3.connect(path)
    db.execute("DELETE FROM meta WHERE key = 'bm25_index'")
    db.execute("DROP TABLE IF EXISTS bm25_terms")
    db.execute("DROP TABLE IF EXISTS bm25_lengths")
    db.execute("CREATE VIEW endless AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
               "SELECT c.id AS id, c.doc_title, c.section_title, c.content FROM chunks c, r WHERE r.x = 0")
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    db.execute("PRAGMA writable_schema = ON")
    db.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'chunks_fts'",
               (sql.replace("content='chunks'", "content='endless', columnsize=0"),))
    db.commit()
    db.close()
    return path
