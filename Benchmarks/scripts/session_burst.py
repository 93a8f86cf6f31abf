#!/usr/bin/env python3
"""Session requests against a running server: a burst of creations, and command latency.

    session_burst.py --port PORT burst N        # N `POST /v1/sessions` sent at once
    session_burst.py --port PORT commands N     # N pause/resume commands, one after another

`burst` opens N connections, then sends one session creation on each at the same moment
(a barrier releases the threads) and counts the answers by status: a 503 is a session the
client was refused. `commands` creates one session and times N commands on one keep-alive
connection (request sent to status line read), alternating pause and resume; it prints
p50, p99 and max in ms. Run it beside `stream_load` to see commands under a stream load.
Benchmarks/README.md ("Sessions on the connection thread") has the figures.
"""
import argparse
import json
import socket
import statistics
import threading
import time

DOCUMENT = json.dumps({"fps": 60, "target": {"x": 0},
                       "motion": {"type": "tween", "duration": 10, "easing": "quadratic.inOut",
                                  "properties": [{"path": "x", "to": 320}]}}).encode()


def request(method, target, body=b"", keep_alive=False):
    head = (f"{method} {target} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n" + ("" if keep_alive else "Connection: close\r\n") + "\r\n")
    return head.encode() + body


def read_answer(sock, buffered=b""):
    """Reads one answer with a Content-Length; returns (status, body, bytes left over)."""
    data = buffered
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the answer's head")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = next(int(line.split(b":", 1)[1]) for line in lines[1:] if line.lower().startswith(b"content-length:"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed in the answer's body")
        rest += chunk
    return status, rest[:length], rest[length:]


def burst(port, count):
    sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
    barrier = threading.Barrier(count)
    statuses = [0] * count

    def one(index):
        sock = sockets[index]
        payload = request("POST", "/v1/sessions", DOCUMENT)
        barrier.wait()
        try:
            sock.sendall(payload)
            statuses[index] = read_answer(sock)[0]
        except OSError:
            statuses[index] = -1
        finally:
            sock.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - start
    counts = {status: statuses.count(status) for status in sorted(set(statuses))}
    print(json.dumps({"sessions": count, "statuses": counts, "seconds": round(elapsed, 3)}))


def commands(port, count):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(request("POST", "/v1/sessions?speed=0.001", DOCUMENT, keep_alive=True))
    status, body, left = read_answer(sock)
    assert status == 201, (status, body)
    path = f"/v1/sessions/{json.loads(body)['id']}/commands"
    latencies, statuses = [], {}
    for index in range(count):
        payload = request("POST", path, b'{"command":"pause"}' if index % 2 == 0 else b'{"command":"resume"}', keep_alive=True)
        start = time.monotonic()
        sock.sendall(payload)
        status, _, left = read_answer(sock, left)
        latencies.append((time.monotonic() - start) * 1000)
        statuses[status] = statuses.get(status, 0) + 1
    sock.close()
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(json.dumps({"commands": count, "statuses": statuses, "p50_ms": round(statistics.median(latencies), 3),
                      "p99_ms": round(p99, 3), "max_ms": round(latencies[-1], 3)}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("mode", choices=["burst", "commands"])
    parser.add_argument("count", type=int)
    arguments = parser.parse_args()
    (burst if arguments.mode == "burst" else commands)(arguments.port, arguments.count)


if __name__ == "__main__":
    main()
