import Foundation
import MotionEngine

/// A connection whose writes can be parked while nothing is due (libmicrohttpd's
/// suspend/resume; see `HTTPDaemon`).
protocol SuspendableConnection: AnyObject, Sendable {
    func suspend()
    func resume()
}

/// Nanoseconds on the monotonic clock.
enum MonotonicClock {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// One `/v1/streams` response: frames of a compiled timeline, released as they come due on
/// a clock running at wall time × `speed` from the moment the response starts.
///
/// The socket pulls (`read`): frames that are due are encoded into a buffer bounded by
/// `chunkBytes`; when none is due the connection is suspended and the pacer wakes it at the
/// next due time, so an idle stream costs no CPU. A slow reader only delays encoding: frames
/// are computed when the socket can take them, so nothing is dropped and memory stays bounded.
final class FrameStream: @unchecked Sendable {
    enum ReadResult: Equatable {
        case bytes(Int)
        /// Nothing due: the connection was suspended; wake it at this monotonic time.
        case suspended(wakeAt: UInt64)
        case end
    }

    private let lock = NSLock()
    private var encoder: FrameStreamEncoder
    private let speed: Double
    private let chunkBytes: Int
    private weak var registry: StreamRegistry?
    private var startNanos: UInt64?
    private var pending: [UInt8] = []
    private var offset = 0
    private var connection: SuspendableConnection?
    private var suspended = false
    private var closed = false
    private var draining = false
    private var ended = false

    init(encoder: FrameStreamEncoder, speed: Double, chunkBytes: Int, registry: StreamRegistry) {
        self.encoder = encoder
        self.speed = speed
        self.chunkBytes = chunkBytes
        self.registry = registry
    }

    /// Called once the response is queued on its connection.
    func attach(_ connection: SuspendableConnection) {
        lock.withLock { self.connection = connection }
    }

    /// Copies up to `buffer.count` bytes of due output into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        lock.lock()
        defer { lock.unlock() }
        let now = MonotonicClock.now()
        if startNanos == nil { startNanos = now }
        if offset == pending.count {
            pending.removeAll(keepingCapacity: true)
            offset = 0
            fill(now: now)
        }
        if offset == pending.count {
            if ended { return .end }
            suspended = true
            connection?.suspend()
            return .suspended(wakeAt: dueNanos(encoder.nextFrameTime) ?? now)
        }
        let count = min(buffer.count, pending.count - offset)
        pending.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return .bytes(count)
    }

    /// Encodes every frame that is due (up to `chunkBytes`), or the end line.
    private func fill(now: UInt64) {
        guard !ended else { return }
        if draining {
            encoder.writeEnd(into: &pending, interrupted: "shutdown")
            ended = true
            return
        }
        while pending.count < chunkBytes {
            if let t = encoder.nextFrameTime {
                guard let due = dueNanos(t), due <= now else { return }
                encoder.writeNext(into: &pending)
            } else {
                encoder.writeNext(into: &pending)
                ended = true
                return
            }
        }
    }

    /// Monotonic time at which virtual time t is due; nil when nothing is left.
    private func dueNanos(_ t: Double?) -> UInt64? {
        guard let t, let start = startNanos else { return nil }
        if speed == 0 { return start }
        let offsetSeconds = max(0, (t - encoder.timeline.window.start) / speed)
        return start + UInt64(min(offsetSeconds * 1e9, 9e18))
    }

    /// Resumes the connection if it is parked (called by the pacer when a frame is due).
    func wake() {
        lock.lock()
        defer { lock.unlock() }
        guard suspended, !closed else { return }
        suspended = false
        connection?.resume()
    }

    /// Ends the stream early with an `end` line marked as interrupted (SIGTERM).
    func drain() {
        lock.lock()
        draining = true
        lock.unlock()
        wake()
    }

    /// The response was destroyed: the client went away or the stream finished.
    func close() {
        lock.withLock {
            closed = true
            connection = nil
        }
        registry?.unregister(self)
    }
}

/// The open streams, for the stream limit and for draining on shutdown.
final class StreamRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var streams: [ObjectIdentifier: FrameStream] = [:]
    private var draining = false

    var count: Int { lock.withLock { streams.count } }

    /// Adds a stream unless `limit` streams are already open or the server is draining.
    func register(_ stream: FrameStream, limit: Int) -> Bool {
        lock.withLock {
            guard !draining, streams.count < limit else { return false }
            streams[ObjectIdentifier(stream)] = stream
            return true
        }
    }

    func unregister(_ stream: FrameStream) {
        lock.withLock { _ = streams.removeValue(forKey: ObjectIdentifier(stream)) }
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
