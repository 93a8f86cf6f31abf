import Foundation

/// A CSS `linear()` easing that follows a spring's motion from 0 to 1 over its settling time
/// `T`: the curve `c(u) = x(u·T)` for `0 ≤ u < 1` and `c(1) = 1` (from the settling time on
/// the spring is exactly at its target, as the engine's spring easing has it).
///
/// Stops are chosen greedily from the left: from each stop, the longest segment whose chord
/// stays within the working tolerance of the curve (exponential growth, then bisection on the
/// length; the chord's deviation is sampled at 24 interior points). A segment never spans
/// more than an eighth of the damped period, so the samples cannot miss a wiggle. (Greedy
/// longest chords are close to the fewest stops, not provably minimal: a chord's error is
/// not monotone in its length, which the bisection assumes.)
/// Numbers are then rounded (values to `10^−d` with `d` from the tolerance, positions finely
/// enough for the curve's steepest slope), and the rounded function is parsed back and
/// checked against the curve on every segment (64 samples each, plus a golden-section
/// refinement around the worst); that largest deviation is `error`. If it exceeds the
/// tolerance the fit is redone with half the working tolerance (at most three times, then it
/// fails).
///
/// When `x(T)` differs from 1 by more than a quarter of the tolerance, the function ends
/// with a jump: `…, x(T) 100%, 1` (two points at 100 %: at exactly 1 CSS takes the later
/// one); otherwise the last segment simply ends at 1.
public struct SpringLinearEasing: Sendable, Equatable {
    /// The CSS text: `linear(0, 0.1234 5%, …, 1)`.
    public let css: String
    /// The duration the curve is meant for (s): the settling time.
    public let duration: Double
    /// The largest deviation found between the rounded function and the curve.
    public let error: Double
    /// The function as a browser evaluates it.
    public let function: PiecewiseLinear

    /// Most stops in one easing.
    public static let maximumStops = 2000
    /// Smallest and largest tolerance.
    public static let toleranceRange: ClosedRange<Double> = 1e-6...0.1

    public enum Failure: Error, Sendable, Equatable {
        /// The curve needs more than `maximumStops` stops at this tolerance.
        case tooManyStops(Int)
        /// Even the finest working tolerance left this deviation (never seen in tests: the
        /// rounding and sampling margins are far below the tolerance).
        case notWithinTolerance(Double)
    }

    public init(kernel: SpringKernel, duration: Double, tolerance: Double) throws(Failure) {
        let T = duration
        func curve(_ u: Double) -> Double {
            if u <= 0 { return 0 }
            if u >= 1 { return 1 }
            return kernel.value(at: u * T)
        }
        // The approximated function on [0, 1] is continuous: it ends at x(T), not 1.
        func smooth(_ u: Double) -> Double { u <= 0 ? 0 : kernel.value(at: Swift.min(u, 1) * T) }
        let period = kernel.modes.regime == .underDamped ? 2 * Double.pi / kernel.modes.second : .infinity
        let maxStep = Swift.min(0.25, period / T / 8)
        // Steepest slope of c in u, for the rounding of positions: sampled, with a margin.
        var slope = 0.0
        let probes = 4000
        for i in 0...probes {
            let t = T * Double(i) / Double(probes)
            slope = Swift.max(slope, Swift.abs(kernel.velocity(at: t)) * T)
        }
        slope = Swift.max(slope * 1.5, 1)

        var working = tolerance * 0.6
        var attempt = 0
        while true {
            let stops = try Self.fit(smooth, maxStep: maxStep, tolerance: working)
            let built = Self.render(stops, smooth, tolerance: tolerance, slope: slope)
            let error = Self.measure(built.function, curve)
            if error > tolerance && attempt >= 3 { throw .notWithinTolerance(error) }
            if error <= tolerance {
                css = built.css
                function = built.function
                self.error = error
                self.duration = T
                return
            }
            working /= 2
            attempt += 1
        }
    }

    /// The greedy chord fit: positions `u` of the stops, from 0 to 1.
    static func fit(_ c: (Double) -> Double, maxStep: Double, tolerance: Double) throws(Failure) -> [Double] {
        func chordError(_ a: Double, _ b: Double) -> Double {
            let ca = c(a), cb = c(b)
            var worst = 0.0
            let n = 24
            for j in 1...n {
                let u = a + (b - a) * Double(j) / Double(n + 1)
                let chord = ca + (cb - ca) * (u - a) / (b - a)
                worst = Swift.max(worst, Swift.abs(c(u) - chord))
            }
            return worst
        }
        var stops = [0.0]
        var a = 0.0
        var step = Swift.min(maxStep, 1e-3)
        while a < 1 {
            guard stops.count <= maximumStops else { throw .tooManyStops(maximumStops) }
            let remaining = 1 - a
            var good = 0.0
            var bad = Double.infinity
            var h = Swift.min(step, maxStep, remaining)
            // Grow until a chord fails or the end is reached.
            while true {
                if chordError(a, a + h) <= tolerance {
                    good = h
                    if h >= Swift.min(maxStep, remaining) { break }
                    h = Swift.min(h * 2, maxStep, remaining)
                } else {
                    bad = h
                    break
                }
            }
            if good == 0 {
                // Shrink until one passes (a chord of a tiny segment always does).
                var trial = bad / 2
                var shrinks = 0
                while chordError(a, a + trial) > tolerance && shrinks < 60 {
                    bad = trial
                    trial /= 2
                    shrinks += 1
                }
                good = trial
            }
            if bad.isFinite {
                for _ in 0..<12 {
                    let mid = (good + bad) / 2
                    if chordError(a, a + mid) <= tolerance { good = mid } else { bad = mid }
                }
            }
            step = good
            a = good >= remaining ? 1 : a + good
            stops.append(a)
        }
        return stops
    }

    /// The CSS text and the function a browser builds from it.
    static func render(_ stops: [Double], _ value: (Double) -> Double, tolerance: Double, slope: Double) -> (css: String, function: PiecewiseLinear) {
        // Values to 10^−d with 10^−d ≤ tolerance/50; positions (in %) so that the slope times
        // the rounding stays below tolerance/50.
        let valueDigits = Swift.min(12, Swift.max(1, Int((log10(50 / tolerance)).rounded(.up))))
        let positionDigits = Swift.min(12, Swift.max(0, Int((log10(50 * slope / tolerance)).rounded(.up)) - 2))
        func text(_ value: Double, _ digits: Int) -> String {
            var s = String(format: "%.\(digits)f", value)
            if s.contains(".") {
                while s.hasSuffix("0") { s.removeLast() }
                if s.hasSuffix(".") { s.removeLast() }
            }
            if s == "-0" { s = "0" }
            return s
        }
        var parts: [String] = ["0"]
        var cssStops: [PiecewiseLinear.Stop] = [PiecewiseLinear.Stop(0)]
        for u in stops.dropFirst().dropLast() {
            let v = text(value(u), valueDigits)
            let p = text(u * 100, positionDigits)
            parts.append("\(v) \(p)%")
            cssStops.append(PiecewiseLinear.Stop(Double(v) ?? 0, [(Double(p) ?? 0) / 100]))
        }
        // A last value within a quarter of the tolerance of 1 is written as 1 (no jump; the
        // measurement that follows counts the difference).
        let end = value(1)
        let last = Swift.abs(end - 1) <= tolerance / 4 ? "1" : text(end, valueDigits)
        if Double(last) == 1 {
            parts.append("1")
            cssStops.append(PiecewiseLinear.Stop(1))
        } else {
            parts.append("\(last) 100%")
            parts.append("1")
            cssStops.append(PiecewiseLinear.Stop(Double(last) ?? 1, [1]))
            cssStops.append(PiecewiseLinear.Stop(1))
        }
        // At least two stops, all finite, positions non-decreasing: always a valid function.
        return ("linear(" + parts.joined(separator: ", ") + ")", PiecewiseLinear(css: cssStops)!)
    }

    /// The largest deviation of `f` from the curve on [0, 1): 64 samples per segment of `f`,
    /// then a golden-section refinement around the worst sample of each segment.
    static func measure(_ f: PiecewiseLinear, _ curve: (Double) -> Double) -> Double {
        var worst = 0.0
        let points = f.points
        for i in 0..<(points.count - 1) where points[i + 1].x > points[i].x {
            let a = points[i].x, b = points[i + 1].x
            let n = 64
            var bestJ = 0
            var bestD = -1.0
            for j in 0...n {
                let u = a + (b - a) * Double(j) / Double(n)
                guard u < 1 else { continue }
                let d = Swift.abs(f(u) - curve(u))
                if d > bestD { bestD = d; bestJ = j }
            }
            worst = Swift.max(worst, bestD)
            // Refine between the neighbours of the worst sample.
            var lo = a + (b - a) * Double(Swift.max(bestJ - 1, 0)) / Double(n)
            var hi = Swift.min(a + (b - a) * Double(Swift.min(bestJ + 1, n)) / Double(n), (1.0).nextDown)
            for _ in 0..<40 where hi > lo {
                let m1 = lo + (hi - lo) * 0.381966, m2 = lo + (hi - lo) * 0.618034
                let d1 = Swift.abs(f(m1) - curve(m1)), d2 = Swift.abs(f(m2) - curve(m2))
                worst = Swift.max(worst, d1, d2)
                if d1 > d2 { hi = m2 } else { lo = m1 }
            }
        }
        return worst
    }
}
