import XCTest
@testable import MotionEngine

/// The ETag hash and the canonical request form (docs/authoring.md).
final class RequestTagTests: XCTestCase {
    func testFNV1a128KnownAnswers() {
        // The FNV-1a 128-bit reference values (offset basis for "", and the published "a"
        // and "foobar" vectors).
        let vectors: [(String, String)] = [
            ("", "6c62272e07bb014262b821756295c58d"),
            ("a", "d228cb696f1a8caf78912b704e4a8964"),
            ("foobar", "343e1662793c64bf6f0d3597ba446f18"),
        ]
        for (input, expected) in vectors {
            var hash = FNV1a128()
            hash.add(Array(input.utf8))
            XCTAssertEqual(hash.hex, expected, input)
        }
    }

    func testCanonicalFormIgnoresSpellingButKeepsOrderWhereItMatters() throws {
        func canonical(_ text: String) throws -> String { String(decoding: RequestTag.canonical(try JSONParser.parse(Array(text.utf8))), as: UTF8.self) }
        XCTAssertEqual(try canonical(#" { "motion" : {"type":"tween","duration":1.0}, "fps" : 6e1 } "#),
                       #"{"fps":60,"motion":{"duration":1,"type":"tween"}}"#)
        XCTAssertEqual(try canonical(#"{"target":{"b":1,"a":{"z":1,"y":2}},"labels":{"q":1,"p":2}}"#),
                       #"{"labels":{"q":1,"p":2},"target":{"b":1,"a":{"z":1,"y":2}}}"#)
        XCTAssertEqual(try canonical(#"{"properties":[{"to":{"y":1,"x":2},"path":"p"}]}"#),
                       #"{"properties":[{"path":"p","to":{"y":1,"x":2}}]}"#)
    }

    func testTagCoversTheEngineVersionAndTheEndpoint() throws {
        let document = try JSONParser.parse(Array(#"{"motion":{"type":"tween","duration":1,"properties":[{"path":"x","from":0,"to":1}]}}"#.utf8))
        let tag = RequestTag.tag(for: document, kind: "timeline")
        XCTAssertEqual(tag, RequestTag.tag(for: document, kind: "timeline"))
        XCTAssertNotEqual(tag, RequestTag.tag(for: document, kind: "batch"))
        XCTAssertNotEqual(tag, RequestTag.tag(for: document, kind: "timeline", engineVersion: RequestTag.engineVersion + "+1"))
        // The tag is the hash of version, endpoint and canonical request (numbers as `#` and
        // their bits), written out.
        var hash = FNV1a128()
        hash.add(Array(RequestTag.engineVersion.utf8) + [0] + Array("timeline".utf8) + [0] + RequestTag.hashedForm(document))
        XCTAssertEqual(tag, "\"\(hash.hex)\"")
        // The hashed form is the canonical text with each number replaced by `#` and its bits.
        let marker = UInt8(ascii: "#")
        let one: [UInt8] = [marker] + (0..<8).map { (k: Int) -> UInt8 in UInt8(truncatingIfNeeded: (1.0 as Double).bitPattern >> UInt64(8 * k)) }
        let zero: [UInt8] = [marker] + [UInt8](repeating: 0, count: 8)
        var expected: [UInt8] = Array("[".utf8) + one
        expected += Array(",".utf8) + zero
        expected += Array(",\"#\"]".utf8)
        XCTAssertEqual(RequestTag.hashedForm(.array([.number(1), .number(-0.0), .string("#")])), expected)
    }

    /// Numbers are hashed by their bits, so the tag follows the numbers' values exactly as the
    /// canonical text does: spellings of one `Double` (and ±0) share a tag, and any two
    /// different `Double`s (neighbours, subnormals, the extremes) do not.
    func testNumbersGiveTheSameTagsAsTheirCanonicalText() throws {
        func tag(_ number: String) throws -> String {
            RequestTag.tag(for: try JSONParser.parse(Array(#"{"target":{"x":\#(number)}}"#.utf8)), kind: "timeline")
        }
        for spellings in [["1", "1.0", "1e0", "10e-1", "0.1e1"], ["0", "-0", "0.0", "-0e5"], ["0.1", "1e-1", "0.10000000000000000555"],
                          ["1e21", "1000000000000000000000"], ["5e-324", "4.9406564584124654e-324"]] {
            let tags = try spellings.map(tag)
            XCTAssertEqual(Set(tags).count, 1, "\(spellings)")
        }
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [1, 0.1, 0.30000000000000004, Double(bitPattern: 1), Double(bitPattern: 2), .greatestFiniteMagnitude, 1e21, -1, 2.5, 1e15]
        for _ in 0..<300 {
            let value = Double(bitPattern: UInt64.random(in: 0...0x7FEF_FFFF_FFFF_FFFE, using: &generator))
            values += [value, value.nextUp, -value]
        }
        var seen: [String: Double] = [:]
        for value in values {
            let text = "\(value)"
            let tagged = try tag(text)
            // Equal tags exactly for equal values, as for the canonical text.
            if let earlier = seen[tagged] { XCTAssertEqual(earlier, value, text) } else { seen[tagged] = value }
            XCTAssertEqual(RequestTag.canonical(.number(value)), RequestTag.canonical(try JSONParser.parse(Array(text.utf8))))
        }
        XCTAssertEqual(seen.count, Set(values.map { $0 == 0 ? 0 : $0 }).count)
    }

    func testIfNoneMatchParsing() {
        let tag = #""00112233445566778899aabbccddeeff""#
        XCTAssertEqual(RequestTag.match(ifNoneMatch: tag, tag: tag), .init(coding: nil))
        XCTAssertEqual(RequestTag.match(ifNoneMatch: " * ", tag: tag), .init(coding: nil))
        XCTAssertEqual(RequestTag.match(ifNoneMatch: #""x", W/\#(tag)"#, tag: tag), .init(coding: nil))
        XCTAssertNil(RequestTag.match(ifNoneMatch: #""x", "y""#, tag: tag))
        XCTAssertNil(RequestTag.match(ifNoneMatch: "00112233445566778899aabbccddeeff", tag: tag), "tags are quoted")
        // A compressed answer's tag names the same answer, and says which coding it had.
        XCTAssertEqual(RequestTag.match(ifNoneMatch: #""00112233445566778899aabbccddeeff-gzip""#, tag: tag), .init(coding: "gzip"))
        XCTAssertEqual(RequestTag.match(ifNoneMatch: #"W/"00112233445566778899aabbccddeeff-deflate""#, tag: tag), .init(coding: "deflate"))
        XCTAssertEqual(RequestTag.match(ifNoneMatch: #""x" ,\#t W/"00112233445566778899aabbccddeeff-gzip" \#t, "y""#, tag: tag), .init(coding: "gzip"))
        // Blanks, empty items, `*` only as the whole field, one coding at most, tags compared byte for byte.
        XCTAssertEqual(RequestTag.match(ifNoneMatch: "\t,, \(tag) ,", tag: tag), .init(coding: nil))
        XCTAssertNil(RequestTag.match(ifNoneMatch: #""x", *"#, tag: tag))
        XCTAssertNil(RequestTag.match(ifNoneMatch: "", tag: tag))
        XCTAssertNil(RequestTag.match(ifNoneMatch: " , ", tag: tag))
        XCTAssertNil(RequestTag.match(ifNoneMatch: #""00112233445566778899aabbccddeeff-br""#, tag: tag))
        XCTAssertNil(RequestTag.match(ifNoneMatch: #""00112233445566778899aabbccddeeff-deflate-gzip""#, tag: tag))
        XCTAssertNil(RequestTag.match(ifNoneMatch: #""00112233445566778899aabbccddeeffgzip""#, tag: tag))
        XCTAssertNil(RequestTag.match(ifNoneMatch: #""00112233445566778899AABBCCDDEEFF""#, tag: tag))
        XCTAssertNil(RequestTag.match(ifNoneMatch: #"w/"00112233445566778899aabbccddeeff""#, tag: tag), "W/ is case-sensitive")
        XCTAssertNil(RequestTag.match(ifNoneMatch: #"W/ "00112233445566778899aabbccddeeff""#, tag: tag))
        XCTAssertNil(RequestTag.match(ifNoneMatch: String(tag.dropLast()), tag: tag))
        XCTAssertNil(RequestTag.match(ifNoneMatch: #""00112233445566778899aabbccddeeff-gzip"#, tag: tag), "no closing quote")
    }

    /// The byte-level matcher against the rule written the plain way, on random lists built
    /// from the pieces that matter (the tag, its coded forms, near misses, blanks, commas, `W/`, `*`).
    func testIfNoneMatchAgreesWithTheRuleOnRandomFields() {
        let tag = #""00112233445566778899aabbccddeeff""#
        let pieces = [tag, #""00112233445566778899aabbccddeeff-gzip""#, #""00112233445566778899aabbccddeeff-deflate""#,
                      #""00112233445566778899aabbccddeef""#, #""x""#, "*", "W/", "w/", " ", "\t", ",", "\"", "-gzip", "é", ""]
        func rule(_ field: String) -> RequestTag.Match? {
            let blanks: Set<Character> = [" ", "\t"]
            func trim(_ s: Substring) -> Substring {
                var s = s
                while let c = s.first, blanks.contains(c) { s.removeFirst() }
                while let c = s.last, blanks.contains(c) { s.removeLast() }
                return s
            }
            let whole = trim(Substring(field))
            if whole == "*" { return .init(coding: nil) }
            for raw in whole.split(separator: ",", omittingEmptySubsequences: false) {
                var item = Array(trim(raw).utf8)
                if item.starts(with: Array("W/".utf8)) { item.removeFirst(2) }
                if item == Array(tag.utf8) { return .init(coding: nil) }
                for coding in ["gzip", "deflate"] where item == Array(tag.dropLast().utf8) + Array("-\(coding)\"".utf8) {
                    return .init(coding: coding)
                }
            }
            return nil
        }
        var generator = SystemRandomNumberGenerator()
        var matched = 0
        for _ in 0..<20_000 {
            let field = (0..<Int.random(in: 0...6, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let expected = rule(field)
            XCTAssertEqual(RequestTag.match(ifNoneMatch: field, tag: tag), expected, field)
            if expected != nil { matched += 1 }
        }
        XCTAssertGreaterThan(matched, 500, "the random fields must exercise matches too")
    }

    /// Literal tags, computed when numbers began to be hashed by their bits (2026-11-29):
    /// any change of a tag value for the same request (and engine version) is caught here.
    func testTagValuesArePinned() throws {
        let version = "motion-server 0.0.0-pinned"
        let cases: [(document: String, kind: String, tag: String)] = [
            (#"{"motion":{"type":"tween","duration":1,"properties":[{"path":"x","from":0,"to":1}]}}"#, "timeline",
             "d249f4a63eedd8ea00fc707220a7fd08"),
            (#"{"fps":30,"target":{"b":{"z":1,"y":-2.5},"a":[1e21,0.1,-0.0]},"window":{"end":2,"start":0},"output":{"format":"csv","events":false},"motion":{"type":"timeline","labels":{"q":1,"p":0.25},"children":[{"type":"tween","id":"\u00e9t\u00e9 \"q\"\n","easing":"easeInOut","duration":0.5,"properties":[{"path":"b","to":{"z":3,"y":null}},{"path":"a","keyframes":[[1,2,3],[4,5,6]]}]}]}}"#, "timeline",
             "d1080bbee86fd3b465ba1c8e49e6102b"),
            (#"{"documents":[{"motion":{"type":"spring","properties":[{"path":"x","to":100}],"stiffness":170,"damping":26,"velocity":true}}]}"#, "batch",
             "03c791ccca9ea067cda571252cc68dc9"),
        ]
        for (index, item) in cases.enumerated() {
            let json = try JSONParser.parse(Array(item.document.utf8))
            XCTAssertEqual(RequestTag.tag(for: json, kind: item.kind, engineVersion: version), "\"\(item.tag)\"", "case \(index)")
        }
    }

    /// The canonical walk writes strings as `JSONWriter` does (every control byte, quotes,
    /// backslashes, non-ASCII), and sorts objects of any size by their keys' bytes.
    func testCanonicalStringsAndLargeObjects() throws {
        let text = String((0..<0x80).map { Character(Unicode.Scalar(UInt8($0))) }) + "é😀/~"
        XCTAssertEqual(RequestTag.canonical(.string(text)), JSON.string(text).serialized)
        XCTAssertEqual(RequestTag.canonical(.object(JSONObject([(text, .null)]))), JSON.object(JSONObject([(text, .null)])).serialized)
        for count in [2, 16, 17, 40] {
            let keys = (0..<count).map { "key\($0 * 7919 % 1000)é" }
            let object = JSONObject(keys.map { ($0, JSON.number(1)) })
            let sorted = keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            let expected = "{" + sorted.map { "\"\($0)\":1" }.joined(separator: ",") + "}"
            XCTAssertEqual(String(decoding: RequestTag.canonical(.object(object)), as: UTF8.self), expected, "\(count) keys")
        }
        // The byte comparison the sort uses, against the standard library's on the UTF-8
        // bytes: prefixes, the empty key, bytes above 0x7F, and random keys.
        var pool = ["", "a", "aa", "ab", "b", "a\u{0}", "é", "e", "😀", "key", "keys", "kez", "Key", "\u{7F}", "\u{80}"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let length = Int.random(in: 0...6, using: &generator)
            pool.append(String((0..<length).map { _ in Character(Unicode.Scalar(UInt8.random(in: 0x61...0x64, using: &generator))) }))
        }
        for a in pool {
            for b in pool {
                XCTAssertEqual(CanonicalWalk<CanonicalBytes>.utf8Precedes(a, b), a.utf8.lexicographicallyPrecedes(b.utf8), "\(a.debugDescription) < \(b.debugDescription)")
            }
        }
    }
}
