/// One output format of `POST /v1/timelines` (docs/exports.md): its content type and how it writes a
/// compiled timeline. Every encoder reads the same `Timeline`; a problem only the format can
/// find (a document it cannot express) is a 422 naming the field.
public protocol TimelineFormatEncoder {
    static var contentType: String { get }
    static func encode(timeline: Timeline) throws(DocumentError) -> [UInt8]
}

/// Dispatch on `output.format`, and the keyframe reduction every format shares.
public enum TimelineExport {
    /// The encoder of `format`, or nil for a format this build does not write yet.
    public static func encoder(for format: OutputFormat) -> (any TimelineFormatEncoder.Type)? {
        switch format {
        case .json: return TimelineEncoder.self
        case .csv: return CSVEncoder.self
        case .svg: return SVGEncoder.self
        case .css: return CSSEncoder.self
        case .waapi: return WAAPIEncoder.self
        case .lottie: return LottieEncoder.self
        }
    }

    /// The response body and its content type for the timeline's `output.format`.
    public static func encode(_ timeline: Timeline) throws(DocumentError) -> (contentType: String, body: [UInt8]) {
        let format = timeline.options.format
        guard let encoder = encoder(for: format) else {
            throw DocumentError([Problem(pointer: "/output/format", message: "format '\(format.rawValue)' is not supported yet", kind: .invalid)])
        }
        return (encoder.contentType, try encoder.encode(timeline: timeline))
    }

    /// Curve evaluations one response's reductions may spend in all (one to two seconds of one
    /// core); each track also has `KeyframeReducer.Limits.default`.
    public static let maxTotalEvaluations = 5_000_000

    /// Every track of `timeline` reduced with `tolerance` (docs/exports.md). A track that needs more
    /// keyframes or evaluations than the limits allow is a 422 naming `pointer` (the field
    /// that set the tolerance), and so is a response whose keyframes would exceed
    /// `maxResponseBytes` (each keyframe counted at its longest).
    public static func reduce(_ timeline: Timeline, tolerance: Double, interpolation: SimplifyOptions.Interpolation,
                              pointer: String = "/output/simplify/tolerance") throws(DocumentError) -> [ReducedTrack] {
        try reduce(timeline, tolerances: { _ in tolerance }, interpolation: interpolation, pointer: pointer)
    }

    /// As `reduce(_:tolerance:…)` with a tolerance per track (a format's default ε may
    /// depend on the property: pixels, opacity, a colour channel).
    public static func reduce(_ timeline: Timeline, tolerances: (Track) -> Double, interpolation: SimplifyOptions.Interpolation,
                              pointer: String = "/output/simplify/tolerance") throws(DocumentError) -> [ReducedTrack] {
        var budget = maxTotalEvaluations
        return try reduce(timeline, tolerances: tolerances, interpolation: interpolation, pointer: pointer, budget: &budget)
    }

    /// As `reduce(_:tolerance:…)`, spending at most `budget` curve evaluations, which it
    /// lowers by what it spent: a batch shares one budget among its documents (each alone
    /// spent up to `maxTotalEvaluations`: 100 documents were 32 s of one thread).
    public static func reduce(_ timeline: Timeline, tolerance: Double, interpolation: SimplifyOptions.Interpolation,
                              budget: inout Int) throws(DocumentError) -> [ReducedTrack] {
        try reduce(timeline, tolerances: { _ in tolerance }, interpolation: interpolation, pointer: "/output/simplify/tolerance", budget: &budget)
    }

    static func reduce(_ timeline: Timeline, tolerances: (Track) -> Double, interpolation: SimplifyOptions.Interpolation,
                       pointer: String, budget: inout Int) throws(DocumentError) -> [ReducedTrack] {
        let maxResponseBytes = timeline.limits.maxResponseBytes
        var result: [ReducedTrack] = []
        result.reserveCapacity(timeline.tracks.count)
        let available = budget
        var spent = 0
        defer { budget = max(0, available - spent) }
        var bytes = 0
        let perKeyframe = (interpolation == .cubic ? 5 : 3) * 25
        for track in timeline.tracks {
            try Cancellation.check()
            let tolerance = tolerances(track)
            // An evaluation of a track adds up its additive layers too: 5,000 of them made a
            // reduction within the evaluation limits take 135 s before they were counted.
            let cost = track.evaluationCost
            var limits = KeyframeReducer.Limits.default
            limits.maxEvaluations = min(limits.maxEvaluations, available - spent) / cost
            // What the reduction evaluated, whether it answers or throws: a batch goes on
            // after a document's 422 and must not get that work for free.
            var evaluations = 0
            defer {
                let (charge, overflow) = evaluations.multipliedReportingOverflow(by: cost)
                spent = overflow ? available : min(available, spent + charge)
            }
            do {
                let reduced = try KeyframeReducer.reduce(track: track, in: timeline, tolerance: tolerance,
                                                         interpolation: interpolation, limits: limits, evaluations: &evaluations)
                bytes += reduced.times.count * perKeyframe
                result.append(reduced)
            } catch {
                let message: String
                switch error {
                case .tooManyKeyframes(let limit):
                    message = "track '\(track.path)' needs more than \(limit) keyframes to stay within \(format(tolerance)); use a larger tolerance"
                case .invalidTolerance:
                    message = "track '\(track.path)': the tolerance must be a positive number, not \(format(tolerance))"
                case .toleranceNotMet(let deviation):
                    message = "track '\(track.path)' cannot be reduced within \(format(tolerance)): a deviation of \(format(deviation)) remains at the limits of the time resolution; use a larger tolerance"
                case .tooManyEvaluations where available == 0:
                    message = "its batch's \(maxTotalEvaluations) curve evaluations for reductions were spent by the documents before it; use a larger tolerance, or fewer documents to reduce in one batch"
                case .tooManyEvaluations(let limit):
                    message = limit * cost < KeyframeReducer.Limits.default.maxEvaluations || cost > 1
                        ? "reducing every track within \(format(tolerance)) needs more than \(available) curve evaluations in all\(available < maxTotalEvaluations ? " (what is left of its batch's \(maxTotalEvaluations))" : ""); use a larger tolerance or fewer tracks"
                        : "track '\(track.path)' needs more than \(limit) curve evaluations to reduce within \(format(tolerance)); use a larger tolerance"
                }
                throw DocumentError([Problem(pointer: pointer, message: message, kind: .invalid)])
            }
            if bytes > maxResponseBytes {
                throw DocumentError([Problem(pointer: pointer, message: "the reduced keyframes would take more than \(maxResponseBytes) bytes (max-response-bytes); use a larger tolerance", kind: .invalid)])
            }
        }
        return result
    }
}
