import Foundation
import MotionEngine

/// A connection whose writes can be parked while nothing is due (libmicrohttpd's
/// suspend/resume; see `HTTPDaemon`).
protocol SuspendableConnection: AnyObject, Sendable {
    func suspend()
    func resume()
    /// Whether the client has closed its end (checked without reading anything).
    var isPeerGone: Bool { get }
    /// Whether bytes may be written straight to the socket while the connection is
    /// suspended (`send(_:)`): the response is chunked (HTTP/1.1, a body) and the server
    /// allows it (`--stream-direct-writes`).
    var allowsDirectWrites: Bool { get }
    /// Writes `bytes` to the suspended connection's socket without blocking.
    func send(_ bytes: UnsafeRawBufferPointer) -> DirectSend
    /// The socket, when `send(_:)` is `DirectSocket.send` on it: the stream then keeps it
    /// and sends without going through this object (nil: through `send(_:)`).
    var directSocket: Int32? { get }
}

extension SuspendableConnection {
    var directSocket: Int32? { nil }
}

/// What one non-blocking write to a suspended connection's socket did.
enum DirectSend: Equatable {
    /// This many bytes were taken (0 ..< all: the socket buffer is full).
    case sent(Int)
    /// The peer is gone (reset, closed, or another error): the stream is over.
    case gone
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

/// Where a stream counts a large write its client has not taken yet: the daemon's
/// `--max-held-response-bytes`, which complete answers not yet sent count against too.
struct HeldBytesLedger: Sendable {
    /// Counts `bytes` as held, or answers false (counting nothing) past the limit.
    let take: @Sendable (Int) -> Bool
    /// Gives back what `take` counted.
    let give: @Sendable (Int) -> Void
}

/// A chunked response that the socket pulls from and that produces its bytes as they come
/// due: `/v1/streams` frames and session watchers.
///
/// When nothing is due the connection is suspended, and the pacer wakes it at the next due
/// time (or a command wakes it), and at least every `heartbeatNanos` to see whether its
/// client is still there, so an idle stream costs almost no CPU. Subclasses implement
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

    /// Guards the stream's state; subclasses' `fill` and `nextWake` run under it. A `Mutex`
    /// (in an `InlineLock`, so that ThreadSanitizer can follow it) is stored inside the
    /// stream, where `NSLock` was an object of its own holding a separately allocated
    /// `pthread_mutex_t`: two allocations fewer a stream, two fewer places the pacer's thread
    /// has to bring into the cache for every frame, and 3,186 → 3,120 instructions a frame
    /// (callgrind, 200 streams; Benchmarks/README.md "Where a streamed frame's user-space
    /// time goes").
    private let lock = InlineLock()
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
    /// The due time of this stream's live wake filed with the pacer (0: none). Read and
    /// written only by `StreamPacer`, under its lock.
    var pacerDue: UInt64 = 0

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
    /// Bytes went out (handed to libmicrohttpd, or written directly) since the last time
    /// the stream had nothing to write.
    private var wroteSinceIdle = false

    /// A suspended stream is woken at least this often, whatever its next due time.
    ///
    /// How a stream whose client has gone away is finished. While a connection is suspended
    /// libmicrohttpd 0.9.75 takes its socket out of its epoll set and looks at nothing on
    /// it (no reads, no errors, no timeout), so a reset arriving then is only seen once the
    /// connection is resumed: the request-completed callback and the response's free
    /// callback (`close()`: registry, gauge, session watcher list) wait for it. So a
    /// suspended stream is never left longer than this: each time it parks, or is left
    /// parked after a direct write, the pacer is asked for a wake no later than
    /// `heartbeatNanos` from now (`wakeTime(now:)`), even when the next frame is far away (a
    /// tiny `speed`, a slow session, a paused one) or only a command could produce one. On a
    /// wake, either something is due and is written — the send fails on a reset connection
    /// (and on one the client closed, at the latest on the second write), and the connection
    /// is closed — or nothing is due; then, if nothing was written since the last time that
    /// happened, the socket is peeked at (`SuspendableConnection.isPeerGone`) and the
    /// response ended with an error if the peer has gone. A stream whose frames come more
    /// often than this never peeks: its writes do the looking. So a dead peer's stream is
    /// closed within two wakes of its going, each at most `heartbeatNanos` (plus the pacer's
    /// 1 ms slot) apart: about half a second on a server that is not overloaded.
    static let heartbeatNanos: UInt64 = 250_000_000
    /// Direct writes (`wake()`): the pacer that wakes this stream, set by `attach`; nil when
    /// frames go through libmicrohttpd only.
    private var directPacer: StreamPacer?
    /// Direct writes: the socket, when the connection gives it (`directSocket`; -1: none).
    private var directSocket: Int32 = -1
    /// The unsent rest of a chunk that the socket took only part of (direct writes), or the
    /// chunk `prepareWake` produced for `sendPrepared`.
    private var unsent: [UInt8] = []
    private var unsentOffset = 0
    /// The body size of the chunk in `unsent` that `prepareWake` produced and `sendPrepared`
    /// has not sent (0: none), and the time it was produced at.
    private var preparedSize = 0
    private var preparedAt: UInt64 = 0
    /// When the socket last took bytes of `unsent`: a peer that reads nothing for
    /// `directStallNanos` is given up on, as libmicrohttpd's own timeout would.
    private var unsentSince: UInt64 = 0
    /// A direct write found the peer gone: the next read aborts the connection.
    private var peerGone = false
    /// Where writes are counted by path (`motion_stream_writes_total`).
    private var writeMetrics: ServiceMetrics?
    /// Where a write over `keptBufferBytes` is counted until it is sent (`admit`), and how
    /// much of it the stream holds now (at most one write at a time: the next is produced
    /// only once the last is sent).
    private var ledger: HeldBytesLedger?
    private var ledgerHeld = 0
    /// How long a partly written chunk may wait for its peer before the stream is aborted
    /// (libmicrohttpd's own default connection timeout is of the same order).
    var directStallNanos: UInt64 = 30_000_000_000
    /// How soon the rest of a partly written chunk is tried again.
    static let directRetryNanos: UInt64 = 5_000_000
    /// Frames written and skipped, and why the stream ended; set by subclasses under `lock`.
    var framesSent = 0
    var framesDropped = 0
    var endReason: String?
    private var sentBytes = 0
    /// Called once, when the stream is closed.
    var onClosed: (@Sendable (Summary) -> Void)?

    /// Body bytes handed to the socket so far.
    var bytesSent: Int { lock.withLock { sentBytes } }

    /// Called once the response is queued on its connection. With `pacer`, the frames that
    /// come due while the connection is suspended are written by `wake()` straight to the
    /// socket (when the connection allows it and the stream is paced).
    func attach(_ connection: SuspendableConnection, pacer: StreamPacer? = nil, metrics: ServiceMetrics? = nil,
                ledger: HeldBytesLedger? = nil) {
        lock.withLock {
            self.connection = connection
            writeMetrics = metrics
            self.ledger = ledger
            if connection.allowsDirectWrites, allowsDirectWrites {
                directPacer = pacer
                directSocket = connection.directSocket ?? -1
            }
        }
    }

    /// Whether this stream's frames may be written by the pacer (a stream released as fast
    /// as the client reads is not paced: it stays on libmicrohttpd's pull path).
    var allowsDirectWrites: Bool { true }

    /// Stops direct writes (the daemon is about to close every connection; the pacer has
    /// stopped): a suspended connection is handed back to libmicrohttpd, which will not stop
    /// while one is suspended, and from here on every wake resumes the connection. Waits for
    /// a write in progress (the lock). A chunk the socket had taken only part of cannot be
    /// finished by libmicrohttpd's own framing: that connection is closed (this runs after
    /// the drain, only for streams whose clients did not read their end). Left suspended,
    /// waiting for a pacer that had stopped to retry its chunk, such a stream made
    /// libmicrohttpd abort the process on SIGTERM (found by an adversarial review).
    func stopDirectWrites() {
        lock.withLock {
            directPacer = nil
            directSocket = -1
            if preparedSize > 0 {
                // A frame the pacer produced and had not sent yet: libmicrohttpd sends it
                // once the connection is resumed, before anything newer.
                handUnsentChunkToLibmicrohttpd(size: preparedSize)
                preparedSize = 0
            }
            if suspended, !closed { handBack(abort: unsentOffset < unsent.count) }
        }
    }

    /// Copies up to `buffer.count` bytes of due output into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        lock.withLock { readLocked(into: buffer) }
    }

    private func readLocked(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        let now = MonotonicClock.now()
        if peerGone { return .abort }
        if offset == pending.count {
            // Refilled only when something may be due (see `quietUntil`).
            refill(now: now, produce: wokenSinceFill || draining || now >= quietUntil)
        }
        if offset == pending.count {
            if ended { return .end }
            if noticesPeerGone() { return .abort }
            suspended = true
            connection?.suspend()
            return .suspended(wakeAt: wakeTime(now: now))
        }
        let count = min(buffer.count, pending.count - offset)
        pending.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        sentBytes += count
        wroteSinceIdle = true
        writeMetrics?.streamWrite(direct: false)
        return .bytes(count)
    }

    /// Empties the buffer of sent bytes and, with `produce` and until the stream has ended,
    /// fills it with what is due at `now`. Lock held.
    private func refill(now: UInt64, produce: Bool) {
        pending.removeAll(keepingCapacity: pending.capacity <= Self.keptBufferBytes)
        offset = 0
        if produce { produceDue(now: now, into: &pending) }
    }

    /// Appends what is due at `now` to `bytes`, until the stream has ended. Lock held; the
    /// stream's last write has been sent (what it held is given back here).
    private func produceDue(now: UInt64, into bytes: inout [UInt8]) {
        releaseHeld()
        guard !ended else { return }
        wokenSinceFill = false
        quietUntil = 0
        let start = bytes.count
        fill(now: now, into: &bytes)
        admit(&bytes, from: start)
    }

    /// Counts a write over `keptBufferBytes` (the bytes from `start`) against the daemon's
    /// held bytes until it is sent; when they are at their limit, the write is replaced by
    /// the stream's `end` line, `"interrupted":"unread"`. Each stream holds at most one
    /// write, and a frame with its events may be up to `--max-response-bytes`: 100 watchers
    /// of a session whose frames carried 100,000 events (9.8 MB a line) that read nothing
    /// held 1 GB (found by an adversarial review). Lock held.
    private func admit(_ bytes: inout [UInt8], from start: Int) {
        let size = bytes.count - start
        guard size > Self.keptBufferBytes, let ledger else { return }
        if ledger.take(size) {
            ledgerHeld = size
            return
        }
        // A new buffer, so that the large one's storage goes now, not when the stream does.
        bytes = Array(bytes[..<start])
        endUnread(into: &bytes)
        ended = true
        endReason = "unread"
    }

    /// Gives back what the last write counted (`admit`). Lock held.
    private func releaseHeld() {
        guard ledgerHeld > 0 else { return }
        ledger?.give(ledgerHeld)
        ledgerHeld = 0
    }

    /// Appends the stream's `end` line with `"interrupted":"unread"`: its write could not be
    /// held (`admit`). Called with `lock` held.
    func endUnread(into bytes: inout [UInt8]) {}

    /// Appends what is due at `now` (monotonic ns); sets `ended` after the last bytes.
    /// Called with `lock` held.
    func fill(now: UInt64, into bytes: inout [UInt8]) {
        ended = true
    }

    /// Whether what is due at `now` carries more events than the pacer's thread should write
    /// (`heavyEvents`): the wake then hands the connection to libmicrohttpd, whose thread,
    /// at the connection threads' priority, writes them, and the pacer goes on to the
    /// other streams. Called with `lock` held.
    func dueIsHeavy(now: UInt64) -> Bool { false }

    /// Events due at one wake beyond which the stream's write is left to libmicrohttpd
    /// (about 160 KB of event lines). Written on the pacer's thread, one instant of 98,000
    /// events took about 57 ms a stream or session to encode, and every paced stream waited:
    /// 30 sessions crossing it, 1.7 s each time (found by an adversarial review).
    static let heavyEvents = 2_048

    /// When the next bytes come due, or nil when only an outside event can produce them.
    /// Called with `lock` held. The connection is woken sooner if this is more than
    /// `heartbeatNanos` away.
    func nextWake(now: UInt64) -> UInt64? { nil }

    /// When the pacer is to wake this suspended stream: its next due time, or sooner, the
    /// heartbeat. Lock held.
    private func wakeTime(now: UInt64) -> UInt64 {
        let heartbeat = now &+ Self.heartbeatNanos
        return min(nextWake(now: now) ?? heartbeat, heartbeat)
    }

    /// The stream has nothing to write now. If nothing was written since the last time,
    /// no send could have failed on a peer that left: whether it has gone, from its socket
    /// (`heartbeatNanos`). Lock held.
    private func noticesPeerGone() -> Bool {
        defer { wroteSinceIdle = false }
        return !wroteSinceIdle && connection?.isPeerGone == true
    }

    /// Something may be due: a parked connection is resumed, so that libmicrohttpd reads
    /// the stream again; or, with direct writes, what is due is written here.
    func wake() {
        lock.withLock { wakeLocked() }
    }

    private func wakeLocked() {
        wokenSinceFill = true
        guard suspended, !closed else { return }
        // The connection object is not touched on this path when the stream keeps its
        // socket (`directSocket`): binding it here retained it, a first touch of a block of
        // its own on every frame. Without it, `swift_retain` fell from 4.6–5.2 % to
        // 1.7–2.2 % of the server's samples (perf, 1,500 and 2,000 streams), and 2,863 →
        // 2,787 instructions a frame (callgrind; Benchmarks/README.md, "Phases").
        if let pacer = directPacer {
            writeDirect(pacer)
            return
        }
        suspended = false
        connection?.resume()
    }

    /// Direct writes: one chunk of what is due at this wake, written by the waking thread
    /// (the pacer, or a command) straight to the suspended connection's socket, with one
    /// `send` and no round through libmicrohttpd. Lock held; the connection is suspended.
    ///
    /// Why: through libmicrohttpd 0.9.75 each frame cost a resume (a write to its eventfd
    /// that wakes its thread), a pass of its event loop, which walks every suspended
    /// connection, the read callback, and a suspend; here a frame costs its encoding and
    /// the `send` (the floor program's one `send` a frame). Benchmarks/README.md has the
    /// figures ("Direct writes").
    ///
    /// Safe because libmicrohttpd does no I/O on a suspended connection and never closes
    /// one (the daemon resumes it first, and `stopDirectWrites` runs before the daemon
    /// stops); the stream parks only when libmicrohttpd's write buffer is empty (the read
    /// callback is asked for more only then), so these bytes follow its own in order. The
    /// framing is HTTP/1.1 chunked, as libmicrohttpd writes it (`allowsDirectWrites`).
    ///
    /// Anything that is not a plain frame-per-tick goes back to libmicrohttpd, by resuming
    /// the connection: the end of the stream (its last chunk is libmicrohttpd's), a socket
    /// that takes nothing (a slow reader: libmicrohttpd waits for it to drain, with its
    /// timeout), more due at once than one chunk (catching up), and a peer gone (the next
    /// read aborts). A chunk the socket took only part of is finished here first: it is
    /// tried again every `directRetryNanos`, and given up after `directStallNanos`.
    private func writeDirect(_ pacer: StreamPacer) {
        // The pacer's first pass produced a chunk its second pass has not sent yet: that
        // pass sends it, then writes again for this wake (`sendPrepared`).
        if preparedSize > 0 { return }
        let now = MonotonicClock.now()
        if unsentOffset < unsent.count {
            switch sendUnsent(now: now) {
            case .gone: return handBack(abort: true)
            case .sent:
                if unsentOffset < unsent.count {
                    if now - unsentSince > directStallNanos { return handBack(abort: true) }
                    pacer.schedule(self, at: now + Self.directRetryNanos)
                    return
                }
            }
        }
        if dueIsHeavy(now: now) { return handBack(abort: false) }
        guard let size = produceChunk(now: now, pacer: pacer) else { return }
        sendChunk(size: size, pacer: pacer, now: now)
    }

    /// What is due, produced straight into `unsent` after room for the chunk's size line and
    /// framed there as one chunk (no second buffer and no copy); returns the chunk's body
    /// size. Nil when nothing was due: the stream was then handed back or its next wake
    /// filed. Lock held; nothing of `unsent` is left to send.
    private func produceChunk(now: UInt64, pacer: StreamPacer) -> Int? {
        unsent.removeAll(keepingCapacity: unsent.capacity <= Self.keptBufferBytes)
        unsent.append(contentsOf: Self.chunkSizeRoom)
        produceDue(now: now, into: &unsent)
        let bodyStart = Self.chunkSizeRoom.count, size = unsent.count - bodyStart
        if size == 0 {
            unsent.removeAll(keepingCapacity: unsent.capacity <= Self.keptBufferBytes)
            unsentOffset = 0
            if ended { handBack(abort: false) } else if noticesPeerGone() { handBack(abort: true) } else {
                pacer.schedule(self, at: wakeTime(now: now))
            }
            return nil
        }
        unsentOffset = Self.frameChunk(&unsent, bodyStart: bodyStart)
        return size
    }

    /// Moves the body (`size` bytes) of the chunk framed in `unsent`, none of it sent, to the
    /// buffer libmicrohttpd's reads take from (it frames the bytes itself). Lock held.
    private func handUnsentChunkToLibmicrohttpd(size: Int) {
        let bodyStart = Self.chunkSizeRoom.count
        pending.removeAll(keepingCapacity: pending.capacity <= Self.keptBufferBytes)
        pending.append(contentsOf: unsent[bodyStart..<(bodyStart + size)])
        offset = 0
        unsent.removeAll(keepingCapacity: unsent.capacity <= Self.keptBufferBytes)
        unsentOffset = 0
    }

    /// Sends the chunk `produceChunk` framed in `unsent` (its body `size` bytes) and files
    /// the stream's next wake, or hands the connection back. Lock held.
    private func sendChunk(size: Int, pacer: StreamPacer, now: UInt64) {
        switch sendUnsent(now: now) {
        case .gone:
            return handBack(abort: true)
        case .sent(let count) where count == 0:
            // The socket took nothing: libmicrohttpd sends these bytes once it can.
            handUnsentChunkToLibmicrohttpd(size: size)
            return handBack(abort: false)
        case .sent:
            sentBytes += size
            writeMetrics?.streamWrite(direct: true)
            if unsentOffset < unsent.count {
                unsentSince = now
                pacer.schedule(self, at: now + Self.directRetryNanos)
                return
            }
            if ended { return handBack(abort: false) }
            wroteSinceIdle = true
            // More due already (a stream catching up): libmicrohttpd sends as fast as the
            // client reads, rather than this thread looping.
            let wakeAt = wakeTime(now: now)
            if wakeAt <= now { return handBack(abort: false) }
            pacer.schedule(self, at: wakeAt)
        }
    }

    /// The pacer's first pass over a batch of due streams (`StreamPacer.run`): what a wake
    /// would write directly is produced and framed, not yet sent; true when a chunk waits for
    /// `sendPrepared`, the second pass. Everything else a wake does (resuming the
    /// connection, finishing a partly sent chunk, filing the next wake when nothing was
    /// due) is done here, as `wake()` does it.
    ///
    /// Why two passes: the frames of a batch are all produced, then all sent, so that the
    /// thread runs the engine's code for every stream and then the kernel's `send` path for
    /// every stream, instead of switching between the two on every frame, each evicting the
    /// other's instructions and data from the caches. The C floor program measured it
    /// (`c/stream_floor.c` with about 1 µs of work a frame touching a buffer of the stream's,
    /// server on CPU 0, client on CPU 1, two alternating rounds of 6 s): 1,000 streams
    /// 6.44 → 5.85 µs a frame, 2,000 streams 6.25 → 6.02. Benchmarks/README.md gives the
    /// server's figures ("Two passes a batch").
    ///
    /// `pacer` is the calling pacer, the stream's own: passed in rather than read from
    /// `directPacer`, which would retain and release it in each pass. User-space
    /// instructions a frame (callgrind, 200 streams, the 12 s run minus the 6 s run ÷ 72,000
    /// frames): one pass 2,783; two passes reading `directPacer` 3,008; passed in, 2,862.
    func prepareWake(by pacer: StreamPacer) -> Bool {
        lock.withLock {
            guard suspended, !closed, directPacer === pacer, preparedSize == 0, unsentOffset >= unsent.count else {
                wakeLocked()
                return false
            }
            wokenSinceFill = true
            let now = MonotonicClock.now()
            if dueIsHeavy(now: now) {
                handBack(abort: false)
                return false
            }
            guard let size = produceChunk(now: now, pacer: pacer) else { return false }
            preparedSize = size
            preparedAt = now
            return true
        }
    }

    /// The pacer's second pass: sends the chunk `prepareWake` produced, as a direct write
    /// sends its chunk, and files the next wake. A wake that came between the passes (a
    /// session command on another thread) left that chunk to this pass, so that it goes
    /// first; what the wake made due is written right after it.
    func sendPrepared(by pacer: StreamPacer) {
        lock.withLock {
            guard preparedSize > 0 else { return }
            let size = preparedSize
            preparedSize = 0
            // Closed, or handed to libmicrohttpd meanwhile (`stopDirectWrites` moved the chunk
            // to its buffer): nothing to send here.
            guard suspended, !closed, directPacer === pacer else { return }
            sendChunk(size: size, pacer: pacer, now: preparedAt)
            if wokenSinceFill, suspended, !closed, unsentOffset >= unsent.count { writeDirect(pacer) }
        }
    }

    /// Sends what is left of `unsent`. Lock held.
    private func sendUnsent(now: UInt64) -> DirectSend {
        let socket = directSocket
        let result = unsent.withUnsafeBytes { bytes -> DirectSend in
            let rest = UnsafeRawBufferPointer(rebasing: bytes[unsentOffset...])
            if socket >= 0 { return DirectSocket.send(socket, rest) }
            return connection?.send(rest) ?? .gone
        }
        if case .sent(let count) = result, count > 0 {
            unsentOffset += count
            unsentSince = now
        }
        return result
    }

    /// Resumes the connection: libmicrohttpd reads the stream again (`abort`: the peer is
    /// gone, and that read closes the connection). Lock held.
    private func handBack(abort: Bool) {
        if abort { peerGone = true }
        suspended = false
        connection?.resume()
    }

    /// Room for a chunk's size line before its bytes: 16 hexadecimal digits (any `Int`)
    /// and CRLF.
    static let chunkSizeRoom = [UInt8](repeating: 0, count: 18)

    /// The buffers keep their storage from one write to the next up to this size (no
    /// allocation a frame); a larger write's storage is let go once it is sent, so that a
    /// stream does not hold its largest write for the rest of its life.
    static let keptBufferBytes = 64 * 1024

    /// Frames `buffer[bodyStart...]` as one HTTP/1.1 chunk (RFC 9112 §7.1) in place: its size
    /// in lowercase hexadecimal without leading zeros and CRLF go just before the bytes (in
    /// the room left there, `bodyStart` ≥ `chunkSizeRoom.count`), CRLF after them. Returns
    /// where the chunk starts.
    ///
    /// In place, the frame a direct write sends is produced once into the buffer it is sent
    /// from. Before, it was produced into a buffer of its own and copied into a second one
    /// behind its size line: under callgrind (200 streams, 60 fps, the 12 s run minus the 6 s
    /// run; Benchmarks/README.md "Where a streamed frame's user-space time goes"), 3,120 →
    /// 2,897 instructions a frame, and one buffer fewer a stream to bring into the cache on
    /// every frame.
    static func frameChunk(_ buffer: inout [UInt8], bodyStart: Int) -> Int {
        let size = buffer.count - bodyStart
        precondition(size >= 0 && bodyStart >= chunkSizeRoom.count)
        var start = bodyStart - 2
        buffer[start] = 13
        buffer[start + 1] = 10
        var rest = size
        repeat {
            let nibble = UInt8(truncatingIfNeeded: rest & 15)
            start -= 1
            buffer[start] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            rest >>= 4
        } while rest > 0
        buffer.append(13)
        buffer.append(10)
        return start
    }

    /// Ends the stream early (SIGTERM): the next fill writes an interrupted `end` line.
    func drain() {
        lock.withLock { draining = true }
        wake()
    }

    /// The response was destroyed: the client went away or the stream finished.
    func close() {
        let (summary, report): (Summary, (@Sendable (Summary) -> Void)?) = lock.withLock {
            releaseHeld()
            closed = true
            connection = nil
            directSocket = -1
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
/// at that count (66) with no stream open (`DisconnectedStreamTests`). `onChange` must
/// therefore be quick and must not call back into the registry.
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

    /// Stops every open stream's direct writes (before the daemon closes the connections).
    func stopDirectWrites() {
        for stream in lock.withLock({ Array(streams.values) }) { stream.stopDirectWrites() }
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
