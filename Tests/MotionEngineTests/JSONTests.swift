import XCTest
@testable import MotionEngine

final class JSONTests: XCTestCase {
    func testParsesEveryValueKindAndKeepsKeyOrder() throws {
        let json = try JSONParser.parse(#"{"b": [1, -2.5e3, true, false, null], "a": "x\u00e9\n", "c": {}}"#)
        guard case .object(let object) = json else { return XCTFail("not an object") }
        XCTAssertEqual(object.keys, ["b", "a", "c"])
        XCTAssertEqual(object["b"], .array([.number(1), .number(-2500), .bool(true), .bool(false), .null]))
        XCTAssertEqual(object["a"], .string("xé\n"))
        XCTAssertEqual(object["c"], .object(JSONObject()))
    }

    func testSurrogatePairs() throws {
        XCTAssertEqual(try JSONParser.parse(#""\ud83d\ude00""#), .string("😀"))
        XCTAssertThrowsError(try JSONParser.parse(#""\ud83d""#))
        XCTAssertThrowsError(try JSONParser.parse(#""\ude00""#))
    }

    func testRejectsMalformedInputWithOffsets() {
        let cases: [(String, Int)] = [
            ("", 0), ("{", 1), (#"{"a":1,}"#, 7), ("[1 2]", 3), ("01", 1), ("1.", 2), ("-", 1),
            ("tru", 0), (#"{"a":1} x"#, 8), ("1e999", 0), (#"{"a":1,"a":2}"#, 7), ("\"\u{01}\"", 1),
        ]
        for (text, offset) in cases {
            XCTAssertThrowsError(try JSONParser.parse(text), text) { error in
                XCTAssertEqual((error as? JSONSyntaxError)?.offset, offset, "offset for \(text.debugDescription)")
            }
        }
    }

    func testRejectsInvalidUTF8() {
        XCTAssertThrowsError(try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]))
    }

    func testBoundsNestingDepth() {
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        XCTAssertThrowsError(try JSONParser.parse(deep)) { error in
            XCTAssertTrue((error as? JSONSyntaxError)?.message.contains("nesting") ?? false)
        }
        XCTAssertNoThrow(try JSONParser.parse(String(repeating: "[", count: 200) + String(repeating: "]", count: 200)))
    }

    func testWritesShortestRoundTripNumbers() {
        func text(_ n: Double) -> String {
            var w = JSONWriter()
            w.number(n)
            return String(decoding: w.bytes, as: UTF8.self)
        }
        XCTAssertEqual(text(20), "20")
        XCTAssertEqual(text(-3), "-3")
        XCTAssertEqual(text(-0.0), "0")
        XCTAssertEqual(text(0.1), "0.1")
        XCTAssertEqual(text(1.0 / 60), "0.016666666666666666")
        XCTAssertEqual(text(1e-7), "1e-07")
        XCTAssertEqual(Double(text(1.0 / 3)), 1.0 / 3)
        XCTAssertEqual(text(1e20), "1e+20")
    }

    func testEscapesStrings() {
        let value = JSON.object(JSONObject([("k\"", .string("a\\b\u{01}\t"))]))
        XCTAssertEqual(String(decoding: value.serialized, as: UTF8.self), #"{"k\"":"a\\b\u0001\t"}"#)
    }

    func testPointerEscaping() {
        XCTAssertEqual(JSONPointer.appending("/target", "a/b~c"), "/target/a~1b~0c")
    }
}
