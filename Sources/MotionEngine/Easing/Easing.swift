/// An easing curve `E(u)` over normalised progress `u ∈ [0, 1]` (docs/easings.md).
///
/// `E(0) = 0` and `E(1) = 1` exactly, except where CSS `steps()` jumps at 0.
/// Decoding from the wire forms lives in `Easing+Decoding.swift`; the list served by
/// `GET /v1/easings` in `Easing+Catalogue.swift`.
public enum Easing: Sendable, Equatable {
    case linear
    /// A Penner family without parameters (quadratic … circular, bounce).
    case penner(PennerFamily, EaseMode)
    /// Penner's back: `overshoot` 0.1 gives k = 1.70158.
    case back(EaseMode, overshoot: Double)
    /// Penner's elastic: amplitude A (raised to ≥ 1) and period p.
    case elastic(EaseMode, amplitude: Double, period: Double)
    /// CSS `cubic-bezier(x1, y1, x2, y2)`, x1 and x2 in [0, 1].
    ///
    /// This case and `spring` are boxed (`indirect`): inline, their payloads (80 bytes and
    /// more) made every `Easing` that large, and every evaluation copied the whole enum out
    /// with `memcpy` before switching on it (callgrind, the small document of
    /// `make bench-instructions`: 29 instructions a sample in `memcpy` alone).
    indirect case cubicBezier(CubicBezier)
    /// CSS `steps(n, position)`.
    case steps(count: Int, position: StepPosition)
    /// CSS `linear(…)`: piecewise-linear through control points (x ascending).
    case piecewiseLinear(PiecewiseLinear)
    /// `{"type": "spring", …}`: a spring from 0 to 1 over its own rest time (docs/nodes.md#spring).
    indirect case spring(SpringCurve)

    public enum EaseMode: String, Sendable, Equatable, CaseIterable {
        case `in`, out, inOut
    }

    public enum PennerFamily: String, Sendable, Equatable, CaseIterable {
        case quadratic, cubic, quartic, quintic, sine, expo, circular, bounce
    }

    public enum StepPosition: String, Sendable, Equatable, CaseIterable {
        case jumpStart = "jump-start", jumpEnd = "jump-end", jumpNone = "jump-none", jumpBoth = "jump-both"
    }
}
