import Foundation

/// A connection whose writes can be parked while nothing is due (libmicrohttpd's
/// suspend/resume; see `HTTPDaemon`).
protocol SuspendableConnection: AnyObject, Sendable {
    func suspend()
    func resume()
    /// Whether the client has closed its end (checked without reading anything).
    var isPeerGone: Bool { get }
}

/// Nanoseconds on the monotonic clock.
enum MonotonicClock {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static var seconds: Double { Double(now()) / 1e9 }
}

/// A chunked response that the socket pulls from and that produces its bytes as they come
/// due: `/v1/streams` frames and session watchers.
///
/// When nothing is due the connection is suspended, and the pacer wakes it at the next due
/// time (or a command wakes it), so an idle stream costs no CPU. Subclasses implement
/// `fill(now:into:)` and `nextWake(now:)`; this class owns the buffer, the locking and the
/// suspend/resume protocol.
class PacedStream: @unchecked Sendable {
    enum ReadResult: Equatable {
        case bytes(Int)
        /// Nothing due: the connection was suspended; wake it at this monotonic time (nil:
        /// only an outside event, such as a command, wakes it).
        case suspended(wakeAt: UInt64?)
        case end
        /// The client is gone: close the connection without ending the body.
        case abort
    }

    let lock = NSLock()
    private var pending: [UInt8] = []
    private var offset = 0
    private var connection: SuspendableConnection?
    private var suspended = false
    private var closed = false
    /// Set by SIGTERM: the next fill ends the stream.
    private(set) var draining = false
    /// The last bytes have been produced.
    var ended = false
    weak var registry: StreamRegistry?

    /// What a stream did, for its log line once it is closed.
    struct Summary: Sendable {
        var frames: Int
        var dropped: Int
        /// `completed` (the last frame was sent), `session-completed`, `session-stopped`,
        /// `session-deleted`, `shutdown` (SIGTERM), or `client-closed` (the client left first).
        var reason: String
    }

    /// Set by `fill` (under `lock`): a monotonic time before which another fill would
    /// produce nothing, unless something wakes the stream first (0: unknown). After a fill
    /// has written the due frame, libmicrohttpd calls `read` again once the bytes are out;
    /// that read then parks the connection without a second, empty fill.
    /// Measured under callgrind (Benchmarks/README.md, "Session watchers, the frame
    /// writer"): the empty fill was half of all fills, about 1,700 instructions each for a
    /// session watcher (whole server 11,093 → 9,670 instructions a watcher frame).
    var quietUntil: UInt64 = 0
    /// `wake()` was called since the last fill: a command or the pacer may have made
    /// something due, so the next read fills.
    private var wokenSinceFill = false
    /// Bytes were handed to libmicrohttpd since the connection was last parked.
    private var wroteSinceParked = false

    /// A parked stream is woken at least this often, whatever its next due time.
    ///
    /// How a stream whose client has gone away is finished. While a connection is suspended
    /// libmicrohttpd 0.9.75 takes its socket out of its epoll set and looks at nothing on
    /// it (no reads, no errors, no timeout), so a reset arriving then is only seen once the
    /// connection is resumed: the request-completed callback and the response's free
    /// callback (`close()`: registry, gauge, session watcher list, pacer entry) wait for it.
    /// So a parked stream is never left longer than this: every suspension asks the pacer
    /// for a wake no later than `heartbeatNanos` from now, even when the next frame is far
    /// away (a tiny `speed`, a slow session, a paused one) or only a command could produce
    /// one. On a wake, either something is due and is written — libmicrohttpd's send then
    /// fails on a reset connection (and on one the client closed, at the latest on the
    /// second write) and closes it — or nothing is due and the read parks again; a park with
    /// nothing written since the previous one first peeks at the socket
    /// (`SuspendableConnection.isPeerGone`) and ends the response with an error if the peer
    /// has gone. A stream whose frames come more often than this never peeks: its writes do
    /// the looking (a reset fails the first write, a close the second). So a dead peer's
    /// stream is closed within two wakes of its going, each at most `heartbeatNanos` (plus
    /// the pacer's 1 ms slot) apart: about half a second on a server that is not overloaded.
    static let heartbeatNanos: UInt64 = 250_000_000
    /// Frames written and skipped, and why the stream ended; set by subclasses under `lock`.
    var framesSent = 0
    var framesDropped = 0
    var endReason: String?
    private var sentBytes = 0
    /// Called once, when the stream is closed.
    var onClosed: (@Sendable (Summary) -> Void)?

    /// Body bytes handed to the socket so far.
    var bytesSent: Int { lock.withLock { sentBytes } }

    /// Called once the response is queued on its connection.
    func attach(_ connection: SuspendableConnection) {
        lock.withLock { self.connection = connection }
    }

    /// Copies up to `buffer.count` bytes of due output into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        lock.lock()
        defer { lock.unlock() }
        let now = MonotonicClock.now()
        if offset == pending.count {
            pending.removeAll(keepingCapacity: true)
            offset = 0
            if !ended, wokenSinceFill || draining || now >= quietUntil {
                wokenSinceFill = false
                quietUntil = 0
                fill(now: now, into: &pending)
            }
        }
        if offset == pending.count {
            if ended { return .end }
            // Parking with nothing written since the last park (a heartbeat, or a wake with
            // nothing due): nothing was sent that could have failed, so look at the socket.
            if !wroteSinceParked, connection?.isPeerGone == true { return .abort }
            wroteSinceParked = false
            suspended = true
            connection?.suspend()
            let heartbeat = now &+ Self.heartbeatNanos
            return .suspended(wakeAt: min(nextWake(now: now) ?? heartbeat, heartbeat))
        }
        let count = min(buffer.count, pending.count - offset)
        pending.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        sentBytes += count
        wroteSinceParked = true
        return .bytes(count)
    }

    /// Appends what is due at `now` (monotonic ns); sets `ended` after the last bytes.
    /// Called with `lock` held.
    func fill(now: UInt64, into bytes: inout [UInt8]) {
        ended = true
    }

    /// When the next bytes come due, or nil when only an outside event can produce them.
    /// Called with `lock` held. The connection is woken sooner if this is more than
    /// `heartbeatNanos` away.
    func nextWake(now: UInt64) -> UInt64? { nil }

    /// Resumes the connection if it is parked.
    func wake() {
        lock.lock()
        defer { lock.unlock() }
        wokenSinceFill = true
        guard suspended, !closed else { return }
        suspended = false
        connection?.resume()
    }

    /// Ends the stream early (SIGTERM): the next fill writes an interrupted `end` line.
    func drain() {
        lock.withLock { draining = true }
        wake()
    }

    /// The response was destroyed: the client went away or the stream finished.
    func close() {
        let (summary, report): (Summary, (@Sendable (Summary) -> Void)?) = lock.withLock {
            closed = true
            connection = nil
            defer { onClosed = nil }
            let reason = ended ? (endReason ?? "completed") : "client-closed"
            return (Summary(frames: framesSent, dropped: framesDropped, reason: reason), onClosed)
        }
        registry?.unregister(self)
        didClose()
        report?(summary)
    }

    /// Hook for subclasses, after the stream is gone.
    func didClose() {}
}

/// The open streams, for the stream limit, metrics and draining on shutdown.
///
/// `onChange` (the `motion_open_streams` gauge) is called with the new count while the lock
/// is still held, so counts are published in the order they were taken and the last value
/// published is the current count. Called after the lock was released, as it once was, a
/// thread preempted between the two could publish its older count after every later one:
/// after a disconnect storm closed on two connection threads at once, the gauge then stayed
/// at that count (66) with no stream open (`StreamRegistryTests`). `onChange` must therefore
/// be quick and must not call back into the registry.
final class StreamRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var streams: [ObjectIdentifier: PacedStream] = [:]
    private var draining = false
    private let onChange: @Sendable (Int) -> Void

    init(onChange: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.onChange = onChange
    }

    var count: Int { lock.withLock { streams.count } }

    /// Adds a stream unless `limit` streams are already open or the server is draining.
    func register(_ stream: PacedStream, limit: Int) -> Bool {
        lock.withLock {
            guard !draining, streams.count < limit else { return false }
            streams[ObjectIdentifier(stream)] = stream
            stream.registry = self
            onChange(streams.count)
            return true
        }
    }

    func unregister(_ stream: PacedStream) {
        lock.withLock {
            guard streams.removeValue(forKey: ObjectIdentifier(stream)) != nil else { return }
            onChange(streams.count)
        }
    }

    /// Asks every open stream to end now, and refuses new ones from here on.
    func drainAll() {
        let open = lock.withLock {
            draining = true
            return Array(streams.values)
        }
        for stream in open { stream.drain() }
    }
}
