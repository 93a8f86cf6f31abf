#!/usr/bin/env python3
"""Sessions across replicas (`make test-replicas`): three motion-server replicas behind a real
nginx running deploy/nginx/motion-proxy.conf.

Creates sessions with PUT (and one with POST, which the proxy turns into a PUT), steers and
watches them through the proxy, and checks that every request of a session reached the same
replica — by the X-Instance-Id header of every answer and by the replicas' own JSON access
logs — while /v1/timelines requests spread over all three. nginx runs as this user, from a
temporary prefix; it is installed (Debian nginx-light) when missing.

    scripts/replicas-test.py --binary .build/debug/motion-server
"""
import argparse
import collections
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLICAS = 3
SESSIONS = 12
TIMELINES = 30

LONG = json.dumps({"fps": 20, "target": {"x": 0},
                   "motion": {"type": "tween", "duration": 60, "properties": [{"path": "x", "to": 100}]}})
SHORT = json.dumps({"fps": 10, "target": {"x": 0},
                    "motion": {"type": "tween", "duration": 0.5, "properties": [{"path": "x", "to": 1}]}})


def fail(message):
    print(f"[replicas-test] FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, headers=None, timeout=10):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    all_headers = dict(headers or {})
    if body is not None:
        all_headers["Content-Type"] = "application/json"
    connection.request(method, path, body=body, headers=all_headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


class Replica:
    def __init__(self, binary, index, workdir):
        self.name = f"replica-{index}"
        self.log_path = os.path.join(workdir, f"{self.name}.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [binary, "--host", "127.0.0.1", "--port", "0", "--instance-id", self.name, "--log-format", "json",
             "--max-connections-per-address", "0"],
            stdout=subprocess.PIPE, stderr=self.log, text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("MOTION_")})
        line = self.process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if not match:
            fail(f"{self.name} did not start: {line!r}")
        self.port = int(match.group(1))

    def stop(self):
        if self.process.returncode is not None:
            return self.process.returncode
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = "timeout"
        if not self.log.closed:
            self.log.close()
        return code

    def access_lines(self):
        lines = []
        with open(self.log_path) as f:
            for text in f:
                entry = json.loads(text)
                if entry.get("message") == "request":
                    lines.append(entry)
        return lines


def start_nginx(workdir, replicas):
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx is None:
        subprocess.run([os.path.join(ROOT, "scripts", "apt-install.sh"), "nginx-light"], check=True)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    prefix = os.path.join(workdir, "nginx")
    os.makedirs(os.path.join(prefix, "conf"))
    os.makedirs(os.path.join(prefix, "logs"))
    os.chmod(workdir, 0o755)
    os.chmod(prefix, 0o755)
    port = free_port()
    with open(os.path.join(ROOT, "deploy", "nginx", "motion-proxy.conf")) as f:
        proxy = f.read()
    # The shipped configuration as it is, but for the port it listens on.
    proxy, count = re.subn(r"(?m)^(\s*)listen 8080;", rf"\1listen 127.0.0.1:{port};", proxy)
    if count != 1:
        fail("deploy/nginx/motion-proxy.conf has no 'listen 8080;' line")
    with open(os.path.join(prefix, "conf", "motion-proxy.conf"), "w") as f:
        f.write(proxy)
    with open(os.path.join(prefix, "conf", "motion-replicas.conf"), "w") as f:
        f.writelines(f"server 127.0.0.1:{r.port};\n" for r in replicas)
    user = "user root;\n" if os.geteuid() == 0 else ""
    with open(os.path.join(prefix, "conf", "nginx.conf"), "w") as f:
        f.write(f"""{user}worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log warn;
events {{ worker_connections 256; }}
http {{
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    include motion-proxy.conf;
}}
""")
    check = subprocess.run([nginx, "-t", "-p", prefix, "-c", "conf/nginx.conf"], capture_output=True, text=True)
    if check.returncode != 0:
        fail(f"nginx -t: {check.stderr}")
    process = subprocess.Popen([nginx, "-p", prefix, "-c", "conf/nginx.conf", "-g", "daemon off;"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, port, prefix
        except OSError:
            time.sleep(0.05)
    process.kill()
    fail(f"nginx did not listen: {process.stderr.read()}")


def watch(port, session, seen):
    """Opens a watcher through the proxy, reads frames, returns (connection, response)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", f"/v1/sessions/{session}/frames")
    response = connection.getresponse()
    if response.status != 200:
        fail(f"watch {session}: {response.status}")
    seen[session].append(("GET frames", response.getheader("X-Instance-Id")))
    first = json.loads(response.readline())
    if "frame" not in first:
        fail(f"watch {session}: first line {first}")
    return connection, response


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "motion-server"))
    args = parser.parse_args()
    started = time.time()
    workdir = tempfile.mkdtemp(prefix="motion-replicas-")
    replicas, nginx = [], None
    try:
        replicas = [Replica(args.binary, i, workdir) for i in range(REPLICAS)]
        nginx, port, prefix = start_nginx(workdir, replicas)

        # Stateless: timelines spread over every replica.
        spread = collections.Counter()
        expected = None
        for _ in range(TIMELINES):
            status, headers, body = request(port, "POST", "/v1/timelines", SHORT)
            if status != 200:
                fail(f"/v1/timelines through the proxy: {status} {body[:200]}")
            expected = expected or body
            if body != expected:
                fail("replicas answered the same document differently")
            spread[headers.get("x-instance-id")] += 1
        if set(spread) != {r.name for r in replicas}:
            fail(f"timelines did not reach every replica: {dict(spread)}")
        print(f"[replicas-test] {TIMELINES} timelines through nginx: {dict(sorted(spread.items()))}")

        # Sessions: PUT with chosen ids, then steer and watch each through the proxy.
        seen = collections.defaultdict(list)
        ids = [f"player-{i:02d}" for i in range(SESSIONS)]
        for session in ids:
            status, headers, body = request(port, "PUT", f"/v1/sessions/{session}?speed=1", LONG)
            if status != 201:
                fail(f"PUT {session}: {status} {body[:200]}")
            seen[session].append(("PUT", headers.get("x-instance-id")))
        status, headers, body = request(port, "POST", "/v1/sessions", LONG)
        if status != 201:
            fail(f"POST /v1/sessions through the proxy: {status} {body[:200]}")
        posted = json.loads(body)["id"]
        if headers.get("location") != f"/v1/sessions/{posted}":
            fail(f"POST /v1/sessions: Location {headers.get('location')} for id {posted}")
        seen[posted].append(("POST", headers.get("x-instance-id")))
        ids.append(posted)
        # GET /v1/sessions (one replica's list) passes through as a GET.
        status, headers, body = request(port, "GET", "/v1/sessions")
        if status != 200 or "sessions" not in json.loads(body):
            fail(f"GET /v1/sessions through the proxy: {status} {body[:200]}")

        for session in ids:
            watcher, stream = watch(port, session, seen)
            steps = [("POST", f"/v1/sessions/{session}/commands", json.dumps({"command": "pause"}), "paused"),
                     ("POST", f"/v1/sessions/{session}/commands", json.dumps({"command": "seek", "time": 30}), "paused"),
                     ("POST", f"/v1/sessions/{session}/commands", json.dumps({"command": "resume"}), "running"),
                     ("POST", f"/v1/sessions/{session}/retarget", json.dumps({"path": "x", "to": 50}), "running"),
                     ("GET", f"/v1/sessions/{session}", None, "running")]
            for method, path, body, state in steps:
                status, headers, answer = request(port, method, path, body)
                if status != 200 or json.loads(answer).get("state") != state:
                    fail(f"{method} {path}: {status} {answer[:200]}")
                seen[session].append((f"{method} {path.rsplit('/', 1)[-1]}", headers.get("x-instance-id")))
            # The watcher saw the commands, and ends with its end line when the session is deleted.
            status, headers, _ = request(port, "DELETE", f"/v1/sessions/{session}")
            if status != 204:
                fail(f"DELETE {session}: {status}")
            seen[session].append(("DELETE", headers.get("x-instance-id")))
            events, last = set(), None
            for line in stream:
                last = json.loads(line)
                if "event" in last:
                    events.add(last["event"])
            watcher.close()
            if not last or last.get("end") is not True or last.get("state") != "deleted":
                fail(f"watcher of {session} ended with {last}")
            if not {"paused", "seeked", "resumed", "retargeted"} <= events:
                fail(f"watcher of {session} missed commands: {events}")

        owners = {}
        for session, entries in seen.items():
            instances = {instance for _, instance in entries}
            if len(instances) != 1 or None in instances:
                fail(f"session {session} reached several replicas: {entries}")
            owners[session] = instances.pop()
        placement = collections.Counter(owners.values())
        if len(placement) < 2:
            fail(f"every session hashed to one replica: {dict(placement)}")

        # The replicas' own access logs agree: each session's requests are in one log only.
        logged = collections.defaultdict(set)
        for replica in replicas:
            for entry in replica.access_lines():
                match = re.match(r"^/v1/sessions/([A-Za-z0-9_-]+)", entry["path"])
                if match:
                    logged[match.group(1)].add(replica.name)
        for session, owner in owners.items():
            if logged[session] != {owner}:
                fail(f"access logs place {session} on {logged[session]}, headers on {owner}")
        requests_per_session = len(next(iter(seen.values())))
        print(f"[replicas-test] {len(ids)} sessions ({SESSIONS} PUT, 1 POST), {requests_per_session} requests each "
              f"(create, watch, pause, seek, resume, retarget, state, delete), each on one replica: "
              f"{dict(sorted(placement.items()))}")

        # nginx's own log names the upstream of every session request.
        with open(os.path.join(prefix, "logs", "motion-access.log")) as f:
            proxied = f.read().count("session=player-")
        if proxied < SESSIONS * 7:
            fail(f"nginx logged {proxied} session requests")

        # A replica that goes away takes its sessions with it: their watchers get the end line
        # (interrupted by the shutdown); the other replicas' sessions carry on.
        owner_of = {}
        for i in range(SESSIONS):
            session = f"drain-{i:02d}"
            status, headers, _ = request(port, "PUT", f"/v1/sessions/{session}", LONG)
            if status != 201:
                fail(f"PUT {session}: {status}")
            owner_of[session] = headers.get("x-instance-id")
        by_replica = collections.defaultdict(list)
        for session, owner in owner_of.items():
            by_replica[owner].append(session)
        if len(by_replica) < 2:
            fail(f"every drain-* session on one replica: {dict(by_replica)}")
        leaving_name, doomed = max(by_replica.items(), key=lambda item: len(item[1]))
        survivor = next(s for s, owner in owner_of.items() if owner != leaving_name)
        watcher, stream = watch(port, doomed[0], collections.defaultdict(list))
        leaving = next(r for r in replicas if r.name == leaving_name)
        code = leaving.stop()
        if code != 0:
            fail(f"{leaving_name} exited with {code} on SIGTERM")
        last = None
        for line in stream:
            last = json.loads(line)
        watcher.close()
        if not last or last.get("end") is not True or last.get("interrupted") != "shutdown":
            fail(f"the watcher of {doomed[0]} on the stopped replica ended with {last}")
        status, headers, body = request(port, "GET", f"/v1/sessions/{survivor}")
        if status != 200 or headers.get("x-instance-id") != owner_of[survivor]:
            fail(f"{survivor} on {owner_of[survivor]} after {leaving_name} stopped: {status} {body[:200]}")
        print(f"[replicas-test] {leaving_name} stopped: its watcher got the shutdown end line; "
              f"{survivor} on {owner_of[survivor]} carries on")
    finally:
        if nginx is not None:
            nginx.send_signal(signal.SIGQUIT)
            try:
                nginx.wait(timeout=10)
            except subprocess.TimeoutExpired:
                nginx.kill()
        codes = [replica.stop() for replica in replicas]
    if any(code != 0 for code in codes):
        fail(f"replicas exited with {codes}")
    shutil.rmtree(workdir, ignore_errors=True)
    print(f"[replicas-test] PASS in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
