"""Build the artefact-sourced catalogue and check each package with one spot query.

For every `pypi`/`npm` entry of packages.yaml: discover its newest release, fetch the sdist or
tarball (downloads cached under bench/out/downloads/), build it, and ask one question whose
answer we know (SPOT below: the query and a piece of the section title or page path the
top results must contain). Prints per package: release, sections, package size, fetch and
build time, and the rank of the expected section among the top 5 (`-` when missed).

    python bench/catalogue.py --no-embed          # lexical packages (fast)
    python bench/catalogue.py                      # with embeddings (hybrid search)
    python bench/catalogue.py --only flask --only npm/zod --jobs 2

Results also go to bench/out/catalogue-{lexical,hybrid}.json. Needs PyPI and npm.
Git-sourced entries are left out: they need GitHub (see docs/registry.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
TOP = 5  # a spot query passes when the expected section is among the first TOP results
SPOT_RANK = 3  # ... and counts as a clean pass within the first SPOT_RANK

# registry/name -> (query, a piece of the expected section's title path or page path).
SPOT: dict[str, tuple[str, str]] = {
    "pip/flask": ("split an application into modules with blueprints", "Blueprints"),
    "pip/click": ("prompt the user for a password without echoing it", "prompt"),
    "pip/jinja2": ("template inheritance with extends and blocks", "Template Inheritance"),
    "pip/werkzeug": ("match URLs to endpoints with a rule map", "routing"),
    "pip/itsdangerous": ("signature that expires after a maximum age", "timestamp"),
    "pip/flask-sqlalchemy": ("set the database URI in the app config", "config"),
    "pip/wtforms": ("write a custom validator for a form field", "validators"),
    "pip/sqlalchemy": ("eager load a collection with selectinload", "Select IN"),
    "pip/alembic": ("autogenerate a migration from model changes", "autogenerat"),
    "pip/django": ("use cached sessions as the session engine", "sessions"),
    "pip/pyramid": ("register a view with the view_config decorator", "View Configuration"),
    "pip/falcon": ("enable CORS for cross-origin requests", "CORS"),
    "pip/starlette": ("serve static files from a directory", "StaticFiles"),
    "pip/tornado": ("native coroutines with async def", "coroutine"),
    "pip/aiohttp": ("set a timeout for client requests", "timeout"),
    "pip/gunicorn": ("how many worker processes should I run", "Worker Processes"),
    "pip/urllib3": ("retry failed requests with backoff", "retr"),
    "pip/scrapy": ("follow links to the next page in a spider", "following links"),
    "pip/celery": ("run periodic tasks with celery beat", "Periodic Tasks"),
    "pip/apscheduler": ("schedule a job with a cron expression", "cron"),
    "pip/trio": ("cancel an operation after a timeout with move_on_after", "cancel"),
    "pip/anyio": ("start tasks in a task group", "managing tasks"),
    "pip/attrs": ("validate attribute values when an instance is created", "validator"),
    "pip/cattrs": ("structure a dictionary into a class instance", "structur"),
    "pip/marshmallow": ("nest a schema inside another schema", "nest"),
    "pip/jsonschema": ("iterate over all validation errors of an instance", "error"),
    "pip/structlog": ("render log entries as JSON", "render"),
    "pip/peewee": ("foreign key relationship between two models", "foreign"),
    "pip/pytest": ("parametrize a test function with several inputs", "parametriz"),
    "pip/coverage": ("measure branch coverage", "branch"),
    "pip/mypy": ("ignore missing imports of a library without type hints", "missing imports"),
    "pip/black": ("set the line length in pyproject.toml", "Configuration via a file"),
    "pip/sphinx": ("cross-reference a Python function", "cross-referenc"),
    "pip/docutils": ("reStructuredText grid table syntax", "Grid Tables"),
    "pip/pygments": ("write a lexer for a new language", "lexer"),
    "pip/babel": ("format a date for a given locale", "Date and Time"),
    "pip/pip": ("install packages listed in a requirements file", "requirements"),
    "pip/setuptools": ("declare console script entry points", "entry point"),
    "pip/packaging": ("compare two version numbers", "Version Handling"),
    "pip/cryptography": ("symmetric encryption with Fernet", "fernet"),
    "pip/pillow": ("create a thumbnail of an image", "thumbnail"),
    "pip/numpy": ("broadcasting rules for arrays of different shapes", "broadcasting"),
    "npm/fastify": ("register a plugin and its encapsulation", "plugin"),
    "npm/undici": ("a connection pool to one origin", "pool"),
    "npm/pino": ("redact sensitive fields from log lines", "redact"),
    "npm/date-fns": ("work with time zones", "time zone"),
    "npm/express": ("generate an application skeleton with the express generator",
                    "Quick Start"),
    "npm/express-session": ("set the session cookie max age", "maxAge"),
    "npm/multer": ("limit the size of uploaded files", "limits"),
    "npm/helmet": ("configure the Content-Security-Policy directives", "HTTP header reference"),
    "npm/koa": ("write middleware that runs before and after the response", "middleware"),
    "npm/axios": ("cancel a request with an AbortController", "cancel"),
    "npm/node-fetch": ("post a JSON body", "Common Usage"),
    "npm/ky": ("retry failed requests", "retry"),
    "npm/ws": ("broadcast a message to all connected clients", "broadcast"),
    "npm/socket.io": ("install the socket.io server", "install"),
    "npm/ioredis": ("send many commands at once with a pipeline", "pipelin"),
    "npm/commander": ("define subcommands", "commands"),
    "npm/chalk": ("set the color support level", "API"),
    "npm/debug": ("which environment variables change the output", "Environment Variables"),
    "npm/winston": ("log to a file with a transport", "transport"),
    "npm/dotenv": ("load the env file from a custom path", "path"),
    "npm/glob": ("ignore node_modules while matching", "Options"),
    "npm/semver": ("check whether a version satisfies a range", "range"),
    "npm/uuid": ("generate a random version 4 UUID", "v4"),
    "npm/jsonwebtoken": ("verify a token and check that it has not expired", "verify"),
    "npm/dayjs": ("format a date as a string", "Getting Started"),
    "npm/zod": ("define an object schema and parse data with it", "Basic usage"),
    "npm/yup": ("validate an object against a schema", "object"),
    "npm/class-validator": ("validate nested objects", "nested"),
    "npm/ts-pattern": ("make pattern matching exhaustive", "exhaustive"),
    "npm/zustand": ("persist the store in localStorage", "persist"),
    "npm/jsdom": ("execute the page's scripts", "script"),
    "npm/nock": ("reply to an intercepted request with a JSON body", "repl"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--definitions", default=str(ROOT / "registry" / "packages.yaml"))
    ap.add_argument("--only", action="append", metavar="NAME",
                    help="registry/name or name; repeatable")
    ap.add_argument("--no-embed", action="store_true", help="build without embeddings")
    ap.add_argument("--jobs", type=int, default=2, help="parallel builds (at most 2 here)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("CONTEXT_HOME", tempfile.mkdtemp(prefix="bench-home-"))

    keys = artefact_keys(Path(args.definitions), args.only)
    missing = [k for k in keys if k not in SPOT]
    if missing:
        sys.exit(f"no spot query for: {', '.join(missing)} (add them to SPOT)")
    mode = "lexical" if args.no_embed else "hybrid"
    jobs = max(1, min(args.jobs, 2))
    print(f"{len(keys)} artefact-sourced entries, {mode}, {jobs} job(s)", flush=True)
    header = (f"{'package':<22} {'version':<10} {'sections':>8} {'size MB':>7} {'fetch s':>7} "
              f"{'build s':>7} {'spot':>4}  note")
    print(header)
    rows = []
    with ProcessPoolExecutor(jobs) as pool:
        futures = [pool.submit(run_one, args.definitions, key, not args.no_embed) for key in keys]
        for fut in futures:
            row = fut.result()
            rows.append(row)
            print(line(row), flush=True)
    totals(rows)
    OUT.mkdir(parents=True, exist_ok=True)
    dest = OUT / f"catalogue-{mode}.json"
    dest.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"results: {dest.relative_to(ROOT)}")


def artefact_keys(path: Path, only: list[str] | None) -> list[str]:
    from registry.definitions import ARTEFACT_TYPES, load_definitions

    keys = []
    for d in load_definitions(path):
        kinds = {r.source.type for r in d.versions}
        if not d.versioned or not kinds <= set(ARTEFACT_TYPES):
            continue
        if only and d.key not in only and d.name not in only:
            continue
        keys.append(d.key)
    return keys


def run_one(definitions: str, key: str, embed: bool) -> dict:
    """Build one entry at its newest release and run its spot query; never raises."""
    from registry.build import build_fetched, fetch_for, releases
    from registry.definitions import find_definition, load_definitions

    cache_downloads()
    row: dict = {"package": key, "version": None, "error": None}
    try:
        definition = find_definition(load_definitions(definitions), key)
        version = releases(definition, latest=1)[0]
        row["version"] = version
        t0 = time.perf_counter()
        fetched, source = fetch_for(definition, version)
        row["fetch_s"] = round(time.perf_counter() - t0, 2)
        out = OUT / "catalogue" / ("hybrid" if embed else "lexical")
        try:
            t1 = time.perf_counter()
            result = build_fetched(definition, version, fetched, source, out, embed=embed)
            row["build_s"] = round(time.perf_counter() - t1, 2)
        finally:
            fetched.cleanup()
        row.update(pages=result.pages, sections=result.chunks, tokens=result.tokens,
                   skipped=result.skipped, size=result.path.stat().st_size,
                   docs=next((n for n in result.notes if n.startswith(("docs from", "no docs"))),
                             ""))
        row.update(spot(result, *SPOT[key]))
    except Exception as e:  # noqa: BLE001 - one failure is a row, not the end of the run
        row["error"] = f"{type(e).__name__}: {e}"
    return row


def spot(result, query: str, expected: str) -> dict:
    """Search the package for `query`; the rank of the first result naming `expected`."""
    from context_cli.package.reader import read_meta
    from context_cli.search.engine import SearchOptions, search
    from context_cli.store.store import Installed

    installed = Installed(id=result.id, path=result.path, meta=read_meta(result.path))
    answer = search(query, [installed], SearchOptions(limit=TOP, budget=4000))
    want = expected.lower()
    rank = next((i for i, r in enumerate(answer["results"], 1)
                 if want in f"{r['title']} {r['source']}".lower()), None)
    top = answer["results"][0] if answer["results"] else None
    return {"query": query, "expected": expected, "rank": rank, "verdict": answer["verdict"],
            "top": f"{top['title']} ({top['source']})" if top else None}


def cache_downloads() -> None:
    """Keep every downloaded sdist/tarball under bench/out/downloads, keyed by URL.

    Bench only: wraps the artefact fetcher's download step. The checksum is still computed
    over the bytes handed on, and the fetcher still compares it with the registry's digest.
    """
    from context_cli.sources import artefact

    if getattr(artefact._download, "cached", False):
        return
    original = artefact._download
    cache = OUT / "downloads"

    def download(url, dest, label, max_bytes, algo):
        cache.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(url.encode()).hexdigest()[:16] + "-" + url.rsplit("/", 1)[-1][:80]
        hit = cache / name
        if not hit.exists():
            original(url, dest, label, max_bytes, algo)
            tmp = hit.with_suffix(".part")
            shutil.copyfile(dest, tmp)
            os.replace(tmp, hit)
        shutil.copyfile(hit, dest)
        digest = hashlib.new(algo)
        with open(dest, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest

    download.cached = True  # type: ignore[attr-defined]
    artefact._download = download


def line(row: dict) -> str:
    if row.get("error"):
        return f"{row['package']:<22} {row['version'] or '-':<10} FAILED {row['error']}"
    rank = row.get("rank")
    mark = str(rank) if rank else "-"
    note = "" if rank and rank <= SPOT_RANK else f"top: {row.get('top')}"
    return (f"{row['package']:<22} {row['version']:<10} {row['sections']:>8} "
            f"{row['size'] / 1e6:>7.2f} {row['fetch_s']:>7.1f} {row['build_s']:>7.1f} "
            f"{mark:>4}  {note}")


def totals(rows: list[dict]) -> None:
    ok = [r for r in rows if not r.get("error")]
    hits = [r for r in ok if r.get("rank") and r["rank"] <= SPOT_RANK]
    first = [r for r in ok if r.get("rank") == 1]
    print(f"\nbuilt {len(ok)}/{len(rows)}; spot query in top {SPOT_RANK}: {len(hits)}/{len(ok)}, "
          f"first: {len(first)}/{len(ok)}; sections {sum(r['sections'] for r in ok)}, "
          f"size {sum(r['size'] for r in ok) / 1e6:.1f} MB, "
          f"build {sum(r['build_s'] for r in ok):.0f} s, fetch {sum(r['fetch_s'] for r in ok):.0f} s")


if __name__ == "__main__":
    main()
