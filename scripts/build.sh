#!/usr/bin/env bash
# Cross-compile the broker for the gateways it runs on: static (no cgo),
# reproducible paths (-trimpath), stripped (-s -w), version stamped.
#
#   scripts/build.sh [PLATFORM...]     default: linux/amd64 linux/arm64 linux/arm/v7
#
# Writes dist/edgegrid-linux-amd64, dist/edgegrid-linux-arm64 and
# dist/edgegrid-linux-armv7 and prints their sizes. Environment: VERSION
# (default: git describe, else "dev"), DIST (default: dist).
set -euo pipefail
cd "$(dirname "$0")/.."

DIST=${DIST:-dist}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
if [ "$#" -eq 0 ]; then
  set -- linux/amd64 linux/arm64 linux/arm/v7
fi

mkdir -p "$DIST"
built=()
for platform in "$@"; do
  IFS=/ read -r goos goarch variant <<<"$platform"
  goarm=
  case "$goarch/${variant:-}" in
    arm/v6 | arm/v7) goarm=${variant#v} ;;
    arm/) goarm=7 ;;
    */) ;;
    *) echo "build.sh: unsupported platform $platform" >&2; exit 2 ;;
  esac
  out="$DIST/edgegrid-$goos-$goarch${goarm:+v$goarm}"
  echo "== go build $platform -> $out (version $VERSION)"
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch GOARM=$goarm GOFLAGS=-buildvcs=false \
    go build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o "$out" ./module
  built+=("$out")
done

echo "== sizes"
for f in "${built[@]}"; do
  bytes=$(stat -c %s "$f")
  awk -v f="$f" -v b="$bytes" 'BEGIN { printf "%-32s %10d bytes  %6.2f MiB\n", f, b, b / 1048576 }'
done
