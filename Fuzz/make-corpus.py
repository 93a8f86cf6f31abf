#!/usr/bin/env python3
"""Regenerates the seed corpora in Fuzz/corpus/<target>/ from the README examples and the
documents, easings and SVG paths in the tests (run from anywhere; writes small files named by
content hash). The corpora are committed; re-run only to refresh them."""
import hashlib, json, os, re, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = os.path.join(root, "Fuzz", "corpus")

def read(path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()

sources = ["README.md"] + [os.path.join(d, f) for d in ("Tests/MotionEngineTests", "Tests/MotionServerTests")
                           for f in sorted(os.listdir(os.path.join(root, d))) if f.endswith(".swift")]
texts = {p: read(p) for p in sources}

# JSON documents: curl -d '...' bodies and ```json blocks in the README, raw strings #"…"# and
# multi-line """ blocks (without interpolation) in the tests.
candidates = []
for path, text in texts.items():
    candidates += re.findall(r"-d '(.*?)'", text, re.S)
    candidates += re.findall(r"```json\n(.*?)```", text, re.S)
    candidates += re.findall(r'#"(.*?)"#', text, re.S)
    for block in re.findall(r'"""\n(.*?)"""', text, re.S):
        if "\\(" not in block:
            candidates.append(block)
documents, others = [], []
for c in candidates:
    try:
        value = json.loads(c)
    except Exception:
        if c.strip().startswith("{"):
            others.append(c)  # malformed on purpose: keep a few for the JSON target
        continue
    (documents if isinstance(value, dict) and "motion" in value else others).append(c)

easings = set()
svgs = set()
for text in texts.values():
    for s in re.findall(r'"((?:linear|ease|steps|cubic-bezier|step-)[^"\\]*|[a-z]+\.(?:in|out|inOut))"', text):
        easings.add(s)
    for s in re.findall(r'"([Mm] ?[-0-9.][^"\\]*)"', text):
        svgs.add(s)
for name in ["back.in", "elastic.out", "bounce.inOut", "steps(4, jump-both)", "steps(3, start)", "step-start"]:
    easings.add(name)

def write(target, items, limit):
    directory = os.path.join(out, target)
    os.makedirs(directory, exist_ok=True)
    seen = set()
    for item in items:
        data = item.encode() if isinstance(item, str) else item
        if len(data) > 4096 or data in seen:
            continue
        if len(seen) == limit:
            break
        seen.add(data)
        with open(os.path.join(directory, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
            f.write(data)
    print(f"{target}: {len(seen)} files")

documents = sorted(set(documents), key=len)
write("FuzzDocument", documents, 80)
write("FuzzJSON", documents[:40] + sorted(set(others), key=len)[:30] + ['[1,-0.5e3,"\\u00e9\\ud83d\\ude00",true,null,{}]'], 80)
write("FuzzEasing", sorted(easings), 120)
write("FuzzSVGPath", sorted(svgs), 120)

def request(method, target, body=b"", content_type="application/json", accept=None):
    head = f"{method} {target}\n"
    if content_type: head += f"Content-Type: {content_type}\n"
    if accept: head += f"Accept: {accept}\n"
    return head.encode() + b"\n" + (body.encode() if isinstance(body, str) else body)

def requests(*parts):
    return b"\n%%\n".join(parts)

small = '{"fps":10,"target":{"x":0},"motion":{"type":"tween","path":"x","to":100,"duration":1}}'
small = next((d for d in documents if '"x"' in d and len(d) < 200), small)
http = [
    request("GET", "/healthz", content_type=None), request("GET", "/readyz", content_type=None),
    request("GET", "/v1/easings", content_type=None), request("HEAD", "/metrics", content_type=None),
    request("GET", "/openapi.yaml", content_type=None), request("DELETE", "/v1/timelines", content_type=None),
    request("GET", "/nowhere/%41?x=1", content_type=None),
    request("POST", "/v1/timelines", "{", content_type="text/plain"),
    request("POST", "/v1/streams?speed=0", small, accept="application/x-ndjson"),
    request("POST", "/v1/streams?speed=1000", small, accept="text/event-stream"),
    request("POST", "/v1/streams?speed=-1", small),
    requests(request("POST", "/v1/sessions?speed=2", small),
             request("GET", "/v1/sessions/@", content_type=None),
             request("POST", "/v1/sessions/@/commands", '{"command":"pause"}'),
             request("POST", "/v1/sessions/@/commands", '{"command":"seek","time":0.5}'),
             request("POST", "/v1/sessions/@/retarget", '{"path":"x","to":50,"response":0.3,"dampingRatio":0.8}'),
             request("GET", "/v1/sessions/@/frames", content_type=None, accept="text/event-stream"),
             request("DELETE", "/v1/sessions/@", content_type=None)),
    requests(request("POST", "/v1/sessions", small),
             request("POST", "/v1/sessions/@/commands", '{"command":"reverse"}', content_type="application/merge-patch+json"),
             request("POST", "/v1/sessions/@/commands", '{"command":"stop","time":1}'),
             request("GET", "/v1/sessions/@/frames", content_type=None)),
]
http += [request("POST", "/v1/springs", b) for b in (
    '{"response":0.5,"dampingRatio":0.6}', '{"visualDuration":0.3,"bounce":0.25,"tolerance":0.01}',
    '{"overshoot":0.1,"settlingTime":0.8,"velocity":2}', '{"overshoot":0.2,"peakTime":0.25}',
    '{"dampingRatio":1.5,"settlingTime":1,"restDelta":0.01}', '{"stiffness":100,"damping":40,"mass":2,"frequency":1}')]
http += [request("POST", "/v1/timelines", d) for d in documents[:40]]
write("FuzzHTTP", http, 80)
