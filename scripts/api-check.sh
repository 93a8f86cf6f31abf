#!/usr/bin/env bash
# The OpenAPI contract check: starts BINARY on a loopback port, runs schemathesis against it
# with the repository's openapi.yaml, then drives what schemathesis cannot (SSE, live session
# watchers, a session's lifecycle) validating every line against the same schemas, stops the
# server with SIGTERM while a stream is open and checks that it exits 0. About a minute on
# two cores.
#
#   scripts/api-check.sh .build/debug/motion-server      (what `make test-api` runs)
#
# Environment: API_CHECK_MAX_EXAMPLES (fuzzing cases per operation, default 100),
# API_CHECK_SEED (default fixed), API_CHECK_COVERAGE (coverage phase mode: `positive`, the
# default, ~25 s; `all` adds ~13k negative boundary cases, ~50 s more), API_CHECK_WORKERS
# (default 1: with more, Hypothesis's process-wide recursion limit races between threads
# and the deeply recursive document schema can fail spuriously).
set -euo pipefail

usage() { echo "usage: $0 BINARY" >&2; exit 2; }
[ $# -eq 1 ] || usage
binary=$1
[ -x "$binary" ] || { echo "api-check: '$binary' is not an executable (build it first: swift build)" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
spec="$root/openapi.yaml"
venv="$root/.venv"
schemathesis="$venv/bin/schemathesis"
python="$venv/bin/python"
[ -x "$schemathesis" ] || { echo "api-check: $schemathesis is missing (run: make deps-python)" >&2; exit 2; }

max_examples=${API_CHECK_MAX_EXAMPLES:-100}
seed=${API_CHECK_SEED:-20261122}
workers=${API_CHECK_WORKERS:-1}
coverage_mode=${API_CHECK_COVERAGE:-positive}

work=$(mktemp -d "${TMPDIR:-/tmp}/api-check.XXXXXX")
server_pid=""

cleanup() {
    local status=$?
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -KILL "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [ "$status" -ne 0 ] && [ -s "$work/server.log" ]; then
        echo "--- server log (last 200 lines) ---" >&2
        tail -n 200 "$work/server.log" >&2
    fi
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step() { printf '\n== %s\n' "$*"; }
fail() { echo "api-check: FAIL: $*" >&2; exit 1; }

# ---------------------------------------------------------------------------- start
step "starting $binary on 127.0.0.1 (ephemeral port)"
# Sessions are created by the hundred: lift their limit so that none is refused (503).
"$binary" --host 127.0.0.1 --port 0 --log-level info --max-sessions 100000 \
    >"$work/server.out" 2>"$work/server.log" &
server_pid=$!

url=""
for _ in $(seq 1 100); do
    url=$(grep -o 'http://[^ ]*' "$work/server.out" 2>/dev/null | head -n 1 || true)
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || fail "the server exited before listening"
    sleep 0.1
done
[ -n "$url" ] || fail "the server printed no http:// URL within 10 s"
case "$url" in
    http://127.0.0.1:*|http://\[::1\]:*|http://localhost:*) ;;
    *) fail "refusing to test a non-loopback address: $url" ;;
esac
echo "listening at $url (pid $server_pid)"

ready=""
for _ in $(seq 1 50); do
    if curl -fsS --max-time 2 "$url/healthz" >/dev/null 2>&1; then ready=1; break; fi
    sleep 0.1
done
[ -n "$ready" ] || fail "GET /healthz did not answer 200 within 5 s"

# The binary embeds openapi.yaml at build time: test the document it actually serves.
curl -fsS --max-time 5 "$url/openapi.yaml" -o "$work/served.yaml"
if ! cmp -s "$spec" "$work/served.yaml"; then
    fail "GET /openapi.yaml differs from $spec: the binary is stale; rebuild it (swift build) and rerun"
fi

# ---------------------------------------------------------------------------- schemathesis
# Hooks: schemathesis has no NDJSON deserializer, so every /v1/streams NDJSON body is checked
# line by line here against components/schemas/StreamLine (and for a well-formed ending);
# the first offending line is handed to schemathesis' response_schema_conformance.
cat >"$work/hooks.py" <<'PY'
import json
import os

import jsonschema_rs
import schemathesis
import yaml

with open(os.environ["API_CHECK_SPEC"], encoding="utf-8") as handle:
    _spec = yaml.safe_load(handle)
_line = jsonschema_rs.validator_for(
    {"$schema": "https://json-schema.org/draft/2020-12/schema",
     "$ref": "#/components/schemas/StreamLine", "components": _spec["components"]})


@schemathesis.deserializer("application/x-ndjson")
def ndjson(ctx, response):
    text = response.content.decode("utf-8")
    if not text.endswith("\n"):
        raise ValueError("NDJSON stream does not end with a newline")
    lines = [json.loads(line) for line in text[:-1].split("\n")]
    for line in lines:
        if not _line.is_valid(line):
            return line
    if not isinstance(lines[-1], dict) or lines[-1].get("end") is not True:
        raise ValueError(f"the stream's last line is not an end line: {lines[-1]!r}")
    frames = [line for line in lines if "values" in line]
    if [f["frame"] for f in frames] != list(range(len(frames))) or lines[-1]["frames"] != len(frames):
        raise ValueError(f"{len(frames)} frame lines, not numbered 0…n-1 or not matching the end line {lines[-1]!r}")
    return lines[-1]
PY

# POST /v1/streams is fuzzed in negative mode only (plus the spec's explicit examples),
# without extra query parameters (which the server rightly ignores), because a schema-valid
# document may legitimately stream for hours at speed 1. Its body, like that of POST
# /v1/sessions, is the same schema, read by the same decoder, as /v1/timelines, whose
# coverage phase (~4.5k boundary cases, ~13k more with API_CHECK_COVERAGE=all; most of the
# run time) is therefore not repeated for either.
# Positive data may be a 422: semantic checks (a path missing from `target`, shapes of
# from/to, sample limits) are outside JSON Schema; it must never be a 400.
cat >"$work/schemathesis.toml" <<TOML
seed = $seed
workers = $workers
request-timeout = 30
continue-on-failure = true
hooks = "$work/hooks.py"

[generation]
max-examples = $max_examples
database = "none"

[phases.coverage.generation]
mode = "$coverage_mode"

[phases.stateful]
enabled = false

[checks.positive_data_acceptance]
expected-statuses = ["2xx", "422"]

[checks.negative_data_rejection]
expected-statuses = ["400", "405", "413", "415", "422"]

[[operations]]
include-operation-id = "streamTimeline"
request-timeout = 10

[operations.phases.coverage]
enabled = false

[operations.phases.fuzzing.generation]
mode = "negative"
allow-extra-parameters = false

# An If-None-Match of * (or a tag that matches) is answered 304 for a document that would
# be a 200 (docs/authoring.md).
[[operations]]
include-operation-id = ["computeTimeline", "computeTimelineBatch"]

[operations.checks.positive_data_acceptance]
expected-statuses = ["2xx", "304", "422"]

[[operations]]
include-operation-id = "createSession"

[operations.phases.coverage]
enabled = false

# Generated ids repeat, so a PUT may find its id taken (409, answered before the body is
# read, so also for an invalid body).
[[operations]]
include-operation-id = "putSession"

[operations.phases.coverage]
enabled = false

[operations.checks.positive_data_acceptance]
expected-statuses = ["2xx", "409", "422"]

[operations.checks.negative_data_rejection]
expected-statuses = ["400", "405", "409", "413", "415", "422"]

# The playground's assets are files: any other name is simply not there (404).
[[operations]]
include-operation-id = "playgroundAsset"

[operations.checks.positive_data_acceptance]
expected-statuses = ["2xx", "404"]

[operations.checks.negative_data_rejection]
expected-statuses = ["400", "404", "405", "413", "415", "422"]

# A live session streams for as long as it runs: watchers are checked further below.
[[operations]]
include-operation-id = "watchSession"
enabled = false

# Problem pages exist for the service's problem names only; other names are 404.
[[operations]]
include-operation-id = "problemPage"

[operations.checks.positive_data_acceptance]
expected-statuses = ["2xx", "404"]

# Ids are random (404) or those of sessions created above, often completed (409) or with
# a window that rejects the seek (422).
[[operations]]
include-operation-id = ["getSession", "deleteSession", "commandSession", "retargetSession"]

[operations.checks.positive_data_acceptance]
expected-statuses = ["2xx", "404", "409", "422"]

[operations.checks.negative_data_rejection]
expected-statuses = ["400", "404", "405", "409", "413", "415", "422"]
TOML

checks=not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance,positive_data_acceptance,negative_data_rejection,missing_required_header,unsupported_method,allow_header_conformance

step "schemathesis run (seed $seed, max-examples $max_examples, coverage $coverage_mode, workers $workers)"
echo "checks: $checks"
set +e
(
    cd "$work"
    API_CHECK_SPEC="$spec" \
        "$schemathesis" --config-file "$work/schemathesis.toml" --no-color \
        run "$spec" --url "$url" \
        --phases examples,coverage,fuzzing \
        --checks "$checks" \
        --report junit --report-junit-path "$work/junit.xml"
) 2>&1 | tee "$work/schemathesis.log"
st_status=${PIPESTATUS[0]}
set -e

# A server that died under the tests (crash, abort, or a signal from elsewhere) is a failure
# of its own, whatever schemathesis made of the refused connections.
if ! kill -0 "$server_pid" 2>/dev/null; then
    died=0
    wait "$server_pid" || died=$?
    server_pid=""
    fail "the server exited during the schemathesis run (exit status $died; 128+n is signal n); see the server log below"
fi

# ---------------------------------------------------------------------------- streams, sessions, shutdown
# What schemathesis cannot drive: Server-Sent Events (it sends no Accept header), live session
# watchers (they stream as long as the session runs), a scripted session lifecycle, and a
# SIGTERM with a paced stream open, which must end with an interrupted `end` line while the
# server exits 0. Every body and stream line is validated against openapi.yaml's schemas.
step "streams and sessions: SSE, watchers, commands, graceful SIGTERM"
stream_status=0
API_CHECK_SPEC="$spec" "$python" - "$url" "$server_pid" <<'PY' || stream_status=$?
import json, os, signal, sys, threading, time, urllib.error, urllib.request

import jsonschema_rs
import yaml

url, pid = sys.argv[1], int(sys.argv[2])
spec = yaml.safe_load(open(os.environ["API_CHECK_SPEC"], encoding="utf-8"))
problems = []


def validator(name):
    return jsonschema_rs.validator_for(
        {"$schema": "https://json-schema.org/draft/2020-12/schema",
         "$ref": f"#/components/schemas/{name}", "components": spec["components"]})


def check(name, value, what):
    for error in validator(name).iter_errors(value):
        problems.append(f"{what}: {json.dumps(value)[:300]} does not match {name}: {error}")


def request(method, path, body=None, accept=None, timeout=10):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if accept:
        headers["Accept"] = accept
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, headers=headers, method=method)
    try:
        return urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as error:
        return error


def expect(method, path, body, status, schema, what):
    with request(method, path, body) as response:
        payload = response.read()
        if response.status != status:
            problems.append(f"{what}: {method} {path} answered {response.status}, expected {status}: {payload[:300]!r}")
            return None
        value = json.loads(payload) if payload else None
        if schema:
            check(schema, value, what)
        return value, response.headers


def read_stream(response, sse):
    """Every line (NDJSON) or (event, data) pair (SSE) until the stream ends."""
    text = response.read().decode("utf-8")
    if not sse:
        if text and not text.endswith("\n"):
            problems.append("NDJSON stream does not end with a newline")
        return [("", json.loads(line)) for line in text.splitlines() if line]
    if text and not text.endswith("\n\n"):
        problems.append("SSE stream does not end with a blank line")
    events = []
    for block in filter(None, text.split("\n\n")):
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((fields.get("event"), json.loads(fields.get("data", "null"))))
    return events


def check_lines(lines, schemas, what):
    for kind, data in lines:
        name = schemas.get(kind) if kind else schemas[""]
        if name is None:
            problems.append(f"{what}: unexpected SSE event {kind!r}")
        else:
            check(name, data, what)
    if not lines or lines[-1][1].get("end") is not True:
        problems.append(f"{what}: the stream does not finish with an end line")


examples = spec["components"]["requestBodies"]["TimelineDocument"]["content"]["application/json"]["examples"]

# --- /v1/streams as SSE (schemathesis sends no Accept header, so it only sees NDJSON).
stream_schemas = {"frame": "StreamFrame", "motion": "StreamEvent", "end": "StreamEnd"}
for name, example in examples.items():
    with request("POST", "/v1/streams?speed=0", example["value"], accept="text/event-stream") as response:
        if response.headers.get_content_type() != "text/event-stream":
            problems.append(f"streams SSE {name}: Content-Type {response.headers.get('Content-Type')}")
            continue
        check_lines(read_stream(response, sse=True), stream_schemas, f"streams SSE {name}")
print(f"streams: {len(examples)} example documents streamed as SSE and validated")

# --- Sessions: create, watch (NDJSON and SSE), steer, stop, conflict, delete.
session_schemas = {"": "SessionStreamLine", "frame": "SessionFrame", "motion": "SessionMotionEvent",
                   "session": "SessionEvent", "end": "SessionEnd"}
document = {"fps": 20, "target": {"x": 0, "tint": "#000000"},
            "motion": {"type": "group", "children": [
                {"type": "tween", "duration": 30, "properties": [{"path": "x", "to": 100}]},
                {"type": "tween", "duration": 30, "properties": [{"path": "tint", "to": "#ffffff"}]}]}}
created = expect("POST", "/v1/sessions?speed=1", document, 201, "SessionState", "create session")
if created:
    state, headers = created
    sid = state["id"]
    if headers.get("Location") != f"/v1/sessions/{sid}":
        problems.append(f"create session: Location {headers.get('Location')!r}")
    watched = {}

    def watch(sse):
        with request("GET", f"/v1/sessions/{sid}/frames", accept="text/event-stream" if sse else None, timeout=30) as response:
            watched[sse] = (response.status, response.headers.get_content_type(), read_stream(response, sse))

    watchers = [threading.Thread(target=watch, args=(sse,)) for sse in (False, True)]
    for thread in watchers:
        thread.start()
    time.sleep(0.4)
    steps = [({"command": "pause"}, "paused"), ({"command": "reverse"}, "paused"), ({"command": "resume"}, "reversing"),
             ({"command": "reverse"}, "running"), ({"command": "seek", "time": 5}, "running")]
    for body, wanted in steps:
        result = expect("POST", f"/v1/sessions/{sid}/commands", body, 200, "SessionState", f"command {body}")
        if result and result[0]["state"] != wanted:
            problems.append(f"command {body}: state {result[0]['state']}, expected {wanted}")
        time.sleep(0.1)
    expect("POST", f"/v1/sessions/{sid}/retarget", {"path": "x", "to": 50}, 200, "SessionState", "retarget a tween")
    expect("POST", f"/v1/sessions/{sid}/retarget", {"path": "nope", "to": 1}, 422, "Problem", "retarget an unknown path")
    expect("POST", f"/v1/sessions/{sid}/commands", {"command": "seek", "time": 1e9}, 422, "Problem", "seek outside the window")
    expect("POST", f"/v1/sessions/{sid}/commands", {"command": "jump"}, 400, "Problem", "unknown command")
    expect("POST", f"/v1/sessions/{sid}/commands", {"command": "stop"}, 200, "SessionState", "stop")
    conflict = expect("POST", f"/v1/sessions/{sid}/commands", {"command": "resume"}, 409, "Problem", "command after stop")
    if conflict and conflict[0].get("state") != "stopped":
        problems.append(f"command after stop: 409 without state 'stopped': {conflict[0]}")
    for thread in watchers:
        thread.join(15)
    for sse in (False, True):
        if sse not in watched:
            problems.append(f"session watcher (SSE {sse}) did not end after stop")
            continue
        status, media, lines = watched[sse]
        wanted = "text/event-stream" if sse else "application/x-ndjson"
        if status != 200 or media != wanted:
            problems.append(f"session watcher: {status} {media}, expected 200 {wanted}")
        check_lines(lines, session_schemas, f"session watcher ({media})")
        kinds = {line.get("event") for _, line in lines}
        if not {"paused", "resumed", "reversed", "seeked", "retargeted", "stopped"} <= kinds:
            problems.append(f"session watcher ({media}): command echoes missing, saw {sorted(k for k in kinds if k)}")
    expect("GET", f"/v1/sessions/{sid}", None, 200, "SessionState", "state after stop")
    expect("DELETE", f"/v1/sessions/{sid}", None, 204, None, "delete")
    for method, path in [("GET", f"/v1/sessions/{sid}"), ("DELETE", f"/v1/sessions/{sid}"),
                         ("GET", f"/v1/sessions/{sid}/frames")]:
        expect(method, path, None, 404, "Problem", f"{method} {path} after delete")
print("sessions: create, watch (NDJSON and SSE), commands, retarget, conflicts, delete checked")

# --- The answers libmicrohttpd makes before a request reaches the routes (schemathesis cannot
# send them): an oversized head (431) and an unknown HTTP version (505), each against its
# response in the spec. Every problem type a response pins must be one `Problem.type` lists.
import socket
from urllib.parse import urlsplit

listed = set(spec["components"]["schemas"]["Problem"]["properties"]["type"]["enum"])
for name, response in spec["components"]["responses"].items():
    schema = response.get("content", {}).get("application/problem+json", {}).get("schema", {})
    for part in schema.get("allOf", []):
        pinned = part.get("properties", {}).get("type", {}).get("const")
        if pinned and pinned not in listed:
            problems.append(f"responses/{name}: type {pinned} is not in Problem.type's enum")


def raw_answer(head):
    split = urlsplit(url)
    with socket.create_connection((split.hostname, split.port), timeout=10) as raw:
        raw.sendall(head)
        data = b""
        while chunk := raw.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def check_response(name, body, what):
    schema = spec["components"]["responses"][name]["content"]["application/problem+json"]["schema"]
    validator = jsonschema_rs.validator_for({"$schema": "https://json-schema.org/draft/2020-12/schema",
                                             **schema, "components": spec["components"]})
    for error in validator.iter_errors(json.loads(body)):
        problems.append(f"{what}: {body[:300]!r} does not match responses/{name}: {error}")


for head, status, name in [
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n", 431, "HeadersTooLarge"),
        (b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTPVersionNotSupported")]:
    got, body = raw_answer(head)
    if got != status:
        problems.append(f"{name}: answered {got}, expected {status}")
    else:
        check_response(name, body, name)
print("431 and 505 answers validated against their responses")

# --- SIGTERM with a /v1/streams response paced at real time over 60 s.
document = {"motion": {"type": "tween", "duration": 60, "properties": [{"path": "x", "from": 0, "to": 1}]}}
started = time.monotonic()
with request("POST", "/v1/streams?speed=1", document) as response:
    first = json.loads(response.readline())
    os.kill(pid, signal.SIGTERM)
    rest = [json.loads(line) for line in response.read().decode("utf-8").splitlines()]
elapsed = time.monotonic() - started
last = rest[-1] if rest else first
if last.get("interrupted") != "shutdown" or last.get("end") is not True:
    problems.append(f"SIGTERM: the open stream did not end with an interrupted end line: {last!r}")
check("StreamEnd", last, "SIGTERM end line")
if elapsed > 5:
    problems.append(f"SIGTERM: the open stream took {elapsed:.1f} s to end")
print(f"SIGTERM: open stream ended after {elapsed:.2f} s with {json.dumps(last)}")

for problem in problems:
    print("  problem:", problem)
sys.exit(1 if problems else 0)
PY

# The SIGTERM above (or, if that script failed early, this one) stops the server.
kill -TERM "$server_pid" 2>/dev/null || true
exit_status=0
for _ in $(seq 1 150); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$server_pid" 2>/dev/null; then
    exit_status=timeout
else
    wait "$server_pid" || exit_status=$?
fi
server_pid=""

# ---------------------------------------------------------------------------- summary
operations=$(grep -o 'tests="[0-9]*"' "$work/junit.xml" 2>/dev/null | head -n 1 | grep -o '[0-9]*' || echo "?")
cases=$(grep -A1 '^Test cases:' "$work/schemathesis.log" 2>/dev/null | tail -n 1 | sed 's/^ *//' || true)

step "summary"
printf '  %-28s %s\n' "schemathesis:" "$([ "$st_status" -eq 0 ] && echo passed || echo "FAILED (exit $st_status)") — $operations operations; ${cases:-no test cases}"
printf '  %-28s %s\n' "streams, sessions, SIGTERM:" "$([ "$stream_status" -eq 0 ] && echo passed || echo FAILED)"
printf '  %-28s %s\n' "server exit on SIGTERM:" "$([ "$exit_status" = 0 ] && echo "0 (clean)" || echo "FAILED ($exit_status)")"

[ "$st_status" -eq 0 ] && [ "$stream_status" -eq 0 ] && [ "$exit_status" = 0 ] || exit 1
echo "api-check: OK"
