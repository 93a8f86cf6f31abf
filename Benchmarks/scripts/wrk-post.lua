-- wrk script for workload 3: POST the small document (the file named by WRK_BODY_FILE)
-- with Content-Type: application/json, and print one machine-readable result line.
-- The same script drives motion-server and nginx, so both get identical requests.
--
-- Every request is a distinct document: the first `"to":NUMBER` of the file is replaced by
-- a number that changes with every request (320.001, 320.002, …), so the figure measures
-- computing, not a cache. nginx serves one file whatever the body says, as it must.
-- WRK_SAME_DOCUMENT=1 sends the file unchanged every time; with WRK_IF_NONE_MATCH=TAG it
-- also sends `If-None-Match: TAG` (the cached figure: motion-server answers 304).
local path = os.getenv("WRK_BODY_FILE")
local file = assert(io.open(path, "rb"), "WRK_BODY_FILE not readable: " .. tostring(path))
local body = file:read("*a")
file:close()
wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
local tag = os.getenv("WRK_IF_NONE_MATCH")
if tag and tag ~= "" then wrk.headers["If-None-Match"] = tag end

local same = os.getenv("WRK_SAME_DOCUMENT") == "1"
local head, tail = body:match('^(.-"to":)[-0-9.eE+]+(.*)$')
assert(same or head, "WRK_BODY_FILE has no \"to\":NUMBER to vary")
local counter = 0

function request()
  if same then return wrk.request() end
  counter = counter + 1
  local n = 320 + (counter % 1000000) / 1000
  return wrk.format(nil, nil, nil, head .. string.format("%.3f", n) .. tail)
end

function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format(
    "WRKRESULT requests=%d duration_s=%.6f rps=%.3f p50_ms=%.4f p99_ms=%.4f max_ms=%.4f errors=%d non2xx=%d bytes=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    errors, summary.errors.status, summary.bytes))
end
