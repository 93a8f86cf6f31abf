import Foundation
import XCTest
@testable import MotionHTTP

/// `RequestHead`'s framing checks read the usual request (one plain Content-Length) from its
/// bytes and leave every other head to the general checks. These tests hold both to the rule
/// written the plain way: trim each length, compare them, then parse.
final class RequestHeadTests: XCTestCase {
    private func head(_ fields: [(String, String)], version: String = "HTTP/1.1", target: String = "/v1/timelines") -> RequestHead {
        RequestHead(method: "POST", rawTarget: target, version: version,
                    fields: fields.map { RequestHead.Field(name: $0.0, value: $0.1) })
    }

    /// The Host, Transfer-Encoding and Content-Length checks as they read before the byte
    /// path: every length trimmed into a `String` (Foundation's trim for text that is not
    /// ASCII), then compared and parsed. Returns the status and detail, or nil.
    private func plainRule(_ head: RequestHead, maxBodyBytes: Int) -> (Int, String)? {
        func trim(_ text: Substring) -> String { text.trimmingCharacters(in: .whitespaces) }
        func trimASCII(_ text: Substring) -> String {
            guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return trim(text) }
            var bytes = Array(text.utf8)
            while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
            while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
            return String(decoding: bytes, as: UTF8.self)
        }
        let hasHost = head.fields.contains { $0.name.lowercased() == "host" }
        let encodings = head.fields.filter { $0.name.lowercased() == "transfer-encoding" }
        let lengths = head.fields.filter { $0.name.lowercased() == "content-length" }
            .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false).map(trimASCII) }
        if head.version == "HTTP/1.1", !hasHost { return (400, "an HTTP/1.1 request must carry a Host header") }
        if !encodings.isEmpty {
            let codings = encodings.flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }.map { trimASCII($0).lowercased() }
            if codings != ["chunked"] { return (501, "") }
            if !lengths.isEmpty { return (400, "a request must not carry both Content-Length and Transfer-Encoding") }
        }
        if lengths.count > 1, Set(lengths).count > 1 { return (400, "conflicting Content-Length headers") }
        if let text = lengths.first {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return (400, "invalid Content-Length '\(RequestHead.printable(text))'")
            }
            if text.utf8.count > 18 || Int(text)! > maxBodyBytes { return (413, "") }
        }
        return nil
    }

    private func plainExpectsBody(_ head: RequestHead) -> Bool {
        head.fields.contains { field in
            let name = field.name.lowercased()
            if name == "transfer-encoding" { return true }
            guard name == "content-length" else { return false }
            let value = field.value[...]
            let trimmed = value.utf8.allSatisfy({ $0 < 0x80 })
                ? String(decoding: Array(value.utf8).drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed(), as: UTF8.self)
                : value.trimmingCharacters(in: .whitespaces)
            return trimmed != "0"
        }
    }

    private func assertAgrees(_ head: RequestHead, maxBodyBytes: Int, file: StaticString = #filePath, line: UInt = #line) {
        let got = head.problem(maxBodyBytes: maxBodyBytes, poolBytes: 16_384)
        let want = plainRule(head, maxBodyBytes: maxBodyBytes)
        let described = head.fields.map { "\($0.name): \($0.value.debugDescription)" }.joined(separator: "; ")
        XCTAssertEqual(got?.status, want?.0, described, file: file, line: line)
        if let want, want.0 == 400 { XCTAssertEqual(got?.detail, want.1, described, file: file, line: line) }
        if got == nil { XCTAssertEqual(head.expectsBody, plainExpectsBody(head), described, file: file, line: line) }
    }

    func testPlainContentLengthsAreReadFromTheirBytes() {
        XCTAssertEqual(RequestHead.plainContentLength("0"), 0)
        XCTAssertEqual(RequestHead.plainContentLength(" \t2132\t "), 2132)
        XCTAssertEqual(RequestHead.plainContentLength("007"), 7)
        XCTAssertEqual(RequestHead.plainContentLength("999999999999999999"), 999_999_999_999_999_999)
        for other in ["", " ", "1 2", "1,2", "+1", "-1", "1e3", "0x10", "1234567890123456789", "\u{00A0}5", "٣"] {
            XCTAssertNil(RequestHead.plainContentLength(other), other.debugDescription)
        }
        // Over the limit (413), at it (accepted), a zero that announces no body and one that does.
        let host = ("Host", "x")
        XCTAssertEqual(head([host, ("Content-Length", "101")]).problem(maxBodyBytes: 100, poolBytes: 16_384)?.status, 413)
        XCTAssertNil(head([host, ("Content-Length", " 100 ")]).problem(maxBodyBytes: 100, poolBytes: 16_384))
        XCTAssertFalse(head([host, ("Content-Length", " 0\t")]).expectsBody)
        XCTAssertTrue(head([host, ("Content-Length", "00")]).expectsBody)
        XCTAssertTrue(head([host, ("Content-Length", "1")]).expectsBody)
        XCTAssertFalse(head([host]).expectsBody)
    }

    /// Random heads — one or two Content-Length fields of digits, blanks, commas, signs and a
    /// non-ASCII space, sometimes a Transfer-Encoding, sometimes no Host or HTTP/1.0 — get
    /// the same answer as the plain rule, and the same `expectsBody` when accepted.
    func testFramingChecksAgreeWithThePlainRuleOnRandomHeads() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["0", "1", "2", "5", "9", "00", "12", "100", "2132", " ", "\t", ",", "+", "-", "a", "\u{00A0}", "999999999999999999", "1000000000000000000"]
        var accepted = 0
        for _ in 0..<20_000 {
            var fields: [(String, String)] = []
            if Int.random(in: 0..<10, using: &generator) > 0 { fields.append(("Host", "x")) }
            for _ in 0..<[1, 1, 1, 1, 2, 0].randomElement(using: &generator)! {
                let value = (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
                fields.append((["Content-Length", "content-length", "CONTENT-LENGTH"].randomElement(using: &generator)!, value))
            }
            if Int.random(in: 0..<12, using: &generator) == 0 {
                fields.append(("Transfer-Encoding", ["chunked", " chunked ", "gzip", "chunked, chunked"].randomElement(using: &generator)!))
            }
            fields.shuffle(using: &generator)
            let version = Int.random(in: 0..<15, using: &generator) == 0 ? "HTTP/1.0" : "HTTP/1.1"
            let request = head(fields, version: version)
            assertAgrees(request, maxBodyBytes: [0, 100, 1_048_576].randomElement(using: &generator)!)
            if request.problem(maxBodyBytes: 1_048_576, poolBytes: 16_384) == nil { accepted += 1 }
        }
        XCTAssertGreaterThan(accepted, 2_000, "enough accepted heads to compare expectsBody")
    }

    /// Query parameters and encoded NULs are still found, now read from the target's bytes.
    func testTargetsAreCheckedFromTheirBytes() {
        XCTAssertEqual(RequestHead.queryParameterCount("/v1/sessions"), 0)
        XCTAssertEqual(RequestHead.queryParameterCount("/v1/sessions?"), 0)
        XCTAssertEqual(RequestHead.queryParameterCount("/v1/sessions?limit=2&&after=x&"), 2)
        XCTAssertEqual(RequestHead.queryParameterCount("/a?b?c&d"), 2)
        let host = [("Host", "x")]
        XCTAssertEqual(head(host, target: "/healthz%00").problem(maxBodyBytes: 10, poolBytes: 16_384)?.status, 400)
        XCTAssertEqual(head(host, target: "/healthz?a=%00").problem(maxBodyBytes: 10, poolBytes: 16_384)?.status, 400)
        XCTAssertNil(head(host, target: "/healthz?a=%2500").problem(maxBodyBytes: 10, poolBytes: 16_384))
        XCTAssertNil(head(host, target: "/healthz?a=%0").problem(maxBodyBytes: 10, poolBytes: 16_384))
        let many = "/v1/sessions?" + (0..<300).map { "p\($0)=1" }.joined(separator: "&")
        XCTAssertEqual(head(host, target: many).problem(maxBodyBytes: 10, poolBytes: 16_384)?.status, 414)
        XCTAssertEqual(head([("Host", "x"), ("Content Length", "1")]).problem(maxBodyBytes: 10, poolBytes: 16_384)?.status, 400)
    }

    /// An answer's own headers are found by name in any ASCII case; a name that is not
    /// ASCII is compared by Foundation.
    func testResponseHeadersAreFoundInAnyCase() {
        let response = HTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("ETag", "\"t\""),
                                                           ("X-Ünïcode", "u"), ("Vary", "Accept-Encoding")], body: [])
        XCTAssertEqual(response.header("content-type"), "application/json")
        XCTAssertEqual(response.header("ETAG"), "\"t\"")
        XCTAssertEqual(response.header("vary"), "Accept-Encoding")
        XCTAssertEqual(response.header("x-ünïcode"), "u")
        XCTAssertEqual(response.header("X-Ünïcode"), "u")
        XCTAssertNil(response.header("Content-Encoding"))
        XCTAssertNil(response.header("Content-Typ"))
        XCTAssertNil(response.header("Vary "))
        XCTAssertNil(response.header("Etaf"))
    }

    /// A constant body is compressed once per coding: later calls hand out the same buffer.
    func testStaticBodiesAreCompressedOnce() throws {
        let body = StaticBody(Array(String(repeating: "motion ", count: 1000).utf8))
        let first = try XCTUnwrap(body.compressed(.gzip))
        let second = try XCTUnwrap(body.compressed(.gzip))
        XCTAssertLessThan(first.count, body.bytes.count / 10)
        XCTAssertEqual(first.withUnsafeBufferPointer { $0.baseAddress }, second.withUnsafeBufferPointer { $0.baseAddress }, "compressed again")
        let deflated = try XCTUnwrap(body.compressed(.deflate))
        XCTAssertNotEqual(deflated, first)
        XCTAssertEqual(deflated.withUnsafeBufferPointer { $0.baseAddress }, try XCTUnwrap(body.compressed(.deflate)).withUnsafeBufferPointer { $0.baseAddress })
    }
}
