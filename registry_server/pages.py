"""The browsable HTML pages: the package list at `/` and one page per package at `/docs/…`.

No JavaScript: forms are plain GET forms, so every page (a search included) is a URL.
Everything shown comes from uploaded files, so every value is escaped and every link
segment percent-encoded; a strict Content-Security-Policy backs that up. Links taken from
packages are shown as links only when they are http(s).
"""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from context_cli.package.identity import InvalidIdentity, check_identity, check_name, check_registry
from context_cli.search.answer import Answer, Hit, Page
from context_cli.search.options import DEFAULT_BUDGET
from context_cli.surfaces.render import missing_terms, section_title, to_markdown

from . import page_api, page_markdown, page_search
from .page_search import MAX_BUDGET, SearchFailed, clean_query
from .paths import raw_segments
from .storage import Record

CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'"
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "Cache-Control": "no-cache"}
MAX_OTHER_VERSIONS = 12

STYLE = """
:root{--fg:#1b1f24;--muted:#57606a;--bg:#fff;--panel:#f6f8fa;--line:#d0d7de;--link:#0a53be;
--accent:#0a53be;--on-accent:#fff;--focus:#bf3989;--ok:#116329;--warn:#7d4e00;--bad:#a40e26}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9da7b3;--bg:#0d1117;--panel:#161b22;
--line:#30363d;--link:#79c0ff;--accent:#79c0ff;--on-accent:#0d1117;--focus:#ff9bce;--ok:#56d364;
--warn:#e3b341;--bad:#ff7b72}}
*{box-sizing:border-box}
body{margin:0;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
a{color:var(--link)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:var(--bg);padding:.5rem 1rem}
.skip:focus{left:.5rem}
.wrap{max-width:72rem;margin:0 auto;padding:0 1rem}
header.site{border-bottom:1px solid var(--line);background:var(--panel)}
header.site .wrap{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.5rem;padding:.75rem 1rem}
header.site .brand{font-weight:700;font-size:1.1rem;text-decoration:none;color:var(--fg)}
main.wrap{padding:.5rem 1rem 2.5rem}
h1{font-size:1.6rem;margin:1rem 0 .25rem;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:2rem 0 .5rem}
h3{font-size:1.05rem;margin:0 0 .25rem;overflow-wrap:anywhere}
.lede{margin:.25rem 0 1rem;max-width:48rem;overflow-wrap:anywhere}
.muted{color:var(--muted)}
form.search{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:.5rem 0 1rem}
form.search .field{display:flex;flex-direction:column;flex:1 1 16rem}
form.search .small{flex:0 1 8rem}
label{font-weight:600;font-size:.9rem}
input{font:inherit;padding:.45rem .6rem;border:1px solid var(--muted);border-radius:6px;
background:var(--bg);color:var(--fg);min-width:0}
button{font:inherit;font-weight:600;padding:.45rem 1.1rem;border:1px solid var(--accent);
border-radius:6px;background:var(--accent);color:var(--on-accent);cursor:pointer}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.875rem}
pre{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:.75rem;
white-space:pre-wrap;overflow-wrap:anywhere;margin:.5rem 0}
pre.install{user-select:all;font-size:1rem}
.hash{overflow-wrap:anywhere;font-size:.8rem}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.85rem;color:var(--muted)}
td.desc{overflow-wrap:anywhere}td.pkg{font-weight:600}td.nowrap{white-space:nowrap}
tr.current{background:var(--panel)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;margin:.5rem 0}
dl.facts dt{font-weight:600}dl.facts dd{margin:0;overflow-wrap:anywhere}
.answer-head{padding:.5rem .75rem;border-left:4px solid var(--accent);background:var(--panel)}
article.result{border-top:1px solid var(--line);padding:1rem 0}
article.result h4{margin:1rem 0 .25rem}.content{overflow-wrap:anywhere}
.content h5,.content h6{margin:.75rem 0 .25rem;font-size:1rem}
.where{font-size:.9rem;color:var(--muted);margin:0 0 .25rem;overflow-wrap:anywhere}
.verdict{font-weight:700}
.STRONG{color:var(--ok)}.MODERATE{color:var(--warn)}.WEAK{color:var(--bad)}
.notice{padding:.5rem .75rem;border:1px solid var(--line);border-left:4px solid var(--warn);
background:var(--panel)}
details{margin:1rem 0}summary{cursor:pointer;font-weight:600}
footer{border-top:1px solid var(--line);padding:1rem 0;font-size:.9rem;color:var(--muted)}
@media (max-width:44rem){
 h1{font-size:1.35rem}
 table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 table.stack tr{display:block;border-bottom:1px solid var(--line);padding:.5rem 0}
 table.stack td{display:block;border:0;padding:.1rem 0}
 table.stack td.pkg{font-size:1.1rem}
 table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:var(--muted)}
}
"""


# -- links ----------------------------------------------------------------------------

def _segments(*parts: str) -> str:
    return "/".join(quote(p, safe="") for p in parts)


def download_url(r: Record) -> str:
    return "/packages/" + _segments(r.registry, r.name, r.version) + "/download"


def docs_url(registry: str, name: str, version: str | None = None) -> str:
    parts = (registry, name) if version is None else (registry, name, version)
    return "/docs/" + _segments(*parts)


def _attr(text: str) -> str:
    return escape(text, quote=True)


def _link(url: str, text: str) -> str:
    """A link for http(s) URLs from package data; anything else is shown as plain text."""
    if url.startswith(("https://", "http://")):
        return f'<a href="{_attr(url)}" rel="nofollow noopener">{escape(text)}</a>'
    return escape(text)


# -- the frame every page shares ------------------------------------------------------

def layout(title: str, body: str, *, noindex: bool = False) -> str:
    """One page: skip link, header, main landmark, footer. Search answers are not for crawlers."""
    robots = '<meta name="robots" content="noindex">\n' if noindex else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{robots}<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{escape(title)}</title><style>{STYLE}</style></head>
<body>
<a class="skip" href="#main">Skip to main content</a>
<header class="site"><div class="wrap">
<a class="brand" href="/">context registry</a>
<span class="muted">version-specific docs for coding agents</span>
</div></header>
<main id="main" class="wrap">
{body}
</main>
<footer><div class="wrap">JSON API: <code>/search?registry=R&amp;name=N</code>,
<code>/api/search?q=…</code>, <code>/api/packages/R/N</code>. Install with
<code>context install REGISTRY/NAME[@VERSION]</code>.</div></footer>
</body></html>
"""


def html(page: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(page, status_code=status, headers=HEADERS)


def error_page(status: int, heading: str, message: str) -> HTMLResponse:
    body = (f"<h1>{escape(heading)}</h1>\n<p class=\"lede\">{escape(message)}</p>\n"
            '<p><a href="/">See every package</a></p>')
    return html(layout(f"{heading} · context registry", body), status)


# -- the index ------------------------------------------------------------------------

def render_index(groups: list[list[Record]], query: str, total: int) -> str:
    """The package list: `groups` are packages (each a list of versions, newest first)."""
    if query:
        summary = f"{_count(len(groups), 'package')} matching <q>{escape(query)}</q>"
    else:
        summary = f"{_count(len(groups), 'package')}, {_count(total, 'version')}"
    rows = "\n".join(_index_row(g) for g in groups)
    if not rows:
        rows = '<tr><td colspan="4">Nothing here yet.</td></tr>' if not query else \
            '<tr><td colspan="4">No package matches; try fewer words.</td></tr>'
    body = f"""<h1>Documentation packages</h1>
<p class="lede">Prebuilt, versioned documentation for coding agents. Open a package to see
its versions and search its docs.</p>
<form class="search" method="get" action="/" role="search">
<div class="field"><label for="q">Search packages by name or description</label>
<input id="q" type="search" name="q" value="{_attr(query)}" maxlength="500"></div>
<button type="submit">Search</button>
</form>
<p class="muted" id="count">{summary}.</p>
<table class="stack" aria-describedby="count">
<thead><tr><th scope="col">Package</th><th scope="col">Latest</th><th scope="col">Description</th>
<th scope="col">Other versions</th></tr></thead>
<tbody>
{rows}
</tbody></table>"""
    return layout("context registry", body)


def _index_row(versions: list[Record]) -> str:
    top = versions[0]
    others = " ".join(f'<a href="{_attr(docs_url(v.registry, v.name, v.version))}">{escape(v.version)}</a>'
                      for v in versions[1:MAX_OTHER_VERSIONS])
    if len(versions) > MAX_OTHER_VERSIONS:
        others += f' <span class="muted">+{len(versions) - MAX_OTHER_VERSIONS} more</span>'
    return (
        "<tr>"
        f'<td class="pkg"><a href="{_attr(docs_url(top.registry, top.name))}">'
        f'<span class="muted">{escape(top.registry)}/</span>{escape(top.name)}</a></td>'
        f'<td data-label="Latest" class="nowrap"><a href="{_attr(docs_url(top.registry, top.name, top.version))}">'
        f"{escape(top.version)}</a> "
        f'<span class="muted">{_size(top.size)} · <a href="{_attr(download_url(top))}" '
        f'aria-label="Download {_attr(top.name)} {_attr(top.version)}">download</a></span></td>'
        f'<td data-label="Description" class="desc">{escape(top.description)}</td>'
        f'<td data-label="Other versions">{others or "—"}</td>'
        "</tr>"
    )


# -- a package's page -----------------------------------------------------------------

async def docs_page(request: Request) -> Response:
    """`/docs/R/N` (newest version) and `/docs/R/N/V`, with `?q=` searching that version."""

    try:
        segments = raw_segments(request, "/docs/")
    except HTTPException as e:
        return error_page(e.status_code, "Bad address", str(e.detail))
    storage = request.app.state.storage
    found = await run_in_threadpool(_resolve, storage, segments)
    if found is None:
        return error_page(404, "Package not found",
                          "No package or version of that name is published here.")
    versions, current = found
    query = clean_query(request.query_params.get("q", ""))
    budget, budget_note = _budget(request.query_params.get("budget", ""))
    answer: Answer | None = None
    problem = budget_note
    local = getattr(storage, "local_copy", None)
    locate = (lambda: local(current)) if local else (lambda: storage.blob_path(current.sha256))
    if query:
        try:
            answer = await page_search.run_search(current.sha256, locate, current.id, query, budget)
        except SearchFailed as e:
            problem = str(e)
    api = await page_api.api_section(current.sha256, locate)
    return html(render_package(versions, current, query, budget, answer, problem, api))


def _resolve(storage: Any, segments: list[str]) -> tuple[list[Record], Record] | None:
    """(every version newest first, the one shown) for `R/N` or `R/N/V`, or None.

    Links percent-encode a scoped name as one segment; a literal `@scope/name` also works.
    """
    if segments and not segments[-1]:
        segments = segments[:-1]  # a trailing slash
    if len(segments) < 2 or not all(segments):
        return None
    registry = segments[0]
    tries: list[tuple[str, str | None]] = [("/".join(segments[1:]), None)]
    if len(segments) >= 3:
        tries.insert(0, ("/".join(segments[1:-1]), segments[-1]))
    for name, version in tries:
        try:
            check_registry(registry)
            check_name(name)
            if version is not None:
                check_identity(registry, name, version)
        except InvalidIdentity:
            continue
        versions: list[Record] = storage.versions(registry, name)
        if not versions:
            continue
        if version is None:
            return versions, versions[0]
        current = next((v for v in versions if v.version == version), None)
        if current is not None:
            return versions, current
    return None


def _budget(raw: str) -> tuple[int, str | None]:
    if not raw:
        return DEFAULT_BUDGET, None
    if raw.isdigit() and 1 <= int(raw) <= MAX_BUDGET:
        return int(raw), None
    return DEFAULT_BUDGET, f"The token budget must be a whole number from 1 to {MAX_BUDGET}; used {DEFAULT_BUDGET}."


def render_package(versions: list[Record], current: Record, query: str, budget: int,
                   answer: Answer | None, problem: str | None, api: str = "") -> str:
    """The package page: install command, search form and answer, facts, versions, API."""
    here = docs_url(current.registry, current.name, current.version)
    install = f"context install {current.registry}/{current.name}@{current.version}"
    latest = " (latest)" if current is versions[0] else ""
    description = f'<p class="lede">{escape(current.description)}</p>' if current.description else ""
    body = f"""<p class="muted"><a href="/">Packages</a> › {escape(current.registry)}</p>
<h1>{escape(current.name)} <span class="muted">{escape(current.version)}{latest}</span></h1>
{description}
<h2 id="install">Install</h2>
<pre class="install" aria-labelledby="install"><code>{escape(install)}</code></pre>
<p class="muted">Or download the file: <a href="{_attr(download_url(current))}">{escape(current.name)}@{escape(current.version)}.db</a>
({_size(current.size)}).</p>
<h2 id="search">Search these docs</h2>
<form class="search" method="get" action="{_attr(here)}" role="search" aria-labelledby="search">
<div class="field"><label for="q">Question or API name</label>
<input id="q" type="search" name="q" value="{_attr(query)}" maxlength="1000"></div>
<div class="field small"><label for="budget">Token budget</label>
<input id="budget" type="number" name="budget" value="{budget}" min="1" max="{MAX_BUDGET}"></div>
<button type="submit">Search</button>
</form>
{_notice(problem)}{_answer(answer) if answer is not None else ""}
<h2 id="facts">This version</h2>
{_facts(current)}
<h2 id="versions">Versions</h2>
{_versions_table(versions, current)}
{api}"""
    return layout(f"{current.name} {current.version} · context registry", body, noindex=bool(query))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _notice(problem: str | None) -> str:
    return f'<p class="notice" role="status">{escape(problem)}</p>\n' if problem else ""


def _answer(found: Answer) -> str:
    """The context pack as `context search` shows it: a head line, then each page with its
    sections in reading order, their Markdown rendered (page_markdown keeps it safe)."""
    answer = found.to_dict()
    saved = round(float(answer.get("savedPercent", 0)) * 100)
    verdict = str(answer["verdict"])
    parts = [f'<section aria-labelledby="results"><h2 id="results">Results for <q>{escape(answer["query"][:200])}</q></h2>',
             f'<p class="answer-head">verdict <span class="verdict {_attr(verdict)}">{escape(verdict)}</span>'
             f' · {int(answer["tokens"])} tokens of {int(answer["budget"])}'
             f" · {saved}% smaller than the pages it draws from</p>"]
    parts += [f'<p class="notice">{escape(str(n))}</p>' for n in answer.get("notes", [])]
    parts += [f'<p class="muted">not in {escape(library)}: {escape(", ".join(words))}</p>'
              for library, words in missing_terms(found).items()]
    if not found.results:
        parts.append("<p>No matching sections. Try other words.</p>")
    for page, hits in _by_page(found):
        first = hits[0]
        url = (page.url if page else None) or first.url
        where = _link(url, url) if url else escape(first.source)
        title = page.title if page else first.title.split(" > ", 1)[0]
        parts.append(f'<article class="result"><h3>{page.rank if page else first.rank}. {escape(title)}</h3>'
                     f'<p class="where">{escape(first.library)} · {where}</p>')
        for hit in hits:
            parts.append(f'<h4>{escape(section_title(hit))}</h4><p class="where"><span class="verdict '
                         f'{_attr(hit.verdict)}">{escape(hit.verdict)}</span> · {int(hit.tokens)} tokens</p>'
                         f'<div class="content">{page_markdown.render(hit.content, below=4)}</div>')
        parts.append("</article>")
    parts.append("<details><summary>The same answer as Markdown (what <code>context search</code> prints)"
                 f"</summary><pre>{escape(to_markdown(found))}</pre></details></section>")
    return "\n".join(parts) + "\n"


def _by_page(found: Answer) -> list[tuple[Page | None, list[Hit]]]:
    """The answer's hits grouped by their page, in the answer's order (pages are adjacent)."""
    groups: list[tuple[Page | None, list[Hit]]] = []
    key: tuple[str, str] | None = None
    for hit in found.results:
        if (hit.library, hit.source) != key:
            key = (hit.library, hit.source)
            groups.append((hit.page, []))
        groups[-1][1].append(hit)
    return groups


def _facts(r: Record) -> str:
    rows = [("Version", escape(r.version)), ("Published", escape(r.published_at)),
            ("Built", escape(_field(r, "built_at") or "unknown")),
            ("Size", f"{_size(r.size)} ({r.size:,} bytes)"),
            ("SHA-256", f'<code class="hash">{escape(r.sha256)}</code>'),
            ("Sections", str(_section_count(r))),
            ("Embedding model", escape(_field(r, "embedding_model") or "none (searched lexically)")),
            ("Source", _source(r))]
    items = "\n".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<dl class="facts">\n{items}\n</dl>'


def _versions_table(versions: list[Record], current: Record) -> str:
    rows = []
    for v in versions:
        mark = ' class="current" aria-current="page"' if v is current else ""
        rows.append(
            f"<tr{mark}>"
            f'<td data-label="Version" class="nowrap"><a href="{_attr(docs_url(v.registry, v.name, v.version))}">'
            f"{escape(v.version)}</a></td>"
            f'<td data-label="Built" class="nowrap">{escape(_field(v, "built_at")[:10] or "—")}</td>'
            f'<td data-label="Size" class="nowrap">{_size(v.size)}</td>'
            f'<td data-label="Sections" class="nowrap">{_section_count(v)}</td>'
            f'<td data-label="Model">{escape(_field(v, "embedding_model") or "—")}</td>'
            f'<td data-label="Source">{_source(v)}</td>'
            f'<td data-label="SHA-256"><code class="hash">{escape(v.sha256)}</code></td>'
            "</tr>")
    head = "".join(f'<th scope="col">{h}</th>'
                   for h in ("Version", "Built", "Size", "Sections", "Model", "Source", "SHA-256"))
    return (f'<table class="stack"><thead><tr>{head}</tr></thead>\n<tbody>\n'
            + "\n".join(rows) + "\n</tbody></table>")


def _field(r: Record, key: str) -> str:
    """A Record field the storage may add (built_at, source_url, …), else the package's meta."""
    value = getattr(r, key, None)
    if value is None:
        value = getattr(r, "meta", {}).get(key)
    return str(value) if value is not None else ""


def _section_count(r: Record) -> int:
    for key in ("section_count", "chunks"):
        value = getattr(r, key, None)
        if isinstance(value, int):
            return value
    return int(_field(r, "chunk_count") or 0)


def _source(r: Record) -> str:
    url, commit = _field(r, "source_url"), _field(r, "source_commit")
    parts = [_link(url, url)] if url else []
    if commit:
        parts.append(f'<code title="{_attr(commit)}">{escape(commit[:12])}</code>')
    return " @ ".join(parts) or "—"


def _size(n: int) -> str:
    """Decimal units, as `context list` shows them."""
    if n < 1000:
        return f"{n} B"
    for unit, scale in (("KB", 1e3), ("MB", 1e6), ("GB", 1e9)):
        if n < scale * 1000 or unit == "GB":
            return f"{n / scale:.1f} {unit}"
    return ""


def docs_root(request: Request) -> Response:
    """`/docs` on its own: the package list is the index."""
    return RedirectResponse("/", status_code=308)


ROUTES = [Route("/docs", docs_root, methods=["GET"]),
          Route("/docs/{rest:path}", docs_page, methods=["GET"])]
