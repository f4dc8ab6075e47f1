"""What a release published as wheels only gets: the three in redash's lockfile (issue 28).

Each is built as a user would (`context add pypi:NAME==VER --no-embed`, a fresh process and
$CONTEXT_HOME, PyPI reached over the network; GitHub and docs sites are not reachable here,
so the ladder's repository and site steps fail as they do in bench/coverage.py), timed, and
its package read back: pages, sections, API symbols, the file it was read from. One question
per package is then asked of it (`search(..., limit=3)`).

    .venv/bin/python bench/wheel_only.py [--out bench/results/wheel_only.json] [--code DIR]

`--code DIR` runs the CLI from another checkout (`git archive REV | tar -x -C DIR`): the
before figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RELEASES = [  # redash's lockfile: wheel-only on PyPI, each with a question its README or API answers
    ("atsd-client", "3.0.5", "insert series samples into ATSD"),
    ("databend-sqlalchemy", "0.2.4", "create a SQLAlchemy engine for Databend"),
    ("simple-salesforce", "0.74.3", "query records with SOQL"),
]


def measure(name: str, version: str, question: str, code: Path) -> dict[str, object]:
    home = Path(tempfile.mkdtemp(prefix="wheel-only-"))
    env = {**os.environ, "CONTEXT_HOME": str(home), "PYTHONPATH": str(code)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "context_cli", "add", f"pypi:{name}=={version}", "--no-embed"],
                          env=env, capture_output=True, text=True, cwd=code)
    row: dict[str, object] = {"name": name, "version": version, "seconds": round(time.perf_counter() - start, 1),
                              "rc": proc.returncode}
    dbs = list((home / "packages").glob("*.db"))
    if proc.returncode or not dbs:
        row["error"] = (proc.stderr.strip().splitlines() or ["?"])[-1][:400]
        return row
    with sqlite3.connect(dbs[0]) as db:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        row.update(pages=db.execute("SELECT count(DISTINCT doc_path) FROM chunks").fetchone()[0],
                   sections=db.execute("SELECT count(*) FROM chunks").fetchone()[0],
                   readme_sections=db.execute("SELECT count(*) FROM chunks WHERE doc_path LIKE 'README%'").fetchone()[0],
                   symbols=db.execute("SELECT count(*) FROM symbols").fetchone()[0],
                   artefact=meta.get("artefact"), docs_source=meta.get("docs_source"))
    row["build_line"] = next((ln for ln in proc.stdout.splitlines() if ln.startswith("Added ")), "")
    from context_cli.api import open as open_package
    from context_cli.api import search

    answer = search(question, [open_package(dbs[0])], limit=3)
    row["question"] = question
    row["top3"] = [f"{r.source} > {r.title.rsplit(' > ', 1)[-1]}" for r in answer.results]
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--code", type=Path, default=ROOT)
    args = ap.parse_args()
    rows = [measure(n, v, q, args.code.resolve()) for n, v, q in RELEASES]
    for r in rows:
        print(json.dumps(r))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
