"""Builds for real a sample of 40 catalogue definitions (issue 28), the way the registry's CI
builds them: `context-registry build REGISTRY/NAME VERSION` against the shipped catalogue,
repositories served from `fetch` snapshots (bench/coverage.py's environment).

    .venv/bin/python bench/coverage_sample.py [--only NAME,...] [--out bench/results/coverage_sample.json]

The sample is spread over both registries, generated rows (`registry/catalogue.tsv`) and
hand-written entries, and every kind of source: within each (registry, origin, source kind)
class the definitions are taken in the order of the SHA-1 of their key (reproducible, not
chosen by hand), as many as the class's share. A definition whose repository snapshot could not
be brought here (over fetch's 0.5 GB) is replaced by the next one of its class; `REPLACED` says
which. Versions are pinned: for a git source the newest release whose tag the snapshot holds
(snapshots are older than the package index), else the index's newest release, `latest` for an
unversioned definition.

Each row: the definition, its origin, the release, whether it built, pages and sections, the
class of what it got (`docs`; `api`: README plus the API reference from the released code;
`readme`), where the docs came from (the package meta: step, source, docs_version), and the
last line of a failure.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from coverage import docs_class, environment  # noqa: E402

# (definition, release, origin: "generated" from the table or "hand"-written)
SAMPLE = [
    # PyPI, generated: git at the release tag (8), the sdist (2), a docs repository (1)
    ("pip/pydantic-ai-slim", "2.33.0", "generated"), ("pip/rpds-py", "2026.6.3", "generated"),
    ("pip/hatchling", "1.32.0", "generated"), ("pip/pyasn1", "0.6.3", "generated"),
    ("pip/rsa", "4.9", "generated"), ("pip/wrapt", "2.3.0", "generated"),
    ("pip/sortedcontainers", "2.4.0", "generated"), ("pip/authlib", "1.6.0", "generated"),
    ("pip/ruamel-yaml", "0.19.1", "generated"), ("pip/psycopg2-binary", "2.9.13", "generated"),
    ("pip/pre-commit", "latest", "generated"),
    # PyPI, hand-written: git at the release tag (4), the sdist (5)
    ("pip/pytest-asyncio", "1.4.0", "hand"), ("pip/filelock", "3.32.3", "hand"),
    ("pip/python-dateutil", "2.9.0.post0", "hand"), ("pip/markupsafe", "3.0.2", "hand"),
    ("pip/jsonschema", "4.26.0", "hand"), ("pip/pygments", "2.21.0", "hand"),
    ("pip/setuptools", "84.2.1", "hand"), ("pip/anyio", "4.16.0", "hand"), ("pip/celery", "5.7.0", "hand"),
    # npm, generated: git at the release tag (7), the tarball (2), a docs repository (3)
    ("npm/tailwind-merge", "3.6.0", "generated"), ("npm/tsx", "4.23.12", "generated"),
    ("npm/mermaid", "11.14.0", "generated"), ("npm/@vueuse/core", "14.4.0", "generated"),
    ("npm/superstruct", "2.0.2", "generated"), ("npm/webdriverio", "9.31.2", "generated"),
    ("npm/d3", "7.9.0", "generated"), ("npm/openai", "7.60.0", "generated"),
    ("npm/firebase", "13.2.0", "generated"), ("npm/parcel", "latest", "generated"),
    ("npm/jquery", "4.1.0", "generated"), ("npm/@nestjs/platform-express", "latest", "generated"),
    # npm, hand-written: git at the release tag (3), the tarball (3), a docs repository (2)
    ("npm/immer", "11.1.18", "hand"), ("npm/vitest", "4.1.11", "hand"), ("npm/@sveltejs/kit", "2.70.2", "hand"),
    ("npm/class-validator", "0.15.1", "hand"), ("npm/uuid", "14.0.3", "hand"), ("npm/yup", "1.7.1", "hand"),
    ("npm/sass", "latest", "hand"), ("npm/webpack", "latest", "hand"),
]
REPLACED = {  # drawn first, replaced by the next of their class: the snapshot could not be had
    "npm/@sentry/browser": "getsentry/sentry-docs is 792 MB (fetch brings at most 524 MB)",
    "npm/bootstrap": "twbs/bootstrap is 596 MB",
}
LIMIT_S = 420


def one(spec: str, version: str, origin: str, work: Path, env: dict[str, str]) -> dict[str, Any]:
    start = time.perf_counter()
    out = work / "out"
    cmd = [str(ROOT / ".venv" / "bin" / "context-registry"), "build", spec,
           *([] if version == "latest" else [version]), "--out", str(out), "--no-embed"]
    row: dict[str, Any] = {"definition": spec, "origin": origin, "version": version}
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=LIMIT_S)
        text, ok = proc.stdout + proc.stderr, proc.returncode == 0
    except subprocess.TimeoutExpired:
        text, ok = f"over {LIMIT_S}s", False
    row["built"] = ok
    if ok:
        from context_cli.package.identity import check_identity

        registry, name = spec.split("/", 1)
        db = out / check_identity(registry, name, version).filename
        row.update(package(db))
        db.unlink()
    else:
        row["error"] = (text.strip().splitlines() or ["?"])[-1][:300]
    row["seconds"] = round(time.perf_counter() - start, 1)
    return row


def package(db: Path) -> dict[str, Any]:
    """Pages, sections, the class of what was built and where it came from, from its meta."""
    with closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as con:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        pages = con.execute("SELECT count(DISTINCT doc_path) FROM chunks").fetchone()[0]
        sections = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
        try:
            symbols = con.execute("SELECT count(*) FROM symbols").fetchone()[0]
        except sqlite3.Error:
            symbols = 0
    step = meta.get("docs_source") or meta.get("source_type")
    return {"pages": pages, "sections": sections, "symbols": symbols, "docs": docs_class(step == "readme", symbols),
            "from": {k: meta[k] for k in ("docs_source", "source_type", "source_url", "docs_version") if meta.get(k)}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="comma-separated definitions; their rows replace those already in --out")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "coverage_sample.json")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="coverage-sample-"))
    env = environment(work)
    env.pop("CONTEXT_DEFINITIONS")  # the shipped catalogue, as an installed wheel reads it
    only = set(args.only.split(",")) if args.only else None
    rows = []
    for spec, version, origin in SAMPLE:
        if only and spec not in only:
            continue
        row = one(spec, version, origin, work, env)
        rows.append(row)
        print(f"{spec}@{version} ({origin}): {'built' if row['built'] else 'FAILED'} {row.get('docs', '')} "
              f"{row.get('pages')} pages {row['seconds']}s {row.get('from') or row.get('error')}", flush=True)
    if only and args.out.exists():
        rows = [r for r in json.loads(args.out.read_text()) if r["definition"] not in only] + rows
        order = {s: i for i, (s, _, _) in enumerate(SAMPLE)}
        rows.sort(key=lambda r: order[r["definition"]])
    args.out.write_text(json.dumps(rows, indent=1) + "\n")
    built = [r for r in rows if r["built"]]
    kinds = {k: sum(r.get("docs") == k for r in built) for k in ("docs", "api", "readme")}
    print(f"{len(built)}/{len(rows)} built: docs {kinds['docs']}, api {kinds['api']}, readme {kinds['readme']}")


if __name__ == "__main__":
    main()
