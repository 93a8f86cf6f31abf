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

    /// Short decimals skip strtod (`exactDecimal`); the double must be strtod's, bit for bit,
    /// on the edges of the fast path and over many random literals on both sides of it.
    func testShortDecimalsReadAsStrtodDoes() throws {
        func strtodValue(_ text: String) -> Double { text.withCString { strtod($0, nil) } }
        var literals = ["0", "-0", "-0.0", "0.1", "0.3", "1.5", "-2.25", "123456789012345", "1234567890123456",
                        "999999999999999.9", "0.000000000000000000001", "0.0000000000000000000001", "0.00000000000000000000001",
                        "9007199254740993", "1.7976931348623157", "4.9406564584124654", "0.1000000000000000055511151231257827"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100_000 {
            let integerDigits = Int.random(in: 0...17, using: &generator)
            let fractionDigits = Int.random(in: 0...24, using: &generator)
            var text = Bool.random(using: &generator) ? "-" : ""
            text += integerDigits == 0 ? "0" : String((0..<integerDigits).map { i in Character(String(i == 0 ? Int.random(in: 1...9, using: &generator) : Int.random(in: 0...9, using: &generator))) })
            if fractionDigits > 0 {
                text += "." + String((0..<fractionDigits).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
            }
            literals.append(text)
        }
        for text in literals {
            let parsed = try JSONParser.parse(text)
            XCTAssertEqual(parsed.numberValue?.bitPattern, strtodValue(text).bitPattern, text)
        }
    }

    /// Objects past `JSONObject.indexedCount` keys keep an index: lookups, replacements,
    /// removals and duplicate keys behave as in a small object.
    func testLargeObjectsFindReplaceRemoveAndRejectDuplicates() throws {
        let count = JSONObject.indexedCount * 3
        let text = "{" + (0..<count).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        guard case .object(var object) = try JSONParser.parse(text) else { return XCTFail("not an object") }
        XCTAssertEqual(object.count, count)
        for index in 0..<count { XCTAssertEqual(object["k\(index)"], .number(Double(index))) }
        XCTAssertNil(object["k\(count)"])
        object["k3"] = .string("three")
        object["k0"] = nil
        object["new"] = .bool(true)
        XCTAssertEqual(object.keys.first, "k1")
        XCTAssertEqual(object.keys.last, "new")
        XCTAssertEqual(object["k3"], .string("three"))
        XCTAssertEqual(object["k\(count - 1)"], .number(Double(count - 1)))
        XCTAssertEqual(object.position(of: "new"), count - 1)
        XCTAssertNil(object["k0"])
        let duplicate = "{" + (0..<count).map { #""k\#($0)":0"# }.joined(separator: ",") + #","k7":1}"#
        XCTAssertThrowsError(try JSONParser.parse(duplicate)) { error in
            XCTAssertEqual((error as? JSONSyntaxError)?.message, #"duplicate key "k7""#)
        }
    }

    /// Random sets and removals on one object, small and past `indexedCount` keys, with keys
    /// that share their length and first byte (so share a filter bit), the empty key and keys
    /// that are not ASCII: every lookup agrees with a plain list of pairs, and so does the
    /// parser's duplicate check.
    func testObjectLookupsAgreeWithAListOfPairs() throws {
        var generator = SystemRandomNumberGenerator()
        let keys = ["", "a", "b", "ab", "ba", "aa", "delay", "dxxxx", "duration", "durationX", "é", "éa", "ü", "x1", "x2", "x3",
                    "to", "tx", "from", "fxxx", "path", "pbth", "repeat", "rxxxxx", "id", "iz", "k0", "k1", "k2", "k3", "k4", "k5"]
        for _ in 0..<300 {
            var object = JSONObject()
            var plain: [(String, JSON)] = []
            for step in 0..<Int.random(in: 1...80, using: &generator) {
                let key = keys.randomElement(using: &generator)!
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    object[key] = nil
                    plain.removeAll { $0.0 == key }
                } else {
                    object[key] = .number(Double(step))
                    if let index = plain.firstIndex(where: { $0.0 == key }) { plain[index].1 = .number(Double(step)) } else { plain.append((key, .number(Double(step)))) }
                }
                for probe in keys {
                    XCTAssertEqual(object.position(of: probe), plain.firstIndex { $0.0 == probe }, "\(probe) after \(plain.map(\.0))")
                }
            }
            XCTAssertEqual(object.keys, plain.map(\.0))
            // The same pairs through the parser, and one more copy of a key already there.
            let text = "{" + plain.map { #""\#($0.0)":0"# }.joined(separator: ",") + "}"
            guard case .object(let parsed) = try JSONParser.parse(text) else { return XCTFail("not an object") }
            for probe in keys { XCTAssertEqual(parsed.position(of: probe), plain.firstIndex { $0.0 == probe }, probe) }
            if let repeated = plain.randomElement(using: &generator)?.0 {
                XCTAssertThrowsError(try JSONParser.parse(String(text.dropLast()) + #","\#(repeated)":1}"#))
            }
        }
    }

    /// ObjectReader marks fields by position (a bit each for the first 64, flags past that):
    /// every field not read is reported, in document order, with a suggestion among the names
    /// asked for, present or not.
    func testObjectReaderReportsUnreadFieldsPastSixtyFour() throws {
        let count = 70
        let text = "{" + (0..<count).map { #""f\#($0)":\#($0)"# }.joined(separator: ",") + #","duratoin":1}"#
        guard case .object(let object) = try JSONParser.parse(text) else { return XCTFail("not an object") }
        let diagnostics = Diagnostics()
        let reader = ObjectReader(object, at: "/x", diagnostics)
        XCTAssertEqual(reader.number("f3"), 3)
        XCTAssertEqual(reader.number("f66"), 66)
        XCTAssertNil(reader.number("duration"))
        reader.accept("f69", "absent")
        reader.finish()
        let read: Set<String> = ["f3", "f66", "f69"]
        let expected = (0..<count).map { "f\($0)" }.filter { !read.contains($0) }.map { "/x/\($0)" } + ["/x/duratoin"]
        XCTAssertEqual(diagnostics.problems.map(\.pointer), expected)
        XCTAssertEqual(diagnostics.problems.last?.message, "unknown field 'duratoin': did you mean 'duration'?")
        XCTAssertEqual(diagnostics.problems.first?.message, "unknown field 'f0': did you mean 'f3'?")
    }

    /// Each reader suggests only among the names it was asked for: a name another reader of
    /// the same decode asked for is no suggestion here.
    func testObjectReaderSuggestsOnlyItsOwnAbsentNames() throws {
        guard case .object(let outer) = try JSONParser.parse(#"{"inner":{"duratoin":1,"easing":"linear"}}"#),
              case .object(let inner)? = outer.pairs.first?.value else { return XCTFail("not objects") }
        let diagnostics = Diagnostics()
        let first = ObjectReader(outer, at: "", diagnostics)
        let second = ObjectReader(inner, at: "/inner", diagnostics)
        XCTAssertNil(first.number("duration"))
        XCTAssertNotNil(first.value("inner"))
        XCTAssertEqual(second.string("easing"), "linear")
        XCTAssertNil(second.number("delay"))
        second.finish()
        first.finish()
        XCTAssertEqual(diagnostics.problems.map(\.message), ["unknown field 'duratoin'"])
        // The same field, with `duration` asked for by its own reader.
        let again = Diagnostics()
        let third = ObjectReader(inner, at: "/inner", again)
        XCTAssertNil(third.number("duration"))
        _ = third.string("easing")
        third.finish()
        XCTAssertEqual(again.problems.map(\.message), ["unknown field 'duratoin': did you mean 'duration'?"])
    }

    // MARK: - Writing at a path in place (PropertyPath.assign, Timeline.replaceLeaf)

    private func object(_ text: String) throws -> JSONObject {
        guard case .object(let object) = try JSONParser.parse(text) else { throw JSONSyntaxError(offset: 0, message: "not an object") }
        return object
    }

    func testAssignCreatesObjectsReplacesValuesAndKeepsOrder() throws {
        var root = try object(#"{"b":1,"a":{"x":[10,{"y":2}]}}"#)
        XCTAssertTrue(PropertyPath("a.x.1.y")!.assign(.number(5), in: &root))
        XCTAssertTrue(PropertyPath("a.z.w")!.assign(.string("new"), in: &root))
        XCTAssertTrue(PropertyPath("b")!.assign(.bool(true), in: &root))
        XCTAssertTrue(PropertyPath("c")!.assign(.null, in: &root))
        XCTAssertEqual(root, try object(#"{"b":true,"a":{"x":[10,{"y":5}],"z":{"w":"new"}},"c":null}"#))
    }

    func testAFailedAssignLeavesTheDocumentAsItWas() throws {
        let before = try object(#"{"n":1,"a":{"list":[1,2],"s":"t"}}"#)
        for path in ["n.deeper", "a.list.2", "a.list.x", "a.s.k", "a.list.0.k"] {
            var root = before
            XCTAssertFalse(PropertyPath(path)!.assign(.number(9), in: &root), path)
            XCTAssertEqual(root, before, path)
            XCTAssertEqual(root.keys, before.keys, path)
        }
    }

    func testAssignDoesNotChangeCopiesSharingTheStorage() throws {
        let original = try object(#"{"a":{"b":[1,2]}}"#)
        var copy = original
        XCTAssertTrue(PropertyPath("a.b.0")!.assign(.number(7), in: &copy))
        XCTAssertEqual(original, try object(#"{"a":{"b":[1,2]}}"#))
        XCTAssertEqual(copy, try object(#"{"a":{"b":[7,2]}}"#))
    }

    func testManyAssignmentsIntoOneObject() throws {
        // Past JSONObject.indexedCount keys the object keeps a hash index: written in place too.
        var root = JSONObject()
        for k in 0..<200 { XCTAssertTrue(PropertyPath("p\(k)")!.assign(.number(Double(k)), in: &root)) }
        for k in 0..<200 { XCTAssertTrue(PropertyPath("p\(k)")!.assign(.number(Double(-k)), in: &root)) }
        XCTAssertEqual(root.count, 200)
        XCTAssertEqual(root.keys.first, "p0")
        XCTAssertEqual(root["p150"], .number(-150))
    }

    func testReplaceLeafWritesOnlyExistingLeaves() throws {
        var node = JSON.object(try object(#"{"a":[1,{"b":2}],"c":3}"#))
        let shared = node
        Timeline.replaceLeaf(&node, at: ["a", "1", "b"][...], with: 4)
        Timeline.replaceLeaf(&node, at: ["a", "5"][...], with: 4)   // no such index
        Timeline.replaceLeaf(&node, at: ["missing"][...], with: 4)  // no such key
        XCTAssertEqual(node, .object(try object(#"{"a":[1,{"b":4}],"c":3}"#)))
        XCTAssertEqual(shared, .object(try object(#"{"a":[1,{"b":2}],"c":3}"#)))
    }

    func testTakeMovesTheContainerOut() {
        var node = JSON.array([.number(1)])
        XCTAssertNil(node.takeObject())
        XCTAssertEqual(node, .array([.number(1)]))
        XCTAssertEqual(node.takeArray(), [.number(1)])
        XCTAssertEqual(node, .null)
    }

    func testPropertyPathSegments() {
        XCTAssertEqual(PropertyPath("x")?.segments, ["x"])
        XCTAssertEqual(PropertyPath("layers.2.opacity")?.segments, ["layers", "2", "opacity"])
        XCTAssertEqual(PropertyPath("é.x")?.segments, ["é", "x"])
        XCTAssertEqual(PropertyPath("a.\u{301}b")?.segments, ["a.\u{301}b"]) // "." + combining mark is one character
        for bad in ["", ".", "a.", ".a", "a..b", "é..x", "é."] { XCTAssertNil(PropertyPath(bad), bad) }
        let longest = Array(repeating: "s", count: PropertyPath.maxSegments).joined(separator: ".")
        XCTAssertEqual(PropertyPath(longest)?.segments.count, PropertyPath.maxSegments)
        XCTAssertNil(PropertyPath(longest + ".s"))
        // Byte and Character splits agree wherever the text is ASCII.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let text = String((0..<Int.random(in: 1...8, using: &generator)).map { _ in "ab.1".randomElement(using: &generator)! })
            let expected = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            XCTAssertEqual(PropertyPath(text)?.segments, expected.contains("") ? nil : expected, text)
        }
    }
}
