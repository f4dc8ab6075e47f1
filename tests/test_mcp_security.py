"""MCP over HTTP: Host/Origin allow list on every address, a warning beyond loopback, a bearer token.

Real `context serve --http` subprocesses, real HTTP requests and the SDK's own client.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from mcp_fixtures import anyio_backend, http_server, make_home, text_of  # noqa: F401 - fixture

from context_cli.mcp_server.http import allowed_host_names, is_loopback

pytestmark = pytest.mark.anyio

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def post(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url, content=json.dumps(INIT), headers={**HEADERS, **headers}, timeout=10)


def test_allow_list_rules() -> None:
    assert is_loopback("127.0.0.2") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert allowed_host_names("127.0.0.2") == ["127.0.0.2", "localhost", "127.0.0.1", "[::1]"]
    assert allowed_host_names("192.168.1.5", ["docs.lan"]) == ["192.168.1.5", "docs.lan"]
    assert "0.0.0.0" not in allowed_host_names("0.0.0.0")


def test_dns_rebinding_is_refused_on_127_0_0_2(tmp_path: Path) -> None:
    with http_server(make_home(tmp_path), "--host", "127.0.0.2") as url:
        assert url.startswith("http://127.0.0.2:")
        assert post(url, host="evil.example").status_code == 421
        assert post(url, host="evil.example:80").status_code == 421
        assert post(url, origin="http://evil.example").status_code == 403
        assert post(url).status_code == 200  # Host is 127.0.0.2:PORT
        port = url.split(":")[2].split("/")[0]
        assert post(url, host=f"localhost:{port}", origin=f"http://localhost:{port}").status_code == 200


def test_beyond_loopback_warns_and_only_named_hosts_pass(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with http_server(home, "--host", "0.0.0.0", "--allow-host", "docs.lan") as url:
        log = (home / "http-stderr.log").read_text()
        assert "Warning: listening on 0.0.0.0" in log and "--token" in log
        assert post(url, host="evil.example:1").status_code == 421
        assert post(url, host="docs.lan:1").status_code == 200


async def test_bearer_token_guards_every_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    monkeypatch.setenv("CONTEXT_MCP_TOKEN", "s3cret-token")
    with http_server(make_home(tmp_path)) as url:
        missing = post(url)
        assert missing.status_code == 401 and "bearer token" in missing.json()["error"]
        assert post(url, authorization="Bearer wrong").status_code == 401
        assert httpx.get(url, timeout=10).status_code == 401
        client = httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"})
        async with client, streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("get_docs", {"library": "mylib", "topic": "cancel a pipeline"})
                assert not result.is_error, text_of(result)
