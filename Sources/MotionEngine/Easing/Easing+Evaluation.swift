import Foundation

extension Easing {
    /// Penner's back constant for the default overshoot 0.1.
    public static let backConstant = 1.70158
    /// The default overshoot of `back` (k = 1.70158).
    public static let defaultOvershoot = 0.1
    /// The default amplitude of `elastic`.
    public static let defaultAmplitude = 1.0

    /// The default elastic period: 0.3, or 0.45 for `inOut` (Penner: 0.3 × 1.5).
    public static func defaultPeriod(_ mode: EaseMode) -> Double {
        mode == .inOut ? 0.45 : 0.3
    }

    /// `E(u)` as docs/easings.md defines it.
    ///
    /// `u` is clamped to [0, 1] (NaN counts as 0). `E(0) = 0` and `E(1) = 1` exactly, except
    /// for CSS `steps()` jumping at 0 and for `linear(…)` stops that do not begin at 0 or end
    /// at 1 (those follow their stops, as CSS does).
    ///
    /// One `switch` over the cases: each switch over an `Easing` copies it to the stack and
    /// reads its tag (it has payloads with references), about 35 instructions; two of them
    /// were a fifth of a quadratic tween's sample (`Track+Sampling.swift`). The small document
    /// (one quadratic tween, 61 samples): 532,490 → 530,364 instructions a request.
    public func callAsFunction(_ u: Double) -> Double {
        let u = u.isNaN ? 0 : Swift.min(Swift.max(u, 0), 1)
        switch self {
        case .steps(let count, let position):
            return Steps.evaluate(u, count: count, position: position)
        case .piecewiseLinear(let curve):
            return curve(u)
        case .linear:
            return u == 0 ? 0 : u == 1 ? 1 : u
        case .penner(let family, let mode):
            return u == 0 ? 0 : u == 1 ? 1 : Easing.penner(family, mode, u)
        case .back(let mode, let overshoot):
            return u == 0 ? 0 : u == 1 ? 1 : Easing.back(mode, overshoot: overshoot, u)
        case .elastic(let mode, let amplitude, let period):
            return u == 0 ? 0 : u == 1 ? 1 : Easing.elastic(mode, amplitude: amplitude, period: period, u)
        case .cubicBezier(let curve):
            return u == 0 ? 0 : u == 1 ? 1 : curve.y(atX: u)
        case .spring(let curve):
            return u == 0 ? 0 : u == 1 ? 1 : curve(u)
        }
    }

    // MARK: - Penner families (u strictly inside (0, 1))

    static func penner(_ family: PennerFamily, _ mode: EaseMode, _ u: Double) -> Double {
        let s = 2 * u
        switch (family, mode) {
        case (.quadratic, .in):
            return u * u
        case (.quadratic, .out):
            return u * (2 - u)
        case (.quadratic, .inOut):
            if u < 0.5 { return 2 * u * u }
            let w = u - 0.5
            return -2 * w * w + 2 * w + 0.5

        case (.cubic, .in):
            return u * u * u
        case (.cubic, .out):
            let w = u - 1
            return w * w * w + 1
        case (.cubic, .inOut):
            if s < 1 { return s * s * s / 2 }
            let v = s - 2
            return (v * v * v + 2) / 2

        case (.quartic, .in):
            return u * u * u * u
        case (.quartic, .out):
            let w = u - 1
            return 1 - w * w * w * w
        case (.quartic, .inOut):
            if s < 1 { return s * s * s * s / 2 }
            let v = s - 2
            return 1 - v * v * v * v / 2

        case (.quintic, .in):
            return u * u * u * u * u
        case (.quintic, .out):
            let w = u - 1
            return w * w * w * w * w + 1
        case (.quintic, .inOut):
            if s < 1 { return s * s * s * s * s / 2 }
            let v = s - 2
            return (v * v * v * v * v + 2) / 2

        case (.sine, .in):
            return 1 - cos(u * Double.pi / 2)
        case (.sine, .out):
            return sin(u * Double.pi / 2)
        case (.sine, .inOut):
            return (1 - cos(Double.pi * u)) / 2

        case (.expo, .in):
            return pow(2, 10 * (u - 1))
        case (.expo, .out):
            return 1 - pow(2, -10 * u)
        case (.expo, .inOut):
            if s < 1 { return pow(2, 10 * (s - 1)) / 2 }
            return (2 - pow(2, -10 * (s - 1))) / 2

        case (.circular, .in):
            return 1 - (1 - u * u).squareRoot()
        case (.circular, .out):
            let w = u - 1
            return (1 - w * w).squareRoot()
        case (.circular, .inOut):
            if s < 1 { return (1 - (1 - s * s).squareRoot()) / 2 }
            let v = s - 2
            return ((1 - v * v).squareRoot() + 1) / 2

        case (.bounce, .in):
            return 1 - bounceOut(1 - u)
        case (.bounce, .out):
            return bounceOut(u)
        case (.bounce, .inOut):
            // The standard easings.net curve (not MotionMachine's, see docs/easings.md).
            if u < 0.5 { return (1 - bounceOut(1 - 2 * u)) / 2 }
            return (1 + bounceOut(2 * u - 1)) / 2
        }
    }

    /// Penner's bounce-out on [0, 1].
    static func bounceOut(_ u: Double) -> Double {
        let r = 2.75
        let c = 7.5625
        if u < 1 / r {
            return c * u * u
        } else if u < 2 / r {
            let w = u - 1.5 / r
            return c * w * w + 0.75
        } else if u < 2.5 / r {
            let w = u - 2.25 / r
            return c * w * w + 0.9375
        } else {
            let w = u - 2.625 / r
            return c * w * w + 0.984375
        }
    }

    static func back(_ mode: EaseMode, overshoot: Double, _ u: Double) -> Double {
        let k = backConstant * overshoot / defaultOvershoot
        switch mode {
        case .in:
            return u * u * ((k + 1) * u - k)
        case .out:
            let w = u - 1
            return w * w * ((k + 1) * w + k) + 1
        case .inOut:
            let k2 = 1.525 * k
            let s = 2 * u
            if s < 1 { return s * s * ((k2 + 1) * s - k2) / 2 }
            let v = s - 2
            return (v * v * ((k2 + 1) * v + k2) + 2) / 2
        }
    }

    static func elastic(_ mode: EaseMode, amplitude: Double, period: Double, _ u: Double) -> Double {
        // Amplitudes below 1 are raised to 1 (Penner); a non-positive period would divide by 0.
        let a = amplitude.isNaN ? 1 : Swift.max(amplitude, 1)
        let p = period > 0 ? period : defaultPeriod(mode)
        let sigma = p / (2 * Double.pi) * asin(1 / a)
        let omega = 2 * Double.pi / p
        switch mode {
        case .in:
            let w = u - 1
            return -a * pow(2, 10 * w) * sin(omega * (w - sigma))
        case .out:
            return 1 + a * pow(2, -10 * u) * sin(omega * (u - sigma))
        case .inOut:
            let w = 2 * u - 1
            if w < 0 { return -0.5 * a * pow(2, 10 * w) * sin(omega * (w - sigma)) }
            return 1 + 0.5 * a * pow(2, -10 * w) * sin(omega * (w - sigma))
        }
    }
}
