/// Keyframes for the `css`, `waapi` and `lottie` exports (docs/exports.md), from the shared
/// error-bounded reduction (`KeyframeReducer`).
///
/// The exported value of a declaration or a Lottie property may combine several channels
/// (`translate({x}px, {y}px)`, a colour's four channels) that share one list of keyframes,
/// because the consumer interpolates the whole keyframe at once. Each channel is reduced on
/// its own with ε/2, and the declaration gets keyframes at the union of the channels' times,
/// with the exact values there. That keeps every channel within ε: between two of its own
/// keyframes a channel's reduced line L is within ε/2 of the exact curve f, and a union time
/// u inside that segment only adds a keyframe at f(u), which differs from L(u) by at most ε/2;
/// the new piecewise line differs from L by at most that much anywhere, so from f by at most ε.
struct UnionKeyframes {
    /// Ascending; a jump is two keyframes at one time (the value before it, then after it).
    var times: [Double] = []
    /// `values[k][c]`: channel c at keyframe k.
    var values: [[Double]] = []
}

/// The work and size budget of one export, and how its reductions fail.
struct ExportBudget {
    /// Curve evaluations left for the whole answer (`TimelineExport.maxTotalEvaluations`).
    var evaluations: Int
    /// Keyframes written so far, each counted at its longest, against `max-response-bytes`.
    var bytes = 0
    let maxBytes: Int
    /// Where a failure is reported: the tolerance given, or the format.
    let pointer: String
    let toleranceGiven: Bool

    init(timeline: Timeline) {
        evaluations = TimelineExport.maxTotalEvaluations
        maxBytes = timeline.limits.maxResponseBytes
        toleranceGiven = timeline.options.simplify != nil
        pointer = toleranceGiven ? "/output/simplify/tolerance" : "/output/format"
    }

    func failure(_ message: String) -> DocumentError {
        let advice = toleranceGiven ? "use a larger tolerance" : "give a larger output.simplify.tolerance"
        return DocumentError([Problem(pointer: pointer, message: "\(message); \(advice)", kind: .invalid)])
    }

    /// The curves `channels`' colours have rendered so far: a mark to charge the renders of
    /// what follows from (`charge(calls:each:rendersSince:of:)`). The colours of one export
    /// share their `ColourInstants.Store`, so any colour channel's store counts them all.
    static func renderMark(_ channels: [ExportChannel]) -> Int {
        channels.first(where: { $0.colour != nil })?.colour?.store.renderedCurves ?? 0
    }

    /// Charges what evaluating `channels` took: `calls` calls of `each` curves, and the
    /// renders of their colours since `mark` (`renderMark`); fails when that is more than was
    /// left. Callers first `require` the worst case (every call a render), so the charge
    /// fits; it is less by what the colours' remembered instants saved.
    mutating func charge(calls: Int, each: Int, rendersSince mark: Int, of channels: [ExportChannel]) throws(DocumentError) {
        let (spent, overflow) = calls.multipliedReportingOverflow(by: each)
        evaluations -= overflow ? .max / 2 : spent
        evaluations -= Self.renderMark(channels) &- mark
        guard evaluations >= 0 else {
            throw failure("the export needs more than the \(TimelineExport.maxTotalEvaluations) curve evaluations one answer may spend")
        }
    }

    /// Fails unless `calls` calls of `each` curves (each channel's `worstCost`) fit what is left.
    func require(calls: Int, each: Int) throws(DocumentError) {
        let (needed, overflow) = calls.multipliedReportingOverflow(by: each)
        guard overflow || needed > evaluations else { return }
        throw failure("the export needs more than the \(TimelineExport.maxTotalEvaluations) curve evaluations one answer may spend")
    }

    /// Counts `count` keyframes of at most `each` bytes.
    mutating func spend(keyframes count: Int, each: Int) throws(DocumentError) {
        let (added, overflow) = count.multipliedReportingOverflow(by: each)
        bytes = overflow ? .max : bytes.addingReportingOverflow(added).overflow ? .max : bytes + added
        if bytes > maxBytes {
            throw failure("the exported keyframes would take more than \(maxBytes) bytes (max-response-bytes)")
        }
    }
}

enum ExportKeyframes {
    /// The default tolerance of the css, waapi and lottie exports when `output.simplify` is
    /// absent: 1/2,000 of the channel's range over the window, at most 0.05 and at least 1e-6,
    /// in the channel's own units. Colour channels and opacities are 0…1, so at most 5e-4
    /// there (an eighth of one 8-bit step); 0.05 px or 0.05° is invisible on screen.
    static func defaultTolerance(_ channel: ExportChannel, window: TimeWindow) -> Double {
        var low = Double.infinity, high = -Double.infinity
        let n = rangeSamples - 1
        for k in 0...n {
            let v = channel.value(window.start + (window.end - window.start) * Double(k) / Double(n))
            low = min(low, v)
            high = max(high, v)
        }
        let range = high - low
        guard range.isFinite else { return 0.05 }
        return min(0.05, max(1e-6, range * 5e-4))
    }

    /// The fewest evaluations a channel's reduction takes (its scan and final check, and the
    /// default tolerance's samples): one answer reduces at most
    /// `TimelineExport.maxTotalEvaluations / minimumEvaluations` channels (1,000).
    static let minimumEvaluations = 5_000

    /// A 422 before any work when the `animated` channels cannot fit the answer's
    /// evaluations: each takes at least `minimumEvaluations` calls, each call its `cost`.
    static func checkChannelCount(_ animated: [ExportChannel], _ budget: inout ExportBudget) throws(DocumentError) {
        var curves = 0
        var colours = Set<ObjectIdentifier>()
        for channel in animated {
            var cost = channel.cost
            // A colour's tracks once, however many channels read it.
            if let colour = channel.colour, colours.insert(ObjectIdentifier(colour)).inserted { cost = cost &+ colour.renderCost }
            let (sum, overflow) = curves.addingReportingOverflow(cost)
            curves = overflow ? .max : sum
        }
        let (needed, overflow) = curves.multipliedReportingOverflow(by: minimumEvaluations)
        guard overflow || needed > budget.evaluations else { return }
        let most = TimelineExport.maxTotalEvaluations / minimumEvaluations
        let each = "each takes at least \(minimumEvaluations) curve evaluations of the \(TimelineExport.maxTotalEvaluations) an answer may spend"
        let channels = animated.count == 1 ? "1 animated channel" : "\(animated.count) animated channels"
        if curves == animated.count {
            throw budget.failure("\(channels) to export; one answer reduces at most \(most) (\(each))")
        }
        throw budget.failure("\(channels) to export, which \(animated.count == 1 ? "evaluates" : "evaluate") \(curves) curves in all (tracks, their additive layers, a colour's tracks once and each of its channels; a path's tracks \(PathCurve.evaluationWeight) each); one answer reduces at most \(most) curves (\(each))")
    }

    /// Evaluations `defaultTolerance` spends on one channel.
    static let rangeSamples = 257

    /// The tolerance for a channel: `output.simplify.tolerance`, or the default (whose
    /// samples count against the answer's evaluations).
    static func tolerance(_ channel: ExportChannel, _ timeline: Timeline, _ budget: inout ExportBudget) throws(DocumentError) -> Double {
        if let given = timeline.options.simplify?.tolerance { return given }
        try budget.require(calls: rangeSamples, each: channel.worstCost)
        let mark = ExportBudget.renderMark([channel])
        let tolerance = defaultTolerance(channel, window: timeline.window)
        try budget.charge(calls: rangeSamples, each: channel.cost, rendersSince: mark, of: [channel])
        return tolerance
    }

    /// One channel reduced (linear or cubic) within `tolerance`, its work counted in `budget`.
    /// `shown` is the tolerance messages name (the one the document set, or the default).
    static func reduce(_ channel: ExportChannel, _ timeline: Timeline, tolerance: Double, shown: Double? = nil, cubic: Bool, label: String,
                       budget: inout ExportBudget) throws(DocumentError) -> ReducedTrack {
        try Cancellation.check()
        let shown = shown ?? tolerance
        var limits = KeyframeReducer.Limits.default
        // Calls of `channel.value`, each evaluating at most `worstCost` curves.
        limits.maxEvaluations = max(0, min(limits.maxEvaluations, budget.evaluations / max(1, channel.worstCost)))
        let mark = ExportBudget.renderMark([channel])
        let reduced: ReducedTrack
        do {
            reduced = try KeyframeReducer.reduce(channel.value, window: timeline.window, tolerance: tolerance,
                                                 interpolation: cubic ? .cubic : .linear, hints: channel.hints,
                                                 gridIntervals: KeyframeReducer.gridIntervals(frameCount: timeline.frameCount),
                                                 limits: limits)
        } catch {
            switch error {
            case .tooManyKeyframes(let limit):
                throw budget.failure("\(label) needs more than \(limit) keyframes to stay within \(format(shown))")
            case .invalidTolerance where shown > 0:
                // 5e-324: its half, each channel's share of a declaration, rounds to 0.
                throw budget.failure("\(label): half the tolerance \(format(shown)), each channel's share, is not a positive number")
            case .invalidTolerance:
                throw budget.failure("\(label): the tolerance \(format(shown)) is not a positive number")
            case .toleranceNotMet(let deviation):
                throw budget.failure("\(label) deviates by \(format(deviation)) somewhere narrower than the reduction's time resolution, more than \(format(shown))")
            case .tooManyEvaluations:
                throw budget.failure("reducing \(label) within \(format(shown)) needs more than the \(TimelineExport.maxTotalEvaluations) curve evaluations one answer may spend")
            }
        }
        try budget.charge(calls: reduced.evaluations, each: channel.cost, rendersSince: mark, of: [channel])
        return reduced
    }

    /// Instants closer than this are one keyframe time (a jump found by two channels).
    static let mergeDistance = 1e-8
    /// How far from a jump's time its two sides are evaluated (the engine treats instants
    /// within `timeEpsilon` as one, and a jump is located to about that).
    static let jumpSide = 3e-9

    /// Keyframes of every channel at the union of their times, linear interpolation within ε
    /// per channel (see the type's comment for why ε/2 each). `tolerances[c]` is channel c's ε.
    /// The times come from reducing `reduced` (by default the channels themselves; a colour
    /// in CSS is reduced premultiplied, as browsers interpolate it); the values written are
    /// those of `channels`.
    static func linearUnion(_ channels: [ExportChannel], reducing reducedChannels: [ExportChannel]? = nil, _ timeline: Timeline,
                            tolerances: [Double], label: String, keyframeBytes: Int,
                            budget: inout ExportBudget) throws(DocumentError) -> UnionKeyframes {
        var candidates: [(t: Double, jump: Bool)] = [(timeline.window.start, false), (timeline.window.end, false)]
        for (index, channel) in (reducedChannels ?? channels).enumerated() where !channel.isConstant {
            let reduced = try reduce(channel, timeline, tolerance: tolerances[index] / 2, shown: tolerances[index], cubic: false, label: label, budget: &budget)
            for k in reduced.times.indices {
                let jump = k + 1 < reduced.times.count && reduced.times[k + 1] == reduced.times[k]
                candidates.append((reduced.times[k], jump))
            }
        }
        candidates.sort { $0.t < $1.t }
        var merged: [(t: Double, jump: Bool)] = []
        for candidate in candidates {
            if let last = merged.last, candidate.t - last.t <= mergeDistance {
                merged[merged.count - 1].jump = last.jump || candidate.jump
                if candidate.jump { merged[merged.count - 1].t = candidate.t }
                continue
            }
            merged.append(candidate)
        }
        // Every channel is evaluated at every union time (twice at a jump): counted too, as
        // each of a declaration's channels may be costly (additive layers, a colour's tracks).
        let instants = merged.count + merged.reduce(0) { $0 + ($1.jump ? 1 : 0) }
        try budget.spend(keyframes: instants, each: keyframeBytes)
        try budget.require(calls: instants, each: channels.reduce(0) { $0 &+ $1.worstCost })
        let mark = ExportBudget.renderMark(channels)
        var result = UnionKeyframes()
        let start = timeline.window.start, end = timeline.window.end
        for item in merged {
            if item.jump {
                result.times.append(item.t)
                result.values.append(channels.map { $0.value(max(start, item.t - jumpSide)) })
                result.times.append(item.t)
                result.values.append(channels.map { $0.value(min(end, item.t + jumpSide)) })
            } else {
                result.times.append(item.t)
                result.values.append(channels.map { $0.value(item.t) })
            }
        }
        try budget.charge(calls: instants, each: channels.reduce(0) { $0 &+ $1.cost }, rendersSince: mark, of: channels)
        return result
    }
}
