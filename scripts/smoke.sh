#!/usr/bin/env bash
# Smoke-test one broker binary end to end: start it with development settings
# on a free loopback port, create a topic and a webhook subscription pointing
# at a tiny sink (scripts/smokesink), publish an event, check the sink got it,
# then stop the broker with SIGTERM and check it exits 0.
#
#   scripts/smoke.sh BINARY [qemu]
#
# With "qemu" the binary runs under qemu-user-static (qemu-aarch64-static or
# qemu-arm-static, chosen from the ELF header), so ARM builds can be tested on
# an x86 machine. SMOKESINK may name a prebuilt sink; otherwise it is built
# here with go. Needs curl. Only loopback traffic.
set -euo pipefail

die() { echo "smoke: $*" >&2; exit 1; }

if [ "$#" -lt 1 ] || [ "$#" -gt 2 ]; then die "usage: scripts/smoke.sh BINARY [qemu]"; fi
bin=$1
mode=${2:-native}
if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then die "$bin is not an executable file"; fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
root=$(cd "$(dirname "$0")/.." && pwd)
command -v curl >/dev/null || die "curl is needed"

runner=()
case $mode in
  native) ;;
  qemu)
    # e_machine, the 16-bit little-endian field at offset 18 of the ELF header.
    machine=$(od -An -t x1 -j 18 -N 2 "$bin" | tr -d ' \n')
    case $machine in
      b700) qemu="qemu-aarch64-static" ;;
      2800) qemu="qemu-arm-static" ;;
      3e00) qemu="qemu-x86_64-static" ;;
      *) die "$bin: unknown ELF machine 0x$machine" ;;
    esac
    command -v "$qemu" >/dev/null || die "$qemu not found (Debian package qemu-user-static)"
    runner=("$(command -v "$qemu")")
    ;;
  *) die "unknown mode $mode (want qemu or nothing)" ;;
esac

work=$(mktemp -d)
broker_pid=
sink_pid=
cleanup() {
  for pid in $broker_pid $sink_pid; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "smoke: FAILED: $*" >&2
  for f in broker.log sink.log received; do
    [ -s "$work/$f" ] && { echo "--- $f" >&2; tail -n 40 "$work/$f" >&2; }
  done
  exit 1
}

sink=${SMOKESINK:-}
if [ -z "$sink" ]; then
  (cd "$root" && go build -o "$work/smokesink" ./scripts/smokesink)
  sink=$work/smokesink
fi

"$sink" -addr-file "$work/sink.addr" -out "$work/received" >"$work/sink.log" 2>&1 &
sink_pid=$!
for _ in $(seq 100); do [ -s "$work/sink.addr" ] && break; sleep 0.1; done
[ -s "$work/sink.addr" ] || fail "the sink did not start"
sink_addr=$(cat "$work/sink.addr")

port=$("$sink" -free-port)
base=http://127.0.0.1:$port
v=api-version=2019-01-01-preview

# A clean environment: only the development settings, whatever the caller has.
start=$(date +%s.%N)
env -i PATH="$PATH" \
  inbound__serverAuth__tlsPolicy=disabled \
  inbound__clientAuth__clientCert__enabled=false \
  outbound__webhook__httpsOnly=false \
  api__bindAddress=127.0.0.1 \
  api__httpPort="$port" \
  broker__stopTimeoutInSeconds=10 \
  "${runner[@]}" "$bin" >"$work/broker.log" 2>&1 &
broker_pid=$!

up=
for _ in $(seq 300); do
  kill -0 "$broker_pid" 2>/dev/null || fail "the broker exited at start"
  if curl -fsS -o /dev/null --max-time 2 "$base/healthz" 2>/dev/null; then up=1; break; fi
  sleep 0.1
done
[ -n "$up" ] || fail "the broker did not answer /healthz within 30 s"
ready=$(date +%s.%N)

# call METHOD PATH WANT_STATUS [BODY]
call() {
  local status
  status=$(curl -sS -o "$work/response" -w '%{http_code}' --max-time 10 -X "$1" \
    -H 'Content-Type: application/json' ${4:+--data-binary "$4"} "$base$2") || fail "$1 $2: curl failed"
  [ "$status" = "$3" ] || fail "$1 $2 answered $status, want $3: $(cat "$work/response")"
}

id=smoke-$$-$RANDOM
call PUT "/topics/smoketopic?$v" 200 '{"name":"smoketopic","properties":{"inputSchema":"EventGridSchema"}}'
call PUT "/topics/smoketopic/eventSubscriptions/smokesub?$v" 200 \
  "{\"properties\":{\"destination\":{\"endpointType\":\"WebHook\",\"properties\":{\"endpointUrl\":\"http://$sink_addr/api/events\"}}}}"
call GET "/topics/smoketopic/eventSubscriptions/smokesub?$v" 200
call POST "/topics/smoketopic/events?$v" 200 \
  "[{\"id\":\"$id\",\"eventType\":\"smoke\",\"subject\":\"smoke/1\",\"eventTime\":\"2026-01-01T00:00:00Z\",\"dataVersion\":\"1.0\",\"data\":{\"n\":1}}]"

delivered=
for _ in $(seq 150); do
  if grep -q "\"$id\"" "$work/received" 2>/dev/null; then delivered=1; break; fi
  sleep 0.1
done
[ -n "$delivered" ] || fail "event $id was not delivered to the sink within 15 s"
line=$(grep "\"$id\"" "$work/received")
case $line in
  "POST /api/events aeg-event-type=Notification "*) ;;
  *) fail "unexpected delivery: $line" ;;
esac
grep -q '"topic":"smoketopic"' <<<"$line" || fail "delivery lacks the topic: $line"

kill -TERM "$broker_pid"
stopped=
for _ in $(seq 150); do
  kill -0 "$broker_pid" 2>/dev/null || { stopped=1; break; }
  sleep 0.1
done
rc=0
if [ -z "$stopped" ]; then
  kill -KILL "$broker_pid" 2>/dev/null || true
  wait "$broker_pid" 2>/dev/null || true
  broker_pid=
  fail "the broker did not exit within 15 s of SIGTERM"
fi
wait "$broker_pid" || rc=$?
broker_pid=
[ "$rc" -eq 0 ] || fail "the broker exited with status $rc after SIGTERM, want 0"

version=$(grep -o '"version":"[^"]*"' "$work/broker.log" | head -n 1 || true)
awk -v b="$bin" -v m="$mode" -v v="$version" -v s="$start" -v r="$ready" \
  'BEGIN { printf "smoke ok: %s (%s) %s: up in %.1f s, delivered, exit 0 on SIGTERM\n", b, m, v, r - s }'
