#!/usr/bin/env bash
# Packaging checks, run by .ci/run: cross-compiles the three gateway
# platforms and smoke-tests each binary (ARM ones under qemu-user-static),
# validates the deployment manifests against the IoT Edge schemas, builds the
# amd64 and arm64v8 images with buildah and checks the amd64 one runs as
# UID 2000 and answers its own health check. Prints binary and image sizes.
#
# It installs what it lacks from Debian packages (saying so), and needs no
# network but loopback and the package and Go module registries: the image's
# build stage starts from a local image made here from the Go toolchain on
# this machine, since no image registry is reachable. Everything it creates
# (containers edgegrid-ci-*, images localhost/edgegrid-ci:* and
# localhost/edgegrid-go:local, temporary files) is removed at the end; it
# stops only the processes it started, by PID.
#
#   scripts/ci-packaging.sh
#
# Environment: SCHEMAS (default ../shared/schemas/iotedge, else
# schemas/iotedge), KEEP_IMAGES=1 to keep the images for a look afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)

say() { printf '\n== %s\n' "$*"; }
die() { echo "ci-packaging: $*" >&2; exit 1; }
elapsed() { echo "$(($(date +%s) - t0)) s"; }

# --- tools ------------------------------------------------------------------

need=()
command -v qemu-aarch64-static >/dev/null && command -v qemu-arm-static >/dev/null || need+=(qemu-user-static)
command -v buildah >/dev/null || need+=(buildah)
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null || need+=(python3-jsonschema)
command -v shellcheck >/dev/null || need+=(shellcheck)
command -v curl >/dev/null || need+=(curl)
command -v readelf >/dev/null || need+=(binutils)
if [ "${#need[@]}" -gt 0 ]; then
  say "installing Debian packages: ${need[*]}"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${need[@]}"; then
    "${sudo[@]}" apt-get update
    "${sudo[@]}" apt-get install -y --no-install-recommends "${need[@]}"
  fi
fi
[ "$(id -u)" -eq 0 ] || die "the image checks need root (buildah with chroot isolation)"

work=$(mktemp -d)
pids=()
containers=()
images=()
cleanup() {
  local rc=$?
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for c in "${containers[@]}"; do bah rm "$c" >/dev/null 2>&1 || true; done
  if [ "${KEEP_IMAGES:-}" != 1 ]; then
    for i in "${images[@]}"; do bah rmi "$i" >/dev/null 2>&1 || true; done
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
bah() { buildah --storage-driver vfs "$@"; }

# --- scripts ------------------------------------------------------------------

say "shellcheck scripts/*.sh"
shellcheck scripts/*.sh

# --- binaries -----------------------------------------------------------------

say "cross-compile linux/amd64, linux/arm64, linux/arm/v7"
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
export VERSION
DIST=$work/dist scripts/build.sh linux/amd64 linux/arm64 linux/arm/v7
for f in "$work"/dist/*; do
  if readelf -lW "$f" | grep -q 'Requesting program interpreter'; then die "$f is dynamically linked"; fi
  if readelf -SW "$f" | grep -q '\.symtab'; then die "$f is not stripped"; fi
done
echo "all three are static and stripped"

say "smoke tests (amd64 natively, arm64 and arm/v7 under qemu-user-static)"
go build -o "$work/smokesink" ./scripts/smokesink
export SMOKESINK=$work/smokesink
scripts/smoke.sh "$work/dist/edgegrid-linux-amd64"
scripts/smoke.sh "$work/dist/edgegrid-linux-arm64" qemu
scripts/smoke.sh "$work/dist/edgegrid-linux-armv7" qemu

# --- manifests ----------------------------------------------------------------

say "validate the deployment templates against the IoT Edge schemas (local files only)"
schemas=${SCHEMAS:-}
if [ -z "$schemas" ]; then
  for d in ../shared/schemas/iotedge schemas/iotedge; do
    if [ -f "$d/azure-iot-edge-deployment-template-4.0.json" ]; then schemas=$d; break; fi
  done
fi
[ -n "$schemas" ] || die "IoT Edge schemas not found; set SCHEMAS"
/usr/bin/python3 - "$schemas" deployment.template.json deployment.debug.template.json <<'PY'
import json, os, sys
import jsonschema

folder, manifests = sys.argv[1], sys.argv[2:]
names = ["azure-iot-edge-deployment-template-4.0.json",
         "azure-iot-edgeagent-deployment-1.1.json",
         "azure-iot-edgehub-deployment-1.2.json"]
store = {}
for n in names:
    with open(os.path.join(folder, n)) as f:
        s = json.load(f)
    jsonschema.Draft4Validator.check_schema(s)
    store[s["id"]] = s
    store[s["id"].removesuffix(".json")] = s
top = store["https://json.schemastore.org/azure-iot-edge-deployment-template-4.0.json"]

def fetch(uri):
    raise RuntimeError("schema reference outside the local files: " + uri)

try:  # jsonschema >= 4.18: referencing
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT4
    registry = Registry(retrieve=fetch).with_resources(
        (uri, Resource.from_contents(s, default_specification=DRAFT4)) for uri, s in store.items())
    validator = jsonschema.Draft4Validator(top, registry=registry)
except ImportError:  # older jsonschema (Debian 12 has 4.10): RefResolver with a store
    resolver = jsonschema.RefResolver.from_schema(top, store=store, handlers={"http": fetch, "https": fetch})
    validator = jsonschema.Draft4Validator(top, resolver=resolver)

bad = 0
for m in manifests:
    with open(m) as f:
        doc = json.load(f)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors:
        print("%s: %s: %s" % (m, "/".join(map(str, e.absolute_path)) or "(root)", e.message))
    print("%s: %s" % (m, "valid" if not errors else "%d errors" % len(errors)))
    bad += len(errors)
    # A declarative bootstrap (desired_config) must be JSON in the module-twin
    # shape: {"topics": {name: {...}}, "eventSubscriptions": {name: {"topic": t, ...}}}.
    for name, mod in doc["modulesContent"]["$edgeAgent"]["properties.desired"]["modules"].items():
        value = mod.get("env", {}).get("desired_config", {}).get("value")
        if value is None:
            continue
        dc = json.loads(value)
        topics = dc.get("topics", {})
        for sub, props in dc.get("eventSubscriptions", {}).items():
            if props.get("topic") not in topics:
                print("%s: %s desired_config: subscription %s names an undeclared topic" % (m, name, sub))
                bad += 1
        print("%s: %s desired_config declares topics %s, subscriptions %s"
              % (m, name, sorted(topics), sorted(dc.get("eventSubscriptions", {}))))
sys.exit(1 if bad else 0)
PY

say "module/module.json: the platforms' Dockerfiles and context as IoT Edge tooling resolves them"
/usr/bin/python3 - <<'PY'
import json, os, sys
mod_dir = "module"
with open(os.path.join(mod_dir, "module.json")) as f:
    m = json.load(f)
img = m["image"]
ctx = os.path.normpath(os.path.join(mod_dir, img.get("contextPath", ".")))
assert os.path.isfile(os.path.join(ctx, "go.mod")), "contextPath %s is not the module root" % ctx
want = {"amd64": "Dockerfile", "arm64v8": "Dockerfile.arm64v8"}
for plat, df in img["tag"]["platforms"].items():
    path = os.path.normpath(os.path.join(mod_dir, df))  # relative to module.json's folder
    assert os.path.isfile(path), "%s: %s does not exist" % (plat, path)
    assert path == want.get(plat), "%s builds %s, want %s" % (plat, path, want.get(plat))
    print("%s -> %s (context %s)" % (plat, path, ctx or "."))
assert set(img["tag"]["platforms"]) == set(want), "platforms %s" % sorted(img["tag"]["platforms"])
stamp = "--build-arg VERSION=" + img["tag"]["version"]
assert stamp in img.get("buildOptions", []), "buildOptions lack %r" % stamp
PY

# manifest_env FILE: the eventgridmodule's environment in a deployment
# template, one NAME=VALUE a line: createOptions.Env, then the module's env.
manifest_env() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
mod = doc["modulesContent"]["$edgeAgent"]["properties.desired"]["modules"]["eventgridmodule"]
for e in mod["settings"]["createOptions"].get("Env", []):
    print(e)
for k, v in mod.get("env", {}).items():
    print("%s=%s" % (k, v["value"]))
PY
}

say "the development template's environment: HTTPS and HTTP, and its desired_config bootstraps the broker"
mapfile -t dev_env < <(manifest_env deployment.debug.template.json)
http_port=$("$SMOKESINK" -free-port)
https_port=$("$SMOKESINK" -free-port)
env -i PATH="$PATH" "${dev_env[@]}" api__bindAddress=127.0.0.1 api__httpPort="$http_port" api__httpsPort="$https_port" \
  "$work/dist/edgegrid-linux-amd64" >"$work/dev.log" 2>&1 &
dev_pid=$!
pids+=("$dev_pid")
v=api-version=2019-01-01-preview
for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$http_port/healthz" 2>/dev/null && break; sleep 0.1; done
for url in "http://127.0.0.1:$http_port/topics/sampleTopic1?$v" \
  "http://127.0.0.1:$http_port/topics/sampleTopic1/eventSubscriptions/sampleSubscription1?$v" \
  "https://127.0.0.1:$https_port/healthz"; do
  status=$(curl -sk -o "$work/dev.out" -w '%{http_code}' --max-time 5 "$url") || true
  echo "GET $url: $status"
  [ "$status" = 200 ] || { cat "$work/dev.log"; die "GET $url answered $status"; }
done
kill -TERM "$dev_pid"
rc=0
wait "$dev_pid" || rc=$?
[ "$rc" -eq 0 ] || { cat "$work/dev.log"; die "the broker exited with status $rc after SIGTERM"; }

# --- images -------------------------------------------------------------------

say "local build-stage base image from this machine's Go toolchain"
goroot=$(go env GOROOT)
ctr=edgegrid-ci-gobase
bah rm "$ctr" >/dev/null 2>&1 || true
bah rmi localhost/edgegrid-go:local >/dev/null 2>&1 || true
bah from --name "$ctr" scratch >/dev/null
containers+=("$ctr")
mnt=$(bah mount "$ctr")
mkdir -p "$mnt"/{usr/local,etc/ssl/certs,tmp,root,bin,src}
chmod 1777 "$mnt/tmp"
cp -a "$goroot" "$mnt/usr/local/go"
cp /etc/ssl/certs/ca-certificates.crt "$mnt/etc/ssl/certs/"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$mnt/etc/passwd"
printf 'root:x:0:\n' >"$mnt/etc/group"
# A shell and the few commands the Dockerfile's RUN lines use, with their
# shared libraries.
for cmd in sh mkdir cp; do
  bin=$(command -v "$cmd")
  cp -L "$bin" "$mnt/bin/$cmd"
  ldd "$bin" | grep -o '/[^ ]*' | while read -r lib; do
    mkdir -p "$mnt$(dirname "$lib")"
    cp -L "$lib" "$mnt$lib"
  done
done
# The modules go.mod needs, from this machine's module cache (filled from the
# Go module proxy if needed), so that `go mod download` in the build is offline.
go mod download
hostcache=$(go env GOMODCACHE)
GOFLAGS=-modcacherw GOMODCACHE="$mnt/root/go/pkg/mod" GOPROXY="file://$hostcache/cache/download" \
  GOSUMDB=off go mod download
bah umount "$ctr" >/dev/null
bah config --env PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env GOPROXY=off --env GOTOOLCHAIN=local --env HOME=/root --workingdir / "$ctr"
bah commit --quiet "$ctr" localhost/edgegrid-go:local >/dev/null
images+=(localhost/edgegrid-go:local)
bah rm "$ctr" >/dev/null
echo "localhost/edgegrid-go:local: $(go version | cut -d' ' -f3-)"

build_image() { # DOCKERFILE TAG
  bah rmi "$2" >/dev/null 2>&1 || true
  images+=("$2")
  bah build --quiet --isolation chroot --format docker --pull=false \
    --build-arg GO_IMAGE=localhost/edgegrid-go:local --build-arg VERSION="$VERSION" \
    --build-arg BUILDPLATFORM="linux/$(go env GOHOSTARCH)" \
    -f "$1" -t "$2" . >/dev/null
}
say "buildah build Dockerfile (linux/amd64)"
tb=$(date +%s)
build_image Dockerfile localhost/edgegrid-ci:amd64
echo "built in $(($(date +%s) - tb)) s"
say "buildah build Dockerfile.arm64v8 (linux/arm64, cross-compiled)"
tb=$(date +%s)
build_image Dockerfile.arm64v8 localhost/edgegrid-ci:arm64v8
echo "built in $(($(date +%s) - tb)) s"

say "image configuration"
check_config() { # TAG ARCH
  local got
  got=$(bah inspect --type image --format \
    '{{.Docker.Config.User}}|{{.OCIv1.Architecture}}|{{.Docker.Config.Entrypoint}}|{{.Docker.Config.Healthcheck.Test}}|{{.Docker.Config.WorkingDir}}' "$1")
  echo "$1: $got"
  [ "$got" = "2000:2000|$2|[/app/edgegrid]|[CMD /app/edgegrid healthcheck]|/app" ] || die "$1: unexpected configuration"
  # shellcheck disable=SC2016 # a Go template, not shell
  got=$(bah inspect --type image --format '{{range $p, $_ := .Docker.Config.ExposedPorts}}{{$p}} {{end}}' "$1")
  [ "$got" = "4438/tcp 5888/tcp " ] || die "$1: exposed ports are '$got'"
  got=$(bah inspect --type image --format '{{range .Docker.Config.Env}}{{.}} {{end}}' "$1")
  case $got in *tlsPolicy* | *clientCert* | *httpsOnly* | *bindAddress*) die "$1 sets broker settings: $got" ;; esac
}
check_config localhost/edgegrid-ci:amd64 amd64
check_config localhost/edgegrid-ci:arm64v8 arm64

say "image contents"
for arch in amd64 arm64v8; do
  c=edgegrid-ci-files-$arch
  bah rm "$c" >/dev/null 2>&1 || true
  bah from --name "$c" --pull=false --arch "${arch%v8}" "localhost/edgegrid-ci:$arch" >/dev/null
  containers+=("$c")
  m=$(bah mount "$c")
  files=$(cd "$m" && find . -mindepth 1 \( -type f -o -type l \) | sort | tr '\n' ' ')
  echo "$arch: $files"
  [ "$files" = "./app/edgegrid ./etc/group ./etc/passwd ./etc/ssl/certs/ca-certificates.crt " ] ||
    die "$arch: unexpected files in the image"
  grep -qx 'eventgriduser:x:2000:2000:eventgriduser:/app:/sbin/nologin' "$m/etc/passwd" || die "$arch: passwd"
  case $arch in amd64) want=3e00 ;; arm64v8) want=b700 ;; esac
  [ "$(od -An -t x1 -j 18 -N 2 "$m/app/edgegrid" | tr -d ' \n')" = "$want" ] || die "$arch: wrong ELF machine"
  bah umount "$c" >/dev/null
done

say "run the amd64 image with buildah run: UID 2000, /healthz"
c=edgegrid-ci-run
bah rm "$c" >/dev/null 2>&1 || true
bah from --name "$c" --pull=false localhost/edgegrid-ci:amd64 >/dev/null
containers+=("$c")
port=$("$SMOKESINK" -free-port)
# The secure template's environment (the image's defaults, spelled out) on a
# free loopback port: HTTPS only, client certificates requested; outside IoT
# Edge the broker makes a self-signed server certificate. buildah's chroot
# isolation shares the host network, so the port must be free here.
run_env=(--env api__bindAddress=127.0.0.1 --env "api__httpsPort=$port")
while read -r kv; do run_env+=(--env "$kv"); done < <(manifest_env deployment.template.json)
bah run --isolation chroot "${run_env[@]}" "$c" -- /app/edgegrid >"$work/container.log" 2>&1 &
runner=$!
pids+=("$runner")

# descendants PID: every process under PID, depth first.
descendants() {
  local child
  # shellcheck disable=SC2013 # the files hold space-separated PIDs
  for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}
broker=
for _ in $(seq 100); do
  for p in $(descendants "$runner"); do
    if [ "$(cat /proc/"$p"/comm 2>/dev/null)" = edgegrid ]; then broker=$p; break 2; fi
  done
  kill -0 "$runner" 2>/dev/null || { cat "$work/container.log"; die "buildah run exited early"; }
  sleep 0.1
done
[ -n "$broker" ] || die "the broker process did not appear"
pids+=("$broker")
uids=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' /proc/"$broker"/status)
gids=$(awk '/^Gid:/ { print $2, $3, $4, $5 }' /proc/"$broker"/status)
echo "broker PID $broker: Uid $uids, Gid $gids"
[ "$uids" = "2000 2000 2000 2000" ] || die "the broker runs as UID $uids, want 2000"
[ "$gids" = "2000 2000 2000 2000" ] || die "the broker runs as GID $gids, want 2000"

healthy=
for _ in $(seq 60); do
  if out=$(bah run --isolation chroot "${run_env[@]}" "$c" -- /app/edgegrid healthcheck 2>&1); then
    healthy=1
    break
  fi
  sleep 0.5
done
echo "healthcheck: $out"
[ -n "$healthy" ] || { cat "$work/container.log"; die "the image's healthcheck failed"; }
if out=$(bah run --isolation chroot --env api__httpsPort=1 "$c" -- /app/edgegrid healthcheck 2>&1); then
  die "the healthcheck passed against a port nothing listens on: $out"
fi
echo "healthcheck on a closed port: ${out%%$'\n'*}"

kill -TERM "$broker"
rc=0
wait "$runner" || rc=$?
[ "$rc" -eq 0 ] || { cat "$work/container.log"; die "the broker exited with status $rc after SIGTERM"; }
grep -q '"message":"edgegrid stopped"' "$work/container.log" || { cat "$work/container.log"; die "no clean stop logged"; }
echo "stopped by SIGTERM to PID $broker, exit 0"

# --- sizes --------------------------------------------------------------------

say "sizes"
for f in "$work"/dist/*; do
  awk -v f="$(basename "$f")" -v b="$(stat -c %s "$f")" 'BEGIN { printf "%-24s %9d bytes %6.2f MiB\n", f, b, b / 1048576 }'
done
for arch in amd64 arm64v8; do
  # What a gateway downloads (gzip layers, as a registry serves them) and
  # what it stores once unpacked.
  bah push --quiet --compression-format gzip "localhost/edgegrid-ci:$arch" "oci:$work/oci-$arch:$arch" >/dev/null
  /usr/bin/python3 - "$work/oci-$arch" "edgegrid:$arch" <<'PY'
import gzip, json, os, sys
d, name = sys.argv[1:]
blob = lambda digest: os.path.join(d, "blobs", *digest.split(":"))
index = json.load(open(os.path.join(d, "index.json")))
manifest = json.load(open(blob(index["manifests"][0]["digest"])))
download = manifest["config"]["size"] + sum(l["size"] for l in manifest["layers"])
unpacked = 0
for l in manifest["layers"]:
    with gzip.open(blob(l["digest"])) as f:
        while chunk := f.read(1 << 20):
            unpacked += len(chunk)
print("image %-24s %9d bytes %6.2f MiB to download (gzip), %6.2f MiB unpacked, %d layer(s)"
      % (name, download, download / 1048576, unpacked / 1048576, len(manifest["layers"])))
PY
done

say "packaging checks passed in $(elapsed)"
