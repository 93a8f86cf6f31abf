import Foundation
import Glibc
import XCTest

/// Liveness, readiness, discovery endpoints, connection handling and graceful shutdown.
final class ServerLifecycleTests: ServerTestCase {
    private static let tween = """
        {"fps": 10, "target": {"x": 0}, "motion": {"type": "tween", "duration": 0.5, "properties": [{"path": "x", "to": 5}]}}
        """

    /// Never ends on its own: 1000 s window, paced.
    private static let endless = """
        {"fps": 30, "target": {"x": 0},
         "motion": {"type": "tween", "duration": 1, "repeat": "infinite", "properties": [{"path": "x", "to": 1}]},
         "window": {"start": 0, "end": 1000}}
        """

    // MARK: - Probes and discovery

    func testHealthAndReadiness() throws {
        let server = try startServer()
        let health = try get(server, "/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.mediaType, "application/json")
        XCTAssertEqual(try health.json()["status"], "ok")

        let ready = try get(server, "/readyz")
        XCTAssertEqual(ready.status, 200)
        XCTAssertEqual(try ready.json(), ["status": "ready"])
    }

    func testEasingCatalogue() throws {
        let server = try startServer()
        let response = try get(server, "/v1/easings")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.mediaType, "application/json")
        let entries = try XCTUnwrap(try response.json()["easings"]?.array)
        let names = Set(entries.compactMap { $0["name"]?.string })
        XCTAssertEqual(names.count, entries.count, "every entry has a unique name")
        for name in ["linear", "quadratic.inOut", "cubic.in", "sine.out", "expo.inOut", "circular.in", "bounce.inOut",
                     "back.out", "elastic.inOut", "ease", "ease-in", "ease-out", "ease-in-out", "step-start", "step-end",
                     "cubic-bezier", "steps"] {
            XCTAssertTrue(names.contains(name), "the catalogue lists \(name)")
        }
        for entry in entries {
            let name = entry["name"]?.string ?? "?"
            XCTAssertFalse(entry["description"]?.string?.isEmpty ?? true, "\(name) has a description")
            XCTAssertNotNil(entry["parameters"]?.array, "\(name) lists its parameters")
            XCTAssertFalse(entry["examples"]?.array?.isEmpty ?? true, "\(name) has examples")
        }
        let bezier = entries.first { $0["name"] == "cubic-bezier" }
        XCTAssertEqual(bezier?["parameters"]?.array?.compactMap { $0["name"]?.string }, ["x1", "y1", "x2", "y2"])
    }

    func testEveryCatalogueExampleIsAcceptedAndEndsExactly() throws {
        // The catalogue's examples are wire values: each must work as a tween's easing.
        let server = try startServer()
        let entries = try XCTUnwrap(try get(server, "/v1/easings").json()["easings"]?.array)
        var examples: [(name: String, json: String)] = []
        for entry in entries {
            for example in entry["examples"]?.array ?? [] {
                examples.append((entry["name"]?.string ?? "?", try Self.serialize(example)))
            }
        }
        XCTAssertGreaterThan(examples.count, 40)
        let target = examples.indices.map { "\"p\($0)\": 0" }.joined(separator: ",")
        let properties = examples.indices.map { "{\"path\": \"p\($0)\", \"to\": 100, \"easing\": \(examples[$0].json)}" }
            .joined(separator: ",")
        let body = try timeline(server, """
            {"fps": 10, "target": {\(target)}, "motion": {"type": "tween", "duration": 1, "properties": [\(properties)]}}
            """)
        let tracks = try XCTUnwrap(body["tracks"]?.array)
        XCTAssertEqual(tracks.count, examples.count)
        for (index, example) in examples.enumerated() {
            let values = tracks.first { $0["path"]?.string == "p\(index)" }?["values"]?.doubles ?? []
            XCTAssertEqual(values.count, 11, "\(example.name) \(example.json)")
            XCTAssertEqual(values.last, 100, "\(example.name) \(example.json) ends exactly at to (E(1) = 1)")
        }
    }

    private static func serialize(_ value: JSONValue) throws -> String {
        func any(_ value: JSONValue) -> Any {
            switch value {
            case .null: return NSNull()
            case .bool(let b): return b
            case .number(let n): return n
            case .string(let s): return s
            case .array(let items): return items.map(any)
            case .object(let object): return object.mapValues(any)
            }
        }
        let data = try JSONSerialization.data(withJSONObject: any(value), options: [.fragmentsAllowed])
        return String(decoding: data, as: UTF8.self)
    }

    func testOpenAPIDocument() throws {
        let server = try startServer()
        let response = try get(server, "/openapi.yaml")
        XCTAssertEqual(response.status, 200)
        XCTAssertTrue(response.mediaType?.contains("yaml") ?? false, "Content-Type \(response.header("Content-Type") ?? "none")")
        XCTAssertTrue(response.text.hasPrefix("openapi:"), String(response.text.prefix(80)))
        XCTAssertTrue(response.text.contains("paths:"))
    }

    // MARK: - Connections

    func testKeepAliveCarriesSeveralRequestsOnOneConnection() throws {
        let server = try startServer()
        let client = try server.client()
        defer { client.close() }
        let health = try client.request("GET", "/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertNotEqual(health.header("Connection")?.lowercased(), "close")

        let timeline = try client.postJSON("/v1/timelines", Self.tween)
        XCTAssertEqual(timeline.status, 200, timeline.text)
        XCTAssertEqual(try timeline.json()["frameCount"], 6)
        XCTAssertNotEqual(timeline.header("Connection")?.lowercased(), "close")

        let ready = try client.request("GET", "/readyz")
        XCTAssertEqual(ready.status, 200)
        XCTAssertEqual(try ready.json(), ["status": "ready"])

        // A stream is a request like any other: the connection carries on after it.
        try client.sendRequest("POST", "/v1/streams?speed=0", headers: [("Content-Type", "application/json")], body: Array(Self.tween.utf8))
        let stream = try client.readResponse()
        XCTAssertEqual(stream.status, 200)
        XCTAssertTrue(stream.isChunked)
        XCTAssertEqual(stream.text.split(separator: "\n").count, 6 + 2 + 1)
        let again = try client.request("GET", "/healthz")
        XCTAssertEqual(again.status, 200)
        XCTAssertFalse(client.peerClosed)
    }

    func testConnectionCloseIsHonoured() throws {
        let server = try startServer()
        let client = try server.client()
        defer { client.close() }
        let response = try client.request("GET", "/healthz", headers: [("Connection", "close")])
        XCTAssertEqual(response.status, 200)
        XCTAssertTrue(client.waitForPeerClose(timeout: 5), "the server must close after a Connection: close request")
    }

    func testPipelinedRequestsAreAnsweredInOrder() throws {
        let server = try startServer()
        let client = try server.client()
        defer { client.close() }
        let body = Self.tween
        try client.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
            + "POST /v1/timelines HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            + "GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n")
        let first = try client.readResponse()
        let second = try client.readResponse()
        let third = try client.readResponse()
        XCTAssertEqual(try first.json()["status"], "ok")
        XCTAssertEqual(try second.json()["frameCount"], 6)
        XCTAssertEqual(try third.json(), ["status": "ready"])
    }

    func testHeadAnswersLikeGetWithoutABody() throws {
        let server = try startServer()
        let client = try server.client()
        defer { client.close() }
        for target in ["/healthz", "/v1/easings", "/openapi.yaml"] {
            let get = try client.request("GET", target)
            XCTAssertEqual(get.status, 200)
            let head = try client.request("HEAD", target)
            XCTAssertEqual(head.status, 200, target)
            XCTAssertTrue(head.body.isEmpty)
            XCTAssertEqual(head.header("Content-Type"), get.header("Content-Type"), target)
            if let length = head.header("Content-Length") {
                XCTAssertEqual(Int(length), get.body.count, "HEAD announces the GET body's length for \(target)")
            }
        }
        // A session's frames: the head of the stream, no watcher left behind, and nothing
        // after it (libmicrohttpd wrote a last chunk, which garbled the next answer).
        let created = try client.request("POST", "/v1/sessions?speed=1", headers: [("Content-Type", "application/json")],
                                         body: Array(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":60,"properties":[{"path":"x","to":1}]}}"#.utf8))
        XCTAssertEqual(created.status, 201)
        let id = try XCTUnwrap(created.json()["id"]?.string)
        let frames = try client.request("HEAD", "/v1/sessions/\(id)/frames")
        XCTAssertEqual(frames.status, 200)
        XCTAssertTrue(frames.body.isEmpty)
        XCTAssertEqual(frames.header("Content-Type"), "application/x-ndjson")
        XCTAssertEqual(try client.request("GET", "/v1/sessions/\(id)").json()["watchers"]?.int, 0)
        // Had HEAD sent a body, this response would be garbled.
        let after = try client.request("GET", "/readyz")
        XCTAssertEqual(after.status, 200)
        XCTAssertEqual(try after.json(), ["status": "ready"])
        XCTAssertFalse(client.hasBufferedBytes, "no stray bytes after the HEAD responses")
    }

    // MARK: - Shutdown

    func testSIGTERMWithNothingOpenExitsZero() throws {
        let server = try startServer()
        assertHealthy(server)
        XCTAssertEqual(server.terminate(timeout: 10), .exited(0), server.output)
    }

    func testSIGINTAlsoDrainsAndExitsZero() throws {
        let server = try startServer()
        assertHealthy(server)
        server.signal(SIGINT)
        XCTAssertEqual(server.waitForExit(timeout: 10), .exited(0), server.output)
    }

    func testSIGTERMRightAfterStartupIsNotLost() throws {
        // Regression: the stop signals are blocked before any thread starts and taken with
        // sigwait, so one sent the moment the server says it is listening is never lost.
        for attempt in 1...40 {
            let server = try TestServer()
            server.signal(SIGTERM)
            let exit = server.waitForExit(timeout: 10)
            XCTAssertEqual(exit, .exited(0), "attempt \(attempt): SIGTERM sent right after the listening line\n\(server.output)")
            if exit != .exited(0) { break }
        }
    }

    func testSIGTERMEndsAnOpenStreamCleanlyAndExitsZero() throws {
        let server = try startServer()
        let client = try server.client()
        defer { client.close() }
        try client.sendRequest("POST", "/v1/streams?speed=1", headers: [("Content-Type", "application/json")], body: Array(Self.endless.utf8))
        let head = try client.readResponseHead()
        XCTAssertEqual(head.status, 200)
        let reader = ChunkedLineReader(client: client)
        var frames = 0
        while frames < 3, let line = try reader.nextLine() {
            if try line.json()["values"] != nil { frames += 1 }
        }
        XCTAssertEqual(frames, 3)

        server.signal(SIGTERM)
        var last: JSONValue?
        while let line = try reader.nextLine() {
            let object = try line.json()
            XCTAssertNil(last?["end"], "nothing may follow the end line")
            if object["values"] != nil { frames += 1 }
            last = object
        }
        XCTAssertTrue(reader.sawTerminatingChunk, "the stream must end with the terminating zero-size chunk")
        XCTAssertEqual(last?["end"], true, "the last line is the end line: \(last?.description ?? "none")")
        XCTAssertEqual(last?["interrupted"], "shutdown")
        XCTAssertEqual(last?["frames"]?.int, frames, "the end line counts the frames that were sent")
        XCTAssertEqual(last?["duration"], .null, "the motion never ends")
        XCTAssertLessThan(frames, 30_001)
        XCTAssertEqual(server.waitForExit(timeout: 10), .exited(0), server.output)
    }

    func testSIGTERMEndsAnSSEStreamCleanly() throws {
        let server = try startServer()
        let client = try server.client()
        defer { client.close() }
        try client.sendRequest("POST", "/v1/streams?speed=1",
                               headers: [("Content-Type", "application/json"), ("Accept", "text/event-stream")],
                               body: Array(Self.endless.utf8))
        XCTAssertEqual(try client.readResponseHead().status, 200)
        let reader = ChunkedLineReader(client: client)
        XCTAssertEqual(try reader.nextLine()?.text, "event: frame")
        server.signal(SIGTERM)
        let lines = try reader.remainingLines().map(\.text)
        XCTAssertTrue(reader.sawTerminatingChunk)
        let tail = Array(lines.suffix(3))
        XCTAssertEqual(tail.first, "event: end", "\(tail)")
        let data = try XCTUnwrap(tail[safe: 1]).dropFirst("data: ".count)
        XCTAssertEqual(try JSONValue.parse(String(data))["interrupted"], "shutdown")
        XCTAssertEqual(tail.last, "")
        XCTAssertEqual(server.waitForExit(timeout: 10), .exited(0), server.output)
    }

    /// A stream document whose frames are large (long track names), so that a client that
    /// reads nothing soon fills the socket buffers.
    private static func bulkyStream(tracks: Int = 8, seconds: Int = 200) -> String {
        let names = (0..<tracks).map { "k\($0)" + String(repeating: "x", count: 1000) }
        let target = names.map { "\"\($0)\": 0" }.joined(separator: ", ")
        let properties = names.enumerated().map { "{\"path\": \"\($0.element)\", \"to\": \($0.offset + 1).5}" }.joined(separator: ", ")
        return """
            {"fps": 1000, "target": {\(target)},
             "motion": {"type": "tween", "duration": \(seconds), "properties": [\(properties)]},
             "output": {"events": false}}
            """
    }

    /// Opens an unpaced stream that this client never reads, and waits until the server
    /// cannot write to it any more (its end line then cannot be written either).
    private func openStalledStream(_ server: TestServer, file: StaticString = #filePath, line: UInt = #line) throws -> RawHTTPClient {
        let blocker = try server.client(receiveBufferBytes: 4096)
        try blocker.sendRequest("POST", "/v1/streams?speed=0", headers: [("Content-Type", "application/json")],
                                body: Array(Self.bulkyStream().utf8))
        XCTAssertEqual(try blocker.readResponseHead().status, 200, file: file, line: line)
        XCTAssertTrue(blocker.waitForServerToStall(), "the server kept writing to a client that reads nothing", file: file, line: line)
        return blocker
    }

    func testReadinessIs503WhileDraining() throws {
        // To hold the server in its draining phase, one stream must not be able to finish:
        // its client reads nothing, so with the socket buffers full the end line cannot be
        // written until that client goes away (or --drain-timeout passes).
        let server = try startServer(["--drain-timeout", "8"])
        let blocker = try openStalledStream(server)
        defer { blocker.close() }

        // A connection opened (and used) before the signal.
        let probe = try server.client()
        defer { probe.close() }
        XCTAssertEqual(try probe.request("GET", "/readyz").status, 200)

        server.signal(SIGTERM)
        var draining: RawHTTPResponse?
        let deadline = monotonicSeconds() + 5
        while monotonicSeconds() < deadline {
            let response = try probe.request("GET", "/readyz")
            if response.status == 503 {
                draining = response
                break
            }
            XCTAssertEqual(response.status, 200)
            usleep(10_000)
        }
        let unready = try XCTUnwrap(draining, "readiness never reported 503 after SIGTERM")
        try assertProblem(unready, status: 503, type: "/problems/unavailable")
        XCTAssertNotNil(unready.header("Retry-After"))

        // Liveness still answers; computing is refused while draining.
        XCTAssertEqual(try probe.request("GET", "/healthz").status, 200)
        try assertProblem(try probe.postJSON("/v1/timelines", Self.tween), status: 503)
        try assertProblem(try probe.postJSON("/v1/streams", Self.tween), status: 503)

        // New connections are no longer accepted.
        var refused = false
        let refuseDeadline = monotonicSeconds() + 3
        while !refused, monotonicSeconds() < refuseDeadline {
            if let extra = try? server.client(readTimeout: 1) {
                // Accepted by the kernel backlog at most; it must not be served.
                let answered = (try? extra.request("GET", "/healthz")) != nil
                extra.close()
                if !answered { refused = true } else { usleep(20_000) }
            } else {
                refused = true
            }
        }
        XCTAssertTrue(refused, "the server kept accepting new connections while draining")

        XCTAssertTrue(server.isRunning, "the server waits for the blocked stream")
        blocker.closeAbruptly()
        XCTAssertEqual(server.waitForExit(timeout: 10), .exited(0), server.output)
    }

    /// A paced stream (direct writes) whose client reads nothing is left by the pacer with a
    /// chunk partly sent, retried every few milliseconds; at the drain timeout the pacer
    /// stops, and the connection, still suspended, made libmicrohttpd abort the process
    /// ("MHD_stop_daemon() called while we have suspended connections", found by an
    /// adversarial review). It is handed back and closed: exit 0.
    func testDrainTimeoutClosesAPacedStreamWhoseClientStoppedReading() throws {
        let server = try startServer(["--drain-timeout", "0.5"])
        let blocker = try server.client(receiveBufferBytes: 4096)
        defer { blocker.close() }
        try blocker.sendRequest("POST", "/v1/streams?speed=1", headers: [("Content-Type", "application/json")],
                                body: Array(Self.bulkyStream().utf8))
        XCTAssertEqual(try blocker.readResponseHead().status, 200)
        XCTAssertTrue(blocker.waitForServerToStall(), "the server kept writing to a client that reads nothing")
        let started = monotonicSeconds()
        server.signal(SIGTERM)
        XCTAssertEqual(server.waitForExit(timeout: 10), .exited(0), server.output)
        XCTAssertLessThan(monotonicSeconds() - started, 5, "the drain timeout bounds the wait")
        XCTAssertTrue(server.output.contains("drain timeout"), server.output)
    }

    func testDrainTimeoutStopsAStuckStream() throws {
        let server = try startServer(["--drain-timeout", "0.5"])
        let blocker = try openStalledStream(server)
        defer { blocker.close() }
        let started = monotonicSeconds()
        server.signal(SIGTERM)
        XCTAssertEqual(server.waitForExit(timeout: 10), .exited(0), server.output)
        XCTAssertGreaterThanOrEqual(monotonicSeconds() - started, 0.4, "the server waited for the stuck stream before giving up")
        XCTAssertTrue(server.output.contains("drain timeout"), "the server logs that it gave up on open streams\n\(server.output)")
    }
}
