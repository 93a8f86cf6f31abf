import Foundation
import XCTest

/// Every error status with its RFC 9457 body (docs/README.md), and the server surviving each one.
final class ErrorResponseTests: ServerTestCase {
    private static let validDocument = """
        {"fps": 10, "target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]}}
        """

    /// POSTs `json` to /v1/timelines on `server`, checks the problem and that the server
    /// still answers afterwards. Returns the problem's body.
    @discardableResult
    private func rejected(_ server: TestServer, _ json: String, status: Int, type: String? = nil,
                          target: String = "/v1/timelines",
                          file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        let response = try post(server, target, json)
        let body = try assertProblem(response, status: status, type: type, file: file, line: line)
        assertHealthy(server, file: file, line: line)
        return body
    }

    private func assertSingleError(_ body: JSONValue, pointer: String, messageContains fragments: [String],
                                   file: StaticString = #filePath, line: UInt = #line) {
        let entries = problemEntries(body)
        XCTAssertEqual(entries.count, 1, "errors: \(body["errors"]?.description ?? "none")", file: file, line: line)
        XCTAssertEqual(entries.first?.pointer, pointer, file: file, line: line)
        XCTAssertEqual(body["detail"], "1 problem", file: file, line: line)
        for fragment in fragments {
            XCTAssertTrue(entries.first?.message.contains(fragment) ?? false,
                          "message \(entries.first?.message.debugDescription ?? "nil") should mention \(fragment.debugDescription)",
                          file: file, line: line)
        }
    }

    // MARK: - 400

    func testMalformedJSONIs400() throws {
        let server = try startServer()
        let body = try rejected(server, #"{"motion": {"type": "tween", "#, status: 400, type: "/problems/malformed-document")
        XCTAssertEqual(body["title"], "Malformed timeline document")
        assertSingleError(body, pointer: "", messageContains: ["malformed JSON"])
        // A body that is not JSON at all, and an empty body.
        try rejected(server, "not json", status: 400, type: "/problems/malformed-document")
        try rejected(server, "", status: 400, type: "/problems/malformed-document")
    }

    func testMissingMotionIs400() throws {
        let server = try startServer()
        let body = try rejected(server, #"{"fps": 60, "target": {"x": 0}}"#, status: 400, type: "/problems/malformed-document")
        assertSingleError(body, pointer: "/motion", messageContains: ["required"])
    }

    func testWrongTypeIs400() throws {
        let server = try startServer()
        let body = try rejected(server, """
            {"target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "repeat": 1.5, "properties": [{"path": "x", "to": 1}]}}
            """, status: 400, type: "/problems/malformed-document")
        assertSingleError(body, pointer: "/motion/repeat", messageContains: ["1.5"])

        let fps = try rejected(server, """
            {"fps": "60", "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "from": 0, "to": 1}]}}
            """, status: 400)
        assertSingleError(fps, pointer: "/fps", messageContains: ["number"])

        let root = try rejected(server, "[1, 2]", status: 400)
        assertSingleError(root, pointer: "", messageContains: ["object"])
    }

    func testUnknownFieldsAre400() throws {
        let server = try startServer()
        let top = try rejected(server, """
            {"target": {"x": 0}, "colour": 1, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]}}
            """, status: 400, type: "/problems/malformed-document")
        assertSingleError(top, pointer: "/colour", messageContains: ["unknown field", "colour"])

        let node = try rejected(server, """
            {"target": {"x": 0}, "motion": {"type": "tween", "durration": 1, "duration": 1, "properties": [{"path": "x", "to": 1}]}}
            """, status: 400)
        assertSingleError(node, pointer: "/motion/durration", messageContains: ["unknown field"])

        let property = try rejected(server, """
            {"target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1, "too": 2}]}}
            """, status: 400)
        assertSingleError(property, pointer: "/motion/properties/0/too", messageContains: ["unknown field"])
    }

    func testSeveralProblemsAreReportedAtOnce() throws {
        let server = try startServer()
        // Structural problems make it a 400, but the range problem is reported alongside.
        let mixed = try rejected(server, """
            {"fps": "fast", "extra": true,
             "motion": {"type": "tween", "duration": -1, "speed": 2, "properties": [{"path": "x", "to": 1}]}}
            """, status: 400, type: "/problems/malformed-document")
        // The path missing from the (absent) target is reported in the same answer.
        XCTAssertEqual(mixed["detail"], "5 problems")
        XCTAssertEqual(Set(problemEntries(mixed).map(\.pointer)), ["/fps", "/extra", "/motion/duration", "/motion/speed", "/motion/properties/0/path"])

        // Only range problems: a 422 listing each.
        let invalid = try rejected(server, """
            {"target": {"x": 0},
             "motion": {"type": "tween", "duration": -1, "easing": "quadratic.sideways", "properties": [{"path": "x", "to": 1}]}}
            """, status: 422, type: "/problems/invalid-document")
        XCTAssertEqual(invalid["detail"], "2 problems")
        XCTAssertEqual(Set(problemEntries(invalid).map(\.pointer)), ["/motion/duration", "/motion/easing"])
    }

    /// A document can hold a problem every few bytes: the answer counts them all and lists the
    /// first `DocumentError.listed` (100), in document order. 30,001 of them used to make a
    /// 2.9 MB answer from an 830 KB body.
    func testProblemListsStopAtAHundred() throws {
        let server = try startServer()
        let properties = (0..<5_000).map { #"{"path":"p\#($0)","to":1}"# }.joined(separator: ",")
        let many = #"{"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[\#(properties)]}}"#
        let response = try post(server, "/v1/timelines", many)
        let body = try assertProblem(response, status: 422, type: "/problems/invalid-document")
        XCTAssertEqual(body["detail"], "5000 problems; the first 100 are listed")
        let entries = problemEntries(body)
        XCTAssertEqual(entries.map(\.pointer), (0..<100).map { "/motion/properties/\($0)/path" })
        XCTAssertLessThan(response.body.count, 20_000)
        assertHealthy(server)

        // A structural problem after the hundredth still makes the document malformed (400),
        // though it is not listed.
        let late = many.replacingOccurrences(of: #"{"path":"p4999","to":1}"#, with: #"{"path":"p4999","to":1,"too":2}"#)
        let malformed = try rejected(server, late, status: 400, type: "/problems/malformed-document")
        XCTAssertEqual(malformed["detail"], "5001 problems; the first 100 are listed")
        XCTAssertEqual(problemEntries(malformed).count, 100)

        // A hundred problems exactly are all listed, without the remark.
        let hundred = (0..<100).map { #"{"path":"p\#($0)","to":1}"# }.joined(separator: ",")
        let all = try rejected(server, #"{"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[\#(hundred)]}}"#, status: 422)
        XCTAssertEqual(all["detail"], "100 problems")
        XCTAssertEqual(problemEntries(all).count, 100)
    }

    func testBothContentLengthAndChunkedIs400() throws {
        let server = try startServer()
        let client = try server.client()
        defer { client.close() }
        let body = Self.validDocument
        try client.send("POST /v1/timelines HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\nTransfer-Encoding: chunked\r\n\r\n"
            + String(body.utf8.count, radix: 16) + "\r\n\(body)\r\n0\r\n\r\n")
        let response = try client.readResponse()
        let problem = try assertProblem(response, status: 400)
        XCTAssertTrue(problem["detail"]?.string?.contains("Transfer-Encoding") ?? false, response.text)
        assertHealthy(server)
    }

    func testConflictingContentLengthHeadersAre400() throws {
        let server = try startServer()
        let client = try server.client()
        defer { client.close() }
        try client.send("POST /v1/timelines HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
            + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n{\"a\":1")
        let response = try client.readResponse()
        let problem = try assertProblem(response, status: 400)
        XCTAssertTrue(problem["detail"]?.string?.contains("Content-Length") ?? false, response.text)
        assertHealthy(server)

        // Repeated identical values are one length (RFC 9110 §8.6): accepted.
        let same = try server.client()
        defer { same.close() }
        let document = Self.validDocument
        try same.send("POST /v1/timelines HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(document.utf8.count)\r\nContent-Length: \(document.utf8.count)\r\n\r\n\(document)")
        XCTAssertEqual(try same.readResponse().status, 200)
    }

    /// RFC 9112 §3.2 (one Host field line) and §2.2 (no bare CR): libmicrohttpd lets both
    /// through, and each was answered 200.
    func testHeadFieldsHTTPForbidsAre400() throws {
        let server = try startServer()
        let heads = [
            ("Host: a\r\nHost: b\r\n", "more than one Host"),
            ("Host: a\r\nX-Note: one\rtwo\r\n", "carriage return"),
        ]
        for (fields, expected) in heads {
            let client = try server.client()
            defer { client.close() }
            try client.send("GET /healthz HTTP/1.1\r\n" + fields + "\r\n")
            let response = try client.readResponse()
            let problem = try assertProblem(response, status: 400)
            XCTAssertTrue(problem["detail"]?.string?.contains(expected) ?? false, "\(fields.debugDescription): \(response.text)")
        }
        // HTTP/1.0 without Host, and one Host, are fine.
        for head in ["GET /healthz HTTP/1.0\r\n\r\n", "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"] {
            let client = try server.client()
            defer { client.close() }
            try client.send(head)
            XCTAssertEqual(try client.readResponse().status, 200, head)
        }
        assertHealthy(server)
    }

    func testContentLengthListIsRejected() throws {
        // libmicrohttpd rejects a list value itself (its own 400 page, which docs/README.md allows).
        let server = try startServer()
        let client = try server.client()
        defer { client.close() }
        try client.send("POST /v1/timelines HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 5, 6\r\n\r\n{\"a\":1")
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 400, response.text)
        assertHealthy(server)
    }

    func testGarbageRequestDoesNotHurtTheServer() throws {
        let server = try startServer()
        let client = try server.client()
        try client.send("THIS IS NOT HTTP\r\n\u{1}\u{2}\r\n\r\n")
        // libmicrohttpd answers malformed HTTP itself (400) or hangs up; either is fine here.
        if let response = try? client.readResponse() {
            XCTAssertEqual(response.status / 100, 4, "status \(response.status)")
        }
        client.close()
        assertHealthy(server)
    }

    // MARK: - 422

    func testNegativeDurationIs422() throws {
        let server = try startServer()
        let body = try rejected(server, """
            {"target": {"x": 0}, "motion": {"type": "tween", "duration": -0.5, "properties": [{"path": "x", "to": 1}]}}
            """, status: 422, type: "/problems/invalid-document")
        XCTAssertEqual(body["title"], "Invalid timeline document")
        assertSingleError(body, pointer: "/motion/duration", messageContains: ["negative"])
    }

    func testInfiniteRepeatWithoutWindowIs422() throws {
        let server = try startServer()
        let body = try rejected(server, """
            {"target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "repeat": "infinite", "properties": [{"path": "x", "to": 1}]}}
            """, status: 422, type: "/problems/invalid-document")
        assertSingleError(body, pointer: "/window", messageContains: ["required"])
    }

    func testUnknownEasingIs422() throws {
        let server = try startServer()
        let body = try rejected(server, """
            {"target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "easing": "wobbly", "properties": [{"path": "x", "to": 1}]}}
            """, status: 422, type: "/problems/invalid-document")
        assertSingleError(body, pointer: "/motion/easing", messageContains: ["unknown easing", "wobbly"])

        let perProperty = try rejected(server, """
            {"target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1, "easing": "Quadratic.in"}]}}
            """, status: 422)
        assertSingleError(perProperty, pointer: "/motion/properties/0/easing", messageContains: ["Quadratic.in"])
    }

    func testPathMissingFromTargetIs422NamingThePath() throws {
        let server = try startServer()
        let body = try rejected(server, """
            {"target": {"frame": {"x": 20}}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "frame.q", "to": 5}]}}
            """, status: 422, type: "/problems/invalid-document")
        assertSingleError(body, pointer: "/motion/properties/0/path", messageContains: ["frame.q"])
    }

    func testSampleLimitIs422NamingTheLimit() throws {
        let server = try startServer(["--max-samples", "100"])
        // 61 frames × 1 track fits …
        let fits = try post(server, "/v1/timelines", """
            {"fps": 60, "target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]}}
            """)
        XCTAssertEqual(fits.status, 200, fits.text)
        // … 61 frames × 2 tracks does not.
        let body = try rejected(server, """
            {"fps": 60, "target": {"x": 0, "y": 0},
             "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}, {"path": "y", "to": 1}]}}
            """, status: 422, type: "/problems/invalid-document")
        let message = problemEntries(body).first?.message ?? ""
        XCTAssertTrue(message.contains("100"), "the message names the limit: \(message)")
        XCTAssertTrue(message.contains("max-samples"), "the message names the setting: \(message)")
        // The stream endpoint checks the same limit before streaming.
        let stream = try post(server, "/v1/streams?speed=0", """
            {"fps": 1000, "target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]}}
            """)
        try assertProblem(stream, status: 422)
        XCTAssertFalse(stream.isChunked)
    }

    func testSampleLimitFromTheEnvironment() throws {
        let server = try startServer(environment: ["MOTION_MAX_SAMPLES": "10"])
        let body = try rejected(server, """
            {"fps": 60, "target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]}}
            """, status: 422)
        XCTAssertTrue(problemEntries(body).first?.message.contains("10 samples") ?? false, body.description)
    }

    func testFPSOverTheConfiguredMaximumIs422() throws {
        let server = try startServer(["--max-fps", "30"])
        let ok = try post(server, "/v1/timelines", """
            {"fps": 30, "target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]}}
            """)
        XCTAssertEqual(ok.status, 200, ok.text)
        let body = try rejected(server, """
            {"fps": 60, "target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]}}
            """, status: 422, type: "/problems/invalid-document")
        assertSingleError(body, pointer: "/fps", messageContains: ["30", "max-fps"])
        // Out of the absolute range 1…1000.
        let absurd = try rejected(server, """
            {"fps": 0, "target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]}}
            """, status: 422)
        assertSingleError(absurd, pointer: "/fps", messageContains: [])
    }

    func testEventLimitIs422NamingTheLimit() throws {
        let server = try startServer(["--max-events", "10"])
        let body = try rejected(server, """
            {"fps": 10, "target": {"x": 0}, "motion": {"type": "tween", "duration": 0.1, "repeat": 20, "properties": [{"path": "x", "to": 1}]}}
            """, status: 422, type: "/problems/invalid-document")
        let message = problemEntries(body).first?.message ?? ""
        XCTAssertTrue(message.contains("10") && message.contains("max-events"), message)
        let fits = try post(server, "/v1/timelines", """
            {"fps": 10, "target": {"x": 0}, "motion": {"type": "tween", "duration": 0.1, "repeat": 5, "properties": [{"path": "x", "to": 1}]}}
            """)
        XCTAssertEqual(fits.status, 200, fits.text)
    }

    /// `--max-segments` (and its environment variable): a 422 at the property that crossed it.
    func testSegmentLimitIs422AtThePropertyNamingTheLimit() throws {
        for server in [try startServer(["--max-segments", "30"]), try startServer(environment: ["MOTION_MAX_SEGMENTS": "30"])] {
            // 4 elements × 9 keyframe segments = 36 > 30.
            let body = try rejected(server, """
                {"fps": 1, "target": {"a": [0, 0, 0, 0]}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "a.*", "keyframes": [0, 1, 0, 1, 0, 1, 0, 1, 0, 1]}]}}
                """, status: 422, type: "/problems/invalid-document")
            assertSingleError(body, pointer: "/motion/properties/0/keyframes", messageContains: ["30 curve segments", "max-segments"])
            // 3 × 9 = 27 fits.
            let fits = try post(server, "/v1/timelines", """
                {"fps": 1, "target": {"a": [0, 0, 0]}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "a.*", "keyframes": [0, 1, 0, 1, 0, 1, 0, 1, 0, 1]}]}}
                """)
            XCTAssertEqual(fits.status, 200, fits.text)
        }
    }

    func testInfiniteRepeatFarIntoTheWindowDoesNotHangAWorker() throws {
        // Regression: cycles before the window are skipped, never walked one by one, and a
        // window further than 4e15 cycles in is a 422 rather than a spinning worker.
        let server = try startServer(["--threads", "1"])
        let client = try server.client(readTimeout: 5)
        defer { client.close() }
        let response = try client.postJSON("/v1/timelines", """
            {"fps": 1, "target": {"x": 0},
             "motion": {"type": "tween", "duration": 1e-12, "repeat": "infinite", "properties": [{"path": "x", "to": 1}]},
             "window": {"start": 10000, "end": 10000}}
            """)
        XCTAssertTrue([200, 422].contains(response.status), response.text)
        assertHealthy(server)
    }

    // MARK: - 404, 405

    func testUnknownPathIs404() throws {
        let server = try startServer()
        for (method, target) in [("GET", "/nope"), ("POST", "/v1/timeline"), ("GET", "/v1/timelines/extra"), ("GET", "//")] {
            let response = try send(server, method, target, headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
            let body = try assertProblem(response, status: 404, type: "/problems/not-found")
            XCTAssertTrue(body["detail"]?.string?.contains(target) ?? false, "\(method) \(target): \(response.text)")
        }
        assertHealthy(server)
    }

    func testWrongMethodIs405WithAllow() throws {
        let server = try startServer()
        let cases: [(String, String, Set<String>)] = [
            ("GET", "/v1/timelines", ["POST", "OPTIONS"]),
            ("PUT", "/v1/streams", ["POST", "OPTIONS"]),
            ("DELETE", "/healthz", ["GET", "HEAD", "OPTIONS"]),
            ("POST", "/v1/easings", ["GET", "HEAD", "OPTIONS"]),
        ]
        for (method, target, allowed) in cases {
            let response = try send(server, method, target)
            try assertProblem(response, status: 405, type: "/problems/method-not-allowed")
            let allow = response.headerValues("Allow").flatMap { $0.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            XCTAssertEqual(Set(allow), allowed, "\(method) \(target): Allow \(response.headerValues("Allow"))")
        }
        assertHealthy(server)
    }

    // MARK: - 413

    func testBodyOverTheLimitWithContentLengthIs413() throws {
        let server = try startServer(["--max-body-bytes", "256"])
        let small = Self.validDocument
        XCTAssertLessThan(small.utf8.count, 256)
        let ok = try post(server, "/v1/timelines", small)
        XCTAssertEqual(ok.status, 200, ok.text)

        // Valid JSON, padded with whitespace past the limit.
        let large = small + String(repeating: " ", count: 300)
        let response = try post(server, "/v1/timelines", large)
        let body = try assertProblem(response, status: 413, type: "/problems/payload-too-large")
        XCTAssertTrue(body["detail"]?.string?.contains("256") ?? false, response.text)

        // Announced too large, body never sent: rejected on the headers alone.
        let client = try server.client()
        defer { client.close() }
        try client.send("POST /v1/timelines HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n")
        try assertProblem(try client.readResponse(), status: 413)
        assertHealthy(server)
    }

    func testChunkedBodyOverTheLimitIs413() throws {
        let server = try startServer(["--max-body-bytes", "256"])
        let document = Array(Self.validDocument.utf8)
        // Under the limit, chunked: accepted.
        let ok = try send(server, "POST", "/v1/timelines", headers: [("Content-Type", "application/json")],
                          chunks: [Array(document[..<20]), Array(document[20...])])
        XCTAssertEqual(ok.status, 200, ok.text)

        let padded = document + Array(repeating: UInt8(ascii: " "), count: 400)
        let client = try server.client()
        defer { client.close() }
        let response = try client.request("POST", "/v1/timelines", headers: [("Content-Type", "application/json")],
                                          chunks: stride(from: 0, to: padded.count, by: 100).map { Array(padded[$0..<min($0 + 100, padded.count)]) })
        let body = try assertProblem(response, status: 413, type: "/problems/payload-too-large")
        XCTAssertTrue(body["detail"]?.string?.contains("256") ?? false, response.text)
        // The chunked body was read to its end, so the connection can carry on.
        if response.header("Connection")?.lowercased() != "close" {
            let next = try client.request("GET", "/healthz")
            XCTAssertEqual(next.status, 200)
        }
        assertHealthy(server)
    }

    // MARK: - 415

    func testNonJSONContentTypeIs415() throws {
        let server = try startServer()
        for target in ["/v1/timelines", "/v1/streams"] {
            let wrong = try post(server, target, Self.validDocument, contentType: "text/plain")
            let body = try assertProblem(wrong, status: 415, type: "/problems/unsupported-media-type")
            XCTAssertTrue(body["detail"]?.string?.contains("text/plain") ?? false, wrong.text)

            let missing = try post(server, target, Self.validDocument, contentType: nil)
            let missingBody = try assertProblem(missing, status: 415, type: "/problems/unsupported-media-type")
            XCTAssertTrue(missingBody["detail"]?.string?.contains("no Content-Type") ?? false, missing.text)

            let form = try post(server, target, Self.validDocument, contentType: "application/x-www-form-urlencoded")
            try assertProblem(form, status: 415)
        }
        // A structured +json type is JSON.
        let problemJSON = try post(server, "/v1/timelines", Self.validDocument, contentType: "application/vnd.motion+json")
        XCTAssertEqual(problemJSON.status, 200, problemJSON.text)
        assertHealthy(server)
    }

    // MARK: - Robustness

    func testEveryBadRequestLeavesTheServerServingOnOneConnection() throws {
        // The same bad requests on one keep-alive connection: each is answered and the
        // connection stays usable (none of them kills the worker or the connection).
        let server = try startServer()
        let client = try server.client()
        defer { client.close() }
        let bodies: [(String, Int)] = [
            ("{", 400),
            ("{}", 400),
            (#"{"motion": 5}"#, 400),
            (#"{"motion": {"type": "teleport"}}"#, 422),
            (#"{"motion": {"type": "tween", "duration": 1e308, "properties": [{"path": "x", "from": 0, "to": 1}]}}"#, 422),
            (#"{"fps": 1e-300, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "from": 0, "to": 1}]}}"#, 422),
            (#"{"target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]}, "window": {"start": 2, "end": 1}}"#, 422),
            (String(repeating: "[", count: 100_000), 400),
        ]
        for (json, status) in bodies {
            let response = try client.postJSON("/v1/timelines", json)
            try assertProblem(response, status: status)
            XCTAssertNotEqual(response.header("Connection")?.lowercased(), "close", "a document error need not close the connection")
        }
        let ok = try client.postJSON("/v1/timelines", Self.validDocument)
        XCTAssertEqual(ok.status, 200)
        assertHealthy(server)
    }
}
