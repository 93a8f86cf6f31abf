import Foundation
import Prometheus

/// The service's Prometheus metrics, served at `GET /metrics`.
///
/// Route labels are route patterns (`/v1/sessions/{id}`), never raw paths, so their number
/// is bounded.
final class ServiceMetrics: @unchecked Sendable {
    let registry = PrometheusCollectorRegistry()
    private let lock = NSLock()
    private var requestCounters: [String: Counter] = [:]
    private var durations: [String: DurationHistogram] = [:]
    private let openStreams: Gauge
    private let liveSessions: Gauge
    private let framesSentCounter: Counter
    private let framesDroppedCounter: Counter

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
        framesSentCounter = registry.makeCounter(descriptor: Self.name("frames_sent", "total", "Frames written to streams and session watchers"))
        framesDroppedCounter = registry.makeCounter(descriptor: Self.name("frames_dropped", "total", "Frames skipped for session watchers that fell behind"))
    }

    /// Counts a request and records its duration (to the response headers, for streams).
    func recordRequest(route: String, method: String, status: Int, seconds: Double) {
        let key = "\(route) \(method) \(status)"
        let (counter, histogram) = lock.withLock { () -> (Counter, DurationHistogram) in
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
            return (counter, histogram)
        }
        counter.increment()
        histogram.recordNanoseconds(Int64(seconds * 1e9))
    }

    func setOpenStreams(_ count: Int) { openStreams.set(Double(count)) }
    func setLiveSessions(_ count: Int) { liveSessions.set(Double(count)) }
    func framesSent(_ count: Int) { if count > 0 { framesSentCounter.increment(by: Int64(count)) } }
    func framesDropped(_ count: Int) { if count > 0 { framesDroppedCounter.increment(by: Int64(count)) } }

    func render() -> [UInt8] { registry.emitToBuffer() }
}
