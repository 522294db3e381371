#!/usr/bin/env bash
# Builds kube-apiserver and etcd from the Go module proxy for the chart's
# server-side dry-run tests (tests/kubernetes), and fetches the ServiceMonitor
# CustomResourceDefinition from prometheus-operator's module, so that the
# chart's ServiceMonitor is checked against the real schema. The wrapper
# modules under scripts/ci-deps/kube/ pin the versions; everything goes to a
# cache directory outside the repository:
#
#   ${EDGEGRID_KUBE_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/edgegrid/kube}/<stamp>/
#
# where <stamp> is a digest of the wrapper modules' go.mod and go.sum, and a
# `current` symlink points at the newest build. Idempotent: does nothing when
# the binaries for the same pinned versions are already there. The first build
# takes minutes (docs/kubernetes.md, "First builds", gives the measured time);
# later ones come from the Go build cache.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${EDGEGRID_KUBE_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/edgegrid/kube}"
stamp="$(cat "$here"/kube/apiserver/go.mod "$here"/kube/apiserver/go.sum \
  "$here"/kube/etcd/go.mod "$here"/kube/etcd/go.sum "$here"/kube/etcd/main.go |
  sha256sum | cut -c1-16)"
dest="$root/$stamp"
mkdir -p "$dest"

# The ServiceMonitor CRD as prometheus-operator ships it.
crd_module=github.com/prometheus-operator/prometheus-operator@v0.85.0
if [ "$(cat "$dest/servicemonitor-crd.version" 2>/dev/null)" != "$crd_module" ]; then
  moddir="$(cd "$dest" && GOFLAGS=-mod=mod go mod download -json "$crd_module" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  cp "$moddir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" "$dest/servicemonitor-crd.yaml"
  chmod 644 "$dest/servicemonitor-crd.yaml"
  echo "$crd_module" >"$dest/servicemonitor-crd.version"
fi

if [ -x "$dest/kube-apiserver" ] && [ -x "$dest/etcd" ]; then
  ln -sfn "$stamp" "$root/current"
  exit 0
fi
start=$(date +%s)
# CGO off: both servers are pure Go, and a static binary does not depend on
# the machine's libc.
(cd "$here/kube/etcd" && CGO_ENABLED=0 go build -trimpath -o "$dest/etcd.tmp" .)
mv "$dest/etcd.tmp" "$dest/etcd"
(cd "$here/kube/apiserver" && CGO_ENABLED=0 go build -trimpath -o "$dest/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
mv "$dest/kube-apiserver.tmp" "$dest/kube-apiserver"
ln -sfn "$stamp" "$root/current"
echo "kube-apiserver and etcd built in $(($(date +%s) - start)) s into $dest" >&2
