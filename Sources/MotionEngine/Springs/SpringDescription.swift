import Foundation

/// One spring described every way platforms describe springs (`POST /v1/springs`).
///
/// The motion of a spring depends only on the undamped angular frequency `ω0 = √(k/m)` and
/// the damping ratio `ζ = c/(2√(km))`; the mass only scales stiffness and damping. Every
/// form maps to `(ω0, ζ, m)`, and from there to every other form, the metrics of the motion
/// from 0 to 1 (overshoot, peak time, damped period, settling time) and a CSS `linear()`
/// easing (`SpringLinearEasing`). The inverse forms (`SpringFit`) find the spring that has
/// a given overshoot and settling or peak time.
public struct SpringDescription: Sendable, Equatable {
    /// Mass `m`.
    public let mass: Double
    /// Stiffness `k = m·ω0²`.
    public let stiffness: Double
    /// Damping `c = 2ζ·√(k·m)`.
    public let damping: Double
    /// `ω0` (rad/s).
    public let naturalFrequency: Double
    /// `ζ`.
    public let dampingRatio: Double

    /// From the constants as given (kept exactly: a `{stiffness, damping, mass}` or
    /// `{mass, tension, friction}` form round-trips bit for bit).
    public init(mass: Double, stiffness: Double, damping: Double) {
        self.mass = mass
        self.stiffness = stiffness
        self.damping = damping
        naturalFrequency = (stiffness / mass).squareRoot()
        dampingRatio = damping / (2 * (stiffness * mass).squareRoot())
    }

    /// From `ω0` and `ζ` with mass `m`: `k = m·ω0²`, `c = 2ζω0·m`.
    public init(naturalFrequency omega0: Double, dampingRatio zeta: Double, mass: Double = 1) {
        self.mass = mass
        stiffness = mass * omega0 * omega0
        damping = 2 * zeta * omega0 * mass
        naturalFrequency = omega0
        dampingRatio = zeta
    }

    public var parameters: SpringParameters {
        SpringParameters(mass: mass, stiffness: stiffness, damping: damping)
    }

    /// `ωd = ω0·√(1 − ζ²)` (rad/s), nil when `ζ ≥ 1` (or within `SpringModes.criticalTolerance`
    /// of 1, which the kernel solves as critically damped).
    public var dampedFrequency: Double? {
        SpringModes(parameters).regime == .underDamped
            ? naturalFrequency * ((1 - dampingRatio) * (1 + dampingRatio)).squareRoot() : nil
    }

    /// `2π/ωd` (s), nil when `ζ ≥ 1` (it does not oscillate).
    public var dampedPeriod: Double? { dampedFrequency.map { 2 * Double.pi / $0 } }

    /// The spring from 0 to 1 with initial velocity `velocity` (distances per second).
    public func kernel(velocity: Double) -> SpringKernel {
        SpringKernel(parameters: parameters, from: 0, to: 1, velocity: velocity)
    }
}

// MARK: - Forms

extension SpringDescription {
    /// Every way of giving a spring to `POST /v1/springs`: seven forward forms and three
    /// inverse ones. The raw value is the key of the form in the answer's `forms`.
    public enum Form: String, Sendable, CaseIterable {
        case responseDampingRatio = "response-dampingRatio"
        case durationBounce = "duration-bounce"
        case stiffnessDampingMass = "stiffness-damping-mass"
        case massTensionFriction = "mass-tension-friction"
        case stiffnessDampingRatio = "stiffness-dampingRatio"
        case frequencyDamping = "frequency-damping"
        case visualDurationBounce = "visualDuration-bounce"
        case overshootSettlingTime = "overshoot-settlingTime"
        case overshootPeakTime = "overshoot-peakTime"
        case dampingRatioSettlingTime = "dampingRatio-settlingTime"

        /// The forms every answer lists in `forms`.
        public static let forward: [Form] = [
            .responseDampingRatio, .durationBounce, .stiffnessDampingMass, .massTensionFriction,
            .stiffnessDampingRatio, .frequencyDamping, .visualDurationBounce,
        ]

        /// The members that must be present.
        public var required: [String] {
            switch self {
            case .responseDampingRatio: return ["response", "dampingRatio"]
            case .durationBounce: return ["duration", "bounce"]
            case .stiffnessDampingMass: return ["stiffness", "damping"]
            case .massTensionFriction: return ["mass", "tension", "friction"]
            case .stiffnessDampingRatio: return ["stiffness", "dampingRatio"]
            case .frequencyDamping: return ["frequency", "damping"]
            case .visualDurationBounce: return ["visualDuration", "bounce"]
            case .overshootSettlingTime: return ["overshoot", "settlingTime"]
            case .overshootPeakTime: return ["overshoot", "peakTime"]
            case .dampingRatioSettlingTime: return ["dampingRatio", "settlingTime"]
            }
        }

        /// Every member, optional ones included (only `mass` of `stiffness-damping-mass`).
        public var members: [String] {
            self == .stiffnessDampingMass ? ["stiffness", "damping", "mass"] : required
        }

        /// `{stiffness, damping, mass?}`.
        public var signature: String {
            "{" + members.map { self == .stiffnessDampingMass && $0 == "mass" ? "mass?" : $0 }.joined(separator: ", ") + "}"
        }

        public var isInverse: Bool {
            self == .overshootSettlingTime || self == .overshootPeakTime || self == .dampingRatioSettlingTime
        }
    }

    /// The members of `form` that express this spring, or nil when the form cannot.
    ///
    /// - `response-dampingRatio`, `frequency-damping`: `2π/ω0` and `ζ` (react-spring's
    ///   `damping` is the ratio);
    /// - `duration-bounce`: `2π/ω0`, `β = 1 − ζ` (ζ ≤ 1) or `1/ζ − 1` (ζ > 1);
    /// - `stiffness-damping-mass`, `mass-tension-friction`: `k`, `c`, `m`;
    /// - `stiffness-dampingRatio`: mass 1, so `ω0²` and `ζ`;
    /// - `visualDuration-bounce`: `2π/(1.2·ω0)` and `1 − ζ`, only for `0.05 ≤ ζ ≤ 1` (motion.dev
    ///   clamps `1 − bounce` to [0.05, 1]).
    public func members(of form: Form) -> [(String, Double)]? {
        let period = 2 * Double.pi / naturalFrequency
        let zeta = dampingRatio
        switch form {
        case .responseDampingRatio:
            return [("response", period), ("dampingRatio", zeta)]
        case .durationBounce:
            return [("duration", period), ("bounce", zeta <= 1 ? 1 - zeta : 1 / zeta - 1)]
        case .stiffnessDampingMass:
            return [("stiffness", stiffness), ("damping", damping), ("mass", mass)]
        case .massTensionFriction:
            return [("mass", mass), ("tension", stiffness), ("friction", damping)]
        case .stiffnessDampingRatio:
            return [("stiffness", naturalFrequency * naturalFrequency), ("dampingRatio", zeta)]
        case .frequencyDamping:
            return [("frequency", period), ("damping", zeta)]
        case .visualDurationBounce:
            guard zeta >= SpringDescription.visualMinimumRatio, zeta <= 1 else { return nil }
            return [("visualDuration", period / 1.2), ("bounce", 1 - zeta)]
        case .overshootSettlingTime, .overshootPeakTime, .dampingRatioSettlingTime:
            return nil
        }
    }

    /// motion.dev's floor on `1 − bounce`.
    public static let visualMinimumRatio = 0.05

    /// The spring of a forward form from its members (already range-checked).
    public static func forward(_ form: Form, _ value: (String) -> Double) -> SpringDescription? {
        switch form {
        case .responseDampingRatio:
            return SpringDescription(naturalFrequency: 2 * Double.pi / value("response"), dampingRatio: value("dampingRatio"))
        case .durationBounce:
            let bounce = value("bounce")
            let zeta = bounce >= 0 ? 1 - bounce : 1 / (1 + bounce)
            return SpringDescription(naturalFrequency: 2 * Double.pi / value("duration"), dampingRatio: zeta)
        case .stiffnessDampingMass:
            return SpringDescription(mass: value("mass"), stiffness: value("stiffness"), damping: value("damping"))
        case .massTensionFriction:
            return SpringDescription(mass: value("mass"), stiffness: value("tension"), damping: value("friction"))
        case .stiffnessDampingRatio:
            return SpringDescription(naturalFrequency: value("stiffness").squareRoot(), dampingRatio: value("dampingRatio"))
        case .frequencyDamping:
            return SpringDescription(naturalFrequency: 2 * Double.pi / value("frequency"), dampingRatio: value("damping"))
        case .visualDurationBounce:
            // k = (2π/(1.2·v))², c = 2·clamp(1 − bounce, 0.05, 1)·√k, m = 1.
            let zeta = Swift.min(Swift.max(1 - value("bounce"), visualMinimumRatio), 1)
            return SpringDescription(naturalFrequency: 2 * Double.pi / (1.2 * value("visualDuration")), dampingRatio: zeta)
        case .overshootSettlingTime, .overshootPeakTime, .dampingRatioSettlingTime:
            return nil
        }
    }
}

// MARK: - Metrics of the motion from 0 to 1

/// What the motion from 0 to 1 does: overshoot and peak, settling (the rest rule of `SpringSettling` on the 1 ms
/// grid, with `restDelta` as both the band and the rest speed).
public struct SpringMotionMetrics: Sendable, Equatable {
    /// The fraction of the distance by which it passes the target; 0 when it never does.
    public let overshoot: Double
    /// When it is farthest past the target (s); nil when it never passes it.
    public let peakTime: Double?
    /// The first multiple of 1 ms from which it stays within `restDelta` of the target, with
    /// a speed within `restDelta` per second (s).
    public let settlingTime: Double

    /// The peak of the motion from 0 to 1 past the target: the first turning point of
    /// `y = x − 1` at which `y > 0` (later ones are smaller: for an oscillating spring the
    /// turning points are `π/ωd` apart and each is `e^(−ζω0·π/ωd)` times the previous one in
    /// size, alternating in sign; a non-oscillating one turns at most once). An initial
    /// velocity moves the turning points, and can make a non-oscillating spring overshoot.
    public static func peak(_ kernel: SpringKernel) -> (time: Double, overshoot: Double)? {
        let modes = kernel.modes
        var candidates: [Double] = []
        switch modes.regime {
        case .underDamped:
            // y' = e^(−αt)·(dp cos θ + dq sin θ) = e^(−αt)·R cos(θ − ψ), θ = ωd t.
            let psi = atan2(kernel.dq, kernel.dp)
            var theta = (psi + Double.pi / 2).truncatingRemainder(dividingBy: Double.pi)
            if theta < 0 { theta += Double.pi }
            if theta <= 1e-12 { theta += Double.pi }
            candidates = [theta / modes.second, (theta + Double.pi) / modes.second]
        case .critical:
            // y' = e^(−ω0t)·(dp + dq t).
            if kernel.dq != 0 {
                let t = -kernel.dp / kernel.dq
                if t > 0 { candidates = [t] }
            }
        case .overDamped:
            // y' = dp e^(r1 t) + dq e^(r2 t) = 0 ⇔ e^((r1 − r2)t) = −dq/dp.
            if kernel.dp != 0 {
                let ratio = -kernel.dq / kernel.dp
                let spread = -modes.decay - modes.second
                if ratio > 1, spread > 0 { candidates = [log(ratio) / spread] }
            }
        }
        for t in candidates where t.isFinite && t > 0 {
            let y = kernel.displacement(at: t)
            if y > 0 { return (t, y) }
        }
        return nil
    }

    /// Throws when it never settles or not within `maxRestTime`.
    public static func measure(
        _ kernel: SpringKernel, restDelta: Double, maxRestTime: Double = SpringSettling.defaultMaxRestTime
    ) throws(SpringSettling.Failure) -> SpringMotionMetrics {
        let peak = peak(kernel)
        let settling = try SpringSettling.settle([kernel], restDelta: restDelta, restSpeed: restDelta, maxRestTime: maxRestTime)
        return SpringMotionMetrics(overshoot: peak?.overshoot ?? 0, peakTime: peak?.time, settlingTime: settling)
    }
}
