"""The package page's API listing: the `symbols` table of a package built from a release's
code, by module, each entry with its signature (docs/api-reference.md).

Read once per file (by its SHA-256) off the event loop, within a deadline, and cached as
HTML; a package without the table shows nothing, a damaged one a short note.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from html import escape
from pathlib import Path

log = logging.getLogger("context.registry")

MAX_ENTRIES = 3000  # entries listed on the page; the count of the rest is shown
DEADLINE_S = 10.0
CACHE_SIZE = 64
_cache: OrderedDict[str, str] = OrderedDict()
_lock = threading.Lock()


async def api_section(sha256: str, locate: Callable[[], Path]) -> str:
    """The page's "API" section (empty when the package has no API reference)."""
    with _lock:
        if sha256 in _cache:
            _cache.move_to_end(sha256)
            return _cache[sha256]
    try:
        text = await asyncio.wait_for(asyncio.to_thread(lambda: render_api(locate())), DEADLINE_S)
    except Exception as e:  # noqa: BLE001 - a damaged or slow file: the rest of the page still shows
        log.warning("API listing of %s failed: %r", sha256[:12], e)
        return '<p class="muted">The API reference of this package cannot be shown right now.</p>'
    with _lock:
        _cache[sha256] = text
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return text


def render_api(path: Path) -> str:
    """HTML of the package's entries grouped by module, in the order they were extracted."""
    from context_cli.package.reader import open_package

    with open_package(path) as pkg:
        if not pkg.has_symbols:
            return ""
        rows = [s for s, _ in pkg.symbols()]
    modules: dict[str, list[str]] = {}
    current = ""
    for s in rows[:MAX_ENTRIES]:
        if s.kind == "module":
            current = s.name
            modules.setdefault(current, [])
            continue
        owner = current if s.name.startswith(current + ".") else s.name.rsplit(".", 1)[0]
        deprecated = ' <span class="muted">(deprecated)</span>' if s.deprecated is not None else ""
        shown = s.signature.split("\n")[0] if s.signature else s.name
        modules.setdefault(owner, []).append(f'<li><code>{escape(shown)}</code> <span class="muted">{escape(s.kind)}'
                                             f"</span>{deprecated}</li>")
    more = len(rows) - MAX_ENTRIES
    parts = [f'<h2 id="api">API <span class="muted">({len(rows)} entries, read from the released code)</span></h2>']
    for module, items in modules.items():
        if items:
            parts.append(f"<details><summary><code>{escape(module)}</code> "
                         f'<span class="muted">{len(items)}</span></summary><ul>{"".join(items)}</ul></details>')
    if more > 0:
        parts.append(f'<p class="muted">{more} more entries not listed; use <code>context api NAME</code>.</p>')
    return "\n".join(parts)
