#!/usr/bin/env bash
# Installs Chromium, the browser the console page's tests drive headless
# (Debian's chromium package, with a font so that screenshots show text).
# Idempotent: does nothing when chromium is already on the PATH.
set -euo pipefail
if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null
