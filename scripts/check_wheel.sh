#!/usr/bin/env bash
# The release check: `python -m build` makes an sdist and a wheel that both carry the shipped
# model; the wheel installs into a fresh venv with plain `pip install`, and there, outside the
# repository, `context add <folder>` builds a package with embeddings and `context search`
# answers from it in hybrid mode; the catalogue (registry/packages.yaml) ships in the wheel, and
# `context add pypi:…` there builds from its definition. Needs the package index (pip fetches
# build tools and deps; `add pypi:` fetches an sdist).
# Usage: scripts/check_wheel.sh   (PYTHON=python3.12 scripts/check_wheel.sh for another Python)
set -euo pipefail
PY=${PYTHON:-python3}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$(date +%s)

"$PY" -m venv "$work/tools"
"$work/tools/bin/pip" install --quiet --disable-pip-version-check build
"$work/tools/bin/python" -m build --outdir "$work/dist" "$repo" >"$work/build.log" 2>&1 || {
  tail -30 "$work/build.log"; exit 1; }

"$work/tools/bin/python" - "$work/dist" <<'PY'
import sys, tarfile, zipfile
from pathlib import Path
dist = Path(sys.argv[1])
model = ("config.json", "model.safetensors", "tokenizer.json", "LICENSE", "NOTICE")
wheel, = dist.glob("*.whl")
sdist, = dist.glob("*.tar.gz")
names = set(zipfile.ZipFile(wheel).namelist())
missing = [m for m in model if f"context_cli/embed/default_model/{m}" not in names]
missing += [] if "registry/packages.yaml" in names else ["registry/packages.yaml (the catalogue)"]
with tarfile.open(sdist) as tf:
    snames = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
missing += [f"sdist:{m}" for m in model if f"context_cli/embed/default_model/{m}" not in snames]
meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
text = zipfile.ZipFile(wheel).read(meta).decode()
assert "License-Expression: Apache-2.0" in text, "wheel metadata lacks License-Expression"
if missing:
    sys.exit(f"missing from the artefacts: {missing}")
print(f"built {wheel.name} ({wheel.stat().st_size // 1024} KB) and {sdist.name}; both carry the model")
PY

"$PY" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$work"/dist/*.whl

cd "$work"  # away from the repository: every import must come from the installed wheel
export CONTEXT_HOME="$work/home"
mkdir -p docs
printf '# Streams\n\n## Cancelling a stream\n\nCall `stream.cancel()` to stop a stream halfway; the sink is closed and ERR_SINK_CLOSED is raised to readers.\n\n## Buffering\n\nStreams buffer 64 KB before they apply back-pressure to the writer.\n' > docs/streams.md
"$work/venv/bin/python" -c 'import context_cli, sys; p = context_cli.__file__; sys.exit(0 if p.startswith(sys.argv[1]) else f"context_cli imported from {p}")' "$work/venv"
"$work/venv/bin/context" add docs --name wheeldemo --pkg-version 1.0.0
"$work/venv/bin/context" search "how do I stop a stream halfway" --format json > answer.json
"$work/venv/bin/python" - answer.json <<'PY'
import json, sys
answer = json.load(open(sys.argv[1]))
results = answer.get("results") or []
assert results and results[0]["library"] == "wheeldemo@1.0.0", answer
assert "Cancelling" in results[0]["title"], results[0]["title"]
mode = (answer.get("searched") or {}).get("wheeldemo@1.0.0")
assert mode in (None, "hybrid"), f"searched {mode}, not hybrid: the shipped model did not load"
print("wheel works: add + search ->", results[0]["title"], f"({mode or 'mode not reported'})")
PY
# The catalogue, from the installed wheel alone (no CONTEXT_DEFINITIONS, no checkout here).
unset CONTEXT_DEFINITIONS CONTEXT_REGISTRY_DEFINITIONS
"$work/venv/bin/context-registry" validate | tail -1
"$work/venv/bin/context" add pypi:itsdangerous==2.2.0 >/dev/null
"$work/venv/bin/context" info pip/itsdangerous@2.2.0 --json > info.json
"$work/venv/bin/python" - info.json <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))["meta"]
assert meta.get("docs_source") == "definition", f"the ladder found no catalogue definition: {meta.get('docs_source')}"
print("catalogue ships: add pypi:itsdangerous built from its definition")
PY
echo "check_wheel: ok in $(( $(date +%s) - started )) s"
