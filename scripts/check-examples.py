#!/usr/bin/env python3
"""Runs the examples of the documentation against a real server and compares their output.

    scripts/check-examples.py [--binary .build/debug/motion-server] [FILE.md ...]

With no files: README.md and every docs/*.md. For each file a fresh server is started on an
ephemeral loopback port. An example is a ```sh fenced block that holds a `curl` command
aimed at `localhost:8080`, followed directly (blank lines apart) by a fenced answer block:

- ```json: the output and the answer are read as sequences of JSON values and compared as
  values (layout free; numbers compared exactly). In the answer, a bare `…` stands for any
  one value (as an array's last element: for any number of further elements, none
  included), and `…` inside a string for any run of characters.
- ```http: for `curl -i`: the status line must match, every header shown must be present
  with that value (others may be there too), and the body after the blank line is compared
  as JSON when the answer's body parses as JSON, else as text.
- any other language: compared as text, trailing whitespace ignored; a line that is just
  `…` stands for any number of lines, and `…` inside a line for any run of characters.

The whole sh block runs in one bash (so `ID=$(curl …)` then `curl …/$ID` works), with
`localhost:8080` rewritten to the server's port, and each block at most --timeout seconds.
A curl block with no answer block after it fails the check, unless the line before it is
`<!-- not checked: REASON -->` (for examples whose output cannot be shown, used sparingly).
Exit status 1 when any example differs.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

ELLIPSIS = "\u2026"
WILDCARD = "\u2026wildcard\u2026"
FENCE = re.compile(r"^```(\S*)\s*$")
SKIP = re.compile(r"^<!--\s*not checked:\s*(.+?)\s*-->\s*$")


def blocks(text):
    """Yields (language, body, first line number, skip reason, answer) for every sh block."""
    lines = text.split("\n")
    fenced = []  # (language, body, start line, reason or None, end line)
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        reason = None
        k = start - 1
        while k >= 0 and lines[k].strip() == "":
            k -= 1
        if k >= 0:
            s = SKIP.match(lines[k].strip())
            if s:
                reason = s.group(1)
        fenced.append((lang, "\n".join(lines[start + 1:j]), start + 1, reason, j))
        i = j + 1
    for index, (lang, body, line, reason, end) in enumerate(fenced):
        if lang != "sh" or not re.search(r"\bcurl\b[^\n]*localhost:8080", body):
            continue
        answer = None
        if index + 1 < len(fenced):
            nlang, nbody, nline, _, _ = fenced[index + 1]
            between = lines[end + 1:nline - 1]
            if all(b.strip() == "" for b in between) and nlang != "sh":
                answer = (nlang, nbody)
        yield body, line, reason, answer


def json_values(text):
    """The JSON values in text, one after another (NDJSON or concatenated)."""
    decoder = json.JSONDecoder()
    values, i = [], 0
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i >= len(text):
            return values
        value, i = decoder.raw_decode(text, i)
        values.append(value)


def answer_json(text):
    """The answer's JSON values with bare `…` (outside strings) turned into a wildcard."""
    out, in_string, escape = [], False, False
    for ch in text:
        if in_string:
            out.append(ch)
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif ch == ELLIPSIS:
            out.append(json.dumps(WILDCARD))
        else:
            out.append(ch)
    return json_values("".join(out))


def text_pattern(line):
    return re.compile("^" + ".*".join(re.escape(p) for p in line.split(ELLIPSIS)) + "$", re.S)


def same_json(expected, actual, where="$"):
    """None when actual matches expected (with wildcards), else where they differ."""
    if expected == WILDCARD:
        return None
    if isinstance(expected, str) and ELLIPSIS in expected:
        if isinstance(actual, str) and text_pattern(expected).match(actual):
            return None
        return f"{where}: {json.dumps(actual)} does not match {json.dumps(expected)}"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected an object, got {json.dumps(actual)[:80]}"
        if set(expected) != set(actual):
            return f"{where}: keys {sorted(actual)} instead of {sorted(expected)}"
        for key in expected:
            d = same_json(expected[key], actual[key], f"{where}.{key}")
            if d:
                return d
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"{where}: expected an array, got {json.dumps(actual)[:80]}"
        if expected and expected[-1] == WILDCARD:
            # `[a, b, …]`: these first elements, then any number more (none included).
            if len(actual) < len(expected) - 1:
                return f"{where}: {len(actual)} elements instead of at least {len(expected) - 1}"
            expected = expected[:-1]
            actual = actual[:len(expected)]
        if len(expected) != len(actual):
            return f"{where}: {len(actual)} elements instead of {len(expected)}"
        for n, (e, a) in enumerate(zip(expected, actual)):
            d = same_json(e, a, f"{where}[{n}]")
            if d:
                return d
        return None
    # JSON numbers: 1 and 1.0 are the same value; booleans are not numbers.
    if isinstance(expected, bool) or isinstance(actual, bool):
        same = expected is actual
    elif isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        same = float(expected) == float(actual)
    else:
        same = expected == actual
    return None if same else f"{where}: {json.dumps(actual)} instead of {json.dumps(expected)}"


def same_text(expected, actual):
    exp = [l.rstrip() for l in expected.rstrip().split("\n")]
    act = [l.rstrip() for l in actual.rstrip().split("\n")] if actual.strip() else []

    def match(i, j):
        if i == len(exp):
            return j == len(act)
        if exp[i] == ELLIPSIS:
            return any(match(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and bool(text_pattern(exp[i]).match(act[j])) and match(i + 1, j + 1)

    if match(0, 0):
        return None
    for n, (e, a) in enumerate(zip(exp, act)):
        if e != ELLIPSIS and not text_pattern(e).match(a):
            return f"line {n + 1}: {a!r} instead of {e!r}"
    return f"{len(act)} lines instead of {len(exp)}"


def same_http(expected, actual):
    """`curl -i` output: status line, the headers shown, then the body."""
    def split(text):
        text = text.replace("\r\n", "\n")
        head, _, body = text.partition("\n\n")
        lines = head.split("\n")
        headers = {}
        for line in lines[1:]:
            if not line.strip():
                continue
            name, _, value = line.partition(":")
            headers.setdefault(name.strip().lower(), []).append(value.strip())
        return lines[0].strip(), headers, body
    estatus, eheaders, ebody = split(expected.strip() + "\n")
    astatus, aheaders, abody = split(actual)
    if not text_pattern(estatus).match(astatus):
        return f"status line {astatus!r} instead of {estatus!r}"
    for name, values in eheaders.items():
        for value in values:
            if not any(text_pattern(value).match(a) for a in aheaders.get(name, [])):
                return f"header {name}: {aheaders.get(name)} instead of {value!r}"
    if ebody.strip():
        try:
            evalues = answer_json(ebody)
        except ValueError:
            return same_text(ebody, abody)
        try:
            avalues = json_values(abody)
        except ValueError:
            return f"body is not JSON: {abody[:200]!r}"
        return compare_sequences(evalues, avalues)
    if abody.strip():
        return f"unexpected body {abody[:200]!r}"
    return None


def compare_sequences(expected, actual):
    if len(expected) != len(actual):
        return f"{len(actual)} JSON values instead of {len(expected)}"
    for n, (e, a) in enumerate(zip(expected, actual)):
        d = same_json(e, a, f"value {n + 1}")
        if d:
            return d
    return None


def compare(lang, expected, actual):
    if lang == "json":
        try:
            evalues = answer_json(expected)
        except ValueError as e:
            return f"the answer block is not JSON: {e}"
        try:
            avalues = json_values(actual)
        except ValueError:
            return f"output is not JSON: {actual[:300]!r}"
        return compare_sequences(evalues, avalues)
    if lang == "http":
        return same_http(expected, actual)
    return same_text(expected, actual)


class Server:
    def __init__(self, binary, extra):
        self.process = subprocess.Popen(
            [binary, "--host", "127.0.0.1", "--port", "0", "--log-level", "error"] + extra,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("MOTION_")})
        deadline = time.time() + 30
        self.port = None
        while time.time() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            m = re.search(r"http://[^:]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            self.stop()
            raise SystemExit(f"{binary} did not report its port")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def run_block(script, timeout, cwd):
    """Runs a block in bash, in its own process group (background jobs included), and returns
    its standard output and whether it finished in time; the whole group is killed at the end."""
    process = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, cwd=cwd, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
        finished = True
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        finished = False
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return output, finished


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--binary", default=".build/debug/motion-server")
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--server-arg", action="append", default=[],
                        help="an extra argument for the server (repeatable)")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = args.files or (["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md")))
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"no server binary at {binary}: swift build first")
    failures = checked = skipped = 0
    for name in files:
        path = name if os.path.isabs(name) else os.path.join(root, name)
        with open(path, encoding="utf-8") as f:
            examples = list(blocks(f.read()))
        if not examples:
            continue
        server = Server(binary, args.server_arg)
        try:
            for body, line, reason, answer in examples:
                where = f"{name}:{line}"
                if reason:
                    skipped += 1
                    print(f"skip {where}: {reason}")
                    continue
                if answer is None:
                    failures += 1
                    print(f"FAIL {where}: a curl example with no answer block after it "
                          "(show the output, or mark it <!-- not checked: reason -->)")
                    continue
                script = body.replace("localhost:8080", f"localhost:{server.port}")
                output, finished = run_block(script, args.timeout, root)
                if not finished:
                    failures += 1
                    print(f"FAIL {where}: did not finish within {args.timeout} s\n---- output ----\n{output[:2000]}\n----")
                    continue
                difference = compare(answer[0], answer[1], output)
                checked += 1
                if difference:
                    failures += 1
                    print(f"FAIL {where}: {difference}\n---- output ----\n{output[:int(os.environ.get('CHECK_EXAMPLES_SHOW', 2000))]}\n----")
                else:
                    print(f"ok   {where}")
        finally:
            server.stop()
    print(f"{checked} examples run, {failures} failed, {skipped} not checked")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
