import Foundation
import XCTest
@testable import MotionEngine

final class KernelTests: XCTestCase {
    // MARK: - Independent oracles

    /// RK4 integration of x' = v, v' = a(x, v) from (x0, v0), sampled at `times` (ascending).
    private func rk4(
        x0: Double, v0: Double, step: Double, times: [Double], _ a: (Double, Double) -> Double
    ) -> [(x: Double, v: Double)] {
        var x = x0, v = v0, t = 0.0
        var out: [(x: Double, v: Double)] = []
        for target in times {
            while t < target - 1e-12 {
                let h = Swift.min(step, target - t)
                let k1x = v, k1v = a(x, v)
                let k2x = v + h / 2 * k1v, k2v = a(x + h / 2 * k1x, v + h / 2 * k1v)
                let k3x = v + h / 2 * k2v, k3v = a(x + h / 2 * k2x, v + h / 2 * k2v)
                let k4x = v + h * k3v, k4v = a(x + h * k3x, v + h * k3v)
                x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
                v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
                t += h
            }
            out.append((x, v))
        }
        return out
    }

    /// The rest index (ms) by brute force: one past the last grid violation up to `horizon` s.
    private func bruteForceRest(_ springs: [SpringKernel], restDelta: Double, restSpeed: Double, horizon: Double) -> Int {
        var last = -1
        for k in 0...Int(horizon * 1000) {
            let t = Double(k) / 1000
            for spring in springs {
                let y = spring.value(at: t) - spring.target
                if abs(y) > restDelta || abs(spring.velocity(at: t)) > restSpeed { last = k }
            }
        }
        return last + 1
    }

    /// Displacement of an under/critically/over-damped spring written out independently.
    private func springDisplacement(m: Double, k: Double, c: Double, y0: Double, v0: Double, t: Double) -> Double {
        let w0 = (k / m).squareRoot()
        let zeta = c / (2 * (k * m).squareRoot())
        if zeta < 1 {
            let wd = w0 * (1 - zeta * zeta).squareRoot()
            return exp(-zeta * w0 * t) * (y0 * cos(wd * t) + (v0 + zeta * w0 * y0) / wd * sin(wd * t))
        } else if zeta == 1 {
            return exp(-w0 * t) * (y0 + (v0 + w0 * y0) * t)
        } else {
            let s = (zeta * zeta - 1).squareRoot()
            let r1 = -w0 * (zeta - s), r2 = -w0 * (zeta + s)
            let a = (v0 - r2 * y0) / (r1 - r2)
            return a * exp(r1 * t) + (y0 - a) * exp(r2 * t)
        }
    }

    /// First sign change of `f` after `start` on a 1e-4 s grid, bisected 200 times.
    private func bisectionOracle(after start: Double, until end: Double, _ f: (Double) -> Double) -> Double? {
        var t0 = start
        var f0 = f(t0)
        var t1 = t0
        while t1 < end {
            t1 = t0 + 1e-4
            let f1 = f(t1)
            if (f0 < 0) != (f1 < 0) {
                var low = t0, high = t1
                for _ in 0..<200 {
                    let mid = (low + high) / 2
                    if (f(mid) < 0) == (f0 < 0) { low = mid } else { high = mid }
                }
                return (low + high) / 2
            }
            t0 = t1
            f0 = f1
        }
        return nil
    }

    // MARK: - Exponential law

    func testExponentialLawMatchesFormula() {
        let law = ExponentialLaw(position: 3, velocity: -50, lambda: 0.7)
        for t in [0.0, 0.001, 0.25, 1, 2.5, 10, 40] {
            let expected = 3 + -50 * (1 - exp(-0.7 * t)) / 0.7
            XCTAssertEqual(law.value(at: t), expected, accuracy: 1e-12, "t = \(t)")
            XCTAssertEqual(law.velocity(at: t), -50 * exp(-0.7 * t), accuracy: 1e-12, "t = \(t)")
        }
        XCTAssertEqual(law.value(at: 0), 3)
        XCTAssertEqual(law.velocity(at: 0), -50)
        XCTAssertEqual(law.restingPoint, 3 - 50 / 0.7, accuracy: 1e-12)
        // Negative times count as 0.
        XCTAssertEqual(law.value(at: -1), 3)
    }

    func testExponentialLawMatchesNumericalIntegration() {
        let lambda = 1.3
        let law = ExponentialLaw(position: 10, velocity: 240, lambda: lambda)
        let times = [0.1, 0.5, 1, 2, 4]
        let integrated = rk4(x0: 10, v0: 240, step: 1e-4, times: times) { _, v in -lambda * v }
        for (t, state) in zip(times, integrated) {
            XCTAssertEqual(law.value(at: t), state.x, accuracy: 1e-6, "x at \(t)")
            XCTAssertEqual(law.velocity(at: t), state.v, accuracy: 1e-6, "v at \(t)")
        }
        // A coarse Euler integration is visibly off: the oracle is able to disagree.
        var x = 10.0, v = 240.0
        for _ in 0..<10 { x += 0.1 * v; v -= 0.1 * lambda * v }
        XCTAssertGreaterThan(abs(law.value(at: 1) - x), 1)
    }

    func testFrictionMultipliesVelocityPerSecond() {
        for f in [0.05, 0.5, 0.9, 0.999] {
            let law = ExponentialLaw(position: 0, velocity: 100, lambda: ExponentialLaw.lambda(friction: f))
            XCTAssertEqual(law.velocity(at: 1) / law.velocity(at: 0), 1 - f, accuracy: 1e-12, "f = \(f)")
            XCTAssertEqual(law.velocity(at: 2) / law.velocity(at: 0), (1 - f) * (1 - f), accuracy: 1e-12, "f = \(f)")
            XCTAssertEqual(law.velocity(at: 3.5) / law.velocity(at: 2.5), 1 - f, accuracy: 1e-12, "f = \(f)")
        }
        XCTAssertEqual(ExponentialLaw.lambda(friction: 0.5), log(2), accuracy: 1e-15)
        // f = 1 stops at once.
        XCTAssertEqual(ExponentialLaw.lambda(friction: 1), .infinity)
        let stopped = ExponentialLaw(position: 7, velocity: 100, lambda: .infinity)
        XCTAssertEqual(stopped.value(at: 0.5), 7)
        XCTAssertEqual(stopped.velocity(at: 0.5), 0)
        XCTAssertEqual(stopped.restTime(restVelocity: 0.95), 0)
        XCTAssertEqual(stopped.restingPoint, 7)
        XCTAssertNil(stopped.time(toTravel: 1))
    }

    func testDecayConstantIsTheSameLaw() {
        XCTAssertEqual(ExponentialLaw.lambda(decayConstant: 0.998), -1000 * log(0.998), accuracy: 1e-12)
        XCTAssertEqual(ExponentialLaw.lambda(decayConstant: 0.998), 2.002002670673601, accuracy: 1e-12)
        // 1 − f = decayConstant^1000.
        let friction: Double = 1 - pow(0.998 as Double, 1000.0)
        XCTAssertEqual(ExponentialLaw.lambda(friction: friction), ExponentialLaw.lambda(decayConstant: 0.998), accuracy: 1e-9)
    }

    func testExponentialLawRestAndTravel() {
        let law = ExponentialLaw(position: 5, velocity: -80, lambda: 0.4)
        let rest = law.restTime(restVelocity: 0.95)
        XCTAssertEqual(rest, log(80 / 0.95) / 0.4, accuracy: 1e-12)
        XCTAssertEqual(abs(law.velocity(at: rest)), 0.95, accuracy: 1e-10)
        XCTAssertEqual(ExponentialLaw(position: 0, velocity: 0.9, lambda: 1).restTime(restVelocity: 0.95), 0)
        XCTAssertEqual(ExponentialLaw(position: 0, velocity: -0.95, lambda: 1).restTime(restVelocity: 0.95), 0)

        // Travel 120 units (the body could travel 200): −ln(1 − λd/|v0|)/λ.
        let time = try! XCTUnwrap(law.time(toTravel: 120))
        XCTAssertEqual(time, -log(1 - 0.4 * 120 / 80) / 0.4, accuracy: 1e-12)
        XCTAssertEqual(law.value(at: time), 5 - 120, accuracy: 1e-9)
        XCTAssertEqual(law.velocity(afterTravelling: 120), law.velocity(at: time), accuracy: 1e-9)
        XCTAssertEqual(law.velocity(afterTravelling: 120), -80 + 0.4 * 120, accuracy: 1e-12)
        XCTAssertNil(law.time(toTravel: 200), "exactly the asymptote is never reached")
        XCTAssertNil(law.time(toTravel: 250))
        XCTAssertEqual(law.time(toTravel: 0), 0)
    }

    // MARK: - Physics

    func testPhysicsRestTimeAndHold() throws {
        let physics = try PhysicsKernel(from: 10, to: 20, velocity: 100, friction: 0.5)
        let lambda = log(2.0)
        XCTAssertEqual(physics.restTime, log(100 / 0.95) / lambda, accuracy: 1e-12)
        XCTAssertEqual(physics.restValue, 10 + (100 - 0.95) / lambda, accuracy: 1e-9)
        XCTAssertEqual(physics.contactTimes, [])
        XCTAssertEqual(physics.value(at: 1), 10 + 100 * (1 - 0.5) / lambda, accuracy: 1e-12)
        XCTAssertEqual(physics.velocity(at: 1), 50, accuracy: 1e-12)
        // No snapping: the value stays where it rested.
        XCTAssertEqual(physics.value(at: physics.restTime), physics.restValue)
        XCTAssertEqual(physics.value(at: 1000), physics.restValue)
        XCTAssertEqual(physics.value(at: physics.restTime - 1e-9), physics.restValue, accuracy: 1e-6)
        XCTAssertEqual(physics.velocity(at: physics.restTime + 1), 0)

        // Slower than restVelocity: at rest at once.
        let still = try PhysicsKernel(from: 3, to: 9, velocity: 0.5, friction: 0.2)
        XCTAssertEqual(still.restTime, 0)
        XCTAssertEqual(still.value(at: 2), 3)
        // Friction 1: at rest at once, even on a wall moving outward.
        let stopped = try PhysicsKernel(from: 0, to: 10, velocity: -100, friction: 1, collisions: true)
        XCTAssertEqual(stopped.restTime, 0)
        XCTAssertEqual(stopped.contactTimes, [])
        XCTAssertEqual(stopped.value(at: 1), 0)
    }

    func testPhysicsContactsAreExact() throws {
        let f = 0.5, lambda = log(2.0)
        let physics = try PhysicsKernel(from: 0, to: 100, velocity: 300, friction: f, restitution: 0.75, collisions: true)
        // First contact: 100 units at 300/s.
        let first = -log(1 - lambda * 100 / 300) / lambda
        XCTAssertGreaterThanOrEqual(physics.contactTimes.count, 2)
        XCTAssertEqual(physics.contactTimes[0], first, accuracy: 1e-12)
        XCTAssertEqual(physics.value(at: first), 100, accuracy: 1e-12)
        XCTAssertEqual(physics.value(at: physics.contactTimes[0]), 100)
        let arrival = 300 - lambda * 100
        XCTAssertEqual(physics.velocity(at: physics.contactTimes[0]), -0.75 * arrival, accuracy: 1e-9)
        XCTAssertGreaterThan(physics.velocity(at: physics.contactTimes[0] - 1e-6), 0)
        XCTAssertEqual(physics.value(at: physics.contactTimes[0] - 1e-9), 100, accuracy: 1e-5)
        // Second contact, back at 0.
        let v1 = 0.75 * arrival
        let second = first - log(1 - lambda * 100 / v1) / lambda
        XCTAssertEqual(physics.contactTimes[1], second, accuracy: 1e-12)
        XCTAssertEqual(physics.value(at: physics.contactTimes[1]), 0)
        XCTAssertEqual(physics.velocity(at: physics.contactTimes[1]), 0.75 * (v1 - lambda * 100), accuracy: 1e-9)
        // It stays inside the walls (also within rounding just before a contact) and rests inside them.
        for contact in physics.contactTimes {
            for t in [contact.nextDown, contact - 1e-12, contact - 1e-9] {
                XCTAssertTrue((0...100).contains(physics.value(at: t)), "t = \(t): \(physics.value(at: t))")
            }
        }
        for k in 0...2000 {
            let t = Double(k) / 200
            XCTAssertTrue((0...100).contains(physics.value(at: t)), "t = \(t): \(physics.value(at: t))")
        }
        XCTAssertTrue((0...100).contains(physics.restValue))
        XCTAssertGreaterThan(physics.restTime, physics.contactTimes.last!)
    }

    func testPhysicsStartOnAWallMovingOutwardBouncesAtOnce() throws {
        let physics = try PhysicsKernel(from: 0, to: 100, velocity: -50, friction: 0.5, restitution: 0.75, collisions: true)
        XCTAssertEqual(physics.contactTimes.first, 0)
        XCTAssertEqual(physics.value(at: 0), 0)
        XCTAssertEqual(physics.velocity(at: 0), 37.5)
        XCTAssertGreaterThan(physics.value(at: 0.5), 0)
        // Walls from `to` < `from`: the start is the upper wall.
        let down = try PhysicsKernel(from: 100, to: 0, velocity: 20, friction: 0.5, restitution: 0.5, collisions: true)
        XCTAssertEqual(down.contactTimes.first, 0)
        XCTAssertEqual(down.velocity(at: 0), -10)
        XCTAssertLessThan(down.value(at: 1), 100)
    }

    func testPhysicsRestitutionZeroStopsAtTheWall() throws {
        let physics = try PhysicsKernel(from: 0, to: 10, velocity: 300, friction: 0.5, restitution: 0, collisions: true)
        let contact = -log(1 - log(2.0) * 10 / 300) / log(2.0)
        XCTAssertEqual(physics.contactTimes.count, 1)
        XCTAssertEqual(physics.contactTimes[0], contact, accuracy: 1e-12)
        XCTAssertEqual(physics.restTime, physics.contactTimes[0])
        XCTAssertEqual(physics.restValue, 10)
        XCTAssertEqual(physics.value(at: 100), 10)
        XCTAssertEqual(physics.velocity(at: contact + 1), 0)
    }

    func testPhysicsReverseLegIsTheGeneralInitializer() throws {
        let forward = try PhysicsKernel(from: 0, to: 100, velocity: 120, friction: 0.5, collisions: true)
        // 120/s with λ = ln 2 reaches 120/ln 2 ≈ 173 > 100: one contact at least.
        XCTAssertFalse(forward.contactTimes.isEmpty)
        let reverse = try PhysicsKernel(position: forward.restValue, velocity: -120, friction: 0.5, walls: 0...100)
        XCTAssertEqual(reverse.value(at: 0), forward.restValue)
        XCTAssertEqual(reverse.velocity(at: 0), -120)
        let distance = forward.restValue  // to the lower wall
        if let contact = ExponentialLaw(position: 0, velocity: 120, lambda: log(2.0)).time(toTravel: distance) {
            XCTAssertEqual(reverse.contactTimes.first!, contact, accuracy: 1e-12)
            XCTAssertEqual(reverse.value(at: contact), 0)
        } else {
            XCTAssertEqual(reverse.contactTimes, [])
        }
        // Without walls it is plain friction.
        let free = try PhysicsKernel(position: 5, velocity: -10, friction: 0.5, walls: nil)
        XCTAssertEqual(free.value(at: 1), 5 - 10 * 0.5 / log(2.0), accuracy: 1e-12)
    }

    func testPhysicsMaxContacts() throws {
        // Find how many contacts a motion makes, then allow exactly that many, and one fewer.
        let make = { (limit: Int) throws(PhysicsKernel.Failure) -> PhysicsKernel in
            try PhysicsKernel(from: 0, to: 10, velocity: 500, friction: 0.1, restitution: 0.9, collisions: true, maxContacts: limit)
        }
        let full = try make(10_000)
        let count = full.contactTimes.count
        XCTAssertGreaterThan(count, 5)
        XCTAssertNoThrow(try make(count))
        XCTAssertThrowsError(try make(count - 1)) { error in
            XCTAssertEqual(error as? PhysicsKernel.Failure, .tooManyContacts(limit: count - 1))
            XCTAssertTrue((error as? PhysicsKernel.Failure)?.message.contains("\(count - 1) times") ?? false)
        }
        // A hostile motion: restitution 1, tiny friction, huge velocity stops at the limit.
        XCTAssertThrowsError(try PhysicsKernel(from: 0, to: 1, velocity: 1e12, friction: 1e-9, restitution: 1,
                                               collisions: true, maxContacts: 1000)) { error in
            XCTAssertEqual(error as? PhysicsKernel.Failure, .tooManyContacts(limit: 1000))
        }
    }

    // MARK: - Springs

    func testSpringParameterisations() {
        let a = SpringParameters.response(1, dampingRatio: 0.8)
        XCTAssertEqual(a.mass, 1)
        XCTAssertEqual(a.stiffness, 4 * Double.pi * Double.pi, accuracy: 1e-12)
        XCTAssertEqual(a.damping, 4 * Double.pi * 0.8, accuracy: 1e-12)
        XCTAssertEqual(a.dampingRatio, 0.8, accuracy: 1e-15)
        XCTAssertEqual(a.undampedAngularFrequency, 2 * Double.pi, accuracy: 1e-14)

        let b = SpringParameters.stiffness(100, damping: 10, mass: 4)
        XCTAssertEqual(b.dampingRatio, 10 / (2 * 20), accuracy: 1e-15)
        XCTAssertEqual(b.undampedAngularFrequency, 5, accuracy: 1e-15)

        XCTAssertEqual(SpringParameters.duration(0.5, bounce: 0.3).dampingRatio, 0.7, accuracy: 1e-14)
        XCTAssertEqual(SpringParameters.duration(0.5, bounce: -0.5).dampingRatio, 2, accuracy: 1e-14)
        XCTAssertEqual(SpringParameters.duration(0.5, bounce: 0).undampedAngularFrequency, 4 * Double.pi, accuracy: 1e-12)

        let d = SpringParameters.mass(2, tension: 300, friction: 20)
        XCTAssertEqual(d, SpringParameters(mass: 2, stiffness: 300, damping: 20))
    }

    func testSpringReferenceValues() {
        let under = SpringKernel(parameters: .response(1, dampingRatio: 0.8), from: 0, to: 10, velocity: 0)
        XCTAssertEqual(under.value(at: 0.5), 9.2231, accuracy: 5e-5)
        let critical = SpringKernel(parameters: .response(1, dampingRatio: 1), from: 0, to: 10, velocity: 0)
        XCTAssertEqual(critical.value(at: 0.5), 8.2103, accuracy: 5e-5)
        XCTAssertEqual(critical.modes.regime, .critical)
        XCTAssertEqual(under.value(at: 0), 0)
        XCTAssertEqual(under.velocity(at: 0), 0)
    }

    func testSpringsMatchRK4() {
        let times = [0.05, 0.2, 0.5, 1, 1.7, 3]
        let cases: [(String, SpringParameters, SpringModes.Regime)] = [
            ("under", .stiffness(150, damping: 4, mass: 1.5), .underDamped),
            ("undamped", .stiffness(40, damping: 0), .underDamped),
            ("critical", .stiffness(100, damping: 20), .critical),
            ("over", .stiffness(100, damping: 50), .overDamped),
            ("heavily over", .stiffness(9, damping: 300, mass: 2), .overDamped),
            ("just under", .response(0.8, dampingRatio: 1 - 1e-7), .underDamped),
            ("just over", .response(0.8, dampingRatio: 1 + 1e-7), .overDamped),
            ("critical by tolerance", .response(0.8, dampingRatio: 1 + 1e-12), .critical),
        ]
        for (name, parameters, regime) in cases {
            let (m, k, c) = (parameters.mass, parameters.stiffness, parameters.damping)
            for (a, b, v0) in [(0.0, 10.0, 0.0), (3.0, -2.0, 25.0), (-5.0, -5.0, -40.0)] {
                let spring = SpringKernel(parameters: parameters, from: a, to: b, velocity: v0)
                XCTAssertEqual(spring.modes.regime, regime, name)
                let oracle = rk4(x0: a, v0: v0, step: 1e-4, times: times) { x, v in (-k * (x - b) - c * v) / m }
                for (t, state) in zip(times, oracle) {
                    XCTAssertEqual(spring.value(at: t), state.x, accuracy: 1e-6, "\(name) x(\(t)) from \(a) to \(b) v0 \(v0)")
                    XCTAssertEqual(spring.velocity(at: t), state.v, accuracy: 1e-6, "\(name) v(\(t)) from \(a) to \(b) v0 \(v0)")
                }
                XCTAssertEqual(spring.value(at: 0), a, accuracy: 1e-12)
                XCTAssertEqual(spring.velocity(at: 0), v0, accuracy: 1e-9)
            }
        }
    }

    func testSharedBasisEqualsDirectEvaluation() {
        let parameters = SpringParameters.response(0.5, dampingRatio: 0.987)
        let modes = SpringModes(parameters)
        let lanes = (0..<8).map { SpringKernel(modes: modes, parameters: parameters, from: Double($0), to: 320, velocity: Double($0) * 3) }
        let t = 1.0 / 60
        let basis = modes.basis(at: t)
        for lane in lanes {
            XCTAssertEqual(lane.value(basis: basis), lane.value(at: t))
            XCTAssertEqual(lane.velocity(basis: basis), lane.velocity(at: t))
        }
        XCTAssertNotEqual(lanes[0].value(at: t), lanes[1].value(at: t))
    }

    /// `basis(clampingAt:)` (what `value(at:)`, `velocity(at:)` and `displacement(at:)` read;
    /// the optimiser may share it between them) is the basis at `max(t, 0)` in every regime:
    /// a negative time holds the start, a positive one is the plain basis.
    func testClampedBasisHoldsTheStartBeforeTimeZero() {
        let regimes: [(String, SpringParameters)] = [
            ("under", .response(0.5, dampingRatio: 0.4)),
            ("critical", .response(0.5, dampingRatio: 1)),
            ("over", .stiffness(100, damping: 50)),
        ]
        for (name, parameters) in regimes {
            let modes = SpringModes(parameters)
            let spring = SpringKernel(modes: modes, parameters: parameters, from: -4, to: 6, velocity: 30)
            for t in [-1e9, -2.5, -1e-12, -0.0] {
                XCTAssertTrue(modes.basis(clampingAt: t) == modes.basis(at: 0), "\(name) at \(t)")
                XCTAssertEqual(spring.value(at: t), -4, accuracy: 1e-12, "\(name) x(\(t))")
                XCTAssertEqual(spring.velocity(at: t), 30, accuracy: 1e-9, "\(name) v(\(t))")
                XCTAssertEqual(spring.displacement(at: t), -10, accuracy: 1e-12, "\(name) y(\(t))")
            }
            for t in [1e-9, 1.0 / 60, 0.37, 2.0] {
                let basis = modes.basis(at: t)
                XCTAssertTrue(modes.basis(clampingAt: t) == basis, "\(name) at \(t)")
                XCTAssertEqual(spring.value(at: t), spring.value(basis: basis), "\(name) x(\(t))")
                XCTAssertEqual(spring.velocity(at: t), spring.velocity(basis: basis), "\(name) v(\(t))")
                XCTAssertNotEqual(spring.value(at: t), -4, "\(name) x(\(t)) has moved")
            }
        }
    }

    func testRestTimeMatchesBruteForce() throws {
        let cases: [(String, [SpringKernel], Double, Double)] = [
            ("under", [SpringKernel(parameters: .response(1, dampingRatio: 0.3), from: 0, to: 10, velocity: 0)], 0.01, 0.01),
            ("critical", [SpringKernel(parameters: .response(0.5, dampingRatio: 1), from: 0, to: 320, velocity: 0)], 0.01, 0.01),
            ("over", [SpringKernel(parameters: .stiffness(100, damping: 50), from: -4, to: 6, velocity: 30)], 0.01, 0.01),
            ("near critical under", [SpringKernel(parameters: .response(1, dampingRatio: 0.999), from: 0, to: 1, velocity: 0)], 0.001, 0.001),
            ("components", [
                SpringKernel(parameters: .response(0.6, dampingRatio: 0.5), from: 0, to: 100, velocity: 0),
                SpringKernel(parameters: .response(0.6, dampingRatio: 0.5), from: 50, to: 40, velocity: -300),
                SpringKernel(parameters: .response(0.6, dampingRatio: 0.5), from: 7, to: 7, velocity: 0),
            ], 0.01, 0.01),
        ]
        for (name, springs, delta, speed) in cases {
            let rest = try XCTUnwrap(SpringSettling.restTime(springs, restDelta: delta, restSpeed: speed), name)
            let k = Int((rest * 1000).rounded())
            XCTAssertEqual(rest, Double(k) / 1000, "\(name): a multiple of 1 ms")
            XCTAssertEqual(k, bruteForceRest(springs, restDelta: delta, restSpeed: speed, horizon: rest + 10), name)
            XCTAssertGreaterThan(k, 0, name)
            // At rest − 1 ms some component is outside the band.
            let before = Double(k - 1) / 1000
            XCTAssertTrue(springs.contains { abs($0.value(at: before) - $0.target) > delta || abs($0.velocity(at: before)) > speed }, name)
        }
        // The component whose band is violated last decides for all.
        let single = SpringSettling.restTime([cases[4].1[1]], restDelta: 0.01, restSpeed: 0.01)!
        let all = SpringSettling.restTime(cases[4].1, restDelta: 0.01, restSpeed: 0.01)!
        XCTAssertGreaterThanOrEqual(all, single)
        // Starting at rest on the target: rest at 0.
        XCTAssertEqual(SpringSettling.restTime([cases[4].1[2]], restDelta: 0.01, restSpeed: 0.01), 0)
    }

    func testMomentaryPassThroughTheBandDoesNotCount() throws {
        // A wide position band and a narrow speed band: at every turning point |y'| = 0 and |y|
        // may already be within restDelta long before the speed stays within restSpeed.
        let spring = SpringKernel(parameters: .response(1, dampingRatio: 0.2), from: 0, to: 10, velocity: 0)
        let delta = 2.0, speed = 0.05
        let rest = try XCTUnwrap(SpringSettling.restTime([spring], restDelta: delta, restSpeed: speed))
        let k = Int((rest * 1000).rounded())
        XCTAssertEqual(k, bruteForceRest([spring], restDelta: delta, restSpeed: speed, horizon: rest + 10))
        // The first grid point inside the band comes well before the rest time.
        let firstInside = (0..<k).first { i in
            let t = Double(i) / 1000
            return abs(spring.value(at: t) - 10) <= delta && abs(spring.velocity(at: t)) <= speed
        }
        let momentary = try XCTUnwrap(firstInside, "the spring passes through the band before resting")
        XCTAssertLessThan(Double(momentary) / 1000, rest - 0.5)
        // At rest and at every later millisecond the band holds.
        for i in k...(k + 20_000) {
            let t = Double(i) / 1000
            XCTAssertLessThanOrEqual(abs(spring.value(at: t) - 10), delta)
            XCTAssertLessThanOrEqual(abs(spring.velocity(at: t)), speed, "t = \(t)")
        }

        // The classic case: a zero crossing inside a narrow position band with a wide speed band.
        let crossing = SpringKernel(parameters: .response(1, dampingRatio: 0.3), from: 0, to: 1, velocity: 0)
        let rest2 = try XCTUnwrap(SpringSettling.restTime([crossing], restDelta: 0.01, restSpeed: 100))
        let first2 = (0..<Int(rest2 * 1000)).first { abs(crossing.value(at: Double($0) / 1000) - 1) <= 0.01 }
        XCTAssertNotNil(first2)
        XCTAssertLessThan(Double(first2!) / 1000, rest2 - 1)
        XCTAssertEqual(Int((rest2 * 1000).rounded()), bruteForceRest([crossing], restDelta: 0.01, restSpeed: 100, horizon: rest2 + 5))
    }

    /// `SpringSettling.Memo` answers as settling does, failures included, whatever collides
    /// in its slots; it answers calls it has seen, not others (a bound, a coefficient, one
    /// spring more or the order of two differ).
    func testMemoAnswersAsSettlingDoes() {
        func outcome(_ springs: [SpringKernel], _ delta: Double, _ maxRest: Double, memo: SpringSettling.Memo?) -> String {
            do {
                return "\(try SpringSettling.settle(springs, restDelta: delta, restSpeed: delta, maxRestTime: maxRest, memo: memo))"
            } catch { return "\(error)" }
        }
        var generator = SplitMix64(seed: 14)
        var calls: [([SpringKernel], Double, Double)] = []
        for index in 0..<400 {
            let count = 1 + Int(generator.next() % 3)
            let ratio = [0.0, 0.2, 0.7, 1.0, 1.6][Int(generator.next() % 5)]
            let parameters = SpringParameters.response(0.05 + Double(generator.next() % 1000) / 1000, dampingRatio: ratio)
            let springs = (0..<count).map { _ in
                SpringKernel(parameters: parameters, from: Double(generator.next() % 5), to: Double(generator.next() % 5),
                             velocity: Double(generator.next() % 7) - 3)
            }
            calls.append((springs, [0.01, 0.001][index % 2], index % 7 == 0 ? 0.5 : SpringSettling.defaultMaxRestTime))
        }
        let expected = calls.map { outcome($0.0, $0.1, $0.2, memo: nil) }
        XCTAssertTrue(expected.contains("neverSettles") && expected.contains { $0.hasPrefix("exceedsLimit") })
        // Twice through 400 calls in 64 slots: each call at once again (answered from the
        // memo), the second round after the others have taken its slot (mostly recomputed).
        let memo = SpringSettling.Memo()
        for _ in 0..<2 {
            for (call, answer) in zip(calls, expected) {
                XCTAssertEqual(outcome(call.0, call.1, call.2, memo: memo), answer)
                XCTAssertEqual(outcome(call.0, call.1, call.2, memo: memo), answer)
            }
        }
        XCTAssertGreaterThanOrEqual(memo.hits, 2 * calls.count)
        // A call seen once more is answered from the memo; calls that differ are not.
        let spring = SpringKernel(parameters: .response(0.3, dampingRatio: 0.5), from: 0, to: 1, velocity: 0)
        let other = SpringKernel(parameters: .response(0.3, dampingRatio: 0.5), from: 0, to: 1.5, velocity: 0)
        let fresh = SpringSettling.Memo()
        let first = outcome([spring, other], 0.01, 3600, memo: fresh)
        XCTAssertEqual(fresh.hits, 0)
        XCTAssertEqual(outcome([spring, other], 0.01, 3600, memo: fresh), first)
        XCTAssertEqual(fresh.hits, 1)
        for (springs, delta) in [([spring, other], 0.001), ([other, spring], 0.01), ([spring], 0.01), ([spring, other, spring], 0.01)] {
            XCTAssertEqual(outcome(springs, delta, 3600, memo: fresh), outcome(springs, delta, 3600, memo: nil))
        }
        XCTAssertEqual(fresh.hits, 1)
        // Spring keyframes alternate between a spring and its mirror (coefficients of opposite
        // signs): both stay in the memo.
        let back = SpringKernel(parameters: .response(0.3, dampingRatio: 0.5), from: 1, to: 0, velocity: 0)
        let mirrored = SpringSettling.Memo()
        for _ in 0..<3 {
            _ = outcome([spring], 0.01, 3600, memo: mirrored)
            _ = outcome([back], 0.01, 3600, memo: mirrored)
        }
        XCTAssertEqual(mirrored.hits, 4)
    }

    func testRestTimeFailures() {
        let undamped = SpringKernel(parameters: .stiffness(100, damping: 0), from: 0, to: 1, velocity: 0)
        XCTAssertNil(SpringSettling.restTime([undamped], restDelta: 0.01, restSpeed: 0.01))
        XCTAssertThrowsError(try SpringSettling.settle([undamped], restDelta: 0.01, restSpeed: 0.01)) { error in
            XCTAssertEqual(error as? SpringSettling.Failure, .neverSettles)
        }
        // An undamped spring whose whole oscillation fits in the band is at rest at once.
        let tiny = SpringKernel(parameters: .stiffness(100, damping: 0), from: 0, to: 0.001, velocity: 0)
        XCTAssertEqual(SpringSettling.restTime([tiny], restDelta: 0.01, restSpeed: 0.1), 0)
        // Hostile: a slow, barely damped spring is refused quickly instead of scanned.
        let slow = SpringKernel(parameters: .response(1000, dampingRatio: 0.001), from: 0, to: 1e6, velocity: 0)
        XCTAssertThrowsError(try SpringSettling.settle([slow], restDelta: 0.01, restSpeed: 0.01)) { error in
            XCTAssertEqual(error as? SpringSettling.Failure, .exceedsLimit(SpringSettling.defaultMaxRestTime))
        }
        // A configurable limit.
        let spring = SpringKernel(parameters: .response(1, dampingRatio: 0.3), from: 0, to: 10, velocity: 0)
        let rest = SpringSettling.restTime([spring], restDelta: 0.01, restSpeed: 0.01)!
        XCTAssertNil(SpringSettling.restTime([spring], restDelta: 0.01, restSpeed: 0.01, maxRestTime: rest - 0.5))
        XCTAssertEqual(SpringSettling.restTime([spring], restDelta: 0.01, restSpeed: 0.01, maxRestTime: rest), rest)
        // Many slow-ish lanes still settle (and the skipping scan agrees with brute force).
        let lanes = (0..<16).map { SpringKernel(parameters: .response(20, dampingRatio: 0.7), from: Double($0), to: 100, velocity: 0) }
        let slowRest = SpringSettling.restTime(lanes, restDelta: 0.01, restSpeed: 0.01)!
        XCTAssertEqual(Int((slowRest * 1000).rounded()), bruteForceRest([lanes[0]], restDelta: 0.01, restSpeed: 0.01, horizon: slowRest + 20))
    }

    /// Finding rest times draws on the computation's budget of grid checks: a spring that
    /// oscillates at 1,000 Hz looks still at every millisecond and must be checked at each
    /// (up to millions), and is refused when the budget runs out; a usual spring takes a few.
    func testSettlingWorkIsBounded() throws {
        // ωd · 1 ms = 2π: every grid point sees the same phase, near the rest position.
        let omega = 2 * Double.pi * 1000, decay = 12.0 / 3000
        let aliasing = SpringKernel(parameters: SpringParameters(mass: 1, stiffness: omega * omega + decay * decay, damping: 2 * decay),
                                    from: 0, to: 0, velocity: 1)
        let band = exp(-12) / omega
        XCTAssertThrowsError(try SpringSettling.settle([aliasing], restDelta: band, restSpeed: 1e6)) { error in
            XCTAssertEqual(error as? SpringSettling.Failure, .tooMuchWork(checks: SpringSettling.maxChecks, spentBefore: 0))
            XCTAssertTrue((error as? SpringSettling.Failure)?.message.contains("more than the 2000000 checks of the 1 ms rest grid one request may spend (") ?? false)
        }

        // Usual springs: the cases checked against brute force above, a few checks each.
        let usual: [(SpringKernel, Double)] = [
            (SpringKernel(parameters: .response(1, dampingRatio: 0.3), from: 0, to: 10, velocity: 0), 0.01),
            (SpringKernel(parameters: .response(0.5, dampingRatio: 1), from: 0, to: 320, velocity: 0), 0.01),
            (SpringKernel(parameters: .stiffness(100, damping: 50), from: -4, to: 6, velocity: 30), 0.01),
            (SpringKernel(parameters: .response(1, dampingRatio: 0.999), from: 0, to: 1, velocity: 0), 0.001),
            (SpringKernel(parameters: .response(0.3, dampingRatio: 0.1), from: 0, to: 500, velocity: 2000), 0.001),
        ]
        for (spring, delta) in usual {
            let budget = SpringSettling.Budget(checks: 1_000)
            let rest = try SpringSettling.Budget.withCurrent(budget) { try SpringSettling.settle([spring], restDelta: delta, restSpeed: delta) }
            XCTAssertEqual(rest, SpringSettling.restTime([spring], restDelta: delta, restSpeed: delta))
            XCTAssertGreaterThan(budget.used, 0)
            XCTAssertLessThanOrEqual(budget.used, 200, "\(spring.parameters)")
            XCTAssertFalse(budget.isExhausted)
        }

        // One budget for every settle of a computation: what one takes, the next does not have.
        let shared = SpringSettling.Budget(checks: 50_000)
        try SpringSettling.Budget.withCurrent(shared) {
            XCTAssertNotNil(try? SpringSettling.settle([usual[0].0], restDelta: 0.01, restSpeed: 0.01))
            let afterOne = shared.used
            XCTAssertThrowsError(try SpringSettling.settle([aliasing], restDelta: band, restSpeed: 1e6)) { error in
                XCTAssertEqual(error as? SpringSettling.Failure, .tooMuchWork(checks: 50_000, spentBefore: afterOne))
                XCTAssertFalse((error as? SpringSettling.Failure)?.message.contains("before this one") ?? true, "it took the checks itself")
            }
            XCTAssertTrue(shared.isExhausted)
            XCTAssertGreaterThan(afterOne, 0)
            // Spent: even a usual spring is refused now, and its message says who spent them.
            XCTAssertThrowsError(try SpringSettling.settle([usual[1].0], restDelta: 0.01, restSpeed: 0.01)) { error in
                XCTAssertEqual(error as? SpringSettling.Failure, .tooMuchWork(checks: 50_000, spentBefore: 50_000))
                XCTAssertTrue((error as? SpringSettling.Failure)?.message.contains("; the springs settled before this one took 50000 of them (") ?? false)
            }
        }

        // A cancellable settle looks for its cancellation within the walk, not only between
        // springs: it stops at the first charge, before the budget is touched.
        let cancellation = Cancellation()
        cancellation.cancel()
        let untouched = SpringSettling.Budget(checks: SpringSettling.maxChecks)
        try Cancellation.withCurrent(cancellation) {
            try SpringSettling.Budget.withCurrent(untouched) {
                XCTAssertThrowsError(try SpringSettling.settle([aliasing], restDelta: band, restSpeed: 1e6, cancellable: true)) { error in
                    XCTAssertEqual(error as? SpringSettling.Failure, .cancelled)
                }
            }
        }
        XCTAssertEqual(untouched.used, 0)
    }

    func testFirstCrossing() throws {
        struct Case { var name: String; var parameters: SpringParameters; var a: Double; var b: Double; var v0: Double }
        let crossing: [Case] = [
            Case(name: "under", parameters: .response(1, dampingRatio: 0.5), a: 0, b: 10, v0: 0),
            Case(name: "under away first", parameters: .response(1, dampingRatio: 0.5), a: 0, b: 10, v0: -80),
            Case(name: "under from the target", parameters: .response(0.7, dampingRatio: 0.3), a: 5, b: 5, v0: 20),
            Case(name: "critical thrown through", parameters: .stiffness(100, damping: 20), a: 0, b: 10, v0: 300),
            Case(name: "over thrown through", parameters: .stiffness(100, damping: 50), a: 10, b: 0, v0: -800),
        ]
        for c in crossing {
            let spring = SpringKernel(parameters: c.parameters, from: c.a, to: c.b, velocity: c.v0)
            let found = try XCTUnwrap(spring.firstCrossing(), c.name)
            let (m, k, d) = (c.parameters.mass, c.parameters.stiffness, c.parameters.damping)
            let y = { (t: Double) in self.springDisplacement(m: m, k: k, c: d, y0: c.a - c.b, v0: c.v0, t: t) }
            // Starting on the target, skip the root at 0 itself.
            let start = c.a == c.b ? 1e-3 : 0
            let oracle = try XCTUnwrap(bisectionOracle(after: start, until: 20, y), c.name)
            XCTAssertEqual(found, oracle, accuracy: 1e-9, c.name)
            XCTAssertEqual(spring.value(at: found), c.b, accuracy: 1e-6, c.name)
        }
        let never: [Case] = [
            Case(name: "critical from one side", parameters: .stiffness(100, damping: 20), a: 0, b: 10, v0: 0),
            Case(name: "over from one side", parameters: .stiffness(100, damping: 50), a: 0, b: 10, v0: 5),
            // ζ 2.5, ω0 10: crossing needs v0 < r2·y0 ≈ −479.1.
            Case(name: "over thrown toward, not enough", parameters: .stiffness(100, damping: 50), a: 10, b: 0, v0: -400),
            Case(name: "over thrown away", parameters: .stiffness(100, damping: 50), a: 0, b: 10, v0: -100),
            Case(name: "at rest on the target", parameters: .response(1, dampingRatio: 0.5), a: 3, b: 3, v0: 0),
            Case(name: "critical from the target", parameters: .stiffness(100, damping: 20), a: 3, b: 3, v0: 10),
        ]
        for c in never {
            let spring = SpringKernel(parameters: c.parameters, from: c.a, to: c.b, velocity: c.v0)
            XCTAssertNil(spring.firstCrossing(), c.name)
            let (m, k, d) = (c.parameters.mass, c.parameters.stiffness, c.parameters.damping)
            let y = { (t: Double) in self.springDisplacement(m: m, k: k, c: d, y0: c.a - c.b, v0: c.v0, t: t) }
            if c.a != c.b { XCTAssertNil(bisectionOracle(after: 0, until: 20, y), c.name) }
        }
        // The reference under-damped case crosses at (φ + π/2)/ωd.
        let spring = SpringKernel(parameters: .response(1, dampingRatio: 0.8), from: 0, to: 10, velocity: 0)
        let wd = 2 * Double.pi * 0.6
        let phi = atan2(-10 * 0.8 * 2 * Double.pi / wd, -10.0)
        XCTAssertEqual(spring.firstCrossing()!, (phi + Double.pi / 2 + Double.pi) / wd, accuracy: 1e-9)
    }

    // MARK: - Decay

    func testDecayReferences() {
        let decay = DecayKernel(from: 0, velocity: 2000)
        XCTAssertEqual(decay.restingPoint, 999.0)
        XCTAssertEqual(decay.value(at: decay.restTime), 999.0)
        XCTAssertEqual(decay.value(at: 1000), 999.0)
        XCTAssertEqual(decay.kappa, 1000 * log(0.998), accuracy: 1e-12)
        // The velocity was adjusted so that the curve itself heads exactly there.
        XCTAssertEqual(decay.law.restingPoint, 999.0, accuracy: 1e-9)
        XCTAssertEqual(decay.initialVelocity, 999.0 * 1000 * -log(0.998), accuracy: 1e-9)
        XCTAssertNotEqual(decay.initialVelocity, 2000)

        let one = DecayKernel(from: 0, velocity: 200, roundingFactor: 1)
        XCTAssertEqual(one.restingPoint, 100)
        XCTAssertEqual(one.value(at: 60), 100)

        let third = DecayKernel(from: 0, velocity: 200.9, roundingFactor: 1.0 / 3)
        XCTAssertEqual(third.restingPoint, 301 * (1.0 / 3))
        XCTAssertEqual(third.value(at: third.restTime + 1), 301 * (1.0 / 3))

        // Rounding off: the natural resting point x0 − v0/κ.
        let free = DecayKernel(from: 10, velocity: 200.9, roundingFactor: 0)
        XCTAssertEqual(free.restingPoint, 10 + 200.9 / (-1000 * log(0.998)), accuracy: 1e-12)
        XCTAssertEqual(free.initialVelocity, 200.9)

        // Halves away from zero.
        XCTAssertEqual(DecayKernel(from: 0.25, velocity: 0).restingPoint, 0.5)
        XCTAssertEqual(DecayKernel(from: -0.25, velocity: 0).restingPoint, -0.5)
        XCTAssertEqual(DecayKernel(from: 0, velocity: -2000).restingPoint, -999.0)
    }

    func testDecayCurveAndRest() {
        let decay = DecayKernel(from: 5, velocity: 400, decayConstant: 0.99, roundingFactor: 0, restVelocity: 0.5)
        let kappa = 1000 * log(0.99)
        for t in [0.0, 0.01, 0.1, 0.5] {
            XCTAssertEqual(decay.value(at: t), 5 + 400 * (exp(kappa * t) - 1) / kappa, accuracy: 1e-9)
            XCTAssertEqual(decay.velocity(at: t), 400 * exp(kappa * t), accuracy: 1e-9)
        }
        XCTAssertEqual(decay.restTime, log(400 / 0.5) / -kappa, accuracy: 1e-12)
        XCTAssertGreaterThanOrEqual(decay.velocity(at: decay.restTime - 1e-6), 0.5)
        XCTAssertEqual(decay.velocity(at: decay.restTime), 0)
        XCTAssertEqual(decay.value(at: decay.restTime), decay.restingPoint)

        // With `to`: the velocity that lands exactly there, no rounding.
        let landing = DecayKernel(from: 10, to: 110.3)
        XCTAssertEqual(landing.restingPoint, 110.3)
        XCTAssertEqual(landing.initialVelocity, (10 - 110.3) * 1000 * log(0.998), accuracy: 1e-9)
        XCTAssertEqual(landing.law.restingPoint, 110.3, accuracy: 1e-9)
        XCTAssertEqual(landing.value(at: landing.restTime), 110.3)
        XCTAssertLessThan(landing.value(at: landing.restTime / 2), 110.3)
    }

    // MARK: - Spring easing

    private func decodeEasing(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> (Easing?, [Problem]) {
        guard let json = try? JSONParser.parse(text) else {
            XCTFail("test JSON does not parse: \(text)", file: file, line: line)
            return (nil, [])
        }
        let diagnostics = Diagnostics()
        let easing = Easing.decode(json, at: "/motion/easing", diagnostics)
        return (easing, diagnostics.problems)
    }

    private func springCurve(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> SpringCurve? {
        let (easing, problems) = decodeEasing(text, file: file, line: line)
        XCTAssertEqual(problems, [], text, file: file, line: line)
        guard case .spring(let curve)? = easing else {
            XCTFail("\(text) is not a spring easing: \(String(describing: easing))", file: file, line: line)
            return nil
        }
        return curve
    }

    private func expectProblem(
        _ text: String, _ kind: Problem.Kind, at pointer: String, _ fragments: String...,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let (easing, problems) = decodeEasing(text, file: file, line: line)
        XCTAssertNil(easing, text, file: file, line: line)
        XCTAssertEqual(problems.count, 1, "\(text): \(problems)", file: file, line: line)
        guard let problem = problems.first else { return }
        XCTAssertEqual(problem.kind, kind, "\(text): \(problem)", file: file, line: line)
        XCTAssertEqual(problem.pointer, pointer, "\(text): \(problem)", file: file, line: line)
        for fragment in fragments {
            XCTAssertTrue(problem.message.contains(fragment), "\(text): '\(problem.message)' lacks '\(fragment)'", file: file, line: line)
        }
        XCTAssertEqual(DocumentError(problems).status, kind == .malformed ? 400 : 422, file: file, line: line)
    }

    func testSpringEasingShape() throws {
        let bouncy = try XCTUnwrap(springCurve(#"{"type":"spring","response":1,"dampingRatio":0.5}"#))
        let easing = Easing.spring(bouncy)
        XCTAssertEqual(easing(0), 0)
        XCTAssertEqual(easing(1), 1)
        // T is the settling time of the 0 → 1 spring with bands of 0.001.
        let reference = SpringKernel(parameters: .response(1, dampingRatio: 0.5), from: 0, to: 1, velocity: 0)
        XCTAssertEqual(bouncy.restTime, SpringSettling.restTime([reference], restDelta: 0.001, restSpeed: 0.001))
        XCTAssertEqual(Int((bouncy.restTime * 1000).rounded()), bruteForceRest([reference], restDelta: 0.001, restSpeed: 0.001, horizon: bouncy.restTime + 5))
        XCTAssertEqual(easing(0.25), reference.value(at: 0.25 * bouncy.restTime), accuracy: 1e-15)
        let samples = (0...1000).map { easing(Double($0) / 1000) }
        XCTAssertGreaterThan(samples.max()!, 1.1, "ζ 0.5 overshoots")

        for text in [#"{"type":"spring","response":1,"dampingRatio":1}"#, #"{"type":"spring","stiffness":100,"damping":50}"#,
                     #"{"type":"spring","duration":0.4}"#] {
            let curve = try XCTUnwrap(springCurve(text))
            XCTAssertEqual(curve(0), 0)
            XCTAssertEqual(curve(1), 1)
            var previous = 0.0
            for i in 1...1000 {
                let value = curve(Double(i) / 1000)
                XCTAssertGreaterThanOrEqual(value, previous, "\(text) is monotone at \(i)")
                XCTAssertLessThanOrEqual(value, 1, text)
                previous = value
            }
            XCTAssertGreaterThan(curve(0.5), 0.5, text)
        }

        // Initial velocity in distances per second, positive toward the target; custom bands.
        let thrown = try XCTUnwrap(springCurve(#"{"type":"spring","mass":1,"tension":300,"friction":20,"initialVelocity":5,"restDelta":0.01,"restSpeed":0.01}"#))
        XCTAssertEqual(thrown.initialVelocity, 5)
        XCTAssertEqual(thrown.restDelta, 0.01)
        let thrownKernel = SpringKernel(parameters: .mass(1, tension: 300, friction: 20), from: 0, to: 1, velocity: 5)
        XCTAssertEqual(thrown.restTime, SpringSettling.restTime([thrownKernel], restDelta: 0.01, restSpeed: 0.01))
        XCTAssertEqual(thrown(0.1), thrownKernel.value(at: 0.1 * thrown.restTime), accuracy: 1e-15)
        XCTAssertGreaterThan(thrown(0.05), springCurve(#"{"type":"spring","mass":1,"tension":300,"friction":20}"#)!(0.05))
    }

    func testSpringEasingDefaultsAndForms() throws {
        XCTAssertEqual(springCurve(#"{"type":"spring","response":0.5}"#)?.parameters, .response(0.5, dampingRatio: 1))
        XCTAssertEqual(springCurve(#"{"type":"spring","duration":0.5}"#)?.parameters, .duration(0.5, bounce: 0))
        XCTAssertEqual(springCurve(#"{"type":"spring","duration":0.5,"bounce":-0.5}"#)?.parameters.dampingRatio ?? 0, 2, accuracy: 1e-12)
        XCTAssertEqual(springCurve(#"{"type":"spring","stiffness":170,"damping":26}"#)?.parameters, SpringParameters(mass: 1, stiffness: 170, damping: 26))
        XCTAssertEqual(springCurve(#"{"type":"spring","stiffness":170,"damping":26,"mass":2}"#)?.parameters.mass, 2)
        XCTAssertEqual(springCurve(#"{"type":"spring","mass":2,"tension":170,"friction":26}"#)?.parameters, SpringParameters(mass: 2, stiffness: 170, damping: 26))
    }

    func testSpringEasingDecodingErrors() {
        let p = "/motion/easing"
        expectProblem(#"{"type":"spring","response":1,"stiffness":100,"damping":10}"#, .invalid, at: "\(p)/stiffness",
                      "{response, dampingRatio}", "{stiffness, damping, mass?}", "exactly one")
        expectProblem(#"{"type":"spring","duration":1,"tension":100,"friction":10,"mass":1}"#, .invalid, at: "\(p)/tension",
                      "{duration, bounce}", "{mass, tension, friction}")
        expectProblem(#"{"type":"spring","response":1,"wobble":1}"#, .malformed, at: "\(p)/wobble", "unknown field 'wobble'")
        expectProblem(#"{"type":"spring"}"#, .malformed, at: p, "needs spring parameters")
        expectProblem(#"{"type":"spring","mass":1}"#, .malformed, at: p, "mass alone")
        expectProblem(#"{"type":"spring","stiffness":100}"#, .malformed, at: "\(p)/damping", "is required")
        expectProblem(#"{"type":"spring","dampingRatio":0.5}"#, .malformed, at: "\(p)/response", "is required")
        expectProblem(#"{"type":"spring","tension":100,"friction":10}"#, .malformed, at: "\(p)/mass", "is required")
        expectProblem(#"{"type":"spring","response":"1"}"#, .malformed, at: "\(p)/response", "must be a number")
        expectProblem(#"{"type":"spring","response":1,"initialVelocity":true}"#, .malformed, at: "\(p)/initialVelocity", "must be a number")
        expectProblem(#"{"type":"spring","response":0}"#, .invalid, at: "\(p)/response", "must be positive")
        expectProblem(#"{"type":"spring","response":1,"dampingRatio":0}"#, .invalid, at: "\(p)/dampingRatio", "never comes to rest")
        expectProblem(#"{"type":"spring","response":1,"dampingRatio":-1}"#, .invalid, at: "\(p)/dampingRatio", "must be positive")
        expectProblem(#"{"type":"spring","stiffness":-5,"damping":1}"#, .invalid, at: "\(p)/stiffness", "must be positive")
        expectProblem(#"{"type":"spring","stiffness":5,"damping":-1}"#, .invalid, at: "\(p)/damping", "must not be negative")
        expectProblem(#"{"type":"spring","stiffness":5,"damping":1,"mass":0}"#, .invalid, at: "\(p)/mass", "must be positive")
        expectProblem(#"{"type":"spring","duration":0.5,"bounce":1}"#, .invalid, at: "\(p)/bounce", "less than 1")
        expectProblem(#"{"type":"spring","duration":0.5,"bounce":-1}"#, .invalid, at: "\(p)/bounce", "greater than -1")
        expectProblem(#"{"type":"spring","duration":-2}"#, .invalid, at: "\(p)/duration", "must be positive")
        expectProblem(#"{"type":"spring","mass":0,"tension":100,"friction":10}"#, .invalid, at: "\(p)/mass", "must be positive")
        expectProblem(#"{"type":"spring","response":1,"mass":2}"#, .invalid, at: "\(p)/mass", "does not belong")
        expectProblem(#"{"type":"spring","response":1,"restDelta":0}"#, .invalid, at: "\(p)/restDelta", "must be positive")
        // Undamped through the stiffness form: decodes as parameters, but never rests.
        expectProblem(#"{"type":"spring","stiffness":100,"damping":0}"#, .invalid, at: p, "never comes to rest")
        // Rests only after the settling limit.
        expectProblem(#"{"type":"spring","response":1000,"dampingRatio":0.001}"#, .invalid, at: p, "more than 3600 s")
        // At rest from the start: nothing to draw.
        expectProblem(#"{"type":"spring","response":1,"restDelta":2,"restSpeed":100}"#, .invalid, at: p, "at rest from the start")
        // Overflowing constants: at the form's first field, not the object.
        expectProblem(#"{"type":"spring","response":1e-300}"#, .invalid, at: "\(p)/response", "out of range")
    }

    func testSpringParameterDecoderLeavesOtherFormsToTheCaller() throws {
        // A node that only accepts {mass, tension, friction} keeps its own `duration`.
        let json = try JSONParser.parse(#"{"mass":1,"tension":200,"friction":10,"duration":3}"#)
        guard case .object(let object) = json else { return XCTFail() }
        let diagnostics = Diagnostics()
        let reader = ObjectReader(object, at: "/specs/a/curve", diagnostics)
        let parameters = SpringParameters.decode(from: reader, diagnostics, allowed: [.tension])
        XCTAssertEqual(parameters, SpringParameters(mass: 1, stiffness: 200, damping: 10))
        XCTAssertEqual(diagnostics.problems, [])
        reader.finish()
        XCTAssertEqual(diagnostics.problems.map(\.pointer), ["/specs/a/curve/duration"])

        // Not required and absent: nil without a problem.
        let empty = Diagnostics()
        let none = SpringParameters.decode(from: ObjectReader(JSONObject(), at: "/x", empty), empty, required: false)
        XCTAssertNil(none)
        XCTAssertEqual(empty.problems, [])
    }

    func testSpringEasingThroughATween() throws {
        let timeline = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":2,"easing":{"type":"spring","response":1,"dampingRatio":0.8},"properties":[{"path":"x","to":10}]}}"#)
        let values = timeline.values(of: "x")
        let curve = try SpringCurve(parameters: .response(1, dampingRatio: 0.8))
        XCTAssertEqual(values.count, 21)
        XCTAssertEqual(values.first, 0)
        XCTAssertEqual(values.last, 10)
        XCTAssertEqual(values[5], 10 * curve(0.25), accuracy: 1e-12)
        XCTAssertEqual(values[10], 10 * curve(0.5), accuracy: 1e-12)
    }
}
