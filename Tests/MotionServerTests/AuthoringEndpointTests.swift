import Foundation
import XCTest

/// Timelines, staggers, batches and ETags over HTTP (docs/authoring.md–10.5): streams and sessions
/// play them exactly as `/v1/timelines` computes them.
final class AuthoringEndpointTests: ServerTestCase {
    /// A 2 × 3 grid of dots staggered from the centre, then a labelled timeline.
    static let grid = #"""
        {"fps":20,"target":{"dots":[{"s":0},{"s":0},{"s":0},{"s":0},{"s":0},{"s":0}],"title":0,"bar":0},
         "output":{"schedule":true},
         "motion":{"type":"timeline","id":"intro","labels":{"bar":0.2},"children":[
           {"type":"tween","id":"dots","duration":0.3,"easing":"quadratic.out","label":"dots",
            "stagger":{"each":0.1,"grid":[2,3],"from":"center"},"properties":[{"path":"dots.*.s","to":1}]},
           {"type":"tween","id":"title","at":"dots+=0.1","duration":0.2,"properties":[{"path":"title","to":1}]},
           {"type":"spring","id":"bar","at":"bar","response":0.2,"dampingRatio":0.8,"properties":[{"path":"bar","to":1}]}]}}
        """#

    private func etag(_ response: RawHTTPResponse) -> String? { response.header("ETag") }

    // MARK: - ETag

    func testETagRoundTripAndIfNoneMatchForms() throws {
        let server = try startServer()
        let document = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":0.5,"properties":[{"path":"x","to":1}]}}"#
        let first = try post(server, "/v1/timelines", document)
        XCTAssertEqual(first.status, 200)
        let tag = try XCTUnwrap(etag(first))
        XCTAssertNotNil(tag.range(of: #"^"[0-9a-f]{32}"$"#, options: .regularExpression), "a strong tag: \(tag)")

        for field in [tag, "W/\(tag)", #""0000", \#(tag)"#, "*"] {
            let again = try post(server, "/v1/timelines", document, headers: [("If-None-Match", field)])
            XCTAssertEqual(again.status, 304, field)
            XCTAssertTrue(again.body.isEmpty, "a 304 has no body")
            XCTAssertEqual(etag(again), tag)
        }
        // A compressed answer's tag (coding appended) is sent back as it came, and matches.
        let document2 = #"{"fps":120,"target":{"x":0},"motion":{"type":"tween","duration":2,"properties":[{"path":"x","to":1}]}}"#
        let zipped = try post(server, "/v1/timelines", document2, headers: [("Accept-Encoding", "gzip")])
        XCTAssertEqual(zipped.header("Content-Encoding"), "gzip")
        let zippedTag = try XCTUnwrap(etag(zipped))
        XCTAssertTrue(zippedTag.hasSuffix(#"-gzip""#), zippedTag)
        let revalidated = try post(server, "/v1/timelines", document2, headers: [("If-None-Match", zippedTag), ("Accept-Encoding", "gzip")])
        XCTAssertEqual(revalidated.status, 304, zippedTag)
        // The 304 carries the tag the 200 would have carried: the compressed one for a client
        // that accepts gzip, the plain one for a client that does not.
        XCTAssertEqual(etag(revalidated), zippedTag)
        let plainClient = try post(server, "/v1/timelines", document2, headers: [("If-None-Match", zippedTag)])
        XCTAssertEqual(plainClient.status, 304)
        XCTAssertEqual(etag(plainClient), String(zippedTag.dropLast(#"-gzip""#.count)) + "\"")

        let other = try post(server, "/v1/timelines", document, headers: [("If-None-Match", #""0123456789abcdef0123456789abcdef""#)])
        XCTAssertEqual(other.status, 200)
        XCTAssertEqual(other.body, first.body)
        // Errors carry no tag.
        let bad = try post(server, "/v1/timelines", #"{"motion":{"type":"tween","duration":-1,"properties":[{"path":"x","from":0,"to":1}]}}"#,
                           headers: [("If-None-Match", "*")])
        XCTAssertEqual(bad.status, 422)
        XCTAssertNil(etag(bad))
        // A document that compiles but whose export is refused (3,000 steps in one second
        // cannot be kept within 1e-9 at the reduction's time resolution) is a 422 whatever
        // the client holds: no 304 promises an answer it never had, and no tag is kept.
        let refusedExport = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":"steps(3000)","properties":[{"path":"x","to":1}]},"output":{"format":"css","simplify":{"tolerance":1e-9}}}"#
        let refused = try post(server, "/v1/timelines", refusedExport)
        XCTAssertEqual(refused.status, 422, refused.text)
        for field in ["*", #""00000000000000000000000000000000", *"#, "*", tag] {
            let again = try post(server, "/v1/timelines", refusedExport, headers: [("If-None-Match", field)])
            XCTAssertEqual(again.status, 422, field)
            XCTAssertNil(etag(again))
        }
    }

    func testETagChangesWithWhatShapesTheAnswerAndNeverOtherwise() throws {
        let server = try startServer()
        let base = #"{"fps":10,"target":{"a":0,"b":0},"motion":{"type":"tween","duration":0.5,"properties":[{"path":"a","to":1}]}}"#
        let reference = try post(server, "/v1/timelines", base)
        let tag = try XCTUnwrap(etag(reference))

        // The same request written differently: same answer, same tag.
        let sameRequest = [
            " {\n \"motion\" : {\"properties\":[{\"to\":1.0,\"path\":\"a\"}],\"duration\":5e-1,\"type\":\"tween\"}, \"target\":{\"a\":0,\"b\":0.0},\"fps\":10}",
            #"{"fps":10.0,"target":{"a":-0,"b":0},"motion":{"type":"tw\u0065en","duration":0.50,"properties":[{"path":"a","to":1}]}}"#,
        ]
        for text in sameRequest {
            let response = try post(server, "/v1/timelines", text)
            XCTAssertEqual(response.status, 200, response.text)
            XCTAssertEqual(response.body, reference.body, text)
            XCTAssertEqual(etag(response), tag, text)
        }

        // Anything that shapes the answer: a different answer and a different tag each.
        let variants = [
            #"{"fps":20,"target":{"a":0,"b":0},"motion":{"type":"tween","duration":0.5,"properties":[{"path":"a","to":1}]}}"#,
            #"{"fps":10,"target":{"a":0,"b":1},"motion":{"type":"tween","duration":0.5,"properties":[{"path":"a","to":1}]}}"#,
            #"{"fps":10,"target":{"b":0,"a":0},"motion":{"type":"tween","duration":0.5,"properties":[{"path":"a","to":1}]}}"#,
            #"{"fps":10,"target":{"a":0,"b":0},"motion":{"type":"tween","duration":0.5,"properties":[{"path":"a","to":2}]}}"#,
            #"{"fps":10,"target":{"a":0,"b":0},"motion":{"type":"tween","duration":0.5,"easing":"ease-in","properties":[{"path":"a","to":1}]}}"#,
            #"{"fps":10,"target":{"a":0,"b":0},"motion":{"type":"tween","id":"m","duration":0.5,"properties":[{"path":"a","to":1}]}}"#,
            #"{"fps":10,"target":{"a":0,"b":0},"window":{"start":0,"end":1},"motion":{"type":"tween","duration":0.5,"properties":[{"path":"a","to":1}]}}"#,
            #"{"fps":10,"target":{"a":0,"b":0},"output":{"events":false},"motion":{"type":"tween","duration":0.5,"properties":[{"path":"a","to":1}]}}"#,
            #"{"fps":10,"target":{"a":0,"b":0},"output":{"layout":"frames"},"motion":{"type":"tween","duration":0.5,"properties":[{"path":"a","to":1}]}}"#,
            #"{"fps":10,"target":{"a":0,"b":0},"output":{"schedule":true},"motion":{"type":"tween","duration":0.5,"properties":[{"path":"a","to":1}]}}"#,
        ]
        var tags: Set<String> = [tag]
        var bodies: Set<[UInt8]> = [reference.body]
        for text in variants {
            let response = try post(server, "/v1/timelines", text)
            XCTAssertEqual(response.status, 200, response.text)
            let variantTag = try XCTUnwrap(etag(response))
            XCTAssertTrue(tags.insert(variantTag).inserted, "tag reused for \(text)")
            XCTAssertTrue(bodies.insert(response.body).inserted, "the variant does shape the answer: \(text)")
            XCTAssertEqual(try post(server, "/v1/timelines", text, headers: [("If-None-Match", tag)]).status, 200,
                           "the base's tag does not validate \(text)")
        }
    }

    // MARK: - Batch

    func testBatchAnswersEachDocumentInOrderAsAlone() throws {
        let server = try startServer()
        let a = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":0.3,"properties":[{"path":"x","to":1}]}}"#
        let bad = #"{"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"nope","to":1}]}}"#
        let malformed = #"{"fps":"fast","motion":{"type":"tween","duration":1,"properties":[{"path":"x","from":0,"to":1}]}}"#
        let batch = "{\"documents\":[\(a),\(bad),\(Self.grid),\(malformed)]}"
        let response = try post(server, "/v1/timelines/batch", batch)
        XCTAssertEqual(response.status, 200, response.text)
        let results = try XCTUnwrap(response.json()["results"]?.array)
        XCTAssertEqual(results.count, 4)
        XCTAssertEqual(results[0], try timeline(server, a))
        XCTAssertEqual(results[2], try timeline(server, Self.grid))
        XCTAssertEqual(results[1]["status"]?.int, 422)
        XCTAssertEqual(results[1]["errors"]?[0]?["pointer"]?.string, "/motion/properties/0/path")
        XCTAssertEqual(results[3]["status"]?.int, 400)
        XCTAssertEqual(results[3]["errors"]?[0]?["pointer"]?.string, "/fps")

        let tag = try XCTUnwrap(etag(response))
        let cached = try post(server, "/v1/timelines/batch", batch, headers: [("If-None-Match", tag)])
        XCTAssertEqual(cached.status, 304)
        XCTAssertTrue(cached.body.isEmpty)
        let changed = try post(server, "/v1/timelines/batch", "{\"documents\":[\(a),\(Self.grid),\(bad)]}", headers: [("If-None-Match", tag)])
        XCTAssertEqual(changed.status, 200, "reordered documents are another answer")
        XCTAssertNotEqual(etag(changed), tag)
        XCTAssertNotEqual(etag(changed), try etag(post(server, "/v1/timelines", a)), "a batch of one is not the document's tag")

        try assertProblem(post(server, "/v1/timelines/batch", #"{"documents":[]}"#), status: 422)
        try assertProblem(post(server, "/v1/timelines/batch", #"{"documents":{}}"#), status: 400)
        try assertProblem(post(server, "/v1/timelines/batch", #"{"documents":[\#(a)],"extra":1}"#), status: 400)
        try assertProblem(post(server, "/v1/timelines/batch", #"{"documents":["#), status: 400)
        let get = try send(server, "GET", "/v1/timelines/batch")
        XCTAssertEqual(get.status, 405)
    }

    /// Each result is the `/v1/timelines` answer byte for byte, `simplify` included (the batch
    /// used to encode the frame grid whatever `output` asked for); a format other than `json`
    /// is that document's own 422 at `/output/format` (it used to be answered silently as
    /// `json`), and a reduction over its limits is that document's own 422 too.
    func testBatchAnswersSimplifyAsTimelinesAndRefusesOtherFormats() throws {
        let server = try startServer()
        let simplified = #"{"fps":60,"target":{"x":0},"output":{"simplify":{"tolerance":0.1}},"motion":{"type":"tween","duration":1,"easing":"ease-in-out","properties":[{"path":"x","to":100}]}}"#
        let plain = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":0.3,"properties":[{"path":"x","to":1}]}}"#
        let alone = try post(server, "/v1/timelines", simplified)
        XCTAssertEqual(alone.status, 200, alone.text)
        // Reduced: each track has its own keyframe times, fewer than the 61 frames.
        let keyframeTimes = try XCTUnwrap(alone.json()["tracks"]?[0]?["times"]?.array)
        XCTAssertLessThan(keyframeTimes.count, 61)
        XCTAssertNil(try alone.json()["times"])
        var documents = [simplified, plain]
        for format in ["csv", "svg", "css", "waapi", "lottie"] {
            documents.append(#"{"fps":10,"target":{"x":0},"output":{"format":"\#(format)"},"motion":{"type":"tween","duration":0.3,"properties":[{"path":"x","to":1}]}}"#)
        }
        let response = try post(server, "/v1/timelines/batch", "{\"documents\":[\(documents.joined(separator: ","))]}")
        XCTAssertEqual(response.status, 200, response.text)
        let results = try XCTUnwrap(response.json()["results"]?.array)
        XCTAssertEqual(results.count, 7)
        XCTAssertEqual(results[0], try alone.json())
        XCTAssertEqual(results[1], try timeline(server, plain))
        for (index, format) in ["csv", "svg", "css", "waapi", "lottie"].enumerated() {
            let problem = results[index + 2]
            XCTAssertEqual(problem["status"]?.int, 422, format)
            XCTAssertEqual(problem["errors"]?[0]?["pointer"]?.string, "/output/format", format)
            XCTAssertTrue(problem["errors"]?[0]?["message"]?.string?.contains("json format only") ?? false, format)
        }
        // The bytes too: the reduced answer appears in the batch exactly as /v1/timelines sent it.
        XCTAssertTrue(response.text.contains(alone.text.trimmingCharacters(in: .newlines)))
    }

    /// The documents of a batch compile at most `--max-segments` curve segments together, as
    /// their samples are bounded together (each may reach it alone).
    func testBatchLimitsTheSegmentsOfAllItsDocuments() throws {
        let server = try startServer(["--max-segments", "25"])
        // Ten elements: ten segments each.
        let ten = #"{"fps":1,"target":{"a":[0,0,0,0,0,0,0,0,0,0]},"motion":{"type":"tween","duration":1,"properties":[{"path":"a.*","to":1}]}}"#
        XCTAssertEqual(try post(server, "/v1/timelines/batch", "{\"documents\":[\(ten),\(ten)]}").status, 200)
        let over = try assertProblem(post(server, "/v1/timelines/batch", "{\"documents\":[\(ten),\(ten),\(ten)]}"), status: 422)
        XCTAssertEqual(over["errors"]?[0]?["pointer"]?.string, "/documents/2", "\(over)")
        XCTAssertTrue(over["errors"]?[0]?["message"]?.string?.contains("30 curve segments together") ?? false, "\(over)")
        XCTAssertTrue(over["errors"]?[0]?["message"]?.string?.contains("max-segments") ?? false, "\(over)")
    }

    /// The samples a batch sums count additive layers as a single document's do.
    func testBatchSamplesCountAdditiveLayers() throws {
        let server = try startServer(["--max-samples", "200"])
        // 11 frames × (1 track + 10 additive layers) = 121 samples; 11 as tracks alone.
        let layered = #"{"fps":1,"target":{"x":0},"motion":{"type":"group","repeat":9,"children":[{"type":"tween","additive":true,"duration":1,"properties":[{"path":"x","to":1}]}]}}"#
        XCTAssertEqual(try post(server, "/v1/timelines/batch", "{\"documents\":[\(layered)]}").status, 200)
        let over = try assertProblem(post(server, "/v1/timelines/batch", "{\"documents\":[\(layered),\(layered)]}"), status: 422)
        XCTAssertEqual(over["errors"]?[0]?["pointer"]?.string, "/documents/1", "\(over)")
        XCTAssertTrue(over["errors"]?[0]?["message"]?.string?.contains("242 samples together") ?? false, "\(over)")
    }

    func testBatchLimitsOnDocumentsAndTotalSamples() throws {
        let server = try startServer(["--max-batch-documents", "3", "--max-samples", "50"])
        // 11 frames × 2 tracks = 22 samples each.
        let doc = #"{"fps":10,"target":{"x":0,"y":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1},{"path":"y","to":1}]}}"#
        let two = try post(server, "/v1/timelines/batch", "{\"documents\":[\(doc),\(doc)]}")
        XCTAssertEqual(two.status, 200, "44 samples fit")
        let samples = try assertProblem(post(server, "/v1/timelines/batch", "{\"documents\":[\(doc),\(doc),\(doc)]}"), status: 422)
        XCTAssertEqual(problemEntries(samples).first?.pointer, "/documents/2")
        XCTAssertTrue(problemEntries(samples).first?.message.contains("max-samples") ?? false, samples.description)
        let count = try assertProblem(post(server, "/v1/timelines/batch", "{\"documents\":[\(doc),\(doc),\(doc),\(doc)]}"), status: 422)
        XCTAssertEqual(problemEntries(count).first?.pointer, "/documents")
        XCTAssertTrue(problemEntries(count).first?.message.contains("max-batch-documents") ?? false, count.description)
        // A document over the limit alone is its own problem; the others are answered.
        let big = #"{"fps":100,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#
        let mixed = try post(server, "/v1/timelines/batch", "{\"documents\":[\(big),\(doc)]}")
        XCTAssertEqual(mixed.status, 200)
        let results = try XCTUnwrap(mixed.json()["results"]?.array)
        XCTAssertEqual(results[0]["status"]?.int, 422)
        XCTAssertEqual(results[1]["frameCount"]?.int, 11)
    }

    // MARK: - Streams and sessions

    func testStreamPlaysTheStaggeredTimelineExactly() throws {
        let server = try startServer()
        let reference = try timeline(server, Self.grid)
        let times = try XCTUnwrap(reference["times"]?.doubles)
        let tracks = try XCTUnwrap(reference["tracks"]?.array)
        XCTAssertEqual(tracks.count, 8)
        let client = try server.client()
        defer { client.close() }
        try client.sendRequest("POST", "/v1/streams?speed=0", headers: [("Content-Type", "application/json")], body: Array(Self.grid.utf8))
        XCTAssertEqual(try client.readResponseHead().status, 200)
        let lines = try StreamLineReader(client).read(until: { $0["end"]?.bool == true })
        let frames = lines.filter { $0["values"] != nil }
        XCTAssertEqual(frames.count, times.count)
        for frame in frames {
            let index = try XCTUnwrap(frame["frame"]?.int)
            XCTAssertEqual(frame["time"]?.double, times[index])
            for track in tracks {
                let path = try XCTUnwrap(track["path"]?.string)
                XCTAssertEqual(frame["values"]?[path], track["values"]?[index], "frame \(index) \(path)")
            }
        }
        let streamed = lines.filter { $0["event"] != nil }.map { "\($0["event"]!.string!)@\($0["time"]!.double!):\($0["motion"]!.string!)" }
        let computed = try XCTUnwrap(reference["events"]?.array).map { "\($0["type"]!.string!)@\($0["time"]!.double!):\($0["motion"]!.string!)" }
        XCTAssertEqual(streamed, computed)
    }

    func testSessionSeeksShowTheTimelineValuesAndRetargetOnAStaggeredElement() throws {
        let server = try startServer()
        let reference = try timeline(server, Self.grid)
        let times = try XCTUnwrap(reference["times"]?.doubles)
        let tracks = try XCTUnwrap(reference["tracks"]?.array)
        let created = try post(server, "/v1/sessions?speed=1", Self.grid)
        XCTAssertEqual(created.status, 201, created.text)
        let id = try XCTUnwrap(created.json()["id"]?.string)
        func command(_ json: String) throws -> JSONValue {
            let response = try post(server, "/v1/sessions/\(id)/commands", json)
            XCTAssertEqual(response.status, 200, response.text)
            return try response.json()
        }
        _ = try command(#"{"command":"pause"}"#)
        for index in stride(from: 0, to: times.count, by: 3) {
            let state = try command(#"{"command":"seek","time":\#(times[index])}"#)
            for track in tracks {
                let path = try XCTUnwrap(track["path"]?.string)
                XCTAssertEqual(state["values"]?[path], track["values"]?[index], "t = \(times[index]) \(path)")
            }
        }
        // dots.1 (the top centre cell) starts at 0.05: at 0.15 it is moving; a retarget there
        // continues it from its value and velocity toward the new target, without a jump.
        let before = try command(#"{"command":"seek","time":0.15}"#)["values"]?["dots.1.s"]?.double
        let retarget = try post(server, "/v1/sessions/\(id)/retarget", #"{"path":"dots.1.s","to":3}"#)
        XCTAssertEqual(retarget.status, 200, retarget.text)
        let state = try retarget.json()
        XCTAssertEqual(try XCTUnwrap(state["values"]?["dots.1.s"]?.double), try XCTUnwrap(before), accuracy: 1e-12)
        let end = try XCTUnwrap(state["duration"]?.double)
        let later = try XCTUnwrap(command(#"{"command":"seek","time":\#(end)}"#)["values"]?["dots.1.s"]?.double)
        XCTAssertEqual(later, 3, "the element settles on the new target")

        // dots.0 (a corner) starts at 0.1·√1.25 ≈ 0.112 s. Retargeted before that, it heads
        // for the new target until its own tween starts, which then replaces the retarget
        // (a later start wins) and ends on its own `to`, as documented.
        _ = try command(#"{"command":"seek","time":0}"#)
        XCTAssertEqual(try post(server, "/v1/sessions/\(id)/retarget", #"{"path":"dots.0.s","to":3}"#).status, 200)
        let early = try XCTUnwrap(command(#"{"command":"seek","time":0.1}"#)["values"]?["dots.0.s"]?.double)
        XCTAssertGreaterThan(early, 0.5, "heading for 3 before the stagger offset")
        let settled = try XCTUnwrap(command(#"{"command":"seek","time":0.5}"#)["values"]?["dots.0.s"]?.double)
        XCTAssertEqual(settled, 1, "the element's own tween took over at its offset")
    }
}
