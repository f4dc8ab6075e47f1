"""Raw JSON-RPC over stdio that the SDK client cannot send: lone surrogates in arguments.

Every request gets a response (an error result), and the server keeps serving.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from mcp_fixtures import make_home, serve_env

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


def call(n: int, arguments: dict[str, Any]) -> str:
    # json.dumps escapes the surrogate as \ud800: exactly what a hostile client sends.
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                       "params": {"name": "get_docs", "arguments": arguments}})


def test_lone_surrogates_in_get_docs_get_error_results(tmp_path: Path) -> None:
    home = make_home(tmp_path, [("mylib", "1.0.0")])
    proc = subprocess.Popen([sys.executable, "-m", "context_cli", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=serve_env(home))
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    try:
        requests = [json.dumps(INIT), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                    call(2, {"library": "mylib", "topic": "cancel \ud800"}),
                    call(3, {"library": "my\udfffl", "topic": "cancel"}),
                    call(4, {"topic": "\ud800"}),
                    call(5, {"library": "mylib", "topic": "cancel a pipeline"}),
                    json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/list"})]
        proc.stdin.write(("\n".join(requests) + "\n").encode())  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        answers: dict[int, Any] = {}
        while len(answers) < 6:
            message = json.loads(lines.get(timeout=30))
            if "id" in message:
                answers[message["id"]] = message
        for n in (2, 3, 4):
            result = answers[n]["result"]
            assert result["isError"] and "lone surrogate" in result["content"][0]["text"], answers[n]
        assert not answers[5]["result"].get("isError") and json.loads(answers[5]["result"]["content"][0]["text"])["results"]
        assert "tools" in answers[6]["result"]
    finally:
        proc.kill()
        proc.wait()


def test_clean_line_leaves_proper_text_alone() -> None:
    from context_cli.mcp_server.server import INVALID_TEXT, clean_line

    pair = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {"topic": "\\ud83d\\ude00"}}}'
    assert clean_line(pair) == pair
    plain = '{"id": 1, "params": {"arguments": {"topic": "cancel"}}}'
    assert clean_line(plain) == plain
    fixed = json.loads(clean_line('{"id": 1, "params": {"arguments": {"topic": "a\\ud800", "library": "x"}}}'))
    assert fixed["params"]["arguments"]["topic"] == "a\ufffd"
    assert fixed["params"]["_meta"] == {INVALID_TEXT: "topic"}


def test_lone_surrogate_over_http_is_answered_at_once(tmp_path: Path) -> None:
    import httpx
    from mcp_fixtures import http_server

    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with http_server(make_home(tmp_path, [("mylib", "1.0.0")])) as url:
        first = httpx.post(url, content=json.dumps(INIT), headers=headers, timeout=10)
        session = {**headers, "mcp-session-id": first.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        httpx.post(url, content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                   headers=session, timeout=10)
        bad = httpx.post(url, content=call(2, {"library": "mylib", "topic": "x \ud800"}), headers=session, timeout=15)
        assert bad.status_code == 400 and bad.json()["error"]["code"] == -32700  # JSON-RPC parse error
        good = httpx.post(url, content=call(3, {"library": "mylib", "topic": "cancel"}), headers=session, timeout=15)
        assert good.status_code == 200 and "Cancelling" in good.text
