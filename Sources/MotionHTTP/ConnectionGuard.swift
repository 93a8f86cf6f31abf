import Foundation
import Glibc
import MotionEngine

/// Cuts connections that send a request too slowly (slowloris).
///
/// libmicrohttpd 0.9.75 only has an idle timeout: one byte every few seconds keeps a
/// connection open for ever. This guard follows each connection from libmicrohttpd's
/// connection notifier and the request callbacks, and a thread checks them twice a second:
///
/// - **request head deadline**: once the first byte of a request has arrived (seen as growth
///   of the kernel's count of bytes received on the socket), its head must be complete within
///   `headerTimeout` seconds. A keep-alive connection that sends nothing is left to the idle
///   timeout.
/// - **minimum body rate**: after `headerTimeout` seconds of body, the body must have come at
///   `minBodyRate` bytes per second on average.
///
/// A connection past either is sent a 408 problem and shut down; libmicrohttpd then sees the
/// end of the socket and closes it. The guard's lock is held while it shuts a socket down and
/// while a connection is forgotten (libmicrohttpd notifies the close before closing the
/// descriptor), so the guard never touches a descriptor that was reused.
final class ConnectionGuard: @unchecked Sendable {
    final class Track {
        enum Phase {
            /// Between requests: waiting for (the rest of) a request head.
            case head
            /// Receiving a body: `bytes` so far.
            case body
            /// Computing or sending the answer: the request is complete.
            case answering
        }

        let fd: Int32
        var phase = Phase.head
        /// When the phase began (monotonic ns).
        var since: UInt64
        /// Head phase: bytes the socket had received when the phase began, and when growth
        /// was first seen (0: not yet).
        var baseline: UInt64
        var headStarted: UInt64 = 0
        /// Body phase: bytes received so far.
        var bodyBytes = 0
        var cut = false
        /// The peer's `IP:port` for the access log, found by the connection's first request
        /// and kept for the rest (read and written only on the connection's own thread):
        /// `getpeername`, `inet_ntop` and the text cost about 4,400 user-space instructions
        /// a request (callgrind, the small document with the access log on).
        var clientAddress: String?

        /// A new connection's first request starts with its first byte: the baseline is 0.
        /// Taken from the socket when libmicrohttpd reports the connection, it counted the
        /// bytes that came with the connection (a client that sends a partial head at once)
        /// as before the request, which then never started, and such heads were left to the
        /// idle timeout (found by an adversarial review).
        init(fd: Int32, now: UInt64) {
            self.fd = fd
            self.since = now
            self.baseline = 0
        }
    }

    private let lock = InlineLock()
    private var tracks: [ObjectIdentifier: Track] = [:]
    private let headerTimeout: UInt64
    private let minBodyRate: Double
    private var stopped = false
    private let onCut: @Sendable (String) -> Void

    /// `headerTimeout` seconds (0 disables the guard); `minBodyRate` bytes per second.
    init(headerTimeout: Double, minBodyRate: Double, onCut: @escaping @Sendable (String) -> Void = { _ in }) {
        self.headerTimeout = UInt64(max(0, min(headerTimeout, 1e6)) * 1e9)
        self.minBodyRate = max(0, minBodyRate)
        self.onCut = onCut
    }

    var isEnabled: Bool { headerTimeout > 0 }

    func start() {
        guard isEnabled else { return }
        let thread = Thread { [self] in run() }
        thread.name = "connection-guard"
        thread.start()
    }

    func stop() { lock.withLock { stopped = true } }

    /// A connection opened: returns its track, to keep in libmicrohttpd's socket context.
    func opened(fd: Int32) -> Track {
        let track = Track(fd: fd, now: MonotonicClock.now())
        lock.withLock { tracks[ObjectIdentifier(track)] = track }
        return track
    }

    /// The connection is about to be closed by libmicrohttpd.
    func closed(_ track: Track) {
        lock.withLock { _ = tracks.removeValue(forKey: ObjectIdentifier(track)) }
    }

    func headComplete(_ track: Track, expectsBody: Bool) {
        let now = MonotonicClock.now()
        lock.withLock {
            track.phase = expectsBody ? .body : .answering
            track.since = now
            track.bodyBytes = 0
        }
    }

    func received(_ track: Track, bytes: Int) {
        lock.withLock { track.bodyBytes += bytes }
    }

    func answering(_ track: Track) {
        lock.withLock { track.phase = .answering }
    }

    /// The answer is sent: the next request head may start.
    func requestEnded(_ track: Track) {
        let baseline = Self.bytesReceived(track.fd) ?? 0
        let now = MonotonicClock.now()
        lock.withLock {
            track.phase = .head
            track.since = now
            track.baseline = baseline
            track.headStarted = 0
        }
    }

    private func run() {
        while true {
            Thread.sleep(forTimeInterval: 0.5)
            let now = MonotonicClock.now()
            var reasons: [String] = []
            let stop = lock.withLock { () -> Bool in
                if stopped { return true }
                sweep(now: now, &reasons)
                return false
            }
            if stop { return }
            for reason in reasons { onCut(reason) }
        }
    }

    /// Cuts the connections past their deadlines (lock held); `reasons` gets one entry a cut.
    private func sweep(now: UInt64, _ reasons: inout [String]) {
        for track in tracks.values where !track.cut {
            switch track.phase {
            case .head:
                if track.headStarted == 0 {
                    if let bytes = Self.bytesReceived(track.fd), bytes > track.baseline { track.headStarted = now }
                } else if Self.elapsed(now, since: track.headStarted) > headerTimeout {
                    cut(track, "the request head was not complete within the header timeout")
                    reasons.append("header-timeout")
                } else if Self.elapsed(now, since: track.headStarted) > Self.leftAfter, DirectSocket.isPeerGone(track.fd) {
                    letGo(track)
                }
            case .body:
                let elapsed = Self.elapsed(now, since: track.since)
                if elapsed > Self.leftAfter, DirectSocket.isPeerGone(track.fd) {
                    letGo(track)
                } else if elapsed > headerTimeout, Double(track.bodyBytes) < minBodyRate * Double(elapsed) / 1e9 {
                    cut(track, "the request body came slower than the minimum body rate")
                    reasons.append("body-rate")
                }
            case .answering:
                break
            }
        }
    }

    /// `now - start`, 0 when another thread stamped `start` after `now` was read.
    private static func elapsed(_ now: UInt64, since start: UInt64) -> UInt64 {
        now > start ? now - start : 0
    }

    /// How long a head or body must have been under way before a closed client side is
    /// taken as the client gone (a head or body that stops there can never be complete): a
    /// client that sends a whole request and then closes its side is answered (its request
    /// is complete within microseconds of its last byte).
    static let leftAfter: UInt64 = 400_000_000

    /// Shuts down the socket of a client that left in the middle of a request (lock held):
    /// libmicrohttpd 0.9.75 kept such a connection, in CLOSE_WAIT, until the header timeout
    /// or the idle timeout, and it counted against `--max-connections-per-address` (found by
    /// an adversarial review: 200 clients that sent part of a head and closed held 200
    /// sockets for 30 s, and their address was refused meanwhile). Not a cut: the client left.
    private func letGo(_ track: Track) {
        track.cut = true
        shutdown(track.fd, Int32(SHUT_RDWR))
    }

    /// Sends a 408 and shuts the socket down (lock held).
    private func cut(_ track: Track, _ detail: String) {
        track.cut = true
        let problem = ProblemDetails(status: 408, type: "/problems/request-timeout", title: "Request timeout", detail: detail)
        let bytes = problem.rawHTTPResponse()
        _ = bytes.withUnsafeBytes { send(track.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        shutdown(track.fd, Int32(SHUT_RDWR))
    }

    /// The kernel's count of bytes received on a TCP socket (`tcpi_bytes_received`, Linux ≥
    /// 4.1), or nil. Read through a raw buffer at its UAPI offset: Glibc's `tcp_info` lacks it.
    static func bytesReceived(_ fd: Int32) -> UInt64? {
        let offset = 128
        // On the stack: a heap array here cost about 650 instructions a request (the
        // array's storage metadata is looked up at run time).
        return withUnsafeTemporaryAllocation(byteCount: 256, alignment: 8) { info -> UInt64? in
            info.initializeMemory(as: UInt8.self, repeating: 0)
            var length = socklen_t(info.count)
            let status = getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, info.baseAddress, &length)
            guard status == 0, Int(length) >= offset + 8 else { return nil }
            return UnsafeRawBufferPointer(info).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        }
    }
}

extension ProblemDetails {
    /// The whole HTTP/1.1 message of this problem, with `Connection: close`, for the rare
    /// answers written straight to a socket (when libmicrohttpd can no longer queue one).
    func rawHTTPResponse(requestID: String? = nil) -> [UInt8] {
        let response = requestID.map { self.response.tagged(requestID: $0) } ?? self.response
        let body = response.bodyBytes
        var head = "HTTP/1.1 \(status) \(title)\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + body
    }
}
