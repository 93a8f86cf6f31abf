// Workload 2 (Benchmarks/README.md): timeline throughput.
//
// A 100-track mix of tween, spring and physics nodes (one node per track, all repeating for
// ever) in one group, sampled at 60 fps over a 60 s window: 3601 frames × 100 tracks ≈
// 360,000 samples. Two figures per run:
//   - sampling alone: the compiled timeline sampled at every frame (`Timeline.sample`), and a
//     track at a time over every frame (`Track.values`, as the `json` answer does);
//   - the full path of `/v1/timelines`: decode + compile (`TimelineCompiler.compile(bytes)`)
//     then sample + encode (`TimelineEncoder.encode`), with the split between the two.
// Samples per second and response bytes per second; median, min and max over the runs.
// Node types this build rejects are replaced by tweens, with a NOTE saying so.
//
// Environment: BENCH_RUNS (default 5, quick 3), BENCH_TRACKS (100), BENCH_SECONDS (60),
// BENCH_PROFILE=1 (one long loop of the full path, for perf/callgrind; no SAMPLE lines).
import BenchSupport
import MotionEngine

let trackCount = Settings.int("BENCH_TRACKS", 100)
let windowSeconds = Double(Settings.int("BENCH_SECONDS", 60))
let runs = Settings.runs

// Which kinds does this build compute, and in which form?
var forms: [Documents.Kind: Int] = [:]
for kind in Documents.Kind.allCases {
    var reasons: [String] = []
    for form in 0..<2 {
        guard let node = Documents.node(kind, track: 0, form: form) else { continue }
        if let reason = Engine.unsupported(node) {
            reasons.append(reason)
        } else {
            forms[kind] = form
            break
        }
    }
    if forms[kind] == nil {
        note("timeline: '\(kind.rawValue)' nodes are rejected by this build (\(reasons.first ?? "?")); those tracks use tweens instead\(kind == .spring ? " with a spring easing" : "")")
    } else if forms[kind] == 1 {
        note("timeline: '\(kind.rawValue)' nodes do not take \"repeat\": \"infinite\" here; they run once and then hold")
    }
}

let kinds = Documents.Kind.allCases
let nodes = (0..<trackCount).map { i -> String in
    let kind = kinds[i % kinds.count]
    if let form = forms[kind], let node = Documents.node(kind, track: i, form: form) { return node }
    return Documents.fallbackNode(kind, track: i)
}
let text = Documents.mix(nodes: nodes, seconds: windowSeconds)
let body = Array(text.utf8)

let timeline: Timeline
switch Engine.compile(text, limits: .default) {
case .success(let compiled): timeline = compiled
case .failure(let error):
    say("bench-timeline: the mix document is rejected: \(Engine.describe(error))")
    exit(1)
}
let samples = timeline.frameCount * timeline.tracks.count
let mixDescription = kinds.map { kind in
    "\(trackCount / kinds.count + (kinds.firstIndex(of: kind)! < trackCount % kinds.count ? 1 : 0)) \(forms[kind] != nil ? kind.rawValue : "\(kind.rawValue)→tween")"
}.joined(separator: ", ")
say("timeline: \(timeline.tracks.count) tracks (\(mixDescription)), \(timeline.frameCount) frames, \(samples) samples, \(timeline.events.count) events, request \(body.count) bytes")

if Settings.string("BENCH_PROFILE") != nil {
    // For the profilers: the full path, over and over.
    let loops = Settings.int("BENCH_LOOPS", 5)
    var total = 0
    for _ in 0..<loops { total += Engine.respond(body, limits: .default) }
    say("profile loop: \(loops) responses, \(total) bytes")
    exit(0)
}

/// Sampling alone: every frame of the compiled timeline.
@inline(never)
func sampleAll(_ timeline: Timeline) -> Double {
    var values: [Double] = []
    var checksum = 0.0
    for k in 0..<timeline.frameCount {
        timeline.sample(at: timeline.time(ofFrame: k), into: &values)
        for value in values { checksum += value }
    }
    return checksum
}

/// Sampling as the `json` answer's frame grid does it: a whole track at a time over every
/// frame time (`Track.values(at:into:cache:)`: a cursor over the segments, curves evaluated
/// in place, tween progress shared between tracks).
@inline(never)
func sampleTracks(_ timeline: Timeline) -> Double {
    let times = (0..<timeline.frameCount).map { timeline.time(ofFrame: $0) }
    var values = [Double](repeating: 0, count: times.count)
    var cache = TweenProgressCache(enabled: timeline.tracks.count > 1)
    var checksum = 0.0
    times.withUnsafeBufferPointer { times in
        values.withUnsafeMutableBufferPointer { values in
            for track in timeline.tracks {
                track.values(at: times, into: values.baseAddress!, cache: &cache)
                for value in values { checksum += value }
            }
        }
    }
    return checksum
}

/// The full path; returns (decode+compile seconds, sample+encode seconds, response bytes).
@inline(never)
func fullPath(_ body: [UInt8]) -> (Double, Double, Int) {
    let start = nowNanos()
    guard let compiled = try? TimelineCompiler(limits: .default).compile(body) else { return (0, 0, -1) }
    let middle = nowNanos()
    let response = TimelineEncoder.encode(compiled)
    let end = nowNanos()
    return (Double(middle - start) / 1e9, Double(end - middle) / 1e9, response.count)
}

// Warm-up.
consume(sampleAll(timeline))
let (_, _, responseBytes) = fullPath(body)
guard responseBytes > 0 else {
    say("bench-timeline: the full path failed")
    exit(1)
}
say("timeline: response \(responseBytes) bytes")

for run in 1...runs {
    var checksum = 0.0
    let sampling = seconds { checksum = sampleAll(timeline) }
    consume(checksum)
    let trackSampling = seconds { checksum = sampleTracks(timeline) }
    consume(checksum)
    let (compile, encode, bytes) = fullPath(body)
    let full = compile + encode
    sample("timeline.sampling", [("samples_per_s", Double(samples) / sampling), ("ms", sampling * 1000)])
    sample("timeline.sampling_tracks", [("samples_per_s", Double(samples) / trackSampling), ("ms", trackSampling * 1000)])
    sample("timeline.full", [("samples_per_s", Double(samples) / full), ("bytes_per_s", Double(bytes) / full),
                             ("ms", full * 1000), ("compile_ms", compile * 1000), ("encode_ms", encode * 1000),
                             ("response_bytes", Double(bytes)), ("samples", Double(samples))])
    say("run \(run): sampling \(fmt(sampling * 1000)) ms (\(fmt(Double(samples) / sampling / 1e6)) M samples/s), a track at a time \(fmt(trackSampling * 1000)) ms (\(fmt(Double(samples) / trackSampling / 1e6)) M samples/s); full \(fmt(full * 1000)) ms = decode+compile \(fmt(compile * 1000)) + sample+encode \(fmt(encode * 1000)) (\(fmt(Double(samples) / full / 1e6)) M samples/s, \(fmt(Double(bytes) / full / 1e6)) MB/s)")
}
