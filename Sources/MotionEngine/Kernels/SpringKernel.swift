import CMathExtras
import Foundation

/// The canonical constants of a damped spring (docs/nodes.md#spring): mass `m`, stiffness `k`
/// (force per unit of displacement, i.e. N/m with unit mass) and damping `c` (force per
/// unit/s).
///
/// The four wire parameterisations map onto it through the static constructors; decoding from
/// a document lives in `SpringParameters+Decoding.swift`.
public struct SpringParameters: Sendable, Equatable {
    public var mass: Double
    public var stiffness: Double
    public var damping: Double

    public init(mass: Double, stiffness: Double, damping: Double) {
        self.mass = mass
        self.stiffness = stiffness
        self.damping = damping
    }

    /// `{response R, dampingRatio ζ}` (R in s, the undamped period): m = 1, k = (2π/R)²,
    /// c = 4πζ/R.
    public static func response(_ response: Double, dampingRatio: Double) -> SpringParameters {
        let omega = 2 * Double.pi / response
        return SpringParameters(mass: 1, stiffness: omega * omega, damping: 2 * dampingRatio * omega)
    }

    /// `{stiffness k, damping c, mass m}` as given (mass defaults to 1).
    public static func stiffness(_ stiffness: Double, damping: Double, mass: Double = 1) -> SpringParameters {
        SpringParameters(mass: mass, stiffness: stiffness, damping: damping)
    }

    /// `{duration d, bounce β}` (SwiftUI's spring; d in s, β in (−1, 1)): m = 1, k = (2π/d)²,
    /// ζ = 1 − β for β ≥ 0 and 1/(1 + β) for β < 0.
    public static func duration(_ duration: Double, bounce: Double) -> SpringParameters {
        let ratio = bounce >= 0 ? 1 - bounce : 1 / (1 + bounce)
        return response(duration, dampingRatio: ratio)
    }

    /// `{mass, tension, friction}` (motion-interchange, Core Animation): k = tension,
    /// c = friction.
    public static func mass(_ mass: Double, tension: Double, friction: Double) -> SpringParameters {
        SpringParameters(mass: mass, stiffness: tension, damping: friction)
    }

    /// `ζ = c / (2√(k·m))` (dimensionless; < 1 oscillates).
    public var dampingRatio: Double { damping / (2 * (stiffness * mass).squareRoot()) }

    /// `ω0 = √(k/m)` (rad/s).
    public var undampedAngularFrequency: Double { (stiffness / mass).squareRoot() }
}

/// The time functions of a spring, shared by every component with the same parameters:
/// every solution is `y(t) = p·f(t) + q·g(t)` with
/// - under-damped: `f = e^(−αt)·cos ωd t`, `g = e^(−αt)·sin ωd t` (α = ζω0);
/// - critically damped: `f = e^(−ω0 t)`, `g = t·e^(−ω0 t)`;
/// - over-damped: `f = e^(r1 t)`, `g = e^(r2 t)` (r1 > r2, both < 0).
///
/// Evaluate the basis once per time and combine it per component (`SpringKernel.value(basis:)`)
/// to animate many lanes of one spring cheaply.
public struct SpringModes: Sendable, Equatable {
    public enum Regime: Sendable, Equatable {
        case underDamped, critical, overDamped
    }

    /// |ζ − 1| at or below this is solved as critically damped.
    public static let criticalTolerance = 1e-9

    public let regime: Regime
    /// ω0 (rad/s).
    public let omega0: Double
    /// ζ.
    public let zeta: Double
    /// Under-damped: α = ζω0, the decay rate (1/s); critical: ω0; over-damped: −r1.
    public let decay: Double
    /// Under-damped: ωd = ω0√(1 − ζ²) (rad/s); over-damped: r2 (1/s, the fast root); critical: 0.
    public let second: Double

    public init(_ parameters: SpringParameters) {
        let omega0 = parameters.undampedAngularFrequency
        let zeta = parameters.dampingRatio
        self.omega0 = omega0
        self.zeta = zeta
        if Swift.abs(zeta - 1) <= SpringModes.criticalTolerance {
            regime = .critical
            decay = omega0
            second = 0
        } else if zeta < 1 {
            regime = .underDamped
            decay = zeta * omega0
            second = omega0 * ((1 - zeta) * (1 + zeta)).squareRoot()
        } else {
            regime = .overDamped
            let s = ((zeta - 1) * (zeta + 1)).squareRoot()
            // r1 = −ω0(ζ − s) = −ω0/(ζ + s), free of cancellation.
            decay = omega0 / (zeta + s)
            second = -omega0 * (zeta + s)
        }
    }

    /// `(f(t), g(t))`.
    @inlinable
    public func basis(at t: Double) -> (Double, Double) {
        switch regime {
        case .underDamped:
            let e = exp(-decay * t)
            // One `sincos` rather than `cos` and `sin` (the same values, bit for bit): the
            // kernel benchmark's `perlane` loop (value and velocity of 320,000 lanes) went
            // from 5.85 to 3.93 ms, 1.31× to 0.88× the C reference's 4.48 ms, and
            // `lanebasis` from 5.74 to 3.79 ms (C 3.78; release, one core of an AMD EPYC).
            var sine = 0.0, cosine = 0.0
            motion_sincos(second * t, &sine, &cosine)
            return (e * cosine, e * sine)
        case .critical:
            let e = exp(-decay * t)
            return (e, t * e)
        case .overDamped:
            return (exp(-decay * t), exp(second * t))
        }
    }

    /// `basis(at: max(t, 0))`, the basis as `SpringKernel.value(at:)`, `velocity(at:)` and
    /// `displacement(at:)` read it (negative times count as 0).
    ///
    /// Declared free of side effects (`@_effects(readnone)`: `exp` and `sincos` only set
    /// `errno`, which nothing here reads, and `sincos` writes only the two locals it is given), so that where a lane's value and velocity are both
    /// read at one time the optimiser evaluates the basis once, not once a call: gcc does the
    /// same for the C reference loop, knowing `exp`, `sin` and `cos` as built-ins. Clamping
    /// here rather than at each call site gives both calls the very same argument, which that
    /// needs. Kernel benchmark `perlane` (5,000 springs × 64 lanes, value and velocity of
    /// every lane, `Benchmarks/README.md`): 6 calls a lane → 3 (2 since `sincos`), see the
    /// README for the times.
    @inlinable @_effects(readnone)
    public func basis(clampingAt t: Double) -> (Double, Double) {
        basis(at: Swift.max(t, 0))
    }
}

/// A damped spring from `a` to `b` with initial velocity `v0` in closed form (docs/nodes.md#spring):
/// `x(t) = b + y(t)`, `y(0) = a − b`, `y'(0) = v0`.
///
/// Units: positions in the property's units, velocity in units/s, `t` in s since the leg
/// start (negative `t` counts as 0). Everything that depends only on the parameters and the
/// start is precomputed; `value(at:)` and `velocity(at:)` allocate nothing and cost one
/// `exp` (plus one `sincos` when under-damped).
public struct SpringKernel: Sendable, Equatable {
    public let parameters: SpringParameters
    public let modes: SpringModes
    /// `b`.
    public let target: Double
    /// `y0 = a − b`.
    public let displacement: Double
    /// `v0` (units/s).
    public let initialVelocity: Double
    /// `y = p·f + q·g`.
    public let p: Double, q: Double
    /// `y' = dp·f + dq·g`.
    public let dp: Double, dq: Double
    /// `y'' = ap·f + aq·g`.
    public let ap: Double, aq: Double

    public init(parameters: SpringParameters, from a: Double, to b: Double, velocity v0: Double) {
        self.init(modes: SpringModes(parameters), parameters: parameters, from: a, to: b, velocity: v0)
    }

    /// Shares precomputed `modes` (which must belong to `parameters`) between components.
    public init(modes: SpringModes, parameters: SpringParameters, from a: Double, to b: Double, velocity v0: Double) {
        self.parameters = parameters
        self.modes = modes
        target = b
        let y0 = a - b
        displacement = y0
        initialVelocity = v0
        switch modes.regime {
        case .underDamped:
            let alpha = modes.decay, omegaD = modes.second
            // y = e^(−αt)(p cos + q sin); each derivative maps (p, q) → (ωd q − α p, −ωd p − α q).
            p = y0
            q = (v0 + alpha * y0) / omegaD
            dp = v0
            dq = -omegaD * p - alpha * q
            ap = omegaD * dq - alpha * dp
            aq = -omegaD * dp - alpha * dq
        case .critical:
            let w = modes.omega0
            // y = e^(−ω0t)(y0 + B t); d/dt of (P + Q t)e^(−ω0t) is (Q − ω0 P) + (−ω0 Q) t.
            p = y0
            q = v0 + w * y0
            dp = q - w * p
            dq = -w * q
            ap = dq - w * dp
            aq = -w * dq
        case .overDamped:
            let r1 = -modes.decay, r2 = modes.second
            let a1 = (v0 - r2 * y0) / (r1 - r2)
            p = a1
            q = y0 - a1
            dp = r1 * p
            dq = r2 * q
            ap = r1 * dp
            aq = r2 * dq
        }
    }

    /// `x(t)`.
    @inlinable
    public func value(at t: Double) -> Double {
        let (f, g) = modes.basis(clampingAt: t)
        return target + (p * f + q * g)
    }

    /// `x'(t)` (units/s).
    @inlinable
    public func velocity(at t: Double) -> Double {
        let (f, g) = modes.basis(clampingAt: t)
        return dp * f + dq * g
    }

    /// `y(t) = x(t) − b` for a basis from `modes.basis(at:)`.
    @inlinable
    public func displacement(basis: (Double, Double)) -> Double { p * basis.0 + q * basis.1 }

    /// `x(t)` for a basis from `modes.basis(at:)`.
    @inlinable
    public func value(basis: (Double, Double)) -> Double { target + (p * basis.0 + q * basis.1) }

    /// `x'(t)` for a basis from `modes.basis(at:)`.
    @inlinable
    public func velocity(basis: (Double, Double)) -> Double { dp * basis.0 + dq * basis.1 }

    /// `y(t) = x(t) − b`.
    @inlinable
    public func displacement(at t: Double) -> Double {
        displacement(basis: modes.basis(clampingAt: t))
    }

    /// The first time `t > 0` (s) at which `x` crosses the target `b`, for `stopAtTarget`; nil
    /// when it never does (an over- or critically damped approach from one side, or a spring
    /// that is already at rest on the target). A spring that starts on the target (`a = b`)
    /// with a velocity crosses when it comes back.
    ///
    /// The root is located in closed form and then refined by bisection on a sign-changing
    /// bracket until the bracket is narrower than `tolerance` (s).
    public func firstCrossing(tolerance: Double = 1e-9) -> Double? {
        let y0 = displacement
        var estimate: Double
        switch modes.regime {
        case .underDamped:
            // y = R e^(−αt) cos(ωd t − φ), φ = atan2(q, p): zeros at ωd t = φ + π/2 + nπ.
            if p == 0 && q == 0 { return nil }
            let phi = atan2(q, p)
            let half = Double.pi / modes.second
            estimate = (phi + Double.pi / 2) / modes.second
            if y0 == 0 {
                // Skip the root at t = 0 itself.
                while estimate <= half / 2 { estimate += half }
                while estimate - half > half / 2 { estimate -= half }
            } else {
                while estimate <= 0 { estimate += half }
                while estimate - half > 0 { estimate -= half }
            }
        case .critical:
            // y = e^(−ω0t)(p + q t): one zero at −p/q.
            guard q != 0, y0 != 0 else { return nil }
            estimate = -p / q
            guard estimate > 0 else { return nil }
        case .overDamped:
            // p e^(r1 t) = −q e^(r2 t) ⇔ e^((r1 − r2)t) = −q/p.
            guard p != 0, y0 != 0 else { return nil }
            let ratio = -q / p
            guard ratio > 1 else { return nil }
            estimate = log(ratio) / (-modes.decay - modes.second)
        }
        guard estimate.isFinite, estimate > 0 else { return nil }
        return refineRoot(near: estimate, tolerance: tolerance)
    }

    /// Bisection on a bracket around `estimate` where `y` changes sign; `estimate` itself when
    /// no such bracket is found within a few widenings (the closed form is already exact to
    /// rounding).
    private func refineRoot(near estimate: Double, tolerance: Double) -> Double {
        var width = Swift.max(tolerance, estimate * 1e-12)
        for _ in 0..<8 {
            var low = Swift.max(estimate - width, 0)
            var high = estimate + width
            var yLow = displacement(at: low)
            let yHigh = displacement(at: high)
            if yLow == 0 && low > 0 { return low }
            if yHigh == 0 { return high }
            if (yLow < 0) != (yHigh < 0) && low > 0 {
                var iterations = 0
                while high - low > tolerance / 4 && iterations < 200 {
                    let mid = low + (high - low) / 2
                    if mid <= low || mid >= high { break }
                    let yMid = displacement(at: mid)
                    if yMid == 0 { return mid }
                    if (yMid < 0) == (yLow < 0) {
                        low = mid
                        yLow = yMid
                    } else {
                        high = mid
                    }
                    iterations += 1
                }
                return low + (high - low) / 2
            }
            width *= 16
            if width > estimate / 4 { break }
        }
        return estimate
    }
}

/// When springs come to rest (docs/nodes.md#spring): the first multiple of 1 ms from which
/// `|y| ≤ restDelta` and `|y'| ≤ restSpeed` hold at **every** later multiple of 1 ms, for every
/// component. A momentary pass through the band (a zero crossing, a turning point) does not
/// count.
///
/// Method: for each component, a decay envelope bounds `|y|`, `|y'|` and `|y''|` from above
/// for all later times; the first time `T` past which the envelopes guarantee the band is found
/// by doubling and bisection. The 1 ms grid is then scanned backwards from `T` to the last
/// violation. Grid points are skipped when the envelope of the derivative proves they cannot
/// leave the band (a Lipschitz bound), so slow springs do not cost one evaluation per
/// millisecond. Components are scanned in decreasing order of `T`, each only down to the
/// latest violation found so far.
public enum SpringSettling {
    /// The grid step (s).
    public static let grid = 0.001
    /// Default bound on a rest time (s); longer is reported as `.exceedsLimit`.
    public static let defaultMaxRestTime = 3600.0

    /// Why no rest time was found (turn into a 422 with `message`).
    public enum Failure: Error, Sendable, Equatable {
        /// Undamped (ζ = 0) with motion, or a band of 0: it never comes to rest.
        case neverSettles
        /// It would rest only after more than `limit` seconds (or its parameters are not finite).
        case exceedsLimit(Double)
        /// The computation was cancelled before the rest time was found (`settle` with
        /// `cancellable`, `Cancellation`).
        case cancelled
        /// Finding the rest times took more than the computation's `Budget` of grid checks,
        /// of which the settles before this one had taken `spentBefore`.
        case tooMuchWork(checks: Int, spentBefore: Int)

        public var message: String {
            switch self {
            case .neverSettles:
                return "the spring never comes to rest (it is undamped, or restDelta/restSpeed is 0)"
            case .exceedsLimit(let limit):
                return "the spring takes more than \(format(limit)) s to come to rest"
            case .cancelled:
                return Cancellation.message
            case .tooMuchWork(let checks, let spentBefore):
                // The budget is the request's: when springs before this one took most of it,
                // the costly spring may be one of them.
                let before = spentBefore >= checks / 2 ? "; the springs settled before this one took \(spentBefore) of them" : ""
                return "finding when the springs come to rest takes more than the \(checks) checks of the 1 ms rest grid one request may spend\(before) "
                    + "(a spring that oscillates at nearly a multiple of 1000 Hz, or whose rest band is far narrower than its motion, "
                    + "must be checked at every millisecond); give a larger restDelta or restSpeed, or more damping"
            }
        }
    }

    /// The rest time (s, a multiple of 1 ms) of springs that must all settle, or nil when they
    /// never do or not within `maxRestTime`.
    public static func restTime(
        _ springs: [SpringKernel], restDelta: Double, restSpeed: Double,
        maxRestTime: Double = defaultMaxRestTime
    ) -> Double? {
        try? settle(springs, restDelta: restDelta, restSpeed: restSpeed, maxRestTime: maxRestTime)
    }

    /// The grid checks the springs of one computation may take between them to find their
    /// rest times: about 0.17 s of one thread (87 ns a check, release build).
    ///
    /// A rest time is exact on the 1 ms grid: the scan walks back from the time the envelopes
    /// guarantee the band and skips the stretches they prove inside it. A spring that
    /// oscillates at nearly a multiple of 1,000 Hz looks still at every grid point while its
    /// envelope proves nothing, so every millisecond up to the guarantee (up to
    /// 4 × `defaultMaxRestTime`) must be checked: 0.4 s for one spring, and a request of 200
    /// such springs (an 11.6 KB body) held a thread 78 s, a session retarget of 40 leaves
    /// held its session 20 s. A usual spring takes tens of checks (`KernelTests`).
    public static let maxChecks = 2_000_000

    /// Grid checks for the work a connection thread does itself (about 2 ms): what needs
    /// more goes to the compute pool (`Budget.isExhausted`).
    public static let inlineChecks = 20_000

    /// The grid checks left to one computation, shared by every `settle` in it: the server
    /// gives one to each request it computes (`reused(checks:)`, `install()`). A `settle`
    /// outside any budget (tests, the command line) has one of `maxChecks` to itself.
    public final class Budget: @unchecked Sendable {
        public fileprivate(set) var checks: Int
        fileprivate var left: Int
        /// Whether a `settle` found it spent (and threw `.tooMuchWork`).
        public fileprivate(set) var isExhausted = false

        public init(checks: Int) {
            self.checks = checks
            left = checks
        }

        /// Checks taken so far.
        public var used: Int { checks - left }

        /// Takes `count` checks; false, and exhausted, when there were not that many left.
        fileprivate func take(_ count: Int) -> Bool {
            guard count <= left else {
                left = 0
                isExhausted = true
                return false
            }
            left -= count
            return true
        }

        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create")
            return key
        }()

        /// Each thread's reusable budget (`reused(checks:)`), released when the thread ends.
        private static let reusableKey: pthread_key_t = {
            var key = pthread_key_t()
            precondition(pthread_key_create(&key, { if let made = $0 { Unmanaged<Budget>.fromOpaque(made).release() } }) == 0, "pthread_key_create")
            return key
        }()

        /// This thread's own budget, made on its first call and given `checks` afresh on
        /// each: the server gives every request it computes a budget, and a request is one
        /// thread's at a time, so one object a thread does (a new one each request was
        /// about 250 instructions of the small document's). Not for a computation inside
        /// another's on the same thread (between its `install()` and `uninstall`).
        public static func reused(checks: Int) -> Budget {
            if let made = pthread_getspecific(reusableKey) {
                let budget = Unmanaged<Budget>.fromOpaque(made).takeUnretainedValue()
                budget.checks = checks
                budget.left = checks
                budget.isExhausted = false
                return budget
            }
            let budget = Budget(checks: checks)
            pthread_setspecific(reusableKey, UnsafeRawPointer(Unmanaged.passRetained(budget).toOpaque()))
            return budget
        }

        /// The budget of the computation this thread runs, if any.
        public static var current: Budget? {
            pthread_getspecific(key).map { Unmanaged<Budget>.fromOpaque($0).takeUnretainedValue() }
        }

        /// Makes this budget the thread's current one until `uninstall(previous:)` with what
        /// this returns: for the server's every request, without a closure or generic
        /// dispatch from another module (`withCurrent` is the scoped form). The caller keeps
        /// the budget alive in between.
        public func install() -> UnsafeMutableRawPointer? {
            let previous = pthread_getspecific(Self.key)
            pthread_setspecific(Self.key, UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()))
            return previous
        }

        /// Puts back the budget that was current before `install()`.
        public static func uninstall(previous: UnsafeMutableRawPointer?) {
            pthread_setspecific(key, previous)
        }

        /// Runs `body` with `budget` as this thread's current one, then puts the previous back.
        public static func withCurrent<Result>(_ budget: Budget, _ body: () throws -> Result) rethrows -> Result {
            let previous = budget.install()
            defer { uninstall(previous: previous) }
            return try withExtendedLifetime(budget) { try body() }
        }
    }

    /// Checks between two charges to the budget (and looks for a cancellation when
    /// `cancellable`): about 0.36 ms of walking.
    static let checksPerCharge = 4_096

    /// Springs between two looks for a cancellation in `settle` (`cancellable`): about 1.1 ms
    /// of work (a spring settles in about 4.4 µs, release build), where a look costs a
    /// thread-specific read.
    static let springsPerLook = 256

    /// The rest time (s, a multiple of 1 ms), or why there is none. `cancellable`: looks for
    /// the thread's cancellation (`Cancellation.isRequested`) every `springsPerLook` springs
    /// and throws `.cancelled` when it finds one; for the compiler, whose stopped work is
    /// thrown away (a session's retarget, which changes state, settles to the end).
    ///
    /// `memo`: answers already found in this computation (`Memo`), consulted first and given
    /// each new answer; the answer is the same with or without it.
    public static func settle(
        _ springs: [SpringKernel], restDelta: Double, restSpeed: Double,
        maxRestTime: Double = defaultMaxRestTime, cancellable: Bool = false, memo: Memo? = nil
    ) throws(Failure) -> Double {
        guard let memo, let key = Memo.key(springs, restDelta: restDelta, restSpeed: restSpeed, maxRestTime: maxRestTime) else {
            return try restTime(springs, restDelta: restDelta, restSpeed: restSpeed, maxRestTime: maxRestTime, cancellable: cancellable)
        }
        let slot = Memo.slot(key)
        if let known = memo.answer(for: key, at: slot) { return try known.get() }
        do {
            let time = try restTime(springs, restDelta: restDelta, restSpeed: restSpeed, maxRestTime: maxRestTime, cancellable: cancellable)
            memo.store(.success(time), for: key, at: slot)
            return time
        } catch {
            if error != .cancelled { memo.store(.failure(error), for: key, at: slot) }
            throw error
        }
    }

    /// Rest times found earlier in one computation, for springs that come back: every element
    /// of a staggered spring, or of spring keyframes, settles the same few kernels (from rest,
    /// toward each target), and every repeat of a group the same ones again. `settle` depends
    /// only on its springs' modes and coefficients and on its bounds, so an answer found again
    /// is the one it would compute (`KernelTests.testMemoAnswersAsSettlingDoes`).
    ///
    /// Spring keyframes on 9,000 staggered elements (the abuse suite's compile-work document,
    /// refused at `max-segments` after about 100 elements): 1.2 s before, where `settle` and
    /// its `exp`/`sincos` were 90 % of the time, 0.16 s with the memo (release; debug 5.7 s
    /// and 0.8 s). Answers byte-identical on sixteen documents of springs.
    ///
    /// Direct-mapped: `slots` answers, the newest in each slot; only calls of at most
    /// `maxSprings` springs are kept, so it holds at most about 1.5 MB. Not shared between
    /// threads: one per compilation (`Scheduler`).
    public final class Memo {
        static let slots = 64
        static let maxSprings = 256
        private var keys = [[UInt64]](repeating: [], count: slots)
        private var answers = [Result<Double, Failure>](repeating: .success(0), count: slots)
        /// Answers given from the memo (for tests).
        private(set) var hits = 0

        public init() {}

        /// What `settle` reads, as bits: per spring its regime, ω0, ζ, decay, second rate and
        /// six coefficients, then the bounds. Nil past `maxSprings` springs.
        static func key(_ springs: [SpringKernel], restDelta: Double, restSpeed: Double, maxRestTime: Double) -> [UInt64]? {
            guard springs.count <= maxSprings else { return nil }
            var key: [UInt64] = []
            key.reserveCapacity(11 * springs.count + 3)
            for spring in springs {
                let modes = spring.modes
                let regime: UInt64 = switch modes.regime { case .underDamped: 0; case .critical: 1; case .overDamped: 2 }
                key.append(regime)
                key.append(modes.omega0.bitPattern); key.append(modes.zeta.bitPattern)
                key.append(modes.decay.bitPattern); key.append(modes.second.bitPattern)
                key.append(spring.p.bitPattern); key.append(spring.q.bitPattern)
                key.append(spring.dp.bitPattern); key.append(spring.dq.bitPattern)
                key.append(spring.ap.bitPattern); key.append(spring.aq.bitPattern)
            }
            key.append(restDelta.bitPattern)
            key.append(restSpeed.bitPattern)
            key.append(maxRestTime.bitPattern)
            return key
        }

        /// A multiply-and-fold hash of the key: each step brings the high bits down, so keys
        /// that differ only in signs (a spring toward 1 and its way back to 0, whose
        /// coefficients differ in bit 63 alone) land apart.
        static func slot(_ key: [UInt64]) -> Int {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for word in key {
                hash = (hash ^ word) &* 0x9e37_79b9_7f4a_7c15
                hash ^= hash >> 32
            }
            return Int(truncatingIfNeeded: hash % UInt64(slots))
        }

        /// The answer kept for `key` in its `slot` (`slot(_:)`), if that is the key there.
        func answer(for key: [UInt64], at slot: Int) -> Result<Double, Failure>? {
            guard keys[slot] == key else { return nil }
            hits += 1
            return answers[slot]
        }

        func store(_ answer: Result<Double, Failure>, for key: [UInt64], at slot: Int) {
            keys[slot] = key
            answers[slot] = answer
        }
    }

    /// `settle` without a memo.
    private static func restTime(
        _ springs: [SpringKernel], restDelta: Double, restSpeed: Double, maxRestTime: Double, cancellable: Bool
    ) throws(Failure) -> Double {
        // Envelope bounds past which each component is guaranteed inside the band.
        var bounds: [(index: Int, time: Double)] = []
        bounds.reserveCapacity(springs.count)
        let cap = 4 * Swift.max(maxRestTime, grid)
        var looks = PeriodicLook(every: springsPerLook)
        for (index, spring) in springs.enumerated() {
            if cancellable, looks.isRequested(after: 1) { throw .cancelled }
            let envelopes = Envelopes(spring)
            guard envelopes.isFinite else { throw .exceedsLimit(maxRestTime) }
            let time = try guaranteeTime(envelopes, restDelta: restDelta, restSpeed: restSpeed, cap: cap)
            bounds.append((index, time))
        }
        bounds.sort { $0.time > $1.time }

        // Grid checks, charged to the computation's budget every `checksPerCharge`.
        let budget = Budget.current ?? Budget(checks: maxChecks)
        let spentBefore = budget.used
        var checks = 0
        func charge(looking: Bool = true) throws(Failure) {
            if looking, cancellable, Cancellation.isRequested { throw .cancelled }
            guard budget.take(checks) else { throw .tooMuchWork(checks: budget.checks, spentBefore: spentBefore) }
            checks = 0
        }
        var rest = 0  // grid index of the rest time: one past the last violation
        looks = PeriodicLook(every: springsPerLook)  // each pass looks after its own 256
        for bound in bounds {
            if cancellable, looks.isRequested(after: 1) { throw .cancelled }
            let spring = springs[bound.index]
            let envelopes = Envelopes(spring)
            var k = Int((bound.time / grid).rounded(.up)) + 1
            while k >= rest {
                checks &+= 1
                if checks >= checksPerCharge { try charge() }
                let t = Double(k) / 1000
                let basis = spring.modes.basis(at: t)
                let y = Swift.abs(spring.displacement(basis: basis))
                let v = Swift.abs(spring.velocity(basis: basis))
                if !(y <= restDelta && v <= restSpeed) {
                    rest = k + 1
                    break
                }
                if k == rest { break }
                // Skip grid points that provably stay inside the band.
                let window = Swift.min(k - rest, 1000)
                let from = Double(k - window) / 1000
                let speedBound = envelopes.velocity.supremum(from: from)
                let accelerationBound = envelopes.acceleration.supremum(from: from)
                var skip = Double.infinity
                if speedBound > 0 { skip = (restDelta - y) / speedBound }
                if accelerationBound > 0 { skip = Swift.min(skip, (restSpeed - v) / accelerationBound) }
                let steps = Swift.min(Double(window), (skip * 0.999 / grid).rounded(.down))
                k -= Int(Swift.max(steps, 0)) + 1
            }
        }
        try charge(looking: false)  // the work is done: the answer stands
        let time = Double(rest) / 1000
        guard time <= maxRestTime else { throw .exceedsLimit(maxRestTime) }
        return time
    }

    /// The first time past which the envelopes guarantee the band, to within bisection
    /// precision (an upper bound, which is all the scan needs).
    private static func guaranteeTime(
        _ envelopes: Envelopes, restDelta: Double, restSpeed: Double, cap: Double
    ) throws(Failure) -> Double {
        func inside(_ t: Double) -> Bool {
            envelopes.displacement.supremum(from: t) <= restDelta && envelopes.velocity.supremum(from: t) <= restSpeed
        }
        if inside(0) { return 0 }
        if envelopes.isUndamped || !(restDelta > 0) || !(restSpeed > 0) { throw .neverSettles }
        var high = grid
        while !inside(high) {
            high *= 2
            if high > cap { throw .exceedsLimit(cap / 4) }
        }
        var low = high / 2
        if high == grid { low = 0 }
        for _ in 0..<60 {
            let mid = low + (high - low) / 2
            if inside(mid) { high = mid } else { low = mid }
            if high - low <= grid / 8 { break }
        }
        return high
    }

    /// `E(s) = (P + Q·s)·e^(−a·s) + R·e^(−b·s)` with P, Q, R ≥ 0, a ≥ 0, b > 0: an upper bound of
    /// |y|, |y'| or |y''| for every s ≥ 0.
    struct Envelope {
        var p = 0.0, q = 0.0, a = 0.0, r = 0.0, b = 1.0

        func callAsFunction(_ s: Double) -> Double {
            let first = p + q * s == 0 ? 0 : (p + q * s) * exp(-a * s)
            let second = r == 0 ? 0 : r * exp(-b * s)
            return first + second
        }

        /// `sup E(s)` over `s ≥ t`. The second term is decreasing; the first rises until
        /// `s* = 1/a − P/Q` when Q > 0, then falls.
        func supremum(from t: Double) -> Double {
            let t = Swift.max(t, 0)
            if q > 0 && a > 0 {
                let peak = 1 / a - p / q
                if peak > t { return self(peak) + (r == 0 ? 0 : r * exp(-b * t)) }
            }
            return self(t)
        }

        var isFinite: Bool { p.isFinite && q.isFinite && a.isFinite && r.isFinite && b.isFinite }
    }

    /// The envelopes of one component's displacement, velocity and acceleration.
    struct Envelopes {
        var displacement = Envelope(), velocity = Envelope(), acceleration = Envelope()
        var isUndamped = false

        init(_ spring: SpringKernel) {
            let modes = spring.modes
            func make(_ c1: Double, _ c2: Double) -> Envelope {
                switch modes.regime {
                case .underDamped:
                    // |c1 cos + c2 sin| ≤ √(c1² + c2²).
                    return Envelope(p: (c1 * c1 + c2 * c2).squareRoot(), a: modes.decay)
                case .critical:
                    return Envelope(p: Swift.abs(c1), q: Swift.abs(c2), a: modes.decay)
                case .overDamped:
                    return Envelope(p: Swift.abs(c1), a: modes.decay, r: Swift.abs(c2), b: -modes.second)
                }
            }
            displacement = make(spring.p, spring.q)
            velocity = make(spring.dp, spring.dq)
            acceleration = make(spring.ap, spring.aq)
            isUndamped = !(modes.decay > 0)
        }

        var isFinite: Bool { displacement.isFinite && velocity.isFinite && acceleration.isFinite }
    }
}
