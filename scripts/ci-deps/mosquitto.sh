#!/usr/bin/env bash
# Installs mosquitto, the MQTT 3.1.1 broker the EdgeHub destination's tests
# publish to (it stands in for edgeHub). Idempotent: does nothing when the
# broker and mosquitto_passwd are already there.
set -euo pipefail
if command -v mosquitto >/dev/null && command -v mosquitto_passwd >/dev/null; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends mosquitto >/dev/null
# The package's own service is not wanted: tests start their own brokers.
if command -v systemctl >/dev/null; then systemctl disable --now mosquitto >/dev/null 2>&1 || true; fi
command -v mosquitto >/dev/null
