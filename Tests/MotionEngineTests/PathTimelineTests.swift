import Foundation
import XCTest
@testable import MotionEngine

/// `path` and `pathPhysics` nodes through the compiler (docs/nodes.md#path-and-pathphysics, docs/nodes.md#path-and-pathphysics).
final class PathTimelineTests: XCTestCase {
    let lPath = #""path":"M0 0 L100 0 L100 100""#

    func testLinearPathReferencePositions() throws {
        let timeline = try compile(#"{"fps":4,"motion":{"type":"path",\#(lPath),"duration":1,"rotation":"angle"}}"#)
        XCTAssertEqual(timeline.tracks.map(\.path), ["position.x", "position.y", "angle"])
        XCTAssertEqual(timeline.values(of: "position.x"), [0, 50, 100, 100, 100])
        XCTAssertEqual(timeline.values(of: "position.y"), [0, 0, 0, 50, 100])
        XCTAssertEqual(timeline.values(of: "angle")[1], 0)
        XCTAssertEqual(timeline.values(of: "angle")[3], 90)
        XCTAssertEqual(timeline.document(at: 0.25)["position"], .object(JSONObject([("x", .number(50)), ("y", .number(0))])))
    }

    func testFramesLayoutWritesThePointWholeIntoTheTargetShape() throws {
        let timeline = try compile(#"{"fps":2,"output":{"layout":"frames"},"target":{"dot":{"x":-1,"y":-1,"r":4}},"motion":{"type":"path",\#(lPath),"output":"dot","duration":1}}"#)
        let body = try parseJSON(TimelineEncoder.encode(timeline)).objectValue!
        let middle = body["frames"]?.arrayValue?[1].objectValue?["values"]?.objectValue?["dot"]
        XCTAssertEqual(middle, .object(JSONObject([("x", .number(100)), ("y", .number(0)), ("r", .number(4))])))
    }

    func testEasingStartGreaterThanEndAndReverses() throws {
        let timeline = try compile(#"{"fps":4,"motion":{"type":"path",\#(lPath),"duration":1,"startPosition":0.75,"endPosition":0.25,"easing":"linear","reverses":true}}"#)
        // 0.75 → 0.25 forward, then back to 0.75.
        XCTAssertEqual(timeline.values(of: "position.y"), [50, 25, 0, 0, 0, 0, 0, 25, 50])
        XCTAssertEqual(timeline.values(of: "position.x"), [100, 100, 100, 75, 50, 75, 100, 100, 100])
        XCTAssertEqual(timeline.eventSummary, ["started@0", "reversed@1", "completed@2"])
    }

    func testStopAtEdgesClampsOvershootAndContiguousEdgesWraps() throws {
        // back.out overshoots past p = 1: clamped at the end, or wrapped to the start.
        let stop = try compile(#"{"fps":10,"motion":{"type":"path",\#(lPath),"duration":1,"easing":{"type":"back.out","overshoot":0.5}}}"#)
        XCTAssertEqual(stop.values(of: "position.y").max(), 100)
        let wrap = try compile(#"{"fps":10,"motion":{"type":"path",\#(lPath),"duration":1,"edgeBehavior":"contiguousEdges","easing":{"type":"back.out","overshoot":0.5}}}"#)
        let ys = wrap.values(of: "position.y")
        XCTAssertEqual(ys.last, 100, "p = 1 exactly stays at the end")
        XCTAssertTrue(wrap.values(of: "position.x").dropLast().contains { $0 < 100 && $0 > 0 }, "past the end it continues from the start")
    }

    func testMovesBetweenSubpathsAddNoLength() throws {
        let timeline = try compile(#"{"fps":4,"motion":{"type":"path","path":"M0 0 L10 0 M100 100 L100 110","duration":1}}"#)
        XCTAssertEqual(timeline.values(of: "position.x"), [0, 5, 100, 100, 100])
        XCTAssertEqual(timeline.values(of: "position.y"), [0, 0, 100, 105, 110])
    }

    func testElementArrayForm() throws {
        let timeline = try compile(#"{"fps":2,"motion":{"type":"path","duration":1,"path":[{"op":"move","to":[0,0]},{"op":"line","to":[0,40]}]}}"#)
        XCTAssertEqual(timeline.values(of: "position.y"), [0, 20, 40])
    }

    func testBadPathDataGivesTheOffset() {
        let error = problems(#"{"motion":{"type":"path","path":"M0 0 L10 x","duration":1}}"#)
        XCTAssertEqual(error.status, 422)
        XCTAssertEqual(error.problems.first?.pointer, "/motion/path")
        XCTAssertTrue(error.problems.first?.message.contains("character 9") ?? false, "\(error.problems)")
    }

    func testPathPhysicsStopsAtTheEndWall() throws {
        // Enough velocity to pass the end: with restitution 0 it stops on the wall.
        let timeline = try compile(#"{"fps":60,"motion":{"type":"pathPhysics",\#(lPath),"velocity":400,"friction":0.5}}"#)
        XCTAssertEqual(timeline.values(of: "position.x").last, 100)
        XCTAssertEqual(timeline.values(of: "position.y").last, 100)
        let collided = timeline.events.filter { $0.kind == .collided }
        XCTAssertEqual(collided.count, 1)
        let lambda = -log(0.5)
        XCTAssertEqual(collided[0].time, -log(1 - lambda * 200 / 400) / lambda, accuracy: 1e-9)
        XCTAssertEqual(timeline.duration, collided[0].time, "restitution 0: it rests at the contact")
    }

    func testPathPhysicsWithoutReachingTheEnd() throws {
        let timeline = try compile(#"{"fps":60,"motion":{"type":"pathPhysics",\#(lPath),"velocity":50,"friction":0.5}}"#)
        let lambda = -log(0.5)
        let rest = log(50 / 0.95) / lambda
        let travelled = (50 - 0.95) / lambda
        XCTAssertEqual(try XCTUnwrap(timeline.duration), rest, accuracy: 1e-9)
        XCTAssertEqual(timeline.values(of: "position.x").last!, travelled, accuracy: 1e-6)
    }

    func testNegativeVelocityWrapsWithContiguousEdges() throws {
        let timeline = try compile(#"{"fps":60,"motion":{"type":"pathPhysics",\#(lPath),"velocity":-50,"friction":0.5,"edgeBehavior":"contiguousEdges"}}"#)
        XCTAssertTrue(timeline.events.allSatisfy { $0.kind != .collided })
        let lambda = -log(0.5)
        let travelled = (50 - 0.95) / lambda
        // Backwards from the start wraps to the end of the 200-long path: 200 − travelled along it.
        let s = 200 - travelled
        XCTAssertEqual(timeline.values(of: "position.x").last!, 100, accuracy: 1e-9)
        XCTAssertEqual(timeline.values(of: "position.y").last!, s - 100, accuracy: 1e-6)
    }

    func testPathPhysicsReversesAndRepeats() throws {
        let timeline = try compile(#"{"fps":60,"motion":{"type":"pathPhysics",\#(lPath),"velocity":50,"friction":0.5,"reverses":true,"repeat":1}}"#)
        XCTAssertEqual(timeline.values(of: "position.x").last!, 0, accuracy: 1e-9)
        // The reverse leg comes to rest exactly on the start wall, which may count as a contact.
        XCTAssertEqual(timeline.events.map(\.kind).filter { $0 != .collided }, [.started, .reversed, .repeated, .reversed, .completed])

        let wrapping = try compile(#"{"fps":60,"motion":{"type":"pathPhysics",\#(lPath),"velocity":50,"friction":0.5,"reverses":true,"edgeBehavior":"contiguousEdges"}}"#)
        XCTAssertEqual(wrapping.values(of: "position.x").last!, 0, accuracy: 1e-9, "back at the start, not wrapped to the end")
        XCTAssertEqual(wrapping.values(of: "position.y").last!, 0, accuracy: 1e-9)
    }

    func testPathsInsideGroupsAndSequences() throws {
        let timeline = try compile(#"""
        {"fps":2,"target":{"o":0},"motion":{"type":"sequence","reverses":true,"reversingMode":"contiguous","steps":[
          {"type":"path","path":"M0 0 L10 0","duration":1},
          {"type":"group","children":[
            {"type":"path","path":"M10 0 L10 10","duration":1},
            {"type":"tween","duration":1,"properties":[{"path":"o","to":1}]}]}]}}
        """#)
        XCTAssertEqual(timeline.values(of: "position.x"), [0, 5, 10, 10, 10, 10, 10, 5, 0])
        XCTAssertEqual(timeline.values(of: "position.y"), [0, 0, 0, 5, 10, 5, 0, 0, 0])
        XCTAssertEqual(timeline.values(of: "o"), [0, 0, 0, 0.5, 1, 0.5, 0, 0, 0])
    }
}
