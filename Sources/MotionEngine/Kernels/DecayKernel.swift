import Foundation

/// b3ll's `DecayAnimation` in closed form (docs/nodes.md#decay), built on `ExponentialLaw`:
/// `v(t) = v0·e^(κt)`, `x(t) = x0 + v0·(e^(κt) − 1)/κ` with `κ = 1000·ln(decayConstant)` (< 0,
/// 1/s). The body rests when `|v| < restVelocity`; from then on the value is exactly the
/// resting point.
///
/// Units: positions in the property's units, velocities in units/s, `decayConstant` per
/// millisecond in (0, 1), `restVelocity` in units/s (> 0; 0 never rests: `restTime` = ∞),
/// times in s since the leg start. Parameters are range-checked by the caller.
public struct DecayKernel: Sendable, Equatable {
    public static let defaultDecayConstant = 0.998
    public static let defaultRoundingFactor = 0.5
    public static let defaultRestVelocity = 0.5

    /// The motion until rest (its velocity possibly adjusted by rounding).
    public let law: ExponentialLaw
    /// `κ = 1000·ln(decayConstant)` (1/s, < 0).
    public let kappa: Double
    /// Where it rests: exactly the rounded point, or exactly `to`.
    public let restingPoint: Double
    /// When `|v|` falls below `restVelocity` (s).
    public let restTime: Double

    /// From `x0` with velocity `v0`. With `roundingFactor` r > 0 the natural resting point
    /// `x0 − v0/κ` is rounded to the nearest multiple of r (halves away from zero) and the
    /// velocity becomes `(rounded − x0)·(−κ)` so that the curve lands exactly there; r = 0
    /// keeps `v0`.
    public init(
        from x0: Double, velocity v0: Double,
        decayConstant: Double = DecayKernel.defaultDecayConstant,
        roundingFactor: Double = DecayKernel.defaultRoundingFactor,
        restVelocity: Double = DecayKernel.defaultRestVelocity
    ) {
        let lambda = ExponentialLaw.lambda(decayConstant: decayConstant)
        var velocity = v0
        var resting = ExponentialLaw(position: x0, velocity: v0, lambda: lambda).restingPoint
        if roundingFactor > 0 {
            let rounded = (resting / roundingFactor).rounded(.toNearestOrAwayFromZero) * roundingFactor
            if rounded.isFinite {
                resting = rounded
                velocity = (rounded - x0) * lambda
            }
        }
        self.init(x0: x0, velocity: velocity, lambda: lambda, restingPoint: resting, restVelocity: restVelocity)
    }

    /// From `x0` to land exactly on `target`: `v0 = (x0 − target)·κ`; no rounding.
    public init(
        from x0: Double, to target: Double,
        decayConstant: Double = DecayKernel.defaultDecayConstant,
        restVelocity: Double = DecayKernel.defaultRestVelocity
    ) {
        let lambda = ExponentialLaw.lambda(decayConstant: decayConstant)
        self.init(x0: x0, velocity: (target - x0) * lambda, lambda: lambda, restingPoint: target, restVelocity: restVelocity)
    }

    private init(x0: Double, velocity: Double, lambda: Double, restingPoint: Double, restVelocity: Double) {
        law = ExponentialLaw(position: x0, velocity: velocity, lambda: lambda)
        kappa = -lambda
        self.restingPoint = restingPoint
        // |v| < restVelocity from this instant on (the instant itself has |v| = restVelocity).
        restTime = law.restTime(restVelocity: restVelocity)
    }

    /// The (possibly adjusted) initial velocity (units/s).
    public var initialVelocity: Double { law.velocity }

    /// The position at `t` (exactly `restingPoint` from `restTime` on).
    public func value(at t: Double) -> Double {
        t >= restTime ? restingPoint : law.value(at: t)
    }

    /// The velocity at `t` (units/s; 0 from `restTime` on).
    public func velocity(at t: Double) -> Double {
        t >= restTime ? 0 : law.velocity(at: t)
    }
}
