#!/usr/bin/env python3
"""Inclusive time per function from `perf script` output (recorded with -g): the share of
samples whose stack contains the function, each function counted once per stack. Reads the
(demangled) script on stdin; prints the top functions, kernel symbols folded into
"[kernel]" and libc/libswiftCore leaves kept by name.

    perf script -i perf.data | swift demangle --simplified | perf-inclusive.py [--top 25]
"""
import re
import sys
from collections import Counter

top = 25
if "--top" in sys.argv:
    top = int(sys.argv[sys.argv.index("--top") + 1])

frame = re.compile(r"^\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")
inclusive, self_cost = Counter(), Counter()
total = 0
for stack in sys.stdin.read().split("\n\n"):
    lines = [l for l in stack.strip().split("\n") if l.strip()]
    if len(lines) < 2:
        continue
    total += 1
    seen = set()
    for depth, line in enumerate(lines[1:]):
        m = frame.match(line)
        if not m:
            continue
        name, dso = m.group(1), m.group(2)
        name = re.sub(r"\+0x[0-9a-f]+$", "", name)
        if "kernel" in dso or name.startswith("[unknown]") or re.match(r"^0x[0-9a-f]+$", name):
            name = "[kernel]" if "kernel" in dso else name
        if depth == 0:
            self_cost[name] += 1
        if name not in seen:
            seen.add(name)
            inclusive[name] += 1

if total == 0:
    sys.exit(0)
print(f"samples: {total}")
print("inclusive  self  function")
skip = re.compile(r"^(\[unknown\]|0x[0-9a-f]+|_start|__libc_start.*|start_thread|clone3?|main|thread_start"
                  r"|partial apply for .*|@objc closure .*|thunk for .*|.*_main)$")
shown = 0
for name, count in inclusive.most_common():
    if skip.match(name):
        continue
    print(f"{100 * count / total:8.1f}% {100 * self_cost[name] / total:5.1f}%  {name[:140]}")
    shown += 1
    if shown >= top:
        break
