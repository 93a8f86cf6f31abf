import Foundation
import XCTest
@testable import MotionEngine

/// `physics`, `spring` and `decay` nodes through the whole compiler (docs/README.md–3.4).
final class DynamicsTimelineTests: XCTestCase {
    // MARK: Spring

    func testSpringReferenceValues() throws {
        let under = try compile(#"{"fps":2,"target":{"x":0},"motion":{"type":"spring","response":1,"dampingRatio":0.8,"properties":[{"path":"x","to":10}]}}"#)
        XCTAssertEqual(under.values(of: "x")[1], 9.2231, accuracy: 5e-5)
        let critical = try compile(#"{"fps":2,"target":{"x":0},"motion":{"type":"spring","response":1,"dampingRatio":1,"properties":[{"path":"x","to":10}]}}"#)
        XCTAssertEqual(critical.values(of: "x")[1], 8.2103, accuracy: 5e-5)
    }

    func testSpringDurationIsTheRestTimeAndEndsExactly() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"spring","response":0.5,"dampingRatio":0.7,"properties":[{"path":"x","to":100}]}}"#)
        let kernel = SpringKernel(parameters: .response(0.5, dampingRatio: 0.7), from: 0, to: 100, velocity: 0)
        let rest = try SpringSettling.settle([kernel], restDelta: 0.01, restSpeed: 0.01)
        XCTAssertEqual(timeline.duration, rest)
        XCTAssertEqual((rest * 1000).rounded(), rest * 1000, accuracy: 1e-6, "a multiple of 1 ms")
        XCTAssertEqual(timeline.values(of: "x").last, 100)
        XCTAssertEqual(timeline.tracks[0].value(at: rest), 100, "exactly the target from the rest time on")
        XCTAssertNotEqual(timeline.tracks[0].value(at: rest - 0.001), 100)
        XCTAssertEqual(timeline.eventSummary, ["started@0", "completed@\(format(rest))"])
    }

    func testSpringResultsDoNotDependOnFPS() throws {
        let doc = { (fps: Int) in #"{"fps":\#(fps),"target":{"x":0},"motion":{"type":"spring","stiffness":170,"damping":26,"properties":[{"path":"x","to":1}]}}"# }
        let slow = try compile(doc(10)), fast = try compile(doc(100))
        XCTAssertEqual(slow.duration, fast.duration)
        XCTAssertEqual(slow.tracks[0].value(at: 0.3), fast.tracks[0].value(at: 0.3))
        XCTAssertEqual(slow.values(of: "x")[3], fast.values(of: "x")[30])
    }

    func testCompositeSpringSettlesAtOneCommonTime() throws {
        let timeline = try compile(#"""
        {"fps":60,"target":{"frame":{"x":0,"y":0,"width":10,"height":10}},
         "motion":{"type":"spring","response":0.4,"dampingRatio":0.9,"properties":[{"path":"frame","to":{"x":100,"y":1,"width":10,"height":20}}]}}
        """#)
        XCTAssertEqual(timeline.tracks.map(\.path), ["frame.x", "frame.y", "frame.height"])
        let rest = try XCTUnwrap(timeline.duration)
        // y moves 1 unit and would settle much earlier alone; it holds its own spring until the common time.
        let yAlone = try SpringSettling.settle([SpringKernel(parameters: .response(0.4, dampingRatio: 0.9), from: 0, to: 1, velocity: 0)], restDelta: 0.01, restSpeed: 0.01)
        XCTAssertLessThan(yAlone, rest)
        for track in timeline.tracks { XCTAssertEqual(track.value(at: rest), track.path == "frame.y" ? 1 : track.path == "frame.x" ? 100 : 20) }
    }

    func testSpringColourSpringsPerChannel() throws {
        let timeline = try compile(##"{"fps":30,"output":{"layout":"frames"},"target":{"tint":"#000000"},"motion":{"type":"spring","response":0.3,"dampingRatio":1,"properties":[{"path":"tint","to":"#ffffff"}]}}"##)
        XCTAssertEqual(timeline.tracks.map(\.path), ["tint.red", "tint.green", "tint.blue"])
        XCTAssertEqual(timeline.document(at: timeline.duration!)["tint"], .string("#ffffffff"))
    }

    func testVelocityPerPropertyWinsOverTheNode() throws {
        let timeline = try compile(#"""
        {"fps":10,"target":{"a":0,"b":0},"motion":{"type":"spring","response":1,"dampingRatio":1,"velocity":50,
         "properties":[{"path":"a","to":0},{"path":"b","to":0,"velocity":-50}]}}
        """#)
        XCTAssertGreaterThan(timeline.values(of: "a")[1], 0)
        XCTAssertLessThan(timeline.values(of: "b")[1], 0)
        XCTAssertEqual(timeline.values(of: "a")[1], -timeline.values(of: "b")[1], accuracy: 1e-12)
    }

    func testStopAtTargetEndsAtTheFirstCrossing() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"spring","response":0.5,"dampingRatio":0.3,"stopAtTarget":true,"properties":[{"path":"x","to":10}]}}"#)
        let kernel = SpringKernel(parameters: .response(0.5, dampingRatio: 0.3), from: 0, to: 10, velocity: 0)
        let crossing = try XCTUnwrap(kernel.firstCrossing())
        XCTAssertEqual(try XCTUnwrap(timeline.duration), crossing, accuracy: 1e-9)
        XCTAssertLessThanOrEqual(timeline.values(of: "x").max()!, 10, "no overshoot is emitted")
        XCTAssertEqual(timeline.values(of: "x").last, 10)
    }

    func testClampClipsTheOutputOnly() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"spring","response":0.5,"dampingRatio":0.3,"clamp":[0,10],"properties":[{"path":"x","to":10}]}}"#)
        let unclamped = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"spring","response":0.5,"dampingRatio":0.3,"properties":[{"path":"x","to":10}]}}"#)
        XCTAssertEqual(timeline.duration, unclamped.duration, "the motion itself is unchanged")
        XCTAssertEqual(timeline.values(of: "x").max(), 10)
        XCTAssertGreaterThan(unclamped.values(of: "x").max()!, 10)
    }

    func testUndampedSpringNeedsAWindow() throws {
        let error = problems(#"{"target":{"x":0},"motion":{"type":"spring","stiffness":100,"damping":0,"properties":[{"path":"x","to":1}]}}"#)
        XCTAssertEqual(error.problems.first?.pointer, "/window")
        let timeline = try compile(#"{"fps":10,"window":{"start":0,"end":2},"target":{"x":0},"motion":{"type":"spring","stiffness":100,"damping":0,"properties":[{"path":"x","to":1}]}}"#)
        XCTAssertNil(timeline.duration)
        // x = 1 − cos(10 t): never rests.
        XCTAssertEqual(timeline.values(of: "x")[10], 1 - cos(10.0), accuracy: 1e-9)
    }

    func testSpringParameterisationsAgree() throws {
        // {mass, tension, friction} = {stiffness, damping, mass}.
        let a = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"spring","mass":2,"tension":300,"friction":20,"properties":[{"path":"x","to":1}]}}"#)
        let b = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"spring","stiffness":300,"damping":20,"mass":2,"properties":[{"path":"x","to":1}]}}"#)
        XCTAssertEqual(a.values(of: "x"), b.values(of: "x"))
        let twoForms = problems(#"{"target":{"x":0},"motion":{"type":"spring","response":1,"stiffness":10,"damping":1,"properties":[{"path":"x","to":1}]}}"#)
        XCTAssertEqual(twoForms.status, 422)
    }

    // MARK: Decay

    func testDecayReferenceRestingPoint() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"decay","velocity":2000,"properties":[{"path":"x"}]}}"#)
        XCTAssertEqual(timeline.values(of: "x").last, 999)
        XCTAssertEqual(timeline.document(at: timeline.duration!)["x"], .number(999))
    }

    func testDecayRoundingLandsExactly() throws {
        let whole = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"decay","velocity":200,"roundingFactor":1,"properties":[{"path":"x"}]}}"#)
        XCTAssertEqual(whole.values(of: "x").last, 100)
        let third = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"decay","velocity":200.9,"roundingFactor":0.3333333333333333,"properties":[{"path":"x"}]}}"#)
        XCTAssertEqual(third.values(of: "x").last!, 100.333333333333333, accuracy: 1e-9)
    }

    func testDecayToDerivesTheVelocity() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":10},"motion":{"type":"decay","properties":[{"path":"x","to":110}]}}"#)
        XCTAssertEqual(timeline.values(of: "x").last, 110)
        // v0 = (x0 − to)·κ with κ = 1000·ln(0.998).
        let kappa = 1000 * log(0.998)
        XCTAssertEqual((timeline.values(of: "x")[1] - 10) / (1.0 / 60), (10 - 110) * kappa, accuracy: 5)
    }

    func testDecayNeedsVelocityOrTo() {
        let error = problems(#"{"target":{"x":0},"motion":{"type":"decay","properties":[{"path":"x"}]}}"#)
        XCTAssertEqual(error.status, 400)
        XCTAssertEqual(error.problems.first?.pointer, "/motion/velocity")
    }

    // MARK: Physics

    func testPhysicsRestTimeIsTheDuration() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"physics","velocity":100,"friction":0.5,"properties":[{"path":"x"}]}}"#)
        let lambda = -log(0.5)
        let rest = log(100 / 0.95) / lambda
        XCTAssertEqual(try XCTUnwrap(timeline.duration), rest, accuracy: 1e-12)
        // x(τ) = v0(1 − e^(−λτ))/λ; it rests where it is, no snapping.
        XCTAssertEqual(timeline.values(of: "x").last!, 100 * (1 - exp(-lambda * rest)) / lambda, accuracy: 1e-9)
        XCTAssertEqual(timeline.tracks[0].value(at: 1), 100 * (1 - 0.5) / lambda, accuracy: 1e-9)
    }

    func testPhysicsResultsDoNotDependOnFPS() throws {
        let doc = { (fps: Int) in #"{"fps":\#(fps),"target":{"x":0},"motion":{"type":"physics","velocity":300,"friction":0.3,"collisions":true,"properties":[{"path":"x","from":0,"to":100}]}}"# }
        let a = try compile(doc(24)), b = try compile(doc(120))
        XCTAssertEqual(a.duration, b.duration)
        XCTAssertEqual(a.events.map(\.time), b.events.map(\.time))
    }

    func testCollisionsEmitCollidedAtExactContactTimesOnTheWall() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"physics","velocity":300,"friction":0.3,"restitution":0.5,"collisions":true,"properties":[{"path":"x","from":0,"to":100}]}}"#)
        let lambda = -log(0.7)
        let contact = -log(1 - lambda * 100 / 300) / lambda
        let collided = timeline.events.filter { $0.kind == .collided }
        XCTAssertFalse(collided.isEmpty)
        XCTAssertEqual(collided[0].time, contact, accuracy: 1e-12)
        XCTAssertEqual(timeline.tracks[0].value(at: collided[0].time), 100, "exactly on the wall at the reported contact time")
        XCTAssertEqual(timeline.events.first?.kind, .started)
        XCTAssertEqual(timeline.events.last?.kind, .completed)
        for value in timeline.values(of: "x") { XCTAssertTrue((0...100).contains(value)) }
    }

    func testPhysicsReversesFromTheRestPointWithNegatedVelocity() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"physics","velocity":100,"friction":0.5,"reverses":true,"properties":[{"path":"x"}]}}"#)
        let lambda = -log(0.5)
        let rest = log(100 / 0.95) / lambda
        let restValue = 100 * (1 - exp(-lambda * rest)) / lambda
        XCTAssertEqual(try XCTUnwrap(timeline.duration), 2 * rest, accuracy: 1e-9)
        XCTAssertEqual(timeline.values(of: "x").last!, restValue - restValue, accuracy: 1e-9, "the reverse leg travels the same distance back")
        XCTAssertEqual(timeline.eventSummary.map { String($0.prefix(while: { $0 != "@" })) }, ["started", "reversed", "completed"])
    }

    func testPhysicsRepeatStartsFromFrom() throws {
        let timeline = try compile(#"{"fps":10,"target":{"x":5},"motion":{"type":"physics","velocity":10,"friction":0.9,"repeat":1,"properties":[{"path":"x"}]}}"#)
        let half = try XCTUnwrap(timeline.duration) / 2
        XCTAssertEqual(timeline.tracks[0].value(at: half), 5, "the second cycle starts again from 5")
        XCTAssertEqual(timeline.events.filter { $0.kind == .repeated }.count, 1)
    }

    func testFrictionValidation() {
        for bad in ["0", "1.5", "-0.1"] {
            let error = problems(#"{"target":{"x":0},"motion":{"type":"physics","velocity":1,"friction":\#(bad),"properties":[{"path":"x"}]}}"#)
            XCTAssertEqual(error.status, 422, bad)
            XCTAssertEqual(error.problems.first?.pointer, "/motion/friction", bad)
        }
        let missing = problems(#"{"target":{"x":0},"motion":{"type":"physics","velocity":1,"properties":[{"path":"x"}]}}"#)
        XCTAssertEqual(missing.status, 400)
    }

    func testFrictionOneStopsAtOnce() throws {
        let timeline = try compile(#"{"target":{"x":3},"motion":{"type":"physics","velocity":100,"friction":1,"properties":[{"path":"x"}]}}"#)
        XCTAssertEqual(timeline.duration, 0)
        XCTAssertEqual(timeline.values(of: "x"), [3])
    }

    func testAdditivePhysicsAddsItsTravel() throws {
        let timeline = try compile(#"""
        {"fps":10,"target":{"x":0},"motion":{"type":"group","children":[
          {"type":"tween","duration":1,"properties":[{"path":"x","to":100}]},
          {"type":"physics","velocity":10,"friction":0.5,"additive":true,"properties":[{"path":"x"}]}]}}
        """#)
        let lambda = -log(0.5)
        XCTAssertEqual(timeline.tracks[0].value(at: 0.5), 50 + 10 * (1 - exp(-lambda * 0.5)) / lambda, accuracy: 1e-9)
    }

    func testDynamicsInSequencesAndReversingGroups() throws {
        let timeline = try compile(#"""
        {"fps":60,"target":{"x":0},"motion":{"type":"sequence","id":"s","reverses":true,"reversingMode":"contiguous","steps":[
          {"type":"spring","id":"k","response":0.3,"dampingRatio":1,"properties":[{"path":"x","to":10}]},
          {"type":"tween","id":"t","duration":0.5,"properties":[{"path":"x","to":20}]}]}}
        """#)
        XCTAssertEqual(timeline.values(of: "x").last, 0, "contiguous reversal brings the spring back too")
        let kEvents = timeline.events.filter { $0.motion == "k" }.map(\.kind)
        XCTAssertEqual(kEvents, [.started, .reversed, .completed])
    }
}
