import Foundation
import Logging

/// Shared, thread-safe service state: readiness.
final class ServiceState: @unchecked Sendable {
    private let lock = NSLock()
    private var draining = false

    var isDraining: Bool { lock.withLock { draining } }

    func beginDraining() { lock.withLock { draining = true } }
}

/// The running service: daemon, pacer and streams, from start-up to a drained exit.
///
/// Each connection needs a descriptor; the usual soft limit of 1024 would refuse clients long
/// before `--max-connections`, so start-up raises it toward the hard limit.
final class MotionService {
    let configuration: ServerConfiguration
    let logger: Logger
    let state = ServiceState()
    let metrics = ServiceMetrics()
    let streams: StreamRegistry
    let sessions: SessionRegistry
    let pacer = StreamPacer()

    init(configuration: ServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let metrics = self.metrics
        streams = StreamRegistry { metrics.setOpenStreams($0) }
        sessions = SessionRegistry(maxSessions: configuration.maxSessions, idleTTL: configuration.sessionTTL, metrics: metrics)
    }

    /// Serves until SIGTERM or SIGINT, then drains and returns.
    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        // Block the stop signals before any thread starts (threads inherit the mask), so one
        // that arrives at any moment stays pending until `sigwait` below takes it.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGTERM)
        sigaddset(&stopSignals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

        raiseDescriptorLimit()
        let handlers = Handlers(configuration: configuration, state: state, streams: streams, sessions: sessions, metrics: metrics)
        let daemon = HTTPDaemon(configuration: configuration, router: handlers.router(), pacer: pacer, metrics: metrics, logger: logger,
                                state: state)
        let pacerRefused = pacer.start()
        sessions.startJanitor()
        try daemon.start()
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        print("motion-server listening on http://\(host):\(daemon.port)")
        fflush(nil)
        logger.info("listening", metadata: ["port": "\(daemon.port)", "threads": "\(configuration.threads)",
                                            "pacer-nice": pacerRefused == nil ? "\(StreamPacer.niceness)" : "unchanged"])
        if let pacerRefused {
            logger.notice("the stream pacer runs at the process's priority: allow nice \(StreamPacer.niceness) (CAP_SYS_NICE, or RLIMIT_NICE of \(20 - StreamPacer.niceness)) for frames to go before request handling",
                          metadata: ["error": "\(String(cString: strerror(pacerRefused)))"])
        }

        var received: Int32 = 0
        sigwait(&stopSignals, &received)
        logger.info("draining", metadata: ["open-streams": "\(streams.count)", "requests": "\(daemon.requestsInFlight)"])
        // Stop accepting; answer every request already accepted (POSTs arriving on open
        // connections are refused with 503 and Connection: close); end the streams with their
        // end line; then close what is left.
        state.beginDraining()
        daemon.quiesce()
        streams.drainAll()
        let deadline = Date(timeIntervalSinceNow: configuration.drainTimeout)
        while streams.count > 0 || daemon.requestsInFlight > 0, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        if streams.count > 0 || daemon.requestsInFlight > 0 {
            logger.warning("drain timeout: closing connections", metadata: ["open-streams": "\(streams.count)", "requests": "\(daemon.requestsInFlight)"])
        }
        // No direct write may be in flight once the daemon starts closing connections.
        pacer.stop()
        streams.stopDirectWrites()
        daemon.stop()
        sessions.stopJanitor()
        // Free what the sessions hold (their watchers have ended): nothing outlives the drain.
        sessions.endAll()
        logger.info("stopped")
    }

    /// Raises the soft descriptor limit to cover `maxConnections` plus some for the process
    /// itself, as far as the hard limit allows.
    private func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = rlim_t(configuration.maxConnections) + 256
        guard limit.rlim_cur < wanted else { return }
        let raised = min(wanted, limit.rlim_max)
        limit.rlim_cur = raised
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 || raised < wanted {
            logger.warning("descriptor limit below max-connections", metadata: ["limit": "\(raised)", "max-connections": "\(configuration.maxConnections)"])
        }
    }
}
