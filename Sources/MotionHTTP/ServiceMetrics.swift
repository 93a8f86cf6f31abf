import Foundation
import Prometheus
import MotionEngine
import Synchronization

/// The service's Prometheus metrics, served at `GET /metrics`.
///
/// Route labels are route patterns (`/v1/sessions/{id}`), never raw paths, so their number
/// is bounded.
final class ServiceMetrics: @unchecked Sendable {
    let registry = PrometheusCollectorRegistry()
    private let lock = InlineLock()
    private var requestCounters: [String: Counter] = [:]
    private var durations: [String: DurationHistogram] = [:]
    private let openStreams: Gauge
    private let liveSessions: Gauge
    private let liveSegments: Gauge
    private let framesSentCounter: Counter
    private let framesDroppedCounter: Counter
    private let headerTimeoutCuts: Counter
    private let bodyRateCuts: Counter
    private let computedInline: Counter
    private let computedOnPool: Counter
    private let skippedComputations: Counter
    private let cancelledComputations: Counter
    private let directWrites: Counter
    private let pulledWrites: Counter
    /// The counter and histogram of each (route, method, status) seen, found by the strings'
    /// identity first: routes and methods are the same few strings every time.
    private var recent: [(route: String, method: String, status: Int, counter: Counter, histogram: DurationHistogram)] = []

    static let durationBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
    ]

    /// Immutable descriptors; `MetricNameDescriptor` is not marked Sendable upstream.
    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "motion", metricName: metric, unitName: unit, helpText: help)
    }

    private nonisolated(unsafe) static let requests = name("http_requests", "total", "HTTP requests by route, method and status")
    private nonisolated(unsafe) static let requestDuration = name("http_request_duration", "seconds", "Time to answer a request (to the headers, for streams)")

    init() {
        openStreams = registry.makeGauge(descriptor: Self.name("open", "streams", "Open /v1/streams responses and session watchers"))
        liveSessions = registry.makeGauge(descriptor: Self.name("live", "sessions", "Sessions in the registry"))
        liveSegments = registry.makeGauge(descriptor: Self.name("live", "segments", "Curve segments held by open streams and live sessions together (bounded by --max-live-segments)"))
        framesSentCounter = registry.makeCounter(descriptor: Self.name("frames_sent", "total", "Frames written to streams and session watchers"))
        framesDroppedCounter = registry.makeCounter(descriptor: Self.name("frames_dropped", "total", "Frames skipped for session watchers that fell behind"))
        let cuts = Self.name("connections_cut", "total", "Connections closed for sending a request too slowly, by reason")
        headerTimeoutCuts = registry.makeCounter(descriptor: cuts, labels: [("reason", "header-timeout")])
        bodyRateCuts = registry.makeCounter(descriptor: cuts, labels: [("reason", "body-rate")])
        let computations = Self.name("computations", "total", "POST/PUT requests computed, by thread: on the connection thread (small work) or on the compute pool")
        computedInline = registry.makeCounter(descriptor: computations, labels: [("thread", "connection")])
        computedOnPool = registry.makeCounter(descriptor: computations, labels: [("thread", "compute")])
        skippedComputations = registry.makeCounter(descriptor: Self.name("computations_skipped", "total", "Requests not computed: their client had gone when a compute thread took them"))
        cancelledComputations = registry.makeCounter(descriptor: Self.name("computations_cancelled", "total", "Computations on a compute thread stopped because their client left while they ran"))
        let writes = Self.name("stream_writes", "total", "Chunks of stream and watcher output handed to the socket, by path: written directly by the pacer, or read by libmicrohttpd")
        directWrites = registry.makeCounter(descriptor: writes, labels: [("path", "direct")])
        pulledWrites = registry.makeCounter(descriptor: writes, labels: [("path", "libmicrohttpd")])
    }

    /// Counts a chunk of stream output by the way it reached the socket (`PacedStream`).
    func streamWrite(direct: Bool) { (direct ? directWrites : pulledWrites).increment() }

    /// Counts a computation by where it ran (`HTTPDaemon`).
    func computed(inline: Bool) { (inline ? computedInline : computedOnPool).increment() }

    /// Counts a queued computation dropped because its client had gone (`HTTPDaemon`).
    func computationSkipped() { skippedComputations.increment() }

    /// Counts a running computation stopped because its client had gone (`HTTPDaemon`).
    func computationCancelled() { cancelledComputations.increment() }

    /// Method labels: the methods the service answers; any other is counted as `other`, so a
    /// client cannot add label values (and memory) by inventing methods.
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]

    /// Counts a request and records its duration (to the response headers, for streams).
    /// `route` is a route pattern, `unmatched` or `rejected`; the status is a number the
    /// server chose; the method is folded to a known set.
    func recordRequest(route: String, method rawMethod: String, status: Int, seconds: Double) {
        let method = Self.knownMethods.contains(rawMethod) ? rawMethod : "other"
        let (counter, histogram) = lock.withLock { () -> (Counter, DurationHistogram) in
            // The handles are made once per label set and then found here without building a
            // key string or hashing (`recordRequest` 5,600 → 3,100 instructions a request,
            // callgrind). There are at most routes × 7 methods ×
            // the statuses the server chooses of them, so the list stays short.
            for entry in recent where entry.status == status && entry.route == route && entry.method == method {
                return (entry.counter, entry.histogram)
            }
            let key = "\(route) \(method) \(status)"
            let counter = requestCounters[key] ?? {
                let made = registry.makeCounter(descriptor: Self.requests,
                                                labels: [("route", route), ("method", method), ("status", String(status))])
                requestCounters[key] = made
                return made
            }()
            let histogram = durations[route] ?? {
                let made = registry.makeDurationHistogram(descriptor: Self.requestDuration, labels: [("route", route)],
                                                          buckets: Self.durationBuckets)
                durations[route] = made
                return made
            }()
            if recent.count < Self.maxRecent { recent.append((route, method, status, counter, histogram)) }
            return (counter, histogram)
        }
        counter.increment()
        histogram.recordNanoseconds(Int64(seconds * 1e9))
    }

    /// Label sets found by `recent` (more are found through `requestCounters`).
    static let maxRecent = 64

    func setOpenStreams(_ count: Int) {
        openStreamCount.store(count, ordering: .relaxed)
        openStreams.set(Double(count))
    }

    /// Open streams and session watchers (the gauge's value), for `HTTPDaemon`'s inline
    /// budget.
    let openStreamCount = Atomic<Int>(0)
    var streamsOpen: Bool { openStreamCount.load(ordering: .relaxed) > 0 }
    func setLiveSessions(_ count: Int) { liveSessions.set(Double(count)) }
    func framesSent(_ count: Int) { if count > 0 { framesSentCounter.increment(by: Int64(count)) } }
    func framesDropped(_ count: Int) { if count > 0 { framesDroppedCounter.increment(by: Int64(count)) } }

    func connectionCut(_ reason: String) {
        (reason == "header-timeout" ? headerTimeoutCuts : bodyRateCuts).increment()
    }

    /// The text exposition; `liveSegments` is the held total of `LiveSegmentBudget`, read
    /// when the metrics are rendered (it changes on every stream and session, and is only
    /// ever read here).
    func render(liveSegments held: Int) -> [UInt8] {
        liveSegments.set(Double(held))
        return registry.emitToBuffer()
    }
}
