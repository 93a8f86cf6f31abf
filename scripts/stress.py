#!/usr/bin/env python3
"""The abuse suite: black-box probes against a real motion-server, each starting its own.

    scripts/stress.py --binary .build/release/motion-server            (make stress)
    scripts/stress.py --binary .build/debug/motion-server --short      (CI, inside make test)
    scripts/stress.py --binary … --only slowloris,churn                (some probes)

Every probe is bounded in time and fails on a crash (the process is gone), a hang (no
answer to GET /healthz within 5 s while under attack), a leak (resident memory that does not
come back) or a wrong answer. The figures each probe measured are printed and, with
--json FILE, written out (README's Reliability section reports them). Standard library only.
"""

import argparse
import json
import math
import multiprocessing
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

HOST = "127.0.0.1"
RESULTS = {}


class ProbeFailure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise ProbeFailure(message)


# --------------------------------------------------------------------------- the server

class Server:
    def __init__(self, binary, *arguments):
        self.log = open(os.devnull, "w") if not os.environ.get("STRESS_SERVER_LOG") else open(os.environ["STRESS_SERVER_LOG"], "a")
        self.process = subprocess.Popen([binary, "--host", HOST, "--port", "0", "--log-level", "error", *arguments],
                                        stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if not match:
            self.process.kill()
            raise ProbeFailure(f"the server did not start: {line!r}")
        self.port = int(match.group(1))
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    @property
    def alive(self):
        return self.process.poll() is None

    def descriptors(self):
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def rss(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def stop(self, timeout=20):
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise ProbeFailure(f"the server did not exit within {timeout} s of SIGTERM")
        return self.process.returncode

    def assert_alive(self, what):
        check(self.alive, f"the server died during {what} (exit {self.process.returncode})")
        # From an address of its own, beside any per-address flood.
        status, _, _, elapsed = request(self, "GET", "/healthz", timeout=5, source="127.0.0.4")
        check(status == 200, f"/healthz answered {status} after {what}")
        return elapsed


def connect(server, timeout=5.0, source=None):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    if source:
        sock.bind((source, 0))
    sock.connect((HOST, server.port))
    return sock


def read_response(sock, head_only=False):
    """Reads one HTTP/1.1 response; returns (status, headers dict, body bytes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a full head ({data[:80]!r})")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if head_only:
        return status, headers, rest
    if "content-length" in headers:
        length = int(headers["content-length"])
        body = bytearray(rest)
        while len(body) < length:
            chunk = sock.recv(min(1 << 20, length - len(body)))
            if not chunk:
                raise ConnectionError("closed in the middle of a body")
            body += chunk
        return status, headers, bytes(body[:length])
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while True:
            while b"\r\n" not in rest:
                chunk = sock.recv(65536)
                if not chunk:
                    raise ConnectionError("closed in a chunked body")
                rest += chunk
            size_line, rest = rest.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                chunk = sock.recv(65536)
                if not chunk:
                    raise ConnectionError("closed in a chunk")
                rest += chunk
            body += rest[:size]
            rest = rest[size + 2:]
            if size == 0:
                return status, headers, body
    return status, headers, rest


def request(server, method, target, body=None, headers=None, timeout=10.0, source=None, head_only=False):
    """One request on a new connection: (status, headers, body, seconds). With `head_only`,
    only the response head is read (a paced stream may run for a long time)."""
    started = time.monotonic()
    sock = connect(server, timeout, source)
    try:
        payload = body.encode() if isinstance(body, str) else (body or b"")
        head = f"{method} {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        for name, value in (headers or {}).items():
            head += f"{name}: {value}\r\n"
        if body is not None:
            head += f"Content-Length: {len(payload)}\r\n"
        sock.sendall(head.encode() + b"\r\n" + payload)
        status, response_headers, response_body = read_response(sock, head_only=(method == "HEAD" or head_only))
        return status, response_headers, response_body, time.monotonic() - started
    finally:
        sock.close()


def post_json(server, target, document, **kwargs):
    return request(server, "POST", target, document, {"Content-Type": "application/json"}, **kwargs)


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class HealthSampler:
    """Measures GET /healthz latency on fresh connections from 127.0.0.3, in a process of its
    own so that the load generators' work (and Python's lock) never delays a sample."""

    def __init__(self, server, interval=0.02):
        self.server, self.interval = server, interval
        self.latencies, self.failures = [], []
        self.stopping = multiprocessing.Event()
        self.results = multiprocessing.Queue()
        self.process = multiprocessing.Process(target=self.run, daemon=True)

    def run(self):
        latencies, failures = [], []
        while not self.stopping.is_set():
            try:
                status, _, _, seconds = request(self.server, "GET", "/healthz", timeout=5, source="127.0.0.3")
                if status != 200:
                    failures.append(f"status {status}")
                latencies.append(seconds)
            except Exception as error:  # noqa: BLE001 - any failure is a finding
                failures.append(repr(error))
            time.sleep(self.interval)
        self.results.put((latencies, failures))

    def __enter__(self):
        self.process.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.latencies, self.failures = self.results.get(timeout=30)
        self.process.join(10)

    def report(self, name, limit_ms=50.0):
        check(not self.failures, f"{name}: /healthz failed {len(self.failures)} times: {self.failures[:3]}")
        check(self.latencies, f"{name}: no /healthz sample")
        p50, p99 = percentile(self.latencies, 50) * 1000, percentile(self.latencies, 99) * 1000
        check(p99 < limit_ms, f"{name}: /healthz p99 {p99:.1f} ms (limit {limit_ms} ms)")
        return {"healthz_samples": len(self.latencies), "healthz_p50_ms": round(p50, 2), "healthz_p99_ms": round(p99, 2)}


TWEEN = '{"fps":30,"motion":{"type":"tween","duration":1,"properties":[{"path":"x","from":0,"to":100}]}}'
LONG_TWEEN = '{"fps":30,"motion":{"type":"tween","duration":600,"properties":[{"path":"x","from":0,"to":100}]}}'


def heavy_document(tracks=2000, fps=100, duration=9.99):
    properties = ",".join(f'{{"path":"p{i}","from":0,"to":{i}}}' for i in range(tracks))
    return f'{{"fps":{fps},"motion":{{"type":"tween","duration":{duration},"easing":"ease-in-out","properties":[{properties}]}}}}'


# --------------------------------------------------------------------------- probes

def probe_crash_inputs(binary, short):
    """The inputs that killed the process once: three SVG arcs and tiny stream speeds."""
    server = Server(binary)
    try:
        arcs = ["M0 0 A50 1.7976931348623157e308 0 0 1 100 0", "M0 0 A1e-100 1 0 0 1 100 0",
                "M0 0 A50 2.2250738585072014e-308 0 0 1 100 0"]
        statuses = []
        for path in arcs:
            document = json.dumps({"fps": 10, "target": {}, "motion": {"type": "path", "path": path, "duration": 1, "output": "dot"}})
            status, headers, _, _ = post_json(server, "/v1/timelines", document)
            statuses.append(status)
            check(status < 500, f"arc {path!r}: {status}")
            server.assert_alive(f"the arc {path!r}")
        stream = '{"fps":1,"motion":{"type":"tween","duration":2,"properties":[{"path":"x","from":0,"to":1}]}}'
        for speed in ["1e-10", "5e-324", "0x1p-1074", "1e-300", "0.000001"]:
            sock = connect(server)
            head = f"POST /v1/streams?speed={speed} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(stream)}\r\n\r\n"
            sock.sendall(head.encode() + stream.encode())
            status, _, _ = read_response(sock, head_only=True)
            check(status in (200, 400), f"speed {speed}: {status}")
            time.sleep(0.2)
            sock.close()
        time.sleep(1.5)
        server.assert_alive("tiny speeds")
        return {"arc_statuses": statuses, "speeds_survived": 5}
    finally:
        server.stop()


def probe_framing(binary, short):
    """Framing cases: every one answered at once with the right status, or refused."""
    server = Server(binary, "--max-body-bytes", "100000")
    smuggled = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    n = len(smuggled)
    cases = [
        ("CL+TE", f"POST /v1/timelines HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", {400}),
        ("duplicate CL", "POST /v1/timelines HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", {400}),
        ("CL list", "POST /v1/timelines HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\n{}", {400}),
        ("TE identity", "POST /v1/timelines HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n{}", {501}),
        ("TE xchunked", "POST /v1/timelines HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n", {501}),
        ("invalid chunk size", "POST /v1/timelines HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", {400}),
        ("huge chunk size", "POST /v1/timelines HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n", {400, 413}),
        ("bare LF", "GET /healthz HTTP/1.1\nHost: x\n\n", {200}),
        ("space before colon", f"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length : {n}\r\n\r\n{smuggled}", {400}),
        ("obs-fold", f"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n {n}\r\n\r\n{smuggled}", {400}),
        ("no Host", "GET /healthz HTTP/1.1\r\n\r\n", {400}),
        ("%00", "GET /healthz%00x HTTP/1.1\r\nHost: x\r\n\r\n", {400}),
        ("1000 query parameters", "GET /healthz?" + "&".join(f"a{i}=1" for i in range(1000)) + " HTTP/1.1\r\nHost: x\r\n\r\n", {414}),
        ("oversized request line", "GET /" + "a" * 70000 + " HTTP/1.1\r\nHost: x\r\n\r\n", {414, 431}),
        ("oversized header", "GET /healthz HTTP/1.1\r\nHost: x\r\nX: " + "a" * 70000 + "\r\n\r\n", {431}),
        ("10000 headers", "GET /healthz HTTP/1.1\r\nHost: x\r\n" + "".join(f"X-{i}: 1\r\n" for i in range(10000)) + "\r\n", {431}),
        ("body over the limit (CL)", "POST /v1/timelines HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n", {413}),
        ("body over the limit (chunked)", "POST /v1/timelines HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
         + ("4000\r\n" + " " * 0x4000 + "\r\n") * 8, {413}),
        ("HTTP/2.0", "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", {505}),
        ("pipelining", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\n\r\n", {200}),
    ]
    results = {}
    try:
        for name, raw, expected in cases:
            sock = connect(server, timeout=3)
            started = time.monotonic()
            try:
                sock.sendall(raw.encode())
            except OSError:
                pass  # the server may refuse before the whole request is sent
            try:
                status, headers, body = read_response(sock)
            except (ConnectionError, OSError) as error:
                raise ProbeFailure(f"framing '{name}': no answer ({error})")
            elapsed = time.monotonic() - started
            sock.close()
            check(status in expected, f"framing '{name}': {status}, expected {sorted(expected)}")
            check(elapsed < 2, f"framing '{name}': answered after {elapsed:.1f} s")
            results[name] = status
        # A body that never finishes is cut by the minimum body rate (header timeout 10 s by default:
        # checked with a short one in the slow-client probe).
        server.assert_alive("the framing cases")
        return {"cases": len(cases), "statuses": results}
    finally:
        server.stop()


def probe_slowloris(binary, short):
    """Connections trickling headers: cut at the header timeout; normal requests stay fast."""
    count = 200 if short else 1000
    timeout = 2 if short else 10
    idle_timeout = 6 if short else 30
    server = Server(binary, "--header-timeout", str(timeout), "--connection-timeout", str(idle_timeout),
                    "--max-connections-per-address", "0")
    sockets = []
    idle = []
    try:
        opened = time.monotonic()
        for index in range(20):
            idle.append(connect(server, timeout=1, source=f"127.0.4.{1 + index}"))
        for index in range(count):
            sock = connect(server, timeout=1, source=f"127.0.1.{1 + index % 200}")
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            sockets.append(sock)
        started = time.monotonic()
        open_count = count
        with HealthSampler(server) as sampler:
            while time.monotonic() - started < timeout + 5:
                for sock in sockets:
                    try:
                        sock.send(b"X")
                    except OSError:
                        pass
                time.sleep(1)
                open_count = 0
                for sock in sockets:
                    try:
                        sock.setblocking(False)
                        data = sock.recv(4096)
                        if data and b"408" not in data[:20]:
                            open_count += 1
                        elif not data:
                            pass
                    except BlockingIOError:
                        open_count += 1
                    except OSError:
                        pass
                if open_count == 0:
                    break
        cut_after = time.monotonic() - started
        figures = sampler.report("slowloris")
        check(open_count == 0, f"slowloris: {open_count} of {count} trickling connections still open after {cut_after:.1f} s")
        # Connections that send nothing are left to the idle timeout, and cut by it.
        def idle_open():
            alive = 0
            for sock in idle:
                try:
                    sock.setblocking(False)
                    alive += sock.recv(1) != b""
                except BlockingIOError:
                    alive += 1
                except OSError:
                    pass
            return alive
        if time.monotonic() - opened < idle_timeout - 1:
            check(idle_open() == len(idle), "slowloris: an idle connection was cut before the idle timeout")
        while time.monotonic() - opened < idle_timeout + 5 and idle_open() > 0:
            time.sleep(0.5)
        idle_cut_after = time.monotonic() - opened
        check(idle_open() == 0, f"slowloris: idle connections still open {idle_cut_after:.1f} s after opening")
        server.assert_alive("slowloris")
        figures.update({"connections": count, "header_timeout_s": timeout, "all_cut_after_s": round(cut_after, 1),
                        "idle_timeout_s": idle_timeout, "idle_cut_after_s": round(idle_cut_after, 1)})
        return figures
    finally:
        for sock in sockets + idle:
            sock.close()
        server.stop()


def probe_address_flood(binary, short):
    """One address opens as many connections as it may; another address is still served."""
    limit = 200 if short else 1000
    server = Server(binary, "--max-connections-per-address", str(limit))
    flood = []
    try:
        refused = 0
        for _ in range(limit + 50):
            try:
                sock = connect(server, timeout=1)
                flood.append(sock)
            except OSError:
                refused += 1
        time.sleep(0.5)
        served = 0
        for _ in range(20):
            status, _, _, _ = request(server, "GET", "/healthz", timeout=5, source="127.0.0.2")
            served += status == 200
        check(served == 20, f"address flood: {served} of 20 requests from another address served")
        server.assert_alive("the address flood")
        return {"flood_connections": len(flood), "per_address_limit": limit, "other_address_served": f"{served}/20"}
    finally:
        for sock in flood:
            sock.close()
        server.stop()


def probe_churn(binary, short):
    """Connect, request, close, many times: no error, resident memory flat."""
    cycles = 2000 if short else 10000
    server = Server(binary)
    try:
        errors = 0
        first_rss = None
        for index in range(cycles):
            try:
                target = "/healthz" if index % 2 else "/v1/easings"
                status, _, _, _ = request(server, "GET", target, timeout=5)
                errors += status != 200
            except Exception:  # noqa: BLE001
                errors += 1
            if index == cycles // 10:
                first_rss = server.rss()
        last_rss = server.rss()
        check(errors == 0, f"churn: {errors} errors in {cycles} cycles")
        growth = last_rss - first_rss
        check(growth < 5 * 1024 * 1024, f"churn: resident memory grew {growth / 1e6:.1f} MB")
        server.assert_alive("churn")
        return {"cycles": cycles, "errors": errors, "rss_growth_mb": round(growth / 1e6, 2)}
    finally:
        server.stop()


def mutate(text, rng):
    choices = ['"', '{', '}', '[', ']', ',', ':', '-', '1e308', '-1e308', '1e-320', '0', 'null', 'true', '999999999',
               '"type"', '"tween"', '"spring"', '"path"', '"group"', '"sequence"', '"repeat"', '"stagger"', 'NaN', '\\u0000']
    data = list(text)
    for _ in range(rng.randint(1, 6)):
        operation = rng.random()
        position = rng.randrange(len(data) + 1)
        if operation < 0.3 and data:
            del data[min(position, len(data) - 1)]
        elif operation < 0.7:
            data[position:position] = list(rng.choice(choices))
        elif data:
            start = rng.randrange(len(data))
            data[position:position] = data[start:start + rng.randint(1, 40)]
    return "".join(data)


SEED_DOCUMENTS = [
    TWEEN,
    '{"fps":60,"target":{"x":0,"y":0},"motion":{"type":"group","children":[{"type":"tween","duration":1,"properties":[{"path":"y","to":1}]},'
    '{"type":"spring","response":0.5,"dampingRatio":0.5,"properties":[{"path":"x","to":100}]}]}}',
    '{"fps":30,"motion":{"type":"sequence","children":[{"type":"tween","duration":0.5,"repeat":3,"autoreverse":true,"easing":"cubic-bezier(0.4,0,0.2,1)",'
    '"properties":[{"path":"a","from":0,"to":1}]},{"type":"decay","velocity":100,"properties":[{"path":"b","from":0}]}]}}',
    '{"fps":10,"target":{},"motion":{"type":"path","path":"M0 0 C 10 20 30 40 50 60 A 20 20 0 0 1 100 0 Z","duration":1,"output":"dot"}}',
    '{"fps":30,"motion":{"type":"physics","velocity":{"x":100},"friction":0.1,"properties":[{"path":"x","from":0}],"duration":2}}',
]


def probe_mutation_fuzz(binary, short):
    """Mutated documents, commands, retargets and query strings: no 5xx, every error problem+json."""
    count = 600 if short else 20000
    rng = random.Random(20261125)
    server = Server(binary, "--max-sessions", "100000")
    try:
        status, _, body, _ = post_json(server, "/v1/sessions", LONG_TWEEN)
        check(status == 201, f"mutation fuzz: could not create a session ({status})")
        session = json.loads(body)["id"]
        statuses = {}
        for index in range(count):
            kind = index % 6
            if kind <= 2:
                target = rng.choice(["/v1/timelines", "/v1/timelines", "/v1/streams?speed=0", "/v1/sessions"])
                status, headers, body, _ = post_json(server, target, mutate(rng.choice(SEED_DOCUMENTS), rng), timeout=30,
                                                     head_only=target.startswith("/v1/streams"))
                if status == 201 and target == "/v1/sessions":
                    created = json.loads(body)["id"]
                    request(server, "DELETE", f"/v1/sessions/{created}")
            elif kind == 3:
                command = mutate(rng.choice(['{"command":"pause"}', '{"command":"seek","time":1.5}', '{"command":"reverse"}', '{"command":"resume"}']), rng)
                status, headers, body, _ = post_json(server, f"/v1/sessions/{session}/commands", command)
            elif kind == 4:
                retarget = mutate('{"path":"x","to":50,"response":0.3,"dampingRatio":0.8}', rng)
                status, headers, body, _ = post_json(server, f"/v1/sessions/{session}/retarget", retarget)
            else:
                query = mutate("speed=1.5&x=1", rng).replace(" ", "%20").replace("#", "%23")
                target = rng.choice(["/v1/streams", "/v1/sessions", "/healthz", "/v1/easings"])
                method = "POST" if target.startswith("/v1/s") else "GET"
                if method == "POST":
                    # A paced stream may be slow at a mutated speed: its head is enough.
                    status, headers, body, _ = post_json(server, f"{target}?{query}", TWEEN, head_only=True)
                    if status == 201:
                        request(server, "DELETE", headers["location"])
                else:
                    status, headers, body, _ = request(server, method, f"{target}?{query}")
            statuses[status] = statuses.get(status, 0) + 1
            check(status < 500, f"mutation fuzz: {status} ({body[:200]!r})")
            if status >= 400:
                check(headers.get("content-type") == "application/problem+json", f"mutation fuzz: {status} without problem+json")
            if index % 500 == 0:
                server.assert_alive("mutation fuzzing")
        server.assert_alive("mutation fuzzing")
        return {"requests": count, "statuses": {str(k): v for k, v in sorted(statuses.items())}}
    finally:
        server.stop()


def probe_amplification(binary, short):
    """Four of the heaviest documents the default limits allow, beside /healthz."""
    server = Server(binary)
    heavy = heavy_document()
    try:
        results = []

        def run():
            try:
                status, _, body, seconds = post_json(server, "/v1/timelines", heavy, timeout=120)
                results.append((status, len(body), seconds))
            except Exception as error:  # noqa: BLE001
                results.append((0, repr(error), 0))

        with HealthSampler(server) as sampler:
            threads = [threading.Thread(target=run) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(180)
        figures = sampler.report("amplification")
        check(all(status in (200, 503) for status, _, _ in results), f"amplification: {results}")
        server.assert_alive("heavy documents")
        figures.update({"heavy_requests": len(results), "statuses": [s for s, _, _ in results],
                        "answer_mb": round(max(size for _, size, _ in results if isinstance(size, int)) / 1e6, 1),
                        "slowest_s": round(max(seconds for _, _, seconds in results), 2)})
        return figures
    finally:
        server.stop()


def metric_value(server, series):
    """One series of /metrics, as text (e.g. 'motion_computations_total{thread="connection"}')."""
    metrics = request(server, "GET", "/metrics")[2].decode()
    return re.search(r"^" + re.escape(series) + r" (\S+)", metrics, re.M).group(1)


def server_cpu_seconds(server):
    """The server's user + system CPU time so far, in seconds."""
    with open(f"/proc/{server.process.pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def compile_work_documents():
    """Small documents that asked the compiler for minutes and gigabytes before it counted
    curve segments (`--max-segments`; docs/reliability.md, "compiler work"), with what they
    cost then on the release build."""
    items = lambda n: {"items": [{"o": 0} for _ in range(n)]}
    spring = {"type": "spring", "response": 0.3, "dampingRatio": 0.5}
    return {
        # 93 KB: 85 s and 1.9 GB.
        "spring keyframes on 9,000 elements": {
            "fps": 1, "target": items(9000), "window": {"start": 0, "end": 1}, "output": {"events": False, "final": False},
            "motion": {**spring, "stagger": {"each": 0.001},
                       "properties": [{"path": "items.*.o", "keyframes": [i % 2 for i in range(1000)]}]}},
        # The same with keyframes 1,000 different steps apart, so that no two of an element's
        # segments are alike and the compiler's memo of rest times answers none of them.
        "spring keyframes of different steps on 9,000 elements": {
            "fps": 1, "target": items(9000), "window": {"start": 0, "end": 1}, "output": {"events": False, "final": False},
            "motion": {**spring, "stagger": {"each": 0.001},
                       "properties": [{"path": "items.*.o", "keyframes": [k * (k + 1) // 2 for k in range(1000)]}]}},
        # 72 KB: 32 s and 10 GB.
        "9,000 bodies bouncing 10,000 times": {
            "fps": 1, "target": items(9000), "window": {"start": 0, "end": 1}, "output": {"events": False, "final": False},
            "motion": {"type": "physics", "velocity": 1000, "friction": 1e-6, "restitution": 0.999304443359375, "collisions": True,
                       "properties": [{"path": "items.*.o", "to": 1}]}},
        # 2 KB: 88 s.
        "a group repeating spring keyframes 1,000 times": {
            "fps": 1, "target": items(100), "output": {"events": False, "final": False},
            "motion": {"type": "group", "repeat": 1000, "children": [
                {**spring, "properties": [{"path": "items.*.o", "keyframes": [i % 2 for i in range(100)]}]}]}},
        # 1.2 KB: 11.5 s (816 additive layers, then 16,500 plays of 40 plain properties each
        # starting from their sum; only the layers' own plays were charged; the eighth review).
        "16,500 plays reading 816 additive layers": {
            "fps": 1, "target": {"x": 0}, "window": {"start": 0, "end": 1}, "output": {"events": False, "final": False},
            "motion": {"type": "sequence", "steps": [
                {"type": "group", "repeat": 815, "children": [
                    {"type": "tween", "additive": True, "duration": 0.001, "properties": [{"path": "x", "to": 1}]}]},
                {"type": "group", "repeat": 16499, "children": [
                    {"type": "tween", "duration": 0.001, "properties": [{"path": "x", "to": 5}] * 40}]}]}},
        # 945 KB: 18.4 s and 4.8 GB (the paths of a document were not bounded together).
        "150 paths of eccentric arcs": {
            "fps": 1, "target": {}, "output": {"events": False, "final": False},
            "motion": {"type": "group", "children": [
                {"type": "path", "path": "M0 0" + "a1e9 1 0 1 1 2 0a1e9 1 0 1 1-2 0" * 195, "duration": 1, "output": f"p{i}"}
                for i in range(150)]}},
    }


def walk_work_documents():
    """Documents whose decoding, not compiling, took seconds (the third review), each
    refused with a 422 naming max-properties: (document, what it cost before)."""
    return {
        # 840 KB: 31 s (each '*' path walked every element, twice; only matches counted).
        "2,500 '*.*' walks over 390,000 elements": {
            "fps": 1, "target": {"a": [0] * 389_999 + [[0]]},
            "motion": {"type": "tween", "duration": 1, "properties": [{"path": "a.*.*", "from": 0, "to": 1}] * 2_500}},
        # 830 KB: 16 s (every property without 'from' compared with every one with it).
        "20,000 starts against 30,000 implicit ones": {
            "target": {}, "motion": {"type": "tween", "duration": 1,
                                     "properties": [{"path": "a", "from": 0}] * 20_000 + [{"path": "b"}] * 30_000}},
    }


def export_work_documents():
    """Exports whose channels evaluate many curves each (additive layers, a colour's tracks),
    counted as one curve before: each refused with a 422 at /output/format naming the curves,
    before any reduction. What they cost then on a debug build."""
    layers = [{"type": "tween", "duration": 1, "additive": True, "easing": "ease-in-out",
               "properties": [{"path": "x", "to": i % 7 + 1}]} for i in range(1000)]
    return {
        # 117 KB: about 7.8 s per placeholder, over 8 minutes.
        "64 placeholders over 1,000 additive layers": {
            "fps": 1, "target": {"x": 0}, "motion": {"type": "group", "children": layers},
            "output": {"events": False, "final": False, "format": "css", "css": {"declarations": {"--a": "{x}" * 64}}}},
        # 12 KB: 2.8 s to spend the 5,000,000 evaluations (a path curve counted as one, though
        # finding a point on it costs about four times a tween's; the eighth review).
        "a css export of 112 path motions": {
            "fps": 17, "target": {}, "output": {"format": "css", "events": False},
            "motion": {"type": "group", "children": [
                {"type": "path", "path": "M0 0 C0 0.001 -1000000 0 0.001 -1000000", "duration": 300, "output": f"d{i}", "rotation": f"r{i}"}
                for i in range(112)]}},
        # 250 colours, 1,000 channels of three curves each (248 placeholders of one colour
        # in 1.7 KB ran 57 s before; a path named again in a template is now one channel).
        "250 colour placeholders": {
            "target": {f"c{i}": "#336699" for i in range(250)},
            "motion": {"type": "tween", "duration": 0.5, "properties": [{"path": f"c{i}", "to": "#ff9933"} for i in range(250)]},
            "output": {"format": "waapi", "css": {"declarations": {f"--c{i}": f"{{c{i}}}" for i in range(250)}}}},
    }


def answer_size_documents():
    """Exports whose answers are many times their documents, counted at their longest before
    they are written: each refused with a 422 naming max-response-bytes. What they cost
    before (the sixth review, release build)."""
    key = "k" * 250000
    literal = "a" * 4000
    steps = {"type": "tween", "duration": 1, "easing": "steps(2000)", "properties": [{"path": "x", "to": 1}]}
    return {
        # 500 KB: the path on each of 4,000 keyframes, a 1 GB stylesheet, 7 s and 2,033 MB.
        "a stylesheet of a 250,000-character path": {
            "fps": 10, "target": {key: 0}, "output": {"format": "css", "simplify": {"tolerance": 1e-9}},
            "motion": {"type": "tween", "duration": 1, "easing": "steps(2000)", "properties": [{"path": key, "to": 1}]}},
        # 113 KB: 28 templates of 4,000 literal bytes, a 454 MB answer (503), 933 MB held.
        "28 templates of 4,000 bytes in waapi": {
            "fps": 10, "target": {"x": 0}, "motion": steps,
            "output": {"format": "waapi", "simplify": {"tolerance": 1e-9},
                       "css": {"declarations": {f"--p{i}": literal + " {x}" for i in range(28)}}}},
    }


def settle_work_documents():
    """Springs whose rest times take a check at every millisecond of the 1 ms rest grid
    (oscillating at 1,000 Hz, ωd · 1 ms = 2π): refused with a 422 naming the rest grid once a
    request's 2,000,000 checks are spent. What they cost before (release build)."""
    omega, decay = 2 * math.pi * 1000, 12.0 / 3000
    easing = {"type": "spring", "stiffness": omega * omega + 0.003 ** 2, "damping": 0.006, "mass": 1,
              "initialVelocity": 1e9, "restSpeed": 1e15, "restDelta": 0.001}
    return {
        # 11.6 KB: 78 s of one thread (0.4 s a spring, each property its own spring).
        "200 springs at 1,000 Hz": {
            "fps": 1, "window": {"start": 0, "end": 1}, "target": {}, "output": {"events": False, "final": False},
            "motion": {"type": "spring", "stiffness": omega * omega + decay * decay, "damping": 2 * decay, "mass": 1,
                       "restDelta": math.exp(-12) / omega, "restSpeed": 1e6,
                       "properties": [{"path": f"x{i}", "from": 0, "to": 0, "velocity": 1 + i * 1e-3} for i in range(200)]}},
        # 2.2 KB: 2.6 s, settled while the document was decoded.
        "10 spring easings at 1,000 Hz": {
            "target": {f"x{i}": 0 for i in range(10)},
            "motion": {"type": "tween", "duration": 1, "properties": [{"path": f"x{i}", "to": 1, "easing": easing} for i in range(10)]}},
    }


def probe_compile_work(binary, short):
    """Documents that multiply the compiler's work (wildcards, stagger, repeats, bounces,
    paths of arcs), the decoder's ('*' walks, implicit starts) or an export's (channels of
    many curves): each refused with a 422 naming max-segments (max-properties for the
    decoder's, the curves for an export's), in seconds of CPU and without gigabytes,
    while /healthz stays quick; a 1,000-byte one of spring keyframes is computed on the pool,
    not on a connection thread; and sessions of the largest allowed document stop at
    max-live-segments with a 503 instead of holding 95 MB each (nine at the default, about
    1 GB, their targets and events counted too; two in the short run, which lowers the
    limit to 3,000,000)."""
    limit = 3_000_000 if short else 10_000_000
    server = Server(binary, "--max-live-segments", str(limit))
    try:
        figures = {}
        base = server.rss()
        with HealthSampler(server) as sampler:
            # Each group: its documents, what the 422 must name, and the CPU one may take.
            groups = [
                ("compile work", compile_work_documents(), [b"max-segments"], 10),
                ("decode work", walk_work_documents(), [b"max-properties"], 5),
                ("export work", export_work_documents(), [b"curves", b"/output/format"], 5),
                ("settle work", settle_work_documents(), [b"rest grid"], 5),
                ("answer size", answer_size_documents(), [b"max-response-bytes"], 5),
            ]
            for what, documents, names, most in groups:
                for name, document in documents.items():
                    before = server_cpu_seconds(server)
                    status, _, body, _ = post_json(server, "/v1/timelines", json.dumps(document, separators=(",", ":")), timeout=120)
                    cpu = server_cpu_seconds(server) - before
                    check(status == 422 and all(n in body for n in names), f"{what}, {name}: {status} {body[:200]!r}")
                    check(cpu < most, f"{what}, {name}: {cpu:.1f} s of CPU")
                    figures[name] = round(cpu, 2)
            # A plot of 2,500 events naming a 50,000-character id (50 KB): 630 MB and 2.2 s
            # before, its marks now name at most 120 characters of it.
            plot = {"fps": 10, "target": {"x": 0}, "output": {"format": "svg"},
                    "motion": {"type": "tween", "id": "&" * 50000, "duration": 0.01, "repeat": 1250, "properties": [{"path": "x", "to": 1}]}}
            before = server_cpu_seconds(server)
            status, _, body, _ = post_json(server, "/v1/timelines", json.dumps(plot), timeout=120)
            cpu = server_cpu_seconds(server) - before
            check(status == 200 and b"<svg" in body[:200] and len(body) < 4_000_000, f"answer size, the plot: {status} {len(body)} bytes")
            check(cpu < 5, f"answer size, the plot: {cpu:.1f} s of CPU")
            figures["plot of 2,500 events of a 50,000-character id"] = round(cpu, 2)
            # A retarget to such springs, under its session's lock (40 leaves: 20 s before).
            leaves = {f"a{i}": 0 for i in range(40)}
            status, headers, body, _ = post_json(server, "/v1/sessions?speed=1", json.dumps(
                {"fps": 1, "target": {"p": leaves}, "motion": {"type": "tween", "duration": 1e4, "properties": [{"path": "p", "to": {k: 1 for k in leaves}}]}}))
            check(status == 201, f"settle work, the session: {status} {body[:200]!r}")
            location = json.loads(body)["id"] if status == 201 else "none"
            slow = 8.2 / 8000
            omega = 2 * math.pi * 1000
            before = server_cpu_seconds(server)
            status, _, body, _ = post_json(server, f"/v1/sessions/{location}/retarget", json.dumps(
                {"path": "p", "to": {f"a{i}": 0.005 + i * 1e-7 for i in range(40)}, "stiffness": omega * omega + slow * slow, "damping": 2 * slow, "mass": 1}), timeout=120)
            cpu = server_cpu_seconds(server) - before
            check(status == 422 and b"rest grid" in body, f"settle work, the retarget: {status} {body[:200]!r}")
            check(cpu < 5, f"settle work, the retarget: {cpu:.1f} s of CPU")
            figures["retarget to 40 springs at 1,000 Hz"] = round(cpu, 2)
            request(server, "DELETE", f"/v1/sessions/{location}")
            # A batch's reductions share 5,000,000 evaluations, failed ones included (100
            # documents whose reductions each failed: 7.2 s before).
            failing = {"fps": 1, "target": {"x": 0}, "output": {"simplify": {"tolerance": 1e-12}, "events": False, "final": False},
                       "motion": {"type": "tween", "duration": 19.9, "easing": {"type": "elastic.inOut", "period": 0.0001},
                                  "properties": [{"path": "x", "to": 1}]}}
            before = server_cpu_seconds(server)
            status, _, body, _ = post_json(server, "/v1/timelines/batch", json.dumps({"documents": [failing] * 100}), timeout=120)
            cpu = server_cpu_seconds(server) - before
            check(status == 200 and b"were spent by the documents before it" in body, f"settle work, the failing batch: {status} {body[:200]!r}")
            # Its 5,000,000 evaluations are about 0.5 s of a release build, 3.7 s of a debug one.
            check(cpu < 15, f"reduction work, the failing batch: {cpu:.1f} s of CPU")
            figures["batch of 100 failing reductions"] = round(cpu, 2)
            # 1,000 bytes, 200 elements × 199 spring segments: 0.4 s on a connection thread before.
            small = {"fps": 1, "target": {"i": [0] * 200}, "window": {"start": 0, "end": 1}, "output": {"events": False, "final": False},
                     "motion": {"type": "spring", "response": 0.3, "dampingRatio": 0.5,
                                "properties": [{"path": "i.*", "keyframes": [j % 2 for j in range(200)]}]}}
            connection = float(metric_value(server, 'motion_computations_total{thread="connection"}'))
            status, _, body, _ = post_json(server, "/v1/timelines", json.dumps(small, separators=(",", ":")), timeout=60)
            check(status == 200, f"compile work, the small document: {status} {body[:200]!r}")
            check(float(metric_value(server, 'motion_computations_total{thread="connection"}')) == connection,
                  "compile work: the small document of spring keyframes was computed on a connection thread")
        figures.update(sampler.report("compile work", limit_ms=250.0))
        growth = server.rss() - base
        check(growth < 300 * 1024 * 1024, f"compile work: resident memory grew {growth / 1e6:.0f} MB")
        # Sessions at --max-segments: tween keyframes on 9,000 elements, 999,000 segments each,
        # and their target and events (about 28,000 more): as many as the limit holds, then
        # a 503 (nine at the default; two in the short run, at 3,000,000).
        session = {"fps": 1, "target": {"items": [{"o": 0} for _ in range(9000)]}, "output": {"events": False, "final": False},
                   "motion": {"type": "tween", "duration": 1, "properties": [{"path": "items.*.o", "keyframes": [i % 2 for i in range(112)]}]}}
        statuses = []
        live = None
        for _ in range(12):
            status, _, _, _ = post_json(server, "/v1/sessions?speed=0.000001", json.dumps(session), timeout=60)
            statuses.append(status)
            if live is None and status == 201:
                each = float(metric_value(server, "motion_live_segments"))
                check(999_000 <= each < 1_100_000, f"compile work, one session holds {each:.0f} live segments")
                live = int(limit // max(each, 1))
            if status == 503:
                break
        check(statuses[-1] == 503 and statuses.count(201) == live, f"compile work, live sessions: {statuses}, {live} expected")
        server.assert_alive("compile work")
        figures.update({"sessions": statuses.count(201), "rss_growth_mb": round((server.rss() - base) / 1e6, 1)})
        return figures
    finally:
        server.stop()


def probe_disconnect_storm(binary, short):
    """Streams and session watchers aborted at once, six rounds: gauges to 0, memory back.

    The first rounds warm the allocator up (its arenas and libmicrohttpd's buffers grow for a
    while: sixteen short rounds measured 41.1, 42.7, 43.1, 43.2, 43.7, 43.7, 43.7, 43.7, 44.2,
    43.9, 43.9, 43.9, 43.9, 43.9, 43.9, 44.2 MB), so a leak is growth from the third round to
    the sixth. Since libmicrohttpd's connection memory went to 16 KiB it comes from the C heap
    (libmicrohttpd mmaps only pools over 32 KiB), which keeps freed memory resident in steps of
    1–2 MB now and then; the bound, 8 % over three rounds (about 3.4 MB in the short run),
    still fails for a leak of about 3 KB per connection a round or more.

    Each round also holds one idle keep-alive connection open from before its streams, and
    the server's descriptors must be back to what they were before the streams within 5 s
    of the gauge reaching 0, with no other connection meanwhile: libmicrohttpd 0.9.75 once
    kept the sockets of every aborted stream on that connection's thread until the idle
    connection's own timeout (docs/reliability.md, "A client that goes away")."""
    streams, watchers = (300, 100) if short else (2000, 500)
    server = Server(binary, "--max-connections-per-address", "0")
    rounds, released = [], []
    try:
        for round_index in range(6):
            idle = connect(server)
            idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            check(read_response(idle)[0] == 200, "storm: the idle connection's request failed")
            descriptors = server.descriptors()
            sockets = []
            status, _, body, _ = post_json(server, "/v1/sessions", LONG_TWEEN)
            check(status == 201, f"storm: session {status}")
            session = json.loads(body)["id"]
            for index in range(streams):
                sock = connect(server, source=f"127.0.2.{1 + index % 200}")
                head = f"POST /v1/streams?speed=1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(LONG_TWEEN)}\r\n\r\n"
                sock.sendall(head.encode() + LONG_TWEEN.encode())
                sockets.append(sock)
            for index in range(watchers):
                sock = connect(server, source=f"127.0.3.{1 + index % 200}")
                sock.sendall(f"GET /v1/sessions/{session}/frames HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                sockets.append(sock)
            opened = 0
            for sock in sockets:
                status, _, _ = read_response(sock, head_only=True)
                opened += status == 200
            gauge = float(metric_value(server, "motion_open_streams"))
            check(gauge >= opened * 0.99, f"storm: gauge {gauge} with {opened} open")
            for sock in sockets:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                sock.close()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                gauge = float(metric_value(server, "motion_open_streams"))
                if gauge == 0:
                    break
                time.sleep(0.2)
            check(gauge == 0, f"storm round {round_index + 1}: open streams gauge still {gauge}")
            started = time.monotonic()
            while server.descriptors() > descriptors and time.monotonic() - started < 5:
                time.sleep(0.05)
            left = server.descriptors() - descriptors
            check(left <= 0, f"storm round {round_index + 1}: {left} more descriptors held 5 s after the streams closed")
            released.append(round(time.monotonic() - started, 2))
            idle.close()
            request(server, "DELETE", f"/v1/sessions/{session}")
            time.sleep(0.5)
            rounds.append(server.rss())
        server.assert_alive("disconnect storms")
        growth = (rounds[5] - rounds[2]) / rounds[2]
        check(growth < 0.08, f"storm: resident memory {rounds[2] / 1e6:.1f} → {rounds[5] / 1e6:.1f} MB (rounds 3 to 6)")
        return {"streams": streams, "watchers": watchers, "rss_mb_per_round": [round(r / 1e6, 1) for r in rounds],
                "rss_growth_percent": round(growth * 100, 2), "sockets_released_s": released}
    finally:
        server.stop()


def probe_sigterm(binary, short):
    """SIGTERM under load: every accepted request answered, streams end, exit 0."""
    server = Server(binary, "--drain-timeout", "20")
    results, stream_ends = [], []

    def compute():
        try:
            status, _, body, _ = post_json(server, "/v1/timelines", heavy_document(), timeout=120)
            results.append(status if status != 200 or body.rstrip().endswith(b"}") else -1)
        except Exception as error:  # noqa: BLE001
            results.append(repr(error))

    def stream():
        try:
            sock = connect(server, timeout=30)
            head = f"POST /v1/streams HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(LONG_TWEEN)}\r\n\r\n"
            sock.sendall(head.encode() + LONG_TWEEN.encode())
            status, _, body = read_response(sock)
            stream_ends.append(body.rstrip().split(b"\n")[-1])
        except Exception as error:  # noqa: BLE001
            stream_ends.append(repr(error).encode())

    threads = [threading.Thread(target=stream) for _ in range(10)] + [threading.Thread(target=compute) for _ in range(6)]
    for thread in threads:
        thread.start()
        time.sleep(0.02)
    time.sleep(0.3)
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    for thread in threads:
        thread.join(60)
    code = server.stop(30)
    elapsed = time.monotonic() - started
    check(all(status == 200 for status in results), f"sigterm: computations answered {results}")
    check(all(b'"end":true' in end for end in stream_ends), f"sigterm: stream endings {stream_ends[:3]}")
    check(code == 0, f"sigterm: exit status {code}")
    return {"computations": len(results), "streams": len(stream_ends), "exit": code, "drained_in_s": round(elapsed, 2)}


def probe_session_races(binary, short):
    """Commands, retargets, deletes and watchers from several threads at once."""
    seconds = 5 if short else 30
    server = Server(binary, "--max-sessions", "100000")
    errors = []
    stop = threading.Event()
    ids = []
    lock = threading.Lock()

    def creator():
        while not stop.is_set():
            status, _, body, _ = post_json(server, "/v1/sessions?speed=2", LONG_TWEEN)
            if status == 201:
                with lock:
                    ids.append(json.loads(body)["id"])
            elif status != 503:
                errors.append(f"create {status}")

    def pick_session(rng):
        with lock:
            return rng.choice(ids) if ids else None

    def commander(seed):
        rng = random.Random(seed)
        commands = ['{"command":"pause"}', '{"command":"resume"}', '{"command":"reverse"}', '{"command":"seek","time":3}', '{"command":"stop"}']
        while not stop.is_set():
            session = pick_session(rng)
            if not session:
                time.sleep(0.01)
                continue
            choice = rng.random()
            if choice < 0.6:
                status, _, body, _ = post_json(server, f"/v1/sessions/{session}/commands", rng.choice(commands))
            elif choice < 0.8:
                status, _, body, _ = post_json(server, f"/v1/sessions/{session}/retarget", '{"path":"x","to":%d}' % rng.randint(0, 500))
            elif choice < 0.9:
                status, _, body, _ = request(server, "DELETE", f"/v1/sessions/{session}")
            else:
                status, _, body, _ = request(server, "GET", f"/v1/sessions/{session}")
                if status == 200:
                    state = json.loads(body)["state"]
                    if state not in ("running", "paused", "reversing", "completed", "stopped"):
                        errors.append(f"state {state}")
            if status >= 500 or status in (400,):
                errors.append(f"{status} {body[:120]!r}")

    def watcher(seed):
        rng = random.Random(seed)
        while not stop.is_set():
            session = pick_session(rng)
            if not session:
                time.sleep(0.01)
                continue
            try:
                sock = connect(server, timeout=5)
                sock.sendall(f"GET /v1/sessions/{session}/frames HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                sock.recv(4096)
                time.sleep(rng.random() * 0.2)
                sock.close()
            except OSError as error:
                errors.append(f"watcher {error!r}")

    threads = [threading.Thread(target=creator)] + [threading.Thread(target=commander, args=(i,)) for i in range(4)] \
        + [threading.Thread(target=watcher, args=(i,)) for i in range(3)]
    try:
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            server.assert_alive("racing session commands")
            time.sleep(0.5)
        stop.set()
        for thread in threads:
            thread.join(10)
            check(not thread.is_alive(), "session races: a client thread is stuck (deadlock?)")
        check(not errors, f"session races: {errors[:5]}")
        server.assert_alive("racing session commands")
        return {"seconds": seconds, "sessions": len(ids)}
    finally:
        stop.set()
        server.stop()


def probe_aborted_documents(binary, short):
    """Documents whose scheduling is aborted (422), replayed: resident memory flat."""
    count = 1000 if short else 5000
    server = Server(binary)
    documents = [
        '{"target":{"x":0,"y":0},"motion":{"type":"group","children":[{"type":"tween","duration":1,"properties":[{"path":"y","to":1}]},'
        '{"type":"spring","response":0.5,"dampingRatio":0.00006,"properties":[{"path":"x","to":100}]}]}}',
        '{"target":{"x":0,"y":0},"motion":{"type":"group","children":[{"type":"tween","duration":0.001,"repeat":200000,"properties":[{"path":"y","to":1}]},'
        '{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}]}}',
    ]
    try:
        for document in documents:
            check(post_json(server, "/v1/timelines", document)[0] == 422, "aborted documents: not a 422")
        # Warm up from several clients at once, so that every compute thread has run (and its
        # malloc arena grown) before the measurement: a leak grows with the replays, an arena once.
        def warm():
            for index in range(300):
                post_json(server, "/v1/timelines", documents[index % 2])
        warmers = [threading.Thread(target=warm) for _ in range(4)]
        for thread in warmers:
            thread.start()
        for thread in warmers:
            thread.join(300)
        before = server.rss()
        for index in range(count):
            post_json(server, "/v1/timelines", documents[index % 2])
        growth = server.rss() - before
        check(growth < 5 * 1024 * 1024, f"aborted documents: resident memory grew {growth / 1e6:.1f} MB over {count}")
        return {"replays": count, "rss_growth_mb": round(growth / 1e6, 2)}
    finally:
        server.stop()


def probe_invented_methods(binary, short):
    """Made-up methods: /metrics does not grow with them."""
    count = 2000 if short else 20000
    server = Server(binary)
    try:
        request(server, "GET", "/healthz")
        request(server, "FOO0", "/healthz")
        request(server, "GET", "/metrics")
        before = len(request(server, "GET", "/metrics")[2])
        sock = connect(server)
        for index in range(count):
            sock.sendall(f"M{index}X /healthz HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            read_response(sock)
        sock.close()
        after = len(request(server, "GET", "/metrics")[2])
        check(after - before < 200, f"invented methods: /metrics grew {before} → {after} bytes")
        return {"methods": count, "metrics_bytes_before": before, "metrics_bytes_after": after}
    finally:
        server.stop()


def probe_unread_answers(binary, short):
    """Clients that ask for a 36 MB answer and never read it: held bytes bounded."""
    clients = 4 if short else 10
    server = Server(binary)
    # A 36 MB answer, near the largest the default max-response-bytes lets through.
    document = '{"fps":1000,"motion":{"type":"tween","duration":1300,"easing":"ease-in-out","properties":[{"path":"x","from":0,"to":1}]}}'
    sockets = []
    try:
        base = server.rss()
        statuses = []
        for _ in range(clients):
            sock = connect(server, timeout=120)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            head = f"POST /v1/timelines HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(document)}\r\n\r\n"
            sock.sendall(head.encode() + document.encode())
            status, headers, _ = read_response(sock, head_only=True)
            statuses.append(status)
            sockets.append(sock)
        check(statuses[0] == 200, f"unread answers: the first answer was {statuses[0]}")
        check(all(status in (200, 503) for status in statuses), f"unread answers: {statuses}")
        time.sleep(1)
        growth = server.rss() - base
        bound = 256 * 1024 * 1024 + 100 * 1024 * 1024
        check(growth < bound, f"unread answers: resident memory grew {growth / 1e6:.0f} MB")
        server.assert_alive("unread answers")
        return {"clients": clients, "statuses": statuses, "rss_growth_mb": round(growth / 1e6, 1)}
    finally:
        for sock in sockets:
            sock.close()
        server.stop()


def probe_request_bodies(binary, short):
    """Connections that each send most of a 1 MiB body, then hold it: the bodies being
    received are bounded together (--max-held-request-bytes, 256 MiB; 64 MB in the short
    run), the rest refused with 503 and closed (3,000 such connections held 3.2 GB before)."""
    connections, limit = (150, 64 * 2**20) if short else (1000, 256 * 2**20)
    server = Server(binary, "--max-connections-per-address", "0", "--max-held-request-bytes", str(limit))
    sockets = []
    try:
        base = server.rss()
        head = (f"POST /v1/timelines HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {2**20}\r\n\r\n").encode()
        chunk = b" " * 1_000_000
        for _ in range(connections):
            sock = connect(server, timeout=10)
            try:
                sock.sendall(head + chunk)
            except OSError:
                pass  # refused and closed while sending
            sockets.append(sock)
        time.sleep(1)
        refused = 0
        for sock in sockets:
            sock.settimeout(0.05)
            try:
                refused += b" 503 " in sock.recv(4096)[:16]
            except (socket.timeout, OSError):
                pass
        grown = server.rss() - base
        # Each held body is 1,000,000 bytes: all but about limit / 1e6 are refused (a few may
        # still be on their way).
        check(refused >= (connections - limit // 1_000_000) * 0.9, f"request bodies: only {refused} of {connections} refused")
        check(grown < limit + 150 * 2**20, f"request bodies: resident memory grew {grown / 1e6:.0f} MB")
        # Once they go, new bodies are read again.
        for sock in sockets:
            sock.close()
        sockets = []
        time.sleep(0.5)
        status, _, body, _ = post_json(server, "/v1/timelines", LONG_TWEEN.replace("600", "1"))
        check(status == 200, f"request bodies: after the clients left, {status} {body[:200]!r}")
        server.assert_alive("request bodies")
        return {"connections": connections, "refused": refused, "rss_growth_mb": round(grown / 2**20, 1)}
    finally:
        for sock in sockets:
            sock.close()
        server.stop()


def probe_slow_watchers(binary, short):
    """Watchers of a 10,000-track session that read 8 KB every 50 ms: each read holds at
    most 1 MiB of frames (100 such watchers took the server to 1.6 GB before); resident
    memory within 50 MB + 5 MB a watcher."""
    watchers, seconds = (20, 4) if short else (100, 10)
    server = Server(binary)
    sockets = []
    try:
        # 190 frames of 10,000 tracks (max-samples allows 200), 20 frames a second of wall time.
        document = json.dumps({"fps": 1, "motion": {"type": "tween", "duration": 190, "properties": [
            {"path": f"t{i}", "from": 0, "to": 1} for i in range(10_000)]}}, separators=(",", ":"))
        status, _, body, _ = post_json(server, "/v1/sessions?speed=20", document, timeout=60)
        check(status == 201, f"slow watchers: session {status} {body[:200]!r}")
        session = json.loads(body)["id"]
        base = server.rss()
        for _ in range(watchers):
            sock = connect(server, timeout=10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
            sock.sendall(f"GET /v1/sessions/{session}/frames HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            sockets.append(sock)
        peak, read, deadline = 0, 0, time.monotonic() + seconds
        while time.monotonic() < deadline:
            for sock in sockets:
                sock.settimeout(0.001)
                try:
                    read += len(sock.recv(8192))
                except (socket.timeout, OSError):
                    pass
            peak = max(peak, server.rss() - base)
            time.sleep(0.05)
        check(read > 0, "slow watchers: nothing was read")
        # About 16 MB a watcher before (a whole backlog each); at most 1 MiB a read now.
        bound = (50 + 5 * watchers) * 2**20
        check(peak < bound, f"slow watchers: resident memory grew {peak / 1e6:.0f} MB")
        dropped = float(metric_value(server, "motion_frames_dropped_total"))
        server.assert_alive("slow watchers")
        return {"watchers": watchers, "read_mb": round(read / 2**20, 1), "dropped": int(dropped),
                "rss_peak_growth_mb": round(peak / 2**20, 1)}
    finally:
        for sock in sockets:
            sock.close()
        server.stop()


def send_commands(server, session, bodies, count, what):
    """`count` commands to `session`, cycling through `bodies`, on one keep-alive connection;
    each must be answered 200."""
    sock = connect(server, timeout=10)
    try:
        for index in range(count):
            payload = bodies[index % len(bodies)]
            sock.sendall((f"POST /v1/sessions/{session}/commands HTTP/1.1\r\nHost: x\r\n"
                          f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n{payload}").encode())
            status, _, answer = read_response(sock)
            check(status == 200, f"{what}: command {index} answered {status} {answer[:120]!r}")
    finally:
        sock.close()


def probe_command_flood(binary, short):
    """Thousands of commands to one watched session: the watcher's cost comes back to idle."""
    commands = 2100 if short else 5100  # a multiple of 3: the last one is a resume
    server = Server(binary)
    watcher = None
    try:
        status, _, body, _ = post_json(server, "/v1/sessions?speed=1", LONG_TWEEN.replace('"fps":30', '"fps":60'))
        check(status == 201, f"command flood: creating the session answered {status}")
        session = json.loads(body)["id"]
        watcher = connect(server, timeout=5)
        watcher.sendall(f"GET /v1/sessions/{session}/frames HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        received = [0]

        def drain():  # the watcher reads everything, as a live client does
            try:
                while True:
                    chunk = watcher.recv(65536)
                    if not chunk:
                        return
                    received[0] += len(chunk)
            except OSError:
                return
        threading.Thread(target=drain, daemon=True).start()

        def cpu_share(seconds):  # the server's CPU time over `seconds` of wall time, in cores
            before, started = server_cpu_seconds(server), time.monotonic()
            time.sleep(seconds)
            return (server_cpu_seconds(server) - before) / (time.monotonic() - started)

        time.sleep(0.5)
        idle = cpu_share(2)
        send_commands(server, session, ['{"command":"seek","time":1}', '{"command":"pause"}', '{"command":"resume"}'],
                      commands, "command flood")
        server.assert_alive("a command flood")
        after = cpu_share(2)
        frames_before = received[0]
        time.sleep(0.5)
        check(received[0] > frames_before, "command flood: the watcher gets no more frames")
        # One watcher at 60 fps costs about a percent of a core; every command used to leave
        # a wake behind that came back every frame (2,000 commands: about 8 % of a core more
        # for a release server, 3,000: 12 %).
        check(after < idle + 0.05, f"command flood: the server uses {after:.1%} of a core after "
                                   f"{commands} commands, {idle:.1%} before them")
        return {"commands": commands, "cpu_before": round(idle, 3), "cpu_after": round(after, 3)}
    finally:
        if watcher:
            watcher.close()
        server.stop()


def probe_stalled_watchers(binary, short):
    """Watchers whose clients stop reading while commands keep coming: each is ended with
    `"interrupted":"backlog"` once more than `--max-backlog-events` echoes wait for it,
    rather than queued for without bound (before, every echo was kept, and trimming the
    queue walked it from its start on every command)."""
    watchers, bound, commands = (10, 200, 1200) if short else (50, 1024, 6000)
    server = Server(binary, "--max-backlog-events", str(bound))
    sockets = []
    try:
        # 2 KB frames 1,000 times a second (19 s: 1.9 M samples, within --max-samples): the
        # watchers' sockets (the server's send buffers grow to a few MB) fill within seconds.
        properties = ",".join('{"path":"p%d","from":0,"to":%d}' % (i, 100 + i) for i in range(100))
        wide = '{"fps":1000,"motion":{"type":"tween","duration":19,"properties":[%s]}}' % properties
        status, _, body, _ = post_json(server, "/v1/sessions?speed=1", wide)
        check(status == 201, f"stalled watchers: creating the session answered {status}")
        session = json.loads(body)["id"]
        for _ in range(watchers):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.settimeout(20)
            sock.connect((HOST, server.port))
            sock.sendall(f"GET /v1/sessions/{session}/frames HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            sockets.append(sock)
        time.sleep(5)  # nobody reads: the sockets fill, and the watchers stall
        rss_before = server.rss()
        send_commands(server, session, ['{"command":"pause"}', '{"command":"resume"}'], commands, "stalled watchers")
        server.assert_alive("commands to a session with stalled watchers")
        grown = server.rss() - rss_before
        # Now the clients read: each watcher's stream ends, its last line saying why.
        ended, deadline = 0, time.monotonic() + 60
        for sock in sockets:
            data = b""
            while b'"interrupted":"backlog"' not in data and time.monotonic() < deadline:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                data = data[-8192:] + chunk
            ended += b'"interrupted":"backlog"' in data
        check(ended == watchers, f"stalled watchers: {ended} of {watchers} ended with \"interrupted\":\"backlog\"")
        return {"watchers": watchers, "commands": commands, "rss_growth_mb": round(grown / 2**20, 1)}
    finally:
        for sock in sockets:
            sock.close()
        server.stop()


PROBES = {
    "crash-inputs": probe_crash_inputs,
    "framing": probe_framing,
    "slowloris": probe_slowloris,
    "address-flood": probe_address_flood,
    "churn": probe_churn,
    "mutation-fuzz": probe_mutation_fuzz,
    "amplification": probe_amplification,
    "compile-work": probe_compile_work,
    "disconnect-storm": probe_disconnect_storm,
    "sigterm": probe_sigterm,
    "session-races": probe_session_races,
    "aborted-documents": probe_aborted_documents,
    "invented-methods": probe_invented_methods,
    "unread-answers": probe_unread_answers,
    "command-flood": probe_command_flood,
    "stalled-watchers": probe_stalled_watchers,
    "request-bodies": probe_request_bodies,
    "slow-watchers": probe_slow_watchers,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--short", action="store_true", help="the CI sizes")
    parser.add_argument("--only", help="comma-separated probe names")
    parser.add_argument("--json", help="write the figures here")
    arguments = parser.parse_args()
    names = arguments.only.split(",") if arguments.only else list(PROBES)
    failures = 0
    for name in names:
        started = time.monotonic()
        try:
            figures = PROBES[name](arguments.binary, arguments.short)
            RESULTS[name] = {"ok": True, "seconds": round(time.monotonic() - started, 1), **figures}
            print(f"ok    {name:18} {time.monotonic() - started:6.1f} s  {json.dumps(figures)}", flush=True)
        except Exception as error:  # noqa: BLE001 - report every probe
            failures += 1
            RESULTS[name] = {"ok": False, "error": str(error)}
            print(f"FAIL  {name:18} {time.monotonic() - started:6.1f} s  {error}", flush=True)
    if arguments.json:
        with open(arguments.json, "w") as handle:
            json.dump(RESULTS, handle, indent=2)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
