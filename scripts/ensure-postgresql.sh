#!/usr/bin/env bash
# Make sure PostgreSQL's server binaries are present for the registry's PostgreSQL tests
# (tests/engine_fixtures.py starts a throwaway cluster with them). Installs Debian's
# `postgresql` package only when they are missing and we run as root; otherwise says why
# not and exits 1, and those tests skip with that reason.
set -euo pipefail

if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "PostgreSQL server binaries are missing; install them: apt-get install -y postgresql" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql >/dev/null
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
