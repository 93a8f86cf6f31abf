// Workload 5 (Benchmarks/README.md): how the cost of one request grows.
//
// Each series varies one thing and measures one `/v1/timelines` computation in-process
// (decode + compile + sample + encode, `Engine.respond`): frames (one track), tracks
// (one tween with N properties, 601 frames), nesting depth (groups and sequences
// alternating around one tween, 601 frames), when this build has `path` nodes, path size
// (segments of SVG data, 601 frames), keyframes (one tween property, and one spring
// property with durations, through N keyframes, 601 frames), and stagger size (elements of a
// `*` path staggered on a grid, 601 frames). The growth exponent k of cost ~ size^k is fitted by
// least squares on log-log, once per run; the figure is the median over the runs.
// Goals: linear in samples (k ≈ 1 for frames and tracks); nesting, at a fixed sample count,
// costs no worse than linearly in the nodes it adds (k ≤ 1); path lookup O(log n) per sample
// after an O(n) build — measured directly on `PathGeometry` (build ~ n, lookup ~ log n);
// keyframes, at a fixed sample count, cost O(n) to decode and compile plus O(log n) per
// sample (k ≪ 1: the cost stays linear in samples, not in keyframes × samples).
//
// Environment: BENCH_RUNS (default 5, quick 3), BENCH_QUICK=1 (smaller sizes).
import BenchSupport
import MotionEngine

let quick = Settings.quick
let runs = Settings.runs
let minimumSeconds = quick ? 0.01 : 0.05

/// Seconds per call of `body`, repeated until `minimumSeconds` have passed (at least 3 calls).
func perCall(_ body: () -> Void) -> Double {
    body()  // warm
    var calls = 0
    let start = nowNanos()
    var elapsed = 0.0
    repeat {
        body()
        calls += 1
        elapsed = Double(nowNanos() - start) / 1e9
    } while elapsed < minimumSeconds || calls < 3
    return elapsed / Double(calls)
}

struct Series {
    var name: String
    var unit: String
    var sizes: [Int]
    var document: (Int) -> String
    /// Samples per request at each size (for ns/sample), or nil.
    var samples: ((Int) -> Int)?
    var goal: String
}

let frameSizes = quick ? [1000, 2000, 4000, 8000] : [1000, 2000, 4000, 8000, 16000, 32000, 64000]
let trackSizes = quick ? [10, 20, 40, 80, 160] : [10, 20, 40, 80, 160, 320, 640]
let depthSizes = [1, 2, 4, 8, 16, 32, 64]
let pathSizes = quick ? [10, 100, 1000] : [10, 100, 1000, 10000]
let keyframeSizes = quick ? [2, 10, 100, 1000] : [2, 10, 100, 1000]

/// One property through `count` keyframes over 10 s at 60 fps (601 frames): a tween with an
/// easing on every segment, or a spring heading for each keyframe for 10/(count − 1) s.
func keyframed(_ count: Int, spring: Bool) -> String {
    let values = (0..<count).map { String(($0 * 37) % 100) }.joined(separator: ",")
    if spring {
        let each = 10.0 / Double(count - 1)
        let durations = (0..<(count - 1)).map { "\($0 == count - 2 ? "null" : String(each))" }.joined(separator: ",")
        return #"{"fps":60,"window":{"start":0,"end":10},"target":{"x":0},"motion":{"type":"spring","response":0.3,"dampingRatio":0.8,"properties":[{"path":"x","keyframes":[\#(values)],"durations":[\#(durations)]}]}}"#
    }
    return #"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":10,"easing":"quadratic.inOut","properties":[{"path":"x","keyframes":[\#(values)]}]}}"#
}

var series: [Series] = [
    Series(name: "frames", unit: "frames", sizes: frameSizes,
           document: { Documents.singleTween(seconds: Double($0 - 1) / 60) }, samples: { $0 },
           goal: "k ≈ 1 (linear in samples)"),
    Series(name: "tracks", unit: "tracks", sizes: trackSizes,
           document: { Documents.manyTracks($0, seconds: 10) }, samples: { $0 * 601 },
           goal: "k ≈ 1 (linear in samples)"),
    Series(name: "depth", unit: "levels", sizes: depthSizes,
           document: { Documents.nested(depth: $0, seconds: 10) }, samples: { _ in 601 },
           goal: "601 samples at every depth: no worse than linear in the nodes, k ≤ 1"),
    Series(name: "keyframes", unit: "keyframes", sizes: keyframeSizes,
           document: { keyframed($0, spring: false) }, samples: { _ in 601 },
           goal: "601 samples at every count: O(n) build + O(log n) per sample, k ≪ 1"),
    Series(name: "springkeyframes", unit: "keyframes", sizes: keyframeSizes,
           document: { keyframed($0, spring: true) }, samples: { _ in 601 },
           goal: "601 samples at every count: O(n) build + O(log n) per sample, k ≪ 1"),
]

let pathProbe = Documents.pathNode(segments: 4, seconds: 1)
switch Engine.compile(pathProbe) {
case .success:
    series.append(Series(name: "path", unit: "segments", sizes: pathSizes,
                         document: { Documents.pathNode(segments: $0, seconds: 10) }, samples: { _ in 601 * 2 },
                         goal: "O(n) build + O(log n) per sample"))
case .failure(let error):
    say("scaling path (document): skipped: path nodes not supported yet (\(Engine.describe(error)))")
    note("scaling: path (document): skipped: path nodes not supported yet")
}

// Stagger size: N elements of a 2-column grid expanded from one `*` path, spread over 1 s
// from the centre, each a 9 s tween: 10 s at 60 fps, N × 601 samples.
func staggeredGrid(_ elements: Int) -> String {
    let items = Array(repeating: #"{"o":0}"#, count: elements).joined(separator: ",")
    let rows = (elements + 1) / 2
    return #"{"fps":60,"target":{"items":[\#(items)]},"output":{"events":false,"final":false},"motion":{"type":"tween","duration":9,"easing":"cubic.inOut","stagger":{"amount":1,"grid":[\#(rows),2],"from":"center"},"properties":[{"path":"items.*.o","to":1}]}}"#
}
series.append(Series(name: "stagger", unit: "elements", sizes: trackSizes, document: staggeredGrid,
                     samples: { $0 * 601 }, goal: "k ≈ 1 (linear in samples)"))

// Check every document once, and keep the bodies.
var bodies: [String: [Int: [UInt8]]] = [:]
for s in series {
    for size in s.sizes {
        let text = s.document(size)
        if case .failure(let error) = Engine.compile(text) {
            say("bench-scaling: \(s.name) \(size) is rejected: \(Engine.describe(error))")
            exit(1)
        }
        bodies[s.name, default: [:]][size] = Array(text.utf8)
    }
}

for run in 1...runs {
    for s in series {
        var costs: [Double] = []
        for size in s.sizes {
            let body = bodies[s.name]![size]!
            var bytes = 0
            let cost = perCall { bytes = Engine.respond(body) }
            costs.append(cost)
            var metrics: [(String, Double)] = [("ms", cost * 1000), ("response_bytes", Double(bytes))]
            if let samples = s.samples?(size) { metrics.append(("ns_per_sample", cost * 1e9 / Double(samples))) }
            sample("scaling.\(s.name).\(size)", metrics)
        }
        let k = growthExponent(s.sizes.map(Double.init), costs)
        let fit = linearFit(s.sizes.map(Double.init), costs.map { $0 * 1e6 })
        sample("scaling.\(s.name)", [("exponent", k), ("us_per_unit", fit.b), ("r2", fit.r2)])
        say("run \(run): \(s.name): k = \(fmt(k, 3)) (\(s.goal)); " + zip(s.sizes, costs).map { "\($0) \(s.unit): \(fmt($1 * 1000, 3)) ms" }.joined(separator: ", "))
    }

    // Path geometry (engine): build O(n), lookup O(log n).
    let geometrySizes = quick ? [10, 100, 1000, 10000] : [10, 100, 1000, 10000, 100000]
    var builds: [Double] = [], lookups: [Double] = []
    for size in geometrySizes {
        let svg = Documents.svgPath(segments: size)
        var geometry: PathGeometry?
        let build = perCall { geometry = try? PathGeometry(svg: svg, maxSegments: 1_000_000) }
        guard let geometry else {
            say("bench-scaling: PathGeometry rejects the \(size)-segment path")
            exit(1)
        }
        let count = 100_000
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var fractions = [Double](repeating: 0, count: count)
        for i in 0..<count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            fractions[i] = Double(state >> 11) / Double(1 << 53)
        }
        var checksum = 0.0
        let lookup = perCall {
            for p in fractions {
                let point = geometry.point(atFraction: p)
                checksum += point.x + point.y
            }
        } / Double(count)
        consume(checksum)
        builds.append(build)
        lookups.append(lookup)
        sample("scaling.pathgeometry.\(size)", [("build_ms", build * 1000), ("lookup_ns", lookup * 1e9)])
    }
    let buildK = growthExponent(geometrySizes.map(Double.init), builds)
    let lookupK = growthExponent(geometrySizes.map(Double.init), lookups)
    let perDoubling = linearFit(geometrySizes.map { log2(Double($0)) }, lookups.map { $0 * 1e9 })
    sample("scaling.pathgeometry.build", [("exponent", buildK)])
    sample("scaling.pathgeometry.lookup", [("exponent", lookupK), ("ns_per_doubling", perDoubling.b), ("r2_vs_log2n", perDoubling.r2)])
    say("run \(run): path geometry: build k = \(fmt(buildK, 3)) (goal 1); lookup k = \(fmt(lookupK, 3)), \(fmt(perDoubling.b, 3)) ns per doubling of n (goal O(log n)); " + zip(geometrySizes, lookups).map { "\($0): \(fmt($1 * 1e9, 3)) ns" }.joined(separator: ", "))
}
