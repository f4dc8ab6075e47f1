"""The browsable HTML page: a search form and a table of packages, no JavaScript.

Everything shown comes from uploaded files, so every value is escaped and every link
segment percent-encoded; a strict Content-Security-Policy backs that up.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from .storage import Record

CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'"

STYLE = """
body{font-family:system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}form{margin:1rem 0}input[type=search]{width:60%;padding:.4rem}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.35rem .5rem;
border-bottom:1px solid #ddd;vertical-align:top}.muted{color:#777;font-size:.85rem}
code{font-size:.85rem}
"""


def download_url(r: Record) -> str:
    parts = (r.registry, r.name, r.version)
    return "/packages/" + "/".join(quote(p, safe="") for p in parts) + "/download"


def render_index(groups: list[list[Record]], query: str, total: int) -> str:
    """The whole page: `groups` are packages (each a list of versions, newest first)."""
    q = escape(query, quote=True)
    if query:
        heading = f"{len(groups)} package(s) matching <q>{escape(query)}</q>"
    else:
        heading = f"{len(groups)} package(s), {total} version(s)"
    rows = "\n".join(_row(g) for g in groups) or '<tr><td colspan="4">Nothing here yet.</td></tr>'
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>context registry</title><style>{STYLE}</style></head>
<body>
<h1>context registry</h1>
<form method="get" action="/">
<input type="search" name="q" value="{q}" placeholder="Search names and descriptions" aria-label="Search">
<button type="submit">Search</button>
</form>
<p class="muted">{heading}. Install with <code>context install REGISTRY/NAME[@VERSION]</code>.
JSON: <code>/search?registry=R&amp;name=N</code>, <code>/api/search?q=…</code>.</p>
<table>
<thead><tr><th>Package</th><th>Latest</th><th>Description</th><th>Other versions</th></tr></thead>
<tbody>
{rows}
</tbody></table>
</body></html>
"""


def _row(versions: list[Record]) -> str:
    top = versions[0]
    others = " ".join(
        f'<a href="{escape(download_url(v), quote=True)}">{escape(v.version)}</a>' for v in versions[1:12]
    )
    if len(versions) > 12:
        others += f' <span class="muted">+{len(versions) - 12} more</span>'
    return (
        "<tr>"
        f'<td><span class="muted">{escape(top.registry)}/</span>{escape(top.name)}</td>'
        f'<td><a href="{escape(download_url(top), quote=True)}">{escape(top.version)}</a>'
        f' <span class="muted">{_size(top.size)}</span></td>'
        f"<td>{escape(top.description)}</td>"
        f"<td>{others}</td>"
        "</tr>"
    )


def _size(n: int) -> str:
    """Decimal units, as `context list` shows them."""
    if n < 1000:
        return f"{n} B"
    for unit, scale in (("KB", 1e3), ("MB", 1e6), ("GB", 1e9)):
        if n < scale * 1000 or unit == "GB":
            return f"{n / scale:.1f} {unit}"
    return ""
