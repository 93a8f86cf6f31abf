import XCTest
@testable import MotionEngine

/// `timeline` nodes (docs/authoring.md): positions, labels, nesting, reversing as a time mirror,
/// repeats, events and `output.schedule`, with hand-computed times.
final class TimelineNodeTests: XCTestCase {
    /// A 0 → 1 linear tween on `p<index>` with the given placement fields.
    private func child(_ index: Int, _ fields: String, duration: Double) -> String {
        #"{"type":"tween","id":"c\#(index)",\#(fields)"duration":\#(duration),"properties":[{"path":"p\#(index)","from":0,"to":1}]}"#
    }

    private func schedule(_ timeline: Timeline) -> [String: (start: Double, end: Double?)] {
        var result: [String: (start: Double, end: Double?)] = [:]
        for node in timeline.schedule?.nodes ?? [] { result[node.motion] = (node.start, node.end) }
        return result
    }

    func testEveryPositionForm() throws {
        // Hand-computed [start, end] of each child (docs/authoring.md):
        let children: [(String, Double, Double, Double)] = [
            (#""#, 1, 0, 1),                                    // c0 default ">": the timeline's start
            (#""at":"<+=0.25","#, 1, 0.25, 1.25),               // c1 c0's start + 0.25
            (#""at":"+=0.5","label":"c","#, 0.5, 1.75, 2.25),   // c2 end of everything (1.25) + 0.5; label c = 1.75
            (#""at":"c-=0.5","#, 0.25, 1.25, 1.5),              // c3 label c − 0.5
            (#""at":">-=0.5","delay":0.25,"#, 0.5, 1.25, 1.75), // c4 c3's end − 0.5 = 1.0, plus its delay
            (#""at":3,"#, 0.5, 3, 3.5),                         // c5 a number
            (#""at":"<","#, 0.25, 3, 3.25),                     // c6 c5's start
            (#""at":"mark+=1","#, 0.5, 1.5, 2),                 // c7 label mark (0.5) + 1
            (#""at":"-=1","#, 0.5, 2.5, 3),                     // c8 end of everything (3.5) − 1
            (#""at":">+=0.25","#, 0.5, 3.25, 3.75),             // c9 c8's end + 0.25
            (#""at":"<-=0.25","#, 1, 3, 4),                     // c10 c9's start − 0.25
            (#""at":"mark","#, 0.1, 0.5, 0.6),                  // c11 label mark
            (#""at":"c","#, 0.25, 1.75, 2),                     // c12 label c
            (#""at":">","#, 0.5, 2, 2.5),                       // c13 c12's end
        ]
        let nodes = children.enumerated().map { child($0.offset, $0.element.0, duration: $0.element.1) }.joined(separator: ",")
        let target = (0..<children.count).map { #""p\#($0)":0"# }.joined(separator: ",")
        let timeline = try compile(#"""
            {"fps":4,"target":{\#(target)},"output":{"schedule":true},
             "motion":{"type":"timeline","id":"T","labels":{"mark":0.5},"children":[\#(nodes)]}}
            """#)
        XCTAssertEqual(timeline.duration, 4)
        let placed = schedule(timeline)
        XCTAssertEqual(placed["T"]?.start, 0)
        XCTAssertEqual(placed["T"]?.end, 4)
        for (index, expected) in children.enumerated() {
            let entry = try XCTUnwrap(placed["c\(index)"], "c\(index)")
            XCTAssertEqual(entry.start, expected.2, accuracy: 1e-12, "c\(index) start")
            XCTAssertEqual(entry.end ?? -1, expected.3, accuracy: 1e-12, "c\(index) end")
            // The track moves exactly over [start, end].
            let track = try XCTUnwrap(timeline.tracks.first { $0.path == "p\(index)" })
            XCTAssertEqual(track.value(at: expected.2), 0, accuracy: 1e-12)
            XCTAssertEqual(track.value(at: (expected.2 + expected.3) / 2), 0.5, accuracy: 1e-9, "c\(index) halfway")
            XCTAssertEqual(track.value(at: expected.3), 1, accuracy: 1e-12)
        }
        XCTAssertEqual(timeline.schedule?.labels.map(\.name), ["mark", "c"])
        XCTAssertEqual(timeline.schedule?.labels.map(\.time), [0.5, 1.75])
    }

    func testScheduleIsInTheAnswerOnlyWhenAsked() throws {
        let doc = #"{"fps":2,"target":{"x":0},"output":{"schedule":%@},"motion":{"type":"timeline","labels":{"a":0.5},"children":[{"type":"tween","at":"a","duration":1,"properties":[{"path":"x","to":1}]}]}}"#
        let with = try parseJSON(TimelineEncoder.encode(compile(doc.replacingOccurrences(of: "%@", with: "true"))))
        XCTAssertEqual(with.objectValue?["schedule"], .array([
            .object(JSONObject([("motion", .string("/motion")), ("start", .number(0)), ("end", .number(1.5))])),
            .object(JSONObject([("motion", .string("/motion/children/0")), ("start", .number(0.5)), ("end", .number(1.5))])),
        ]))
        XCTAssertEqual(with.objectValue?["labels"], .object(JSONObject([("a", .number(0.5))])))
        let without = try parseJSON(TimelineEncoder.encode(compile(doc.replacingOccurrences(of: "%@", with: "false"))))
        XCTAssertNil(without.objectValue?["schedule"])
        XCTAssertNil(without.objectValue?["labels"])
    }

    func testNestingBothWays() throws {
        // A sequence holds a 1 s tween and then a timeline; the timeline holds a group
        // (two tweens, 1 s and 0.5 s) and, from the group's start + 0.5, a sequence of two
        // 0.5 s steps.
        let timeline = try compile(#"""
            {"fps":4,"target":{"x":0,"a":0,"b":0,"s":0},"output":{"schedule":true},
             "motion":{"type":"sequence","id":"outer","steps":[
               {"type":"tween","id":"x","duration":1,"properties":[{"path":"x","to":1}]},
               {"type":"timeline","id":"T","children":[
                 {"type":"group","id":"G","children":[
                   {"type":"tween","id":"a","duration":1,"properties":[{"path":"a","to":1}]},
                   {"type":"tween","id":"b","duration":0.5,"properties":[{"path":"b","to":1}]}]},
                 {"type":"sequence","id":"S","at":"<+=0.5","steps":[
                   {"type":"tween","id":"s1","duration":0.5,"properties":[{"path":"s","to":1}]},
                   {"type":"tween","id":"s2","duration":0.5,"properties":[{"path":"s","to":2}]}]}]}]}}
            """#)
        XCTAssertEqual(timeline.duration, 2.5)
        let placed = schedule(timeline)
        let expected: [String: (Double, Double)] = ["outer": (0, 2.5), "x": (0, 1), "T": (1, 2.5), "G": (1, 2), "a": (1, 2),
                                                     "b": (1, 1.5), "S": (1.5, 2.5), "s1": (1.5, 2), "s2": (2, 2.5)]
        for (id, (start, end)) in expected {
            XCTAssertEqual(placed[id]?.start, start, "\(id) start")
            XCTAssertEqual(placed[id]?.end ?? nil, end, "\(id) end")
        }
        XCTAssertEqual(timeline.values(of: "s"), [0, 0, 0, 0, 0, 0, 0, 0.5, 1, 1.5, 2])
        XCTAssertEqual(timeline.events.filter { $0.motion == "outer" }.map(\.kind), [.started, .stepped, .completed])
    }

    func testReversingTimelineIsItsForwardLegPlayedBackwardsInTime() throws {
        // x over [0, 1], y over [0.5, 1.5]: the reverse leg runs y back over [1.5, 2.5] and
        // x over [2, 3], so every sample mirrors the one at 3 − t.
        let timeline = try compile(#"""
            {"fps":4,"target":{"x":0,"y":0},
             "motion":{"type":"timeline","id":"T","reverses":true,"children":[
               {"type":"tween","id":"A","duration":1,"properties":[{"path":"x","to":10}]},
               {"type":"tween","id":"B","at":0.5,"duration":1,"properties":[{"path":"y","to":10}]}]}}
            """#)
        XCTAssertEqual(timeline.duration, 3)
        for path in ["x", "y"] {
            let values = timeline.values(of: path)
            XCTAssertEqual(values.count, 13)
            for k in values.indices { XCTAssertEqual(values[k], values[values.count - 1 - k], accuracy: 1e-12, "\(path) frame \(k)") }
        }
        XCTAssertEqual(timeline.values(of: "x"), [0, 2.5, 5, 7.5, 10, 10, 10, 10, 10, 7.5, 5, 2.5, 0])
        XCTAssertEqual(timeline.events.map { "\($0.motion):\($0.kind.rawValue)@\(format($0.time))" }, [
            "T:started@0", "A:started@0", "B:started@0.5", "T:reversed@1.5", "B:reversed@1.5",
            "A:reversed@2", "B:completed@2.5", "A:completed@3", "T:completed@3",
        ])
    }

    func testRepeatReplaysThePlacementEachCycle() throws {
        let timeline = try compile(#"""
            {"fps":2,"target":{"x":0,"y":0},"output":{"schedule":true},
             "motion":{"type":"timeline","id":"T","repeat":1,"repeatDelay":0.5,"children":[
               {"type":"tween","id":"A","duration":1,"properties":[{"path":"x","from":0,"to":10}]},
               {"type":"tween","id":"B","at":"<+=0.5","duration":0.5,"properties":[{"path":"y","from":0,"to":4}]}]}}
            """#)
        XCTAssertEqual(timeline.duration, 2.5)
        XCTAssertEqual(timeline.values(of: "x"), [0, 5, 10, 0, 5, 10])
        // B holds 4 until its second start at 1.5 + 0.5 (docs/timing-and-events.md: before it starts it contributes nothing).
        XCTAssertEqual(timeline.values(of: "y"), [0, 0, 4, 4, 0, 4])
        XCTAssertEqual(timeline.events.filter { $0.motion == "T" }.map { "\($0.kind.rawValue)@\(format($0.time))" },
                       ["started@0", "repeated@1.5", "completed@2.5"])
        XCTAssertEqual(schedule(timeline)["T"]?.end ?? nil, 1, "the end of the first cycle")
    }

    func testChildAfterASpringWaitsForItsRestTime() throws {
        // The spring's rest time depends on its start value: the next child is placed when it
        // rests, 0.25 s later.
        let timeline = try compile(#"""
            {"fps":60,"target":{"x":0,"y":0},"output":{"schedule":true},
             "motion":{"type":"timeline","children":[
               {"type":"spring","id":"S","response":0.3,"dampingRatio":1,"properties":[{"path":"x","to":1}]},
               {"type":"tween","id":"C","at":">+=0.25","duration":0.5,"properties":[{"path":"y","to":1}]}]}}
            """#)
        let placed = schedule(timeline)
        let springEnd = try XCTUnwrap(placed["S"]?.end ?? nil)
        XCTAssertGreaterThan(springEnd, 0.3)
        XCTAssertEqual(placed["C"]?.start ?? -1, springEnd + 0.25, accuracy: 1e-12)
        XCTAssertEqual(timeline.duration ?? -1, springEnd + 0.75, accuracy: 1e-12)
    }

    func testGroupInsideATimelineAndAfterAnEndlessChild() throws {
        let timeline = try compile(#"""
            {"fps":2,"target":{"x":0,"y":0},"window":{"start":0,"end":2},"output":{"schedule":true},
             "motion":{"type":"timeline","id":"T","children":[
               {"type":"tween","id":"loop","duration":1,"repeat":"infinite","properties":[{"path":"x","from":0,"to":1}]},
               {"type":"tween","id":"after","at":"<+=0.5","duration":1,"properties":[{"path":"y","to":1}]}]}}
            """#)
        XCTAssertNil(timeline.duration)
        let placed = schedule(timeline)
        XCTAssertEqual(placed["after"]?.start, 0.5)
        XCTAssertEqual(placed["after"]?.end ?? nil, 1.5)
        XCTAssertNotNil(placed["loop"])
        XCTAssertNil(placed["loop"]?.end ?? nil, "a node that never ends has no end")
        XCTAssertNil(placed["T"]?.end ?? nil)
    }

    // MARK: - Refusals

    private func pointers(_ error: DocumentError) -> [String] { error.problems.map(\.pointer) }

    func testUnknownAndLaterDefinedLabelsAreRefusedNamingTheChild() {
        let error = problems(#"""
            {"target":{"x":0},"motion":{"type":"timeline","children":[
              {"type":"tween","at":"later","duration":1,"properties":[{"path":"x","to":1}]},
              {"type":"tween","label":"later","duration":1,"properties":[{"path":"x","to":2}]},
              {"type":"tween","at":"nowhere+=1","duration":1,"properties":[{"path":"x","to":3}]},
              {"type":"tween","at":"self","label":"self","duration":1,"properties":[{"path":"x","to":3}]}]}}
            """#)
        XCTAssertEqual(error.status, 422)
        XCTAssertEqual(pointers(error), ["/motion/children/0/at", "/motion/children/2/at", "/motion/children/3/at"])
        XCTAssertTrue(error.problems[0].message.contains("'later'"), error.problems[0].message)
    }

    func testNegativePositionsAreRefusedNamingTheChild() {
        let error = problems(#"""
            {"target":{"x":0},"motion":{"type":"timeline","labels":{"m":0.5},"children":[
              {"type":"tween","at":-1,"duration":1,"properties":[{"path":"x","to":1}]}]}}
            """#)
        XCTAssertEqual(error.status, 422)
        XCTAssertEqual(pointers(error), ["/motion/children/0/at"])
        for position in [#""-=2""#, #""m-=1""#, #""<-=0.5""#, #"">-=1.5""#] {
            let error = problems(#"""
                {"target":{"x":0},"motion":{"type":"timeline","labels":{"m":0.5},"children":[
                  {"type":"tween","duration":1,"properties":[{"path":"x","to":1}]},
                  {"type":"tween","at":\#(position),"duration":1,"properties":[{"path":"x","to":1}]}]}}
                """#)
            XCTAssertEqual(error.status, 422, position)
            XCTAssertEqual(pointers(error), ["/motion/children/1/at"], position)
            XCTAssertTrue(error.problems.first?.message.contains("before the timeline's start") ?? false, position)
        }
    }

    func testBadPositionsAndLabels() {
        let error = problems(#"""
            {"target":{"x":0},"motion":{"type":"timeline","children":[
              {"type":"tween","at":">+x","duration":1,"properties":[{"path":"x","to":1}]},
              {"type":"tween","at":"+=1e3","duration":1,"properties":[{"path":"x","to":1}]},
              {"type":"tween","label":"a","duration":1,"properties":[{"path":"x","to":1}]},
              {"type":"tween","label":"a","duration":1,"properties":[{"path":"x","to":1}]}]}}
            """#)
        XCTAssertEqual(pointers(error), ["/motion/children/0/at", "/motion/children/1/at", "/motion/children/3/label"])
    }

    func testPlacementFieldsOutsideATimelineAreRefused() {
        let error = problems(#"""
            {"target":{"x":0},"motion":{"type":"group","at":1,"children":[
              {"type":"tween","label":"a","duration":1,"properties":[{"path":"x","to":1}]}]}}
            """#)
        XCTAssertEqual(error.status, 422)
        XCTAssertEqual(pointers(error), ["/motion/at", "/motion/children/0/label"])
    }

    func testChildPlacedAfterAnEndlessChildIsRefused() {
        for position in [#"">""#, #""+=1""#] {
            let error = problems(#"""
                {"target":{"x":0,"y":0},"window":{"start":0,"end":5},"motion":{"type":"timeline","children":[
                  {"type":"tween","duration":1,"repeat":"infinite","properties":[{"path":"x","from":0,"to":1}]},
                  {"type":"tween","at":\#(position),"duration":1,"properties":[{"path":"y","to":1}]}]}}
                """#)
            XCTAssertEqual(pointers(error), ["/motion/children/1/at"], position)
            XCTAssertTrue(error.problems.first?.message.contains("never starts") ?? false)
        }
    }

    func testOverlapBeforeAnEndKnownOnlyWhenItComesIsRefused() {
        // A spring's length depends on its start values: "-=" from its end cannot be placed.
        let error = problems(#"""
            {"target":{"x":0,"y":0},"motion":{"type":"timeline","children":[
              {"type":"spring","response":0.3,"dampingRatio":1,"properties":[{"path":"x","to":1}]},
              {"type":"tween","at":">-=0.1","duration":1,"properties":[{"path":"y","to":1}]}]}}
            """#)
        XCTAssertEqual(pointers(error), ["/motion/children/1/at"])
    }
}
