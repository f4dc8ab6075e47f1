"""Operations: Prometheus counters for `/metrics` and one JSON access-log line per request.

One pure-ASGI middleware sees every request (including errors and 404s), counts bytes in
and out as they pass, and records the status and duration when the response ends.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from bisect import bisect_left
from collections import Counter
from datetime import UTC, datetime
from itertools import accumulate

from starlette.types import ASGIApp, Message, Receive, Scope, Send

access_log = logging.getLogger("registry_server.access")
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def route_of(method: str, path: str) -> str:
    """A bounded label for a request path (paths themselves would grow without end)."""
    if path.startswith("/packages/"):
        if method == "POST":
            return "publish"
        return "download" if path.rstrip("/").endswith("/download") else "package"
    for prefix, label in (("/api/search", "api_search"), ("/api/packages/", "api_package"),
                          ("/search", "search"), ("/health", "health"), ("/metrics", "metrics"),
                          ("/docs/", "docs"), ("/static/", "static")):
        if path == prefix or path.startswith(prefix):
            return label
    return "index" if path == "/" else "other"


class Metrics:
    """Counters since start-up; thread-safe, rendered in Prometheus text format."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: Counter[tuple[str, str, int]] = Counter()
        self.buckets: dict[str, list[int]] = {}
        self.latency_sum: dict[str, float] = {}
        self.latency_count: Counter[str] = Counter()
        self.bytes_in: Counter[str] = Counter()
        self.bytes_out: Counter[str] = Counter()

    def observe(self, route: str, method: str, status: int, seconds: float,
                bytes_in: int, bytes_out: int) -> None:
        with self._lock:
            self.requests[(route, method, status)] += 1
            counts = self.buckets.setdefault(route, [0] * (len(BUCKETS) + 1))
            counts[bisect_left(BUCKETS, seconds)] += 1  # one bucket; cumulated when rendered
            self.latency_sum[route] = self.latency_sum.get(route, 0.0) + seconds
            self.latency_count[route] += 1
            self.bytes_in[route] += bytes_in
            self.bytes_out[route] += bytes_out

    def render(self, packages: int | None) -> str:
        with self._lock:
            lines = ["# HELP registry_http_requests_total Requests by route, method and status.",
                     "# TYPE registry_http_requests_total counter"]
            for (route, method, status), n in sorted(self.requests.items()):
                lines.append(f'registry_http_requests_total{{route="{route}",method="{method}",'
                             f'status="{status}"}} {n}')
            lines += ["# HELP registry_http_request_duration_seconds Time to the end of the response.",
                      "# TYPE registry_http_request_duration_seconds histogram"]
            for route, counts in sorted(self.buckets.items()):
                for bound, n in zip(BUCKETS, accumulate(counts[:-1]), strict=True):
                    lines.append(f'registry_http_request_duration_seconds_bucket{{route="{route}",'
                                 f'le="{bound}"}} {n}')
                total = self.latency_count[route]
                lines.append(f'registry_http_request_duration_seconds_bucket{{route="{route}",'
                             f'le="+Inf"}} {total}')
                lines.append(f'registry_http_request_duration_seconds_sum{{route="{route}"}} '
                             f"{self.latency_sum[route]:.6f}")
                lines.append(f'registry_http_request_duration_seconds_count{{route="{route}"}} {total}')
            lines += ["# HELP registry_upload_bytes_total Package bytes received by publishes.",
                      "# TYPE registry_upload_bytes_total counter",
                      f"registry_upload_bytes_total {self.bytes_in['publish']}",
                      "# HELP registry_download_bytes_total Package bytes sent by downloads.",
                      "# TYPE registry_download_bytes_total counter",
                      f"registry_download_bytes_total {self.bytes_out['download']}",
                      "# HELP registry_response_bytes_total Response body bytes by route.",
                      "# TYPE registry_response_bytes_total counter"]
            for route, n in sorted(self.bytes_out.items()):
                lines.append(f'registry_response_bytes_total{{route="{route}"}} {n}')
        if packages is not None:
            lines += ["# HELP registry_packages Published package versions.",
                      "# TYPE registry_packages gauge", f"registry_packages {packages}"]
        return "\n".join(lines) + "\n"


class ObserveMiddleware:
    """Counts every HTTP request into `metrics` and writes its access-log line."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        seen = {"status": 500, "in": 0, "out": 0}

        async def counting_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                seen["in"] += len(message.get("body", b""))
            return message

        async def counting_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            elif message["type"] == "http.response.body":
                seen["out"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, counting_receive, counting_send)
        finally:
            seconds = time.perf_counter() - start
            method, path = scope["method"], scope["path"]
            route = route_of(method, path)
            self.metrics.observe(route, method, seen["status"], seconds, seen["in"], seen["out"])
            if access_log.isEnabledFor(logging.INFO):
                client = scope.get("client")
                access_log.info(json.dumps({
                    "time": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                    "client": client[0] if client else None, "method": method,
                    "path": path[:512], "route": route, "status": seen["status"],
                    "ms": round(seconds * 1000, 2), "bytes_in": seen["in"], "bytes_out": seen["out"],
                }, ensure_ascii=False))
