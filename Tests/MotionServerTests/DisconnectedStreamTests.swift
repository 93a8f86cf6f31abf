import Foundation
import Glibc
import MotionEngine
@testable import MotionHTTP
import XCTest

/// Streams and session watchers whose clients go away are finished, whatever state they are
/// in: the `motion_open_streams` gauge returns to 0 within a bound and the server lets go of
/// their connections (docs/reliability.md, "Streams").
final class DisconnectedStreamTests: ServerTestCase {
    /// 600 s at 30 fps: never ends during a test.
    private static let long = #"{"fps":30,"motion":{"type":"tween","duration":600,"properties":[{"path":"x","from":0,"to":100}]}}"#

    private func openStreams(_ server: TestServer) throws -> Double { try metric(server, "motion_open_streams") }

    /// Polls `value` until it is `expected` or `seconds` have passed; returns the last value and the time taken.
    private func wait(seconds: Double, for expected: Double, _ value: () throws -> Double) rethrows -> (value: Double, took: Double) {
        let start = monotonicSeconds()
        var last = try value()
        while last != expected, monotonicSeconds() - start < seconds {
            usleep(20_000)
            last = try value()
        }
        return (last, monotonicSeconds() - start)
    }

    /// Descriptors the server process holds (its sockets among them).
    private func openDescriptors(_ server: TestServer) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.pid)/fd").count) ?? -1
    }

    /// What each descriptor of the server is (`socket:[inode]`, `anon_inode:[eventpoll]`, a path).
    private func describeDescriptors(_ server: TestServer) -> [String] {
        let directory = "/proc/\(server.pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(name)")).map { "\(name)->\($0)" }
        }.sorted()
    }

    private func sendStream(_ server: TestServer, speed: String) throws -> RawHTTPClient {
        let client = try server.client()
        try client.sendRequest("POST", "/v1/streams?speed=\(speed)", headers: [("Content-Type", "application/json")], body: Array(Self.long.utf8))
        return client
    }

    private func sendWatch(_ server: TestServer, _ session: String) throws -> RawHTTPClient {
        let client = try server.client()
        try client.sendRequest("GET", "/v1/sessions/\(session)/frames")
        return client
    }

    /// Reads the head and the first line of a stream.
    private func readStart(_ client: RawHTTPClient, file: StaticString = #filePath, line: UInt = #line) throws {
        let head = try client.readResponseHead()
        XCTAssertEqual(head.status, 200, file: file, line: line)
        XCTAssertNotNil(try ChunkedLineReader(client: client).nextLine(), "no first frame", file: file, line: line)
    }

    private func createSession(_ server: TestServer, speed: String) throws -> String {
        let response = try post(server, "/v1/sessions?speed=\(speed)", Self.long)
        XCTAssertEqual(response.status, 201, response.text)
        return try XCTUnwrap(try response.json()["id"]?.string)
    }

    // MARK: - The registry's gauge

    /// The gauge is fed from the registry's count. Two connection threads closing streams at
    /// once once published their counts after releasing the registry's lock, so a thread
    /// preempted in between published an older count after the newest: the gauge stayed at
    /// it with no stream open. The first close's publication is stalled here (as a preemption
    /// would), while the other streams are closed on another thread: the last value published
    /// must be the real count, 0.
    func testTheLastCountPublishedIsTheCurrentOne() {
        /// What the gauge was set to, in order; the next publication can be made to stall.
        final class Gauge: @unchecked Sendable {
            let lock = NSLock()
            var values: [Int] = []
            var stallNext = false
            let stalled = DispatchSemaphore(value: 0)

            func publish(_ count: Int) {
                let stall = lock.withLock { () -> Bool in
                    defer { stallNext = false }
                    return stallNext
                }
                if stall {
                    stalled.signal()
                    usleep(200_000)
                }
                lock.withLock { values.append(count) }
            }

            var published: [Int] { lock.withLock { values } }
        }
        let gauge = Gauge()
        let registry = StreamRegistry { gauge.publish($0) }
        let streams = (0..<8).map { _ in PacedStream() }
        for stream in streams { XCTAssertTrue(registry.register(stream, limit: 100)) }
        gauge.lock.withLock { gauge.stallNext = true }
        let first = streams[0]
        Thread { registry.unregister(first) }.start()
        gauge.stalled.wait()
        for stream in streams.dropFirst() { registry.unregister(stream) }
        // The first unregistration may still be publishing (before the fix it was).
        let deadline = monotonicSeconds() + 5
        while gauge.published.count < 16, monotonicSeconds() < deadline { usleep(10_000) }
        XCTAssertEqual(registry.count, 0)
        let seen = gauge.published
        XCTAssertEqual(seen.count, 16, "\(seen)")
        XCTAssertEqual(seen.last, 0, "the gauge was left at \(seen.last ?? -1) with no stream open; published \(seen)")
        XCTAssertEqual(Array(seen.suffix(8)), [7, 6, 5, 4, 3, 2, 1, 0], "published out of order")
    }

    // MARK: - Against the server

    /// `/v1/streams` requests waiting for the compute pool whose clients left (half reset,
    /// half closed) before a compute thread took them: they are not computed at all
    /// (`motion_computations_skipped_total`), no stream is made, and they hold no
    /// `--max-streams` place.
    func testQueuedRequestsWhoseClientsLeftAreNotComputed() throws {
        let queued = 8
        // Every computation on the pool: a small stream would otherwise start on the
        // connection thread at once.
        let server = try startServer(["--compute-threads", "1", "--max-streams", "\(queued)", "--threads", "2",
                                      "--inline-max-body-bytes", "0"])
        let onPool = "motion_computations_total{thread=\"compute\"}"
        let skipped = "motion_computations_skipped_total"
        // One heavy computation occupies the only compute thread.
        let blocker = try server.client(readTimeout: 120)
        try blocker.sendRequest("POST", "/v1/timelines", headers: [("Content-Type", "application/json")], body: Array(Self.heavy.utf8))
        XCTAssertEqual(try wait(seconds: 10, for: 1) { try metric(server, onPool) }.value, 1, "the heavy computation did not start")

        let clients = try (0..<queued).map { _ in try sendStream(server, speed: "1") }
        usleep(300_000)
        // Still computing the heavy document: none of the streams has been computed yet.
        XCTAssertEqual(try metric(server, onPool), 1, "the heavy computation ended too soon for this test")
        XCTAssertEqual(try openStreams(server), 0)
        for (index, client) in clients.enumerated() {
            if index % 2 == 0 { client.closeAbruptly() } else { client.close() }
        }

        // The blocker's client stayed and is answered; the others are skipped, not computed.
        XCTAssertEqual(try blocker.readResponse().status, 200)
        XCTAssertEqual(try wait(seconds: 30, for: Double(queued)) { try metric(server, skipped) }.value, Double(queued),
                       "the requests of clients that left were not skipped")
        XCTAssertEqual(try metric(server, onPool), 1, "a request whose client had left was computed")
        XCTAssertEqual(try openStreams(server), 0)
        // They hold no stream place: the limit's worth of new streams is served.
        let fresh = try (0..<queued).map { _ in try sendStream(server, speed: "1") }
        for client in fresh {
            XCTAssertEqual(try client.readResponseHead().status, 200)
            client.close()
        }
        XCTAssertEqual(try metric(server, skipped), Double(queued), "a client that stayed was skipped")
        assertHealthy(server)
    }

    /// A computation running on the pool whose client leaves is stopped within about the
    /// watch interval (50 ms) and one element's compiling (or one target of a property's
    /// chain of spring keyframes), not run to its end
    /// (`motion_computations_cancelled_total`); the connection gets no answer and the pool
    /// thread is free for the next request.
    func testARunningComputationWhoseClientLeftIsStopped() throws {
        let server = try startServer(["--compute-threads", "1", "--inline-max-body-bytes", "0", "--max-segments", "100000000"])
        let onPool = "motion_computations_total{thread=\"compute\"}"
        let cancelled = "motion_computations_cancelled_total"
        let batch = "{\"documents\":[\(Self.longToCompile),\(Self.longToCompile)]}"
        for (index, leave) in [("reset", "/v1/timelines", Self.longToCompile, { (client: RawHTTPClient) in client.closeAbruptly() }),
                               ("close", "/v1/timelines", Self.longToCompile, { (client: RawHTTPClient) in client.close() }),
                               ("reset of a batch", "/v1/timelines/batch", batch, { (client: RawHTTPClient) in client.closeAbruptly() }),
                               ("reset within one property", "/v1/timelines", Self.onePropertyToCompile,
                                { (client: RawHTTPClient) in client.closeAbruptly() })].enumerated() {
            let client = try server.client()
            try client.sendRequest("POST", leave.1, headers: [("Content-Type", "application/json")], body: Array(leave.2.utf8))
            XCTAssertEqual(try wait(seconds: 10, for: Double(index + 1)) { try metric(server, onPool) }.value, Double(index + 1),
                           "the computation did not start")
            usleep(200_000)
            XCTAssertEqual(try metric(server, cancelled), Double(index), "\(leave.0): cancelled before the client left")
            leave.3(client)
            // Compiling it whole takes about 6 s (debug build); stopped, well under one.
            let stopped = try wait(seconds: 5, for: Double(index + 1)) { try metric(server, cancelled) }
            XCTAssertEqual(stopped.value, Double(index + 1), "\(leave.0): the computation of a client that left was not stopped")
            print("\(leave.0): stopped \(String(format: "%.2f", stopped.took)) s after the client left")
            XCTAssertLessThan(stopped.took, 3)
        }
        XCTAssertEqual(try metric(server, "motion_computations_skipped_total"), 0)
        // The pool is free: a computation on it is answered, and not cancelled.
        let answer = try post(server, "/v1/timelines", #"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#)
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(try metric(server, onPool), 5)
        XCTAssertEqual(try metric(server, cancelled), 4)
        assertHealthy(server)
    }

    /// Spring keyframes staggered over 1,000 elements: each element is charged as it is
    /// built, about 6 s of compiling in all (debug build), 13 KB.
    static let longToCompile: String = {
        let items = Array(repeating: #"{"o":0}"#, count: 1_000).joined(separator: ",")
        let keyframes = (0..<300).map { String($0 % 2) }.joined(separator: ",")
        return #"{"fps":1,"target":{"items":[\#(items)]},"motion":{"type":"spring","response":0.3,"dampingRatio":0.5,"stagger":{"each":0.001},"properties":[{"path":"items.*.o","keyframes":[\#(keyframes)]}]}}"#
    }()

    /// The server's gzip looks for a cancellation every 256 KB it writes: a cancelled answer
    /// is not compressed (nil), and not sent.
    func testCompressionStopsWhenCancelled() {
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<(2 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }  // 2 MiB, incompressible
        let whole = Compression.compress(noise, .gzip)
        XCTAssertGreaterThan(whole?.count ?? 0, 2 << 20)
        let cancelled = Cancellation()
        cancelled.cancel()
        XCTAssertNil(Cancellation.withCurrent(cancelled) { Compression.compress(noise, .gzip) })
        XCTAssertTrue(cancelled.stoppedWork)
        // Below 256 KB of output there is no look.
        let small = Array(noise.prefix(100_000))
        let other = Cancellation()
        other.cancel()
        XCTAssertNotNil(Cancellation.withCurrent(other) { Compression.compress(small, .gzip) })
        XCTAssertFalse(other.stoppedWork)
    }

    /// One property: an array of 200 numbers through 300 spring keyframes, charged once and
    /// then built as one chain, which looks for a cancellation before each target: about a
    /// second of compiling (debug build), 122 KB.
    static let onePropertyToCompile: String = {
        let keyframes = (0..<300).map { "[" + Array(repeating: String($0 % 2), count: 200).joined(separator: ",") + "]" }
        let zeros = Array(repeating: "0", count: 200).joined(separator: ",")
        return #"{"fps":1,"target":{"a":[\#(zeros)]},"motion":{"type":"spring","response":0.3,"dampingRatio":0.5,"properties":[{"path":"a","keyframes":[\#(keyframes.joined(separator: ","))]}]}}"#
    }()

    /// A `/v1/streams` request whose client resets while its stream is being made on the
    /// pool: libmicrohttpd 0.9.75 keeps a suspended connection's last event-loop state, so on
    /// resuming it reads before asking for the answer, finds the reset and closes the
    /// connection without the final call. The stream, already in the registry, must be closed
    /// then, or it would count against `--max-streams` and the gauge for good.
    ///
    /// The client leaves at a fraction of the time the stream takes to make (measured first,
    /// so the test holds on any build): early on, the computation is stopped at its one
    /// charge and no stream is made; later, in the build that follows the charge, the stream
    /// is made after the client left. Every attempt must leave the only place free, and at
    /// least one must have made its stream.
    func testAStreamWhoseClientResetWhileItWasMadeIsFreed() throws {
        let server = try startServer(["--compute-threads", "1", "--max-streams", "1", "--inline-max-body-bytes", "0"])
        let onPool = "motion_computations_total{thread=\"compute\"}"
        // How long the stream takes to make, from the start of its computation to its head:
        // the shortest of three (the first, cold, ran up to a tenth longer, and leaving at
        // its 98 % could still be before the charge).
        var making = Double.infinity
        for run in 1...3 {
            let timed = try server.client()
            try timed.sendRequest("POST", "/v1/streams?speed=1", headers: [("Content-Type", "application/json")],
                                  body: Array(Self.slowToCompile.utf8))
            XCTAssertEqual(try wait(seconds: 10, for: Double(run)) { try metric(server, onPool) }.value, Double(run),
                           "the computation did not start")
            let began = monotonicSeconds()
            XCTAssertEqual(try timed.readResponseHead().status, 200)
            making = min(making, monotonicSeconds() - began)
            timed.close()
            XCTAssertEqual(try wait(seconds: 10, for: 0) { try openStreams(server) }.value, 0)
        }
        var made = 0
        // Where the charge falls moves from run to run by more than the last few percent, and
        // the pool's watch notices a client gone up to 50 ms (an eighth of the making) after
        // it left: the late fractions are many, one point apart, and when none of them made
        // its stream (one in three runs made a single one), up to three more rounds of them
        // follow, until one does.
        let late = Array(stride(from: 0.85, through: 0.995, by: 0.01))
        let firstRound = 2 + late.count
        for (attempt, fraction) in ([0.6, 0.8] + late + late + late + late).enumerated() {
            if attempt >= firstRound, made > 0 { break }
            let cancelledBefore = try metric(server, "motion_computations_cancelled_total")
            let computedBefore = try metric(server, onPool)
            let client = try server.client()
            try client.sendRequest("POST", "/v1/streams?speed=1", headers: [("Content-Type", "application/json")],
                                   body: Array(Self.slowToCompile.utf8))
            XCTAssertEqual(try wait(seconds: 10, for: computedBefore + 1) { try metric(server, onPool) }.value, computedBefore + 1,
                           "the computation did not start")
            usleep(useconds_t(making * fraction * 1e6))
            client.closeAbruptly()
            XCTAssertEqual(try metric(server, "motion_computations_skipped_total"), 0, "taken before the client left")
            // Stopped, or made and found abandoned: either way a new stream takes the only
            // place (503 while an abandoned one holds it).
            let started = monotonicSeconds()
            var status = 0
            repeat {
                let fresh = try sendStream(server, speed: "1")
                status = try fresh.readResponseHead().status
                fresh.close()
                if status != 200 { usleep(50_000) }
            } while status != 200 && monotonicSeconds() - started < 60
            XCTAssertEqual(status, 200, "the stream of a client that left while it was made holds the only place")
            XCTAssertEqual(try wait(seconds: 3, for: 0) { try openStreams(server) }.value, 0)
            let stopped = try metric(server, "motion_computations_cancelled_total") > cancelledBefore
            if !stopped { made += 1 }
            print("left at \(Int(fraction * 100)) % of \(String(format: "%.2f", making)) s: \(stopped ? "stopped" : "made"), place free within \(String(format: "%.2f", monotonicSeconds() - started)) s")
        }
        XCTAssertGreaterThan(made, 0, "no attempt made its stream after its client left")
        assertHealthy(server)
    }

    /// A stream of an array of 450 numbers through 1,000 tween keyframes: about 0.45 s from
    /// the start of its computation to its head (debug build; 0.8 s before keyframes were
    /// decoded and built without a `String` per number), 903 KB. One property: charged once,
    /// early, then built whole (tween keyframes have no look of their own), so a cancellation
    /// after the charge does not stop it (`Cancellation`) and the stream is made. (Spring
    /// keyframes, used here before, now look for a cancellation before each target.)
    static let slowToCompile: String = {
        let keyframes = (0..<1_000).map { "[" + Array(repeating: String($0 % 2), count: 450).joined(separator: ",") + "]" }
        let zeros = Array(repeating: "0", count: 450).joined(separator: ",")
        return #"{"fps":1,"target":{"a":[\#(zeros)]},"motion":{"type":"tween","duration":1,"properties":[{"path":"a","keyframes":[\#(keyframes.joined(separator: ","))]}]}}"#
    }()

    /// About a second of CPU on the only compute thread (debug build).
    static let heavy: String = {
        let properties = (0..<2000).map { #"{"path":"p\#($0)","from":0,"to":\#($0)}"# }.joined(separator: ",")
        return #"{"fps":100,"motion":{"type":"tween","duration":9.99,"easing":"ease-in-out","properties":[\#(properties)]}}"#
    }()

    /// Streams with nothing due for a long time (a tiny speed, a slow session, a paused one)
    /// sit suspended, where libmicrohttpd does not see their sockets: each is still woken
    /// every `PacedStream.heartbeatNanos` (250 ms) and finished once its client is gone.
    func testStreamsWithNothingDueAreFinishedSoonAfterTheirClientsGo() throws {
        let server = try startServer()
        let slowSession = try createSession(server, speed: "0.001")
        let pausedSession = try createSession(server, speed: "1")
        XCTAssertEqual(try post(server, "/v1/sessions/\(pausedSession)/commands", #"{"command":"pause"}"#).status, 200)
        // The next frame of each is 33 s away (30 fps at speed 0.001), or never (paused).
        var clients: [RawHTTPClient] = []
        for _ in 0..<10 { clients.append(try sendStream(server, speed: "0.001")) }
        for _ in 0..<10 { clients.append(try sendWatch(server, slowSession)) }
        for _ in 0..<10 { clients.append(try sendWatch(server, pausedSession)) }
        for client in clients { try readStart(client) }
        XCTAssertEqual(try openStreams(server), 30)
        usleep(300_000)  // parked, past their first heartbeat
        let descriptors = openDescriptors(server)
        let before = describeDescriptors(server)

        // Half reset, half closed normally.
        for (index, client) in clients.enumerated() {
            if index % 2 == 0 { client.closeAbruptly() } else { client.close() }
        }
        let (open, took) = try wait(seconds: 3, for: 0) { try openStreams(server) }
        XCTAssertEqual(open, 0, "streams with nothing due still open 3 s after their clients left")
        let left = wait(seconds: 3, for: Double(descriptors - 30)) { Double(openDescriptors(server)) }.value
        XCTAssertLessThanOrEqual(left, Double(descriptors - 30 + 2),
                                 "the connections are still held: before \(before), after \(describeDescriptors(server))")
        XCTAssertEqual(try get(server, "/v1/sessions/\(slowSession)").json()["watchers"]?.int, 0)
        XCTAssertEqual(try get(server, "/v1/sessions/\(pausedSession)").json()["watchers"]?.int, 0)
        print("idle streams closed \(String(format: "%.2f", took)) s after their clients left")
        assertHealthy(server)
    }

    /// libmicrohttpd 0.9.75 keeps a connection whose response ended with an error (a stream
    /// whose client left) in its lists until its thread next walks its idle connections, a
    /// walk that stops at the first connection still open, oldest first
    /// (`StreamBinding.closeSoon` in HTTPDaemon.swift). One idle keep-alive connection older
    /// than the streams, on the same thread, held their sockets for its own whole timeout (29 s
    /// of the default 30 s), and they counted against the per-address limit meanwhile: the
    /// client could not open its streams again. The test above met this by chance (about one
    /// run in twenty under load, probably when one of its polls of the gauge was still open as the
    /// last streams closed); this one failed on every run of the old code.
    func testAnIdleKeepAliveConnectionDoesNotHoldTheStreamsWhoseClientsLeft() throws {
        let limit = 14
        let server = try startServer(["--threads", "1", "--max-connections-per-address", "\(limit)"])
        // Older than the streams, open and idle throughout, on the only connection thread.
        let idle = try server.client()
        defer { idle.close() }
        XCTAssertEqual(try idle.request("GET", "/healthz").status, 200)
        let baseline = openDescriptors(server)
        let clients = try (0..<10).map { _ in try sendStream(server, speed: "0.001") }
        for client in clients { try readStart(client) }
        for (index, client) in clients.enumerated() {
            if index % 2 == 0 { client.closeAbruptly() } else { client.close() }
        }
        XCTAssertEqual(try wait(seconds: 3, for: 0) { try openStreams(server) }.value, 0)
        // Nothing connects meanwhile: only the server's own timers can close the sockets.
        let (left, took) = wait(seconds: 5, for: Double(baseline)) { Double(openDescriptors(server)) }
        XCTAssertEqual(left, Double(baseline), "the streams' connections are still held: \(describeDescriptors(server))")
        XCTAssertLessThan(took, 3, "the streams' connections were held \(took) s")
        // Their places under the per-address limit are free again: all but the idle one.
        var served = 0
        let again = try (0..<(limit - 1)).map { _ in try server.client() }
        for client in again {
            if (try? client.request("GET", "/healthz"))?.status == 200 { served += 1 }
        }
        for client in again { client.close() }
        XCTAssertEqual(served, limit - 1, "connections refused under the per-address limit")
        print("streams' connections let go \(String(format: "%.2f", took)) s after the streams closed")
        // The server takes a moment to see those closes; until then the limit is full.
        _ = wait(seconds: 5, for: Double(baseline)) { Double(openDescriptors(server)) }
        assertHealthy(server)
    }

    /// The abuse suite's disconnect storm, smaller, in several orders at once: streams and
    /// watchers reset right after their request (being computed or starting), after their
    /// first frame, and while their session is paused or being deleted.
    func testADisconnectStormLeavesNoStreamOpen() throws {
        let server = try startServer(["--threads", "2", "--max-connections-per-address", "0"])
        let baseline = openDescriptors(server)
        for round in 0..<2 {
            let running = try createSession(server, speed: "1")
            let paused = try createSession(server, speed: "1")
            let deleted = try createSession(server, speed: "1")
            var early: [RawHTTPClient] = []
            var started: [RawHTTPClient] = []
            for index in 0..<60 {
                let client = try sendStream(server, speed: "1")
                if index % 3 == 0 { early.append(client) } else { started.append(client) }
            }
            for session in [running, paused, deleted] {
                for _ in 0..<20 { started.append(try sendWatch(server, session)) }
            }
            for client in early { client.closeAbruptly() }
            for client in started { try readStart(client) }
            XCTAssertEqual(try post(server, "/v1/sessions/\(paused)/commands", #"{"command":"pause"}"#).status, 200)
            // The deletion goes in while the watchers are reset; its answer is read after.
            let deleting = try server.client()
            try deleting.sendRequest("DELETE", "/v1/sessions/\(deleted)")
            for client in started { client.closeAbruptly() }
            XCTAssertEqual(try deleting.readResponse().status, 204)
            deleting.close()
            let (open, took) = try wait(seconds: 5, for: 0) { try openStreams(server) }
            XCTAssertEqual(open, 0, "round \(round + 1): streams still open 5 s after the storm")
            print("storm \(round + 1): streams closed \(String(format: "%.2f", took)) s after the resets")
            _ = try send(server, "DELETE", "/v1/sessions/\(running)")
            _ = try send(server, "DELETE", "/v1/sessions/\(paused)")
        }
        let descriptors = wait(seconds: 3, for: Double(baseline)) { Double(openDescriptors(server)) }.value
        XCTAssertLessThanOrEqual(descriptors, Double(baseline + 2), "connections still held after the storms")
        assertHealthy(server)
    }
}
