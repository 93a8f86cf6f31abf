import XCTest
@testable import MotionEngine

final class SessionClockTests: XCTestCase {
    func testRunsAtWallTimeTimesSpeedAndCompletes() {
        let clock = SessionClock(start: 0, end: 2, speed: 2, wall: 100)
        XCTAssertEqual(clock.time(atWall: 100.5), 1)
        XCTAssertEqual(clock.state(atWall: 100.5), .running)
        XCTAssertEqual(clock.completionWall, 101)
        XCTAssertEqual(clock.time(atWall: 105), 2)
        XCTAssertEqual(clock.state(atWall: 105), .completed)
    }

    func testPauseFreezesAndResumeContinuesInTheSameDirection() throws {
        var clock = SessionClock(start: 0, end: 10, speed: 1, wall: 0)
        try clock.apply(.pause, atWall: 2)
        XCTAssertEqual(clock.time(atWall: 50), 2)
        XCTAssertEqual(clock.state(atWall: 50), .paused)
        XCTAssertNil(clock.wall(atTime: 3), "no frame is due while paused")
        try clock.apply(.pause, atWall: 51)
        XCTAssertEqual(clock.state(atWall: 51), .paused, "pausing a paused clock is a no-op")
        try clock.apply(.resume, atWall: 60)
        XCTAssertEqual(clock.time(atWall: 61), 3)
        try clock.apply(.resume, atWall: 61)
        XCTAssertEqual(clock.time(atWall: 62), 4, "resuming a running clock is a no-op")
    }

    func testReverseRunsBackAndCompletesAtTheStart() throws {
        var clock = SessionClock(start: 0, end: 10, speed: 1, wall: 0)
        try clock.apply(.reverse, atWall: 4)
        XCTAssertEqual(clock.state(atWall: 5), .reversing)
        XCTAssertEqual(clock.time(atWall: 5), 3)
        XCTAssertEqual(clock.wall(atTime: 1), 7)
        XCTAssertNil(clock.wall(atTime: 5), "behind a reversing clock")
        XCTAssertEqual(clock.state(atWall: 8), .completed)
        XCTAssertEqual(clock.time(atWall: 8), 0)
    }

    func testReverseAndSeekWhilePausedStayPaused() throws {
        var clock = SessionClock(start: 0, end: 10, speed: 1, wall: 0)
        try clock.apply(.pause, atWall: 5)
        try clock.apply(.reverse, atWall: 6)
        try clock.apply(.seek, time: 8, atWall: 7)
        XCTAssertEqual(clock.state(atWall: 9), .paused)
        XCTAssertEqual(clock.time(atWall: 9), 8)
        try clock.apply(.resume, atWall: 10)
        XCTAssertEqual(clock.time(atWall: 11), 7, "resumes in the reversed direction")
    }

    func testStoppedAndCompletedClocksRefuseCommands() throws {
        var clock = SessionClock(start: 0, end: 10, speed: 1, wall: 0)
        try clock.apply(.stop, atWall: 3)
        XCTAssertEqual(clock.time(atWall: 9), 3)
        XCTAssertThrowsError(try clock.apply(.resume, atWall: 4)) { error in
            XCTAssertEqual((error as? SessionClock.Conflict)?.state, .stopped)
        }
        var done = SessionClock(start: 0, end: 1, speed: 1, wall: 0)
        XCTAssertThrowsError(try done.apply(.pause, atWall: 2)) { error in
            XCTAssertEqual((error as? SessionClock.Conflict)?.state, .completed)
        }
    }

    func testSeekClampsToTheInterval() throws {
        var clock = SessionClock(start: 1, end: 3, speed: 1, wall: 0)
        try clock.apply(.pause, atWall: 0)
        try clock.apply(.seek, time: -5, atWall: 0)
        XCTAssertEqual(clock.time(atWall: 0), 1)
    }
}

final class RetargetTests: XCTestCase {
    func testSpringRetargetKeepsValueAndVelocityContinuous() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"spring","response":1,"dampingRatio":1,"properties":[{"path":"x","to":100}]}}"#)
        let t = 0.3
        let before = timeline.tracks[0]
        let retargeted = try timeline.retargeting("x", to: .number(-50), at: t)
        let after = retargeted.tracks[0]
        XCTAssertEqual(after.value(at: t), before.value(at: t), accuracy: 1e-9, "no jump")
        XCTAssertEqual(after.velocity(at: t), before.velocity(at: t), accuracy: 1e-6, "velocity carries over")
        XCTAssertEqual(after.value(at: t - 0.1), before.value(at: t - 0.1), "the past is unchanged")
        let end = retargeted.window.end
        XCTAssertGreaterThan(end, t)
        XCTAssertEqual(after.value(at: end), -50)
        XCTAssertEqual(retargeted.duration, end)
    }

    func testTweenIsHandedToASpring() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":100}]}}"#)
        let retargeted = try timeline.retargeting("x", to: .number(0), at: 0.5)
        let track = retargeted.tracks[0]
        XCTAssertEqual(track.value(at: 0.5), 50, accuracy: 1e-9)
        XCTAssertEqual(track.velocity(at: 0.5), 100, accuracy: 1e-3, "a linear tween's velocity")
        XCTAssertGreaterThan(track.value(at: 0.501), 50, "it keeps moving up for an instant")
        XCTAssertEqual(track.value(at: retargeted.window.end), 0)
    }

    func testCompositeAndColourTargets() throws {
        let timeline = try compile(##"{"fps":60,"target":{"frame":{"x":0,"y":0},"tint":"#000000"},"motion":{"type":"group","children":[{"type":"spring","response":0.5,"dampingRatio":1,"properties":[{"path":"frame","to":{"x":10,"y":20}}]},{"type":"tween","duration":1,"properties":[{"path":"tint","to":"#ff0000"}]}]}}"##)
        let moved = try timeline.retargeting("frame", to: .object(JSONObject([("x", .number(-10)), ("y", .number(-20))])), at: 0.1)
        let end = moved.window.end
        XCTAssertEqual(moved.tracks.first { $0.path == "frame.y" }?.value(at: end), -20)
        let recoloured = try timeline.retargeting("tint", to: .string("#000000"), at: 0.5)
        XCTAssertEqual(recoloured.tracks.first { $0.path == "tint.red" }?.value(at: recoloured.window.end), 0)
    }

    func testPathsPhysicsAndUnknownPathsAreRefused() throws {
        let path = try compile(#"{"fps":60,"motion":{"type":"path","path":"M0 0 L10 0","duration":1}}"#)
        XCTAssertThrowsError(try path.retargeting("position.x", to: .number(5), at: 0.5)) { error in
            XCTAssertEqual((error as? RetargetError)?.kind, .conflict)
        }
        let physics = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"physics","velocity":100,"friction":0.5,"properties":[{"path":"x"}]}}"#)
        XCTAssertThrowsError(try physics.retargeting("x", to: .number(5), at: 0.5)) { error in
            XCTAssertEqual((error as? RetargetError)?.kind, .conflict)
            XCTAssertTrue((error as? RetargetError)?.message.contains("physics") ?? false)
        }
        XCTAssertThrowsError(try physics.retargeting("nope", to: .number(5), at: 0.5)) { error in
            XCTAssertEqual((error as? RetargetError)?.kind, .invalid)
        }
    }

    /// A `to` holds numbers only, each for a track once: anything else in it would be neither
    /// redirected nor refused, yet kept in the session's state and echoed to its watchers.
    func testTargetsHoldNumbersOnlyEachTrackOnce() throws {
        let timeline = try compile(#"{"fps":60,"target":{"frame":{"x":0,"y":0,"a":{"b":0}}},"motion":{"type":"spring","response":0.5,"dampingRatio":1,"properties":[{"path":"frame","to":{"x":10,"y":20,"a":{"b":1}}}]}}"#)
        let padded = JSON.object(JSONObject([("x", .number(1)), ("pad", .string(String(repeating: "p", count: 1000)))]))
        XCTAssertThrowsError(try timeline.retargeting("frame", to: padded, at: 0.1)) { error in
            let error = error as? RetargetError
            XCTAssertEqual(error?.kind, .invalid)
            XCTAssertEqual(error?.field, "to")
            XCTAssertEqual(error?.message, "'to' must hold numbers only; 'frame.pad' is a string")
        }
        let nulls = JSON.array([.number(1), .null])
        XCTAssertThrowsError(try timeline.retargeting("frame", to: .object(JSONObject([("x", nulls)])), at: 0.1)) { error in
            XCTAssertEqual((error as? RetargetError)?.message, "'to' must hold numbers only; 'frame.x.1' is null")
        }
        // `a.b` and `a: {b}` name the same track.
        let twice = JSON.object(JSONObject([("a.b", .number(1)), ("a", .object(JSONObject([("b", .number(2))])))]))
        XCTAssertThrowsError(try timeline.retargeting("frame", to: twice, at: 0.1)) { error in
            XCTAssertEqual((error as? RetargetError)?.message, "'to' sets 'frame.a.b' more than once")
        }
        let targets = try timeline.retargetTargets("frame", to: .object(JSONObject([("y", .number(5)), ("a", .object(JSONObject([("b", .number(6))])))])))
        XCTAssertEqual(targets.map { timeline.tracks[$0.track].path }, ["frame.y", "frame.a.b"])
        XCTAssertEqual(targets.map(\.target), [5, 6])
    }
}
