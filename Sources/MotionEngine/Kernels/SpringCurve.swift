/// A spring used as an easing curve (docs/nodes.md#spring, docs/nodes.md#tween `{"type": "spring", …}`).
///
/// The spring is solved from 0 to 1 with `initialVelocity` (in units of the distance per
/// second, so positive moves toward the target); its rest time `T` (s) is found by the
/// settling rule with `restDelta` and `restSpeed` (default 0.001 each), and
/// `E(u) = x(u·T)`, so the curve fills the tween's own duration. `E(0) = 0` and `E(1) = 1`
/// exactly. `T` is computed once, at construction.
public struct SpringCurve: Sendable, Equatable {
    /// Default `restDelta` and `restSpeed` of a spring easing.
    public static let defaultRestDelta = 0.001
    public static let defaultRestSpeed = 0.001

    public let parameters: SpringParameters
    /// Initial velocity in distances per second.
    public let initialVelocity: Double
    public let restDelta: Double
    public let restSpeed: Double
    /// The spring's rest time `T` (s): `u = 1` maps to it.
    public let restTime: Double
    /// The spring from 0 to 1.
    public let kernel: SpringKernel

    /// Throws when the spring never rests, rests only after `maxRestTime`, or is at rest from
    /// the start (`T = 0`: restDelta/restSpeed cover the whole motion) — each a 422 for the
    /// caller, with `failure.message`.
    public init(
        parameters: SpringParameters, initialVelocity: Double = 0,
        restDelta: Double = SpringCurve.defaultRestDelta, restSpeed: Double = SpringCurve.defaultRestSpeed,
        maxRestTime: Double = SpringSettling.defaultMaxRestTime
    ) throws(SpringCurve.Failure) {
        self.parameters = parameters
        self.initialVelocity = initialVelocity
        self.restDelta = restDelta
        self.restSpeed = restSpeed
        kernel = SpringKernel(parameters: parameters, from: 0, to: 1, velocity: initialVelocity)
        do {
            restTime = try SpringSettling.settle([kernel], restDelta: restDelta, restSpeed: restSpeed, maxRestTime: maxRestTime)
        } catch {
            throw .settling(error)
        }
        guard restTime > 0 else { throw .restsAtOnce }
    }

    /// Why a spring cannot be an easing.
    public enum Failure: Error, Sendable, Equatable {
        case settling(SpringSettling.Failure)
        /// The band covers the whole motion, so the curve would have no length.
        case restsAtOnce

        public var message: String {
            switch self {
            case .settling(let failure):
                return failure.message + "; a spring easing needs a finite rest time"
            case .restsAtOnce:
                return "the spring is at rest from the start with this restDelta and restSpeed, so the curve would be empty"
            }
        }
    }

    /// `E(u) = x(u·T)` for u in (0, 1); exact ends.
    @inlinable
    public func callAsFunction(_ u: Double) -> Double {
        if u <= 0 { return 0 }
        if u >= 1 { return 1 }
        return kernel.value(at: u * restTime)
    }
}
