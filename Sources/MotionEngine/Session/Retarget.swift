/// Why a retarget cannot be done.
public struct RetargetError: Error, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The request is wrong: no such animated path, a value of the wrong shape (422).
        case invalid
        /// The motion at that path cannot be redirected (a path or physics motion) (409).
        case conflict
        /// The server has no room for what the retarget adds (a service's own bound, 503).
        case unavailable
    }

    public var kind: Kind
    public var message: String
    /// The request field at fault: `path` (nothing animated there, or it cannot be
    /// redirected) or `to` (the value).
    public var field: String

    /// `field` of a spring that does not come to rest: the request's spring fields are at
    /// fault, and the caller knows which it was given (`to` when it gave none).
    public static let springField = "spring"

    public init(kind: Kind, message: String, field: String = "to") {
        self.kind = kind
        self.message = message
        self.field = field
    }
}

extension Timeline {
    /// The spring a retarget hands properties to by default (docs/streams-and-sessions.md).
    public static let defaultRetargetSpring = SpringParameters.response(0.5, dampingRatio: 1)

    /// This timeline with the property at `path` redirected, from virtual time `t`, toward
    /// `value`: each affected track continues from its current value and velocity as a spring,
    /// so there is no jump. Springs, decays and tweens can be redirected; path and physics
    /// motions, and additive tracks, cannot. The window grows if the spring rests after it.
    /// What one redirected track adds to the timeline, in curve segments as
    /// `EngineLimits.maxSegments` counts them: a spring segment.
    public static let segmentsPerRetargetedTrack = TrackBuilder.springSegmentWeight

    public func retargeting(_ path: String, to value: JSON, at t: Double,
                            spring parameters: SpringParameters = Timeline.defaultRetargetSpring) throws(RetargetError) -> Timeline {
        try retargeting(retargetTargets(path, to: value), at: t, spring: parameters)
    }

    /// The tracks a retarget of `path` toward `value` redirects (indexes into `tracks`),
    /// each with its target: checked before anything is computed, so that a caller can
    /// count them against a limit first. `value` holds numbers only (or is a colour), each
    /// for an animated track, no track twice, each within ±1e15.
    public func retargetTargets(_ path: String, to value: JSON) throws(RetargetError) -> [(track: Int, target: Double)] {
        let leaves = try retargetLeaves(path, value)
        if let (leaf, target) = leaves.first(where: { abs($0.1) > ObjectReader.maximumMagnitude }) {
            throw RetargetError(kind: .invalid, message: "the target for '\(leaf)' (\(format(target))) is outside ±1e15")
        }
        // One lookup table rather than a search of every track for every leaf: a `to` with
        // thousands of numbers would otherwise cost leaves × tracks comparisons.
        var trackIndex: [String: Int] = [:]
        trackIndex.reserveCapacity(tracks.count)
        for (index, track) in tracks.enumerated() { trackIndex[track.path] = index }
        var targets: [(track: Int, target: Double)] = []
        targets.reserveCapacity(leaves.count)
        var seen = Set<Int>()
        for (trackPath, target) in leaves {
            guard let index = trackIndex[trackPath] else {
                throw RetargetError(kind: .invalid, message: "'\(trackPath)' is not animated in this session", field: "path")
            }
            guard seen.insert(index).inserted else {
                throw RetargetError(kind: .invalid, message: "'to' sets '\(trackPath)' more than once")
            }
            targets.append((index, target))
        }
        return targets
    }

    /// This timeline with each of `targets` (from `retargetTargets`) redirected from `t`.
    public func retargeting(_ targets: [(track: Int, target: Double)], at t: Double,
                            spring parameters: SpringParameters = Timeline.defaultRetargetSpring) throws(RetargetError) -> Timeline {
        var updated = tracks
        var kernels: [(index: Int, kernel: SpringKernel)] = []
        for (index, target) in targets {
            let track = tracks[index]
            let trackPath = track.path
            if !track.additive.isEmpty {
                throw RetargetError(kind: .conflict, message: "'\(trackPath)' is driven by additive motions, which cannot be redirected", field: "path")
            }
            if let segment = track.segmentIndex(at: t).map({ track.segments[$0] }) {
                switch segment.curve {
                case .path:
                    throw RetargetError(kind: .conflict, message: "'\(trackPath)' follows a path; only springs, decays and tweens can be redirected", field: "path")
                case .dynamic(let curve):
                    if case .physics = curve.locate(t - segment.start).leg.kernel {
                        throw RetargetError(kind: .conflict, message: "'\(trackPath)' is a physics motion; only springs, decays and tweens can be redirected", field: "path")
                    }
                case .tween, .keyframes:
                    // A keyframed tween leaves its remaining keyframes for the spring.
                    break
                }
            }
            let current = track.value(at: t)
            let velocity = track.velocity(at: t)
            kernels.append((index, SpringKernel(parameters: parameters, from: current, to: target, velocity: velocity)))
        }
        let rest: Double
        do {
            rest = try SpringSettling.settle(kernels.map(\.kernel), restDelta: 0.01, restSpeed: 0.01)
        } catch {
            throw RetargetError(kind: .invalid, message: error.message, field: RetargetError.springField)
        }
        for (index, kernel) in kernels {
            let curve = DynamicCurve(legs: [DynamicCurve.Leg(kernel: .spring(kernel, settle: rest), duration: rest)])
            updated[index].insert(start: t, curve: .dynamic(curve))
        }
        let window = TimeWindow(start: self.window.start, end: Swift.max(self.window.end, t + rest))
        let newDuration = duration.map { Swift.max($0, t + rest) }
        return Timeline(fps: fps, window: window, duration: newDuration, frameCount: Timeline.frameCount(window: window, fps: fps),
                        tracks: updated, outputs: outputs, events: events, options: options, target: target)
    }

    /// The scalar tracks a retarget value addresses: a number at `path`, the leaves of an
    /// object or array, or the channels of a colour.
    private func retargetLeaves(_ path: String, _ value: JSON) throws(RetargetError) -> [(String, Double)] {
        switch value {
        case .number(let n):
            return [(path, n)]
        case .string(let text):
            guard let colour = Colour(css: text) else {
                throw RetargetError(kind: .invalid, message: "'\(text)' is not a number, an object or array of numbers, or a colour")
            }
            let channels = Colour.channels.filter { channel in tracks.contains { $0.path == path + "." + channel } }
            guard !channels.isEmpty else { throw RetargetError(kind: .invalid, message: "'\(path)' is not an animated colour in this session", field: "path") }
            return channels.map { (path + "." + $0, colour[$0]) }
        case .object, .array:
            // Anything else in it would be neither redirected nor refused, yet kept in the
            // session's state and echoed to every watcher.
            let (leaves, other) = ValueShape.numericLeaves(of: value)
            if let other {
                throw RetargetError(kind: .invalid, message: "'to' must hold numbers only; '\(([path] + other.relative).joined(separator: "."))' is \(other.what)")
            }
            guard !leaves.isEmpty else { throw RetargetError(kind: .invalid, message: "'to' holds no numbers") }
            return leaves.map { ((([path] + $0.relative).joined(separator: ".")), $0.value) }
        default:
            throw RetargetError(kind: .invalid, message: "'to' must be a number, an object or array of numbers, or a colour")
        }
    }
}

extension Track {
    /// d(value)/dt at t: analytic for physics, springs and decays, a symmetric difference
    /// inside a tween leg (one-sided at a segment start), 0 before any motion.
    public func velocity(at t: Double) -> Double {
        guard let index = segmentIndex(at: t) else { return 0 }
        let segment = segments[index]
        let tau = t - segment.start
        if case .dynamic(let curve) = segment.curve { return curve.velocity(at: tau) }
        let h = 1e-6
        let before = Swift.max(0, tau - h), after = tau + h
        return (segment.curve.value(at: after) - segment.curve.value(at: before)) / (after - before)
    }
}
