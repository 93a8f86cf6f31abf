/// A CSS `linear(…)` easing: piecewise-linear through points with non-decreasing x
/// (CSS Easing Functions Level 2, "linear easing functions").
///
/// Where two points share an x the curve jumps there, and at that x it takes the later
/// point's y. Before the first point and after the last the outer segments are extended
/// (extrapolated), as the spec does.
public struct PiecewiseLinear: Sendable, Equatable {
    /// One control point: input progress `x`, output progress `y`.
    public struct Point: Sendable, Equatable {
        public var x: Double
        public var y: Double
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// One stop of CSS `linear(…)`: an output and zero, one or two input positions as
    /// fractions (`75%` is 0.75).
    public struct Stop: Sendable, Equatable {
        public var output: Double
        public var positions: [Double]
        public init(_ output: Double, _ positions: [Double] = []) {
            self.output = output
            self.positions = positions
        }
    }

    /// At least two points, x non-decreasing, every coordinate finite.
    public let points: [Point]

    /// Checked points: nil unless there are at least two, all finite, with x non-decreasing.
    public init?(points: [Point]) {
        guard points.count >= 2,
              points.allSatisfy({ $0.x.isFinite && $0.y.isFinite }),
              zip(points, points.dropFirst()).allSatisfy({ $0.x <= $1.x })
        else { return nil }
        self.points = points
    }

    /// Builds the points of CSS `linear(stops)` by the spec's algorithm: the first stop
    /// without a position sits at 0, the last at max(1, largest so far); a position smaller
    /// than an earlier one is raised to it; a stop with two positions makes two points; runs
    /// of stops without positions are spread evenly between their neighbours.
    /// Nil for fewer than two stops, more than two positions on a stop, or non-finite values.
    public init?(css stops: [Stop]) {
        guard stops.count >= 2 else { return nil }
        var xs: [Double?] = []
        var ys: [Double] = []
        var largest = -Double.infinity
        for (index, stop) in stops.enumerated() {
            guard stop.output.isFinite, stop.positions.count <= 2,
                  stop.positions.allSatisfy({ $0.isFinite })
            else { return nil }
            if !stop.positions.isEmpty {
                for position in stop.positions {
                    let x = Swift.max(position, largest)
                    largest = x
                    xs.append(x)
                    ys.append(stop.output)
                }
            } else if index == 0 {
                largest = 0
                xs.append(0)
                ys.append(stop.output)
            } else if index == stops.count - 1 {
                let x = Swift.max(1, largest)
                largest = x
                xs.append(x)
                ys.append(stop.output)
            } else {
                xs.append(nil)
                ys.append(stop.output)
            }
        }
        // Fill runs of missing inputs by interpolating between the known neighbours.
        var resolved = [Double](repeating: 0, count: xs.count)
        var previous = 0  // index of the last known input; xs[0] is always known
        for i in xs.indices {
            guard let x = xs[i] else { continue }
            resolved[i] = x
            if i - previous > 1, let start = xs[previous] {
                let gap = Double(i - previous)
                for j in (previous + 1)..<i {
                    resolved[j] = start + (x - start) * Double(j - previous) / gap
                }
            }
            previous = i
        }
        self.init(points: zip(resolved, ys).map { Point(x: $0, y: $1) })
    }

    /// The output at `x` (not clamped: outside the points the end segments are extended).
    public func callAsFunction(_ x: Double) -> Double {
        // Index of the last point with input ≤ x, or 0 if none (binary search).
        var lo = 0
        var hi = points.count  // invariant: points[..<lo] ≤ x, points[hi...] > x
        while lo < hi {
            let mid = (lo + hi) / 2
            if points[mid].x <= x { lo = mid + 1 } else { hi = mid }
        }
        var a = Swift.max(lo - 1, 0)
        if a == points.count - 1 { a -= 1 }
        let pa = points[a]
        let pb = points[a + 1]
        if pa.x == pb.x { return pb.y }
        if x == pb.x { return pb.y }
        if x == pa.x { return pa.y }
        let fraction = (x - pa.x) / (pb.x - pa.x)
        return pa.y + fraction * (pb.y - pa.y)
    }
}
