import Foundation
import XCTest

/// What users of an HTTP service expect (docs/http.md, docs/errors.md), against the real
/// server: query parameters, CORS, compression, the sessions list, problem pages, helpful
/// messages, exact event times, newlines, the version, and `motion-server render`.
final class UsabilityTests: ServerTestCase {
    private let tween = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":100}]}}"#

    /// A document whose answer is several KiB (compressible).
    private let large = #"{"fps":120,"target":{"x":0,"y":0},"motion":{"type":"spring","response":1,"dampingRatio":0.5,"properties":[{"path":"x","to":100},{"path":"y","to":-40}]}}"#

    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    // MARK: - Query parameters

    func testUnknownQueryParametersAre400NamingThem() throws {
        let server = try startServer()
        let cases: [(String, String, String?)] = [
            ("GET", "/healthz?verbose=1", "verbose"),
            ("POST", "/v1/timelines?speed=1", "speed"),
            ("POST", "/v1/streams?sped=2", "sped"),
            ("GET", "/v1/sessions?page=2", "page"),
        ]
        for (method, target, parameter) in cases {
            let response = method == "GET" ? try get(server, target) : try post(server, target, tween)
            let body = try assertProblem(response, status: 400, type: "/problems/bad-request")
            XCTAssertEqual(body["errors"]?[0]?["parameter"]?.string, parameter, "\(target): \(response.text)")
            XCTAssertTrue(body["detail"]?.string?.contains("'\(parameter!)'") ?? false, response.text)
        }
        // The parameters an endpoint takes still work.
        XCTAssertEqual(try post(server, "/v1/streams?speed=0", tween).status, 200)
        XCTAssertEqual(try get(server, "/v1/sessions?limit=5").status, 200)
    }

    // MARK: - CORS

    func testCORSPreflightAndHeadersForAnAllowedOrigin() throws {
        let server = try startServer(["--cors-origin", "https://app.example, https://other.example"])
        let preflight = try send(server, "OPTIONS", "/v1/timelines", headers: [
            ("Origin", "https://app.example"), ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "content-type"),
        ])
        XCTAssertEqual(preflight.status, 204)
        XCTAssertEqual(preflight.header("Access-Control-Allow-Origin"), "https://app.example")
        XCTAssertEqual(preflight.header("Access-Control-Allow-Methods"), "POST, OPTIONS")
        XCTAssertTrue(preflight.header("Access-Control-Allow-Headers")?.contains("Content-Type") ?? false)
        XCTAssertEqual(preflight.header("Access-Control-Max-Age"), "600")
        XCTAssertEqual(preflight.header("Vary"), "Origin")

        let answer = try post(server, "/v1/timelines", tween, headers: [("Origin", "https://other.example")])
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.header("Access-Control-Allow-Origin"), "https://other.example")
        XCTAssertTrue(answer.header("Access-Control-Expose-Headers")?.contains("Location") ?? false)
        // A page can read which instance answered (`--instance-id`, behind a load balancer).
        XCTAssertTrue(answer.header("Access-Control-Expose-Headers")?.contains("X-Instance-Id") ?? false)
        // Problems too, so a page can read why.
        let problem = try post(server, "/v1/timelines", "{", headers: [("Origin", "https://app.example")])
        XCTAssertEqual(problem.status, 400)
        XCTAssertEqual(problem.header("Access-Control-Allow-Origin"), "https://app.example")
        // And answers made before routing: a body announced over the limit is refused at its head.
        let client = try server.client()
        try client.send("POST /v1/timelines HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n")
        let early = try client.readResponse()
        XCTAssertEqual(early.status, 413)
        XCTAssertEqual(early.header("Access-Control-Allow-Origin"), "https://app.example")
        XCTAssertEqual(early.headerValues("Access-Control-Allow-Origin").count, 1, "once")

        // Another origin gets no CORS headers (the browser then refuses the answer).
        let stranger = try send(server, "OPTIONS", "/v1/timelines", headers: [
            ("Origin", "https://evil.example"), ("Access-Control-Request-Method", "POST"),
        ])
        XCTAssertEqual(stranger.status, 204)
        XCTAssertEqual(stranger.header("Allow"), "POST, OPTIONS")
        XCTAssertNil(stranger.header("Access-Control-Allow-Origin"))
        XCTAssertNil(try post(server, "/v1/timelines", tween, headers: [("Origin", "https://evil.example")]).header("Access-Control-Allow-Origin"))
    }

    func testCORSIsOffByDefaultAndTakesTheEnvironmentAndAStar() throws {
        let plain = try startServer()
        let answer = try send(plain, "OPTIONS", "/v1/sessions", headers: [("Origin", "https://app.example"), ("Access-Control-Request-Method", "POST")])
        XCTAssertEqual(answer.status, 204)
        XCTAssertEqual(answer.header("Allow"), "POST, GET, HEAD, OPTIONS")
        XCTAssertNil(answer.header("Access-Control-Allow-Origin"))
        XCTAssertNil(try get(plain, "/healthz").header("Access-Control-Allow-Origin"))

        let starred = try startServer(environment: ["MOTION_CORS_ORIGIN": "*"])
        let response = try send(starred, "GET", "/v1/easings", headers: [("Origin", "http://localhost:3000")])
        XCTAssertEqual(response.header("Access-Control-Allow-Origin"), "*")
        XCTAssertNil(response.header("Vary")?.contains("Origin") == true ? "Vary: Origin" : nil, "no Vary: Origin for *")
    }

    func testAMalformedCORSOriginIsRefusedAtStartUp() throws {
        let result = try runBinary(["--cors-origin", "app.example/path", "--port", "0"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("--cors-origin"), result.stderr)
    }

    // MARK: - Compression

    func testLargeAnswersAreCompressedWhenAccepted() throws {
        let server = try startServer()
        let identity = try post(server, "/v1/timelines", large)
        XCTAssertEqual(identity.status, 200)
        XCTAssertNil(identity.header("Content-Encoding"))
        XCTAssertEqual(identity.header("Vary"), "Accept-Encoding")
        XCTAssertGreaterThan(identity.body.count, 4096)

        for (accept, coding) in [("gzip, deflate", "gzip"), ("deflate", "deflate"), ("br;q=1, gzip;q=0.5", "gzip"), ("*", "gzip")] {
            let compressed = try post(server, "/v1/timelines", large, headers: [("Accept-Encoding", accept)])
            XCTAssertEqual(compressed.status, 200)
            XCTAssertEqual(compressed.header("Content-Encoding"), coding, accept)
            XCTAssertLessThan(compressed.body.count, identity.body.count / 2, "\(accept): \(compressed.body.count) bytes")
            XCTAssertEqual(try Self.inflate(compressed.body), identity.body, "\(accept): decompresses to the same bytes")
        }
        // gzip;q=0 and identity are honoured; a small answer is never compressed.
        XCTAssertNil(try post(server, "/v1/timelines", large, headers: [("Accept-Encoding", "gzip;q=0")]).header("Content-Encoding"))
        XCTAssertNil(try send(server, "GET", "/healthz", headers: [("Accept-Encoding", "gzip")]).header("Content-Encoding"))
        // Constant answers too, compressed once and then served as made.
        for target in ["/openapi.yaml", "/v1/easings", "/", "/playground/app.js"] {
            let plain = try get(server, target).body
            for coding in ["gzip", "deflate"] {
                let first = try send(server, "GET", target, headers: [("Accept-Encoding", coding)])
                let second = try send(server, "GET", target, headers: [("Accept-Encoding", coding)])
                XCTAssertEqual(first.header("Content-Encoding"), coding, target)
                XCTAssertEqual(first.body, second.body, "\(target) \(coding)")
                XCTAssertEqual(try Self.inflate(first.body), plain, "\(target) \(coding)")
            }
        }
    }

    func testStreamsAreNeverCompressed() throws {
        let server = try startServer()
        let stream = try post(server, "/v1/streams?speed=0", large, headers: [("Accept-Encoding", "gzip")])
        XCTAssertEqual(stream.status, 200)
        XCTAssertNil(stream.header("Content-Encoding"))
        XCTAssertTrue(stream.text.hasPrefix(#"{"frame":0"#), stream.text.prefix(80).description)
    }

    // MARK: - Sessions list

    func testSessionsAreListedAPageAtATime() throws {
        let server = try startServer()
        var created: [String] = []
        for _ in 0..<3 {
            let response = try post(server, "/v1/sessions?speed=1", #"{"fps":30,"target":{"x":0},"motion":{"type":"tween","duration":60,"properties":[{"path":"x","to":1}]}}"#)
            XCTAssertEqual(response.status, 201)
            created.append(try XCTUnwrap(response.json()["id"]?.string))
        }
        _ = try command(server, created[1], #"{"command":"pause"}"#)
        let first = try get(server, "/v1/sessions?limit=2")
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.mediaType, "application/json")
        let page = try first.json()
        let entries = try XCTUnwrap(page["sessions"]?.array)
        XCTAssertEqual(entries.count, 2)
        for entry in entries {
            XCTAssertEqual(Set(entry.object?.keys.map { $0 } ?? []), ["id", "state", "time", "watchers"], entry.description)
            XCTAssertEqual(entry["watchers"], 0)
            XCTAssertGreaterThanOrEqual(entry["time"]?.double ?? -1, 0)
        }
        let next = try XCTUnwrap(page["next"]?.string, first.text)
        let second = try get(server, next).json()
        let rest = try XCTUnwrap(second["sessions"]?.array)
        XCTAssertEqual(rest.count, 1)
        XCTAssertEqual(second["next"], .null)
        let listed = (entries + rest).compactMap { $0["id"]?.string }
        XCTAssertEqual(listed, created.sorted(), "every session once, in id order")
        let paused = (entries + rest).first { $0["id"]?.string == created[1] }
        XCTAssertEqual(paused?["state"], "paused")

        try assertProblem(get(server, "/v1/sessions?limit=0"), status: 400)
        try assertProblem(get(server, "/v1/sessions?limit=1001"), status: 400)
        XCTAssertEqual(try get(server, "/v1/sessions?after=\(created.max()!)").json()["sessions"]?.array?.count, 0)
    }

    private func command(_ server: TestServer, _ id: String, _ json: String) throws -> RawHTTPResponse {
        try post(server, "/v1/sessions/\(id)/commands", json)
    }

    // MARK: - Problem pages

    func testEveryProblemTypeResolvesToAPage() throws {
        let server = try startServer()
        // Every type written in the sources…
        var types = Set<String>()
        let sources = Self.root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        let pattern = try NSRegularExpression(pattern: #""/problems/([a-z0-9-]+)""#)
        while let url = files?.nextObject() as? URL {
            guard ["swift", "c"].contains(url.pathExtension), let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                types.insert("/problems/" + (text as NSString).substring(with: match.range(at: 1)))
            }
        }
        XCTAssertGreaterThanOrEqual(types.count, 10, "types found: \(types)")
        // …and every type the server answers with for a few real mistakes.
        for response in [try post(server, "/v1/timelines", "{"), try post(server, "/v1/timelines", #"{"motion":{"type":"tween","duration":-1,"properties":[]}}"#),
                         try get(server, "/nowhere"), try send(server, "DELETE", "/healthz"), try post(server, "/v1/timelines", tween, contentType: "text/plain"),
                         try get(server, "/v1/sessions/nope")] {
            let type = try XCTUnwrap(response.json()["type"]?.string)
            XCTAssertTrue(types.contains(type), "\(type) is written in the sources")
        }
        for type in types.sorted() {
            let page = try get(server, type)
            XCTAssertEqual(page.status, 200, "\(type) has no page")
            XCTAssertEqual(page.header("Content-Type"), "text/html; charset=utf-8")
            XCTAssertTrue(page.text.contains("<h1>"), type)
            XCTAssertTrue(page.text.contains("HTTP status"), type)
        }
        try assertProblem(get(server, "/problems/no-such-problem"), status: 404)
        // openapi.yaml names every page.
        let spec = try get(server, "/openapi.yaml").text
        for type in types {
            let name = String(type.dropFirst("/problems/".count))
            XCTAssertTrue(spec.contains(" \(name),") || spec.contains(" \(name);"), "openapi.yaml lists \(type)")
        }
    }

    // MARK: - Messages

    func testUnknownFieldsSuggestTheFieldMeant() throws {
        let server = try startServer()
        let response = try post(server, "/v1/timelines", #"{"fps":10,"taget":{"x":0},"motion":{"type":"tween","durration":1,"properties":[{"path":"x","To":1}]}}"#)
        let body = try assertProblem(response, status: 400)
        let messages = Dictionary(problemEntries(body).map { ($0.pointer, $0.message) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(messages["/taget"], "unknown field 'taget': did you mean 'target'?")
        XCTAssertEqual(messages["/motion/durration"], "unknown field 'durration': did you mean 'duration'?")
        XCTAssertEqual(messages["/motion/properties/0/To"], "unknown field 'To': did you mean 'to'?")
        // Nothing close: no guess.
        let far = try assertProblem(post(server, "/v1/timelines", #"{"motion":{"type":"tween","duration":1,"properties":[]},"zebra":1}"#), status: 400)
        XCTAssertEqual(problemEntries(far).first { $0.pointer == "/zebra" }?.message, "unknown field 'zebra'")
        // Command bodies too.
        let session = try post(server, "/v1/sessions", tween)
        let id = try XCTUnwrap(session.json()["id"]?.string)
        let command = try assertProblem(post(server, "/v1/sessions/\(id)/commands", #"{"command":"seek","tme":1}"#), status: 400)
        XCTAssertTrue(problemEntries(command).contains { $0.pointer == "/tme" && $0.message.contains("did you mean 'time'?") }, "\(problemEntries(command))")
    }

    func testSessionProblemsPointAtTheField() throws {
        let server = try startServer()
        let id = try XCTUnwrap(post(server, "/v1/sessions", tween).json()["id"]?.string)
        let seek = try assertProblem(command(server, id, #"{"command":"seek","time":99}"#), status: 422, type: "/problems/invalid-body")
        XCTAssertEqual(problemEntries(seek).map(\.pointer), ["/time"])
        let path = try assertProblem(post(server, "/v1/sessions/\(id)/retarget", #"{"path":"y","to":1}"#), status: 422)
        XCTAssertEqual(problemEntries(path).map(\.pointer), ["/path"])
        let to = try assertProblem(post(server, "/v1/sessions/\(id)/retarget", #"{"path":"x","to":"blue-ish"}"#), status: 422)
        XCTAssertEqual(problemEntries(to).map(\.pointer), ["/to"])
        XCTAssertEqual(try command(server, id, #"{"command":"stop"}"#).status, 200)
        let stopped = try assertProblem(command(server, id, #"{"command":"resume"}"#), status: 409, type: "/problems/conflict")
        XCTAssertEqual(stopped["state"], "stopped")
        XCTAssertEqual(problemEntries(stopped).map(\.pointer), ["/command"])
    }

    func testAnUndampedSpringAsksForAWindow() throws {
        let server = try startServer()
        let response = try post(server, "/v1/timelines", #"{"target":{"x":0},"motion":{"type":"group","children":[{"type":"spring","stiffness":100,"damping":0,"properties":[{"path":"x","to":1}]}]}}"#)
        let body = try assertProblem(response, status: 422)
        let entry = try XCTUnwrap(problemEntries(body).first)
        XCTAssertEqual(entry.pointer, "/window")
        XCTAssertTrue(entry.message.contains("the spring at /motion/children/0 is undamped"), entry.message)
        XCTAssertTrue(entry.message.contains("window"), entry.message)
        // With the window it is computed.
        XCTAssertEqual(try post(server, "/v1/timelines", #"{"fps":10,"window":{"start":0,"end":1},"target":{"x":0},"motion":{"type":"spring","stiffness":100,"damping":0,"properties":[{"path":"x","to":1}]}}"#).status, 200)
    }

    // MARK: - Exact times, newlines

    func testEventTimesPrintAsTheDecimalsTheyAre() throws {
        let server = try startServer()
        // Three steps of 0.6 s: in binary floating point 0.6 + 0.6 + 0.6 = 1.7999999999999998.
        let step = #"{"type":"tween","duration":0.6,"properties":[{"path":"x","to":1}]}"#
        let response = try post(server, "/v1/timelines", #"{"fps":10,"target":{"x":0},"motion":{"type":"sequence","steps":[\#(step),\#(step),\#(step),{"type":"tween","duration":0.1,"properties":[{"path":"x","to":2}]},{"type":"tween","duration":0.2,"properties":[{"path":"x","to":3}]}]}}"#)
        XCTAssertEqual(response.status, 200)
        XCTAssertFalse(response.text.contains("1.7999999999999998"), response.text)
        let body = try response.json()
        let stepped = (body["events"]?.array ?? []).filter { $0["type"] == "stepped" }
        XCTAssertEqual(stepped.compactMap { $0["time"]?.double }, [0.6, 1.2, 1.8, 1.9])
        XCTAssertTrue(response.text.contains(#"{"time":1.8,"frame":18,"type":"stepped","motion":"/motion","step":3}"#), response.text)
        XCTAssertEqual(body["duration"], 2.1, "0.6·3 + 0.1 + 0.2 prints as 2.1, not 2.0999999999999996")
        // A time that is not a short decimal (a wall contact) keeps its full precision.
        let ball = try timeline(server, #"{"fps":10,"target":{"x":0},"motion":{"type":"physics","velocity":400,"friction":0.4,"restitution":0.7,"collisions":true,"properties":[{"path":"x","from":0,"to":100}]},"window":{"start":0,"end":1}}"#)
        let contact = try XCTUnwrap(ball["events"]?[1]?["time"]?.double)
        let lambda = -log(1 - 0.4)
        XCTAssertEqual(contact, -log(1 - lambda * 100 / 400) / lambda, accuracy: 1e-15)
        XCTAssertGreaterThanOrEqual("\(contact)".count, 17, "\(contact) is not rounded to a short decimal")
    }

    func testJSONAnswersEndWithANewline() throws {
        let server = try startServer()
        let id = try XCTUnwrap(post(server, "/v1/sessions", tween).json()["id"]?.string)
        let answers = [try get(server, "/healthz"), try get(server, "/readyz"), try get(server, "/v1/easings"),
                       try post(server, "/v1/timelines", tween), try post(server, "/v1/timelines", "{"),
                       try get(server, "/v1/sessions/\(id)"), try get(server, "/v1/sessions"), try get(server, "/nowhere")]
        for response in answers {
            XCTAssertEqual(response.body.last, UInt8(ascii: "\n"), response.text)
            XCTAssertNotEqual(response.body.dropLast().last, UInt8(ascii: "\n"), "one newline: \(response.text)")
        }
    }

    // MARK: - Version

    func testTheVersionAgreesEverywhere() throws {
        let server = try startServer()
        let health = try get(server, "/healthz").json()
        let version = try XCTUnwrap(health["version"]?.string)
        XCTAssertNotNil(version.range(of: #"^\d+\.\d+\.\d+$"#, options: .regularExpression), version)

        let spec = try get(server, "/openapi.yaml").text
        let infoVersion = spec.components(separatedBy: "\n").drop { $0 != "info:" }.first { $0.hasPrefix("  version:") }
        XCTAssertEqual(infoVersion?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces), version, "openapi.yaml info.version")

        let cli = try runBinary(["--version"])
        XCTAssertEqual(cli.status, 0)
        XCTAssertEqual(cli.stdout.trimmingCharacters(in: .whitespacesAndNewlines), version, "motion-server --version")

        let changelog = try String(contentsOf: Self.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let top = changelog.components(separatedBy: "\n").first { $0.hasPrefix("## ") }
        XCTAssertTrue(top?.hasPrefix("## \(version)") ?? false, "CHANGELOG.md's first entry is \(top ?? "missing"), not \(version)")
        let license = try String(contentsOf: Self.root.appendingPathComponent("LICENSE"), encoding: .utf8)
        XCTAssertTrue(license.contains("Apache License") && license.contains("Version 2.0, January 2004") && license.contains("END OF TERMS AND CONDITIONS"))
    }

    // MARK: - render

    func testRenderPrintsExactlyWhatTheServerAnswers() throws {
        let server = try startServer()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("render-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let documents = [
            tween, large,
            ##"{"fps":4,"target":{"tint":"#336699"},"output":{"layout":"frames"},"motion":{"type":"sequence","reverses":true,"steps":[{"type":"tween","duration":0.5,"properties":[{"path":"tint","to":"#ff9933"}]},{"type":"decay","velocity":300,"properties":[{"path":"tint.alpha","to":0.5}]}]}}"##,
        ]
        for (index, document) in documents.enumerated() {
            let served = try post(server, "/v1/timelines", document)
            XCTAssertEqual(served.status, 200, served.text)
            let file = directory.appendingPathComponent("doc\(index).json")
            try Data(document.utf8).write(to: file)
            let fromFile = try runBinary(["render", file.path])
            XCTAssertEqual(fromFile.status, 0, fromFile.stderr)
            XCTAssertEqual(fromFile.stdoutBytes, served.body, "render \(index) from a file: the same bytes")
            let fromStdin = try runBinary(["render", "-"], stdin: Array(document.utf8))
            XCTAssertEqual(fromStdin.stdoutBytes, served.body, "render \(index) from stdin")
            let output = directory.appendingPathComponent("out\(index).json")
            let toFile = try runBinary(["render", file.path, "--output", output.path])
            XCTAssertEqual(toFile.status, 0)
            XCTAssertTrue(toFile.stdoutBytes.isEmpty)
            XCTAssertEqual(Array(try Data(contentsOf: output)), served.body, "render \(index) --output")
        }
        // --format goes into output.format: the same answer as the server's for that document.
        let withFormat = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":100}]},"output":{"format":"json"}}"#
        let served = try post(server, "/v1/timelines", withFormat)
        let rendered = try runBinary(["render", "--format", "json", "-"], stdin: Array(tween.utf8))
        XCTAssertEqual(rendered.status, served.status == 200 ? 0 : 1)
        if served.status == 200 { XCTAssertEqual(rendered.stdoutBytes, served.body) }
    }

    func testRenderReportsProblemsOnStderrWithPointers() throws {
        let result = try runBinary(["render", "-"], stdin: Array(#"{"fps":"x","motion":{"type":"tween","duration":-1,"properties":[{"path":"x","to":1}]},"extra":1}"#.utf8))
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stdoutBytes.isEmpty)
        XCTAssertTrue(result.stderr.contains("Malformed timeline document (400)"), result.stderr)
        XCTAssertTrue(result.stderr.contains("  /fps: must be a number, not a string"), result.stderr)
        XCTAssertTrue(result.stderr.contains("  /extra: unknown field 'extra'"), result.stderr)
        let missing = try runBinary(["render", "/nonexistent/doc.json"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("cannot read /nonexistent/doc.json"), missing.stderr)
    }

    // MARK: - The documentation checker

    /// scripts/check-examples.py passes a true example and fails a drifted one, one with no
    /// answer, and a wrong status line; a marked example is skipped.
    func testTheExampleCheckerCatchesDrift() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("examples-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fence = "```"
        let request = "curl -s localhost:8080/v1/timelines -H 'Content-Type: application/json' -d '{\"fps\":2,\"target\":{\"x\":0},\"motion\":{\"type\":\"tween\",\"duration\":0.5,\"properties\":[{\"path\":\"x\",\"to\":10}]}}'"
        let answer = #"{"fps":2,"duration":0.5,"frameCount":2,"window":{"start":0,"end":0.5},"times":[0,0.5],"tracks":[{"path":"x","values":[0,10]}],"events":[{"time":0,"frame":0,"type":"started","motion":"/motion"},…],"final":{"x":…}}"#
        let cases: [(String, String, Int32)] = [
            ("true", "\(fence)sh\n\(request)\n\(fence)\n\n\(fence)json\n\(answer)\n\(fence)\n", 0),
            ("drifted", "\(fence)sh\n\(request)\n\(fence)\n\n\(fence)json\n\(answer.replacingOccurrences(of: "[0,10]", with: "[0,11]"))\n\(fence)\n", 1),
            ("unanswered", "\(fence)sh\n\(request)\n\(fence)\n", 1),
            ("skipped", "<!-- not checked: a test -->\n\(fence)sh\n\(request)\n\(fence)\n", 0),
            ("status", "\(fence)sh\ncurl -si localhost:8080/nowhere\n\(fence)\n\n\(fence)http\nHTTP/1.1 200 OK\n\(fence)\n", 1),
            ("text", "\(fence)sh\ncurl -s localhost:8080/readyz\n\(fence)\n\n\(fence)\n{\"status\":\"ready\"}\n\(fence)\n", 0),
        ]
        for (name, markdown, expected) in cases {
            let file = directory.appendingPathComponent("\(name).md")
            try Data(markdown.utf8).write(to: file)
            let run = try Self.run(URL(fileURLWithPath: "/usr/bin/env"),
                                   ["python3", Self.root.appendingPathComponent("scripts/check-examples.py").path,
                                    "--binary", TestServer.locateBinary().path, file.path])
            XCTAssertEqual(run.status, expected, "\(name):\n\(run.stdout)\(run.stderr)")
        }
    }

    // MARK: - Helpers

    struct Run {
        var status: Int32
        var stdoutBytes: [UInt8]
        var stderr: String
        var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
    }

    /// Runs the motion-server binary to its end (at most 60 s).
    func runBinary(_ arguments: [String], stdin: [UInt8] = []) throws -> Run {
        try Self.run(TestServer.locateBinary(), arguments, stdin: stdin)
    }

    static func run(_ executable: URL, _ arguments: [String], stdin: [UInt8] = []) throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MOTION_") }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let writer = Thread {
            input.fileHandleForWriting.write(Data(stdin))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        final class Box: @unchecked Sendable { var data = Data() }
        let errorBox = Box()
        // The reader signals when it has stored the data; waiting on the semaphore (not
        // polling `isExecuting`) is what orders that store before the read below
        // (ThreadSanitizer reported the polling as a data race).
        let errorsRead = DispatchSemaphore(value: 0)
        let errorReader = Thread {
            errorBox.data = errors.fileHandleForReading.readDataToEndOfFile()
            errorsRead.signal()
        }
        errorReader.start()
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let deadline = Date(timeIntervalSinceNow: 60)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        errorsRead.wait()
        return Run(status: process.terminationStatus, stdoutBytes: Array(outData), stderr: String(decoding: errorBox.data, as: UTF8.self))
    }

    /// gzip or zlib data inflated by Python's zlib (wbits 47 detects either).
    static func inflate(_ bytes: [UInt8]) throws -> [UInt8] {
        let python = URL(fileURLWithPath: "/usr/bin/env")
        let run = try run(python, ["python3", "-c", "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(sys.stdin.buffer.read(), 47))"], stdin: bytes)
        guard run.status == 0 else { throw TestServerError(description: "inflate failed: \(run.stderr)") }
        return run.stdoutBytes
    }
}
