#!/usr/bin/env bash
# Run the broker on this machine with development settings: plain HTTP on
# 127.0.0.1:5888, no client authentication, HTTP webhooks allowed, readable
# logs. Never use these settings on a gateway; the image's defaults are the
# secure ones (HTTPS on 4438 with client certificates).
#
#   scripts/run-local.sh [BINARY]      default: go run ./module
#
# Any setting already in the environment wins, e.g.
#   api__httpPort=6000 scripts/run-local.sh dist/edgegrid-linux-amd64
set -euo pipefail
cd "$(dirname "$0")/.."

export inbound__serverAuth__tlsPolicy="${inbound__serverAuth__tlsPolicy:-disabled}"
export inbound__clientAuth__clientCert__enabled="${inbound__clientAuth__clientCert__enabled:-false}"
export outbound__webhook__httpsOnly="${outbound__webhook__httpsOnly:-false}"
export api__bindAddress="${api__bindAddress:-127.0.0.1}"
export api__httpPort="${api__httpPort:-5888}"
export log__format="${log__format:-console}"

echo "edgegrid (development settings): http://$api__bindAddress:$api__httpPort" >&2
if [ "$#" -gt 0 ]; then
  exec "$@"
fi
exec go run ./module
