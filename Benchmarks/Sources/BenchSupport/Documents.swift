import MotionEngine

/// Request documents for the benchmarks, as JSON text (exactly what a client would POST).
public enum Documents {
    /// One tween on one property lasting `seconds` at `fps` (the stream document, the frames series).
    public static func singleTween(seconds: Double, fps: Double = 60) -> String {
        """
        {"fps":\(exact(fps)),"target":{"x":0},"motion":{"type":"tween","duration":\(exact(seconds)),"easing":"cubic.inOut","properties":[{"path":"x","to":320}]}}
        """
    }

    /// One tween writing `tracks` scalar properties for `seconds` at 60 fps.
    public static func manyTracks(_ tracks: Int, seconds: Double) -> String {
        let target = (0..<tracks).map { "\"p\($0)\":0" }.joined(separator: ",")
        let properties = (0..<tracks).map { "{\"path\":\"p\($0)\",\"to\":\(100 + $0)}" }.joined(separator: ",")
        return """
        {"fps":60,"target":{\(target)},"motion":{"type":"tween","duration":\(exact(seconds)),"easing":"sine.inOut","properties":[\(properties)]}}
        """
    }

    /// `depth` groups and sequences nested inside one another (alternating, the outermost a
    /// group), with one tween of `seconds` at the innermost level.
    public static func nested(depth: Int, seconds: Double) -> String {
        var node = "{\"type\":\"tween\",\"duration\":\(exact(seconds)),\"easing\":\"ease-in-out\",\"properties\":[{\"path\":\"x\",\"to\":320}]}"
        for level in stride(from: depth - 1, through: 0, by: -1) {
            node = level % 2 == 0 ? "{\"type\":\"group\",\"children\":[\(node)]}" : "{\"type\":\"sequence\",\"steps\":[\(node)]}"
        }
        return "{\"fps\":60,\"target\":{\"x\":0},\"motion\":\(node)}"
    }

    /// SVG path data with `segments` drawn segments (cubics and lines alternating, a wavy line).
    public static func svgPath(segments: Int) -> String {
        var parts = ["M0 0"]
        parts.reserveCapacity(segments + 1)
        for i in 0..<segments {
            let x = Double(i + 1) * 10
            if i % 2 == 0 {
                parts.append("C\(exact(x - 7)) \(i % 4 == 0 ? 8 : -8) \(exact(x - 3)) \(i % 4 == 0 ? -8 : 8) \(exact(x)) 0")
            } else {
                parts.append("L\(exact(x)) \(i % 3)")
            }
        }
        return parts.joined(separator: " ")
    }

    /// A `path` node over `segments` segments for `seconds` at 60 fps.
    public static func pathNode(segments: Int, seconds: Double) -> String {
        """
        {"fps":60,"target":{"position":{"x":0,"y":0}},"motion":{"type":"path","path":"\(svgPath(segments: segments))","output":"position","duration":\(exact(seconds)),"easing":"linear"}}
        """
    }

    // MARK: - The 100-track mix of workload 2

    public enum Kind: String, CaseIterable, Sendable {
        case tween, spring, physics
    }

    static let easings = ["\"quadratic.inOut\"", "\"cubic-bezier(0.4, 0, 0.2, 1)\"", "\"elastic.out\"", "\"bounce.out\"",
                          "\"ease-in-out\"", "\"sine.inOut\"", "\"back.out\"", "{\"type\":\"steps\",\"count\":12,\"position\":\"jump-none\"}"]

    /// The node for track `i` of kind `kind` in form `form` (0: repeating forever, 1: once).
    /// `nil` when the kind has no such form.
    public static func node(_ kind: Kind, track i: Int, form: Int) -> String? {
        let path = "p\(i)"
        switch (kind, form) {
        case (.tween, 0):
            let duration = 1 + Double(i % 7) * 0.25
            return "{\"type\":\"tween\",\"duration\":\(exact(duration)),\"easing\":\(easings[i % easings.count]),\"repeat\":\"infinite\",\"reverses\":true,\"properties\":[{\"path\":\"\(path)\",\"from\":0,\"to\":320}]}"
        case (.spring, 0), (.spring, 1):
            let response = 0.3 + 0.05 * Double(i % 5), ratio = 0.3 + 0.1 * Double(i % 5)
            let repeating = form == 0 ? "\"repeat\":\"infinite\"," : ""
            return "{\"type\":\"spring\",\"response\":\(exact(response)),\"dampingRatio\":\(exact(ratio)),\(repeating)\"properties\":[{\"path\":\"\(path)\",\"from\":0,\"to\":320}]}"
        case (.physics, 0), (.physics, 1):
            let repeating = form == 0 ? "\"repeat\":\"infinite\"," : ""
            return "{\"type\":\"physics\",\"velocity\":\(600 + 10 * (i % 9)),\"friction\":0.3,\"collisions\":true,\"restitution\":0.8,\(repeating)\"properties\":[{\"path\":\"\(path)\",\"from\":0,\"to\":320}]}"
        default:
            return nil
        }
    }

    /// A tween standing in for a kind this build cannot compute: a spring easing for a
    /// spring (still a spring evaluation per sample), `expo.out` for physics.
    public static func fallbackNode(_ kind: Kind, track i: Int) -> String {
        let easing = kind == .spring ? "{\"type\":\"spring\",\"response\":0.5,\"dampingRatio\":0.4}" : "\"expo.out\""
        return "{\"type\":\"tween\",\"duration\":2,\"easing\":\(easing),\"repeat\":\"infinite\",\"reverses\":true,\"properties\":[{\"path\":\"p\(i)\",\"from\":0,\"to\":320}]}"
    }

    /// A document of the given nodes, one per track, in a group, sampled over [0, seconds].
    public static func mix(nodes: [String], seconds: Double, fps: Double = 60) -> String {
        let target = nodes.indices.map { "\"p\($0)\":0" }.joined(separator: ",")
        return """
        {"fps":\(exact(fps)),"target":{\(target)},"window":{"start":0,"end":\(exact(seconds))},"motion":{"type":"group","children":[\(nodes.joined(separator: ","))]}}
        """
    }

    public static func wrap(node: String, path: String = "p0", seconds: Double = 1) -> String {
        "{\"fps\":60,\"target\":{\"\(path)\":0},\"window\":{\"start\":0,\"end\":\(exact(seconds))},\"motion\":\(node)}"
    }
}

/// Decoding and compiling through the engine's public API.
public enum Engine {
    /// Limits wide enough for the scaling series.
    public static let benchLimits = EngineLimits(maxSamples: 50_000_000, maxFPS: 1000, maxDepth: 64,
                                                 maxEvents: 1_000_000, maxProperties: 100_000,
                                                 maxResponseBytes: .max)

    /// Compiles `text`, or says why not.
    public static func compile(_ text: String, limits: EngineLimits = benchLimits) -> Result<Timeline, DocumentError> {
        do {
            return .success(try TimelineCompiler(limits: limits).compile(Array(text.utf8)))
        } catch {
            return .failure(error)
        }
    }

    /// The whole `/v1/timelines` computation in-process: decode, compile, sample, encode.
    @inline(never)
    public static func respond(_ body: [UInt8], limits: EngineLimits = benchLimits) -> Int {
        guard let timeline = try? TimelineCompiler(limits: limits).compile(body) else { return -1 }
        return TimelineEncoder.encode(timeline).count
    }

    /// Why a document is rejected, in one line.
    public static func describe(_ error: DocumentError) -> String {
        error.problems.prefix(3).map(\.description).joined(separator: "; ")
    }

    /// Nil when this build computes the node type of `node`, else why not.
    public static func unsupported(_ node: String, path: String = "p0") -> String? {
        switch compile(Documents.wrap(node: node, path: path)) {
        case .success: return nil
        case .failure(let error): return describe(error)
        }
    }
}
