import XCTest
@testable import MotionEngine

/// Inputs that would make samples non-finite or the schedule meaningless are 422s that say
/// which bound was crossed, never `null` samples or silent omissions.
final class InputBoundsTests: XCTestCase {
    func expectInvalid(_ document: String, at pointer: String, mentioning text: String, file: StaticString = #filePath, line: UInt = #line) {
        let error = problems(document, file: file, line: line)
        XCTAssertEqual(error.status, 422, "\(error.problems)", file: file, line: line)
        XCTAssertEqual(error.problems.first?.pointer, pointer, "\(error.problems)", file: file, line: line)
        XCTAssertTrue(error.problems.first?.message.contains(text) ?? false, "\(error.problems)", file: file, line: line)
    }

    func testValuesAndVelocitiesAreBounded() {
        expectInvalid(#"{"motion":{"type":"tween","duration":1,"properties":[{"path":"x","from":-1e308,"to":1e308}]}}"#,
                      at: "/motion/properties/0/from", mentioning: "±1e15")
        expectInvalid(#"{"target":{"x":1e300},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":0}]}}"#,
                      at: "/motion/properties/0/path", mentioning: "outside ±1e15")
        expectInvalid(#"{"target":{"x":0},"motion":{"type":"physics","velocity":1e300,"friction":0.5,"properties":[{"path":"x"}]}}"#,
                      at: "/motion/velocity", mentioning: "±1e15")
    }

    func testWildEasingsAreRejected() {
        for easing in [#"{"type":"elastic.out","period":5e-324}"#, #"{"type":"back.in","overshoot":1e308}"#, #""cubic-bezier(0, 1e300, 1, 1)""#] {
            expectInvalid(#"{"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":\#(easing),"properties":[{"path":"x","to":1}]}}"#,
                          at: "/motion/easing", mentioning: "milder parameters")
        }
        XCTAssertNoThrow(try compile(#"{"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":{"type":"back.in","overshoot":3},"properties":[{"path":"x","to":1}]}}"#))
    }

    func testTimesAreBounded() {
        expectInvalid(#"{"target":{"x":0},"motion":{"type":"tween","delay":1e308,"duration":1e308,"properties":[{"path":"x","to":1}]}}"#,
                      at: "/motion/delay", mentioning: "at most 1e9 seconds")
        expectInvalid(#"{"target":{"x":0},"window":{"start":0,"end":1e10},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#,
                      at: "/window/end", mentioning: "at most 1e9 seconds")
    }

    func testFrictionHasAFloor() {
        expectInvalid(#"{"target":{"x":0},"motion":{"type":"physics","velocity":1,"friction":1e-300,"properties":[{"path":"x"}]}}"#,
                      at: "/motion/friction", mentioning: "1e-9")
    }

    func testPathsThatCannotBeWrittenIntoTheTarget() {
        expectInvalid(#"{"target":{"a":5},"motion":{"type":"tween","duration":1,"properties":[{"path":"a.b","from":0,"to":1}]}}"#,
                      at: "/motion/properties/0/path", mentioning: "'a' holds a number")
        expectInvalid(#"{"target":{"layers":[1,2]},"motion":{"type":"tween","duration":1,"properties":[{"path":"layers.5.o","from":0,"to":1}]}}"#,
                      at: "/motion/properties/0/path", mentioning: "an array of 2")
        expectInvalid(#"{"target":{"dot":"x"},"motion":{"type":"path","path":"M0 0 L1 0","duration":1,"output":"dot.p"}}"#,
                      at: "/motion/output", mentioning: "'dot' holds a string")
    }

    func testTimingConflictIsOnlyThe422() {
        let error = problems(#"{"target":{"x":0},"motion":{"type":"tween","easing":"linear","timing":{"duration":1},"properties":[{"path":"x","to":1}]}}"#)
        XCTAssertEqual(error.status, 422)
        XCTAssertEqual(error.problems.map(\.pointer), ["/motion/timing"])
    }

    func testSpecBezierCurvesAreTamedToo() {
        expectInvalid(#"{"target":{"x":0},"motion":{"type":"tween","timing":{"duration":1,"curve":{"type":"bezier","controlPoints":[0.5,1e300,0.5,-1e300]}},"properties":[{"path":"x","to":1}]}}"#,
                      at: "/motion/timing/curve/controlPoints", mentioning: "milder control points")
    }

    func testRetargetTargetsAreBounded() throws {
        let timeline = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#)
        XCTAssertThrowsError(try timeline.retargeting("x", to: .number(1e100), at: 0.5)) { error in
            XCTAssertEqual((error as? RetargetError)?.kind, .invalid)
        }
    }

    func testBoundsApplyToDynamicNodes() throws {
        let spring = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"spring","response":0.5,"dampingRatio":0.3,"properties":[{"path":"x","to":1,"bounds":{"min":0,"max":0.5,"mode":"clamp"}}]}}"#)
        XCTAssertEqual(spring.values(of: "x").max(), 0.5)
        let physics = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"physics","velocity":100,"friction":0.5,"properties":[{"path":"x","bounds":{"min":0,"max":100,"mode":"rubberband"}}]}}"#)
        let last = try XCTUnwrap(physics.values(of: "x").last)
        XCTAssertGreaterThan(last, 100)
        XCTAssertLessThan(last, 140, "rubber-banded, not the raw travel of about 143")
    }

    func testMissingPathsAreReportedWithStructuralProblems() {
        let error = problems(#"{"fps":"x","target":{"a":0},"motion":{"type":"group","children":[{"type":"tween","duration":1,"properties":[{"path":"frame.q","to":1}]},{"type":"tween","duration":-1,"properties":[{"path":"a","to":1}]}]}}"#)
        XCTAssertEqual(error.status, 400)
        XCTAssertEqual(Set(error.problems.map(\.pointer)), ["/fps", "/motion/children/0/properties/0/path", "/motion/children/1/duration"])
    }

    func testPathsProvidedByOtherMotionsAreNotReported() throws {
        // An explicit `from` elsewhere, a path node's output and a colour component all provide a start.
        _ = try compile(##"""
        {"target":{"tint":"#336699"},"motion":{"type":"sequence","steps":[
          {"type":"tween","duration":1,"properties":[{"path":"frame","from":{"x":0},"to":{"x":1}}]},
          {"type":"tween","duration":1,"properties":[{"path":"frame.x","to":2}]},
          {"type":"path","path":"M0 0 L1 0","duration":1,"output":"dot"},
          {"type":"tween","duration":1,"properties":[{"path":"dot.y","to":3},{"path":"tint.alpha","to":0}]}]}}
        """##)
    }
    /// Problems are all counted and the first hundred kept; a reader that finds one past the
    /// hundredth still sees it (readers compare `Diagnostics.count`, not the kept list).
    func testProblemsPastTheHundredthAreCountedAndStillRefuse() {
        let diagnostics = Diagnostics()
        for index in 0..<150 { diagnostics.invalid("/a/\(index)", "bad") }
        diagnostics.malformed("/late", "unknown field")
        let error = DocumentError(diagnostics)
        XCTAssertEqual(error.count, 151)
        XCTAssertEqual(error.problems.map(\.pointer), (0..<100).map { "/a/\($0)" })
        XCTAssertEqual(error.unlisted, 51)
        XCTAssertEqual(error.status, 400, "the unlisted malformed problem decides the status")
        XCTAssertEqual(DocumentError(Array(repeating: Problem(pointer: "", message: "m", kind: .invalid), count: 101)).problems.count, 100)

        // 150 keyframe properties whose second easing is unknown: every one is found (the
        // keyframe reader checks the count before and after its easings), none compiled.
        let bad = (0..<150).map { #"{"path":"x\#($0)","keyframes":[0,1,2],"easings":["linear","nope"]}"# }.joined(separator: ",")
        let target = (0..<150).map { #""x\#($0)":0"# }.joined(separator: ",")
        let refused = problems(#"{"target":{\#(target)},"motion":{"type":"tween","duration":1,"properties":[\#(bad)]}}"#)
        XCTAssertEqual(refused.status, 422)
        XCTAssertEqual(refused.count, 150)
        XCTAssertEqual(refused.problems.last?.pointer, "/motion/properties/99/easings/1")
    }
}
