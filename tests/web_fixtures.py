"""A real HTTP server on loopback for source tests: routes, delays, cookies, request log.

`Site` maps paths to canned answers (or callables); `serve(site)` runs it on 127.0.0.1 on a
free port in a thread. Requests are logged with their Host and Cookie headers so tests can
check what was (not) fetched and where credentials went.
"""

from __future__ import annotations

import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from quiet_servers import QuietHTTPServer

# A page that only has text once its script ran, and a stand-in for chromium that prints that DOM.
SHELL = ("<html><head><title>App</title></head><body><div id='root'></div><script>"
         "document.getElementById('root').innerHTML = '<main><h1>Rendered</h1><p>'"
         " + 'Text that only exists after the script ran, long enough to be a real page of docs.' + '</p></main>';"
         "</script></body></html>")


def fake_browser(folder: Path) -> str:
    """An executable taking chromium's command line and printing the DOM SHELL's script builds."""
    script = folder / "fake-chromium"
    script.write_text("#!/bin/sh\nfor a; do :; done\ncase \"$a\" in http*) ;; *) exit 2;; esac\n"
                      "echo \"<html><body><main><h1>Rendered</h1><p>Text that only exists after the script"
                      " ran, long enough to be a real page of docs.</p></main></body></html>\"\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    trickle: float = 0.0  # seconds between bytes: the body dribbles out one byte at a time
    cookie: str | None = None  # "name=value" the request must carry, else 401
    handler: Callable[[Request], Route] | None = None  # computes the answer per request


@dataclass
class Request:
    method: str
    host: str
    path: str
    headers: dict[str, str]
    query: str = ""


class Site:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[Request] = []
        self.base = ""  # filled in by serve()
        self._lock = threading.Lock()

    def add(self, path: str, body: str | bytes = b"", **kw: object) -> Site:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.routes[path] = Route(body=data, **kw)  # type: ignore[arg-type]
        return self

    def add_static(self, folder: Path, deployed: str = "https://acme.example") -> Site:
        """Serve a built site's files as a static host does: `a/index.html` at `/a/`, `/a` and
        `/a/index.html`, `a.html` at `/a.html` and `/a`. Sitemaps name the host the site was
        built for (`deployed`); they are served naming this server instead."""
        for file in sorted(folder.rglob("*")):
            if not file.is_file():
                continue
            rel = file.relative_to(folder).as_posix()
            kind = "application/xml" if rel.endswith(".xml") else "text/html; charset=utf-8"
            data = file.read_bytes()
            if rel.endswith("index.html"):
                home = "/" + rel[: -len("index.html")]
                paths = [home, "/" + rel] + ([home.rstrip("/")] if home != "/" else [])
            elif rel.endswith(".html"):
                paths = ["/" + rel, "/" + rel[: -len(".html")]]
            else:
                paths = ["/" + rel]
            for path in paths:
                if kind == "application/xml":
                    self.routes[path] = Route(handler=lambda _r, d=data: Route(
                        d.replace(deployed.encode(), self.base.encode()), content_type="application/xml"))
                else:
                    self.routes[path] = Route(data, content_type=kind)
        return self

    def paths(self, host: str | None = None) -> list[str]:
        with self._lock:
            return [r.path for r in self.requests if host is None or r.host.split(":")[0] == host]

    def requested(self, path: str) -> bool:
        return path in self.paths()

    def log(self, req: Request) -> None:
        with self._lock:
            self.requests.append(req)


def _handler_for(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            path, _, query = self.path.partition("?")
            req = Request("GET", self.headers.get("Host", ""), path, {k: v for k, v in self.headers.items()}, query)
            site.log(req)
            route = site.routes.get(path)
            if route is not None and route.handler is not None:
                route = route.handler(req)
            if route is None:
                route = Route(b"<html><body><h1>Not found</h1></body></html>", status=404)
            if route.cookie and route.cookie not in (self.headers.get("Cookie") or ""):
                route = Route(b"login required", status=401, content_type="text/plain")
            if route.delay:
                time.sleep(route.delay)
            try:
                self.send_response(route.status)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(route.body)))
                for k, v in route.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                if not route.trickle:
                    self.wfile.write(route.body)
                for i in range(len(route.body) if route.trickle else 0):
                    self.wfile.write(route.body[i:i + 1])
                    self.wfile.flush()
                    time.sleep(route.trickle)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


@contextmanager
def serve(site: Site) -> Iterator[str]:
    """Run `site` on 127.0.0.1:<free port>; yields the base URL `http://127.0.0.1:PORT`."""
    server = QuietHTTPServer(("127.0.0.1", 0), _handler_for(site))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    site.base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield site.base
    finally:
        server.shutdown()
        server.server_close()


def other_host(base: str) -> str:
    """The same server under another hostname: a different domain for cookies and origins."""
    return base.replace("127.0.0.1", "localhost")
