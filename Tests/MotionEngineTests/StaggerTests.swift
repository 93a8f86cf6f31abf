import XCTest
@testable import MotionEngine

/// Wildcard paths and `stagger` (docs/authoring.md) against hand-computed offsets.
final class StaggerTests: XCTestCase {
    /// `n` items, each `{"o": 0}`.
    private func items(_ n: Int) -> String { "[" + Array(repeating: #"{"o":0}"#, count: n).joined(separator: ",") + "]" }

    /// The start of each `items.<i>.o` track: every element runs 0 → 1 linearly over 10 s
    /// from its start s (< 10), so its value at t = 10 s is (10 − s)/10.
    private func starts(_ stagger: String, count: Int, file: StaticString = #filePath, line: UInt = #line) throws -> [Double] {
        let timeline = try compile(#"""
            {"fps":1,"target":{"items":\#(items(count))},"output":{"events":false},
             "motion":{"type":"tween","duration":10,"stagger":\#(stagger),"properties":[{"path":"items.*.o","to":1}]}}
            """#, file: file, line: line)
        return try (0..<count).map { index in
            let track = try XCTUnwrap(timeline.tracks.first { $0.path == "items.\(index).o" }, file: file, line: line)
            return 10 - 10 * track.value(at: 10)
        }
    }

    private func assertClose(_ actual: [Double], _ expected: [Double], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(actual.count, expected.count, file: file, line: line)
        for (a, e) in zip(actual, expected) { XCTAssertEqual(a, e, accuracy: 1e-9, "\(actual) vs \(expected)", file: file, line: line) }
    }

    func testEveryFromForm() throws {
        assertClose(try starts(#"{"each":0.5}"#, count: 5), [0, 0.5, 1, 1.5, 2])
        assertClose(try starts(#"{"each":0.5,"from":"first"}"#, count: 5), [0, 0.5, 1, 1.5, 2])
        assertClose(try starts(#"{"each":0.5,"from":"last"}"#, count: 5), [2, 1.5, 1, 0.5, 0])
        assertClose(try starts(#"{"each":0.5,"from":"center"}"#, count: 5), [1, 0.5, 0, 0.5, 1])
        assertClose(try starts(#"{"each":0.5,"from":"center"}"#, count: 4), [0.75, 0.25, 0.25, 0.75])
        assertClose(try starts(#"{"each":0.5,"from":"edges"}"#, count: 5), [0, 0.5, 1, 0.5, 0])
        assertClose(try starts(#"{"each":0.5,"from":1}"#, count: 5), [0.5, 0, 0.5, 1, 1.5])
    }

    func testAmountSpreadsTheWholeRange() throws {
        assertClose(try starts(#"{"amount":1}"#, count: 5), [0, 0.25, 0.5, 0.75, 1])
        assertClose(try starts(#"{"amount":1,"from":"center"}"#, count: 5), [1, 0.5, 0, 0.5, 1])
        assertClose(try starts(#"{"amount":3}"#, count: 1), [0])
    }

    func testEasingDistributesTheOffsets() throws {
        // S·E(d/D) with E = quadratic.in, S = amount = 2; with each: S = each·D = 0.5·4.
        assertClose(try starts(#"{"amount":2,"easing":"quadratic.in"}"#, count: 5), [0, 0.125, 0.5, 1.125, 2])
        assertClose(try starts(#"{"each":0.5,"easing":"quadratic.in"}"#, count: 5), [0, 0.125, 0.5, 1.125, 2])
    }

    func testGridDistancesAreEuclideanOrAlongOneAxis() throws {
        let r2 = 2.0.squareRoot(), r5 = 5.0.squareRoot(), r8 = 8.0.squareRoot()
        // 3 × 3, row order: cell i is (i / 3, i % 3).
        assertClose(try starts(#"{"each":1,"grid":[3,3],"from":"center"}"#, count: 9), [r2, 1, r2, 1, 0, 1, r2, 1, r2])
        assertClose(try starts(#"{"each":1,"grid":[3,3]}"#, count: 9), [0, 1, 2, 1, r2, r5, 2, r5, r8])
        assertClose(try starts(#"{"each":1,"grid":[3,3],"from":"last"}"#, count: 9), [r8, r5, 2, r5, r2, 1, 2, 1, 0])
        assertClose(try starts(#"{"each":1,"grid":[3,3],"from":5}"#, count: 9), [r5, r2, 1, 2, 1, 0, r5, r2, 1])
        assertClose(try starts(#"{"each":1,"grid":[3,3],"from":"edges"}"#, count: 9), [0, r2 - 1, 0, r2 - 1, r2, r2 - 1, 0, r2 - 1, 0])
        assertClose(try starts(#"{"each":1,"grid":[3,3],"from":"center","axis":"x"}"#, count: 9), [1, 0, 1, 1, 0, 1, 1, 0, 1])
        assertClose(try starts(#"{"each":1,"grid":[3,3],"from":"center","axis":"y"}"#, count: 9), [1, 1, 1, 0, 0, 0, 1, 1, 1])
        // A 2 × 4 grid holding 7 elements; amount spreads over the largest distance (3, cell 3).
        let d = [0, 1, 2, 3, 1, r2, r5]
        let largest = d.max()!
        assertClose(try starts(#"{"amount":2,"grid":[2,4]}"#, count: 7), d.map { 2 * $0 / largest })
    }

    func testSplitMix64MatchesTheReferenceSequence() {
        // The published SplitMix64 outputs for seed 1234567.
        var generator = MotionEngine.SplitMix64(seed: 1_234_567)
        XCTAssertEqual([generator.next(), generator.next(), generator.next()],
                       [6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423])
    }

    func testRandomIsASeededPermutationOfTheFirstOffsets() throws {
        // Fisher–Yates over SplitMix64 (computed independently from the algorithm's definition):
        // seed 7 → [7, 4, 6, 1, 2, 5, 0, 3], seed 8 → [3, 5, 1, 0, 2, 6, 7, 4].
        XCTAssertEqual(MotionEngine.SplitMix64.permutation(count: 8, seed: 7), [7, 4, 6, 1, 2, 5, 0, 3])
        XCTAssertEqual(MotionEngine.SplitMix64.permutation(count: 8, seed: 8), [3, 5, 1, 0, 2, 6, 7, 4])
        XCTAssertEqual(MotionEngine.SplitMix64.permutation(count: 10, seed: 0), [4, 9, 2, 5, 1, 7, 6, 0, 3, 8])
        assertClose(try starts(#"{"each":0.25,"from":"random","seed":7}"#, count: 8), [7, 4, 6, 1, 2, 5, 0, 3].map { 0.25 * Double($0) })
        assertClose(try starts(#"{"each":0.25,"from":"random","seed":8}"#, count: 8), [3, 5, 1, 0, 2, 6, 7, 4].map { 0.25 * Double($0) })
        assertClose(try starts(#"{"each":0.25,"from":"random"}"#, count: 10), [4, 9, 2, 5, 1, 7, 6, 0, 3, 8].map { 0.25 * Double($0) })
        XCTAssertEqual(try starts(#"{"each":0.25,"from":"random","seed":99}"#, count: 8),
                       try starts(#"{"each":0.25,"from":"random","seed":99}"#, count: 8))
    }

    func testWildcardsRunOverArraysAndObjectsInDocumentOrder() throws {
        let timeline = try compile(#"""
            {"fps":1,"target":{"rows":[{"cells":[{"v":0},{"v":0}]},{"cells":[{"v":0}]}],"named":{"zeta":{"v":0},"alpha":{"v":0}}},
             "output":{"events":false},
             "motion":{"type":"tween","duration":1,"properties":[{"path":"rows.*.cells.*.v","to":1},{"path":"named.*.v","to":2}]}}
            """#)
        XCTAssertEqual(timeline.tracks.map(\.path), ["rows.0.cells.0.v", "rows.0.cells.1.v", "rows.1.cells.0.v", "named.zeta.v", "named.alpha.v"])
        XCTAssertEqual(timeline.values(of: "named.alpha.v"), [0, 2])
        // An index after a `*` names an array's element, or an object's member of that name.
        let indexed = try compile(#"""
            {"fps":1,"target":{"grid":[[{"v":0},{"v":0}],{"1":{"v":0}},[{"v":0},{"v":0},{"v":0}]]},
             "output":{"events":false},
             "motion":{"type":"tween","duration":1,"properties":[{"path":"grid.*.1.v","to":1}]}}
            """#)
        XCTAssertEqual(indexed.tracks.map(\.path), ["grid.0.1.v", "grid.1.1.v", "grid.2.1.v"])
    }

    func testWildcardMatchingNothingIsRefusedNamingThePath() {
        for path in ["items.*.o", "missing.*", "scalar.*", "items.*.*"] {
            let error = problems(#"""
                {"target":{"items":[],"scalar":3},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","from":0,"to":1},{"path":"\#(path)","to":1}]}}
                """#)
            XCTAssertEqual(error.status, 422, path)
            XCTAssertEqual(error.problems.map(\.pointer), ["/motion/properties/1/path"], path)
        }
    }

    func testExpansionCountsTowardThePropertyLimitBeforeAllocating() {
        var limits = EngineLimits.default
        limits.maxProperties = 10
        XCTAssertNoThrow(try TimelineCompiler(limits: limits).compile(Array(#"""
            {"target":{"items":\#(items(9))},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","from":0,"to":1},{"path":"items.*.o","to":1}]}}
            """#.utf8)))
        let error = problems(#"""
            {"target":{"items":\#(items(10))},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","from":0,"to":1},{"path":"items.*.o","to":1}]}}
            """#, limits: limits)
        XCTAssertEqual(error.problems.map(\.pointer), ["/motion/properties/1/path"])
        XCTAssertTrue(error.problems.first?.message.contains("max-properties") ?? false)
    }

    /// The walks of a document's `*` paths over `target` are bounded together, matching or
    /// not (1,000 entries for each property `max-properties` allows): 2,500 properties `a.*.*`
    /// over 390,000 elements, of which one matched, walked for 31 s.
    func testWildcardWalksAreBoundedTogether() throws {
        var limits = EngineLimits.default
        limits.maxProperties = 10
        XCTAssertEqual(limits.wildcardVisits, 10_000)
        // 4,000 elements, one of which is an object: a walk of `items.*.*` takes the root,
        // `items`, the 4,000 elements and the object's one member (4,003 entries) to find one
        // match.
        let elements = Array(repeating: "0", count: 3_999).joined(separator: ",") + #",{"o":0}"#
        let document = { (walks: Int) in
            let properties = Array(repeating: #"{"path":"items.*.*","from":0,"to":1}"#, count: walks).joined(separator: ",")
            return #"{"fps":1,"target":{"items":[\#(elements)]},"motion":{"type":"tween","duration":1,"properties":[\#(properties)]}}"#
        }
        XCTAssertEqual(try compile(document(2), limits: limits).tracks.count, 1, "two walks of 4,003 fit in 10,000")
        let error = problems(document(3), limits: limits)
        XCTAssertEqual(error.problems.map(\.pointer), ["/motion/properties/2/path"])
        XCTAssertTrue(error.problems.first?.message.contains("10000 entries of target walked") ?? false, "\(error.problems)")
        XCTAssertTrue(error.problems.first?.message.contains("max-properties") ?? false)
    }

    func testStaggerOnGroupAndTimelineChildrenAddsToTheirDelay() throws {
        let group = try compile(#"""
            {"fps":2,"target":{"a":0,"b":0,"c":0},
             "motion":{"type":"group","stagger":{"each":0.5,"from":"last"},"children":[
               {"type":"tween","id":"a","duration":1,"properties":[{"path":"a","to":1}]},
               {"type":"tween","id":"b","delay":0.25,"duration":1,"properties":[{"path":"b","to":1}]},
               {"type":"tween","id":"c","duration":1,"properties":[{"path":"c","to":1}]}]}}
            """#)
        XCTAssertEqual(group.events.filter { $0.kind == .started }.map { "\($0.motion)@\(format($0.time))" },
                       ["/motion@0", "c@0", "b@0.75", "a@1"])
        XCTAssertEqual(group.duration, 2)

        // In a timeline the offset adds to each child's delay, which adds to its position.
        let timeline = try compile(#"""
            {"fps":2,"target":{"a":0,"b":0},"output":{"schedule":true},
             "motion":{"type":"timeline","stagger":{"each":0.5},"children":[
               {"type":"tween","id":"a","duration":1,"properties":[{"path":"a","to":1}]},
               {"type":"tween","id":"b","duration":1,"properties":[{"path":"b","to":1}]}]}}
            """#)
        XCTAssertEqual(timeline.schedule?.nodes.map { "\($0.motion):\(format($0.start))-\($0.end.map(format) ?? "nil")" },
                       ["/motion:0-2.5", "a:0-1", "b:1.5-2.5"])
    }

    func testStaggeredSpringBecomesOneNodePerProperty() throws {
        let timeline = try compile(#"""
            {"fps":30,"target":{"dots":[0,0,0]},
             "motion":{"type":"spring","id":"dots","delay":0.5,"response":0.4,"dampingRatio":1,"stagger":{"each":0.1},
                       "properties":[{"path":"dots.*","to":100}]}}
            """#)
        XCTAssertEqual(timeline.events.filter { $0.kind == .started }.map { "\($0.motion)@\(format($0.time))" },
                       ["dots@0.5", "dots/0@0.5", "dots/1@0.6", "dots/2@0.7"])
        // Each dot is the same spring, shifted by its offset.
        let first = try XCTUnwrap(timeline.tracks.first { $0.path == "dots.0" })
        let third = try XCTUnwrap(timeline.tracks.first { $0.path == "dots.2" })
        for t in stride(from: 0.5, through: 1.5, by: 0.05) {
            XCTAssertEqual(third.value(at: t + 0.2), first.value(at: t), accuracy: 1e-9)
        }
    }

    func testStaggerRefusals() {
        let cases: [(String, String)] = [
            (#"{"each":0.1,"amount":1}"#, "/motion/stagger/amount"),
            (#"{"from":"middle","each":1}"#, "/motion/stagger/from"),
            (#"{"each":1,"from":5}"#, "/motion/stagger/from"),
            (#"{"each":1,"grid":[1,2]}"#, "/motion/stagger/grid"),
            (#"{"each":1,"grid":[0,2]}"#, "/motion/stagger/grid"),
            (#"{"each":1,"axis":"x"}"#, "/motion/stagger/axis"),
            (#"{"each":1e9}"#, "/motion/stagger"),
            (#"{"each":1,"seed":-1}"#, "/motion/stagger/seed"),
            // An easing whose y overshoots puts the latest start past 1e9 s, though the
            // spread is within it.
            (#"{"amount":1e8,"easing":"cubic-bezier(0.5, 100, 0.5, 100)"}"#, "/motion/stagger"),
        ]
        for (stagger, pointer) in cases {
            let error = problems(#"""
                {"target":{"items":\#(items(3))},"motion":{"type":"tween","duration":1,"stagger":\#(stagger),"properties":[{"path":"items.*.o","to":1}]}}
                """#)
            XCTAssertEqual(error.problems.map(\.pointer), [pointer], stagger)
        }
        XCTAssertEqual(problems(#"{"target":{"x":0},"motion":{"type":"tween","duration":1,"stagger":{},"properties":[{"path":"x","to":1}]}}"#).status, 400)
        XCTAssertEqual(problems(#"{"target":{"x":0},"motion":{"type":"sequence","stagger":{"each":1},"steps":[{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}]}}"#).status, 400)
    }
}
