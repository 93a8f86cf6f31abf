import Foundation
import XCTest

/// Where a POST is computed (docs/http.md#where-answers-are-computed): small work on the
/// connection thread, large work on the compute pool, with the same answer either way; and
/// the per-connection memory (`--connection-memory`) that bounds a request head.
final class ComputePlacementTests: ServerTestCase {
    /// The `motion_computations_total{thread=…}` counter from `/metrics`.
    private func computations(_ server: TestServer, _ thread: String) throws -> Int {
        Int(try metric(server, "motion_computations_total{thread=\"\(thread)\"}"))
    }

    /// One tween of one property at 60 fps for `seconds`: 60 × seconds + 1 frames × 1 track.
    private func document(seconds: Int) -> String {
        #"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":\#(seconds),"easing":"quadratic.inOut","properties":[{"path":"x","to":320}]}}"#
    }

    func testASmallDocumentIsComputedInlineAndALargeOneOnThePool() throws {
        let server = try startServer()
        // 61 samples: under --inline-max-samples (2048), computed on the connection thread.
        let small = try post(server, "/v1/timelines", document(seconds: 1))
        XCTAssertEqual(small.status, 200)
        XCTAssertEqual(try computations(server, "connection"), 1)
        XCTAssertEqual(try computations(server, "compute"), 0)
        // 6001 samples: decoded on the connection thread, then computed on the pool.
        let large = try post(server, "/v1/timelines", document(seconds: 100))
        XCTAssertEqual(large.status, 200)
        XCTAssertEqual(try large.json()["frameCount"], 6001)
        XCTAssertEqual(try computations(server, "connection"), 1)
        XCTAssertEqual(try computations(server, "compute"), 1)
        // A route that is not computed inline (batches) goes to the pool whatever its size.
        let batch = try post(server, "/v1/timelines/batch", "{\"documents\":[\(document(seconds: 1))]}")
        XCTAssertEqual(batch.status, 200)
        XCTAssertEqual(try computations(server, "compute"), 2)
        // Problems found while decoding are answered on the connection thread too.
        let bad = try post(server, "/v1/timelines", #"{"fps":0,"motion":{"type":"tween","duration":1,"properties":[]}}"#)
        try assertProblem(bad, status: 422)
        XCTAssertEqual(try computations(server, "connection"), 2)
    }

    /// The lines of a `speed=0` stream (all frames at once, then the end line).
    private func streamLines(_ server: TestServer, _ json: String, headers: [(String, String)] = []) throws -> (status: Int, body: String) {
        let response = try post(server, "/v1/streams?speed=0", json, headers: headers)
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// `speed=0` (an unpaced stream) is a zero as written, not a number that underflows to
    /// one: `1e-400` was taken for 0 and streamed every frame at once.
    func testAnUnpacedStreamIsAskedForByAZeroNotByAnUnderflow() throws {
        let server = try startServer()
        for speed in ["1e-400", "-1e-400", "0.0000000000000000000000000000000000000000000000000000000000001e-300"] {
            let response = try post(server, "/v1/streams?speed=\(speed)", document(seconds: 1))
            XCTAssertEqual(try assertProblem(response, status: 400)["errors"]?[0]?["parameter"], "speed", speed)
        }
        let unpaced = try streamLines(server, document(seconds: 1)).body
        for speed in ["-0", "0.000", "0e5", "-0.0E-7"] {
            let response = try post(server, "/v1/streams?speed=\(speed)", document(seconds: 1))
            XCTAssertEqual(response.status, 200, speed)
            XCTAssertEqual(String(decoding: response.body, as: UTF8.self), unpaced, speed)
        }
    }

    func testASmallStreamStartsOnTheConnectionThreadAndALongOneOnThePool() throws {
        let server = try startServer()
        let pooled = try startServer(["--inline-max-body-bytes", "0"])
        // 61 frames × 1 track: compiled on the connection thread; the same frames as the pool's.
        let small = try streamLines(server, document(seconds: 1))
        XCTAssertEqual(small.status, 200)
        XCTAssertEqual(small.body.split(separator: "\n").filter { $0.hasPrefix(#"{"frame":"#) }.count, 61)
        XCTAssertTrue(small.body.hasSuffix(#"{"end":true,"frames":61,"duration":1}"# + "\n"), small.body)
        XCTAssertEqual(try computations(server, "connection"), 1)
        XCTAssertEqual(try computations(server, "compute"), 0)
        XCTAssertEqual(try streamLines(pooled, document(seconds: 1)).body, small.body)
        XCTAssertEqual(try computations(pooled, "compute"), 1)
        // 6001 frames: over --inline-max-samples, compiled again on the pool.
        let long = try streamLines(server, document(seconds: 100))
        XCTAssertEqual(long.status, 200)
        XCTAssertEqual(long.body.split(separator: "\n").filter { $0.hasPrefix(#"{"frame":"#) }.count, 6001)
        XCTAssertEqual(try computations(server, "connection"), 1)
        XCTAssertEqual(try computations(server, "compute"), 1)
        // A paced stream (speed 1) starts inline too.
        let client = try server.client(readTimeout: 5)
        defer { client.close() }
        try client.sendRequest("POST", "/v1/streams?speed=1", headers: [("Content-Type", "application/json")], body: Array(document(seconds: 1).utf8))
        XCTAssertEqual(try client.readResponseHead().status, 200)
        XCTAssertEqual(try computations(server, "connection"), 2)
        // Problems: a bad speed is answered on the connection thread; a document problem is
        // answered from the pool, exactly as a pool-only server answers it.
        let bad = #"{"fps":0,"motion":{"type":"tween","duration":1,"properties":[]}}"#
        let timelinesOnly = #"{"fps":60,"motion":{"type":"tween","duration":1,"properties":[{"path":"x","from":0,"to":1}]},"output":{"format":"css"}}"#
        for json in [bad, timelinesOnly] {
            let a = try post(server, "/v1/streams?speed=0", json, headers: [("X-Request-Id", "same-id")])
            let b = try post(pooled, "/v1/streams?speed=0", json, headers: [("X-Request-Id", "same-id")])
            try assertProblem(a, status: 422)
            XCTAssertEqual(a.body, b.body, json)
        }
        XCTAssertEqual(try computations(server, "compute"), 3)
        try assertProblem(post(server, "/v1/streams?speed=-1", document(seconds: 1)), status: 400)
        XCTAssertEqual(try computations(server, "connection"), 3)
    }

    /// Creates a session (`POST`, or `PUT` under `id`) and returns its id.
    private func session(_ server: TestServer, _ json: String, id: String? = nil) throws -> String {
        let response = try id.map { try send(server, "PUT", "/v1/sessions/\($0)", headers: [("Content-Type", "application/json")], body: Array(json.utf8)) }
            ?? post(server, "/v1/sessions", json)
        XCTAssertEqual(response.status, 201, response.text)
        return try XCTUnwrap(response.json()["id"]?.string)
    }

    /// Sessions take the streams' path: a small one starts on the connection thread, and
    /// commands and retargets are answered there while the session has at most
    /// `--inline-max-samples` tracks (the answer holds a value for each); a long session is
    /// compiled on the pool and its commands still answered inline.
    func testSessionsStartAndTakeCommandsOnTheConnectionThread() throws {
        let server = try startServer()
        var inline = 0, pooled = 0
        func expect(_ thread: String, _ what: String) throws {
            if thread == "connection" { inline += 1 } else { pooled += 1 }
            XCTAssertEqual(try computations(server, "connection"), inline, what)
            XCTAssertEqual(try computations(server, "compute"), pooled, what)
        }
        let small = try session(server, document(seconds: 1))
        try expect("connection", "POST a 61-frame session")
        _ = try session(server, document(seconds: 1), id: "chosen-id")
        try expect("connection", "PUT a 61-frame session")
        XCTAssertEqual(try post(server, "/v1/sessions/\(small)/commands", #"{"command":"pause"}"#).status, 200)
        try expect("connection", "pause")
        let retargeted = try post(server, "/v1/sessions/\(small)/retarget", #"{"path":"x","to":-100}"#)
        XCTAssertEqual(retargeted.status, 200, retargeted.text)
        XCTAssertEqual(try retargeted.json()["retargets"]?[0]?["to"]?.double, -100)
        try expect("connection", "retarget")
        // 6001 frames: over the bound, compiled on the pool; one track, so its commands are not.
        let long = try session(server, document(seconds: 100))
        try expect("compute", "POST a 6001-frame session")
        XCTAssertEqual(try post(server, "/v1/sessions/\(long)/commands", #"{"command":"seek","time":50}"#).status, 200)
        try expect("connection", "seek")
        // Problems: a PUT on a taken id and a bad speed are answered at once; a document
        // problem is answered from the pool, as for streams.
        try assertProblem(send(server, "PUT", "/v1/sessions/chosen-id", headers: [("Content-Type", "application/json")], body: Array(document(seconds: 1).utf8)), status: 409)
        try expect("connection", "PUT on a taken id")
        try assertProblem(post(server, "/v1/sessions?speed=0", document(seconds: 1)), status: 400)
        try expect("connection", "speed=0")
        try assertProblem(post(server, "/v1/sessions", #"{"fps":0,"motion":{"type":"tween","duration":1,"properties":[]}}"#), status: 422)
        try expect("compute", "a document problem")
        try assertProblem(post(server, "/v1/sessions/\(small)/commands", #"{"command":"jump"}"#), status: 400)
        try expect("connection", "an unknown command")
    }

    /// The tracks of a session bound where its commands and retargets are answered.
    func testCommandsOnASessionWithManyTracksGoToThePool() throws {
        let server = try startServer(["--inline-max-samples", "2"])
        let twoTracks = #"{"fps":1,"target":{"x":0,"y":0},"motion":{"type":"tween","duration":100,"properties":[{"path":"x","to":1},{"path":"y","to":1}]}}"#
        let threeTracks = #"{"fps":1,"target":{"x":0,"y":0,"z":0},"motion":{"type":"tween","duration":100,"properties":[{"path":"x","to":1},{"path":"y","to":1},{"path":"z","to":1}]}}"#
        let two = try session(server, twoTracks), three = try session(server, threeTracks)
        XCTAssertEqual(try computations(server, "compute"), 2)  // 101 frames × 2 or 3 tracks > 2
        for (id, thread) in [(two, "connection"), (three, "compute")] {
            let before = try computations(server, thread)
            XCTAssertEqual(try post(server, "/v1/sessions/\(id)/commands", #"{"command":"pause"}"#).status, 200)
            let retargeted = try post(server, "/v1/sessions/\(id)/retarget", #"{"path":"x","to":5}"#)
            XCTAssertEqual(retargeted.status, 200, retargeted.text)
            XCTAssertEqual(try computations(server, thread), before + 2, "\(id) on the \(thread) thread")
        }
        // The state every answer holds lists the retargets too: two tracks and one retarget
        // pass the bound of 2.
        let before = try computations(server, "compute")
        XCTAssertEqual(try post(server, "/v1/sessions/\(two)/commands", #"{"command":"resume"}"#).status, 200)
        XCTAssertEqual(try computations(server, "compute"), before + 1, "after a retarget, on the compute pool")
    }

    /// A command gives every watcher the frames it is owed, so each watcher counts the
    /// session's tracks once more: a seek on 1,990 tracks with 100 watchers held a
    /// connection thread 30–46 ms. Reads of the state do not count them.
    func testCommandsOnASessionWithWatchersCountThemAgainstTheInlineBound() throws {
        let server = try startServer(["--inline-max-samples", "4"])
        let twoTracks = #"{"fps":1,"target":{"x":0,"y":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1},{"path":"y","to":1}]}}"#
        let id = try session(server, twoTracks)
        /// Where `body` was computed.
        func thread(_ body: () throws -> Void) throws -> String {
            let inline = try computations(server, "connection"), pooled = try computations(server, "compute")
            try body()
            let (nowInline, nowPooled) = (try computations(server, "connection"), try computations(server, "compute"))
            XCTAssertEqual(nowInline - inline + nowPooled - pooled, 1)
            return nowInline > inline ? "connection" : "compute"
        }
        func command(_ json: String) throws -> String {
            try thread { XCTAssertEqual(try post(server, "/v1/sessions/\(id)/commands", json).status, 200) }
        }
        XCTAssertEqual(try command(#"{"command":"pause"}"#), "connection", "two tracks, no watcher")
        let client = try server.client(readTimeout: 10)
        defer { client.close() }
        try client.sendRequest("GET", "/v1/sessions/\(id)/frames", headers: [])
        XCTAssertEqual(try client.readResponseHead().status, 200)
        XCTAssertEqual(try command(#"{"command":"seek","time":0.5}"#), "connection", "two tracks, once more for one watcher: 4")
        let second = try server.client(readTimeout: 10)
        defer { second.close() }
        try second.sendRequest("GET", "/v1/sessions/\(id)/frames", headers: [])
        XCTAssertEqual(try second.readResponseHead().status, 200)
        XCTAssertEqual(try command(#"{"command":"seek","time":0}"#), "compute", "two watchers: 6")
        let before = try computations(server, "compute")
        XCTAssertEqual(try get(server, "/v1/sessions/\(id)").status, 200)
        XCTAssertEqual(try computations(server, "compute"), before, "the state read stays on the connection thread")
    }


    /// A session's state is read on the connection thread while its tracks and retargets pass
    /// the inline bound, on the pool beyond (a large state, made and compressed on the
    /// connection threads, held up `/healthz`); the other reads stay on the connection thread.
    func testTheStateOfASessionWithManyTracksIsMadeOnThePool() throws {
        let server = try startServer(["--inline-max-samples", "2"])
        let twoTracks = #"{"fps":1,"target":{"x":0,"y":0},"motion":{"type":"tween","duration":100,"properties":[{"path":"x","to":1},{"path":"y","to":1}]}}"#
        let threeTracks = #"{"fps":1,"target":{"x":0,"y":0,"z":0},"motion":{"type":"tween","duration":100,"properties":[{"path":"x","to":1},{"path":"y","to":1},{"path":"z","to":1}]}}"#
        let two = try session(server, twoTracks), three = try session(server, threeTracks)
        var onPool = try computations(server, "compute")
        let small = try get(server, "/v1/sessions/\(two)")
        XCTAssertEqual(small.status, 200)
        XCTAssertEqual(try small.json()["id"]?.string, two)
        XCTAssertEqual(try computations(server, "compute"), onPool, "two tracks: on the connection thread")
        for method in ["GET", "HEAD"] {
            let client = try server.client()
            defer { client.close() }
            let large = try client.request(method, "/v1/sessions/\(three)")
            XCTAssertEqual(large.status, 200, method)
            if method == "GET" {
                XCTAssertEqual(try large.json()["id"]?.string, three)
                XCTAssertEqual(try large.json()["values"]?.object?.count, 3, large.text)
            } else {
                XCTAssertTrue(large.body.isEmpty)
            }
            onPool += 1
            XCTAssertEqual(try computations(server, "compute"), onPool, "\(method) of three tracks: on the pool")
        }
        for path in ["/healthz", "/v1/sessions/nope"] {
            _ = try get(server, path)
        }
        XCTAssertEqual(try computations(server, "compute"), onPool, "other reads stay on the connection thread")

        // The names count too, 24 bytes a sample: one track named in 47 bytes is two samples
        // (on the connection thread), in 48 three (on the pool). 2,000 tracks named in 200
        // bytes each made a 430 KB state on the connection threads.
        for (length, pooled) in [(47, false), (48, true)] {
            let name = String(repeating: "n", count: length)
            let id = try session(server, #"{"fps":1,"target":{"\#(name)":0},"motion":{"type":"tween","duration":100,"properties":[{"path":"\#(name)","to":1}]}}"#)
            onPool = try computations(server, "compute")
            let state = try get(server, "/v1/sessions/\(id)")
            // The session runs (x goes 0 → 1 over 100 s): read a moment after it starts.
            XCTAssertEqual(try XCTUnwrap(state.json()["values"]?[name]?.double, state.text), 0, accuracy: 0.01)
            XCTAssertEqual(try computations(server, "compute"), onPool + (pooled ? 1 : 0), "a track named in \(length) bytes")
        }

        // Every value a retarget sets counts, not the retarget: its state lists them all.
        let bounded = try startServer(["--inline-max-samples", "3"])
        let pair = try session(bounded, #"{"fps":1,"target":{"p":{"x":0,"y":0}},"motion":{"type":"tween","duration":100,"properties":[{"path":"p","to":{"x":1,"y":1}}]}}"#)
        XCTAssertEqual(try computations(bounded, "compute"), 1)  // 101 frames × 2 tracks > 3
        let retargeted = try post(bounded, "/v1/sessions/\(pair)/retarget", #"{"path":"p","to":{"x":5,"y":6}}"#)
        XCTAssertEqual(retargeted.status, 200, retargeted.text)
        XCTAssertEqual(try computations(bounded, "connection"), 1, "two tracks, nothing retargeted yet: on the connection thread")
        XCTAssertEqual(try get(bounded, "/v1/sessions/\(pair)").status, 200)
        XCTAssertEqual(try computations(bounded, "compute"), 2, "two tracks and two values retargeted: on the pool")
    }

    /// A page of `GET /v1/sessions` counts 16 samples a session: within the bound it is
    /// answered on the connection thread, beyond it on the pool, with the same sessions in
    /// the same order either way.
    func testLargeSessionPagesAreAnsweredOnThePool() throws {
        let server = try startServer(["--inline-max-samples", "48"])  // 3 sessions a page inline
        let tiny = #"{"fps":1,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#
        var made: [String] = []
        for _ in 0..<5 { made.append(try session(server, tiny)) }
        let onPool = try computations(server, "compute")
        func ids(_ response: RawHTTPResponse) throws -> [String] {
            try XCTUnwrap(response.json()["sessions"]?.array).map { try XCTUnwrap($0["id"]?.string) }
        }
        let first = try get(server, "/v1/sessions?limit=3")
        XCTAssertEqual(first.status, 200, first.text)
        XCTAssertEqual(try computations(server, "compute"), onPool, "three sessions: on the connection thread")
        let next = try XCTUnwrap(first.json()["next"]?.string)
        let rest = try get(server, next)
        XCTAssertEqual(try computations(server, "compute"), onPool, "the last two: on the connection thread")
        XCTAssertEqual(try rest.json()["next"], .null)
        let whole = try get(server, "/v1/sessions")
        XCTAssertEqual(whole.status, 200, whole.text)
        XCTAssertEqual(try computations(server, "compute"), onPool + 1, "five sessions: on the pool")
        XCTAssertEqual(try ids(whole), made.sorted())
        XCTAssertEqual(try ids(first) + ids(rest), made.sorted())
        XCTAssertEqual(try whole.json()["next"], .null)
    }

    /// Whether the server's pacer thread raised its priority: its `listening` log line says
    /// `pacer-nice=-10`, or `pacer-nice=unchanged` when it could not.
    private func pacerRunsAhead(_ server: TestServer) throws -> Bool {
        let log = server.waitForLog { $0.contains("pacer-nice=") }
        let ahead = log.contains("pacer-nice=-10"), unchanged = log.contains("pacer-nice=unchanged")
        XCTAssertNotEqual(ahead, unchanged, log)
        return ahead
    }

    /// The connection threads' budget for inline work while streams are open (2.5 ms in each
    /// 10 ms) applies only when the connection threads resume the streams
    /// (`--stream-writes libmicrohttpd`) or the pacer could not raise its priority: with direct
    /// writes and the pacer ahead of the connection threads, it waits for none of them.
    func testTheInlineBudgetHoldsOnlyWhenConnectionThreadsResumeStreams() throws {
        var runs: [(arguments: [String], launcher: [String], directWrites: Bool)] = [([], [], true), (["--stream-writes", "libmicrohttpd"], [], false)]
        // As root, also without CAP_SYS_NICE (root's RLIMIT_NICE is 0): the pacer keeps the
        // process's priority, as in the Kubernetes manifests.
        let setpriv = "/usr/bin/setpriv"
        if geteuid() == 0, FileManager.default.isExecutableFile(atPath: setpriv) {
            runs.append(([], [setpriv, "--inh-caps=-sys_nice", "--bounding-set=-sys_nice", "--"], true))
        }
        for (arguments, launcher, directWrites) in runs {
            let server = try startServer(arguments, launcher: launcher)
            if !launcher.isEmpty { XCTAssertFalse(try pacerRunsAhead(server), "still ahead without CAP_SYS_NICE") }
            // Unprivileged, the pacer keeps the process's priority (StreamPacerTests), and the
            // budget holds as with libmicrohttpd writes.
            let budgeted = try !directWrites || !pacerRunsAhead(server)
            let client = try server.client(readTimeout: 5)
            defer { client.close() }
            // An open paced stream (30 s), counted as computed on the connection thread.
            try client.sendRequest("POST", "/v1/streams?speed=1", headers: [("Content-Type", "application/json")],
                                   body: Array(document(seconds: 30).utf8))
            XCTAssertEqual(try client.readResponseHead().status, 200)
            // 150 small documents back to back: about 0.1–1 ms of computing each, far more
            // than 2.5 ms in every 10 ms.
            for seconds in 1...150 {
                XCTAssertEqual(try post(server, "/v1/timelines", document(seconds: 1 + seconds % 3)).status, 200)
            }
            let inline = try computations(server, "connection"), pooled = try computations(server, "compute")
            XCTAssertEqual(inline + pooled, 151, "\(arguments)")
            if budgeted {
                XCTAssertGreaterThan(pooled, 0, "with the budget, part of the flood goes to the pool")
            } else {
                XCTAssertEqual(pooled, 0, "with direct writes and the pacer ahead, every small document stays on the connection thread")
            }
        }
    }

    func testExportsAndSimplifyAreComputedOnThePool() throws {
        let server = try startServer()
        // Few frames, but a reduction of every track (up to millions of curve evaluations):
        // never on the connection thread.
        let css = #"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":320}]},"output":{"format":"css","css":{"selector":".a","declarations":{"transform":"translateX({x}px)"}}}}"#
        let simplified = #"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":320}]},"output":{"simplify":{"tolerance":0.5}}}"#
        XCTAssertEqual(try post(server, "/v1/timelines", css).status, 200)
        XCTAssertEqual(try post(server, "/v1/timelines", simplified).status, 200)
        XCTAssertEqual(try computations(server, "connection"), 0)
        XCTAssertEqual(try computations(server, "compute"), 2)
    }

    func testACompilationBeyondTheInlineBoundStopsAndGoesToThePool() throws {
        let server = try startServer()
        let pooled = try startServer(["--inline-max-body-bytes", "0"])
        // 2 frames but 99,991 node plays: the inline compiler stops at the bound, the pool
        // compiles it with the real limits and answers exactly what a pool-only server does.
        let plays = #"{"fps":1,"motion":{"type":"tween","duration":0.00001,"repeat":99990,"properties":[{"path":"x","from":0,"to":1}]}}"#
        // Over --max-events (100,000) even on the pool: the same 422 either way.
        let tooMany = #"{"fps":1,"motion":{"type":"tween","duration":0.00001,"repeat":200000,"properties":[{"path":"x","from":0,"to":1}]}}"#
        for json in [plays, tooMany] {
            let a = try post(server, "/v1/timelines", json, headers: [("X-Request-Id", "same-id")])
            let b = try post(pooled, "/v1/timelines", json, headers: [("X-Request-Id", "same-id")])
            XCTAssertEqual(a.status, b.status)
            XCTAssertEqual(a.body, b.body)
        }
        XCTAssertEqual(try post(server, "/v1/timelines", plays).status, 200)
        XCTAssertEqual(try computations(server, "connection"), 0)
        XCTAssertEqual(try computations(server, "compute"), 3)
    }

    /// Curve segments count toward the inline bound too (`--max-segments`, held to
    /// `--inline-max-samples` on a connection thread): 200 elements × 199 spring segments in a
    /// 1,000-byte document with 400 samples compiled for 0.4 s on a connection thread, and a
    /// few clients sending it held `/healthz` for seconds. It now goes to the pool, with the
    /// same answer.
    func testSpringKeyframesOnManyElementsGoToThePool() throws {
        let server = try startServer()
        let pooled = try startServer(["--inline-max-body-bytes", "0"])
        let zeros = "[" + Array(repeating: "0", count: 200).joined(separator: ",") + "]"
        let keyframes = "[" + (0..<200).map { String($0 % 2) }.joined(separator: ",") + "]"
        let json = #"{"fps":1,"target":{"i":\#(zeros)},"window":{"start":0,"end":1},"output":{"events":false,"final":false},"motion":{"type":"spring","response":0.3,"dampingRatio":0.5,"properties":[{"path":"i.*","keyframes":\#(keyframes)}]}}"#
        XCTAssertLessThanOrEqual(json.utf8.count, 1024)
        let a = try post(server, "/v1/timelines", json, headers: [("X-Request-Id", "same-id")])
        let b = try post(pooled, "/v1/timelines", json, headers: [("X-Request-Id", "same-id")])
        XCTAssertEqual(a.status, 200, a.text)
        XCTAssertEqual(a.body, b.body)
        XCTAssertEqual(try a.json()["frameCount"], 2)
        XCTAssertEqual(try computations(server, "connection"), 0)
        XCTAssertEqual(try computations(server, "compute"), 1)
    }

    func testTheAnswerIsTheSameInlineAndOnThePool() throws {
        let inline = try startServer()
        let pooled = try startServer(["--inline-max-body-bytes", "0"])
        for (json, accept) in [(document(seconds: 1), "identity"), (document(seconds: 2), "gzip"),
                               (#"{"fps":10,"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1e400}]}}"#, "identity")] {
            let headers = [("Accept-Encoding", accept), ("X-Request-Id", "same-id")]
            let a = try post(inline, "/v1/timelines", json, headers: headers)
            let b = try post(pooled, "/v1/timelines", json, headers: headers)
            XCTAssertEqual(a.status, b.status, json)
            XCTAssertEqual(a.body, b.body, json)
            for name in ["Content-Type", "ETag", "Content-Encoding", "Vary", "X-Request-Id"] {
                XCTAssertEqual(a.header(name), b.header(name), "\(name) for \(json)")
            }
        }
        XCTAssertEqual(try computations(inline, "compute"), 0)
        XCTAssertEqual(try computations(pooled, "connection"), 0)
        XCTAssertEqual(try computations(pooled, "compute"), 3)
    }

    func testInlineSampleBoundIsConfigurable() throws {
        let server = try startServer(["--inline-max-samples", "60"])
        XCTAssertEqual(try post(server, "/v1/timelines", document(seconds: 1)).status, 200)  // 61 samples
        XCTAssertEqual(try computations(server, "connection"), 0)
        XCTAssertEqual(try computations(server, "compute"), 1)
    }

    /// A request head with one header of `bytes` bytes.
    private func head(_ server: TestServer, headerBytes: Int) throws -> Int {
        let client = try server.client(readTimeout: 5)
        defer { client.close() }
        let value = String(repeating: "a", count: headerBytes)
        try client.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: \(value)\r\n\r\n".utf8))
        return try client.readResponse().status
    }

    func testTheConnectionMemoryBoundsTheRequestHead() throws {
        // The documented default: heads of up to 6 KiB are read, 16 KiB ones refused.
        let server = try startServer()
        XCTAssertEqual(try head(server, headerBytes: 6 * 1024), 200)
        XCTAssertEqual(try head(server, headerBytes: 16 * 1024), 431)
        // 200 query parameters (under the 256 accepted) still fit the default pool.
        let some = (0..<200).map { "a\($0)=1" }.joined(separator: "&")
        try assertProblem(get(server, "/healthz?\(some)"), status: 400)
        // A query that would exhaust the connection memory is refused at once (414), not left
        // to libmicrohttpd, which would answer nothing until the header timeout.
        let long = (0..<100).map { "a\($0)=" + String(repeating: "v", count: 100) }.joined(separator: "&")
        let started = Date()
        let refused = try get(server, "/healthz?\(long)")
        try assertProblem(refused, status: 414, type: "/problems/uri-too-long")
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        let larger = try startServer(["--connection-memory", "65536"])
        XCTAssertEqual(try get(larger, "/healthz?\(long)").status, 400, "fits 64 KiB: read, and refused as unknown parameters")
        XCTAssertEqual(try head(larger, headerBytes: 16 * 1024), 200)
        XCTAssertEqual(try head(larger, headerBytes: 64 * 1024), 431)
    }

    // MARK: - Springs that take many checks to settle

    /// Springs oscillating at 1,000 Hz (ωd · 1 ms = 2π) look still at every millisecond of
    /// the rest grid, so their rest time is found only by checking each: with `properties`
    /// of them, 0.4 s a spring, 200 of them held a thread 78 s (release).
    private func aliasingSprings(_ count: Int, extra: String = "") -> String {
        let omega = 2 * Double.pi * 1000, decay = 12.0 / 3000
        let properties = (0..<count).map { #"{"path":"x\#($0)","from":0,"to":0,"velocity":\#(1 + Double($0) * 1e-3)}"# }
        return #"{"fps":1,"window":{"start":0,"end":1},"target":{},\#(extra)"output":{"events":false,"final":false},"motion":{"type":"spring","stiffness":\#(omega * omega + decay * decay),"damping":\#(2 * decay),"mass":1,"restDelta":\#(exp(-12) / omega),"restSpeed":1e6,"properties":[\#(properties.joined(separator: ","))]}}"#
    }

    /// Every spring a request settles draws on one budget of grid checks: such springs are a
    /// 422 naming the spring, from the pool (the connection thread gives up after its own
    /// small budget), and so are their easings, a retarget to them and the `/v1/springs`
    /// fits that would need them; a usual spring is still answered on the connection thread.
    func testSpringsThatNeedMillionsOfRestChecksAreRefused() throws {
        let server = try startServer()
        let usual = #"{"fps":60,"target":{"x":0},"motion":{"type":"spring","response":0.5,"dampingRatio":0.3,"properties":[{"path":"x","to":100}]}}"#
        XCTAssertEqual(try post(server, "/v1/timelines", usual).status, 200)
        XCTAssertEqual(try computations(server, "connection"), 1)

        for count in [1, 200] {
            let body = try assertProblem(post(server, "/v1/timelines", aliasingSprings(count)), status: 422)
            let entries = problemEntries(body)
            XCTAssertEqual(entries.first?.pointer, "/motion", body.description)
            XCTAssertTrue(entries.first?.message.contains("checks of the 1 ms rest grid one request may spend") ?? false, body.description)
        }
        // Tried on the connection thread, given up there, refused on the pool.
        XCTAssertEqual(try computations(server, "connection"), 1)
        XCTAssertEqual(try computations(server, "compute"), 2)

        // The same spring as an easing, settled while the document is decoded.
        let omega = 2 * Double.pi * 1000, decay = 0.003
        let easing = #"{"type":"spring","stiffness":\#(omega * omega + decay * decay),"damping":\#(2 * decay),"mass":1,"initialVelocity":1e9,"restSpeed":1e15,"restDelta":0.001}"#
        let eased = try assertProblem(post(server, "/v1/timelines", #"{"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":\#(easing),"properties":[{"path":"x","to":1}]}}"#), status: 422)
        XCTAssertTrue(problemEntries(eased).first?.message.contains("rest grid") ?? false, eased.description)

        // A retarget to such a spring, under the session's lock: refused, the session unchanged.
        let leaves = (0..<40).map { "\"a\($0)\":0" }.joined(separator: ",")
        let created = try post(server, "/v1/sessions?speed=1", #"{"fps":1,"target":{"p":{\#(leaves)}},"motion":{"type":"tween","duration":10000,"properties":[{"path":"p","to":{\#(leaves.replacingOccurrences(of: ":0", with: ":1"))}}]}}"#)
        XCTAssertEqual(created.status, 201, created.text)
        let id = try XCTUnwrap(try created.json()["id"]?.string)
        let targets = (0..<40).map { "\"a\($0)\":\(0.005 + Double($0) * 1e-7)" }.joined(separator: ",")
        let slow = 8.2 / 8000
        let retarget = try assertProblem(post(server, "/v1/sessions/\(id)/retarget", #"{"path":"p","to":{\#(targets)},"stiffness":\#(omega * omega + slow * slow),"damping":\#(2 * slow),"mass":1}"#), status: 422)
        XCTAssertTrue(problemEntries(retarget).first?.message.contains("rest grid") ?? false, retarget.description)
        let state = try get(server, "/v1/sessions/\(id)")
        XCTAssertEqual(state.status, 200)
        XCTAssertEqual(try state.json()["retargets"]?.array?.count, 0, state.text)
        try assertHealthy(server)
    }

    /// A batch charges the reductions that fail too: 100 documents whose reduction each
    /// gives up after up to 1,000,000 curve evaluations share the batch's 5,000,000, and the
    /// later ones are refused for what is left (each was charged nothing, 7.2 s of a thread).
    func testABatchChargesTheReductionsThatFail() throws {
        let server = try startServer()
        let document = #"{"fps":1,"target":{"x":0},"output":{"simplify":{"tolerance":1e-12},"events":false,"final":false},"motion":{"type":"tween","duration":19.9,"easing":{"type":"elastic.inOut","period":0.0001},"properties":[{"path":"x","to":1}]}}"#
        let alone = try assertProblem(post(server, "/v1/timelines", document), status: 422)
        XCTAssertEqual(problemEntries(alone).first?.pointer, "/output/simplify/tolerance")
        let response = try post(server, "/v1/timelines/batch", "{\"documents\":[\(Array(repeating: document, count: 100).joined(separator: ","))]}")
        XCTAssertEqual(response.status, 200, response.text)
        let results = try XCTUnwrap(try response.json()["results"]?.array)
        XCTAssertEqual(results.count, 100)
        XCTAssertTrue(results.allSatisfy { $0["status"]?.int == 422 })
        let leftOver = results.filter {
            let message = $0["errors"]?[0]?["message"]?.string ?? ""
            return message.contains("what is left of its batch's 5000000") || message.contains("its batch's 5000000 curve evaluations for reductions were spent")
        }
        XCTAssertGreaterThan(leftOver.count, 50, results.prefix(12).map(\.description).joined(separator: "\n"))
    }
}
