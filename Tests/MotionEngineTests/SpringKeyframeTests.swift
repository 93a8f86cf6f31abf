import Foundation
import XCTest
@testable import MotionEngine

/// Spring keyframes (docs/authoring.md): successive targets carrying position and velocity.
final class SpringKeyframeTests: XCTestCase {
    let parameters = SpringParameters.response(0.5, dampingRatio: 0.5)

    private func springDocument(_ property: String, extra: String = "", target: String = #"{"x":0}"#) -> String {
        #"{"fps":60,"target":\#(target),"motion":{"type":"spring","response":0.5,"dampingRatio":0.5\#(extra),"properties":[\#(property)]}}"#
    }

    private func track(_ timeline: Timeline, _ path: String = "x") -> Track {
        timeline.tracks.first { $0.path == path }!
    }

    func testVelocityIsContinuousAtEveryTurn() throws {
        let timeline = try compile(springDocument(#"{"path":"x","keyframes":[0,100,20,60],"durations":[0.3,0.4,null]}"#))
        let x = track(timeline)
        let h = 1e-7
        for turn in [0.3, 0.7] {
            // Position: no jump.
            XCTAssertEqual(x.value(at: turn - h), x.value(at: turn), accuracy: 1e-3, "at \(turn)")
            // Velocity: one-sided difference quotients on both sides agree with each other and
            // with the analytic velocity of the segment that begins.
            let left = (x.value(at: turn - h) - x.value(at: turn - 2 * h)) / h
            let right = (x.value(at: turn + 2 * h) - x.value(at: turn + h)) / h
            XCTAssertEqual(left, right, accuracy: 1e-3 * max(1, abs(left)), "at \(turn)")
            XCTAssertEqual(x.velocity(at: turn), right, accuracy: 1e-3 * max(1, abs(right)), "at \(turn)")
            XCTAssertGreaterThan(abs(right), 1, "the spring is still moving at the turn")
        }
        XCTAssertEqual(timeline.values(of: "x").last, 60)
    }

    func testEqualsAChainOfRetargetsComputedByHand() throws {
        let timeline = try compile(springDocument(#"{"path":"x","keyframes":[0,100,20,60],"durations":[0.3,0.4]}"#))
        let x = track(timeline)
        // By hand: spring 0 → 100; at 0.3 s from where it is with its velocity toward 20; at
        // 0.7 s toward 60, resting with the node's defaults (0.01).
        let first = SpringKernel(parameters: parameters, from: 0, to: 100, velocity: 0)
        let second = SpringKernel(parameters: parameters, from: first.value(at: 0.3), to: 20, velocity: first.velocity(at: 0.3))
        let third = SpringKernel(parameters: parameters, from: second.value(at: 0.4), to: 60, velocity: second.velocity(at: 0.4))
        let rest = try SpringSettling.settle([third], restDelta: 0.01, restSpeed: 0.01)
        XCTAssertEqual(timeline.duration!, 0.7 + rest, accuracy: 1e-12)
        for t in stride(from: 0.0, through: 0.7 + rest + 0.1, by: 0.05) {
            let expected: Double
            if t < 0.3 { expected = first.value(at: t) } else if t < 0.7 { expected = second.value(at: t - 0.3) }
            else if t < 0.7 + rest - 1e-9 { expected = third.value(at: t - 0.7) } else { expected = 60 }
            XCTAssertEqual(x.value(at: t), expected, accuracy: 1e-9, "t = \(t)")
        }

        // The same through the session retarget: a plain spring to 100, retargeted to 20 at
        // 0.3 s and to 60 at 0.7 s with the node's spring.
        let plain = try compile(springDocument(#"{"path":"x","to":100}"#))
        let retargeted = try plain.retargeting("x", to: .number(20), at: 0.3, spring: parameters)
            .retargeting("x", to: .number(60), at: 0.7, spring: parameters)
        let other = retargeted.tracks.first { $0.path == "x" }!
        for t in stride(from: 0.0, through: 0.7 + rest + 0.1, by: 1.0 / 60) {
            XCTAssertEqual(x.value(at: t), other.value(at: t), accuracy: 1e-9, "t = \(t)")
        }
    }

    func testTurnsAtRestWithoutDurations() throws {
        let timeline = try compile(springDocument(#"{"path":"x","keyframes":[0,10,0]}"#))
        let x = track(timeline)
        let up = SpringKernel(parameters: parameters, from: 0, to: 10, velocity: 0)
        let restUp = try SpringSettling.settle([up], restDelta: 0.01, restSpeed: 0.01)
        let down = SpringKernel(parameters: parameters, from: 10, to: 0, velocity: 0)
        let restDown = try SpringSettling.settle([down], restDelta: 0.01, restSpeed: 0.01)
        XCTAssertEqual(timeline.duration!, restUp + restDown, accuracy: 1e-12)
        XCTAssertEqual(x.value(at: restUp / 2), up.value(at: restUp / 2), accuracy: 1e-12)
        // At the turn it is exactly at the first target, and heads back from rest.
        XCTAssertEqual(x.value(at: restUp), 10)
        XCTAssertEqual(x.value(at: restUp + 0.1), down.value(at: 0.1), accuracy: 1e-9)
        XCTAssertEqual(timeline.document(at: restUp + restDown)["x"], .number(0))
    }

    func testInitialVelocityNullStartAndCompositesTurnTogether() throws {
        let timeline = try compile(springDocument(#"{"path":"p","keyframes":[null,{"x":10,"y":0},{"x":0,"y":10}],"velocity":5}"#,
                                                  target: #"{"p":{"x":2,"y":0}}"#))
        let px = track(timeline, "p.x"), py = track(timeline, "p.y")
        // Both leaves head for the first keyframe with velocity 5 and turn when both rest.
        let kx = SpringKernel(parameters: parameters, from: 2, to: 10, velocity: 5)
        let ky = SpringKernel(parameters: parameters, from: 0, to: 0, velocity: 5)
        let turn = try SpringSettling.settle([kx, ky], restDelta: 0.01, restSpeed: 0.01)
        XCTAssertEqual(px.value(at: 0.2), kx.value(at: 0.2), accuracy: 1e-12)
        XCTAssertEqual(py.value(at: 0.2), ky.value(at: 0.2), accuracy: 1e-12)
        XCTAssertEqual(px.value(at: turn), 10)
        XCTAssertEqual(py.value(at: turn), 0)
        let last = timeline.document(at: timeline.duration!)
        guard case .object(let p)? = last["p"] else { return XCTFail() }
        XCTAssertEqual(p["x"], .number(0))
        XCTAssertEqual(p["y"], .number(10))
    }

    func testColourKeyframes() throws {
        let timeline = try compile(springDocument(##"{"path":"tint","keyframes":[null,"#ff0000","#0000ff"],"durations":[0.2,null]}"##,
                                                  target: ##"{"tint":"#000000"}"##))
        let red = SpringKernel(parameters: parameters, from: 0, to: 1, velocity: 0)
        XCTAssertEqual(track(timeline, "tint.red").value(at: 0.1), red.value(at: 0.1), accuracy: 1e-12)
        XCTAssertEqual(timeline.document(at: timeline.duration!)["tint"], .string("#0000ffff"))
    }

    func testReverseLegRunsTheKeyframesBackToTheStart() throws {
        let timeline = try compile(springDocument(#"{"path":"x","keyframes":[0,100,50],"durations":[0.3,null]}"#, extra: #","reverses":true"#))
        let x = track(timeline)
        let reversed = timeline.events.first { $0.kind == .reversed }!.time
        XCTAssertEqual(x.value(at: reversed), 50)
        // Back: toward 100 for 0.3 s (the time it headed for 100), then to rest at 0.
        let back = SpringKernel(parameters: parameters, from: 50, to: 100, velocity: 0)
        XCTAssertEqual(x.value(at: reversed + 0.2), back.value(at: 0.2), accuracy: 1e-9)
        XCTAssertEqual(timeline.values(of: "x").last, 0)
    }

    func testUndampedSpringKeyframesNeedAWindowAndNeverRest() throws {
        let document = #"{"fps":10,"window":{"start":0,"end":2},"target":{"x":0},"motion":{"type":"spring","response":1,"dampingRatio":0,"properties":[{"path":"x","keyframes":[0,1,3],"durations":[0.5,null]}]}}"#
        let timeline = try compile(document)
        XCTAssertNil(timeline.duration)
        // x = 1 − cos(2πt) until 0.5 s (x = 2, v = 0), then 3 − cos(2π(t − 0.5)).
        let x = track(timeline)
        XCTAssertEqual(x.value(at: 0.25), 1, accuracy: 1e-9)
        XCTAssertEqual(x.value(at: 1), 3 - cos(Double.pi), accuracy: 1e-9)
        let error = problems(#"{"target":{"x":0},"motion":{"type":"spring","response":1,"dampingRatio":0,"properties":[{"path":"x","keyframes":[0,1,3],"durations":[0.5,null]}]}}"#)
        XCTAssertEqual(error.problems.first?.pointer, "/window")
    }

    func testSpringKeyframeProblems() {
        func check(_ property: String, _ extra: String = "", _ pointer: String, _ status: Int, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
            let error = problems(springDocument(property, extra: extra), file: file, line: line)
            XCTAssertEqual(error.status, status, "\(error.problems)", file: file, line: line)
            XCTAssertTrue(error.problems.contains { $0.pointer == pointer && $0.message.contains(text) }, "\(error.problems)", file: file, line: line)
        }
        let p = "/motion/properties/0"
        check(#"{"path":"x","keyframes":[0,1,2,3],"durations":[1]}"#, "", "\(p)/durations", 422, "one duration per target")
        check(#"{"path":"x","keyframes":[0,1,2],"durations":[null,1]}"#, "", "\(p)/durations/0", 422, "only the last duration may be null")
        check(#"{"path":"x","keyframes":[0,1,2],"durations":[0,1]}"#, "", "\(p)/durations/0", 422, "must be positive")
        check(#"{"path":"x","keyframes":[0,1]}"#, #","stopAtTarget":true"#, "/motion/stopAtTarget", 422, "does not combine with keyframes")
        check(#"{"path":"x","to":1,"durations":[1]}"#, "", "\(p)/durations", 422, "only with 'keyframes'")
        check(#"{"path":"x","keyframes":[0,1],"from":0}"#, "", "\(p)/from", 422, "replaces")
    }
}

extension SpringKeyframeTests {
    func testReversingGroupRetracesSpringKeyframes() throws {
        // The group reverses its child: the same chain back as the node's own reverse leg.
        let grouped = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"group","reverses":true,"children":[{"type":"spring","response":0.5,"dampingRatio":0.5,"properties":[{"path":"x","keyframes":[0,100,50],"durations":[0.3]}]}]}}"#)
        let own = try compile(springDocument(#"{"path":"x","keyframes":[0,100,50],"durations":[0.3]}"#, extra: #","reverses":true"#))
        XCTAssertEqual(grouped.duration, own.duration)
        XCTAssertEqual(grouped.values(of: "x"), own.values(of: "x"))
        XCTAssertEqual(grouped.values(of: "x").last, 0)
    }

    func testKeyframesThatChangeNothing() throws {
        // No leaf of the composite changes, so there are no tracks: nothing to chain.
        let spring = try compile(#"{"fps":10,"target":{"p":{"x":1}},"motion":{"type":"spring","response":0.5,"properties":[{"path":"p","keyframes":[null,{"x":1},{"x":1}]}]}}"#)
        XCTAssertEqual(spring.duration, 0)
        XCTAssertTrue(spring.tracks.isEmpty)
        let colour = try compile(##"{"fps":10,"target":{"c":"#000"},"motion":{"type":"spring","response":0.5,"properties":[{"path":"c","keyframes":["#000","#000"]}]}}"##)
        XCTAssertTrue(colour.tracks.isEmpty)
        let tween = try compile(#"{"fps":10,"target":{"p":{"x":1}},"motion":{"type":"tween","duration":1,"properties":[{"path":"p","keyframes":[{"x":1},{"x":1},{"x":1}]}]}}"#)
        XCTAssertTrue(tween.tracks.isEmpty)
        XCTAssertEqual(tween.duration, 1)
    }
}
