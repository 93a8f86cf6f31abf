#!/usr/bin/env python3
"""User-space instructions per request, counted by callgrind (issue #14, Benchmarks/README.md).

Seconds move with whatever else the machine is doing; instruction counts do not. Each server
runs under `valgrind --tool=callgrind` (all threads counted together) twice: once answering
LOW requests and once HIGH requests on one keep-alive connection, then SIGTERM. Start-up and
shutdown cost the same in both runs, so (I_HIGH − I_LOW) / (HIGH − LOW) is the cost of one
request. The requests are distinct documents (a different `to` each), so nothing is cached.

Servers measured side by side (each also with its access log on: motion-server at its default
level writing text lines to a file, nginx with `access_log`):
  motion-server   the small document (one tween, 61 samples): the whole request;
  mhd_minimal     libmicrohttpd answering the same bytes from one persistent response (the floor
                  for a libmicrohttpd server; Benchmarks/c/mhd_minimal.c);
  nginx           the same bytes as a static file (one worker, no master);
and, per sample, motion-server with a 100-track × 601-frame document (parse, compile, sample
and encode, divided by 60,100 samples).

Usage: instructions.py --server BIN --minimal BIN --out DIR [--low N] [--high N]
Prints a Markdown table and writes DIR/instructions.json.
"""
import argparse
import http.client
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

SMALL = '{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":"quadratic.inOut","properties":[{"path":"x","to":%d}]}}'


def wide_document(variant):
    properties = ",".join('{"path":"p%d","from":0,"to":%d}' % (i, 100 + i + variant) for i in range(100))
    return '{"fps":60,"motion":{"type":"tween","duration":10,"easing":"ease-in-out","properties":[%s]}}' % properties


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("server did not start listening")


def send(port, bodies):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    for body in bodies:
        connection.request("POST", "/v1/timelines", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        payload = response.read()
        if response.status != 200:
            raise RuntimeError(f"answered {response.status}: {payload[:200]!r}")
    connection.close()


def memset_instructions(out):
    """Instructions spent in memset (libmicrohttpd zeroes each connection's pool with it)."""
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", out],
                               capture_output=True, text=True).stdout
    total = 0
    for line in annotated.splitlines():
        match = re.match(r"\s*([\d,]+)\s.*memset", line)
        if match:
            total += int(match.group(1).replace(",", ""))
    return total


def counted(command, port, bodies, workdir):
    """(total instructions, memset instructions) of `command` answering `bodies`, all threads."""
    out = os.path.join(workdir, "callgrind.%d.out" % time.monotonic_ns())
    log = open(out + ".log", "w")
    process = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, *command],
                               stdout=subprocess.DEVNULL, stderr=log, cwd=workdir)
    try:
        wait_for_port(port, process)
        send(port, bodies)
    finally:
        # Under valgrind a SIGTERM that arrives while nginx is between its event loop's
        # checks is sometimes not acted on; repeat it until the process is gone.
        for _ in range(60):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(2)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            process.kill()
            process.wait()
    log.close()
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1]), memset_instructions(out)
    raise RuntimeError(f"no totals in {out}: " + open(out + ".log").read()[-800:])


def per_request(make_command, make_bodies, low, high, workdir):
    """(instructions, of which memset) per request."""
    port = free_port()
    total_low, memset_low = counted(make_command(port), port, make_bodies(low), workdir)
    port = free_port()
    total_high, memset_high = counted(make_command(port), port, make_bodies(high), workdir)
    return (total_high - total_low) / (high - low), (memset_high - memset_low) / (high - low)


def nginx_command(workdir, body_bytes, access_log=False):
    www = pathlib.Path(workdir, "www/v1")
    www.mkdir(parents=True, exist_ok=True)
    (www / "timelines").write_bytes(body_bytes)
    pathlib.Path(workdir, "tmp").mkdir(exist_ok=True)

    log = f"{workdir}/nginx-access.log" if access_log else "off"

    def command(port):
        conf = pathlib.Path(workdir, f"nginx.{port}.conf")
        conf.write_text(f"""
worker_processes 1; daemon off; master_process off; pid {workdir}/nginx.{port}.pid;
error_log {workdir}/error.log warn;
events {{ worker_connections 64; }}
http {{
  access_log {log}; server_tokens off; sendfile on; etag off;
  keepalive_requests 1000000; open_file_cache max=16;
  client_body_temp_path {workdir}/tmp/body; proxy_temp_path {workdir}/tmp/proxy;
  fastcgi_temp_path {workdir}/tmp/fastcgi; uwsgi_temp_path {workdir}/tmp/uwsgi; scgi_temp_path {workdir}/tmp/scgi;
  server {{ listen 127.0.0.1:{port}; root {workdir}/www;
    location = /v1/timelines {{ default_type application/json; error_page 405 =200 $uri; }} }}
}}""")
        return [shutil.which("nginx") or "/usr/sbin/nginx", "-c", str(conf), "-p", workdir]
    return command


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--minimal", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--low", type=int, default=200)
    parser.add_argument("--high", type=int, default=1200)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="instructions-")
    os.chmod(workdir, 0o755)
    # valgrind 3.19 cannot read the DWARF that swiftc writes ("possibly corrupted debuginfo
    # file"): count a copy without debug information (function symbols stay).
    server = os.path.join(workdir, "motion-server")
    shutil.copy(args.server, server)
    subprocess.run(["strip", "--strip-debug", server], check=True)

    def motion(port):
        return [server, "--host", "127.0.0.1", "--port", str(port), "--log-level", "error", "--threads", "1", "--compute-threads", "1"]

    def motion_logging(port):
        # The default level (info): an access line a request, to a file.
        return [server, "--host", "127.0.0.1", "--port", str(port), "--log-file", os.path.join(workdir, "access.log"),
                "--threads", "1", "--compute-threads", "1"]

    small = lambda n: [SMALL % (320 + i) for i in range(n)]
    # The bytes the static servers answer: motion-server's own answer to the small document.
    probe_port = free_port()
    probe = subprocess.Popen(motion(probe_port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(probe_port, probe)
        connection = http.client.HTTPConnection("127.0.0.1", probe_port)
        connection.request("POST", "/v1/timelines", body=SMALL % 320, headers={"Content-Type": "application/json"})
        answer = connection.getresponse().read()
    finally:
        probe.send_signal(signal.SIGTERM)
        probe.wait(30)
    answer_file = os.path.join(workdir, "small-response.json")
    pathlib.Path(answer_file).write_bytes(answer)

    figures = {}
    figures["motion-server"] = per_request(motion, small, args.low, args.high, workdir)
    figures["mhd_minimal"] = per_request(lambda port: [os.path.abspath(args.minimal), str(port), answer_file, "65536"],
                                         small, args.low, args.high, workdir)
    figures["nginx"] = per_request(nginx_command(workdir, answer), small, args.low, args.high, workdir)
    # With each server's access log on (motion-server's default; nginx's `access_log`).
    figures["motion-server, access log"] = per_request(motion_logging, small, args.low, args.high, workdir)
    figures["nginx, access log"] = per_request(nginx_command(workdir, answer, access_log=True), small, args.low, args.high, workdir)
    wide = lambda n: [wide_document(i) for i in range(n)]
    wide_low, wide_high = max(1, args.low // 50), max(2, args.high // 50)
    figures["motion-server per sample (100 tracks x 601 frames)"] = \
        tuple(x / 60100 for x in per_request(motion, wide, wide_low, wide_high, workdir))

    result = {"low": args.low, "high": args.high, "bytes": len(answer), "instructions": figures}
    pathlib.Path(args.out, "instructions.json").write_text(json.dumps(result, indent=2) + "\n")
    floor = figures["mhd_minimal"][0] - figures["mhd_minimal"][1]
    print(f"Instructions per request (callgrind, all threads; {args.high - args.low} requests; "
          f"answer {len(answer)} bytes):\n")
    print("| server | instructions / request | of which memset | without memset | ÷ mhd_minimal without memset |")
    print("|---|---|---|---|---|")
    for name in ("motion-server", "mhd_minimal", "nginx"):
        total, memset = figures[name]
        print(f"| {name} | {total:,.0f} | {memset:,.0f} | {total - memset:,.0f} | {(total - memset) / floor:.2f}× |")
    print("\nWith the access log on (motion-server's default level, text lines to a file; nginx's `access_log`):\n")
    print("| server | instructions / request | without memset | the access log's share |")
    print("|---|---|---|---|")
    for name in ("motion-server", "nginx"):
        (total, memset), (quiet, _) = figures[f"{name}, access log"], figures[name]
        print(f"| {name} | {total:,.0f} | {total - memset:,.0f} | {total - quiet:,.0f} |")
    per_sample = figures["motion-server per sample (100 tracks x 601 frames)"][0]
    print(f"\nmotion-server, 100 tracks × 601 frames: {per_sample:,.0f} instructions per sample "
          f"(the whole request ÷ 60,100 samples: parse, compile, sample, encode, HTTP).")
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
