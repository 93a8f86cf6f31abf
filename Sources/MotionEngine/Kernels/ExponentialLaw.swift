import Foundation

/// The law shared by physics (docs/nodes.md#physics) and decay (docs/nodes.md#decay): a body whose velocity decays
/// exponentially, `v(t) = v0·e^(−λt)` and `x(t) = x0 + v0·(1 − e^(−λt))/λ`.
///
/// Units: positions in the property's units, velocities in units/s, `λ` in 1/s, times in s
/// since the start of the law. Times before 0 count as 0. `λ = +∞` stops at once (friction
/// f = 1): the value is `x0` and the velocity 0 from any `t > 0`. `λ = 0` is the frictionless
/// limit `x0 + v0·t` (it never rests).
public struct ExponentialLaw: Sendable, Equatable {
    /// Start position `x0`.
    public let position: Double
    /// Start velocity `v0` (units/s).
    public let velocity: Double
    /// Decay rate `λ` (1/s), ≥ 0 or `+∞`.
    public let lambda: Double

    @inlinable
    public init(position x0: Double, velocity v0: Double, lambda: Double) {
        self.position = x0
        self.velocity = v0
        self.lambda = lambda
    }

    /// `λ = −ln(1 − f)` for friction `f ∈ (0, 1]` (velocity falls by the factor `1 − f` per
    /// second); `f = 1` gives `+∞`.
    public static func lambda(friction f: Double) -> Double {
        f >= 1 ? .infinity : -log1p(-f)
    }

    /// `λ = −1000·ln(decayConstant)` for a decay constant per millisecond in (0, 1)
    /// (b3ll's `DecayAnimation`: 0.998 gives λ ≈ 2.002/s).
    public static func lambda(decayConstant: Double) -> Double {
        -1000 * log(decayConstant)
    }

    /// The position at `t` seconds.
    @inlinable
    public func value(at t: Double) -> Double {
        let t = Swift.max(t, 0)
        if lambda == .infinity || t == 0 { return position }
        if lambda == 0 { return position + velocity * t }
        // −expm1(−λt) = 1 − e^(−λt), accurate for small λt.
        return position + velocity * (-expm1(-lambda * t)) / lambda
    }

    /// The velocity at `t` seconds (units/s).
    @inlinable
    public func velocity(at t: Double) -> Double {
        let t = Swift.max(t, 0)
        if t == 0 { return velocity }
        if lambda == .infinity { return 0 }
        return velocity * exp(-lambda * t)
    }

    /// Where the body comes to rest if nothing stops it: `x0 + v0/λ` (`x0` for `λ = ∞`;
    /// infinite for `λ = 0` and `v0 ≠ 0`).
    public var restingPoint: Double {
        if lambda == .infinity || velocity == 0 { return position }
        return position + velocity / lambda
    }

    /// The time (s) at which `|v|` falls to `restVelocity`: `ln(|v0|/restVelocity)/λ`, 0 when
    /// `|v0| ≤ restVelocity` or `λ = ∞`; `+∞` when it never gets there (`λ = 0`, or
    /// `restVelocity ≤ 0` with `v0 ≠ 0`).
    public func restTime(restVelocity: Double) -> Double {
        let speed = Swift.abs(velocity)
        if speed <= restVelocity || lambda == .infinity { return 0 }
        if restVelocity <= 0 || lambda == 0 { return .infinity }
        // ln|v0| − ln(restVelocity), not ln(|v0|/restVelocity): the quotient overflows to ∞
        // for a tiny restVelocity (1e15 / 1e-300), which made a decay never end.
        return (log(speed) - log(restVelocity)) / lambda
    }

    /// The time (s) at which the body has travelled `distance` (≥ 0) in its direction of
    /// motion: `−ln(1 − λ·d/|v0|)/λ`. Nil when it never gets that far (`λ·d ≥ |v0|`, or it does
    /// not move). A distance of 0 is reached at once.
    public func time(toTravel distance: Double) -> Double? {
        if distance <= 0 { return 0 }
        let speed = Swift.abs(velocity)
        if speed == 0 || lambda == .infinity { return nil }
        if lambda == 0 { return distance / speed }
        let fraction = lambda * distance / speed
        guard fraction < 1 else { return nil }
        return -log1p(-fraction) / lambda
    }

    /// The velocity after travelling `distance` (≥ 0) in the direction of motion:
    /// `v0 − λ·d·sign(v0)` (the law is linear in position), without evaluating an exponential.
    public func velocity(afterTravelling distance: Double) -> Double {
        if lambda == .infinity { return 0 }
        let speed = Swift.max(Swift.abs(velocity) - lambda * distance, 0)
        return velocity < 0 ? -speed : speed
    }
}
