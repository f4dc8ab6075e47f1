"""Builds for real a sample of the catalogue's generated definitions (issue 28), the way the
registry's CI builds them: `context-registry build REGISTRY/NAME VERSION` against the shipped
catalogue, repositories served from `fetch` snapshots (bench/coverage.py's environment).

    .venv/bin/python bench/coverage_sample.py [--out bench/results/coverage_sample.json]

Each row: the definition, the release, whether it built, its pages and sections, and the first
line of the failure. The releases are pinned here (each one a tag the snapshot holds).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from coverage import environment  # noqa: E402

SAMPLE = [
    ("pip/psycopg", "3.2.3"), ("pip/sqlmodel", "0.0.22"), ("pip/redis", "5.2.1"), ("pip/authlib", "1.3.2"),
    ("pip/typing-extensions", "4.12.2"), ("pip/python-multipart", "0.0.20"), ("npm/vitest", "2.1.8"),
    ("npm/prettier", "3.4.2"), ("npm/@tanstack/react-query", "5.62.8"), ("npm/@tanstack/query-core", "5.62.8"),
    ("npm/eslint-plugin-react", "7.37.2"), ("npm/eslint-plugin-vue", "9.32.0"), ("npm/@babel/preset-env", "latest"),
    ("npm/webpack", "latest"), ("npm/@radix-ui/react-dialog", "latest"),
    ("npm/@testing-library/react", "latest"), ("npm/react-hook-form", "latest"), ("npm/express", "latest"),
    ("npm/socket.io", "latest"), ("npm/axios", "latest"),
]
LIMIT_S = 420


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "coverage_sample.json")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="coverage-sample-"))
    env = {**environment(work), "CONTEXT_DEFINITIONS": ""}
    env.pop("CONTEXT_DEFINITIONS")  # the shipped catalogue, as an installed wheel reads it
    rows = []
    for spec, version in SAMPLE:
        start = time.perf_counter()
        cmd = [str(ROOT / ".venv" / "bin" / "context-registry"), "build", spec,
               *([] if version == "latest" else [version]), "--out", str(work / "out"), "--no-embed"]
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=LIMIT_S)
            text = proc.stdout + proc.stderr
            ok = proc.returncode == 0
        except subprocess.TimeoutExpired:
            text, ok = f"over {LIMIT_S}s", False
        m = re.search(r"(\d+) sections? from (\d+) pages?", text)
        row = {"definition": spec, "version": version, "built": ok,
               "sections": int(m.group(1)) if m else None, "pages": int(m.group(2)) if m else None,
               "error": None if ok else (text.strip().splitlines() or ["?"])[-1][:300],
               "seconds": round(time.perf_counter() - start, 1)}
        rows.append(row)
        print(f"{spec}@{version}: {'built' if ok else 'FAILED'} {row['pages']} pages {row['seconds']}s "
              f"{row['error'] or ''}", flush=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n")
    print(f"{sum(r['built'] for r in rows)}/{len(rows)} built")


if __name__ == "__main__":
    main()
