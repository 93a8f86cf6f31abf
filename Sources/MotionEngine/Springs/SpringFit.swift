import Foundation

/// The inverse forms: the spring (mass 1) whose motion from 0 to 1, with the given initial
/// velocity and `restDelta`, has a requested overshoot and settling or peak time, or a
/// requested damping ratio and settling time.
///
/// Without an initial velocity the overshoot fixes `ζ` in closed form,
/// `ζ = −ln O / √(π² + ln² O)` (the overshoot of `y = −e^(−ζω0t)(cos ωd t + …)` is
/// `e^(−ζπ/√(1−ζ²))`), and the peak time then fixes `ω0 = π/(tp·√(1 − ζ²))`. The settling
/// time has no closed form (`SpringSettling` counts the last time the motion leaves the band on a
/// 1 ms grid), so `ω0` is found by bisection on `log ω0`: for a fixed `ζ` and no velocity the
/// settling time is `τ(ζ)/ω0`, non-increasing in `ω0`. With a velocity, `v/ω0` changes with
/// `ω0`, so `ζ` is solved again (bisection on the overshoot, which falls as `ζ` grows) inside
/// every step of the outer bisection on `ω0`. Every fit is measured at the end, and a fit
/// whose properties miss the request by more than `accuracy` is refused.
public enum SpringFit {
    /// Largest relative miss of a fitted property.
    public static let accuracy = 0.005
    /// `ω0` is searched within these bounds (rad/s).
    public static let omegaRange = (low: 1e-6, high: 1e8)
    /// `ζ` is searched within these bounds when a velocity rules out the closed form.
    public static let zetaRange = (low: 1e-6, high: 1e3)

    public enum Failure: Error, Sendable, Equatable {
        /// No spring found; `message` says what came closest. `field` is the member to blame.
        case unreachable(field: String, message: String)
    }

    /// `ζ = −ln O / √(π² + ln² O)`, for 0 < O < 1 (no initial velocity).
    public static func dampingRatio(overshoot: Double) -> Double {
        let l = log(overshoot)
        return -l / (Double.pi * Double.pi + l * l).squareRoot()
    }

    static func spring(_ omega0: Double, _ zeta: Double) -> SpringDescription {
        SpringDescription(naturalFrequency: omega0, dampingRatio: zeta)
    }

    /// The overshoot of `(ω0, ζ)` with `velocity`.
    static func overshoot(_ omega0: Double, _ zeta: Double, velocity: Double) -> Double {
        SpringMotionMetrics.peak(spring(omega0, zeta).kernel(velocity: velocity))?.overshoot ?? 0
    }

    /// `ζ` giving `target` overshoot at `ω0`: closed form without velocity, else bisection on
    /// `log ζ` (the overshoot falls as `ζ` grows). Nil when out of reach.
    static func zeta(forOvershoot target: Double, omega0: Double, velocity: Double) -> Double? {
        if velocity == 0 { return dampingRatio(overshoot: target) }
        var low = log(zetaRange.low), high = log(zetaRange.high)
        // overshoot(low) must exceed the target and overshoot(high) fall below it.
        guard overshoot(omega0, exp(low), velocity: velocity) >= target,
              overshoot(omega0, exp(high), velocity: velocity) <= target else { return nil }
        for _ in 0..<100 {
            let mid = (low + high) / 2
            if overshoot(omega0, exp(mid), velocity: velocity) > target { low = mid } else { high = mid }
            if high - low < 1e-13 { break }
        }
        return exp((low + high) / 2)
    }

    /// Bisection on `log ω0` for a time-like property that falls as `ω0` grows: the largest
    /// bracket point whose `measure` is still ≥ `target`, and the next one. `measure` returns
    /// nil when the spring at that `ω0` has no such property (treated as +∞: too slow).
    static func solveOmega(target: Double, _ measure: (Double) -> Double?) -> [Double] {
        var low = log(omegaRange.low), high = log(omegaRange.high)
        func value(_ logOmega: Double) -> Double { measure(exp(logOmega)) ?? .infinity }
        guard value(low) >= target else { return [exp(low)] }
        guard value(high) <= target else { return [exp(high)] }
        for _ in 0..<200 {
            let mid = (low + high) / 2
            if value(mid) >= target { low = mid } else { high = mid }
            if high - low < 1e-14 { break }
        }
        return [exp(low), exp(high)]
    }

    /// The request of an inverse form.
    public enum Request: Sendable, Equatable {
        case overshootSettlingTime(overshoot: Double, settlingTime: Double)
        case overshootPeakTime(overshoot: Double, peakTime: Double)
        case dampingRatioSettlingTime(dampingRatio: Double, settlingTime: Double)
    }

    /// The fitted spring (mass 1), or why there is none.
    public static func fit(_ request: Request, velocity: Double, restDelta: Double) throws(Failure) -> SpringDescription {
        // A search that ran out of the request's settling checks says so, rather than that
        // no spring has the figures asked for.
        var outOfChecks: SpringSettling.Failure?
        func settling(_ omega0: Double, _ zeta: Double) -> Double? {
            do {
                return try SpringSettling.settle([spring(omega0, zeta).kernel(velocity: velocity)], restDelta: restDelta, restSpeed: restDelta)
            } catch {
                if case .tooMuchWork = error { outOfChecks = error }
                return nil
            }
        }
        func relative(_ a: Double, _ b: Double) -> Double { Swift.abs(a - b) / Swift.abs(b) }

        var candidates: [SpringDescription] = []
        switch request {
        case .overshootPeakTime(let overshoot, let peakTime):
            if velocity == 0 {
                let zeta = dampingRatio(overshoot: overshoot)
                candidates = [spring(Double.pi / (peakTime * ((1 - zeta) * (1 + zeta)).squareRoot()), zeta)]
            } else {
                let omegas = solveOmega(target: peakTime) { omega0 in
                    guard let zeta = zeta(forOvershoot: overshoot, omega0: omega0, velocity: velocity) else { return nil }
                    return SpringMotionMetrics.peak(spring(omega0, zeta).kernel(velocity: velocity))?.time
                }
                candidates = omegas.compactMap { omega0 in
                    zeta(forOvershoot: overshoot, omega0: omega0, velocity: velocity).map { spring(omega0, $0) }
                }
            }
        case .overshootSettlingTime(let overshoot, let settlingTime):
            let omegas = solveOmega(target: settlingTime) { omega0 in
                guard let zeta = zeta(forOvershoot: overshoot, omega0: omega0, velocity: velocity) else { return nil }
                return settling(omega0, zeta)
            }
            candidates = omegas.compactMap { omega0 in
                zeta(forOvershoot: overshoot, omega0: omega0, velocity: velocity).map { spring(omega0, $0) }
            }
        case .dampingRatioSettlingTime(let zeta, let settlingTime):
            candidates = solveOmega(target: settlingTime) { settling($0, zeta) }.map { spring($0, zeta) }
        }

        // Measure every candidate; keep the one that misses least.
        var best: (spring: SpringDescription, miss: Double, field: String, detail: String)?
        for candidate in candidates {
            let metrics: SpringMotionMetrics
            do {
                metrics = try SpringMotionMetrics.measure(candidate.kernel(velocity: velocity), restDelta: restDelta)
            } catch {
                if case .tooMuchWork = error { outOfChecks = error }
                continue
            }
            var misses: [(Double, String, String)] = []
            switch request {
            case .overshootPeakTime(let overshoot, let peakTime):
                misses.append((relative(metrics.overshoot, overshoot), "overshoot", "overshoot \(format(metrics.overshoot))"))
                misses.append((metrics.peakTime.map { relative($0, peakTime) } ?? .infinity, "peakTime",
                               "peak time \(metrics.peakTime.map { format($0) } ?? "none")"))
            case .overshootSettlingTime(let overshoot, let settlingTime):
                misses.append((relative(metrics.overshoot, overshoot), "overshoot", "overshoot \(format(metrics.overshoot))"))
                misses.append((relative(metrics.settlingTime, settlingTime), "settlingTime", "settling time \(format(metrics.settlingTime))"))
            case .dampingRatioSettlingTime(_, let settlingTime):
                misses.append((relative(metrics.settlingTime, settlingTime), "settlingTime", "settling time \(format(metrics.settlingTime))"))
            }
            let worst = misses.max { $0.0 < $1.0 }!
            let detail = misses.map(\.2).joined(separator: ", ")
            if best == nil || worst.0 < best!.miss { best = (candidate, worst.0, worst.1, detail) }
        }
        if let outOfChecks {
            let field: String
            switch request {
            case .overshootPeakTime: field = "peakTime"
            case .overshootSettlingTime, .dampingRatioSettlingTime: field = "settlingTime"
            }
            throw .unreachable(field: field, message: outOfChecks.message)
        }
        guard let best else {
            let field: String
            switch request {
            case .overshootPeakTime: field = "overshoot"
            case .overshootSettlingTime, .dampingRatioSettlingTime: field = "settlingTime"
            }
            throw .unreachable(field: field, message: "no spring with this initial velocity and restDelta has it")
        }
        guard best.miss <= accuracy else {
            throw .unreachable(field: best.field, message: "no spring has it within 0.5 % (the closest found has \(best.detail))")
        }
        return best.spring
    }
}
