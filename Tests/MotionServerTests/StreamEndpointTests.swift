import Foundation
import XCTest

/// `POST /v1/streams` (docs/README.md): NDJSON and SSE over chunked responses, pacing, rejection
/// before the stream starts, and clients that go away.
final class StreamEndpointTests: DefaultServerTestCase {
    /// Repeats and reverses, so events fall in the middle of the stream.
    private static let pulse = """
        {"fps": 10, "target": {"frame": {"x": 20, "y": 50, "width": 50, "height": 50}, "opacity": 1},
         "motion": {"type": "tween", "id": "pulse", "duration": 0.3, "repeat": 1, "reverses": true, "repeatDelay": 0.1,
                    "easing": "cubic.inOut",
                    "properties": [{"path": "frame", "to": {"x": 80, "y": 50, "width": 70, "height": 50}},
                                   {"path": "opacity", "to": 0.25, "easing": "sine.out"}]}}
        """

    /// Opens a stream and reads its status line and headers.
    private func openStream(_ json: String, query: String = "?speed=0", accept: String? = nil) throws -> (RawHTTPClient, RawHTTPResponse) {
        let client = try server.client()
        var headers = [("Content-Type", "application/json")]
        if let accept { headers.append(("Accept", accept)) }
        try client.sendRequest("POST", "/v1/streams" + query, headers: headers, body: Array(json.utf8))
        return (client, try client.readResponseHead())
    }

    // MARK: - NDJSON

    func testUnpacedNDJSONStreamMatchesTheTimeline() throws {
        let reference = try timeline(server, Self.pulse)
        let frameCount = try XCTUnwrap(reference["frameCount"]?.int)
        let times = try XCTUnwrap(reference["times"]?.doubles)
        let tracks = try XCTUnwrap(reference["tracks"]?.array)
        let events = try XCTUnwrap(reference["events"]?.array)
        XCTAssertEqual(events.count, 5, "started, reversed, repeated, reversed, completed")

        let (client, head) = try openStream(Self.pulse)
        defer { client.close() }
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.mediaType, "application/x-ndjson")
        XCTAssertTrue(head.isChunked, "streams use chunked transfer encoding")
        XCTAssertNil(head.header("Content-Length"))
        let reader = ChunkedLineReader(client: client)
        let lines = try reader.remainingLines()
        XCTAssertTrue(reader.sawTerminatingChunk, "the stream ends with the zero-size chunk")
        XCTAssertFalse(reader.chunks.isEmpty)

        var frameIndex = 0
        var lastFrame = -1
        var streamedEvents: [JSONValue] = []
        var endLine: JSONValue?
        for line in lines {
            XCTAssertNil(endLine, "nothing may follow the end line: \(line.text)")
            let object = try line.json()
            if let frame = object["frame"]?.int, object["values"] != nil {
                XCTAssertEqual(frame, frameIndex, "frames come in order")
                XCTAssertEqual(object["time"]?.double, times[safe: frame], "frame \(frame) time")
                let values = try XCTUnwrap(object["values"]?.object)
                XCTAssertEqual(values.count, tracks.count, "one value per track")
                for track in tracks {
                    let path = try XCTUnwrap(track["path"]?.string)
                    XCTAssertEqual(values[path], track["values"]?[frame], "frame \(frame), \(path): identical to /v1/timelines")
                }
                lastFrame = frame
                frameIndex += 1
            } else if let kind = object["event"]?.string {
                let frame = try XCTUnwrap(object["frame"]?.int)
                XCTAssertEqual(frame, lastFrame, "event \(kind) comes right after its frame's line")
                XCTAssertEqual(object["motion"], "pulse")
                streamedEvents.append(["time": object["time"] ?? .null, "frame": .number(Double(frame)),
                                       "type": .string(kind), "motion": object["motion"] ?? .null])
            } else if object["end"] != nil {
                endLine = object
            } else {
                XCTFail("unexpected line \(line.text)")
            }
        }
        XCTAssertEqual(frameIndex, frameCount)
        XCTAssertEqual(streamedEvents, events, "the same events, in the same order, as /v1/timelines")
        XCTAssertEqual(endLine, ["end": true, "frames": .number(Double(frameCount)), "duration": reference["duration"] ?? .null])
    }

    func testStreamIsTheSameForFramesLayout() throws {
        let document = """
            {"fps": 4, "target": {"frame": {"x": 0, "y": 0}},
             "motion": {"type": "tween", "duration": 0.5, "properties": [{"path": "frame", "to": {"x": 8, "y": 0}}]},
             "output": {"layout": "frames", "events": false}}
            """
        let (client, head) = try openStream(document)
        defer { client.close() }
        XCTAssertEqual(head.status, 200)
        let lines = try ChunkedLineReader(client: client).remainingLines().map { try $0.json() }
        XCTAssertEqual(lines, [
            ["frame": 0, "time": 0, "values": ["frame": ["x": 0, "y": 0]]],
            ["frame": 1, "time": 0.25, "values": ["frame": ["x": 4, "y": 0]]],
            ["frame": 2, "time": 0.5, "values": ["frame": ["x": 8, "y": 0]]],
            ["end": true, "frames": 3, "duration": 0.5],
        ], "whole values in frames layout; no event lines with events: false")
    }

    func testPacedStreamTakesAboutTheMotionsDuration() throws {
        let document = """
            {"fps": 10, "target": {"x": 0},
             "motion": {"type": "tween", "duration": 0.5, "properties": [{"path": "x", "to": 1}]}}
            """
        let started = monotonicSeconds()
        let (client, head) = try openStream(document, query: "?speed=1")
        defer { client.close() }
        XCTAssertEqual(head.status, 200)
        let reader = ChunkedLineReader(client: client)
        let lines = try reader.remainingLines()
        let elapsed = monotonicSeconds() - started
        XCTAssertEqual(lines.count, 6 + 2 + 1, "6 frames, started + completed, end")
        XCTAssertEqual(try lines.last?.json()["end"], true)
        XCTAssertTrue(reader.sawTerminatingChunk)
        // Frame 5 is due 0.5 s after frame 0: a loose lower bound proves pacing.
        XCTAssertGreaterThanOrEqual(elapsed, 0.3, "speed=1 must pace a 0.5 s motion (took \(elapsed) s)")
        if let first = lines.first, let last = lines.last {
            XCTAssertGreaterThanOrEqual(last.receivedAt - first.receivedAt, 0.3, "frames must arrive spread over time")
        }
    }

    func testDoubleSpeedStillPaces() throws {
        let document = """
            {"fps": 10, "target": {"x": 0},
             "motion": {"type": "tween", "duration": 1.6, "properties": [{"path": "x", "to": 1}]}}
            """
        let started = monotonicSeconds()
        let (client, head) = try openStream(document, query: "?speed=2")
        defer { client.close() }
        XCTAssertEqual(head.status, 200)
        let lines = try ChunkedLineReader(client: client).remainingLines()
        XCTAssertEqual(lines.count, 17 + 2 + 1)
        XCTAssertGreaterThanOrEqual(monotonicSeconds() - started, 0.5, "1.6 s of virtual time at speed 2 is 0.8 s")
    }

    /// `motion_stream_writes_total{path=…}` from `/metrics`.
    private func streamWrites(_ server: TestServer, _ path: String) throws -> Double {
        try metric(server, "motion_stream_writes_total{path=\"\(path)\"}")
    }

    /// Reads a paced stream on `client` to its end and returns its lines (chunked framing
    /// checked by the reader), then checks the connection answers another request.
    private func pacedStreamLines(_ server: TestServer, _ client: RawHTTPClient, _ document: String) throws -> [String] {
        try client.sendRequest("POST", "/v1/streams?speed=1", headers: [("Content-Type", "application/json")], body: Array(document.utf8))
        XCTAssertEqual(try client.readResponseHead().status, 200)
        let reader = ChunkedLineReader(client: client)
        let lines = try reader.remainingLines().map(\.text)
        XCTAssertTrue(reader.sawTerminatingChunk, "the body ends with the last chunk")
        // The framing was exact to the last byte: the same connection answers the next request.
        let next = try client.request("GET", "/healthz")
        XCTAssertEqual(next.status, 200)
        return lines
    }

    /// A frame carrying more events than the pacer writes itself (`PacedStream.heavyEvents`)
    /// is written by libmicrohttpd, whole, and the frames after it directly again: every line
    /// arrives, in order, the framing exact to the last byte.
    func testAFrameOfManyEventsIsWrittenWhole() throws {
        let document = #"{"fps":10,"target":{"x":0,"y":0},"output":{"final":false},"motion":{"type":"group","children":[{"type":"tween","duration":0.5,"properties":[{"path":"x","to":1}]},{"type":"tween","delay":0.15,"duration":1e-7,"repeat":2999,"properties":[{"path":"y","to":1}]}]}}"#
        let client = try server.client()
        defer { client.close() }
        let pulledBefore = try streamWrites(server, "libmicrohttpd")
        let lines = try pacedStreamLines(server, client, document)
        XCTAssertEqual(lines.filter { $0.hasPrefix(#"{"frame":"#) }.count, 6)
        XCTAssertEqual(lines.filter { $0.contains(#""event":"repeated""#) }.count, 2_999)
        XCTAssertTrue(lines.last?.hasPrefix(#"{"end":true"#) ?? false)
        XCTAssertGreaterThanOrEqual(try streamWrites(server, "libmicrohttpd") - pulledBefore, 1, "the heavy frame went through libmicrohttpd")
    }

    func testDirectWritesKeepTheChunkedFramingAndTheConnection() throws {
        // Paced frames are written by the pacer straight to the socket (--stream-writes
        // direct, the default); the body, its chunks and the connection are as libmicrohttpd
        // makes them (--stream-writes libmicrohttpd).
        let document = """
            {"fps": 30, "target": {"x": 0, "y": 0},
             "motion": {"type": "tween", "duration": 0.4, "easing": "ease-in-out",
                        "properties": [{"path": "x", "to": 100}, {"path": "y", "to": -3}]}}
            """
        let direct = try server.client()
        defer { direct.close() }
        let before = try streamWrites(server, "direct")
        let directLines = try pacedStreamLines(server, direct, document)
        XCTAssertEqual(directLines.count, 13 + 2 + 1, "13 frames, started + completed, end")
        XCTAssertGreaterThanOrEqual(try streamWrites(server, "direct") - before, 10, "most frames were written directly")

        let pulling = try startServer(["--stream-writes", "libmicrohttpd"])
        let client = try pulling.client()
        defer { client.close() }
        XCTAssertEqual(try pacedStreamLines(pulling, client, document), directLines)
        XCTAssertEqual(try streamWrites(pulling, "direct"), 0)
        XCTAssertGreaterThanOrEqual(try streamWrites(pulling, "libmicrohttpd"), 13)
    }

    func testAPacedStreamToAReaderThatStallsLosesNothing() throws {
        // 181 frames of about 6 KB into a 4 KiB receive window, not read until the server's
        // send queue stops moving (the socket is full): the direct writes due meanwhile are
        // taken in part (the rest is retried) or not at all (libmicrohttpd sends them); every
        // frame still arrives once, in order, in valid chunks, and the connection stays usable.
        let paths = (0..<200).map { "p\($0)" }
        let document = """
            {"fps": 60, "target": {\(paths.map { "\"\($0)\": 0" }.joined(separator: ","))},
             "motion": {"type": "tween", "duration": 3, "properties": [\(paths.enumerated().map { "{\"path\": \"\($1)\", \"to\": \($0 + 1)}" }.joined(separator: ","))]},
             "output": {"events": false}}
            """
        let client = try server.client(receiveBufferBytes: 4096)
        defer { client.close() }
        try client.sendRequest("POST", "/v1/streams?speed=1", headers: [("Content-Type", "application/json")], body: Array(document.utf8))
        XCTAssertEqual(try client.readResponseHead().status, 200)
        XCTAssertTrue(client.waitForServerToStall(), "the server's send queue never filled")
        let reader = ChunkedLineReader(client: client)
        var frames: [Int] = []
        var end: JSONValue?
        while let line = try reader.nextLine() {
            let object = try line.json()
            if let frame = object["frame"]?.int { frames.append(frame) } else { end = object }
        }
        XCTAssertEqual(frames, Array(0...180))
        XCTAssertEqual(end?["frames"], 181)
        XCTAssertEqual(try client.request("GET", "/healthz").status, 200)
    }

    func testHTTP10ClientGetsTheStreamUntilClose() throws {
        // No chunked encoding in HTTP/1.0: the body runs until the server closes.
        let client = try server.client()
        defer { client.close() }
        let document = """
            {"fps": 10, "target": {"x": 0}, "motion": {"type": "tween", "duration": 0.2, "properties": [{"path": "x", "to": 10}]}}
            """
        try client.send("POST /v1/streams?speed=0 HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: \(document.utf8.count)\r\n\r\n\(document)")
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 200)
        XCTAssertFalse(response.isChunked, "HTTP/1.0 has no chunked encoding")
        XCTAssertEqual(response.mediaType, "application/x-ndjson")
        let lines = try response.text.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        XCTAssertEqual(lines.count, 3 + 2 + 1)
        XCTAssertEqual(lines.last, ["end": true, "frames": 3, "duration": 0.2])
        XCTAssertTrue(client.peerClosed)
    }

    // MARK: - Server-Sent Events

    func testServerSentEvents() throws {
        let ndjson: [JSONValue] = try {
            let (client, _) = try openStream(Self.pulse)
            defer { client.close() }
            return try ChunkedLineReader(client: client).remainingLines().map { try $0.json() }
        }()

        let (client, head) = try openStream(Self.pulse, accept: "text/event-stream")
        defer { client.close() }
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.mediaType, "text/event-stream")
        XCTAssertTrue(head.isChunked)
        let reader = ChunkedLineReader(client: client)
        let lines = try reader.remainingLines().map(\.text)
        XCTAssertTrue(reader.sawTerminatingChunk)

        // Events are "event: <name>" + "data: <json>" + a blank line.
        var events: [(name: String, data: JSONValue)] = []
        var name: String?
        var data: String?
        for line in lines {
            if line.isEmpty {
                guard let eventName = name, let eventData = data else {
                    XCTFail("blank line without a complete event (name \(name ?? "nil"), data \(data ?? "nil"))")
                    continue
                }
                events.append((eventName, try JSONValue.parse(eventData)))
                name = nil
                data = nil
            } else if line.hasPrefix("event: ") {
                XCTAssertNil(name, "two event names in one event")
                name = String(line.dropFirst("event: ".count))
            } else if line.hasPrefix("data: ") {
                XCTAssertNil(data, "two data lines in one event")
                data = String(line.dropFirst("data: ".count))
            } else {
                XCTFail("unexpected SSE line \(line.debugDescription)")
            }
        }
        XCTAssertNil(name, "the last event must be terminated by a blank line")
        XCTAssertEqual(events.map(\.data), ndjson, "SSE carries the same objects as NDJSON")
        for event in events {
            if event.data["end"] != nil {
                XCTAssertEqual(event.name, "end")
            } else if event.data["event"] != nil {
                XCTAssertEqual(event.name, "motion")
            } else {
                XCTAssertEqual(event.name, "frame")
            }
        }
        XCTAssertEqual(events.filter { $0.name == "motion" }.count, 5)
        XCTAssertEqual(events.last?.name, "end")
        XCTAssertEqual(events.first?.name, "frame")
    }

    func testAcceptWithZeroQualityDoesNotSelectSSE() throws {
        let (client, head) = try openStream(Self.pulse, accept: "text/event-stream;q=0, application/x-ndjson")
        defer { client.close() }
        XCTAssertEqual(head.mediaType, "application/x-ndjson")
        _ = try ChunkedLineReader(client: client).remainingLines()
    }

    // MARK: - Rejections before the stream starts

    func testInvalidDocumentIsRejectedBeforeTheStreamStarts() throws {
        let cases: [(String, Int, String)] = [
            (#"{"target": {"x": 0}, "motion": {"type": "tween", "duration": -1, "properties": [{"path": "x", "to": 1}]}}"#, 422, "/motion/duration"),
            (#"{"target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "repeat": "infinite", "properties": [{"path": "x", "to": 1}]}}"#, 422, "/window"),
            (#"{"target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "y", "to": 1}]}}"#, 422, "/motion/properties/0/path"),
            (#"{"target": {"x": 0}}"#, 400, "/motion"),
            (#"{"#, 400, ""),
        ]
        for (document, status, pointer) in cases {
            for accept in [nil, "text/event-stream"] {
                var headers: [(String, String)] = []
                if let accept { headers.append(("Accept", accept)) }
                let response = try post(server, "/v1/streams?speed=0", document, headers: headers)
                let body = try assertProblem(response, status: status)
                XCTAssertFalse(response.isChunked, "a rejection is a plain response, not a stream")
                XCTAssertEqual(problemEntries(body).map(\.pointer), [pointer], response.text)
            }
        }
        assertHealthy(server)
    }

    func testBadSpeedIs400NamingSpeed() throws {
        for speed in ["-1", "abc", "nan", "inf", "1e300", ""] {
            let response = try post(server, "/v1/streams?speed=\(speed)", Self.pulse)
            let body = try assertProblem(response, status: 400)
            let entries = body["errors"]?.array ?? []
            XCTAssertEqual(entries.count, 1, "speed=\(speed): \(response.text)")
            XCTAssertEqual(entries.first?["parameter"], "speed", "speed=\(speed): \(response.text)")
            XCTAssertTrue(body["detail"]?.string?.contains("speed") ?? false, response.text)
            XCTAssertFalse(response.isChunked)
        }
        assertHealthy(server)
    }

    // MARK: - Clients that go away

    private static let endless = """
        {"fps": 60, "target": {"x": 0},
         "motion": {"type": "tween", "duration": 1, "repeat": "infinite", "reverses": true, "properties": [{"path": "x", "to": 100}]},
         "window": {"start": 0, "end": 1000}}
        """

    func testClientDisconnectingMidStreamDoesNotHurtTheServer() throws {
        for abrupt in [true, false] {
            let (client, head) = try openStream(Self.endless, query: "?speed=1")
            XCTAssertEqual(head.status, 200)
            let reader = ChunkedLineReader(client: client)
            for _ in 0..<5 {
                let line = try XCTUnwrap(try reader.nextLine(), "the stream ended early")
                XCTAssertNoThrow(try line.json())
            }
            if abrupt { client.closeAbruptly() } else { client.close() }
            assertHealthy(server)
            // A following computation and a following stream work.
            let response = try post(server, "/v1/timelines", Self.pulse)
            XCTAssertEqual(response.status, 200)
            let (next, nextHead) = try openStream(Self.pulse)
            XCTAssertEqual(nextHead.status, 200)
            let lastLine = try XCTUnwrap(try ChunkedLineReader(client: next).remainingLines().last)
            XCTAssertEqual(try lastLine.json()["end"], true)
            next.close()
        }
    }

    func testADisconnectedStreamIsFreed() throws {
        // With room for one stream only, a second one is refused while the first is open and
        // accepted soon after its client has gone.
        let server = try startServer(["--max-streams", "1"])
        let first = try server.client()
        try first.sendRequest("POST", "/v1/streams?speed=1", headers: [("Content-Type", "application/json")], body: Array(Self.endless.utf8))
        XCTAssertEqual(try first.readResponseHead().status, 200)
        let reader = ChunkedLineReader(client: first)
        _ = try reader.nextLine()

        let refused = try post(server, "/v1/streams?speed=0", Self.pulse)
        try assertProblem(refused, status: 503, type: "/problems/unavailable")
        XCTAssertNotNil(refused.header("Retry-After"))

        first.closeAbruptly()
        var accepted = false
        let deadline = monotonicSeconds() + 5
        while !accepted, monotonicSeconds() < deadline {
            let response = try post(server, "/v1/streams?speed=0", Self.pulse)
            if response.status == 200 {
                accepted = true
            } else {
                XCTAssertEqual(response.status, 503, response.text)
                usleep(20_000)
            }
        }
        XCTAssertTrue(accepted, "the disconnected stream was not freed within 5 s")
        assertHealthy(server)
    }

    func testSlowReaderGetsEveryFrame() throws {
        // Unpaced and large: the server must not drop frames when the reader lags.
        let document = """
            {"fps": 1000, "target": {"a": 0, "b": 0, "c": 0},
             "motion": {"type": "tween", "duration": 20, "properties": [{"path": "a", "to": 1}, {"path": "b", "to": 2}, {"path": "c", "to": 3}]},
             "output": {"events": false}}
            """
        let (client, head) = try openStream(document)
        defer { client.close() }
        XCTAssertEqual(head.status, 200)
        usleep(300_000)
        let reader = ChunkedLineReader(client: client)
        var expected = 0
        var end: JSONValue?
        while let line = try reader.nextLine() {
            let object = try line.json()
            if object["end"] != nil {
                end = object
            } else {
                XCTAssertEqual(object["frame"]?.int, expected)
                if object["frame"]?.int != expected { break }
                expected += 1
            }
        }
        XCTAssertEqual(expected, 20_001)
        XCTAssertEqual(end?["frames"], 20_001)
    }
}
