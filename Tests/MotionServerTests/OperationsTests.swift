import Foundation
import Logging
import XCTest
@testable import MotionHTTP

/// The JSON log handler on its own: each line is one JSON object with the fixed fields first.
final class LineLogHandlerTests: XCTestCase {
    private final class Lines: @unchecked Sendable {
        let lock = NSLock()
        var lines: [String] = []
        func append(_ bytes: [UInt8]) { lock.withLock { lines.append(String(decoding: bytes, as: UTF8.self)) } }
    }

    private func logger(_ format: LineLogHandler.Format, level: Logger.Level = .info) -> (Logger, Lines) {
        let lines = Lines()
        let output = LogOutput(capture: { lines.append($0) })
        let logger = Logger(label: "test") { LineLogHandler(label: $0, format: format, output: output, level: level) }
        return (logger, lines)
    }

    func testJSONLineHasFixedFieldsAndTypedMetadata() throws {
        var (logger, lines) = logger(.json)
        logger[metadataKey: "instance"] = "r1"
        logger.info("request \"quoted\"\nnext", metadata: [
            "status": .stringConvertible(200), "duration": .stringConvertible(0.25), "path": "/v1/x",
            "message": "collides", "list": .array(["a", .stringConvertible(2)]),
        ])
        logger.debug("below the level")
        XCTAssertEqual(lines.lines.count, 1, "the debug message is filtered out")
        let line = try XCTUnwrap(lines.lines.first)
        XCTAssertTrue(line.hasSuffix("}\n"))
        XCTAssertEqual(line.filter { $0 == "\n" }.count, 1, "one line: newlines in the message are escaped")
        XCTAssertTrue(line.hasPrefix(#"{"time":""#), line)
        let object = try JSONValue.parse(line)
        XCTAssertEqual(object["level"]?.string, "info")
        XCTAssertEqual(object["logger"]?.string, "test")
        XCTAssertEqual(object["message"]?.string, "request \"quoted\"\nnext")
        XCTAssertEqual(object["metadata.message"]?.string, "collides")
        XCTAssertEqual(object["status"], 200)
        XCTAssertEqual(object["duration"]?.double, 0.25)
        XCTAssertEqual(object["path"]?.string, "/v1/x")
        XCTAssertEqual(object["instance"]?.string, "r1")
        XCTAssertEqual(object["list"]?.array?.count, 2)
        // RFC 3339 UTC with milliseconds, and close to now.
        let time = try XCTUnwrap(object["time"]?.string)
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = try XCTUnwrap(parser.date(from: time), time)
        XCTAssertLessThan(abs(date.timeIntervalSinceNow), 5)
    }

    func testTextLineQuotesValuesWithSpaces() throws {
        let (logger, lines) = logger(.text)
        logger.warning("drain timeout", metadata: ["open-streams": "3", "why": "two words"])
        let line = try XCTUnwrap(lines.lines.first)
        XCTAssertTrue(line.hasSuffix(" warning drain timeout open-streams=3 why=\"two words\"\n"), line)
    }

    /// The access line written without swift-log (`logAccess`) is byte for byte the line
    /// `log(event:)` writes for the same fields: random records (values with spaces, quotes,
    /// `=`, backslashes, line breaks of every kind, non-ASCII, empty), both formats, and
    /// handler metadata before, between, after and colliding with the record's keys.
    func testAccessLineIsTheGenericLineByteForByte() {
        var random = SystemRandomNumberGenerator()
        let pieces = ["a", "/v1/timelines", " ", "\"", "=", "\\", "\n", "\r\n", "\r", "\t", "\u{0B}", "\u{0C}", "é",
                      "\u{85}", "\u{2028}", "\u{2029}", "😀", "?x=1&y=2", "127.0.0.1:5000", "[::1]:80", "~", "\u{1}"]
        func text() -> String {
            (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }
        func duration() -> Double {
            switch Int.random(in: 0...4, using: &random) {
            case 0: return Double(Int.random(in: 0...100, using: &random))
            case 1: return (Double.random(in: 0...1e-4, using: &random) * 1e6).rounded() / 1e6
            case 2: return (Double.random(in: 0...10, using: &random) * 1e6).rounded() / 1e6
            case 3: return Double.random(in: 1e15...1e20, using: &random)
            default: return Double(bitPattern: UInt64.random(in: 0..<0x7FF0_0000_0000_0000, using: &random))
            }
        }
        let ownMetadata: [Logger.Metadata] = [
            [:], ["instance": "r1"], ["a": "two words", "status": "shadowed", "time": "t", "zz": .stringConvertible(3)],
            ["bytesx": "1", "client": "own", "list": .array(["x", .stringConvertible(2.5)]), "q": .dictionary(["k": "v w"])],
        ]
        let time = "2026-11-28T21:00:00.123Z"
        for format in LineLogHandler.Format.allCases {
            for metadata in ownMetadata {
                var handler = LineLogHandler(label: "motion-server", format: format, output: LogOutput(capture: { _ in }))
                for (key, value) in metadata { handler[metadataKey: key] = value }
                for _ in 0..<2_000 {
                    let record = AccessRecord(requestID: text(), method: text(), path: text(),
                                              status: Int.random(in: -1_000...1_000, using: &random),
                                              bytes: Int.random(in: 0...Int.max, using: &random), duration: duration(), client: text())
                    let merged = handler.metadata.merging(record.metadata) { _, new in new }
                    let expected = format == .json
                        ? LineLogHandler.jsonLine(time: time, level: .info, label: "motion-server", message: "request", metadata: merged)
                        : LineLogHandler.textLine(time: time, level: .info, message: "request", metadata: merged)
                    let line = handler.accessLine(time: time, record)
                    if line != expected {
                        XCTFail("\(format) \(metadata):\n\(String(decoding: line, as: UTF8.self))\(String(decoding: expected, as: UTF8.self))")
                        return
                    }
                }
            }
        }
    }

    /// A text line's value is quoted and escaped by the rule text lines have always followed
    /// (written here with `String` and Foundation, as the handler once did): quoted when empty
    /// or holding a space, a quote, `=` or a `Character.isNewline` break; then `\\`, `\"` and
    /// `\n` escaped. Random strings of the awkward pieces, and each piece alone.
    func testTextValuesAreQuotedByTheRule() {
        func reference(_ plain: String) -> String {
            let quoted = plain.isEmpty || plain.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline })
            guard quoted else { return plain }
            return "\"" + plain.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\n", with: "\\n") + "\""
        }
        let pieces = ["a", "/v1/x", " ", "\"", "=", "\\", "\n", "\r\n", "\r", "\t", "\u{0B}", "\u{0C}", "é", "\u{85}",
                      "\u{2028}", "\u{2029}", "😀", "?x=1&y=2", "[::1]:80", "\u{1}", "\u{C2}", "\u{E2}"]
        var random = SystemRandomNumberGenerator()
        var texts = pieces + [""]
        texts += (0..<20_000).map { _ in (0..<Int.random(in: 1...5, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() }
        for text in texts {
            var bytes: [UInt8] = []
            LineLogHandler.appendTextValue(text, to: &bytes)
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), reference(text), "\(Array(text.unicodeScalars))")
        }
    }

    /// The timestamp written from the day number is `gmtime_r`'s date and time, over random
    /// instants from 1970 to 9999 and the days around leap years and centuries.
    func testTimestampIsGmtimes() {
        func reference(_ seconds: Int64, _ milliseconds: Int) -> String {
            var t = time_t(seconds)
            var parts = tm()
            gmtime_r(&t, &parts)
            return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                          parts.tm_hour, parts.tm_min, parts.tm_sec, milliseconds)
        }
        var instants: [Int64] = [0, 59, 86_399, 86_400, 951_782_400, 951_868_799, 951_868_800, 4_107_456_000, 4_107_542_400,
                                 1_796_083_200, 253_402_300_799]
        for year in [1972, 2000, 2024, 2100, 2400] {
            // The last second of February and the first of March in a leap year (or not).
            var parts = tm()
            parts.tm_year = Int32(year - 1900); parts.tm_mon = 2; parts.tm_mday = 1
            let march = Int64(timegm(&parts))
            instants += [march - 1, march, march - 86_400]
        }
        var random = SystemRandomNumberGenerator()
        instants += (0..<200_000).map { _ in Int64.random(in: 0...253_402_300_799, using: &random) }
        for seconds in instants {
            let milliseconds = Int.random(in: 0...999, using: &random)
            var bytes: [UInt8] = []
            LineLogHandler.appendTimestamp(seconds: seconds, milliseconds: milliseconds, to: &bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            if text != reference(seconds, milliseconds) {
                XCTFail("\(seconds): \(text), gmtime_r says \(reference(seconds, milliseconds))")
                return
            }
        }
        XCTAssertEqual(LineLogHandler.timestamp().utf8.count, LineLogHandler.timestampBytes)
    }

    func testRequestIDValidation() {
        XCTAssertTrue(RequestID.isValid("abc-123_x.y:z"))
        XCTAssertFalse(RequestID.isValid(""))
        XCTAssertFalse(RequestID.isValid("a b"))
        XCTAssertFalse(RequestID.isValid("a\"b"))
        XCTAssertFalse(RequestID.isValid(String(repeating: "a", count: 129)))
        XCTAssertTrue(RequestID.isValid(String(repeating: "a", count: 128)))
        let generated = RequestID.generate()
        XCTAssertEqual(generated.count, 32)
        XCTAssertTrue(RequestID.isValid(generated))
        XCTAssertNotEqual(generated, RequestID.generate())
        // Distinct over many ids, from several threads at once; each 32 lowercase hex digits.
        final class Collected: @unchecked Sendable {
            let lock = NSLock()
            var ids = Set<String>()
        }
        let collected = Collected()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let ids = (0..<50_000).map { _ in RequestID.generate() }
            collected.lock.withLock { collected.ids.formUnion(ids) }
        }
        let seen = collected.ids
        XCTAssertEqual(seen.count, 200_000)
        XCTAssertTrue(seen.allSatisfy { $0.utf8.count == 32 && $0.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } })
        // The mixing is a bijection's output, not the serial: consecutive ids differ in about
        // half their bits.
        let a = RequestID.mix(1), b = RequestID.mix(2)
        XCTAssertGreaterThan((a ^ b).nonzeroBitCount, 16)
    }
}

/// Structured logs, request ids and instance ids over a real server.
final class StructuredLogTests: ServerTestCase {
    private let tween = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":0.3,"properties":[{"path":"x","to":1}]}}"#

    /// The server's JSON log lines (every stderr line must parse).
    private func logLines(_ server: TestServer, file: StaticString = #filePath, line: UInt = #line) -> [JSONValue] {
        server.errorOutput.split(separator: "\n").compactMap { text in
            do { return try JSONValue.parse(String(text)) } catch {
                XCTFail("a log line that is not JSON: \(text)", file: file, line: line)
                return nil
            }
        }
    }

    private func accessLine(_ server: TestServer, requestID: String) throws -> JSONValue {
        server.waitForLog { $0.contains(#""requestId":"\#(requestID)""#) && $0.contains(#""message":"request""#) }
        return try XCTUnwrap(logLines(server).first { $0["message"] == "request" && $0["requestId"]?.string == requestID },
                             server.errorOutput)
    }

    func testAccessLineForEveryRequestWithTheClientsRequestID() throws {
        let server = try startServer(["--log-format", "json", "--instance-id", "replica-a"])
        let response = try post(server, "/v1/timelines", tween, headers: [("X-Request-Id", "trace-0001")])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("X-Request-Id"), "trace-0001")
        XCTAssertEqual(response.header("X-Instance-Id"), "replica-a")
        let line = try accessLine(server, requestID: "trace-0001")
        XCTAssertEqual(line["method"], "POST")
        XCTAssertEqual(line["path"], "/v1/timelines")
        XCTAssertEqual(line["status"], 200)
        XCTAssertEqual(line["bytes"]?.int, response.body.count)
        XCTAssertEqual(line["instance"], "replica-a")
        XCTAssertEqual(line["level"], "info")
        let duration = try XCTUnwrap(line["duration"]?.double)
        XCTAssertTrue(duration >= 0 && duration < 10, "\(duration)")
        XCTAssertTrue(line["client"]?.string?.hasPrefix("127.0.0.1:") ?? false, "\(line)")
        // The start-up lines are JSON too.
        XCTAssertTrue(logLines(server).contains { $0["message"] == "listening" })
    }

    func testInvalidRequestIDIsReplacedAndProblemsCarryTheID() throws {
        let server = try startServer(["--log-format", "json"])
        for bad in [String(repeating: "x", count: 129), "has space", "quote\"d", "semi;colon"] {
            let response = try post(server, "/v1/timelines", #"{"motion":{"type":"tween","duration":-1}}"#, headers: [("X-Request-Id", bad)])
            let body = try assertProblem(response, status: 400)
            let id = try XCTUnwrap(response.header("X-Request-Id"))
            XCTAssertNotEqual(id, bad)
            XCTAssertEqual(id.count, 32, "a generated id: \(id)")
            XCTAssertTrue(id.allSatisfy(\.isHexDigit))
            XCTAssertEqual(body["requestId"]?.string, id, "the problem body names the same id")
            XCTAssertEqual(try accessLine(server, requestID: id)["status"], 400)
        }
        // Problems from the routing layer and from the request head carry it too.
        let missing = try send(server, "GET", "/nowhere", headers: [("X-Request-Id", "r-404")])
        XCTAssertEqual(try assertProblem(missing, status: 404)["requestId"], "r-404")
        let wrongMethod = try send(server, "PATCH", "/v1/timelines", headers: [("X-Request-Id", "r-405")])
        XCTAssertEqual(try assertProblem(wrongMethod, status: 405)["requestId"], "r-405")
        // Without a header, every answer still gets a fresh id.
        let first = try get(server, "/healthz").header("X-Request-Id"), second = try get(server, "/healthz").header("X-Request-Id")
        XCTAssertNotNil(first)
        XCTAssertNotEqual(first, second)
        XCTAssertNil(try get(server, "/healthz").header("X-Instance-Id"), "no instance id unless configured")
    }

    func testStreamAndWatcherEndLines() throws {
        let server = try startServer(["--log-format", "json"])
        // A stream that runs to its end: 4 frames (0, 0.1, 0.2, 0.3).
        let streamed = try post(server, "/v1/streams?speed=0", tween, headers: [("X-Request-Id", "stream-1")])
        XCTAssertEqual(streamed.status, 200)
        server.waitForLog { $0.contains(#""message":"stream ended""#) }
        let ended = try XCTUnwrap(logLines(server).first { $0["message"] == "stream ended" && $0["requestId"] == "stream-1" }, server.errorOutput)
        XCTAssertEqual(ended["frames"], 4)
        XCTAssertEqual(ended["dropped"], 0)
        XCTAssertEqual(ended["reason"], "completed")
        XCTAssertEqual(try accessLine(server, requestID: "stream-1")["bytes"]?.int, streamed.body.count)

        // A session watcher ended by DELETE.
        let put = try send(server, "PUT", "/v1/sessions/logged", headers: [("Content-Type", "application/json")],
                           body: Array(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":100,"properties":[{"path":"x","to":1}]}}"#.utf8))
        XCTAssertEqual(put.status, 201, put.text)
        let client = try server.client()
        try client.sendRequest("GET", "/v1/sessions/logged/frames", headers: [("X-Request-Id", "watch-1")])
        XCTAssertEqual(try client.readResponseHead().status, 200)
        let lines = StreamLineReader(client)
        _ = try lines.read(until: { $0["frame"] != nil })
        XCTAssertEqual(try send(server, "DELETE", "/v1/sessions/logged").status, 204)
        _ = try lines.read(until: { $0["end"] != nil })
        server.waitForLog { $0.contains(#""reason":"session-deleted""#) }
        let watcher = try XCTUnwrap(logLines(server).first { $0["message"] == "stream ended" && $0["requestId"] == "watch-1" }, server.errorOutput)
        XCTAssertEqual(watcher["reason"], "session-deleted")
        XCTAssertGreaterThanOrEqual(watcher["frames"]?.int ?? 0, 1)

        // A client that leaves first.
        let leaving = try server.client()
        try leaving.sendRequest("POST", "/v1/streams", headers: [("Content-Type", "application/json"), ("X-Request-Id", "gone-1")],
                                body: Array(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":100,"properties":[{"path":"x","to":1}]}}"#.utf8))
        XCTAssertEqual(try leaving.readResponseHead().status, 200)
        leaving.closeAbruptly()
        server.waitForLog(timeout: 10) { $0.contains(#""reason":"client-closed""#) }
        let gone = try XCTUnwrap(logLines(server).first { $0["requestId"] == "gone-1" && $0["message"] == "stream ended" }, server.errorOutput)
        XCTAssertEqual(gone["reason"], "client-closed")
    }

    /// `--threads` and `--compute-threads` default to the CPUs the process may use: its
    /// affinity mask (the `Cpus_allowed` line of /proc/self/status) narrows the online CPUs.
    func testDefaultThreadsFollowTheCPUsTheProcessMayRunOn() throws {
        let count = ServerConfiguration.affinityCPUCount(status:)
        XCTAssertEqual(count("Name:\tmotion-server\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n"), 2)
        XCTAssertEqual(count("Cpus_allowed:\tff,ffffffff\n"), 40)
        XCTAssertEqual(count("Cpus_allowed:\t00000000,00000001"), 1)
        XCTAssertNil(count("Cpus_allowed:\t0\n"))
        XCTAssertNil(count("Cpus_allowed:\tzz\n"))
        XCTAssertNil(count("Cpus_allowed_list:\t0-1\n"))
        let mine = try XCTUnwrap(ServerConfiguration.affinityCPUCount())
        XCTAssertLessThanOrEqual(ServerConfiguration.cpuCount, mine)

        let taskset = "/usr/bin/taskset"
        guard FileManager.default.isExecutableFile(atPath: taskset) else { throw XCTSkip("no \(taskset)") }
        let pinned = try startServer(["--log-format", "text"], launcher: [taskset, "-c", "0"])
        let line = pinned.waitForLog { $0.contains(" listening ") }
        XCTAssertTrue(line.contains("threads=1"), line)
        XCTAssertEqual(try get(pinned, "/healthz").status, 200)
    }

    func testShutdownReasonAndTextFormat() throws {
        let server = try startServer(["--log-format", "text"])
        let client = try server.client()
        try client.sendRequest("POST", "/v1/streams", headers: [("Content-Type", "application/json"), ("X-Request-Id", "draining-1")],
                                body: Array(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":100,"properties":[{"path":"x","to":1}]}}"#.utf8))
        XCTAssertEqual(try client.readResponseHead().status, 200)
        _ = try StreamLineReader(client).next()
        XCTAssertEqual(server.terminate(timeout: 10), .exited(0))
        let text = server.errorOutput
        XCTAssertTrue(text.contains(" info stream ended ") && text.contains("reason=shutdown requestId=draining-1"), text)
        XCTAssertTrue(text.contains(" info request ") && text.contains("method=POST path=/v1/streams requestId=draining-1 status=200"), text)
    }

    func testLogFileAndEnvironment() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("motion-log-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let server = try startServer(environment: ["MOTION_LOG_FORMAT": "json", "MOTION_LOG_FILE": path, "MOTION_INSTANCE_ID": "env-1"])
        XCTAssertEqual(try get(server, "/healthz").header("X-Instance-Id"), "env-1")
        XCTAssertEqual(server.terminate(timeout: 10), .exited(0))
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { try JSONValue.parse(String($0)) }
        XCTAssertTrue(lines.contains { $0["message"] == "request" && $0["path"] == "/healthz" && $0["instance"] == "env-1" }, "\(lines)")
        XCTAssertFalse(server.errorOutput.contains("/healthz"), "the access log went to the file, not stderr")
    }
}

/// Bad configuration: one line on stderr, `motion-server: …`, and a non-zero exit.
final class ConfigurationErrorTests: XCTestCase {
    private func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = try TestServer.locateBinary()
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MOTION_") }
        env.merge(environment) { _, new in new }
        process.environment = env
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // A value wrongly accepted starts the server: stop it after 20 s so that the
        // assertions fail rather than the test hanging.
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) { if process.isRunning { process.terminate() } }
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    private func assertOneLineError(_ arguments: [String], environment: [String: String] = [:], mentions: String,
                                    file: StaticString = #filePath, line: UInt = #line) throws {
        let (status, stderr) = try run(arguments, environment: environment)
        XCTAssertNotEqual(status, 0, file: file, line: line)
        let lines = stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "one line: \(stderr)", file: file, line: line)
        XCTAssertTrue(lines.first?.hasPrefix("motion-server: ") ?? false, stderr, file: file, line: line)
        XCTAssertTrue(stderr.contains(mentions), "mentions \(mentions): \(stderr)", file: file, line: line)
    }

    func testBadValuesAreOneLineErrors() throws {
        try assertOneLineError(["--log-format", "xml"], mentions: "--log-format 'xml'")
        try assertOneLineError([], environment: ["MOTION_LOG_FORMAT": "yaml"], mentions: "'yaml'")
        try assertOneLineError(["--log-level", "loud"], mentions: "--log-level")
        try assertOneLineError(["--port", "99999"], mentions: "--port")
        try assertOneLineError(["--instance-id", "two words"], mentions: "--instance-id")
        try assertOneLineError(["--log-file", "/nonexistent-directory/motion.log"], mentions: "/nonexistent-directory/motion.log")
        try assertOneLineError(["--no-such-flag"], mentions: "--no-such-flag")
        try assertOneLineError(["--tcp-keepalive", "40000"], mentions: "--tcp-keepalive")
        try assertOneLineError(["--max-backlog-events", "0"], mentions: "--max-backlog-events")
        try assertOneLineError([], environment: ["MOTION_MAX_RETARGETS": "-1"], mentions: "--max-retargets")
        // Not-a-number and infinite durations (NaN passed the old checks: a drain of NaN
        // seconds did not wait at all).
        for value in ["nan", "inf", "-1"] {
            try assertOneLineError(["--port", "0", "--drain-timeout", value], mentions: "--drain-timeout")
            try assertOneLineError(["--port", "0", "--session-ttl", value], mentions: "--session-ttl")
        }
        try assertOneLineError([], environment: ["MOTION_DRAIN_TIMEOUT": "nan"], mentions: "--drain-timeout")
        // The per-session limits have upper bounds (Int.max was accepted and made every
        // session too large to create, or let a stalled watcher queue without end).
        for (flag, value) in [("--max-watchers", "100001"), ("--max-backlog-frames", "9223372036854775807"),
                              ("--max-backlog-events", "100001"), ("--max-retargets", "1000001")] {
            try assertOneLineError(["--port", "0", flag, value], mentions: flag)
        }
    }

    func testPortInUseExitsNonZero() throws {
        let first = try TestServer()
        defer { first.terminate() }
        let (status, stderr) = try run(["--host", "127.0.0.1", "--port", String(first.port), "--log-level", "error"])
        XCTAssertEqual(status, 1)
        XCTAssertEqual(stderr.split(separator: "\n").count, 1, stderr)
        XCTAssertTrue(stderr.hasPrefix("motion-server: could not listen on 127.0.0.1:\(first.port)"), stderr)
    }
}

/// `PUT /v1/sessions/{id}`: a session under an id the client chooses (docs/streams-and-sessions.md).
final class SessionPutTests: ServerTestCase {
    private let document = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":10,"properties":[{"path":"x","to":100}]}}"#

    private func put(_ server: TestServer, _ id: String, _ json: String? = nil, query: String = "") throws -> RawHTTPResponse {
        try send(server, "PUT", "/v1/sessions/\(id)\(query)", headers: [("Content-Type", "application/json")], body: Array((json ?? document).utf8))
    }

    func testCreateWithChosenIDThenSteerAndConflict() throws {
        let server = try startServer()
        let created = try put(server, "player-1_A", query: "?speed=2")
        XCTAssertEqual(created.status, 201, created.text)
        XCTAssertEqual(created.header("Location"), "/v1/sessions/player-1_A")
        let state = try created.json()
        XCTAssertEqual(state["id"], "player-1_A")
        XCTAssertEqual(state["speed"], 2)
        XCTAssertEqual(state["state"], "running")
        XCTAssertEqual(state["frames"], "/v1/sessions/player-1_A/frames")

        let paused = try post(server, "/v1/sessions/player-1_A/commands", #"{"command":"pause"}"#)
        XCTAssertEqual(try paused.json()["state"], "paused")
        XCTAssertEqual(try get(server, "/v1/sessions/player-1_A").json()["state"], "paused")

        // The id is taken: 409, and the existing session is untouched.
        let again = try put(server, "player-1_A")
        let problem = try assertProblem(again, status: 409, type: "/problems/conflict")
        XCTAssertTrue(problem["detail"]?.string?.contains("player-1_A") ?? false)
        XCTAssertEqual(try get(server, "/v1/sessions/player-1_A").json()["state"], "paused")

        // Once deleted, the id may be used again.
        XCTAssertEqual(try send(server, "DELETE", "/v1/sessions/player-1_A").status, 204)
        XCTAssertEqual(try put(server, "player-1_A").status, 201)
    }

    func testInvalidIDsAreA400NamingTheID() throws {
        let server = try startServer()
        let longest = String(repeating: "a", count: 64)
        XCTAssertEqual(try put(server, longest).status, 201)
        for bad in [String(repeating: "a", count: 65), "dot.ted", "sp%20ace", "semi;colon", "%C3%A9t%C3%A9", "colon:x", "tilde~"] {
            let response = try put(server, bad)
            let body = try assertProblem(response, status: 400)
            let entries = body["errors"]?.array ?? []
            XCTAssertEqual(entries.first?["parameter"], "id", "\(bad): \(response.text)")
        }
        // The id is checked before the document: a bad id with a bad body is still the 400 naming it.
        let both = try put(server, "bad.id", #"{"motion":{"type":"tween","duration":-1,"properties":[]}}"#)
        XCTAssertEqual(try assertProblem(both, status: 400)["errors"]?[0]?["parameter"], "id")
        XCTAssertTrue(try get(server, "/metrics").text.contains("motion_live_sessions 1"), "only the 64-character one was created")
    }

    func testDocumentProblemsAndLimits() throws {
        let server = try startServer(["--max-sessions", "1"])
        let invalid = try put(server, "s1", #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":-1,"properties":[{"path":"x","to":1}]}}"#)
        let body = try assertProblem(invalid, status: 422)
        XCTAssertEqual(problemEntries(body).first?.pointer, "/motion/duration")
        let badSpeed = try put(server, "s1", query: "?speed=0")
        XCTAssertEqual(try assertProblem(badSpeed, status: 400)["errors"]?[0]?["parameter"], "speed")
        let notJSON = try send(server, "PUT", "/v1/sessions/s1", headers: [("Content-Type", "text/plain")], body: Array(document.utf8))
        try assertProblem(notJSON, status: 415)
        XCTAssertEqual(try put(server, "s1").status, 201)
        try assertProblem(try put(server, "s2"), status: 503)
        // A conflicting id is a 409 even when the registry is full.
        try assertProblem(try put(server, "s1"), status: 409)
    }
}
