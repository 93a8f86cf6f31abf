import XCTest
@testable import MotionEngine

final class CompositionTests: XCTestCase {
    /// Three steps on x: 0→20, →40, →60, one second each, sampled once a second.
    func steps(reversing mode: String?) -> String {
        let reverse = mode.map { #","reverses":true,"reversingMode":"\#($0)""# } ?? ""
        return #"""
        {"fps":1,"target":{"x":0},"motion":{"type":"sequence","id":"seq"\#(reverse),"steps":[
          {"type":"tween","id":"a","duration":1,"properties":[{"path":"x","to":20}]},
          {"type":"tween","id":"b","duration":1,"properties":[{"path":"x","to":40}]},
          {"type":"tween","id":"c","duration":1,"properties":[{"path":"x","to":60}]}]}}
        """#
    }

    func testSequenceRunsStepsBackToBack() throws {
        let timeline = try compile(steps(reversing: nil))
        XCTAssertEqual(timeline.duration, 3)
        XCTAssertEqual(timeline.values(of: "x"), [0, 20, 40, 60])
        XCTAssertEqual(timeline.events.map { "\($0.motion):\($0.kind.rawValue)\($0.step.map { "(\($0))" } ?? "")@\(format($0.time))" }, [
            "seq:started@0", "a:started@0", "a:completed@1", "seq:stepped(1)@1", "b:started@1",
            "b:completed@2", "seq:stepped(2)@2", "c:started@2", "c:completed@3", "seq:completed@3",
        ])
    }

    func testSequentialReversingReplaysStepsAndEndsAtTwenty() throws {
        // docs/timing-and-events.md: the replayed steps go 60→60, 60→40, 40→20.
        let timeline = try compile(steps(reversing: "sequential"))
        XCTAssertEqual(timeline.duration, 6)
        XCTAssertEqual(timeline.values(of: "x"), [0, 20, 40, 60, 60, 40, 20])
        let seqEvents = timeline.events.filter { $0.motion == "seq" }.map { "\($0.kind.rawValue)\($0.step.map { "(\($0))" } ?? "")@\(format($0.time))" }
        XCTAssertEqual(seqEvents, ["started@0", "stepped(1)@1", "stepped(2)@2", "reversed@3", "stepped(2)@3", "stepped(1)@4", "stepped(0)@5", "completed@6"])
        XCTAssertEqual(timeline.events.filter { $0.motion == "c" }.map(\.kind), [.started, .completed, .started, .completed])
    }

    func testContiguousReversingFlowsBackToZero() throws {
        let timeline = try compile(steps(reversing: "contiguous"))
        XCTAssertEqual(timeline.duration, 6)
        XCTAssertEqual(timeline.values(of: "x"), [0, 20, 40, 60, 40, 20, 0])
        XCTAssertEqual(timeline.events.map { "\($0.motion):\($0.kind.rawValue)\($0.step.map { "(\($0))" } ?? "")@\(format($0.time))" }, [
            "seq:started@0", "a:started@0", "seq:stepped(1)@1", "b:started@1", "seq:stepped(2)@2", "c:started@2",
            "seq:reversed@3", "c:reversed@3", "c:completed@4", "seq:stepped(1)@4",
            "b:reversed@4", "b:completed@5", "seq:stepped(0)@5", "a:reversed@5", "a:completed@6", "seq:completed@6",
        ])
    }

    func testContiguousReverseLegsUseTheReverseEasing() throws {
        let timeline = try compile(#"""
        {"fps":2,"target":{"x":0},"motion":{"type":"sequence","reverses":true,"reversingMode":"contiguous","steps":[
          {"type":"tween","duration":1,"easing":"quadratic.in","properties":[{"path":"x","to":100}]}]}}
        """#)
        // Out: 0, 25, 100; back: b + (a−b)·E(0.5) = 100 − 25 = 75, then 0.
        XCTAssertEqual(timeline.values(of: "x"), [0, 25, 100, 75, 0])
    }

    func testGroupRunsChildrenInParallelAndCompletesWithTheLast() throws {
        let timeline = try compile(#"""
        {"fps":2,"target":{"x":0,"y":0},"motion":{"type":"group","id":"g","children":[
          {"type":"tween","id":"x","duration":1,"properties":[{"path":"x","to":10}]},
          {"type":"tween","id":"y","duration":2,"properties":[{"path":"y","to":10}]}]}}
        """#)
        XCTAssertEqual(timeline.duration, 2)
        XCTAssertEqual(timeline.values(of: "x"), [0, 5, 10, 10, 10])
        XCTAssertEqual(timeline.values(of: "y"), [0, 2.5, 5, 7.5, 10])
        XCTAssertEqual(timeline.eventSummary, ["started@0", "started@0", "started@0", "completed@1", "completed@2", "completed@2"])
        XCTAssertEqual(timeline.events.map(\.motion), ["g", "x", "y", "x", "y", "g"])
    }

    func testReversingGroupWithoutSyncReversesEachChildOnItsOwn() throws {
        let timeline = try compile(#"""
        {"fps":2,"target":{"x":0,"y":0},"motion":{"type":"group","reverses":true,"children":[
          {"type":"tween","id":"x","duration":1,"properties":[{"path":"x","to":10}]},
          {"type":"tween","id":"y","duration":2,"properties":[{"path":"y","to":10}]}]}}
        """#)
        XCTAssertEqual(timeline.duration, 4)
        XCTAssertEqual(timeline.values(of: "x"), [0, 5, 10, 5, 0, 0, 0, 0, 0])
        XCTAssertEqual(timeline.values(of: "y"), [0, 2.5, 5, 7.5, 10, 7.5, 5, 2.5, 0])
        XCTAssertFalse(timeline.events.contains { $0.motion == "/motion" && $0.kind == .reversed }, "a group reverses itself only with syncsChildren")
        XCTAssertEqual(timeline.events.filter { $0.motion == "x" }.map { "\($0.kind.rawValue)@\(format($0.time))" }, ["started@0", "reversed@1", "completed@2"])
    }

    func testSyncedGroupReversesAllChildrenWhenTheSlowestFinishes() throws {
        let timeline = try compile(#"""
        {"fps":2,"target":{"x":0,"y":0},"motion":{"type":"group","id":"g","reverses":true,"syncsChildren":true,"children":[
          {"type":"tween","id":"x","duration":1,"properties":[{"path":"x","to":10}]},
          {"type":"tween","id":"y","duration":2,"properties":[{"path":"y","to":10}]}]}}
        """#)
        XCTAssertEqual(timeline.duration, 4)
        // x waits at 10 until t = 2, then both reverse; x's reverse leg takes its own 1 s.
        XCTAssertEqual(timeline.values(of: "x"), [0, 5, 10, 10, 10, 5, 0, 0, 0])
        XCTAssertEqual(timeline.values(of: "y"), [0, 2.5, 5, 7.5, 10, 7.5, 5, 2.5, 0])
        XCTAssertEqual(timeline.events.map { "\($0.motion):\($0.kind.rawValue)@\(format($0.time))" }, [
            "g:started@0", "x:started@0", "y:started@0", "g:reversed@2", "x:reversed@2", "y:reversed@2",
            "x:completed@3", "y:completed@4", "g:completed@4",
        ])
    }

    func testRepeatingGroupRestartsChildrenAndReResolvesImplicitStarts() throws {
        // The child has no `from`: on the group's repeat it starts from where it is (10),
        // while its own repeat would reuse its first start.
        let timeline = try compile(#"""
        {"fps":1,"target":{"x":0},"motion":{"type":"group","id":"g","repeat":1,"repeatDelay":1,"children":[
          {"type":"tween","id":"t","duration":1,"properties":[{"path":"x","to":10}]}]}}
        """#)
        XCTAssertEqual(timeline.duration, 3)
        XCTAssertEqual(timeline.values(of: "x"), [0, 10, 10, 10])
        XCTAssertEqual(timeline.events.map { "\($0.motion):\($0.kind.rawValue)@\(format($0.time))" }, [
            "g:started@0", "t:started@0", "t:completed@1", "g:repeated@2", "t:started@2", "t:completed@3", "g:completed@3",
        ])

        let own = try compile(#"{"fps":1,"target":{"x":0},"motion":{"type":"tween","duration":1,"repeat":1,"properties":[{"path":"x","to":10}]}}"#)
        XCTAssertEqual(own.values(of: "x"), [0, 0, 10], "own repeat runs a → b again: at t = 1 the new cycle starts at 0")
        XCTAssertEqual(own.tracks[0].value(at: 1.5), 5)
    }

    func testImplicitStartSeesEveryEarlierMotion() throws {
        // The sequence's second step resolves x at t = 1, after the sibling tween (which
        // started at 0.5) has taken over x.
        let timeline = try compile(#"""
        {"fps":2,"target":{"x":0},"motion":{"type":"group","children":[
          {"type":"sequence","steps":[
            {"type":"tween","duration":1,"properties":[{"path":"x","to":100}]},
            {"type":"tween","duration":1,"properties":[{"path":"x","to":0}]}]},
          {"type":"tween","delay":0.5,"duration":1,"properties":[{"path":"x","from":50,"to":60}]}]}}
        """#)
        // t=1: the sibling (5 later start) wins: 55; step 2 starts at 1 from 55 and wins from then.
        XCTAssertEqual(timeline.values(of: "x"), [0, 50, 55, 27.5, 0])
    }

    func testNestedGroupInsideReversingGroupRetracesItsChildren() throws {
        let timeline = try compile(#"""
        {"fps":1,"target":{"x":0},"motion":{"type":"group","reverses":true,"children":[
          {"type":"sequence","id":"inner","steps":[
            {"type":"tween","duration":1,"properties":[{"path":"x","to":10}]},
            {"type":"tween","duration":1,"properties":[{"path":"x","to":30}]}]}]}}
        """#)
        XCTAssertEqual(timeline.duration, 4)
        XCTAssertEqual(timeline.values(of: "x"), [0, 10, 30, 10, 0])
        XCTAssertEqual(timeline.events.filter { $0.motion == "inner" }.map { "\($0.kind.rawValue)@\(format($0.time))" },
                       ["started@0", "stepped@1", "reversed@2", "stepped@3", "completed@4"])
    }

    func testInfiniteChildMakesTheParentInfiniteAndBlocksLaterSteps() throws {
        let blocked = problems(#"""
        {"window":{"start":0,"end":1},"target":{"x":0},"motion":{"type":"sequence","steps":[
          {"type":"tween","duration":1,"repeat":"infinite","properties":[{"path":"x","to":1}]},
          {"type":"tween","duration":1,"properties":[{"path":"x","to":2}]}]}}
        """#)
        XCTAssertEqual(blocked.status, 422)
        XCTAssertEqual(blocked.problems.first?.pointer, "/motion/steps/1")

        let needsWindow = problems(#"{"target":{"x":0},"motion":{"type":"group","children":[{"type":"tween","duration":1,"repeat":"infinite","properties":[{"path":"x","to":1}]}]}}"#)
        XCTAssertEqual(needsWindow.problems.first?.pointer, "/window")

        let timeline = try compile(#"{"fps":1,"window":{"start":0,"end":3},"target":{"x":0},"motion":{"type":"group","repeat":"infinite","children":[{"type":"tween","duration":1,"properties":[{"path":"x","from":0,"to":1}]}]}}"#)
        XCTAssertNil(timeline.duration)
        XCTAssertEqual(timeline.values(of: "x"), [0, 0, 0, 0])
        XCTAssertEqual(timeline.events.filter { $0.kind == .repeated }.map(\.time), [1, 2, 3])
    }

    func testDepthLimit() {
        var limits = EngineLimits.default
        limits.maxDepth = 2
        let nested = #"{"target":{"x":0},"motion":{"type":"group","children":[{"type":"group","children":[{"type":"group","children":[{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}]}]}]}}"#
        let error = problems(nested, limits: limits)
        XCTAssertEqual(error.status, 422)
        XCTAssertEqual(error.problems.first?.pointer, "/motion/children/0/children/0")
        XCTAssertTrue(error.problems.first?.message.contains("max-depth") ?? false)
        limits.maxDepth = 3
        XCTAssertNoThrow(try TimelineCompiler(limits: limits).compile(Array(nested.utf8)))
    }

    func testSimultaneousEventsFollowCausalOrder() throws {
        // Zero-duration steps: everything happens at t = 0, in causal order.
        let timeline = try compile(#"""
        {"target":{"x":0},"motion":{"type":"sequence","id":"s","steps":[
          {"type":"tween","id":"a","duration":0,"properties":[{"path":"x","to":1}]},
          {"type":"tween","id":"b","duration":0,"properties":[{"path":"x","to":2}]}]}}
        """#)
        XCTAssertEqual(timeline.events.map { "\($0.motion):\($0.kind.rawValue)" }, [
            "s:started", "a:started", "a:completed", "s:stepped", "b:started", "b:completed", "s:completed",
        ])
        XCTAssertEqual(timeline.values(of: "x"), [2])
    }
}
