#!/usr/bin/env bash
# `make bench`: builds in release and runs the five workloads of Benchmarks/README.md, each
# against its reference in the same run, then prints a summary and writes the results.
#
#   Benchmarks/run.sh                 full run (about 15–20 minutes on 2 cores)
#   BENCH_QUICK=1 Benchmarks/run.sh   smoke run (small sizes, short durations, 3 runs; ~5 min)
#
# Knobs (environment): BENCH_RUNS (runs per figure; 5, quick 3), BENCH_STREAMS ("1000 2000 5000";
# quick "100 200 500"), BENCH_STREAM_SECONDS (30; quick 5), BENCH_STREAM_RUNS (BENCH_RUNS),
# (the streams workload alternates motion-server with c/stream_floor.c and prints server CPU
# per delivered frame ÷ the floor's; alone: BENCH_ONLY=streams BENCH_STREAMS="500 1000 2000"
# BENCH_STREAM_SECONDS=10 BENCH_STREAM_RUNS=3 Benchmarks/run.sh),
# BENCH_SESSION_WATCHERS (1000; quick 200) and BENCH_SESSIONS (100; quick 20): the sessions part
# of the streams workload, watchers spread over live sessions, alternating with the floor
# (alone: BENCH_ONLY=sessions), BENCH_MAX_LEVELS ("500 1000 1500 2000 2500 3000") and
# BENCH_MAX_SECONDS (8): the search for the most streams one server core holds (full run, or
# alone: BENCH_ONLY=maxstreams),
# BENCH_WRK_SECONDS (10; quick 3), BENCH_WRK_CONNECTIONS (32), BENCH_PROFILE (1: perf/callgrind
# profiles when the tools exist; 0 skips), BENCH_ONLY (subset: "kernel timeline scaling exports
# http instructions streams sessions maxstreams"; streams includes sessions, and maxstreams on a full run), BENCH_RESULTS (where to write the results; default Benchmarks/RESULTS.md for a
# full run of everything, Benchmarks/out/RESULTS.partial.md for a BENCH_ONLY subset,
# Benchmarks/out/RESULTS.quick.md for a quick one).
#
# Servers bind 127.0.0.1 only (motion-server on an ephemeral port, nginx on a free one) and
# everything started here is stopped on exit. Raw output goes to Benchmarks/out/<date>/.
set -euo pipefail

BENCH="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$BENCH/.." && pwd)"
cd "$ROOT"

QUICK="${BENCH_QUICK:-0}"
[ "$QUICK" = "0" ] && QUICK=""
if [ -n "$QUICK" ]; then
  RUNS="${BENCH_RUNS:-3}"
  STREAM_LEVELS="${BENCH_STREAMS:-100 200 500}"
  STREAM_SECONDS="${BENCH_STREAM_SECONDS:-5}"
  SESSION_WATCHERS="${BENCH_SESSION_WATCHERS:-200}"
  SESSION_COUNT="${BENCH_SESSIONS:-20}"
  WRK_SECONDS="${BENCH_WRK_SECONDS:-3}"
  RESULTS="${BENCH_RESULTS:-$BENCH/out/RESULTS.quick.md}"
else
  RUNS="${BENCH_RUNS:-5}"
  STREAM_LEVELS="${BENCH_STREAMS:-1000 2000 5000}"
  STREAM_SECONDS="${BENCH_STREAM_SECONDS:-30}"
  SESSION_WATCHERS="${BENCH_SESSION_WATCHERS:-1000}"
  SESSION_COUNT="${BENCH_SESSIONS:-100}"
  WRK_SECONDS="${BENCH_WRK_SECONDS:-10}"
  RESULTS="${BENCH_RESULTS:-$BENCH/RESULTS.md}"
  # A subset (BENCH_ONLY) never replaces the recorded results of a full run.
  [ -n "${BENCH_ONLY:-}" ] && RESULTS="${BENCH_RESULTS:-$BENCH/out/RESULTS.partial.md}"
fi
STREAM_RUNS="${BENCH_STREAM_RUNS:-$RUNS}"
MAX_LEVELS="${BENCH_MAX_LEVELS:-500 1000 1500 2000 2500 3000}"
MAX_SECONDS="${BENCH_MAX_SECONDS:-8}"
WRK_CONNECTIONS="${BENCH_WRK_CONNECTIONS:-32}"
PROFILE="${BENCH_PROFILE:-1}"
ONLY="${BENCH_ONLY:-kernel timeline scaling exports http instructions streams}"
SWIFT="${SWIFT:-swift}"
export BENCH_RUNS="$RUNS"
[ -n "$QUICK" ] && export BENCH_QUICK=1

STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
OUT="$BENCH/out/$STAMP"
mkdir -p "$OUT/bin"
SAMPLES="$OUT/samples.txt"
: > "$SAMPLES"
# The command as typed (make sets MAKELEVEL for what it runs).
if [ -n "${MAKELEVEL:-}" ]; then INVOKED="make bench"; else INVOKED="Benchmarks/run.sh"; fi
if [ -n "$QUICK" ]; then INVOKED="BENCH_QUICK=1 $INVOKED"; fi
COMMAND="${BENCH_COMMAND:-$INVOKED}"
START_TIME="$(date -u '+%Y-%m-%d %H:%M:%S UTC')"

log() { printf '\n== %s\n' "$*"; }
wants() { case " $ONLY " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# --- processes we start, stopped on exit ------------------------------------------------
STARTED_PIDS=()
TMP="$(mktemp -d)"
cleanup() {
  local pid
  for pid in "${STARTED_PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  sleep 0.5
  for pid in "${STARTED_PIDS[@]:-}"; do
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Drops a pid we have waited for from the list (so a reused pid is never signalled).
forget() {
  local keep=() pid
  for pid in "${STARTED_PIDS[@]:-}"; do
    [ -n "$pid" ] && [ "$pid" != "$1" ] && keep+=("$pid")
  done
  STARTED_PIDS=("${keep[@]:-}")
}

# --- cores: the server on the first half, load generators on the second ---------------
NPROC="$(nproc)"
if [ "$NPROC" -ge 2 ] && command -v taskset >/dev/null; then
  HALF=$(( NPROC / 2 ))
  SERVER_CPUS="0-$(( HALF - 1 ))"
  LOAD_CPUS="$HALF-$(( NPROC - 1 ))"
  LOAD_THREADS=$(( NPROC - HALF ))
  SERVER_PIN=(taskset -c "$SERVER_CPUS")
  LOAD_PIN=(taskset -c "$LOAD_CPUS")
else
  SERVER_CPUS="(not pinned)"; LOAD_CPUS="(not pinned)"; LOAD_THREADS=1
  SERVER_PIN=(); LOAD_PIN=()
fi
# Thousands of streams need thousands of descriptors, in the server and in the client.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# --- tools and builds --------------------------------------------------------------------
log "tools"
[ -x "$ROOT/scripts/install-deps.sh" ] && "$ROOT/scripts/install-deps.sh"
"$BENCH/scripts/install-tools.sh"
HAVE_PERF=""; HAVE_CALLGRIND=""
if [ "$PROFILE" = "1" ]; then
  command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1 && HAVE_PERF=1
  command -v valgrind >/dev/null && HAVE_CALLGRIND=1
fi
echo "perf: ${HAVE_PERF:-no}, callgrind: ${HAVE_CALLGRIND:-no}; server CPUs $SERVER_CPUS, load CPUs $LOAD_CPUS"

# Other engineers edit Sources/ while we build: retry a build that saw a file change.
build() {
  local attempt
  for attempt in 1 2 3 4 5; do
    if "$@" > "$TMP/build.log" 2>&1; then tail -1 "$TMP/build.log"; return 0; fi
    if grep -q "was modified during the build" "$TMP/build.log"; then
      echo "(a source file changed during the build; retrying)"; sleep 5; continue
    fi
    # SwiftPM 6.3 plans the first build of the benchmarks after a file was added to or
    # removed from the main package with the path dependency's old file list ("cannot find
    # 'NewType' in scope", or "missing inputs: …/Removed.swift"), and after a target was
    # added to it with the old target list ("no such module 'CSanitizerHooks'", the first
    # `make bench` after that target came); the next build sees the new lists.
    if [ "$attempt" = 1 ] && grep -q -e "error: cannot find .* in scope" -e "because of missing inputs" \
        -e "error: no such module" "$TMP/build.log"; then
      echo "(the build planned with an old file or target list; retrying once)"; continue
    fi
    cat "$TMP/build.log" >&2
    return 1
  done
  cat "$TMP/build.log" >&2
  return 1
}

log "build (release)"
build "$SWIFT" build -c release --product motion-server
SERVER_BIN="$("$SWIFT" build -c release --product motion-server --show-bin-path)/motion-server"
BENCH_BIN=""
if wants kernel || wants timeline || wants scaling || wants exports; then  # not needed by http and streams alone
  build "$SWIFT" build -c release --package-path "$BENCH" --scratch-path "$BENCH/.build"
  BENCH_BIN="$("$SWIFT" build -c release --package-path "$BENCH" --scratch-path "$BENCH/.build" --show-bin-path)"
fi
gcc -O2 -o "$OUT/bin/spring_kernel" "$BENCH/c/spring_kernel.c" -lm
gcc -O2 -o "$OUT/bin/stream_load" "$BENCH/c/stream_load.c" -lm
gcc -O2 -o "$OUT/bin/stream_floor" "$BENCH/c/stream_floor.c" -lm
echo "motion-server: $SERVER_BIN"
echo "benchmarks: $BENCH_BIN"

# Runs a benchmark command, keeps its output, and collects its SAMPLE/NOTE lines.
# Non-SAMPLE lines are shown as they come.
collect() {
  local name="$1"; shift
  local status
  set +e
  "$@" 2>&1 | tee "$TMP/collect.txt" | grep --line-buffered -vE '^SAMPLE '
  status=${PIPESTATUS[0]}
  set -e
  cat "$TMP/collect.txt" >> "$OUT/$name.log"
  grep -E '^(SAMPLE|NOTE) ' "$TMP/collect.txt" >> "$SAMPLES" || true
  if [ "$status" -ne 0 ]; then
    echo "$name failed (exit $status); see $OUT/$name.log" >&2
    tail -5 "$OUT/$name.log" >&2
    return "$status"
  fi
}

# Self and inclusive top functions of a perf.data file: perf_tables <perf.data> <file>
# (<file>: self time; <file minus .txt>-inclusive.txt: inclusive time).
perf_tables() {
  perf report -i "$1" --stdio --no-children --percent-limit 0.7 2>/dev/null | grep -E '^ +[0-9.]+%' > "$2" || true
  perf script -i "$1" 2>/dev/null | "$SWIFT" demangle --simplified \
    | python3 "$BENCH/scripts/perf-inclusive.py" --top 30 > "${2%.txt}-inclusive.txt" 2>/dev/null || true
}

# Profiles a running process while a load runs: perf_process <pid> <seconds> <file>
perf_process() {
  [ -n "$HAVE_PERF" ] || return 0
  perf record -q -g -p "$1" -o "$3.data" -- sleep "$2" > /dev/null 2>&1 || true
  perf_tables "$3.data" "$3"
}

# --- 1. spring kernel vs C -----------------------------------------------------------------
if wants kernel; then
  log "1. spring kernel: Swift vs C (gcc -O2), $RUNS alternating runs"
  for run in $(seq 1 "$RUNS"); do
    for variant in lanes perlane lanebasis; do
      collect kernel "${LOAD_PIN[@]}" "$OUT/bin/spring_kernel" "$variant"
      collect kernel "${LOAD_PIN[@]}" "$BENCH_BIN/bench-kernel" "$variant"
    done
    collect kernel "${LOAD_PIN[@]}" "$OUT/bin/spring_kernel" compact
    grep -E '^SAMPLE kernel' "$OUT/kernel.log" | tail -7 | sed 's/^SAMPLE /  /'
  done
fi

# --- 2. timeline throughput ----------------------------------------------------------------
if wants timeline; then
  log "2. timeline throughput (100 tracks, 60 s at 60 fps)"
  collect timeline "${LOAD_PIN[@]}" "$BENCH_BIN/bench-timeline"
  if [ -n "$HAVE_PERF" ]; then
    echo "profiling the full path with perf"
    BENCH_PROFILE=1 BENCH_LOOPS=$([ -n "$QUICK" ] && echo 5 || echo 20) \
      perf stat -e task-clock,cycles,instructions,branches,branch-misses,cache-misses \
      -o "$OUT/perf-stat-timeline.txt" "$BENCH_BIN/bench-timeline" > /dev/null 2>&1 || true
    BENCH_PROFILE=1 BENCH_LOOPS=$([ -n "$QUICK" ] && echo 5 || echo 20) \
      perf record -q -g -o "$OUT/perf-timeline.data" "$BENCH_BIN/bench-timeline" > /dev/null 2>&1 || true
    perf_tables "$OUT/perf-timeline.data" "$OUT/profile-timeline.txt"
    head -12 "$OUT/profile-timeline-inclusive.txt" | cut -c1-160
  fi
  if [ -n "$HAVE_CALLGRIND" ]; then
    echo "profiling the full path with callgrind (10 s window, one response)"
    BENCH_PROFILE=1 BENCH_LOOPS=1 BENCH_SECONDS=10 \
      valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.timeline.out" \
      "$BENCH_BIN/bench-timeline" > /dev/null 2>&1 || true
    if [ -f "$OUT/callgrind.timeline.out" ]; then
      callgrind_annotate --inclusive=no "$OUT/callgrind.timeline.out" 2>/dev/null | head -40 > "$OUT/callgrind-timeline.txt" || true
      callgrind_annotate --inclusive=yes "$OUT/callgrind.timeline.out" 2>/dev/null | head -40 > "$OUT/callgrind-timeline-inclusive.txt" || true
    fi
  fi
fi

# --- 5. scaling ------------------------------------------------------------------------------
if wants scaling; then
  log "5. scaling: frames, tracks, depth, path size, keyframes, stagger size"
  collect scaling "${LOAD_PIN[@]}" "$BENCH_BIN/bench-scaling"
fi

# --- 6. output formats and keyframe reduction ------------------------------------------------
if wants exports; then
  log "6. output formats and keyframe reduction"
  collect exports "${LOAD_PIN[@]}" "$BENCH_BIN/bench-exports"
fi

# --- servers -----------------------------------------------------------------------------------
SERVER_PID=""; SERVER_PORT=""
start_server() {
  : > "$TMP/server.out"
  # Every load client connects from 127.0.0.1: no per-address connection limit here.
  # shellcheck disable=SC2086 # BENCH_SERVER_ARGS is a list of options
  MOTION_MAX_CONNECTIONS_PER_ADDRESS=0 "${SERVER_PIN[@]}" "$SERVER_BIN" --host 127.0.0.1 --port 0 --log-level warning ${BENCH_SERVER_ARGS:-} \
    > "$TMP/server.out" 2> "$OUT/server.err" &
  SERVER_PID=$!
  STARTED_PIDS+=("$SERVER_PID")
  local i
  for i in $(seq 1 100); do
    SERVER_PORT="$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$TMP/server.out" 2>/dev/null | head -1 | sed 's/.*://')" || true
    [ -n "$SERVER_PORT" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$OUT/server.err" >&2; echo "motion-server exited" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$SERVER_PORT" ] || { echo "motion-server did not print its address" >&2; exit 1; }
  echo "motion-server pid $SERVER_PID on 127.0.0.1:$SERVER_PORT (CPUs $SERVER_CPUS)"
}
stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  local i
  for i in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  forget "$SERVER_PID"
  SERVER_PID=""
}
# After a load run: if motion-server died, say so in the results and start a new one.
check_server() {  # check_server <what was running>
  kill -0 "$SERVER_PID" 2>/dev/null && return 0
  local status=0 how
  wait "$SERVER_PID" 2>/dev/null || status=$?
  how="exit status $status"
  [ "$status" -gt 128 ] && how="killed by signal $(( status - 128 )) ($(kill -l $(( status - 128 )) 2>/dev/null || echo '?'))"
  echo "!! motion-server (pid $SERVER_PID) died during $1: $how; starting a new one" >&2
  tail -5 "$OUT/server.err" >&2 2>/dev/null || true
  echo "NOTE motion-server died during $1 ($how); the figures of that run include the failure, and a new server was started" >> "$SAMPLES"
  cp "$OUT/server.err" "$OUT/server-died-$(date -u +%H%M%S).err" 2>/dev/null || true
  forget "$SERVER_PID"
  SERVER_PID=""
  start_server
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# --- 3. HTTP keyframes vs nginx -------------------------------------------------------------
if wants http; then
  log "3. HTTP keyframes: wrk against motion-server and nginx (same bytes), $RUNS alternating runs"
  start_server
  # The small document: one tween, one property, 1 s at 60 fps (61 frames).
  printf '%s' '{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":"quadratic.inOut","properties":[{"path":"x","to":320}]}}' > "$OUT/small.json"
  NGINX_DIR="$TMP/nginx"
  mkdir -p "$NGINX_DIR/www/v1" "$NGINX_DIR/tmp"
  # nginx's workers drop to an unprivileged user when started as root: let them read.
  chmod 755 "$TMP" "$NGINX_DIR" "$NGINX_DIR/www" "$NGINX_DIR/www/v1"
  status="$(curl -s -o "$NGINX_DIR/www/v1/timelines" -w '%{http_code}' -H 'Content-Type: application/json' \
            --data-binary @"$OUT/small.json" "http://127.0.0.1:$SERVER_PORT/v1/timelines")"
  [ "$status" = "200" ] || { echo "POST /v1/timelines answered $status" >&2; exit 1; }
  chmod 644 "$NGINX_DIR/www/v1/timelines"
  cp "$NGINX_DIR/www/v1/timelines" "$OUT/small-response.json"
  NGINX_PORT="$(free_port)"
  cat > "$NGINX_DIR/nginx.conf" <<EOF
# Generated by Benchmarks/run.sh: the reference for workload 3. One worker (on the server's
# CPUs, like motion-server), loopback only, serving the exact response bytes of
# POST /v1/timelines as a static file. nginx answers POST to a static file with 405;
# error_page 405 =200 re-serves the file with 200, so wrk sends both servers the same request.
worker_processes 1;
daemon off;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  server_tokens off;
  sendfile on;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  open_file_cache max=16;
  client_body_temp_path $NGINX_DIR/tmp/body;
  proxy_temp_path $NGINX_DIR/tmp/proxy;
  fastcgi_temp_path $NGINX_DIR/tmp/fastcgi;
  uwsgi_temp_path $NGINX_DIR/tmp/uwsgi;
  scgi_temp_path $NGINX_DIR/tmp/scgi;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $NGINX_DIR/www;
    etag off;
    location = /v1/timelines {
      default_type application/json;
      error_page 405 =200 \$uri;
    }
  }
}
EOF
  NGINX_BIN="$(command -v nginx || echo /usr/sbin/nginx)"
  "${SERVER_PIN[@]}" "$NGINX_BIN" -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" > "$OUT/nginx.out" 2>&1 &
  NGINX_PID=$!
  STARTED_PIDS+=("$NGINX_PID")
  for i in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$NGINX_PORT/" && break; sleep 0.1; done
  curl -s -o "$TMP/nginx-body" -H 'Content-Type: application/json' --data-binary @"$OUT/small.json" \
    "http://127.0.0.1:$NGINX_PORT/v1/timelines"
  if ! cmp -s "$TMP/nginx-body" "$OUT/small-response.json"; then
    echo "nginx does not serve the same bytes; it answered:" >&2
    head -c 300 "$TMP/nginx-body" >&2; echo >&2
    cat "$NGINX_DIR/error.log" >&2 2>/dev/null || true
    exit 1
  fi
  echo "nginx pid $NGINX_PID on 127.0.0.1:$NGINX_PORT serves the same $(wc -c < "$OUT/small-response.json") bytes"

  wrk_run() {  # wrk_run <key> <url> <seconds>   (WRK_SAME_DOCUMENT / WRK_IF_NONE_MATCH pass through)
    WRK_BODY_FILE="$OUT/small.json" "${LOAD_PIN[@]}" wrk -t"$LOAD_THREADS" -c"$WRK_CONNECTIONS" -d"$3"s \
      -s "$BENCH/scripts/wrk-post.lua" "$2" > "$TMP/wrk.txt" 2>&1 || true
    cat "$TMP/wrk.txt" >> "$OUT/http.log"
    local line
    line="$(grep '^WRKRESULT' "$TMP/wrk.txt" | sed 's/^WRKRESULT //')"
    [ -n "$line" ] || { echo "wrk produced no result:" >&2; cat "$TMP/wrk.txt" >&2; return 1; }
    [ "$1" = "-" ] || echo "SAMPLE $1 $line" >> "$SAMPLES"
    echo "  $1: $line"
  }
  MOTION_URL="http://127.0.0.1:$SERVER_PORT/v1/timelines"
  NGINX_URL="http://127.0.0.1:$NGINX_PORT/v1/timelines"
  wrk_run - "$NGINX_URL" 1 > /dev/null   # warm-up
  wrk_run - "$MOTION_URL" 1 > /dev/null
  for run in $(seq 1 "$RUNS"); do
    wrk_run http.nginx "$NGINX_URL" "$WRK_SECONDS"
    wrk_run http.motion "$MOTION_URL" "$WRK_SECONDS"
    check_server "wrk run $run"
    MOTION_URL="http://127.0.0.1:$SERVER_PORT/v1/timelines"
  done
  # Cached, reported separately: the identical document with If-None-Match carrying its
  # ETag, answered 304 without computing (no goal; the goal above is for distinct documents).
  ETAG="$(curl -s -D - -o /dev/null -H 'Content-Type: application/json' --data-binary @"$OUT/small.json" \
          "$MOTION_URL" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')"
  if [ -n "$ETAG" ]; then
    for run in $(seq 1 "$RUNS"); do
      WRK_SAME_DOCUMENT=1 WRK_IF_NONE_MATCH="$ETAG" wrk_run http.cached "$MOTION_URL" "$WRK_SECONDS"
      check_server "cached wrk run $run"
      MOTION_URL="http://127.0.0.1:$SERVER_PORT/v1/timelines"
    done
  fi
  if [ -n "$HAVE_PERF" ]; then
    echo "profiling motion-server under wrk"
    WRK_BODY_FILE="$OUT/small.json" "${LOAD_PIN[@]}" wrk -t"$LOAD_THREADS" -c"$WRK_CONNECTIONS" -d"$(( WRK_SECONDS + 2 ))"s \
      -s "$BENCH/scripts/wrk-post.lua" "$MOTION_URL" > /dev/null 2>&1 &
    WRK_PID=$!
    STARTED_PIDS+=("$WRK_PID")
    sleep 1
    perf_process "$SERVER_PID" "$WRK_SECONDS" "$OUT/profile-http.txt"
    wait "$WRK_PID" 2>/dev/null || true
    forget "$WRK_PID"
    head -12 "$OUT/profile-http-inclusive.txt" | cut -c1-160
  fi
  kill "$NGINX_PID" 2>/dev/null || true
  wait "$NGINX_PID" 2>/dev/null || true
  forget "$NGINX_PID"
  stop_server
fi

# --- 7. instructions per request (callgrind) ------------------------------------------------
# Counts that do not move with machine noise: motion-server, the minimal libmicrohttpd server
# (c/mhd_minimal.c) and nginx answering the same bytes; per sample for 100 tracks.
if wants instructions; then
  if command -v valgrind >/dev/null; then
    log "7. instructions per request (callgrind): motion-server, minimal libmicrohttpd server, nginx"
    gcc -O2 -Wall -o "$OUT/bin/mhd_minimal" "$BENCH/c/mhd_minimal.c" -lmicrohttpd -lpthread
    python3 "$BENCH/scripts/instructions.py" --server "$SERVER_BIN" --minimal "$OUT/bin/mhd_minimal" \
      --out "$OUT" 2>&1 | tee -a "$OUT/instructions.log"
  else
    echo "NOTE instructions: valgrind is not installed; no instruction counts" >> "$SAMPLES"
  fi
fi

# --- 4. live streams -----------------------------------------------------------------------------
# Parts: streams at each level (streams), watchers over live sessions (streams or sessions), the
# most streams one core holds (maxstreams, or streams on a full run).
WANT_MAX=""
if wants maxstreams || { wants streams && [ -z "$QUICK" ]; }; then WANT_MAX=1; fi
if wants streams || wants sessions || [ -n "$WANT_MAX" ]; then
  log "4. live streams (60 fps), alternating with the floor"
  start_server
  # The floor (c/stream_floor.c): the same frames, one send per frame per stream per tick,
  # on the server's CPUs; measured by the same client, alternating with motion-server.
  "${SERVER_PIN[@]}" "$OUT/bin/stream_floor" -h 127.0.0.1 -p 0 > "$TMP/floor.out" 2> "$OUT/floor.err" &
  FLOOR_PID=$!
  STARTED_PIDS+=("$FLOOR_PID")
  FLOOR_PORT=""
  for i in $(seq 1 50); do
    FLOOR_PORT="$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$TMP/floor.out" 2>/dev/null | head -1 | sed 's/.*://')" || true
    [ -n "$FLOOR_PORT" ] && break
    sleep 0.1
  done
  [ -n "$FLOOR_PORT" ] || { echo "stream_floor did not print its address" >&2; cat "$OUT/floor.err" >&2; exit 1; }
  echo "stream_floor pid $FLOOR_PID on 127.0.0.1:$FLOOR_PORT (CPUs $SERVER_CPUS)"
  stream_run() {  # stream_run <key> <port> <pid> <level> <label> [stream_load options...]
    local key="$1" port="$2" pid="$3" level="$4" label="$5"
    shift 5
    "${LOAD_PIN[@]}" "$OUT/bin/stream_load" -p "$port" -n "$level" -d "$STREAM_SECONDS" -s "$pid" \
      -k "$key" "$@" > "$TMP/stream.txt" 2>&1 || { cat "$TMP/stream.txt" >&2; exit 1; }
    cat "$TMP/stream.txt" >> "$OUT/streams.log"
    grep '^SAMPLE ' "$TMP/stream.txt" >> "$SAMPLES"
    echo "  $label: $(grep -v '^SAMPLE ' "$TMP/stream.txt")"
    sleep 2   # let the server close the last connections
  }
  # Server CPU per delivered frame, motion-server ÷ the floor (medians of the runs so far):
  # floor_ratio <motion key> <floor key> <label>
  floor_ratio() {
    grep -hE "^SAMPLE ($1|$2) " "$SAMPLES" | python3 -c '
import re, statistics, sys
mine, floor, label = sys.argv[1:4]
per = {mine: [], floor: []}
for line in sys.stdin:
    m = re.match(r"SAMPLE (\S+) .*server_cpu_us_per_frame=([0-9.]+)", line)
    if m and m.group(1) in per: per[m.group(1)].append(float(m.group(2)))
if per[mine] and per[floor]:
    s, f = statistics.median(per[mine]), statistics.median(per[floor])
    print(f"  {label}: server CPU per frame {s:.2f} us, floor {f:.2f} us: {s / f:.2f}x the floor (goal <= 2.0)")
' "$1" "$2" "$3"
  }
  wants streams || STREAM_LEVELS=""
  [ -n "$STREAM_LEVELS" ] && echo "streams at $STREAM_LEVELS concurrent (${STREAM_SECONDS} s, $STREAM_RUNS runs each)"
  for level in $STREAM_LEVELS; do
    for run in $(seq 1 "$STREAM_RUNS"); do
      stream_run "stream.$level" "$SERVER_PORT" "$SERVER_PID" "$level" "run $run, motion-server"
      check_server "stream run $run at $level streams"
      stream_run "floor.$level" "$FLOOR_PORT" "$FLOOR_PID" "$level" "run $run, floor"
    done
    floor_ratio "stream.$level" "floor.$level" "$level streams"
  done
  if wants streams || wants sessions; then
    # Watchers over live sessions (stream_load -S): each run creates its own sessions.
    echo "$SESSION_WATCHERS watchers over $SESSION_COUNT sessions (${STREAM_SECONDS} s, $STREAM_RUNS runs)"
    for run in $(seq 1 "$STREAM_RUNS"); do
      stream_run "session.$SESSION_WATCHERS" "$SERVER_PORT" "$SERVER_PID" "$SESSION_WATCHERS" "run $run, motion-server" -S "$SESSION_COUNT"
      check_server "session run $run"
      stream_run "sessionfloor.$SESSION_WATCHERS" "$FLOOR_PORT" "$FLOOR_PID" "$SESSION_WATCHERS" "run $run, floor" -S "$SESSION_COUNT"
    done
    floor_ratio "session.$SESSION_WATCHERS" "sessionfloor.$SESSION_WATCHERS" "$SESSION_WATCHERS watchers / $SESSION_COUNT sessions"
  fi
  if [ -n "$WANT_MAX" ]; then
    # The most streams one server core holds at 60 fps: short runs at rising levels, each server
    # in turn, until a level misses >= 99.9 % delivered or p99 lateness < 16.7 ms (report.py
    # takes the highest level passed with every lower one passed).
    echo "most streams per server core: levels $MAX_LEVELS, ${MAX_SECONDS} s each (stops at the first miss)"
    max_passes() {  # max_passes <key>: the last run at <key> met both bounds
      grep -E "^SAMPLE $1 " "$SAMPLES" | tail -1 | python3 -c '
import re, sys
line = sys.stdin.read()
d = float(re.search(r"delivered_ratio=([0-9.eE+-]+)", line).group(1)) if line else 0
p = float(re.search(r"p99_ms=([0-9.naN]+)", line).group(1)) if line else 99
sys.exit(0 if d >= 0.999 and p < 16.7 else 1)'
    }
    motion_ok=1; floor_ok=1
    for level in $MAX_LEVELS; do
      [ -n "$motion_ok$floor_ok" ] || break
      if [ -n "$motion_ok" ]; then
        STREAM_SECONDS="$MAX_SECONDS" stream_run "max.motion.$level" "$SERVER_PORT" "$SERVER_PID" "$level" "$level streams, motion-server"
        check_server "max-streams run at $level"
        max_passes "max.motion.$level" || motion_ok=""
      fi
      if [ -n "$floor_ok" ]; then
        STREAM_SECONDS="$MAX_SECONDS" stream_run "max.floor.$level" "$FLOOR_PORT" "$FLOOR_PID" "$level" "$level streams, floor"
        max_passes "max.floor.$level" || floor_ok=""
      fi
    done
  fi
  kill "$FLOOR_PID" 2>/dev/null || true
  wait "$FLOOR_PID" 2>/dev/null || true
  forget "$FLOOR_PID"
  if [ -n "$HAVE_PERF" ] && [ -n "$STREAM_LEVELS" ]; then
    top_level="${STREAM_LEVELS##* }"
    echo "profiling motion-server with $top_level streams"
    "${LOAD_PIN[@]}" "$OUT/bin/stream_load" -p "$SERVER_PORT" -n "$top_level" -d "$(( STREAM_SECONDS < 12 ? STREAM_SECONDS : 12 ))" \
      -s "$SERVER_PID" -k "profile" > "$TMP/stream-profile.txt" 2>&1 &
    LOAD_PID=$!
    STARTED_PIDS+=("$LOAD_PID")
    sleep 4
    perf_process "$SERVER_PID" 5 "$OUT/profile-streams.txt"
    wait "$LOAD_PID" 2>/dev/null || true
    forget "$LOAD_PID"
    head -12 "$OUT/profile-streams-inclusive.txt" | cut -c1-160
  fi
  stop_server
fi

# --- report --------------------------------------------------------------------------------------
log "summary"
python3 "$BENCH/scripts/report.py" --samples "$SAMPLES" --out-dir "$OUT" --results "$RESULTS" \
  --command "$COMMAND" --started "$START_TIME" --quick "${QUICK:-0}" --runs "$RUNS" \
  --stream-seconds "$STREAM_SECONDS" --stream-runs "$STREAM_RUNS" --max-seconds "$MAX_SECONDS" --wrk-seconds "$WRK_SECONDS" \
  --wrk-connections "$WRK_CONNECTIONS" --load-threads "$LOAD_THREADS" \
  --server-cpus "$SERVER_CPUS" --load-cpus "$LOAD_CPUS" --swift "$SWIFT"
echo
echo "raw output: $OUT"
echo "results: $RESULTS"
