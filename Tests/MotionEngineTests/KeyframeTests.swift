import Foundation
import XCTest
@testable import MotionEngine

/// Multi-keyframe tween properties (docs/authoring.md), against values computed by hand.
final class KeyframeTests: XCTestCase {
    private func tween(_ property: String, duration: Double = 1, fps: Double = 4, target: String = #"{"x":0}"#, extra: String = "") throws -> Timeline {
        try compile(#"{"fps":\#(fps),"target":\#(target),"motion":{"type":"tween","duration":\#(duration)\#(extra),"properties":[\#(property)]}}"#)
    }

    private func assertValues(_ actual: [Double], _ expected: [Double], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(actual.count, expected.count, "\(actual)", file: file, line: line)
        for (a, e) in zip(actual, expected) { XCTAssertEqual(a, e, accuracy: 1e-9, "\(actual)", file: file, line: line) }
    }

    func testEvenlySpacedKeyframes() throws {
        // Offsets 0, ½, 1 over 2 s: 0 → 100 in the first second, 100 → 50 in the second.
        let timeline = try tween(#"{"path":"x","keyframes":[0,100,50]}"#, duration: 2)
        assertValues(timeline.values(of: "x"), [0, 25, 50, 75, 100, 87.5, 75, 62.5, 50])
        XCTAssertEqual(timeline.document(at: 2)["x"], .number(50))
    }

    func testNullStartAndOffsets() throws {
        // From the target's 10 to 20 by u = ¼, then to 0 over the remaining ¾.
        let timeline = try tween(#"{"path":"x","keyframes":[null,20,0],"offsets":[0,0.25,1]}"#, target: #"{"x":10}"#)
        assertValues(timeline.values(of: "x"), [10, 20, 20 - 20.0 / 3, 20 - 40.0 / 3, 0])
    }

    func testNullStartTakesTheValueEarlierMotionsLeft() throws {
        let timeline = try compile(#"""
        {"fps":2,"target":{"x":0},"motion":{"type":"sequence","steps":[
          {"type":"tween","duration":1,"properties":[{"path":"x","to":40}]},
          {"type":"tween","duration":1,"properties":[{"path":"x","keyframes":[null,0,10]}]}]}}
        """#)
        assertValues(timeline.values(of: "x"), [0, 20, 40, 0, 10])
    }

    func testEasingsPerSegmentAndOneEasingForAll() throws {
        // Segment 0: 100·v² (quadratic.in); segment 1: 100 + 100·v(2 − v) (quadratic.out).
        let each = try tween(#"{"path":"x","keyframes":[0,100,200],"easings":["quadratic.in","quadratic.out"]}"#, duration: 2)
        assertValues(each.values(of: "x"), [0, 6.25, 25, 56.25, 100, 143.75, 175, 193.75, 200])
        // "easing" on the property applies to both segments.
        let all = try tween(#"{"path":"x","keyframes":[0,100,200],"easing":"quadratic.in"}"#, duration: 2)
        assertValues(all.values(of: "x"), [0, 6.25, 25, 56.25, 100, 106.25, 125, 156.25, 200])
        // The node's easing is the default for every segment.
        let node = try tween(#"{"path":"x","keyframes":[0,100,200]}"#, duration: 2, extra: #","easing":"quadratic.in""#)
        XCTAssertEqual(node.values(of: "x"), all.values(of: "x"))
    }

    func testEqualOffsetsJump() throws {
        // 0 → 10 over the first half, a jump to 50 at ½, then 50 → 100.
        let timeline = try tween(#"{"path":"x","keyframes":[0,10,50,100],"offsets":[0,0.5,0.5,1]}"#)
        assertValues(timeline.values(of: "x"), [0, 5, 50, 75, 100])
        // A jump at the very end lands on the last keyframe.
        let end = try tween(#"{"path":"x","keyframes":[0,10,100],"offsets":[0,1,1]}"#)
        assertValues(end.values(of: "x"), [0, 2.5, 5, 7.5, 100])
    }

    func testTwoKeyframesAreExactlyFromTo() throws {
        let extra = #","easing":"quadratic.inOut","reverseEasing":"cubic.in","reverses":true,"repeat":1"#
        let keyed = try tween(#"{"path":"x","keyframes":[5,100]}"#, fps: 30, extra: extra)
        let plain = try tween(#"{"path":"x","from":5,"to":100}"#, fps: 30, extra: extra)
        XCTAssertEqual(keyed.values(of: "x"), plain.values(of: "x"))
        XCTAssertEqual(keyed.eventSummary, plain.eventSummary)
    }

    func testCompositeKeyframes() throws {
        let timeline = try tween(#"{"path":"p","keyframes":[null,{"x":10,"y":0},{"x":10,"y":20}]}"#, duration: 2, fps: 2,
                                 target: #"{"p":{"x":0,"y":0,"z":7}}"#)
        assertValues(timeline.values(of: "p.x"), [0, 5, 10, 10, 10])
        assertValues(timeline.values(of: "p.y"), [0, 0, 0, 10, 20])
        XCTAssertEqual(timeline.tracks.map(\.path).sorted(), ["p.x", "p.y"])
        guard case .object(let p)? = timeline.document(at: 1.5)["p"] else { return XCTFail() }
        XCTAssertEqual(p["x"], .number(10))
        XCTAssertEqual(p["y"], .number(10))
        XCTAssertEqual(p["z"], .number(7))
    }

    func testColourKeyframes() throws {
        // Black → red → magenta: red rises in the first second, blue in the second; green
        // never changes, so it has no track.
        let timeline = try tween(##"{"path":"tint","keyframes":[null,"#ff0000","#ff00ff"]}"##, duration: 2, fps: 2,
                                 target: ##"{"tint":"#000000"}"##)
        assertValues(timeline.values(of: "tint.red"), [0, 0.5, 1, 1, 1])
        assertValues(timeline.values(of: "tint.blue"), [0, 0, 0, 0.5, 1])
        XCTAssertFalse(timeline.tracks.contains { $0.path == "tint.green" })
        XCTAssertEqual(timeline.document(at: 2)["tint"], .string("#ff00ffff"))
        XCTAssertEqual(timeline.document(at: 1)["tint"], .string("#ff0000ff"))
    }

    func testHueKeyframesTakeTheShortWayFromEachKeyframe() throws {
        // 350 → 10 goes up through 360 (+20), then 10 → 300 goes down through 0 (−70).
        let timeline = try tween(##"{"path":"tint.hue","keyframes":[350,10,300]}"##, duration: 2, fps: 2, target: ##"{"tint":"#ff0000"}"##)
        assertValues(timeline.values(of: "tint.hue"), [350, 0, 10, 335, 300])
    }

    func testReverseLegRunsTheKeyframesBack() throws {
        // Forward: 0 → 100 → 50. Back: 50 → 100 → 0, each half a leg.
        let timeline = try tween(#"{"path":"x","keyframes":[0,100,50]}"#, extra: #","reverses":true"#)
        assertValues(timeline.values(of: "x"), [0, 50, 100, 75, 50, 75, 100, 50, 0])
        // A reverseEasing eases every segment of the way back.
        let eased = try tween(#"{"path":"x","keyframes":[0,100,50]}"#, extra: #","reverses":true,"reverseEasing":"quadratic.in""#)
        assertValues(eased.values(of: "x"), [0, 50, 100, 75, 50, 62.5, 100, 75, 0])
    }

    func testRepeatsRestartAtTheFirstKeyframe() throws {
        let timeline = try tween(#"{"path":"x","keyframes":[0,100,50]}"#, fps: 2, extra: #","repeat":1"#)
        assertValues(timeline.values(of: "x"), [0, 100, 0, 100, 50])
        XCTAssertEqual(timeline.eventSummary, ["started@0", "repeated@1", "completed@2"])
    }

    func testReversingGroupRetracesTheKeyframes() throws {
        let timeline = try compile(#"""
        {"fps":2,"target":{"x":0},"motion":{"type":"group","reverses":true,"children":[
          {"type":"tween","duration":1,"properties":[{"path":"x","keyframes":[0,100,50]}]}]}}
        """#)
        assertValues(timeline.values(of: "x"), [0, 100, 50, 100, 0])
    }

    func testAdditiveKeyframes() throws {
        // Adds v(t) − 0 to the target's 10.
        let timeline = try tween(#"{"path":"x","keyframes":[0,20,0]}"#, fps: 2, target: #"{"x":10}"#, extra: #","additive":true"#)
        assertValues(timeline.values(of: "x"), [10, 30, 10])
        // With weight ½ over a plain tween 0 → 100.
        let blended = try compile(#"""
        {"fps":2,"target":{"x":0},"motion":{"type":"group","children":[
          {"type":"tween","duration":1,"properties":[{"path":"x","to":100}]},
          {"type":"tween","duration":1,"additive":true,"additiveWeight":0.5,"properties":[{"path":"x","keyframes":[0,20,0]}]}]}}
        """#)
        assertValues(blended.values(of: "x"), [0, 60, 100])
    }

    func testBoundsApplyToKeyframes() throws {
        let timeline = try tween(#"{"path":"x","keyframes":[0,150,50],"bounds":{"min":0,"max":100,"mode":"clamp"}}"#)
        assertValues(timeline.values(of: "x"), [0, 75, 100, 100, 50])
    }

    func testLinearEasingEndingOffOneOnTheLastSegment() throws {
        // linear(1, 0) on the last segment 100 → 50: it ends on 100 + (50 − 100)·0 = 100.
        let timeline = try tween(#"{"path":"x","keyframes":[0,100,50],"easings":["linear","linear(1, 0)"]}"#, fps: 2)
        assertValues(timeline.values(of: "x"), [0, 50, 100])
    }

    /// Random values: equal shape signatures exactly when the numeric leaves have the same
    /// paths in the same order (a path step an object key or an array index, told apart);
    /// `numbers(of:)` is `leaves(of:)`'s values; `isPlainValue` is true exactly when
    /// `checkValueType` reports nothing.
    func testShapeSignaturesNumbersAndPlainValues() {
        var random = SystemRandomNumberGenerator()
        let keys = ["a", "b", "0", "1", "a.b", "a|b", "é", ""]
        func value(_ depth: Int) -> JSON {
            switch Int.random(in: 0...(depth > 2 ? 1 : 5), using: &random) {
            case 0: return .number(Double(Int.random(in: -3...3, using: &random)))
            case 1: return Int.random(in: 0...20, using: &random) == 0 ? .bool(true) : .number(1e16 * Double(Int.random(in: 0...1, using: &random)))
            case 2: return .string(["#fff", "nope"].randomElement(using: &random)!)
            case 3, 4: return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in value(depth + 1) })
            default:
                var object = JSONObject()
                for key in keys.shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random)) { object[key] = value(depth + 1) }
                return .object(object)
            }
        }
        enum Step: Equatable { case key(String), index(Int) }
        func typedPaths(_ value: JSON, _ prefix: [Step] = []) -> [[Step]] {
            switch value {
            case .number: return [prefix]
            case .object(let object): return object.pairs.flatMap { typedPaths($0.value, prefix + [.key($0.key)]) }
            case .array(let items): return items.enumerated().flatMap { typedPaths($1, prefix + [.index($0)]) }
            default: return []
            }
        }
        let decoder = DocumentDecoder()
        var values = (0..<3_000).map { _ in value(0) }
        values += [.array([.number(1)]), .object(JSONObject([("0", .number(2))])), .object(JSONObject([("a.b", .number(1))])),
                   .object(JSONObject([("a", .object(JSONObject([("b", .number(1))])))])), .string("#000")]
        var equalPairs = 0
        var a: [UInt8] = [], b: [UInt8] = []
        for (i, x) in values.enumerated() {
            XCTAssertEqual(ValueShape.numbers(of: x), ValueShape.leaves(of: x).map(\.value))
            let diagnostics = Diagnostics()
            decoder.checkValueType(x, at: "/v", diagnostics)
            XCTAssertEqual(decoder.isPlainValue(x), diagnostics.count == 0, "\(x)")
            ValueShape.signature(of: x, into: &a)
            for y in values[max(0, i - 40)...i] {
                ValueShape.signature(of: y, into: &b)
                let same: Bool
                switch (x, y) {
                case (.string, .string): same = true
                case (.string, _), (_, .string): same = false
                default: same = typedPaths(x) == typedPaths(y)
                }
                XCTAssertEqual(a == b, same, "\(x) vs \(y)")
                if same { equalPairs += 1 }
            }
        }
        XCTAssertGreaterThan(equalPairs, values.count, "values of the same shape were compared too")
        ValueShape.signature(of: values[values.count - 5], into: &a)
        ValueShape.signature(of: values[values.count - 4], into: &b)
        XCTAssertNotEqual(a, b, "[1] and {\"0\": 2}")
    }

    func testKeyframeProblems() {
        func check(_ property: String, _ pointer: String, _ status: Int, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
            let error = problems(##"{"target":{"x":0,"c":"#000"},"motion":{"type":"tween","duration":1,"properties":[\##(property)]}}"##, file: file, line: line)
            XCTAssertEqual(error.status, status, "\(error.problems)", file: file, line: line)
            XCTAssertTrue(error.problems.contains { $0.pointer == pointer && $0.message.contains(text) }, "\(error.problems)", file: file, line: line)
        }
        let p = "/motion/properties/0"
        check(#"{"path":"x","keyframes":[1]}"#, "\(p)/keyframes", 422, "at least 2")
        let many = (0...KeyframeLimits.maxKeyframes).map(String.init).joined(separator: ",")
        check(#"{"path":"x","keyframes":[\#(many)]}"#, "\(p)/keyframes", 422, "limit of 1000 keyframes")
        check(#"{"path":"x","keyframes":[0,null,1]}"#, "\(p)/keyframes/1", 400, "only the first")
        check(#"{"path":"x","keyframes":[0,{"a":1}]}"#, "\(p)/keyframes/1", 422, "different shape")
        check(##"{"path":"c","keyframes":["#fff",1]}"##, "\(p)/keyframes/1", 422, "different shape")
        // A key "0" is not an index, nor "a.b" the path a, b (their joined names were equal).
        check(#"{"path":"x","keyframes":[[1],{"0":2}]}"#, "\(p)/keyframes/1", 422, "different shape")
        check(#"{"path":"x","keyframes":[{"a.b":1},{"a":{"b":2}}]}"#, "\(p)/keyframes/1", 422, "different shape")
        check(#"{"path":"x","keyframes":[{"a":1,"b":2},{"b":1,"a":2}]}"#, "\(p)/keyframes/1", 422, "different shape")
        // A member's problem names the member.
        check(#"{"path":"x","keyframes":[[1,2],[3,true]]}"#, "\(p)/keyframes/1/1", 400, "must be a number")
        check(#"{"path":"x","keyframes":[{"a":1},{"a":1e16}]}"#, "\(p)/keyframes/1/a", 422, "within ±1e15")
        check(#"{"path":"x","keyframes":[0,1],"to":2}"#, "\(p)/to", 422, "replaces")
        check(#"{"path":"x","keyframes":[0,1,2],"offsets":[0,1]}"#, "\(p)/offsets", 422, "one offset per keyframe")
        check(#"{"path":"x","keyframes":[0,1,2],"offsets":[0.1,0.5,1]}"#, "\(p)/offsets", 422, "start at 0")
        check(#"{"path":"x","keyframes":[0,1,2,3],"offsets":[0,0.6,0.4,1]}"#, "\(p)/offsets/2", 422, "must not decrease")
        check(#"{"path":"x","keyframes":[0,1,2],"easings":["linear"]}"#, "\(p)/easings", 422, "one easing per segment")
        check(#"{"path":"x","keyframes":[0,1,2],"easing":"linear","easings":["linear","linear"]}"#, "\(p)/easings", 422, "not both")
        check(#"{"path":"x","keyframes":[0,1,2],"easings":["linear","nope"]}"#, "\(p)/easings/1", 422, "nope")
        check(#"{"path":"x","offsets":[0,1],"to":1}"#, "\(p)/offsets", 422, "only with 'keyframes'")
        check(#"{"path":"y","keyframes":[null,1]}"#, "\(p)/path", 422, "no value at 'y'")
        // A spring-curve timing takes its length from the property's two ends.
        let spring = problems(#"{"target":{"x":0},"motion":{"type":"tween","timing":{"curve":{"type":"spring","mass":1,"tension":100,"friction":10}},"properties":[{"path":"x","keyframes":[0,1,2]}]}}"#)
        XCTAssertEqual(spring.problems.map(\.pointer), ["\(p)/keyframes"])
        XCTAssertEqual(spring.status, 422)
    }
}
