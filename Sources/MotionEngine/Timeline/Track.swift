/// One scalar output channel (`frame.x`), built from the motions that write it.
public struct Track: Sendable {
    /// The full dotted path of the scalar (`frame.width`, `matrix.3`).
    public let path: String
    /// The value before any motion starts.
    public let base: Double
    /// Whether values are degrees written in [0, 360) (a colour's hue).
    public let wrapsDegrees: Bool
    /// Motions writing this track, ordered by start time then document order. From its start
    /// on, a segment wins over every segment before it (docs/timing-and-events.md, "overlap").
    public private(set) var segments: [Segment]

    /// Additive motions: each adds `weight·(value − from)` from its start on (docs/timing-and-events.md).
    public private(set) var additive: [Additive] = []

    public struct Segment: Sendable {
        /// Absolute start time, seconds.
        public var start: Double
        public var curve: Curve
        public var bounds: Bounds?

        @inline(__always)
        func value(at t: Double) -> Double {
            let value = curve.value(at: t - start)
            return bounds?.apply(value) ?? value
        }
    }

    public struct Additive: Sendable {
        public var segment: Segment
        public var weight: Double
        /// The value the motion's contribution is measured from.
        public var from: Double
    }

    /// Curve evaluations one `value(at:)` costs, in evaluations of a usual curve: the segment
    /// in force and every additive layer, a path curve counting `PathCurve.evaluationWeight`.
    public var evaluationCost: Int { (hasPathSegment ? PathCurve.evaluationWeight : 1) &+ layersCost }

    /// Whether a path curve is among `segments` (`evaluationCost`).
    private var hasPathSegment = false
    /// What evaluating every additive layer costs (`evaluationCost`).
    private var layersCost = 0

    public init(path: String, base: Double, wrapsDegrees: Bool = false) {
        self.path = path
        self.base = base
        self.wrapsDegrees = wrapsDegrees
        self.segments = []
    }

    /// Adds a segment. Segments must be added in (start, document order) order.
    mutating func append(start: Double, curve: Curve, additive blend: (weight: Double, from: Double)? = nil, bounds: Bounds? = nil) {
        let segment = Segment(start: start, curve: curve, bounds: bounds)
        if let blend {
            additive.append(Additive(segment: segment, weight: blend.weight, from: blend.from))
            layersCost &+= curve.evaluationWeight
            return
        }
        if curve.evaluationWeight > 1 { hasPathSegment = true }
        // The scheduler appends in start order (actions run in time order and append at their
        // own time); should that ever not hold, keep the segments sorted rather than trap.
        if let last = segments.last, last.start > start {
            let position = segments.firstIndex { $0.start > start } ?? segments.count
            segments.insert(segment, at: position)
            return
        }
        segments.append(segment)
    }

    /// Adds a segment at `start`, after every segment that starts at or before it (a session's
    /// retarget, which may come before motions scheduled later).
    mutating func insert(start: Double, curve: Curve) {
        let position = segments.firstIndex { $0.start > start } ?? segments.count
        segments.insert(Segment(start: start, curve: curve, bounds: nil), at: position)
        if curve.evaluationWeight > 1 { hasPathSegment = true }
    }

    /// The value of the segment at `segment` at absolute time t, evaluated in place.
    @inline(__always)
    static func value(of segment: UnsafePointer<Segment>, at t: Double) -> Double {
        let tau = t - segment.pointee.start
        let value: Double
        switch segment.pointee.curve {
        case .tween(let curve): value = curve.value(at: tau)
        case .dynamic(let curve): value = curve.value(at: tau)
        case .path(let curve): value = curve.value(at: tau)
        case .keyframes(let curve): value = curve.value(at: tau)
        }
        guard let bounds = segment.pointee.bounds else { return value }
        return bounds.apply(value)
    }

    /// The index of the segment in force at time t, or nil before the first one starts.
    @inline(__always)
    func segmentIndex(at t: Double) -> Int? {
        let limit = t + timeEpsilon
        if segments.count == 1 { return segments[0].start <= limit ? 0 : nil }
        var low = 0, high = segments.count
        while low < high {
            let mid = (low + high) / 2
            if segments[mid].start <= limit { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? nil : low - 1
    }

    /// The track's value at absolute time t.
    ///
    /// The segment is read in place from the array's storage and its curve evaluated there
    /// (`Segment.value(at:)` on a copy of the segment retained its curve's box and copied
    /// the curve out of it on every sample). A whole track over many times: `values(at:into:cache:)`.
    /// With `DynamicCurve.value(at:)` reading its leg in place: `bench-timeline`'s mix (tween,
    /// spring, physics) sampled frame by frame went from 1,300 to 1,166 instructions a sample
    /// (callgrind, 10 s window), a track at a time from 657 to 569.
    ///
    /// Always inlined: called on `tracks[index]` (as `Timeline.sample(at:into:)` does for each
    /// streamed frame), the call copied the whole `Track` out of the array first, its path and
    /// segment arrays retained and released again. A streamed frame of one track went from
    /// 3,379 to about 3,200 user-space instructions (callgrind, 200 streams, the 12 s run
    /// minus the 6 s run ÷ 72,000 frames).
    @inline(__always)
    public func value(at t: Double) -> Double {
        var value = segments.withUnsafeBufferPointer { segments -> Double in
            let limit = t + timeEpsilon
            var low = 0, high = segments.count
            while low < high {
                let mid = (low &+ high) &>> 1
                if segments[mid].start <= limit { low = mid &+ 1 } else { high = mid }
            }
            return low == 0 ? base : Self.value(of: segments.baseAddress! + (low &- 1), at: t)
        }
        for item in additive where item.segment.start <= t + timeEpsilon {
            value += item.weight * (item.segment.value(at: t) - item.from)
        }
        return wrapsDegrees ? Colour.normalisedHue(value) : value
    }
}
