#!/usr/bin/env bash
# Make sure a headless Chromium is present for tests/test_registry_browser.py.
#
# Prints the browser's path and exits 0 when one is found or installed. Installs Debian's
# `chromium` package (about a minute) only when it is missing and we run as root; otherwise
# says why not and exits 1, and the browser test skips with that reason.
set -euo pipefail

find_browser() {
  for name in "${CHROMIUM:-}" chromium chromium-browser google-chrome-stable google-chrome; do
    if [ -n "$name" ] && command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

if find_browser; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium is missing; install it as root: apt-get install -y chromium" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is missing and this system has no apt-get; install Chromium by hand" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
find_browser
