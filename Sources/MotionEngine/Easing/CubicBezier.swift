/// A CSS `cubic-bezier(x1, y1, x2, y2)` timing curve through (0, 0) and (1, 1)
/// (CSS Easing Functions Level 2).
///
/// `x1` and `x2` are clamped to [0, 1] so that X(t) is monotonic and every progress value has
/// exactly one curve parameter; decoding rejects values outside that range before they get here.
public struct CubicBezier: Sendable, Equatable {
    public let x1: Double
    public let y1: Double
    public let x2: Double
    public let y2: Double

    // X(t) = ((ax·t + bx)·t + cx)·t, likewise Y(t).
    private let ax: Double, bx: Double, cx: Double
    private let ay: Double, by: Double, cy: Double

    /// The largest |X(t) − u| the solver accepts.
    public static let tolerance = 1e-7

    public init(x1: Double, y1: Double, x2: Double, y2: Double) {
        let x1 = x1.isNaN ? 0 : Swift.min(Swift.max(x1, 0), 1)
        let x2 = x2.isNaN ? 1 : Swift.min(Swift.max(x2, 0), 1)
        self.x1 = x1
        self.y1 = y1
        self.x2 = x2
        self.y2 = y2
        cx = 3 * x1
        bx = 3 * (x2 - x1) - cx
        ax = 1 - cx - bx
        cy = 3 * y1
        by = 3 * (y2 - y1) - cy
        ay = 1 - cy - by
    }

    /// CSS `ease`.
    public static let ease = CubicBezier(x1: 0.25, y1: 0.1, x2: 0.25, y2: 1)
    /// CSS `ease-in`.
    public static let easeIn = CubicBezier(x1: 0.42, y1: 0, x2: 1, y2: 1)
    /// CSS `ease-out`.
    public static let easeOut = CubicBezier(x1: 0, y1: 0, x2: 0.58, y2: 1)
    /// CSS `ease-in-out`.
    public static let easeInOut = CubicBezier(x1: 0.42, y1: 0, x2: 0.58, y2: 1)

    public static func == (lhs: CubicBezier, rhs: CubicBezier) -> Bool {
        lhs.x1 == rhs.x1 && lhs.y1 == rhs.y1 && lhs.x2 == rhs.x2 && lhs.y2 == rhs.y2
    }

    /// The curve's output for progress `u` (clamped to [0, 1]; exactly 0 and 1 at the ends):
    /// solves X(t) = u to |ΔX| ≤ 1e−7 and returns Y(t).
    public func y(atX u: Double) -> Double {
        if u.isNaN || u <= 0 { return 0 }
        if u >= 1 { return 1 }
        if x1 == y1 && x2 == y2 { return u }
        return sampleY(parameter(forX: u))
    }

    /// The curve parameter t ∈ [0, 1] with |X(t) − u| ≤ 1e−7: Newton's method from t = u,
    /// falling back to bisection when the slope vanishes, Newton leaves [0, 1] or it does not
    /// converge quickly.
    public func parameter(forX u: Double) -> Double {
        if u <= 0 { return 0 }
        if u >= 1 { return 1 }
        var t = u
        for _ in 0..<8 {
            let error = sampleX(t) - u
            if abs(error) <= CubicBezier.tolerance { return t }
            let slope = sampleDX(t)
            if abs(slope) < 1e-6 { break }
            t -= error / slope
            if !(t >= 0 && t <= 1) { break }
        }
        var lo = 0.0
        var hi = 1.0
        t = u
        // 2^-64 is far below the tolerance; the cap only guards against rounding stalls.
        for _ in 0..<64 {
            let x = sampleX(t)
            if abs(x - u) <= CubicBezier.tolerance { return t }
            if x < u { lo = t } else { hi = t }
            t = (lo + hi) / 2
        }
        return t
    }

    func sampleX(_ t: Double) -> Double { ((ax * t + bx) * t + cx) * t }
    func sampleY(_ t: Double) -> Double { ((ay * t + by) * t + cy) * t }
    func sampleDX(_ t: Double) -> Double { (3 * ax * t + 2 * bx) * t + cx }
}
