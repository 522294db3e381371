#!/usr/bin/env bash
# Installs Azurite, the Azure Storage emulator the dead-letter and storage
# queue tests run against (npm package azurite; Node.js must be present).
# Idempotent: does nothing when azurite-blob is already on the PATH.
set -euo pipefail
if command -v azurite-blob >/dev/null && command -v azurite-queue >/dev/null; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "azurite needs Node.js and npm: apt-get install -y nodejs npm" >&2
  exit 1
fi
# 3.37.0 declares Node >= 22 but runs on Node 20.
npm install --global --no-audit --no-fund --engine-strict=false azurite@3.37.0
