// Output formats and keyframe reduction (docs/exports.md): what each costs.
//
// 1. Formats: one mid-size document (20 tracks: springs, elastic tweens and bouncing physics,
//    3 s at 60 fps = 181 frames) compiled once, then encoded as json, json with
//    simplify (linear and cubic, ε = 0.05), csv, svg, css and waapi (every track a custom
//    property) and lottie (five layers, each driven by four tracks: position x and y,
//    rotation, scale), the last three with their default tolerance and with ε = 0.05:
//    milliseconds and bytes per answer. Then colours: five rgba colours (elastic, back and
//    spring motions, 3 s at 60 fps) exported as css (one declaration each, premultiplied)
//    and lottie (one layer's fill each).
// 2. Reduction per track, ε = 0.05 on values 0…100 at 60 fps: a spring, an elastic tween and
//    a bouncing physics motion, linear and cubic: µs per track, keyframes, the frames the
//    same window has, curve evaluations and the error found.
// Median, min and max over the runs (one warm-up first).
//
// Environment: BENCH_RUNS (default 5, quick 3), BENCH_TOLERANCE (0.05).
import BenchSupport
import MotionEngine

let runs = Settings.runs
let tolerance = Double(Settings.string("BENCH_TOLERANCE") ?? "") ?? 0.05

func compiled(_ text: String) -> Timeline {
    switch Engine.compile(text, limits: .default) {
    case .success(let timeline): return timeline
    case .failure(let error):
        say("bench-exports: a document is rejected: \(Engine.describe(error))")
        exit(1)
    }
}

/// The median-of-runs timer: one warm-up, then `runs` measured calls.
func measure(_ body: () throws -> Int) rethrows -> [(seconds: Double, bytes: Int)] {
    _ = try body()
    var result: [(Double, Int)] = []
    for _ in 0..<runs {
        var bytes = 0
        let elapsed = try seconds { bytes = try body() }
        result.append((elapsed, bytes))
    }
    return result
}

let spring = #"{"type":"spring","response":0.6,"dampingRatio":0.3,"properties":[{"path":"P","to":100}]}"#
let elastic = #"{"type":"tween","duration":2,"easing":"elastic.out","properties":[{"path":"P","to":100}]}"#
let bouncing = #"{"type":"physics","velocity":900,"friction":0.3,"restitution":0.8,"collisions":true,"properties":[{"path":"P","from":0,"to":100}]}"#
let motions = [("spring", spring), ("elastic", elastic), ("bouncing", bouncing)]

// 1. Formats.
let trackCount = 20
let children = (0..<trackCount).map { motions[$0 % 3].1.replacingOccurrences(of: "\"P\"", with: "\"t\($0)\"") }
let target = (0..<trackCount).map { "\"t\($0)\":0" }.joined(separator: ",")
let mix = #"{"fps":60,"window":{"start":0,"end":3},"target":{\#(target)},"motion":{"type":"group","children":[\#(children.joined(separator: ","))]},"output":OUTPUT}"#
let lottieLayers = (0..<(trackCount / 4)).map { i in
    ##"{"shape":"ellipse","size":[20,20],"fill":"#336699","position":["{t\##(4 * i)}","{t\##(4 * i + 1)}"],"rotation":"{t\##(4 * i + 2)}","scale":"{t\##(4 * i + 3)}"}"##
}
let lottieOptions = #"{"width":400,"height":300,"layers":[\#(lottieLayers.joined(separator: ","))]}"#
let formats: [(String, String)] = [
    ("json", #"{"format":"json"}"#),
    ("json-simplify-linear", #"{"simplify":{"tolerance":\#(tolerance)}}"#),
    ("json-simplify-cubic", #"{"simplify":{"tolerance":\#(tolerance),"interpolation":"cubic"}}"#),
    ("csv", #"{"format":"csv"}"#),
    ("svg", #"{"format":"svg"}"#),
    ("css", #"{"format":"css"}"#),
    ("css-simplify", #"{"format":"css","simplify":{"tolerance":\#(tolerance)}}"#),
    ("waapi", #"{"format":"waapi"}"#),
    ("lottie", #"{"format":"lottie","lottie":\#(lottieOptions)}"#),
    ("lottie-simplify", #"{"format":"lottie","simplify":{"tolerance":\#(tolerance)},"lottie":\#(lottieOptions)}"#),
]
let frames = compiled(mix.replacingOccurrences(of: "OUTPUT", with: "{}")).frameCount
say("exports: formats of one compiled timeline, \(trackCount) tracks × \(frames) frames (springs, elastic tweens, bouncing physics), ε = \(tolerance)")
/// Each output of `formats` over `document` (its `OUTPUT` replaced): ms and bytes an answer.
func measureFormats(_ formats: [(String, String)], of document: String) throws {
    for (name, output) in formats {
        let timeline = compiled(document.replacingOccurrences(of: "OUTPUT", with: output))
        let results = try measure { try TimelineExport.encode(timeline).body.count }
        for result in results {
            sample("exports.format.\(name)", [("ms", result.seconds * 1e3), ("bytes", Double(result.bytes))])
        }
        let median = results.map(\.seconds).sorted()[results.count / 2]
        say("  \(name): \(fmt(median * 1e3)) ms, \(results[0].bytes) bytes")
    }
}
try measureFormats(formats, of: mix)

// Colours: every channel of a colour reads all of its tracks, so this is what rendering a
// colour costs an export.
let colourMotions = [
    #"{"type":"tween","duration":3,"easing":"elastic.out","properties":[{"path":"P","to":"rgba(250,140,20,1)"}]}"#,
    #"{"type":"tween","duration":2.5,"easing":"back.inOut","properties":[{"path":"P","to":"rgb(32,192,160)"}]}"#,
    #"{"type":"spring","response":0.8,"dampingRatio":0.35,"properties":[{"path":"P","to":"rgba(40,60,240,0.9)"}]}"#,
]
let colourCount = 5
let colourChildren = (0..<colourCount).map { colourMotions[$0 % 3].replacingOccurrences(of: "\"P\"", with: "\"c\($0)\"") }
let colourTarget = (0..<colourCount).map { "\"c\($0)\":\"rgba(20,40,200,0.3)\"" }.joined(separator: ",")
let colourDocument = #"{"fps":60,"window":{"start":0,"end":3},"target":{\#(colourTarget)},"motion":{"type":"group","children":[\#(colourChildren.joined(separator: ","))]},"output":OUTPUT}"#
let colourDeclarations = (0..<colourCount).map { #""--c\#($0)":"{c\#($0)}""# }.joined(separator: ",")
let colourLayers = (0..<colourCount).map { #"{"shape":"rect","size":[40,40],"position":[\#(40 + 60 * $0),100],"fill":"{c\#($0)}"}"# }
let colourFormats: [(String, String)] = [
    ("css-colours", #"{"format":"css","css":{"declarations":{\#(colourDeclarations)}}}"#),
    ("lottie-colours", #"{"format":"lottie","lottie":{"width":400,"height":200,"layers":[\#(colourLayers.joined(separator: ","))]}}"#),
]
say("exports: \(colourCount) colours (elastic, back and spring rgba motions), 3 s at 60 fps")
try measureFormats(colourFormats, of: colourDocument)

// 2. Reduction per track.
say("exports: reduction of one track, ε = \(tolerance) on 0…100")
for (name, node) in motions {
    let timeline = compiled(#"{"fps":60,"target":{"P":0},"motion":\#(node)}"#)
    let track = timeline.tracks[0]
    for interpolation in [SimplifyOptions.Interpolation.linear, .cubic] {
        var reduced: ReducedTrack?
        let results = try measure {
            let r = try KeyframeReducer.reduce(track: track, in: timeline, tolerance: tolerance, interpolation: interpolation)
            reduced = r
            return r.times.count
        }
        guard let reduced else { continue }
        for result in results {
            sample("exports.reduce.\(name).\(interpolation.rawValue)",
                   [("us_per_track", result.seconds * 1e6), ("keyframes", Double(reduced.times.count)),
                    ("frames", Double(timeline.frameCount)), ("evaluations", Double(reduced.evaluations)), ("error", reduced.error)])
        }
        let median = results.map(\.seconds).sorted()[results.count / 2]
        say("  \(name) \(interpolation.rawValue): \(fmt(median * 1e6)) µs, \(reduced.times.count) keyframes for \(timeline.frameCount) frames, \(reduced.evaluations) evaluations, error \(fmt(reduced.error))")
    }
}
