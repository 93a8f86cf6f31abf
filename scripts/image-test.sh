#!/usr/bin/env bash
# `make image-test`: builds the Dockerfile's runtime stage around the host's release binary
# with buildah, runs the image with podman, and checks it from outside the container:
# /healthz, a /v1/timelines answer byte-equal to the host binary's, a stream, /metrics, a
# non-root user, a read-only root filesystem; then `podman stop` must drain an open stream
# and the container exit 0 within the drain timeout. Prints the image size, the build time
# and the start-up time.
#
# Where no registry can be reached, the base image is a stand-in built from Debian's
# packages (scripts/image-base.sh, cached under .build-images/). With a registry, set
# RUNTIME_IMAGE=docker.io/library/debian:bookworm-slim to use the real one.
#
#   scripts/image-test.sh [BINARY]     # default .build/release/motion-server (make release)
#
# Needs root (buildah and podman with the vfs driver and the runc runtime, as the machines
# of this project allow); installs buildah, podman, runc and debootstrap when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

BINARY=${1:-.build/release/motion-server}
IMAGE=localhost/motion-server:test
RUNTIME_IMAGE=${RUNTIME_IMAGE:-}
DRAIN_TIMEOUT=5
NAME=motion-image-test-$$
HOST_PID=""
STREAM_PID=""
WORK=$(mktemp -d)
started=$(date +%s.%N)

log() { printf '[image-test] %s\n' "$*"; }
fail() { printf '[image-test] FAIL: %s\n' "$*" >&2; exit 1; }
seconds_since() { python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.1f}')" "$1"; }

PODMAN=(podman --storage-driver vfs --runtime runc)
cleanup() {
  [ -n "$STREAM_PID" ] && kill "$STREAM_PID" 2>/dev/null || true
  [ -n "$HOST_PID" ] && kill "$HOST_PID" 2>/dev/null && wait "$HOST_PID" 2>/dev/null || true
  "${PODMAN[@]}" rm -f "$NAME" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || fail "needs root (buildah/podman with the vfs driver)"
[ -x "$BINARY" ] || fail "no release binary at $BINARY: run make release"
missing=()
for tool in buildah podman runc debootstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
[ ${#missing[@]} -eq 0 ] || scripts/apt-install.sh "${missing[@]}"

# ------------------------------------------------------------------------ build
if [ -z "$RUNTIME_IMAGE" ]; then RUNTIME_IMAGE=$(scripts/image-base.sh); fi
mkdir -p "$WORK/hostbin"
cp "$BINARY" "$WORK/hostbin/motion-server"
build_started=$(date +%s.%N)
log "building $IMAGE from $RUNTIME_IMAGE with $BINARY"
buildah --storage-driver vfs bud --isolation chroot --format docker --quiet \
  --build-arg RUNTIME_IMAGE="$RUNTIME_IMAGE" --build-arg BINARY_STAGE=prebuilt \
  --build-context hostbin="$WORK/hostbin" -t "$IMAGE" . >"$WORK/build.log" 2>&1 \
  || { tail -30 "$WORK/build.log"; fail "buildah bud"; }
build_seconds=$(seconds_since "$build_started")
size_bytes=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$IMAGE")
size_mb=$(python3 -c "print(f'{int(\"$size_bytes\")/1e6:.0f}')")
log "built in ${build_seconds} s, ${size_mb} MB"

# ------------------------------------------------------------------------ run
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
run_started=$(date +%s.%N)
"${PODMAN[@]}" run -d --name "$NAME" --read-only --no-healthcheck \
  --ulimit nproc=1000:1000 --ulimit nofile=1000:1000 \
  -e MOTION_DRAIN_TIMEOUT=$DRAIN_TIMEOUT -e MOTION_MAX_CONNECTIONS=512 -e MOTION_LOG_FORMAT=json \
  -p "127.0.0.1:$port:8080" "$IMAGE" >/dev/null || fail "podman run"
URL=http://127.0.0.1:$port
for _ in $(seq 1 300); do
  curl -fs "$URL/healthz" >/dev/null 2>&1 && break
  sleep 0.05
done
curl -fs "$URL/healthz" >/dev/null || { "${PODMAN[@]}" logs "$NAME" | tail -20; fail "/healthz did not answer"; }
startup_seconds=$(seconds_since "$run_started")
# The server's own start-up: from the container's start to its "listening" log line.
server_startup=$( { "${PODMAN[@]}" inspect --format '{{.State.StartedAt}}' "$NAME"; "${PODMAN[@]}" logs "$NAME" 2>&1; } | python3 -c '
import datetime, json, re, sys
started = sys.stdin.readline().strip()
m = re.match(r"(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)? ([+-]\d{4})", started)
frac = (m.group(3) or ".0")[:7]
start = datetime.datetime.strptime(f"{m.group(1)} {m.group(2)}{frac} {m.group(4)}", "%Y-%m-%d %H:%M:%S.%f %z")
for line in sys.stdin:
    try:
        entry = json.loads(line)
    except ValueError:
        continue
    if entry.get("message") == "listening":
        at = datetime.datetime.strptime(entry["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
        print(f"{max(0.0, (at - start).total_seconds()) * 1000:.0f}")
        break
else:
    print("?")
')
log "serving after ${startup_seconds} s (podman run until /healthz answers); the server listened ${server_startup} ms after the container started"

# ------------------------------------------------------------------------ checks
# The same health answer as the host binary's (status and version).
[ "$(curl -s "$URL/healthz")" = "$(printf '{"status":"ok","version":"%s"}' "$("$BINARY" --version)")" ] || fail "/healthz body: $(curl -s "$URL/healthz")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ] || fail "/readyz"

DOC='{"fps":30,"target":{"x":0,"tint":"#336699"},"motion":{"type":"group","children":[
  {"type":"spring","response":0.5,"dampingRatio":0.6,"properties":[{"path":"x","to":100}]},
  {"type":"tween","duration":0.8,"easing":"ease-in-out","properties":[{"path":"tint","to":"#ff993380"}]}]}}'
curl -s "$URL/v1/timelines" -H 'Content-Type: application/json' -d "$DOC" -o "$WORK/container.json"
"$BINARY" --host 127.0.0.1 --port 0 --log-level error >"$WORK/host.out" 2>&1 &
HOST_PID=$!
for _ in $(seq 1 100); do grep -q 'http://' "$WORK/host.out" && break; sleep 0.05; done
host_url=$(grep -o 'http://[0-9.:]*' "$WORK/host.out")
curl -s "$host_url/v1/timelines" -H 'Content-Type: application/json' -d "$DOC" -o "$WORK/host.json"
kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true; HOST_PID=""
[ -s "$WORK/host.json" ] || fail "the host binary gave no answer"
cmp -s "$WORK/host.json" "$WORK/container.json" || fail "/v1/timelines differs from the host binary's answer"
log "/v1/timelines: $(wc -c <"$WORK/container.json") bytes, byte-equal to the host binary's"

curl -s "$URL/v1/streams?speed=0" -H 'Content-Type: application/json' -d "$DOC" -o "$WORK/stream.ndjson"
lines=$(wc -l <"$WORK/stream.ndjson")
tail -1 "$WORK/stream.ndjson" | grep -q '"end":true' || fail "stream without its end line"
log "/v1/streams: $lines lines, ended with its end line"

curl -s "$URL/metrics" | grep -q '^motion_http_requests_total{' || fail "/metrics lacks motion_http_requests_total"
log "/metrics: request counters present"

uid=$("${PODMAN[@]}" exec "$NAME" id -u)
[ "$uid" != 0 ] || fail "the server runs as root"
pid1_uid=$("${PODMAN[@]}" exec "$NAME" awk '/^Uid:/{print $2}' /proc/1/status)
[ "$pid1_uid" = 10001 ] || fail "the server process runs as uid $pid1_uid, not 10001"
log "non-root: the server runs as uid $pid1_uid"
[ "$("${PODMAN[@]}" inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$NAME")" = true ] || fail "root filesystem not read-only"
if "${PODMAN[@]}" exec "$NAME" sh -c 'echo x > /usr/local/bin/probe' 2>/dev/null; then fail "the root filesystem is writable"; fi
log "read-only root filesystem: writes refused"

# ------------------------------------------------------------------------ drain
ENDLESS='{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":1,"repeat":"infinite","properties":[{"path":"x","to":1}]},"window":{"start":0,"end":1000}}'
curl -sN "$URL/v1/streams" -H 'Content-Type: application/json' -d "$ENDLESS" -o "$WORK/endless.ndjson" &
STREAM_PID=$!
sleep 0.5
stop_started=$(date +%s.%N)
"${PODMAN[@]}" stop -t $((DRAIN_TIMEOUT + 5)) "$NAME" >/dev/null
stop_seconds=$(seconds_since "$stop_started")
wait "$STREAM_PID" 2>/dev/null || true; STREAM_PID=""
exit_code=$("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$NAME")
[ "$exit_code" = 0 ] || { "${PODMAN[@]}" logs "$NAME" | tail -20; fail "exit code $exit_code after podman stop"; }
python3 -c "import sys; sys.exit(0 if float('$stop_seconds') <= $DRAIN_TIMEOUT else 1)" \
  || fail "podman stop took ${stop_seconds} s, over the drain timeout ($DRAIN_TIMEOUT s)"
tail -1 "$WORK/endless.ndjson" | grep -q '"interrupted":"shutdown"' || fail "the open stream did not end with its shutdown end line"
"${PODMAN[@]}" logs "$NAME" 2>&1 | grep -q '"message":"stopped"' || fail "no 'stopped' log line"
"${PODMAN[@]}" logs "$NAME" 2>&1 | grep '"message":"request"' | python3 -c '
import json, sys
lines = [json.loads(l) for l in sys.stdin]
assert lines and all(l["requestId"] and "status" in l for l in lines), lines
' || fail "access log lines are not JSON with request ids"
log "podman stop: drained the open stream (end line interrupted: shutdown), exit 0 after ${stop_seconds} s"

log "PASS: image ${size_mb} MB, built in ${build_seconds} s, serving ${startup_seconds} s after podman run (server start ${server_startup} ms), stopped in ${stop_seconds} s; whole run $(seconds_since "$started") s"
