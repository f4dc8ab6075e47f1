"""The registry pages in a real browser: headless Chromium against a real server process.

Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: JSON
messages separated by NUL bytes on fds 3 and 4), so no WebSocket client is needed. The
search is typed into the form's field, reached with the Tab key, and submitted with Enter,
as a keyboard user would. Screenshots of the index and a package page at desktop and phone
widths are written to a temp folder, or to `$CONTEXT_SCREENSHOTS` (e.g. `docs/img`) when set.

Without Chromium the tests skip; `scripts/ensure-chromium.sh` installs it (as root).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from page_fixtures import HOSTILE, HOSTILE_MD, build_docs_package
from registry_fixtures import AUTH, ServerProcess, make_package, package_url

BROWSER = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="Chromium is not installed; run scripts/ensure-chromium.sh")
DESKTOP = (1280, 900, 1.0, False)
PHONE = (390, 844, 2.0, True)


class Browser:
    """Headless Chromium with one page, driven by DevTools protocol calls over a pipe."""

    def __init__(self, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Above 10 so that placing them at 3 and 4 in the child cannot clobber each other;
        # close_fds stays off so they survive (Python's own fds are not inheritable anyway).
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_r, from_browser_w)]

        def place_pipes() -> None:
            os.dup2(ends[0], 3)
            os.dup2(ends[1], 4)

        assert BROWSER is not None
        self.proc = subprocess.Popen(
            [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={profile}",
             "about:blank"],
            close_fds=False, preexec_fn=place_pipes, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (to_browser_r, from_browser_w, *ends):
            os.close(fd)
        self._next = 0
        self._replies: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._events: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=True)

    def _read(self) -> None:
        buffer = b""
        with open(self._from_browser, "rb", buffering=0) as pipe:
            while chunk := pipe.read(65536):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message and message["id"] in self._replies:
                        self._replies[message["id"]].put(message)
                    else:
                        self._events.put(message)

    def call(self, method: str, params: dict[str, Any] | None = None, *, session: bool = False,
             timeout: float = 30) -> dict[str, Any]:
        self._next += 1
        reply: queue.Queue[dict[str, Any]] = queue.Queue()
        self._replies[self._next] = reply
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        answer = reply.get(timeout=timeout)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return dict(answer.get("result", {}))

    def page(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.call(method, params, session=True)

    def wait_for_load(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            event = self._events.get(timeout=max(0.1, deadline - time.monotonic()))
            if event.get("method") == "Page.loadEventFired":
                return

    def drain(self) -> None:
        while not self._events.empty():
            self._events.get_nowait()

    def open(self, url: str) -> None:
        self.drain()
        result = self.page("Page.navigate", {"url": url})
        assert "errorText" not in result, (url[:100], result)
        self.wait_for_load()

    def js(self, expression: str) -> Any:
        """Evaluate in the page from outside (DevTools is not bound by the page's CSP)."""
        result = self.page("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result["result"].get("value")

    def key(self, key: str, code: int, text: str | None = None) -> None:
        down: dict[str, Any] = {"type": "rawKeyDown" if text is None else "keyDown", "key": key,
                                "code": key, "windowsVirtualKeyCode": code}
        if text is not None:
            down["text"] = text
        self.page("Input.dispatchKeyEvent", down)
        self.page("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": key,
                                             "windowsVirtualKeyCode": code})

    def viewport(self, width: int, height: int, scale: float, mobile: bool) -> None:
        self.page("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile})

    def screenshot(self, path: Path, max_height: int = 0) -> bytes:
        """The viewport, or with `max_height` the whole page up to that many CSS pixels."""
        params: dict[str, Any] = {"format": "png"}
        if max_height:
            size = self.page("Page.getLayoutMetrics")["cssContentSize"]
            params.update(captureBeyondViewport=True, clip={
                "x": 0, "y": 0, "width": size["width"], "height": min(size["height"], max_height), "scale": 1})
        data = base64.b64decode(self.page("Page.captureScreenshot", params)["data"])
        path.write_bytes(data)
        return data

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, queue.Empty, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        os.close(self._to_browser)


CATALOGUE = [  # (registry, name, version, description): lexical packages that fill the index
    ("npm", "zod", "3.22.4", "TypeScript-first schema validation with static type inference"),
    ("npm", "zod", "3.23.8", "TypeScript-first schema validation with static type inference"),
    ("npm", "@trpc/server", "11.0.0", "End-to-end typesafe APIs made easy"),
    ("pip", "requests", "2.32.3", "HTTP for Humans: a simple, yet elegant, HTTP library"),
    ("hex", "phoenix", "1.7.14", "Peace of mind from prototype to production"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """`context-registry-server` on a loopback port: two built versions of mylib and a few others."""
    work = tmp_path_factory.mktemp("browser")
    live = ServerProcess(work / "data").start()
    description = "Streams data from sources to sinks with backpressure, retries and cancellation"
    files = [(("pip", "mylib", v), build_docs_package(work, version=v, embed=e, description=description))
             for v, e in (("1.1.0", False), ("1.2.0", True))]
    files += [((r, n, v), make_package(work / f"{n.replace('/', '_')}-{v}.db", n, v, registry=r, description=d))
              for r, n, v, d in CATALOGUE]
    files.append((("pip", "hostile-md", "1.0.0"), make_package(work / "hostile-md.db", "hostile-md", "1.0.0",
                                                              registry="pip", text=HOSTILE_MD)))
    try:
        for (registry, name, version), path in files:
            r = requests.post(live.url + package_url(registry, name, version), data=path.read_bytes(),
                              headers=AUTH, timeout=30)
            assert r.status_code == 201, r.text
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    b = Browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield b
    finally:
        b.close()


def test_search_through_the_form_with_the_keyboard(server: ServerProcess, browser: Browser) -> None:
    browser.viewport(*DESKTOP)
    browser.open(server.url + "/")
    assert browser.js("document.querySelectorAll('h1').length") == 1
    links = browser.js("[...document.querySelectorAll('tbody a')].map(a => a.getAttribute('href'))")
    assert "/docs/pip/mylib" in links and "/docs/pip/mylib/1.1.0" in links and "/docs/npm/%40trpc%2Fserver" in links
    browser.open(server.url + "/docs/pip/mylib")
    assert browser.js("document.querySelector('h1').textContent").startswith("mylib 1.2.0")
    for _ in range(40):  # Tab through links and fields until the search field has focus
        if browser.js("document.activeElement.id") == "q":
            break
        browser.key("Tab", 9)
    assert browser.js("document.activeElement.id") == "q"
    assert browser.js("getComputedStyle(document.activeElement).outlineStyle") != "none"
    browser.page("Input.insertText", {"text": "how do I cancel a running pipeline"})
    browser.drain()
    browser.key("Enter", 13, "\r")
    browser.wait_for_load()
    assert browser.js("location.pathname + location.search") == \
        "/docs/pip/mylib/1.2.0?q=how+do+I+cancel+a+running+pipeline&budget=2000"
    titles = browser.js("[...document.querySelectorAll('article.result h3')].map(h => h.textContent)")
    assert titles and titles[0].startswith("1. Cancelling a pipeline")
    assert browser.js("document.querySelector('.answer-head').textContent").startswith("verdict ")
    assert browser.js("document.querySelector('#q').value") == "how do I cancel a running pipeline"


def test_hostile_text_stays_text(server: ServerProcess, browser: Browser) -> None:
    browser.open(server.url + "/docs/pip/mylib?q=escape+markup+sinks")
    assert browser.js("document.scripts.length") == 0
    assert HOSTILE in browser.js("document.querySelector('main').textContent")
    # 12,000 characters: uvicorn's HTTP parser (h11) refuses request heads much past 16 KB
    # before the app sees them; the 100 KB query is sent to the app itself in test_registry_pages.
    browser.open(server.url + "/docs/pip/mylib?q=" + "x" * 12_000)
    assert browser.js("document.querySelector('h1').textContent").startswith("mylib")
    assert browser.js("document.querySelector('#q').value.length") == 10_000  # the engine's cap
    assert "No matching sections" in browser.js("document.querySelector('main').textContent")


def test_hostile_markdown_renders_without_live_links_images_or_handlers(server: ServerProcess,
                                                                     browser: Browser) -> None:
    browser.open(server.url + "/docs/pip/hostile-md?q=install+pip")
    found = browser.js("""(() => ({
      scripts: document.scripts.length, images: document.images.length,
      handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes]
                  .some(a => a.name.startsWith('on'))).length,
      hrefs: [...document.querySelectorAll('.content a')].map(a => a.href),
      text: document.querySelector('.content').textContent}))()""")
    assert found["scripts"] == 0 and found["images"] == 0 and found["handlers"] == 0
    assert found["hrefs"] == ["https://example.com/a"]
    assert '<a href="javascript:alert(2)">raw</a>' in found["text"] and "click me" in found["text"]


CONTRAST = """(() => {
  const rgb = c => c.match(/[\\d.]+/g).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92
    : ((v + 0.055) / 1.055) ** 2.4; }).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = el => { for (; el; el = el.parentElement) { const c = rgb(getComputedStyle(el).backgroundColor);
    if (c.length < 4 || c[3] > 0) return c.slice(0, 3); } return [255, 255, 255]; };
  const worst = [];
  for (const el of document.querySelectorAll('body *')) {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) worst.push(el.tagName + '.' + el.className + ' ' + ratio.toFixed(2));
  }
  return worst;
})()"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_contrast_meets_wcag_aa(server: ServerProcess, browser: Browser, scheme: str) -> None:
    browser.viewport(*DESKTOP)
    browser.page("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    try:
        for path in ("/", "/docs/pip/mylib?q=pipeline+timeouts", "/docs/pip/nope"):
            browser.open(server.url + path)
            assert browser.js(CONTRAST) == [], (scheme, path)
    finally:
        browser.page("Emulation.setEmulatedMedia", {"features": []})


def test_pages_fit_a_phone(server: ServerProcess, browser: Browser) -> None:
    browser.viewport(*PHONE)
    for path in ("/", "/docs/pip/mylib/1.2.0?q=pipeline+timeouts"):
        browser.open(server.url + path)
        width = browser.js("document.documentElement.scrollWidth")
        assert width <= PHONE[0], (path, width)


def test_screenshots(server: ServerProcess, browser: Browser, tmp_path: Path) -> None:
    out = Path(os.environ.get("CONTEXT_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    shots = {"registry-index": "/", "registry-package": "/docs/pip/mylib?q=stop+a+running+pipeline+after+a+timeout"}
    for size, metrics in (("desktop", DESKTOP), ("phone", PHONE)):
        browser.viewport(*metrics)
        for name, path in shots.items():
            browser.open(server.url + path)
            data = browser.screenshot(out / f"{name}-{size}.png", 2400 if size == "desktop" else 0)
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
            width = int.from_bytes(data[16:20], "big")
            assert width == int(metrics[0] * metrics[2])
