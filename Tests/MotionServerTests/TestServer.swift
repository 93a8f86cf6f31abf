import Foundation
import Glibc
import XCTest

struct TestServerError: Error, CustomStringConvertible {
    var description: String
}

/// How the server process ended.
enum ServerExit: Equatable, CustomStringConvertible {
    /// Exited normally with this status.
    case exited(Int32)
    /// Killed by this signal.
    case signaled(Int32)
    /// Still running when the wait gave up (it was then killed with SIGKILL).
    case timedOut

    var description: String {
        switch self {
        case .exited(let status): return "exited with status \(status)"
        case .signaled(let signal): return "killed by signal \(signal)"
        case .timedOut: return "did not exit in time (SIGKILLed)"
        }
    }
}

/// Collects a pipe's output on a background thread, so the child never blocks on a full pipe.
private final class OutputCollector: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: [UInt8] = []
    private var finished = false
    private let limit: Int

    init(limit: Int = 1 << 20) { self.limit = limit }

    func start(_ handle: FileHandle, name: String) {
        let fd = handle.fileDescriptor
        let thread = Thread { [self] in
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR { continue }
                condition.lock()
                if n <= 0 {
                    finished = true
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                data.append(contentsOf: chunk[0..<n])
                if data.count > limit { data.removeFirst(data.count - limit) }
                condition.broadcast()
                condition.unlock()
            }
        }
        thread.name = "test-server-\(name)"
        thread.start()
    }

    var text: String { condition.withLock { String(decoding: data, as: UTF8.self) } }

    /// Waits until the pipe has closed (the writer exited), at most until `deadline`.
    func waitUntilFinished(_ deadline: Date) {
        condition.lock()
        defer { condition.unlock() }
        while !finished, Date() < deadline {
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.05)))
        }
    }

    /// Waits until `predicate` holds for the output so far, the pipe closes, or the deadline.
    func wait(until deadline: Date, _ predicate: (String) -> Bool) -> (text: String, matched: Bool) {
        condition.lock()
        defer { condition.unlock() }
        while true {
            let text = String(decoding: data, as: UTF8.self)
            if predicate(text) { return (text, true) }
            if finished || Date() >= deadline { return (text, false) }
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.05)))
        }
    }
}

/// The real `motion-server` binary, started on an ephemeral loopback port.
final class TestServer {
    let process: Process
    let port: UInt16
    let arguments: [String]
    private let stdout = OutputCollector()
    private let stderr = OutputCollector()
    private(set) var exit: ServerExit?

    var pid: pid_t { process.processIdentifier }

    /// Starts the binary with `--host 127.0.0.1 --port 0` and `extraArguments`, in an
    /// environment without inherited `MOTION_*` variables plus `environment`, and waits
    /// until it prints the address it listens on. `launcher`: a program (and its arguments)
    /// that execs the binary, e.g. `setpriv` to drop a capability.
    init(arguments extraArguments: [String] = [], environment: [String: String] = [:],
         launcher: [String] = [], startupTimeout: TimeInterval = 20) throws {
        let binary = try Self.locateBinary()
        let process = Process()
        arguments = ["--host", "127.0.0.1", "--port", "0"] + extraArguments
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = launcher.dropFirst() + [binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MOTION_") }
        env.merge(environment) { _, new in new }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw TestServerError(description: "could not launch \(binary.path): \(error)")
        }
        self.process = process
        stdout.start(out.fileHandleForReading, name: "stdout")
        stderr.start(err.fileHandleForReading, name: "stderr")

        let marker = "http://127.0.0.1:"
        let (text, matched) = stdout.wait(until: Date(timeIntervalSinceNow: startupTimeout)) { text in
            guard let range = text.range(of: marker) else { return false }
            return text[range.upperBound...].contains { !$0.isNumber }
        }
        guard matched, let range = text.range(of: marker),
              let port = UInt16(text[range.upperBound...].prefix(while: \.isNumber)) else {
            let running = process.isRunning
            if running { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            throw TestServerError(description: """
                motion-server (\(binary.path) \(arguments.joined(separator: " "))) did not report \
                'http://127.0.0.1:PORT' within \(startupTimeout) s (\(running ? "still running" : "exited with \(process.terminationStatus)")).
                stdout: \(text)
                stderr: \(stderr.text)
                """)
        }
        self.port = port
    }

    deinit {
        if exit == nil { _ = terminate(timeout: 5) }
    }

    /// What the server wrote to stdout and stderr so far (for failure messages).
    var output: String { "stdout:\n\(stdout.text)\nstderr:\n\(stderr.text)" }

    /// What the server wrote to stderr so far (its log).
    var errorOutput: String { stderr.text }

    /// Waits until the server's stderr satisfies `predicate` (at most `timeout`); returns it.
    @discardableResult
    func waitForLog(timeout: TimeInterval = 5, _ predicate: (String) -> Bool) -> String {
        stderr.wait(until: Date(timeIntervalSinceNow: timeout), predicate).text
    }

    var isRunning: Bool { process.isRunning }

    /// A new connection to the server.
    func client(readTimeout: TimeInterval = 10, receiveBufferBytes: Int32? = nil, sourceAddress: String? = nil) throws -> RawHTTPClient {
        try RawHTTPClient(port: port, readTimeout: readTimeout, receiveBufferBytes: receiveBufferBytes, sourceAddress: sourceAddress)
    }

    /// The server's resident memory, bytes (from /proc).
    var residentBytes: Int? {
        guard let status = readProcFile("/proc/\(pid)/status"),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kb = Int(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return kb * 1024
    }

    /// Sends a signal without waiting.
    func signal(_ number: Int32) {
        if process.isRunning { kill(process.processIdentifier, number) }
    }

    /// Waits for the process to exit; SIGKILLs it after `timeout` and reports `.timedOut`.
    @discardableResult
    func waitForExit(timeout: TimeInterval) -> ServerExit {
        if let exit { return exit }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning, Date() < deadline {
            usleep(10_000)
        }
        let result: ServerExit
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            result = .timedOut
        } else {
            process.waitUntilExit()
            result = process.terminationReason == .exit ? .exited(process.terminationStatus) : .signaled(process.terminationStatus)
        }
        exit = result
        // Let the collectors read what the process wrote before it ended.
        let drained = Date(timeIntervalSinceNow: 2)
        stdout.waitUntilFinished(drained)
        stderr.waitUntilFinished(drained)
        return result
    }

    /// SIGTERM, then wait (SIGKILL after `timeout`). Returns how the process ended.
    @discardableResult
    func terminate(timeout: TimeInterval = 15) -> ServerExit {
        if let exit { return exit }
        signal(SIGTERM)
        return waitForExit(timeout: timeout)
    }

    // MARK: - Locating the binary

    /// `MOTION_SERVER_BIN`; else `motion-server` beside the running test bundle; else the
    /// package's `.build/debug/motion-server` (package root derived from this file's path).
    static func locateBinary() throws -> URL {
        let fileManager = FileManager.default
        if let explicit = ProcessInfo.processInfo.environment["MOTION_SERVER_BIN"], !explicit.isEmpty {
            guard fileManager.isExecutableFile(atPath: explicit) else {
                throw TestServerError(description: "MOTION_SERVER_BIN=\(explicit) is not an executable file")
            }
            return URL(fileURLWithPath: explicit)
        }
        let candidates = candidatePaths()
        for path in candidates where fileManager.isExecutableFile(atPath: path) {
            return URL(fileURLWithPath: path)
        }
        throw TestServerError(description: "motion-server binary not found; build it (swift build) or set MOTION_SERVER_BIN. Looked at:\n" + candidates.joined(separator: "\n"))
    }

    static func candidatePaths() -> [String] {
        var directories: [URL] = []
        // On Linux the test runner is `<scratch>/<triple>/debug/<Package>PackageTests.xctest`,
        // and the products of the same build sit beside it.
        if let first = CommandLine.arguments.first, !first.isEmpty {
            let runner = URL(fileURLWithPath: first).standardizedFileURL
            directories.append(runner.deletingLastPathComponent())
            directories.append(runner.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        let bundle = Bundle.main.bundleURL
        directories.append(bundle)
        directories.append(bundle.deletingLastPathComponent())
        for loaded in Bundle.allBundles where loaded.bundleURL.pathExtension == "xctest" {
            directories.append(loaded.bundleURL.deletingLastPathComponent())
        }
        // <root>/Tests/MotionServerTests/TestServer.swift → <root>
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        directories.append(root.appendingPathComponent(".build/debug"))
        if let triples = try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(".build").path) {
            for triple in triples.sorted() where triple.contains("-") {
                directories.append(root.appendingPathComponent(".build/\(triple)/debug"))
            }
        }
        directories.append(root.appendingPathComponent(".build/release"))
        var seen = Set<String>()
        return directories.map { $0.appendingPathComponent("motion-server").path }.filter { seen.insert($0).inserted }
    }
}

/// Base class: starts servers on demand, stops them all in tearDown, and offers request
/// and assertion helpers.
class ServerTestCase: XCTestCase {
    private var servers: [TestServer] = []

    /// Starts a server for this test; it is terminated in tearDown.
    func startServer(_ arguments: [String] = [], environment: [String: String] = [:], launcher: [String] = []) throws -> TestServer {
        let server = try TestServer(arguments: arguments, environment: environment, launcher: launcher)
        servers.append(server)
        return server
    }

    override func tearDown() {
        for server in servers {
            let exit = server.terminate(timeout: 15)
            if exit == .timedOut {
                XCTFail("motion-server did not stop within 15 s of SIGTERM\n\(server.output)")
            }
        }
        servers = []
        super.tearDown()
    }

    /// One request on a fresh connection.
    func send(_ server: TestServer, _ method: String, _ target: String, headers: [(String, String)] = [],
              body: [UInt8]? = nil, chunks: [[UInt8]]? = nil) throws -> RawHTTPResponse {
        let client = try server.client()
        defer { client.close() }
        return try client.request(method, target, headers: headers, body: body, chunks: chunks)
    }

    func get(_ server: TestServer, _ target: String) throws -> RawHTTPResponse {
        try send(server, "GET", target)
    }

    /// The value of one series in `GET /metrics`: its name with its labels as the text
    /// writes them (`motion_open_streams`, `motion_stream_writes_total{path="direct"}`).
    func metric(_ server: TestServer, _ series: String) throws -> Double {
        let text = try get(server, "/metrics").text
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            if let value = Double(line.dropFirst(series.count + 1)) { return value }
        }
        throw TestServerError(description: "no \(series) in /metrics:\n\(text)")
    }

    /// POSTs a JSON document on a fresh connection.
    func post(_ server: TestServer, _ target: String, _ json: String,
              contentType: String? = "application/json", headers: [(String, String)] = []) throws -> RawHTTPResponse {
        var all = headers
        if let contentType { all.insert(("Content-Type", contentType), at: 0) }
        return try send(server, "POST", target, headers: all, body: Array(json.utf8))
    }

    /// POSTs to /v1/timelines, asserts a 200 JSON answer and returns the parsed body.
    func timeline(_ server: TestServer, _ json: String, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        let response = try post(server, "/v1/timelines", json)
        XCTAssertEqual(response.status, 200, "body: \(response.text)", file: file, line: line)
        XCTAssertEqual(response.mediaType, "application/json", file: file, line: line)
        guard response.status == 200 else { throw TestServerError(description: "POST /v1/timelines answered \(response.status): \(response.text)") }
        return try response.json()
    }

    /// Asserts an RFC 9457 problem: status, problem+json, `type`, `title`, `status`, a
    /// non-empty `detail`, and well-formed `errors` entries when present. Returns the body.
    @discardableResult
    func assertProblem(_ response: RawHTTPResponse, status: Int, type: String? = nil,
                       file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        XCTAssertEqual(response.status, status, "body: \(response.text)", file: file, line: line)
        XCTAssertEqual(response.mediaType, "application/problem+json", "body: \(response.text)", file: file, line: line)
        let body = try response.json()
        XCTAssertEqual(body["status"]?.int, status, "problem body: \(response.text)", file: file, line: line)
        XCTAssertNotNil(body["type"]?.string, "problem without type: \(response.text)", file: file, line: line)
        XCTAssertFalse(body["title"]?.string?.isEmpty ?? true, "problem without title: \(response.text)", file: file, line: line)
        XCTAssertFalse(body["detail"]?.string?.isEmpty ?? true, "problem without detail: \(response.text)", file: file, line: line)
        if let type {
            XCTAssertEqual(body["type"]?.string, type, file: file, line: line)
        }
        if let errors = body["errors"] {
            guard let entries = errors.array else {
                XCTFail("errors is not an array: \(response.text)", file: file, line: line)
                return body
            }
            for entry in entries {
                XCTAssertTrue(entry["pointer"]?.string != nil || entry["parameter"]?.string != nil,
                              "error entry without pointer or parameter: \(entry)", file: file, line: line)
                XCTAssertFalse(entry["message"]?.string?.isEmpty ?? true, "error entry without message: \(entry)", file: file, line: line)
            }
        }
        return body
    }

    /// The `errors` of a problem as (pointer, message) pairs.
    func problemEntries(_ body: JSONValue) -> [(pointer: String, message: String)] {
        (body["errors"]?.array ?? []).map { ($0["pointer"]?.string ?? "<no pointer>", $0["message"]?.string ?? "") }
    }

    /// Asserts the server is alive and answering: GET /healthz → 200 {"status":"ok",…}.
    func assertHealthy(_ server: TestServer, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let response = try get(server, "/healthz")
            XCTAssertEqual(response.status, 200, file: file, line: line)
            XCTAssertEqual(try response.json()["status"], "ok", file: file, line: line)
        } catch {
            XCTFail("GET /healthz failed: \(error)\n\(server.output)", file: file, line: line)
        }
        XCTAssertTrue(server.isRunning, "the server process is gone\n\(server.output)", file: file, line: line)
    }
}

/// A test case whose every test gets a server started with the default options.
class DefaultServerTestCase: ServerTestCase {
    var server: TestServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try startServer()
    }

    override func tearDown() {
        server = nil
        super.tearDown()
    }
}
