import Foundation
@testable import MotionHTTP
import XCTest

/// Direct writes (`PacedStream.wake()`): while the connection is suspended, what comes due
/// is written by the waking thread straight to the socket as HTTP/1.1 chunks; everything else
/// goes back to libmicrohttpd by resuming the connection. These drive one stream by hand
/// against a connection whose socket takes what the test says.
final class DirectWriteTests: XCTestCase {
    /// A suspended connection that records what is written and how it is resumed.
    private final class ScriptedConnection: SuspendableConnection, @unchecked Sendable {
        let allowsDirectWrites: Bool
        /// What each `send` takes: nil takes everything; else at most this many bytes, or gone.
        var takes: [DirectSend?] = []
        private(set) var written: [UInt8] = []
        private(set) var sends = 0
        private(set) var resumes = 0
        private(set) var suspends = 0
        var peerGone = false

        init(direct: Bool = true) { allowsDirectWrites = direct }

        func suspend() { suspends += 1 }
        func resume() { resumes += 1 }
        var isPeerGone: Bool { peerGone }

        func send(_ bytes: UnsafeRawBufferPointer) -> DirectSend {
            sends += 1
            let take = takes.isEmpty ? nil : takes.removeFirst()
            switch take {
            case .gone?: return .gone
            case .sent(let most)?:
                let count = min(most, bytes.count)
                written += bytes.prefix(count)
                return .sent(count)
            case nil:
                written += bytes
                return .sent(bytes.count)
            }
        }
    }

    /// A stream that releases the lines it is given, one batch a wake, then ends.
    private final class LineStream: PacedStream, @unchecked Sendable {
        var batches: [[String]]
        let endLine: String
        init(_ batches: [[String]], end: String = "end\n") {
            self.batches = batches
            endLine = end
        }
        override func fill(now: UInt64, into bytes: inout [UInt8]) {
            if batches.isEmpty {
                bytes += Array(endLine.utf8)
                ended = true
                return
            }
            for line in batches.removeFirst() { bytes += Array(line.utf8) }
            framesSent += 1
            quietUntil = now + 3_600_000_000_000 // nothing more until a wake
        }
        /// Far enough ahead that the pacer never wakes it during a test (the tests wake it).
        override func nextWake(now: UInt64) -> UInt64? { now + 3_600_000_000_000 }
    }

    private let pacer = StreamPacer()

    /// The pacer holds the streams it was asked to wake (and they hold it): let them go.
    override func tearDown() {
        pacer.stop()
        super.tearDown()
    }

    /// Parks `stream` the way libmicrohttpd does: a read with nothing due suspends it.
    private func park(_ stream: PacedStream, _ connection: ScriptedConnection) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var result = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
        // The first read fills (the first batch); keep reading until it parks.
        while case .bytes = result { result = buffer.withUnsafeMutableBytes { stream.read(into: $0) } }
        guard case .suspended = result else { return XCTFail("expected the stream to park, got \(result)") }
        XCTAssertEqual(connection.suspends, 1)
    }

    private func readAll(_ stream: PacedStream) -> (bytes: [UInt8], last: PacedStream.ReadResult) {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let result = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
            if case .bytes(let count) = result { out += buffer.prefix(count) } else { return (out, result) }
        }
    }

    /// Decodes chunked bytes; fails on anything malformed. Returns the chunks' contents.
    private func dechunk(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> [String] {
        var chunks: [String] = []
        var i = 0
        while i < bytes.count {
            guard let crlf = (i..<bytes.count - 1).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
                  let size = Int(String(decoding: bytes[i..<crlf], as: UTF8.self), radix: 16) else {
                XCTFail("no chunk size at \(i)", file: file, line: line)
                return chunks
            }
            let start = crlf + 2
            guard start + size + 2 <= bytes.count, bytes[start + size] == 13, bytes[start + size + 1] == 10 else {
                XCTFail("chunk of \(size) bytes at \(i) is not followed by CRLF", file: file, line: line)
                return chunks
            }
            chunks.append(String(decoding: bytes[start..<start + size], as: UTF8.self))
            i = start + size + 2
        }
        return chunks
    }

    /// A connection that gives the stream its socket (as libmicrohttpd's does): frames are
    /// then sent on the socket itself, without going through the connection object.
    private final class SocketConnection: SuspendableConnection, @unchecked Sendable {
        let socket: Int32
        private(set) var sends = 0
        private(set) var resumes = 0
        init(socket: Int32) { self.socket = socket }
        let allowsDirectWrites = true
        func suspend() {}
        func resume() { resumes += 1 }
        var isPeerGone: Bool { false }
        var directSocket: Int32? { socket }
        func send(_ bytes: UnsafeRawBufferPointer) -> DirectSend {
            sends += 1
            return DirectSocket.send(socket, bytes)
        }
    }

    func testAStreamWithTheConnectionsSocketSendsOnItAndSeesThePeerGo() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        defer { close(fds[0]) }
        let stream = LineStream([["a\n"], ["bb\n"], ["ccc\n"], ["dddd\n"]])
        let connection = SocketConnection(socket: fds[0])
        stream.attach(connection, pacer: pacer)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var result = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
        while case .bytes = result { result = buffer.withUnsafeMutableBytes { stream.read(into: $0) } }
        stream.wake()
        stream.wake()
        XCTAssertEqual(connection.sends, 0, "sent on the socket, not through the connection object")
        XCTAssertEqual(connection.resumes, 0)
        let count = recv(fds[1], &buffer, buffer.count, Int32(MSG_DONTWAIT))
        XCTAssertEqual(dechunk(Array(buffer.prefix(max(count, 0)))), ["bb\n", "ccc\n"])
        // The peer closes: the next frame's send fails, and the stream hands the connection
        // back to be aborted.
        close(fds[1])
        stream.wake()
        XCTAssertEqual(connection.resumes, 1)
        XCTAssertEqual(buffer.withUnsafeMutableBytes { stream.read(into: $0) }, .abort)
    }

    func testDueFramesAreWrittenAsChunksWithoutResuming() {
        let stream = LineStream([["a\n"], ["bb\n", "ccc\n"], [String(repeating: "x", count: 300) + "\n"]])
        let connection = ScriptedConnection()
        stream.attach(connection, pacer: pacer)
        park(stream, connection)                  // frame "a" went through read
        stream.wake()
        stream.wake()
        XCTAssertEqual(connection.resumes, 0, "frames due at a wake are written without libmicrohttpd")
        XCTAssertEqual(dechunk(connection.written), ["bb\nccc\n", String(repeating: "x", count: 300) + "\n"])
        // The end line is written too; then the stream hands back, and the read ends it (the
        // last chunk is libmicrohttpd's).
        stream.wake()
        XCTAssertEqual(connection.resumes, 1)
        XCTAssertEqual(dechunk(connection.written).last, "end\n")
        XCTAssertEqual(readAll(stream).last, .end)
        XCTAssertEqual(stream.bytesSent, 2 + 7 + 301 + 4)
    }

    /// Outside wakes (a session command wakes every watcher) do not pile up wakes in the
    /// pacer: however often a parked stream is woken, one wake stays filed for it.
    func testOutsideWakesLeaveOneWakeFiled() {
        let stream = LineStream([["a\n"]] + Array(repeating: [], count: 1_000))
        let connection = ScriptedConnection()
        stream.attach(connection, pacer: pacer)
        park(stream, connection)
        for _ in 0..<500 { stream.wake() }
        XCTAssertEqual(connection.resumes, 0)
        XCTAssertEqual(pacer.filedWakes, 1, "one wake filed, not one per outside wake")
    }

    /// A line stream whose next batch is heavy (`dueIsHeavy`) when it is one of `heavy`.
    private final class HeavyLineStream: PacedStream, @unchecked Sendable {
        var batches: [[String]]
        var heavy: Set<Int>
        var index = 0
        init(_ batches: [[String]], heavy: Set<Int>) {
            self.batches = batches
            self.heavy = heavy
        }
        override func fill(now: UInt64, into bytes: inout [UInt8]) {
            guard index < batches.count else {
                bytes += Array("end\n".utf8)
                ended = true
                return
            }
            for line in batches[index] { bytes += Array(line.utf8) }
            index += 1
            quietUntil = now + 3_600_000_000_000
        }
        override func dueIsHeavy(now: UInt64) -> Bool { heavy.contains(index) }
        override func nextWake(now: UInt64) -> UInt64? { now + 3_600_000_000_000 }
    }

    /// What carries many events is left to libmicrohttpd, at the connection threads'
    /// priority, and the pacer goes on; the next light wake writes directly again. Written by
    /// the pacer, 30 sessions crossing an instant of 98,000 events held every paced stream
    /// back 1.7 s each time.
    func testAHeavyWakeIsLeftToLibmicrohttpd() {
        let stream = HeavyLineStream([["a\n"], ["heavy\n"], ["light\n"]], heavy: [1])
        let connection = ScriptedConnection()
        stream.attach(connection, pacer: pacer)
        park(stream, connection)
        stream.wake()
        XCTAssertEqual(connection.resumes, 1, "handed back, not written by the waking thread")
        XCTAssertEqual(connection.sends, 0)
        let (bytes, last) = readAll(stream)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "heavy\n")
        guard case .suspended = last else { return XCTFail("expected the stream to park, got \(last)") }
        stream.wake()
        XCTAssertEqual(connection.resumes, 1)
        XCTAssertEqual(dechunk(connection.written), ["light\n"])
        // The pacer's first pass hands it back the same way.
        let second = HeavyLineStream([["a\n"], ["heavy\n"]], heavy: [1])
        let other = ScriptedConnection()
        second.attach(other, pacer: pacer)
        park(second, other)
        XCTAssertFalse(second.prepareWake(by: pacer))
        XCTAssertEqual(other.resumes, 1)
        XCTAssertEqual(other.sends, 0)
    }

    func testASocketThatTakesNothingHandsTheFrameToLibmicrohttpd() {
        let stream = LineStream([["a\n"], ["slow\n"], ["later\n"]])
        let connection = ScriptedConnection()
        stream.attach(connection, pacer: pacer)
        park(stream, connection)
        connection.takes = [.sent(0)]
        stream.wake()
        XCTAssertEqual(connection.resumes, 1)
        XCTAssertTrue(connection.written.isEmpty)
        // libmicrohttpd reads the frame (it frames it itself), then the stream parks again.
        let (bytes, last) = readAll(stream)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "slow\n")
        guard case .suspended = last else { return XCTFail("expected the stream to park, got \(last)") }
        // The next wake writes directly again.
        stream.wake()
        XCTAssertEqual(dechunk(connection.written), ["later\n"])
    }

    func testAPartlyTakenChunkIsFinishedBeforeTheNextFrame() {
        let stream = LineStream([["a\n"], ["first frame\n"], ["second\n"]])
        let connection = ScriptedConnection()
        stream.attach(connection, pacer: pacer)
        park(stream, connection)
        connection.takes = [.sent(5), .sent(3)]   // 5 bytes, then 3 of the rest, then all
        stream.wake()
        XCTAssertEqual(connection.written.count, 5)
        stream.wake()                             // the retry: 3 more, no new frame yet
        XCTAssertEqual(connection.written.count, 8)
        stream.wake()                             // the rest, then the next frame
        XCTAssertEqual(connection.resumes, 0)
        XCTAssertEqual(dechunk(connection.written), ["first frame\n", "second\n"])
    }

    func testAPartlyTakenChunkThatStallsAbortsTheConnection() {
        let stream = LineStream([["a\n"], ["frame\n"]])
        stream.directStallNanos = 0
        let connection = ScriptedConnection()
        stream.attach(connection, pacer: pacer)
        park(stream, connection)
        connection.takes = [.sent(4), .sent(0)]   // part of the chunk, then nothing
        stream.wake()
        XCTAssertEqual(connection.resumes, 0)
        usleep(1_000)
        stream.wake()
        XCTAssertEqual(connection.resumes, 1)
        XCTAssertEqual(readAll(stream).last, .abort)
    }

    func testAPeerGoneAbortsTheConnection() {
        let stream = LineStream([["a\n"], ["b\n"]])
        let connection = ScriptedConnection()
        stream.attach(connection, pacer: pacer)
        park(stream, connection)
        connection.takes = [.gone]
        stream.wake()
        XCTAssertEqual(connection.resumes, 1)
        XCTAssertEqual(readAll(stream).last, .abort)
    }

    func testWithoutDirectWritesEveryWakeResumes() {
        for (connection, stop) in [(ScriptedConnection(direct: false), false), (ScriptedConnection(), true)] {
            let stream = LineStream([["a\n"], ["b\n"]])
            stream.attach(connection, pacer: pacer)
            if stop { stream.stopDirectWrites() }
            park(stream, connection)
            stream.wake()
            XCTAssertEqual(connection.sends, 0)
            XCTAssertEqual(connection.resumes, 1)
            XCTAssertEqual(String(decoding: readAll(stream).bytes, as: UTF8.self), "b\n")
        }
    }

    // MARK: - The pacer's two passes (`prepareWake`, then `sendPrepared`)

    /// The first pass produces and frames every due frame and sends none; the second sends
    /// them: the same chunks, bytes and counts as one `wake()` each.
    func testTwoPassesSendWhatWakesWould() {
        let streams = (0..<3).map { i in LineStream([["a\n"], ["frame \(i)\n"], ["next \(i)\n"]]) }
        let connections = streams.map { _ in ScriptedConnection() }
        for (stream, connection) in zip(streams, connections) {
            stream.attach(connection, pacer: pacer)
            park(stream, connection)
        }
        XCTAssertEqual(streams.map { $0.prepareWake(by: pacer) }, [true, true, true])
        XCTAssertEqual(connections.map(\.sends), [0, 0, 0], "the first pass sends nothing")
        XCTAssertEqual(streams.map(\.bytesSent), [2, 2, 2], "nor counts anything as sent")
        for stream in streams { stream.sendPrepared(by: pacer) }
        for (i, (stream, connection)) in zip(streams, connections).enumerated() {
            XCTAssertEqual(dechunk(connection.written), ["frame \(i)\n"])
            XCTAssertEqual(stream.bytesSent, 2 + "frame \(i)\n".utf8.count)
            stream.sendPrepared(by: pacer)  // nothing left: no second send
            XCTAssertEqual(connection.sends, 1)
        }
        // The next batch goes the same way; then the end line, and the stream hands back.
        XCTAssertTrue(streams[0].prepareWake(by: pacer))
        streams[0].sendPrepared(by: pacer)
        XCTAssertTrue(streams[0].prepareWake(by: pacer))
        streams[0].sendPrepared(by: pacer)
        XCTAssertEqual(dechunk(connections[0].written), ["frame 0\n", "next 0\n", "end\n"])
        XCTAssertEqual(connections[0].resumes, 1)
        XCTAssertEqual(readAll(streams[0]).last, .end)
        XCTAssertEqual(connections.map(\.resumes), [1, 0, 0])
    }

    /// A wake from another thread between the passes (a session command's) does not write
    /// around the prepared frame: that frame goes first, then what the wake made due.
    func testAWakeBetweenThePassesComesAfterThePreparedFrame() {
        let stream = LineStream([["a\n"], ["prepared\n"], ["echo\n"], ["later\n"]])
        let connection = ScriptedConnection()
        stream.attach(connection, pacer: pacer)
        park(stream, connection)
        XCTAssertTrue(stream.prepareWake(by: pacer))
        stream.wake()
        XCTAssertEqual(connection.sends, 0, "the wake leaves the prepared frame to the second pass")
        stream.sendPrepared(by: pacer)
        XCTAssertEqual(dechunk(connection.written), ["prepared\n", "echo\n"])
        XCTAssertEqual(connection.resumes, 0)
        XCTAssertEqual(stream.bytesSent, 2 + 9 + 5)
    }

    /// Direct writes stopped between the passes (the daemon is closing connections): the
    /// prepared frame is not lost, libmicrohttpd sends it once the connection is resumed.
    func testDirectWritesStoppedBetweenThePassesLeaveThePreparedFrameToLibmicrohttpd() {
        let stream = LineStream([["a\n"], ["prepared\n"], ["later\n"]])
        let connection = ScriptedConnection()
        stream.attach(connection, pacer: pacer)
        park(stream, connection)
        XCTAssertTrue(stream.prepareWake(by: pacer))
        stream.stopDirectWrites()
        stream.sendPrepared(by: pacer)
        XCTAssertEqual(connection.sends, 0)
        stream.wake()                             // every wake resumes now
        XCTAssertEqual(connection.resumes, 1)
        XCTAssertEqual(String(decoding: readAll(stream).bytes, as: UTF8.self), "prepared\nlater\n")
    }

    /// What the first pass cannot prepare it does as a wake: a connection without direct
    /// writes is resumed; the rest of a partly sent chunk is finished first.
    func testTheFirstPassDoesWhatAWakeDoesWhenNothingCanBePrepared() {
        let plain = LineStream([["a\n"], ["b\n"]])
        let plainConnection = ScriptedConnection(direct: false)
        plain.attach(plainConnection, pacer: pacer)
        park(plain, plainConnection)
        XCTAssertFalse(plain.prepareWake(by: pacer))
        XCTAssertEqual(plainConnection.resumes, 1)

        let stream = LineStream([["a\n"], ["first frame\n"], ["second\n"]])
        let connection = ScriptedConnection()
        stream.attach(connection, pacer: pacer)
        park(stream, connection)
        connection.takes = [.sent(5)]
        stream.wake()                             // 5 bytes of the first frame's chunk
        XCTAssertFalse(stream.prepareWake(by: pacer), "the rest is sent, and the next frame with it")
        XCTAssertEqual(dechunk(connection.written), ["first frame\n", "second\n"])
        stream.sendPrepared(by: pacer)
        XCTAssertEqual(connection.sends, 3)
    }

    /// A prepared frame whose send finds the peer gone hands the connection back to be
    /// aborted, as a wake's would.
    func testAPreparedFrameToAPeerGoneAbortsTheConnection() {
        let stream = LineStream([["a\n"], ["b\n"]])
        let connection = ScriptedConnection()
        stream.attach(connection, pacer: pacer)
        park(stream, connection)
        XCTAssertTrue(stream.prepareWake(by: pacer))
        connection.takes = [.gone]
        stream.sendPrepared(by: pacer)
        XCTAssertEqual(connection.resumes, 1)
        XCTAssertEqual(readAll(stream).last, .abort)
    }

    func testChunkSizesAreHexadecimalWithoutLeadingZeros() {
        for (size, text) in [(1, "1"), (9, "9"), (10, "a"), (15, "f"), (16, "10"), (255, "ff"), (4096, "1000"), (65_535, "ffff"), (70_000, "11170")] {
            var buffer = [UInt8](repeating: 0, count: PacedStream.chunkSizeRoom.count) + [UInt8](repeating: 65, count: size)
            let start = PacedStream.frameChunk(&buffer, bodyStart: PacedStream.chunkSizeRoom.count)
            let out = buffer[start...]
            XCTAssertEqual(String(decoding: out.prefix(text.count + 2), as: UTF8.self), text + "\r\n", "size \(size)")
            XCTAssertEqual(out.count, text.count + 2 + size + 2)
            XCTAssertEqual(Array(out.dropFirst(text.count + 2).prefix(size)), [UInt8](repeating: 65, count: size))
            XCTAssertEqual(Array(out.suffix(2)), [13, 10])
        }
    }
}
