import XCTest
@testable import MotionEngine

final class MotionSpecTests: XCTestCase {
    let specs = #""specs":{"fullscreen":{"expansion":{"contentFade":{"delay":0.25,"duration":0.5,"curve":{"type":"bezier","controlPoints":[0,0,1,1]}}}}}"#

    func testNamedSpecSetsDelayDurationAndCurve() throws {
        let timeline = try compile(#"{"fps":4,"target":{"o":0},\#(specs),"motion":{"type":"tween","timing":"fullscreen.expansion.contentFade","properties":[{"path":"o","to":1}]}}"#)
        XCTAssertEqual(timeline.duration, 0.75)
        XCTAssertEqual(timeline.values(of: "o"), [0, 0, 0.5, 1])
        XCTAssertEqual(timeline.eventSummary, ["started@0.25", "completed@0.75"])
    }

    func testInlineBezierSpec() throws {
        let timeline = try compile(#"{"fps":2,"target":{"o":0},"motion":{"type":"tween","timing":{"duration":1,"curve":{"type":"bezier","controlPoints":[0.42,0,0.58,1]}},"properties":[{"path":"o","to":100}]}}"#)
        // ease-in-out is symmetric: exactly half way at u = 0.5.
        XCTAssertEqual(timeline.values(of: "o")[1], 50, accuracy: 1e-6)
    }

    func testInstantIgnoresDelayAndDuration() throws {
        let timeline = try compile(#"{"target":{"o":0},"motion":{"type":"tween","timing":{"delay":5,"duration":3,"curve":{"type":"instant"}},"properties":[{"path":"o","to":1}]}}"#)
        XCTAssertEqual(timeline.duration, 0)
        XCTAssertEqual(timeline.values(of: "o"), [1])
    }

    func testSpringCurveRunsForItsRestTime() throws {
        let timeline = try compile(#"{"fps":60,"target":{"o":0},"motion":{"type":"tween","timing":{"curve":{"type":"spring","mass":1,"tension":100,"friction":10}},"properties":[{"path":"o","to":10}]}}"#)
        let spring = try SpringCurve(parameters: .mass(1, tension: 100, friction: 10))
        XCTAssertEqual(timeline.duration, spring.restTime)
        XCTAssertGreaterThan(timeline.duration ?? 0, 0.5)
        XCTAssertEqual(timeline.values(of: "o").last, 10)
        // Under-damped (ζ = 0.5): it overshoots the target on the way.
        XCTAssertGreaterThan(timeline.values(of: "o").max() ?? 0, 10)
    }

    func testFractionalCountEndsPartWay() throws {
        // 1.5 plays of a 1 s reversing cycle (2 s): forward, back, forward half way.
        let timeline = try compile(#"{"fps":2,"target":{"o":0},"motion":{"type":"tween","timing":{"duration":1,"repetition":{"type":"count","amount":1.5,"autoreverses":true}},"properties":[{"path":"o","to":10}]}}"#)
        XCTAssertEqual(timeline.duration, 3)
        XCTAssertEqual(timeline.values(of: "o"), [0, 5, 10, 5, 0, 5, 10])
        XCTAssertEqual(timeline.eventSummary, ["started@0", "reversed@1", "repeated@2", "completed@3"])
    }

    func testCountOfTwoIsTwoPlays() throws {
        let timeline = try compile(#"{"fps":1,"target":{"o":0},"motion":{"type":"tween","timing":{"duration":1,"repetition":{"type":"count","amount":2}},"properties":[{"path":"o","to":10}]}}"#)
        XCTAssertEqual(timeline.duration, 2)
        XCTAssertEqual(timeline.eventSummary, ["started@0", "repeated@1", "completed@2"])
    }

    func testDurationRepetitionCyclesUntilTimeIsUp() throws {
        let timeline = try compile(#"{"fps":4,"target":{"o":0},"motion":{"type":"tween","timing":{"duration":1,"repetition":{"type":"duration","amount":2.5}},"properties":[{"path":"o","to":4}]}}"#)
        XCTAssertEqual(timeline.duration, 2.5)
        XCTAssertEqual(timeline.values(of: "o").last, 2)
        XCTAssertEqual(timeline.eventSummary, ["started@0", "repeated@1", "repeated@2", "completed@2.5"])
    }

    func testTimingWithTheFieldsItReplacesIsRejected() {
        let error = problems(#"{"target":{"o":0},"motion":{"type":"tween","duration":1,"easing":"linear","timing":{"duration":1},"properties":[{"path":"o","to":1}]}}"#)
        XCTAssertEqual(error.status, 422)
        XCTAssertEqual(error.problems.first?.pointer, "/motion/timing")
        XCTAssertTrue(error.problems.first?.message.contains("'duration', 'easing'") ?? false, "\(error.problems)")
    }

    func testUnknownSpecNameAndBadSpecs() {
        let unknown = problems(#"{"target":{"o":0},\#(specs),"motion":{"type":"tween","timing":"fullscreen.collapse","properties":[{"path":"o","to":1}]}}"#)
        XCTAssertEqual(unknown.problems.first?.pointer, "/motion/timing")
        XCTAssertTrue(unknown.problems.first?.message.contains("fullscreen.collapse") ?? false)

        let group = problems(#"{"target":{"o":0},\#(specs),"motion":{"type":"tween","timing":"fullscreen.expansion","properties":[{"path":"o","to":1}]}}"#)
        XCTAssertTrue(group.problems.first?.message.contains("not a spec") ?? false)

        let inSpecs = problems(#"{"target":{"o":0},"specs":{"s":{"duration":1,"curve":{"type":"bezier","controlPoints":[2,0,1,1]}}},"motion":{"type":"tween","timing":"s","properties":[{"path":"o","to":1}]}}"#)
        XCTAssertEqual(inSpecs.problems.first?.pointer, "/specs/s/curve/controlPoints/0")

        let onGroup = problems(#"{"target":{"o":0},"motion":{"type":"group","timing":{"duration":1},"children":[{"type":"tween","duration":1,"properties":[{"path":"o","to":1}]}]}}"#)
        XCTAssertEqual(onGroup.problems.first?.pointer, "/motion/timing")
    }
}
