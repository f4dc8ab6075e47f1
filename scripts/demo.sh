#!/usr/bin/env bash
# The main job end to end, offline, on docs this repository ships (docs/):
# build a package with embeddings, publish it to a registry server on loopback,
# install it through the client, and search it.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
export CONTEXT_HOME="$work/home"
trap 'kill "${server_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

echo "== build a package from docs/ (CONTEXT_HOME=$CONTEXT_HOME)"
context add docs --name context-docs --pkg-version 0.1.0 --save "$work/context-docs.db"
context list

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "== start a registry server on 127.0.0.1:$port and publish"
CONTEXT_REGISTRY_KEY=demo-key context-registry-server --data "$work/registry" --host 127.0.0.1 --port "$port" \
  >"$work/server.log" 2>&1 &
server_pid=$!
python - "$port" "$work/context-docs.db" <<'PY'
import sys, time, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
for _ in range(100):  # wait until the server answers
  try:
      urllib.request.urlopen(base + "/health", timeout=1)
      break
  except OSError:
      time.sleep(0.1)
req = urllib.request.Request(base + "/packages/local/context-docs/0.1.0", data=open(sys.argv[2], "rb").read(),
                           headers={"Authorization": "Bearer demo-key"}, method="POST")
print("published:", urllib.request.urlopen(req).status)
PY
echo "== install it through the client from the registry"
context remove context-docs
printf '{"servers":[{"name":"demo","url":"http://127.0.0.1:%s","default":true}]}\n' "$port" > "$CONTEXT_HOME/config.json"
context install local/context-docs@0.1.0

echo "== search it"
context search "how do I pin an MCP session to some packages?" --budget 800
