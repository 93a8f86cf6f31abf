import Foundation
import Glibc
import MotionEngine

/// Everything the server can be told at start-up (flags, or `MOTION_*` environment variables).
struct ServerConfiguration: Sendable {
    /// Address to bind, IPv4 or IPv6 literal.
    var host = "127.0.0.1"
    /// TCP port; 0 binds an ephemeral port.
    var port: UInt16 = 8080
    /// Worker threads in libmicrohttpd's pool; default: the CPUs this process may use.
    var threads = ServerConfiguration.cpuCount
    /// Largest accepted request body, bytes (413 beyond).
    var maxBodyBytes = 1 << 20
    /// Seconds of inactivity before libmicrohttpd closes a connection.
    var connectionTimeout: UInt32 = 30
    /// Idle seconds before TCP keepalive probes a connection (0: no probes). A client that
    /// vanished without a FIN or RST (a powered-off device, a dropped NAT mapping) is found
    /// after this plus `tcpKeepaliveProbes` probes `tcpKeepaliveInterval` apart: the socket
    /// then fails, and a stream waiting on it (a paused session's watcher sends nothing) is
    /// closed at its next look at the socket.
    var tcpKeepalive: UInt32 = 60
    static let tcpKeepaliveInterval: Int32 = 10
    static let tcpKeepaliveProbes: Int32 = 3
    /// `--tcp-keepalive` bounds: Linux's TCP_KEEPIDLE takes at most 32,767 s.
    static let tcpKeepaliveRange: ClosedRange<UInt32> = 0...32_767
    /// Simultaneous connections (libmicrohttpd refuses more).
    var maxConnections: UInt32 = 10_000
    /// Simultaneous connections from one client address (0: no limit); more are refused at
    /// accept, so that one address cannot take every connection.
    var maxConnectionsPerAddress: UInt32 = 1_000
    /// Seconds a request head may take from its first byte, and a body before the minimum
    /// rate applies (0 turns both checks off): 408 and close beyond.
    var headerTimeout = 10.0
    /// Slowest average body rate, bytes per second, once `headerTimeout` has passed.
    var minBodyRate = 1_024
    /// Threads computing POST answers, apart from the connection threads.
    var computeThreads = ServerConfiguration.cpuCount
    /// POST requests that may wait for a compute thread (503 with Retry-After beyond).
    var maxQueuedComputations = 64
    /// Bytes of answers queued for clients that have not read them yet (503 with Retry-After
    /// beyond; answers up to 4 KiB are always sent).
    var maxHeldResponseBytes = 256 * 1024 * 1024
    /// Bytes of request bodies received and not yet handed to their handlers, all
    /// connections together (503 with Retry-After, and the connection closed, for a body
    /// that would pass it). Each body is bounded by `maxBodyBytes`, but not their sum: 3,000
    /// connections sending 1 MB bodies slowly held 3.2 GB.
    var maxHeldRequestBytes = 256 * 1024 * 1024
    /// Per-connection memory pool for the request head and libmicrohttpd's buffers, bytes
    /// (431 when a request head does not fit). libmicrohttpd zeroes the whole pool before
    /// every request of a keep-alive connection, so its size is paid on each request: 64 KiB
    /// cost 98,239 instructions a request (callgrind, small document), 16 KiB 24,511.
    var connectionMemoryBytes = ServerConfiguration.defaultConnectionMemoryBytes
    static let defaultConnectionMemoryBytes = 16 * 1024
    /// `--connection-memory` bounds: below 4 KiB libmicrohttpd cannot hold an ordinary head
    /// and its answer's; above 1 MiB a connection costs more than its work.
    static let connectionMemoryRange = (4 * 1024)...(1024 * 1024)
    /// Largest `POST`/`PUT` body computed at once on the connection thread instead of on the
    /// compute pool (0: every computation goes to the pool). See `inlineMaxSamples`: a
    /// document found too large once decoded is decoded again on the pool, so this bound
    /// keeps that waste small. At 8 KiB the 100-track document (3.4 KB, 60,100 samples) was
    /// decoded twice: 1,788 → 1,907 instructions a sample; at 1 KiB it goes to the pool at once.
    var inlineMaxBodyBytes = 1024
    /// Largest frames × tracks of a `/v1/timelines` answer computed on the connection thread;
    /// more goes to the compute pool. A sample costs about 1,800 instructions (decode, compile,
    /// sample, encode), so 2,048 samples hold a connection thread for about a millisecond.
    var inlineMaxSamples = 2_048
    /// Simultaneous `/v1/streams` responses (503 beyond).
    var maxStreams = 10_000
    /// Bytes a stream encodes ahead of what the socket has accepted.
    var streamChunkBytes = 64 * 1024
    /// Paced frames written by the pacer straight to the suspended connection's socket
    /// (`PacedStream.wake()`), rather than by resuming the connection for each one.
    var streamDirectWrites = true
    /// Phases of the 60 Hz grid streams and session clocks start on
    /// (`StreamPacer.gridTick(atOrAfter:phases:)`): four with direct writes, so that each
    /// wake writes a quarter of the streams; one when every frame resumes its connection, so
    /// that libmicrohttpd walks its suspended connections once a tick.
    var pacerPhases: UInt64 { streamDirectWrites ? 4 : 1 }
    /// Live sessions at once (503 beyond).
    var maxSessions = 1_000
    /// Curve segments held by open streams and live sessions together (`LiveSegmentBudget`;
    /// 503 beyond): about 1 GB of tween keyframes at most, 2.5 GB of plain tracks.
    var maxLiveSegments = 10_000_000
    /// Watchers of one session (429 beyond).
    var maxWatchers = 100
    /// Seconds a session may go unwatched before it is removed.
    var sessionTTL = 300.0
    /// Most frames a session watcher is sent at once; a reader further behind skips the
    /// older frames (counted in `motion_frames_dropped_total`).
    var maxBacklogFrames = 120
    /// Most command echoes waiting for one session watcher; a watcher further behind (its
    /// client stopped reading while commands kept coming) is ended with
    /// `"interrupted":"backlog"`.
    var maxBacklogEvents = 1_024
    /// Most values one session's retargets may set (each number of a `to` counts one); 409
    /// beyond.
    var maxRetargets = 10_000
    /// Seconds SIGTERM waits for open streams to finish before stopping.
    var drainTimeout = 10.0
    /// `--cors-origin`: origins allowed to call from a browser page elsewhere (nil: none).
    var cors: CORSPolicy?
    /// Limits on what one document may ask for.
    var limits = EngineLimits.default
    /// Documents in one `/v1/timelines/batch` request (422 beyond).
    var maxBatchDocuments = 100
    /// This replica's name: sent as `X-Instance-Id` on every answer and in every log line.
    var instanceID: String?

    /// 1…64 characters of `A–Z a–z 0–9 . _ -`.
    static func isValidInstanceID(_ id: String) -> Bool {
        id.utf8.count <= 64 && RequestID.isValid(id) && !id.contains(":")
    }

    /// CPUs this process may use: the online CPUs, narrowed to those its affinity mask allows
    /// (`taskset`, a container's `--cpuset-cpus`, Kubernetes' static CPU manager) and by a
    /// cgroup CPU quota (a container's `--cpus`), rounded up. Threads beyond the CPUs a
    /// process may run on only take turns: pinned to one CPU with two connection threads,
    /// the small document's p99 under wrk (32 connections) was 4.43 ms, with one 0.86 ms, at
    /// the same 49,000 requests a second (p50 0.34 and 0.63 ms). Read once a process: every
    /// configuration made (the server's, `render`'s, the fuzz targets') takes it twice.
    static let cpuCount: Int = {
        var count = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        if let allowed = affinityCPUCount() { count = min(count, allowed) }
        if let quota = cgroupCPUQuota() { count = min(count, max(1, Int(quota.rounded(.up)))) }
        return count
    }()

    /// CPUs in this process's affinity mask, nil when it cannot be read: the `Cpus_allowed`
    /// line of /proc/self/status (`sched_getaffinity`'s mask as hexadecimal words separated
    /// by commas; Swift's Glibc module does not declare `sched_getaffinity`, a GNU extension).
    static func affinityCPUCount() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return affinityCPUCount(status: status)
    }

    /// The CPUs of the `Cpus_allowed` line in the text of a /proc/<pid>/status file.
    static func affinityCPUCount(status: String) -> Int? {
        for line in status.split(separator: "\n") where line.hasPrefix("Cpus_allowed:") {
            var count = 0
            for character in line.dropFirst("Cpus_allowed:".count) where character != "," && !character.isWhitespace {
                guard let digit = character.hexDigitValue else { return nil }
                count += digit.nonzeroBitCount
            }
            return count > 0 ? count : nil
        }
        return nil
    }

    /// CPUs granted by the cgroup (v2 `cpu.max`, or v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`),
    /// nil when unlimited or unknown.
    static func cgroupCPUQuota() -> Double? {
        func read(_ path: String) -> String? {
            (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if let line = read("/sys/fs/cgroup/cpu.max") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let quota = Double(parts[0]), let period = Double(parts[1]), quota > 0, period > 0 {
                return quota / period
            }
            return nil
        }
        if let quota = read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").flatMap(Double.init),
           let period = read("/sys/fs/cgroup/cpu/cpu.cfs_period_us").flatMap(Double.init), quota > 0, period > 0 {
            return quota / period
        }
        return nil
    }
}
