import Foundation
import XCTest
@testable import MotionEngine

/// The five places where the engine departed from its documented semantics (issue 12, point 1): each test
/// states the contract's value and failed before its fix.
final class ContractDeviationTests: XCTestCase {
    // MARK: linear() whose last stop is not 1 (docs/easings.md)

    func testLinearEasingEndingOffOneEndsOnItsCSSValue() throws {
        // linear(1, 0): E(0) = 1, E(½) = ½, E(1) = 0, so 0 → 100 runs 100, 50 and ends on 0.
        let down = try compile(#"{"fps":2,"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":"linear(1, 0)","properties":[{"path":"x","to":100}]}}"#)
        XCTAssertEqual(down.values(of: "x"), [100, 50, 0])
        XCTAssertEqual(down.document(at: 1)["x"], .number(0))
        XCTAssertEqual(down.document(at: 5)["x"], .number(0), "the leg holds a + (b−a)·E(1)")

        // linear(0 20%, 1 80%): the points (0.2, 0) and (0.8, 1) extended past both ends:
        // E(0) = −1/3, E(1) = 4/3.
        let wide = try compile(#"{"fps":1,"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":"linear(0 20%, 1 80%)","properties":[{"path":"x","to":60}]}}"#)
        let values = wide.values(of: "x")
        XCTAssertEqual(values.count, 2)
        XCTAssertEqual(values[0], -20, accuracy: 1e-12)
        XCTAssertEqual(values[1], 80, accuracy: 1e-12)
    }

    func testLinearEasingEndValueWithReverseAndRepeat() throws {
        // Forward with linear(1, 0) ends on 0; the reverse leg (same easing) runs
        // b + (a−b)·E'(u) = 100 + (0 − 100)·E'(u): 0 at u = 0, 50 at ½, 100 at the end.
        let timeline = try compile(#"{"fps":2,"target":{"x":0},"motion":{"type":"tween","duration":1,"reverses":true,"easing":"linear(1, 0)","properties":[{"path":"x","to":100}]}}"#)
        XCTAssertEqual(timeline.values(of: "x"), [100, 50, 0, 50, 100])
    }

    // MARK: Undamped springs (docs/nodes.md)

    func testUndampedSpringByDampingRatioIsComputedWithAWindow() throws {
        // response 1, ζ = 0: ω0 = 2π, x = 1 − cos(2πt); it never rests.
        let timeline = try compile(#"{"fps":8,"window":{"start":0,"end":3},"target":{"x":0},"motion":{"type":"spring","response":1,"dampingRatio":0,"properties":[{"path":"x","to":1}]}}"#)
        XCTAssertNil(timeline.duration)
        let values = timeline.values(of: "x")
        XCTAssertEqual(values.count, 25)
        for (frame, value) in values.enumerated() {
            let t = Double(frame) / 8
            XCTAssertEqual(value, 1 - cos(2 * Double.pi * t), accuracy: 1e-9, "t = \(t)")
        }
        XCTAssertFalse(timeline.events.contains { $0.kind == .completed })
    }

    func testUndampedSpringWithoutAWindowSaysItNeedsOne() {
        for parameters in [#""response":1,"dampingRatio":0"#, #""stiffness":100,"damping":0"#] {
            let error = problems(#"{"target":{"x":0},"motion":{"type":"spring",\#(parameters),"properties":[{"path":"x","to":1}]}}"#)
            XCTAssertEqual(error.problems.count, 1)
            XCTAssertEqual(error.problems.first?.pointer, "/window")
            XCTAssertEqual(error.problems.first?.kind, .invalid)
            let message = error.problems.first?.message ?? ""
            XCTAssertTrue(message.contains("window") && message.contains("undamped"), message)
        }
    }

    // MARK: motion-interchange spring curves (docs/values.md)

    /// The rest time of a spring node on 0 → distance with the node defaults.
    private func nodeRestTime(_ parameters: SpringParameters, distance: Double, velocity: Double) throws -> Double {
        let kernel = SpringKernel(parameters: parameters, from: 0, to: distance, velocity: velocity)
        return try SpringSettling.settle([kernel], restDelta: 0.01, restSpeed: 0.01)
    }

    func testSpringCurveDurationIsTheNodeRestTimeInPropertyUnits() throws {
        let parameters = SpringParameters.mass(1, tension: 100, friction: 10)
        for (distance, velocity) in [(10.0, 0.0), (500.0, 0.0), (10.0, 2.0), (500.0, -1.5)] {
            let timeline = try compile(#"{"fps":60,"target":{"o":0},"motion":{"type":"tween","timing":{"curve":{"type":"spring","mass":1,"tension":100,"friction":10,"initialVelocity":\#(velocity)}},"properties":[{"path":"o","to":\#(distance)}]}}"#)
            // v0 = initialVelocity × (to − from).
            let expected = try nodeRestTime(parameters, distance: distance, velocity: velocity * distance)
            XCTAssertEqual(timeline.duration, expected, "distance \(distance), initialVelocity \(velocity)")
            // The values are the spring node's: the spring from 0 to the distance.
            let kernel = SpringKernel(parameters: parameters, from: 0, to: distance, velocity: velocity * distance)
            let values = timeline.values(of: "o")
            for frame in [1, 10, 30] where Double(frame) / 60 < expected {
                XCTAssertEqual(values[frame], kernel.value(at: Double(frame) / 60), accuracy: 1e-9 * distance)
            }
            XCTAssertEqual(values.last, distance)
        }
        // Farther moves take longer to come within 0.01 units.
        let near = try nodeRestTime(parameters, distance: 10, velocity: 0)
        let far = try nodeRestTime(parameters, distance: 500, velocity: 0)
        XCTAssertGreaterThan(far, near)
    }

    func testSpringCurveWithPropertiesOfDifferentDistances() throws {
        // Each property runs for its own rest time; the tween ends with the slowest.
        let parameters = SpringParameters.mass(1, tension: 200, friction: 12)
        let timeline = try compile(#"{"fps":60,"target":{"a":0,"b":0},"motion":{"type":"tween","id":"t","timing":{"curve":{"type":"spring","mass":1,"tension":200,"friction":12}},"properties":[{"path":"a","to":1},{"path":"b","to":1000}]}}"#)
        let near = try nodeRestTime(parameters, distance: 1, velocity: 0)
        let far = try nodeRestTime(parameters, distance: 1000, velocity: 0)
        XCTAssertEqual(timeline.duration, far)
        XCTAssertEqual(timeline.events.last?.time, far)
        let a = timeline.tracks.first { $0.path == "a" }!
        XCTAssertEqual(a.value(at: near), 1)
        XCTAssertNotEqual(a.value(at: near - 0.01), 1)
    }

    // MARK: Contiguous sequences (docs/timing-and-events.md)

    func testContiguousSequenceEmitsNoSteppedAtItsTurn() throws {
        let timeline = try compile(#"""
        {"fps":1,"target":{"x":0},"motion":{"type":"sequence","id":"s","reverses":true,"reversingMode":"contiguous","steps":[
          {"type":"tween","id":"a","duration":1,"properties":[{"path":"x","to":1}]},
          {"type":"tween","id":"b","duration":1,"properties":[{"path":"x","to":2}]}]}}
        """#)
        let stepped = timeline.events.filter { $0.kind == .stepped }.map { "\($0.step!)@\(format($0.time))" }
        // Out: a → b at 1. Back: b's reverse leg ends at 3 and hands off to a. Nothing at the turn (2).
        XCTAssertEqual(stepped, ["1@1", "0@3"])
        XCTAssertEqual(timeline.events.filter { $0.time == 2 }.map { "\($0.motion):\($0.kind.rawValue)" }, ["s:reversed", "b:reversed"])
    }

    // MARK: Events at one instant (docs/timing-and-events.md)

    private func summary(_ timeline: Timeline, at time: Double) -> [String] {
        timeline.events.filter { abs($0.time - time) < 1e-9 }.map { "\($0.motion):\($0.kind.rawValue)" }
    }

    func testUnrelatedEventsAtOneInstantFollowDocumentOrder() throws {
        // At t = 1: a completes, so s steps and b starts (one causal chain); u, a later
        // sibling, reverses at the same instant with no link to that chain, so it comes after.
        let later = try compile(#"""
        {"fps":1,"target":{"x":0,"y":0},"motion":{"type":"group","id":"g","children":[
          {"type":"sequence","id":"s","steps":[
            {"type":"tween","id":"a","duration":1,"properties":[{"path":"x","to":1}]},
            {"type":"tween","id":"b","duration":1,"properties":[{"path":"x","to":2}]}]},
          {"type":"tween","id":"u","duration":1,"reverses":true,"properties":[{"path":"y","to":1}]}]}}
        """#)
        XCTAssertEqual(summary(later, at: 1), ["a:completed", "s:stepped", "b:started", "u:reversed"])
        XCTAssertEqual(summary(later, at: 2), ["b:completed", "s:completed", "u:completed", "g:completed"])

        // The same with u first in the document: its reversed comes first.
        let earlier = try compile(#"""
        {"fps":1,"target":{"x":0,"y":0},"motion":{"type":"group","id":"g","children":[
          {"type":"tween","id":"u","duration":1,"reverses":true,"properties":[{"path":"y","to":1}]},
          {"type":"sequence","id":"s","steps":[
            {"type":"tween","id":"a","duration":1,"properties":[{"path":"x","to":1}]},
            {"type":"tween","id":"b","duration":1,"properties":[{"path":"x","to":2}]}]}]}}
        """#)
        XCTAssertEqual(summary(earlier, at: 1), ["u:reversed", "a:completed", "s:stepped", "b:started"])
        XCTAssertEqual(summary(earlier, at: 2), ["u:completed", "b:completed", "s:completed", "g:completed"])
    }

    func testRepeatsAtOneInstantFollowDocumentOrder() throws {
        // Two tweens repeating every second beside a sequence whose step hands off at 1:
        // p (before the sequence) repeats before the chain, q (after it) after it.
        let timeline = try compile(#"""
        {"fps":1,"target":{"x":0,"y":0,"z":0},"motion":{"type":"group","children":[
          {"type":"tween","id":"p","duration":1,"repeat":1,"properties":[{"path":"y","to":1}]},
          {"type":"sequence","id":"s","steps":[
            {"type":"tween","id":"a","duration":1,"properties":[{"path":"x","to":1}]},
            {"type":"tween","id":"b","duration":1,"properties":[{"path":"x","to":2}]}]},
          {"type":"tween","id":"q","duration":1,"repeat":1,"properties":[{"path":"z","to":1}]}]}}
        """#)
        XCTAssertEqual(summary(timeline, at: 1), ["p:repeated", "a:completed", "s:stepped", "b:started", "q:repeated"])
    }
}
