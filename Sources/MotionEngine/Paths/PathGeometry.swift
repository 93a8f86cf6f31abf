import Foundation

/// Why an element array does not make a path (the SVG form reports `PathSyntaxError`).
public struct PathElementError: Error, Sendable, Equatable {
    /// Index of the offending element.
    public var index: Int
    public var message: String

    public init(index: Int, message: String) {
        self.index = index
        self.message = message
    }
}

/// A path measured by arc length, for moving a point along it at constant speed (docs/nodes.md#path-and-pathphysics).
///
/// The path is a list of drawn segments — lines and cubic Béziers (quadratics are stored
/// degree-elevated, which is exact; arcs arrive as cubics, see `EllipticalArc`) — with their
/// cumulative arc lengths. A move adds no length: the point jumps to the next subpath. A close
/// adds the line back to the subpath's start. Segments of zero length are dropped.
///
/// **Measuring.** Inside each curve, the arc length `∫|B′(t)| dt` is integrated with 8-point
/// Gauss–Legendre on intervals of t, refined adaptively (halving until the coarse and fine
/// estimates differ by ≤ 1e−10 of the control polygon's length, spread over t) and stored as
/// a table of (t, cumulative length) samples. Total error is far below 1e−6·L.
///
/// **Lookup.** Distance → segment by binary search over the cumulative lengths, → table
/// interval by binary search in the curve's table, → parameter by Newton's method on
/// `S(t) = s` (Gauss–Legendre on the partial interval) safeguarded by bisection. O(log n),
/// allocation-free; the table is built once, in O(n).
///
/// **Positions.** Distances are clamped to [0, L] (a NaN is 0). Position is right-continuous:
/// at the distance where one subpath ends and the next begins (after a move) the point is the
/// next subpath's start; at exactly L it is the end of the last drawn segment. A path with
/// zero length is its first point everywhere, with angle 0.
public struct PathGeometry: Sendable, Equatable {
    /// Default bound on the number of segments (elements) one path may have.
    public static let defaultMaxSegments = 100_000

    /// What one drawn segment counts against a document's `max-segments`: measuring a curve
    /// (its arc-length table) and keeping it cost about three times a tween's keyframe segment.
    /// Release build: 15 million arc pieces took 18.4 s and 4.7 GB, 1.2 µs and 313 bytes a
    /// piece, where a tween keyframe segment takes 0.41 µs and a session of them holds about
    /// 95 bytes each. At the default budget the paths of one document are at most 250,000
    /// drawn segments: about 0.3 s and 80 MB.
    public static let segmentWeight = 4

    /// What measuring the path counts against `max-segments`: `segmentWeight` a drawn
    /// segment, or, when its curves needed more, half an entry of their arc-length tables
    /// (a usual cubic's table has 9 entries: 4, as its segment weight says). A cubic that
    /// turns back on itself is refined to about 105 entries, and one at the refinement's
    /// limit to about 4,000: 60,000 such cubics (900 KB) took 0.89 s to measure, charged as
    /// 240,000 (found by an adversarial review). About 150 ns an entry, release build.
    var charge: Int {
        max(segments.count &* Self.segmentWeight, tableT.count / 2)
    }

    /// One drawn segment with positive length. A line uses only `p0` and `p3`.
    struct Segment: Sendable, Equatable {
        var x0: Double, y0: Double
        var x1: Double, y1: Double
        var x2: Double, y2: Double
        var x3: Double, y3: Double
        var isLine: Bool
        var length: Double
        /// Sum of the control polygon's sides: the scale for degeneracy thresholds.
        var scale: Double
        /// The curve's samples are `tableT/tableS[tableStart ..< tableStart + tableCount]`.
        var tableStart: Int
        var tableCount: Int
    }

    /// The segments with positive length, in path order.
    let segments: [Segment]
    /// Arc length at the start of each segment (non-decreasing, `starts[0] == 0`).
    let starts: [Double]
    /// Curve tables: parameter t and arc length from the curve's start, per sample.
    let tableT: [Double]
    let tableS: [Double]
    /// Where a path without length sits: its first point.
    let origin: PathPoint

    /// Total arc length of the drawn segments.
    public let length: Double

    // MARK: - Building

    /// Parses SVG path data (see `SVGPathParser`) and measures it.
    public init(svg: String, maxSegments: Int = PathGeometry.defaultMaxSegments, maxCharge: Int = .max) throws(PathSyntaxError) {
        let parsed = try SVGPathParser.parseWithOffsets(svg, maxSegments: maxSegments)
        do {
            try self.init(elements: parsed.elements, maxCharge: maxCharge)
        } catch {
            let offset = error.index < parsed.offsets.count ? parsed.offsets[error.index] : 0
            throw PathSyntaxError(offset: offset, message: error.message)
        }
    }

    /// Measures a path given as absolute elements. The first must be a move; coordinates must
    /// be finite and the total length must not overflow. Measuring stops once the path's
    /// `charge` passes `maxCharge` (the rest of the document's budget): the path is then
    /// incomplete, and its charge says it is over.
    public init(elements: [PathElement], maxCharge: Int = .max) throws(PathElementError) {
        guard let first = elements.first else {
            throw PathElementError(index: 0, message: "a path needs at least one element, a move")
        }
        guard case .move(let start) = first else {
            throw PathElementError(index: 0, message: "the first path element must be a move")
        }
        var builder = Builder()
        var current = start
        var subpathStart = start
        for (index, element) in elements.enumerated() {
            guard element.isFinite else {
                throw PathElementError(index: index, message: "coordinates must be finite")
            }
            switch element {
            case .move(let to):
                current = to
                subpathStart = to
            case .line(let to):
                builder.addLine(current, to)
                current = to
            case .quad(let c, let to):
                // Degree elevation: the same curve as a cubic.
                let c1 = PathPoint(current.x + 2 / 3 * (c.x - current.x), current.y + 2 / 3 * (c.y - current.y))
                let c2 = PathPoint(to.x + 2 / 3 * (c.x - to.x), to.y + 2 / 3 * (c.y - to.y))
                builder.addCubic(current, c1, c2, to)
                current = to
            case .cubic(let c1, let c2, let to):
                builder.addCubic(current, c1, c2, to)
                current = to
            case .close:
                builder.addLine(current, subpathStart)
                current = subpathStart
            }
            guard builder.total.isFinite else {
                throw PathElementError(index: index, message: "coordinates too large: the path's length overflows")
            }
            if builder.tableT.count / 2 > maxCharge { break }
        }
        segments = builder.segments
        starts = builder.starts
        tableT = builder.tableT
        tableS = builder.tableS
        length = builder.total
        origin = start
    }

    /// Accumulates segments and curve tables.
    private struct Builder {
        var segments: [Segment] = []
        var starts: [Double] = []
        var tableT: [Double] = []
        var tableS: [Double] = []
        var total = 0.0
        /// Running sum while a curve's table is built.
        private var accumulated = 0.0
        private var intervalsLeft = 0
        private var tolerance = 0.0

        /// Initial intervals per curve, before adaptive refinement.
        static let initialIntervals = 4
        /// Refinement limits per curve: interval halvings, and intervals in all.
        static let maxDepth = 30
        static let maxIntervals = 2048
        /// Allowed integration error per curve, relative to its control polygon's length.
        static let relativeTolerance = 1e-10

        mutating func addLine(_ a: PathPoint, _ b: PathPoint) {
            let length = hypot(b.x - a.x, b.y - a.y)
            guard length > 0 else { return }
            append(Segment(x0: a.x, y0: a.y, x1: a.x, y1: a.y, x2: b.x, y2: b.y, x3: b.x, y3: b.y,
                           isLine: true, length: length, scale: length, tableStart: 0, tableCount: 0))
        }

        mutating func addCubic(_ p0: PathPoint, _ p1: PathPoint, _ p2: PathPoint, _ p3: PathPoint) {
            let scale = hypot(p1.x - p0.x, p1.y - p0.y) + hypot(p2.x - p1.x, p2.y - p1.y) + hypot(p3.x - p2.x, p3.y - p2.y)
            guard scale > 0 else { return }
            var segment = Segment(x0: p0.x, y0: p0.y, x1: p1.x, y1: p1.y, x2: p2.x, y2: p2.y, x3: p3.x, y3: p3.y,
                                  isLine: false, length: 0, scale: scale, tableStart: tableT.count, tableCount: 0)
            guard scale.isFinite else {
                // Reported by the caller as an overflow.
                total = .infinity
                return
            }
            tableT.append(0)
            tableS.append(0)
            accumulated = 0
            intervalsLeft = Builder.maxIntervals
            tolerance = Builder.relativeTolerance * scale
            let n = Builder.initialIntervals
            for k in 0..<n {
                let a = Double(k) / Double(n)
                let b = Double(k + 1) / Double(n)
                refine(segment, a, b, whole: segment.arcLength(from: a, to: b), depth: 0)
            }
            segment.length = accumulated
            segment.tableCount = tableT.count - segment.tableStart
            guard accumulated > 0 else {
                tableT.removeLast(segment.tableCount)
                tableS.removeLast(segment.tableCount)
                return
            }
            append(segment)
        }

        /// Accepts [a, b] (as its two halves) when halving changes the estimate by at most the
        /// tolerance's share of the interval, else refines both halves.
        private mutating func refine(_ segment: Segment, _ a: Double, _ b: Double, whole: Double, depth: Int) {
            let m = (a + b) / 2
            let left = segment.arcLength(from: a, to: m)
            let right = segment.arcLength(from: m, to: b)
            intervalsLeft -= 1
            if depth >= Builder.maxDepth || intervalsLeft <= 0 || abs(left + right - whole) <= tolerance * (b - a) {
                accumulated += left
                tableT.append(m)
                tableS.append(accumulated)
                accumulated += right
                tableT.append(b)
                tableS.append(accumulated)
            } else {
                refine(segment, a, m, whole: left, depth: depth + 1)
                refine(segment, m, b, whole: right, depth: depth + 1)
            }
        }

        private mutating func append(_ segment: Segment) {
            segments.append(segment)
            starts.append(total)
            total += segment.length
        }
    }

    // MARK: - Lookup

    /// The point at arc length `s` (clamped to [0, L]).
    public func point(atDistance s: Double) -> (x: Double, y: Double) {
        guard let (index, t) = locate(s) else { return (origin.x, origin.y) }
        return segments[index].point(at: t)
    }

    /// The tangent's direction at arc length `s`, in degrees: `atan2(dy, dx)` in (−180, 180].
    /// Where the curve's derivative vanishes (a cusp, or a control point on an end point) it
    /// is the direction the point moves in next (at the path's end: arrives from). 0 for a path
    /// without length.
    public func tangentAngle(atDistance s: Double) -> Double {
        guard let (index, t) = locate(s) else { return 0 }
        return segments[index].tangentAngle(at: t)
    }

    /// Point and tangent angle at arc length `s` with one lookup.
    public func pointAndAngle(atDistance s: Double) -> (x: Double, y: Double, angle: Double) {
        guard let (index, t) = locate(s) else { return (origin.x, origin.y, 0) }
        let p = segments[index].point(at: t)
        return (p.x, p.y, segments[index].tangentAngle(at: t))
    }

    /// The point at fraction `p` of the length (`p·L`, clamped to [0, 1]).
    public func point(atFraction p: Double) -> (x: Double, y: Double) {
        point(atDistance: p * length)
    }

    /// The tangent angle at fraction `p` of the length, in degrees.
    public func tangentAngle(atFraction p: Double) -> Double {
        tangentAngle(atDistance: p * length)
    }

    /// Segment index and curve parameter for arc length `s`; nil for a path without length.
    @inline(__always)
    func locate(_ s: Double) -> (Int, Double)? {
        var probes = 0
        return locate(s, probes: &probes)
    }

    /// As `locate(_:)`, counting the table entries compared (segment and curve tables).
    func locate(_ s: Double, probes: inout Int) -> (Int, Double)? {
        guard !segments.isEmpty else { return nil }
        let s = s >= 0 ? Swift.min(s, length) : 0  // NaN → 0
        // Last segment starting at or before s: right-continuous at every boundary, and the
        // last segment (positive length) at s = L.
        var lo = 0
        var hi = starts.count
        while lo < hi {
            probes += 1
            let mid = (lo + hi) >> 1
            if starts[mid] <= s { lo = mid + 1 } else { hi = mid }
        }
        let index = Swift.max(lo - 1, 0)
        let segment = segments[index]
        let local = Swift.min(Swift.max(s - starts[index], 0), segment.length)
        if segment.isLine { return (index, local / segment.length) }
        return (index, parameter(segment, local, probes: &probes))
    }

    /// The parameter t at which `segment` has arc length `local` from its start.
    private func parameter(_ segment: Segment, _ local: Double, probes: inout Int) -> Double {
        if local <= 0 { return 0 }
        if local >= segment.length { return 1 }
        // Last table sample at or before `local`, so that [j, j + 1] brackets it.
        var lo = segment.tableStart
        var hi = segment.tableStart + segment.tableCount - 1
        while hi - lo > 1 {
            probes += 1
            let mid = (lo + hi) >> 1
            if tableS[mid] <= local { lo = mid } else { hi = mid }
        }
        let a = tableT[lo]
        let b = tableT[hi]
        let target = local - tableS[lo]
        let span = tableS[hi] - tableS[lo]
        guard span > 0 else { return a }
        // Newton on f(t) = ∫ₐᵗ|B′| − target, kept inside a shrinking bracket by bisection.
        let tolerance = Swift.max(1e-13 * segment.length, Double.leastNormalMagnitude)
        var low = a
        var high = b
        var t = a + (b - a) * (target / span)
        for _ in 0..<64 {
            let f = segment.arcLength(from: a, to: t) - target
            if abs(f) <= tolerance { return t }
            if f > 0 { high = t } else { low = t }
            let speed = segment.speed(at: t)
            var next = t - f / speed
            if !(speed > 0) || !(next > low && next < high) { next = (low + high) / 2 }
            if next == t { return t }
            t = next
        }
        return t
    }

    // MARK: - Introspection (tests, benchmarks)

    /// Segments with positive length.
    var segmentCount: Int { segments.count }
    /// Samples in all curve tables.
    var tableEntryCount: Int { tableT.count }
}

// MARK: - Segment evaluation

extension PathGeometry.Segment {
    /// 8-point Gauss–Legendre nodes and weights on [−1, 1] (positive half).
    private static let nodes = (0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363)
    private static let weights = (0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763)

    /// B′(t) of the cubic.
    @inline(__always)
    func derivative(at t: Double) -> (x: Double, y: Double) {
        if isLine { return (x3 - x0, y3 - y0) }
        let mt = 1 - t
        let a = 3 * mt * mt, b = 6 * mt * t, c = 3 * t * t
        return (a * (x1 - x0) + b * (x2 - x1) + c * (x3 - x2),
                a * (y1 - y0) + b * (y2 - y1) + c * (y3 - y2))
    }

    /// B″(t) of the cubic.
    func secondDerivative(at t: Double) -> (x: Double, y: Double) {
        let mt = 1 - t
        return (6 * (mt * (x2 - 2 * x1 + x0) + t * (x3 - 2 * x2 + x1)),
                6 * (mt * (y2 - 2 * y1 + y0) + t * (y3 - 2 * y2 + y1)))
    }

    /// B‴ of the cubic (constant).
    func thirdDerivative() -> (x: Double, y: Double) {
        (6 * (x3 - 3 * x2 + 3 * x1 - x0), 6 * (y3 - 3 * y2 + 3 * y1 - y0))
    }

    @inline(__always)
    func speed(at t: Double) -> Double {
        let d = derivative(at: t)
        return hypot(d.x, d.y)
    }

    /// ∫ₐᵇ |B′(t)| dt by 8-point Gauss–Legendre.
    func arcLength(from a: Double, to b: Double) -> Double {
        let half = (b - a) / 2
        let mid = (a + b) / 2
        let n = Self.nodes, w = Self.weights
        var sum = w.0 * (speed(at: mid - half * n.0) + speed(at: mid + half * n.0))
        sum += w.1 * (speed(at: mid - half * n.1) + speed(at: mid + half * n.1))
        sum += w.2 * (speed(at: mid - half * n.2) + speed(at: mid + half * n.2))
        sum += w.3 * (speed(at: mid - half * n.3) + speed(at: mid + half * n.3))
        return sum * half
    }

    /// B(t), exact at t = 0 and t = 1.
    func point(at t: Double) -> (x: Double, y: Double) {
        if t <= 0 { return (x0, y0) }
        if t >= 1 { return (x3, y3) }
        if isLine { return (x0 + (x3 - x0) * t, y0 + (y3 - y0) * t) }
        let mt = 1 - t
        let a = mt * mt * mt, b = 3 * mt * mt * t, c = 3 * mt * t * t, d = t * t * t
        return (a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3)
    }

    /// Tangent direction in degrees; where B′ vanishes, the first non-vanishing higher
    /// derivative gives the direction of travel (B″ leaving a point, −B″ arriving at t = 1, B‴).
    func tangentAngle(at t: Double) -> Double {
        let threshold = 1e-9 * scale
        var d = derivative(at: t)
        if !isLine && hypot(d.x, d.y) <= threshold {
            let second = secondDerivative(at: t)
            if hypot(second.x, second.y) > threshold {
                d = t >= 1 ? (-second.x, -second.y) : second
            } else {
                d = thirdDerivative()
            }
        }
        // + 0 turns −0 into 0.
        return atan2(d.y, d.x) * 180 / .pi + 0
    }
}
