-- wrk script for workload 3: POST the small document (the file named by WRK_BODY_FILE)
-- with Content-Type: application/json, and print one machine-readable result line.
-- The same script drives motion-server and nginx, so both get identical requests.
local path = os.getenv("WRK_BODY_FILE")
local file = assert(io.open(path, "rb"), "WRK_BODY_FILE not readable: " .. tostring(path))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"

function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format(
    "WRKRESULT requests=%d duration_s=%.6f rps=%.3f p50_ms=%.4f p99_ms=%.4f max_ms=%.4f errors=%d non2xx=%d bytes=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    errors, summary.errors.status, summary.bytes))
end
