/// One scalar output channel (`frame.x`), built from the motions that write it.
public struct Track: Sendable {
    /// The full dotted path of the scalar (`frame.width`, `matrix.3`).
    public let path: String
    /// The value before any motion starts.
    public let base: Double
    /// Motions writing this track, ordered by start time then document order. From its start
    /// on, a segment wins over every segment before it (SEMANTICS §8, "overlap").
    public private(set) var segments: [Segment]

    public struct Segment: Sendable {
        /// Absolute start time, seconds.
        public var start: Double
        public var curve: Curve
    }

    public init(path: String, base: Double) {
        self.path = path
        self.base = base
        self.segments = []
    }

    /// Adds a segment. Segments must be added in (start, document order) order.
    mutating func append(start: Double, curve: Curve) {
        precondition(segments.last.map { $0.start <= start } ?? true, "segments must be appended in start order")
        segments.append(Segment(start: start, curve: curve))
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
    public func value(at t: Double) -> Double {
        guard let index = segmentIndex(at: t) else { return base }
        let segment = segments[index]
        return segment.curve.value(at: t - segment.start)
    }
}
