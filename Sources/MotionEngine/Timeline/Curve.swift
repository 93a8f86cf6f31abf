/// A scalar function of local time: what one motion contributes to one track.
///
/// Kernels are pure values; `value(at:)` takes seconds since the motion's start. Every case
/// is a pointer, not a copy of the whole kernel: sampling copies segments, and inline
/// payloads of several hundred bytes cost about a third of the sampling time
/// (Benchmarks/RESULTS.md, timeline throughput). The other cases are `indirect` (boxed);
/// a tween is an immutable class, so that matching `.tween(let curve)` retains it rather
/// than copying its timing and two easings out of the box (callgrind, 100 streams of one
/// tween: 5,052 → 4,570 user-space instructions a frame).
public enum Curve: Sendable {
    case tween(TweenCurve)
    indirect case dynamic(DynamicCurve)
    indirect case path(PathCurve)
    /// A tween leg through several keyframes (docs/authoring.md).
    indirect case keyframes(KeyframeCurve)

    /// What one evaluation costs, in evaluations of a usual curve (`Track.evaluationCost`).
    var evaluationWeight: Int {
        if case .path = self { return PathCurve.evaluationWeight }
        return 1
    }

    @inline(__always)
    public func value(at tau: Double) -> Double {
        switch self {
        case .tween(let curve): return curve.value(at: tau)
        case .dynamic(let curve): return curve.value(at: tau)
        case .path(let curve): return curve.value(at: tau)
        case .keyframes(let curve): return curve.value(at: tau)
        }
    }

    /// The value the curve starts from.
    public var initialValue: Double {
        switch self {
        case .tween(let curve): return curve.from
        case .dynamic(let curve): return curve.value(at: 0)
        case .path(let curve): return curve.value(at: 0)
        case .keyframes(let curve): return curve.forward.value(0)
        }
    }
}

/// A tween leg pair on one scalar: `a + (b−a)·E(u)` forward, `b + (a−b)·E'(u)` back.
public final class TweenCurve: Sendable {
    public let from: Double
    public let to: Double
    public let timing: CycleTiming
    public let easing: Easing
    public let reverseEasing: Easing

    public init(from: Double, to: Double, timing: CycleTiming, easing: Easing, reverseEasing: Easing) {
        self.from = from
        self.to = to
        self.timing = timing
        self.easing = easing
        self.reverseEasing = reverseEasing
    }

    @inline(__always)
    public func value(at tau: Double) -> Double {
        let (backward, e) = progress(at: tau)
        return value(backward: backward, eased: e)
    }

    /// The eased progress at τ and the direction it is measured in: forward `from → to`, or
    /// backward `to → from` (a reverse leg, or the end of a reversing cycle). It depends on
    /// the timing and easings only, not on `from` and `to`, so tracks that share them share
    /// it (`Track.values(at:into:cache:)`). `value(at:)` is `value(backward:eased:)` of it.
    @inline(__always)
    func progress(at tau: Double) -> (backward: Bool, eased: Double) {
        switch timing.phase(at: tau) {
        case .forward(let u): return (false, easing(u))
        case .reverse(let u): return (true, reverseEasing(u))
        case .cycleEnd:
            // Where the cycle ends: exactly its end value, or `a + (b−a)·E(1)` for an easing
            // whose value at 1 is not 1 (a CSS `linear(…)` whose last stop is not 1).
            return timing.reverses ? (true, Self.endProgress(reverseEasing)) : (false, Self.endProgress(easing))
        }
    }

    /// The value for a progress from `progress(at:)`: `b` when the eased progress is 1, else
    /// `a + (b−a)·e`, with `(a, b)` = `(from, to)`, or `(to, from)` backward.
    @inline(__always)
    func value(backward: Bool, eased e: Double) -> Double {
        if backward { return e == 1 ? from : to + (from - to) * e }
        return e == 1 ? to : from + (to - from) * e
    }

    @inline(__always)
    static func endProgress(_ easing: Easing) -> Double {
        guard case .piecewiseLinear = easing else { return 1 }
        return easing(1)
    }

    /// Where a leg from `a` to `b` ends: exactly `b`, or `a + (b−a)·E(1)` for an easing whose
    /// value at 1 is not 1 (a CSS `linear(…)` whose last stop is not 1; docs/easings.md).
    @inline(__always)
    static func end(_ a: Double, _ b: Double, _ easing: Easing) -> Double {
        guard case .piecewiseLinear = easing else { return b }
        let e = easing(1)
        return e == 1 ? b : a + (b - a) * e
    }
}
