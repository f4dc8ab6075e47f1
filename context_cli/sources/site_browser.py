"""Pages that only render with JavaScript: the DOM a headless Chromium builds, when one is installed.

Some docs sites send an empty shell (`<div id="root"></div>`) or a bot challenge and write the
article with JavaScript. For those pages only, the installed Debian `chromium` (never one we
download) loads the page with a fresh profile, no background traffic, and prints the DOM
(`--dump-dom`), which is then parsed like any page. One browser at a time, each bounded by a
wall-clock limit and killed with its process group when it overruns.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading

from ..environment import BROWSER

CANDIDATES = ("chromium", "chromium-browser", "/usr/bin/chromium", "/usr/lib/chromium/chromium")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--mute-audio", "--hide-scrollbars", "--virtual-time-budget=5000")
RENDER_SECONDS = 30.0
MAX_DOM = 10 * 1024 * 1024
_ONE_AT_A_TIME = threading.Semaphore(1)
_HEADING = re.compile(r"<h1[\s>]", re.I)
# The element a single-page app mounts itself in, still empty: the page is not written yet.
_EMPTY_MOUNT = re.compile(r"<div\s+id=[\"']?(?:root|app|__next|__nuxt|___gatsby|svelte)[\"']?\s*>\s*</div>", re.I)
_CHALLENGE = re.compile(
    r"just a moment\.\.\.|checking your browser|cf-challenge|challenge-platform|enable javascript|"
    r"javascript is (?:required|disabled)|please turn javascript on|you need to enable javascript",
    re.I,
)


def find_browser() -> str | None:
    """The installed Chromium, or None. `CONTEXT_BROWSER` names another binary (or `none`)."""
    env = (BROWSER.value() or "").strip()
    if env:
        return None if env.lower() == "none" else shutil.which(env)
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def looks_unrendered(html: str, text_chars: int) -> bool:
    """An empty shell, a challenge page, or boilerplate only: worth rendering. A short page
    with a heading of its own is a short page (every generator's home and install pages are),
    unless the app it belongs to has not mounted yet."""
    if text_chars == 0 or (bool(_CHALLENGE.search(html[:20000])) and text_chars < 2000):
        return True
    return text_chars < 200 and "<script" in html.lower() and (not _HEADING.search(html) or bool(_EMPTY_MOUNT.search(html)))


def render(url: str, browser: str, timeout: float = RENDER_SECONDS) -> str | None:
    """The page's DOM after its scripts ran, or None when the browser failed or ran out of time."""
    with _ONE_AT_A_TIME, tempfile.TemporaryDirectory(prefix="context-browser-") as profile:
        cmd = [browser, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url]
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError:
            return None
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            return None
        finally:
            if proc.poll() is None:
                _kill(proc)
        if proc.returncode != 0 or not out.strip():
            return None
        return out[:MAX_DOM].decode("utf-8", "replace")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
