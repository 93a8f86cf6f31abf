import CMicroHTTPD
import Foundation
import Logging
import MotionEngine

/// The libmicrohttpd adapter: every unsafe pointer and C callback of the server lives here.
///
/// One daemon with an internal epoll thread and a worker pool; suspend/resume on for
/// streams and computations. The request head is checked on the headers-only call (framing,
/// see `RequestHead`) and a bad one is answered there: 0.9.75 then closes the connection, so
/// nothing after a bad head is read as another request. A request's body is collected
/// (bounded by `maxBodyBytes`) across the access handler's calls, then the final call answers:
/// GET, HEAD and DELETE at once on the connection thread (they are cheap), POST and PUT on the
/// `ComputePool` while the connection is suspended, so a heavy document never holds up the
/// connection threads.
///
/// Answers with a body are handed to libmicrohttpd in a buffer it frees through a callback, so
/// the bytes held for clients that have not read their answers yet are counted and bounded
/// (`maxHeldResponseBytes`: 503 beyond).
final class HTTPDaemon: @unchecked Sendable {
    private let configuration: ServerConfiguration
    private let router: Router
    private let pacer: StreamPacer
    private let metrics: ServiceMetrics
    private let logger: Logger
    private let state: ServiceState?
    private var daemon: OpaquePointer?
    let compute: ComputePool
    let connectionGuard: ConnectionGuard
    private let counters: HTTPDaemonCounters
    /// Where streams count their large writes not yet sent, beside complete answers
    /// (`PacedStream.admit`): the same admission as `answer`'s, against the same limit.
    private let heldLedger: HeldBytesLedger
    private let inlineBudget = InlineBudget()
    private let libraryLog = LibraryLog()

    /// `--connection-memory`, for the URI logger.
    var connectionMemoryBytes: Int { configuration.connectionMemoryBytes }
    /// `--tcp-keepalive` (validated to 0…32767), for the connection notifier.
    private var keepaliveIdle: Int32 { Int32(clamping: configuration.tcpKeepalive) }

    /// Whether inline work is held to `InlineBudget` while streams are open: when paced
    /// frames wait for the connection threads (`--stream-writes libmicrohttpd`), or when the
    /// pacer could not get ahead of them (no `CAP_SYS_NICE` or `RLIMIT_NICE`), so that inline
    /// work would take the core from its frames as an equal.
    private var inlineBudgeted: Bool { !configuration.streamDirectWrites || !pacer.runsAhead }

    /// Requests accepted and not yet answered to the end (streams included).
    var requestsInFlight: Int { counters.lock.withLock { counters.inFlight } }

    /// The bound port, known once `start()` returns.
    private(set) var port: UInt16 = 0

    init(configuration: ServerConfiguration, router: Router, pacer: StreamPacer, metrics: ServiceMetrics, logger: Logger,
         state: ServiceState? = nil) {
        self.configuration = configuration
        self.router = router
        self.pacer = pacer
        self.metrics = metrics
        self.logger = logger
        accessLog = logger.handler as? LineLogHandler
        self.state = state
        let counters = HTTPDaemonCounters(heldLimit: configuration.maxHeldResponseBytes)
        self.counters = counters
        heldLedger = HeldBytesLedger(take: { counters.take($0) }, give: { counters.release($0) })
        self.compute = ComputePool(threads: configuration.computeThreads, maxQueued: configuration.maxQueuedComputations)
        self.connectionGuard = ConnectionGuard(headerTimeout: configuration.headerTimeout, minBodyRate: Double(configuration.minBodyRate)) {
            metrics.connectionCut($0)
        }
    }

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    func start() throws {
        var storage = sockaddr_storage()
        let isIPv6 = try Self.resolve(configuration.host, port: configuration.port, into: &storage)
        var flags = MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
        if isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        let cls = Unmanaged.passUnretained(self).toOpaque()
        compute.start()
        connectionGuard.start()
        daemon = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                cmhd_start_daemon(flags, configuration.port, address,
                                  accessHandler, cls, requestCompleted, cls,
                                  uriLogger, connectionNotifier, cls,
                                  UInt32(configuration.threads), configuration.connectionTimeout,
                                  configuration.maxConnections, configuration.maxConnectionsPerAddress,
                                  configuration.connectionMemoryBytes, 1024)
            }
        }
        guard let daemon else {
            throw StartError(description: "could not listen on \(configuration.host):\(configuration.port) (address in use, or not an address of this machine)")
        }
        port = cmhd_bound_port(daemon)
    }

    /// Stops accepting new connections; open ones carry on.
    func quiesce() {
        guard let daemon else { return }
        let socket = MHD_quiesce_daemon(daemon)
        if socket >= 0 { close(socket) }
    }

    /// Closes every connection and joins the threads. No stream may be suspended, and no
    /// computation running (its connection is suspended): the computations still waiting or
    /// running are cancelled (their connections closed without an answer), and this waits
    /// for them to stop, at the engine's next look.
    func stop() {
        guard let daemon else { return }
        compute.cancelAll()
        compute.waitIdle(until: .distantFuture)
        MHD_stop_daemon(daemon)
        self.daemon = nil
        compute.stop()
        connectionGuard.stop()
    }

    /// Parses an IP literal or resolves a host name to a socket address.
    private static func resolve(_ host: String, port: UInt16, into storage: inout sockaddr_storage) throws -> Bool {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let info = result, let address = info.pointee.ai_addr else {
            throw StartError(description: "cannot resolve host '\(host)'")
        }
        defer { freeaddrinfo(result) }
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(info.pointee.ai_addrlen)))
        }
        return info.pointee.ai_family == AF_INET6
    }

    // MARK: - Request handling (called on libmicrohttpd threads)

    fileprivate func handle(connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>,
                            version: UnsafePointer<CChar>?,
                            uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>,
                            context slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        let context: RequestContext
        if let raw = slot.pointee {
            context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        } else {
            // No target was logged (cannot happen with the URI logger installed): start here.
            context = RequestContext(rawTarget: String(cString: url))
            slot.pointee = Unmanaged.passRetained(context).toOpaque()
        }
        if !context.headSeen {
            // Headers only: set up the request, and answer here what must not be read. The C
            // strings become Swift strings here, once (not on each of the request's calls).
            context.headSeen = true
            context.method = String(cString: method)
            context.url = String(cString: url)
            context.track = Self.track(connection)
            context.arrivedWhileDraining = state?.isDraining ?? false
            context.fields = Self.fields(connection)
            context.requestID = RequestID.accept(context.header(.requestID))
            if logger.logLevel <= .info {
                if let known = context.track?.clientAddress {
                    context.client = known
                } else {
                    context.client = Self.clientAddress(cmhd_connection_fd(connection))
                    context.track?.clientAddress = context.client
                }
            }
            counters.lock.withLock { counters.inFlight += 1 }
            context.counted = true
            context.bodyCounters = counters
            context.version = version.map { String(cString: $0) } ?? ""
            let head = RequestHead(method: context.method, rawTarget: context.rawTarget,
                                   version: context.version, fields: context.fields)
            if let problem = head.problem(maxBodyBytes: configuration.maxBodyBytes, poolBytes: configuration.connectionMemoryBytes) {
                var response = problem.response
                response.headers.append(("Connection", "close"))
                return answer(response, route: "rejected", context: context, on: connection)
            }
            if let track = context.track { connectionGuard.headComplete(track, expectsBody: head.expectsBody) }
            return MHD_Result.YES
        }
        let size = uploadDataSize.pointee
        if size > 0 {
            if let uploadData {
                if context.body.count + size > configuration.maxBodyBytes {
                    context.body = []
                    context.releaseBody()
                    writeRaw(ProblemDetails.payloadTooLarge(limit: configuration.maxBodyBytes), status: 413, context: context, on: connection)
                    return MHD_Result.NO
                }
                // The bodies being received are bounded together (`--max-held-request-bytes`).
                let admitted = counters.lock.withLock { () -> Bool in
                    guard counters.bodyBytes + size <= configuration.maxHeldRequestBytes else { return false }
                    counters.bodyBytes += size
                    return true
                }
                guard admitted else {
                    context.body = []
                    context.releaseBody()
                    let problem = ProblemDetails.unavailable(
                        "the request bodies being received hold the most bytes allowed (max-held-request-bytes); try again")
                    writeRaw(problem, status: 503, context: context, on: connection)
                    return MHD_Result.NO
                }
                context.heldBodyBytes += size
                uploadData.withMemoryRebound(to: UInt8.self, capacity: size) { bytes in
                    context.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: size))
                }
                if let track = context.track { connectionGuard.received(track, bytes: size) }
            }
            uploadDataSize.pointee = 0
            return MHD_Result.YES
        }
        // The final call: answer, or pick up what a computation produced.
        if let track = context.track { connectionGuard.answering(track) }
        if let (response, route) = context.takeComputed() {
            return answer(response, route: route, context: context, on: connection)
        }
        // Not computed: the client had gone. Close, as libmicrohttpd does for a reset.
        if context.takeSkipped() { return MHD_Result.NO }
        if context.computing { return MHD_Result.YES }
        var request = HTTPRequest(method: context.method, path: context.url,
                                  query: Self.queryArguments(connection),
                                  contentType: context.header(.contentType),
                                  accept: context.header(.accept),
                                  body: context.body,
                                  acceptEncoding: context.header(.acceptEncoding),
                                  origin: context.header(.origin),
                                  accessControlRequestMethod: context.header(.accessControlRequestMethod))
        request.arrivedWhileDraining = context.arrivedWhileDraining
        request.ifNoneMatch = context.header(.ifNoneMatch)
        context.body = []
        context.releaseBody()
        if request.method == "POST" || request.method == "PUT" {
            request.heldAnswersAtLimit = counters.heldAtLimit
        } else {
            // Reads are answered here, bar the few that find a large answer to make (a large
            // session's state): those answer `computeOnPool` and are made on the pool.
            request.inlineSampleLimit = configuration.inlineMaxSamples
            let (response, route) = Self.handleInline(request, router: router)
            guard response.isComputeOnPool else { return answer(response, route: route, context: context, on: connection) }
            request.inlineSampleLimit = nil
            return computeOnPool(request, context: context, on: connection)
        }
        // Small work is computed here, on the connection thread: handing it to the pool
        // (suspend, a thread wake, resume through libmicrohttpd's eventfd) cost more than the
        // work itself. Small document: 13.8 → 6.1 system calls a request (strace: no eventfd
        // write and read, futex wake, epoll_ctl; fewer epoll_wait), 451,500 → 445,300
        // user-space instructions (callgrind; the kernel's part is not counted). A handler
        // that finds the work larger than `inlineMaxSamples` once decoded answers
        // `computeOnPool`, and so does any handler not marked inline; `inlineBudget` keeps a
        // flood of small requests from holding up the streams the connection threads resume.
        if request.body.count <= configuration.inlineMaxBodyBytes, configuration.inlineMaxBodyBytes > 0,
           let start = inlineBudget.admit(now: MonotonicClock.now(), streamsOpen: inlineBudgeted && metrics.streamsOpen) {
            request.inlineSampleLimit = configuration.inlineMaxSamples
            let (response, route) = Self.handleInline(request, router: router)
            inlineBudget.spend(since: start, now: MonotonicClock.now())
            if !response.isComputeOnPool {
                metrics.computed(inline: true)
                return answer(response, route: route, context: context, on: connection)
            }
            request.inlineSampleLimit = nil
        }
        return computeOnPool(request, context: context, on: connection)
    }

    /// `request` answered on the connection thread, or `computeOnPool` when it needs more
    /// than that thread may spend: a handler says so for samples and segments, and springs
    /// whose rest times take more than `SpringSettling.inlineChecks` grid checks run out of
    /// the budget given here (what they answered is dropped; no handler changes state
    /// before its springs have settled). A spring near 1,000 Hz held a connection thread
    /// 0.4 s, and 200 of them in one document 78 s, before.
    static func handleInline(_ request: HTTPRequest, router: Router) -> (response: HTTPResponse, route: String) {
        let budget = SpringSettling.Budget.reused(checks: SpringSettling.inlineChecks)
        let previous = budget.install()
        defer { SpringSettling.Budget.uninstall(previous: previous) }
        let (response, route) = router.handle(request)
        return budget.isExhausted ? (.computeOnPool, route) : (response, route)
    }

    /// Suspends `connection` and queues `request` for the compute pool, which answers it and
    /// resumes the connection; a 503 at once when the pool's queue is full.
    private func computeOnPool(_ request: HTTPRequest, context: RequestContext, on connection: OpaquePointer) -> MHD_Result {
        context.computing = true
        MHD_suspend_connection(connection)
        let router = self.router, computing = request, requestID = context.requestID, metrics = self.metrics
        let resumable = MHDConnection(connection, directWrites: false)
        // A client that leaves while its request is computed has it stopped at the engine's
        // next look (`Cancellation`): the pool's watch thread looks at the socket every 50 ms.
        let cancellation = Cancellation()
        let watch = ComputePool.Watch(cancellation: cancellation, isGone: { resumable.isPeerGone })
        let accepted = compute.submit({
            // A client that reset or closed its connection while its request waited in the
            // queue is not computed for (up to `--max-queued-computations` documents of a
            // second or more each): libmicrohttpd does not watch a suspended connection's
            // socket, so only a look at it tells. A client that only shut down its sending
            // side counts as gone too, as nginx counts it (499).
            if resumable.isPeerGone || cancellation.isCancelled {
                metrics.computationSkipped()
                context.skip()
                resumable.resume()
                return
            }
            metrics.computed(inline: false)
            // Every spring the request settles draws on one budget of grid checks.
            let previous = SpringSettling.Budget.reused(checks: SpringSettling.maxChecks).install()
            let (response, route) = router.handle(computing)
            SpringSettling.Budget.uninstall(previous: previous)
            if cancellation.stoppedWork {
                metrics.computationCancelled()
                context.skip()
                resumable.resume()
                return
            }
            context.finish(response.tagged(requestID: requestID), route: route)
            resumable.resume()
        }, watch: watch)
        if !accepted {
            MHD_resume_connection(connection)
            context.computing = false
            let problem = ProblemDetails.unavailable(
                "the server is computing \(compute.threadCount) documents and \(compute.maxQueued) more are waiting (max-queued-computations); try again")
            return answer(problem.response, route: "rejected", context: context, on: connection)
        }
        return MHD_Result.YES
    }

    /// A message from libmicrohttpd (a refused request, a failed accept…): to the service's
    /// log at notice level, at most `LibraryLog.perSecond` a second, so that a client sending
    /// bad requests cannot flood the log; the suppressed ones are counted in the next line.
    fileprivate func libraryMessage(_ text: String) {
        guard let suppressed = libraryLog.admit(now: MonotonicClock.now()) else { return }
        var metadata: Logger.Metadata = ["source": "libmicrohttpd"]
        if suppressed > 0 { metadata["suppressed-before"] = "\(suppressed)" }
        logger.notice("\(text.trimmingCharacters(in: .whitespacesAndNewlines))", metadata: metadata)
    }

    /// Queues the response and records the request in the metrics.
    private func answer(_ response: consuming HTTPResponse, route: String, context: RequestContext, on connection: OpaquePointer) -> MHD_Result {
        var response = outgoing(response, context: context)
        // A complete body is held until libmicrohttpd has sent it: it counts against
        // `--max-held-response-bytes` until then. Past the limit an answer over
        // `alwaysHeldBytes` is replaced by a 503, unless it must be delivered (its request
        // changed state, or it is for monitoring; `Router.HeldAnswers`); the replacement is
        // tagged like any answer and recorded with its own status.
        var held: HeldBody?
        if case .bytes(let body) = response.body {
            let holder = HeldBody(holding: body)
            if counters.take(holder.count, regardless: response.alwaysDelivered || holder.count <= Self.alwaysHeldBytes) {
                held = holder
            } else {
                response = outgoing(Router.heldRefusal.response, context: context)
                let refusal = HeldBody(holding: response.bodyBytes)
                _ = counters.take(refusal.count, regardless: true)
                held = refusal
            }
            held?.counters = counters
        }
        if case .stream(let stream) = response.body {
            stream.onClosed = { [logger, id = context.requestID] summary in
                logger.info("stream ended", metadata: [
                    "requestId": .string(id), "frames": .stringConvertible(summary.frames),
                    "dropped": .stringConvertible(summary.dropped), "reason": .string(summary.reason),
                ])
            }
            context.stream = stream
        }
        let result = queue(response, held: held, on: connection,
                           directWrites: configuration.streamDirectWrites && context.version == "HTTP/1.1" && context.method != "HEAD")
        recordRequest(route: route, method: context.method, status: response.status,
                      bytes: response.bodyBytes.count, context: context)
        return result
    }

    /// libmicrohttpd cannot queue an answer in the middle of a body: the problem is written
    /// to the socket and the connection closed (the caller answers NO), rather than read a
    /// body that may never end.
    private func writeRaw(_ problem: ProblemDetails, status: Int, context: RequestContext, on connection: OpaquePointer) {
        let fd = cmhd_connection_fd(connection)
        if fd >= 0 {
            let bytes = problem.rawHTTPResponse(requestID: context.requestID)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        }
        recordRequest(route: "rejected", method: context.method, status: status, bytes: 0, context: context)
    }

    /// An answer as it leaves: tagged with the request id, with the CORS headers for an
    /// allowed origin and the instance id.
    private func outgoing(_ response: consuming HTTPResponse, context: RequestContext) -> HTTPResponse {
        var response = response.tagged(requestID: context.requestID)
            .withCORS(origin: router.cors == nil ? nil : context.header(.origin), cors: router.cors)
        if let instance = configuration.instanceID { response.headers.append(("X-Instance-Id", instance)) }
        return response
    }

    private func recordRequest(route: String, method: String, status: Int, bytes: Int, context: RequestContext) {
        let seconds = Double(MonotonicClock.now() - context.started) / 1e9
        metrics.recordRequest(route: route, method: method, status: status, seconds: seconds)
        context.status = status
        context.bytes = bytes
    }

    /// The access-log line of a request that is over: answered (a stream: ended), or given up
    /// by its client before an answer (status 0).
    private func logAccess(_ context: RequestContext) {
        guard logger.logLevel <= .info else { return }
        let seconds = Double(MonotonicClock.now() - context.started) / 1e9
        // A path of at most `loggedPathLength` bytes has at most as many characters: no copy.
        let path = context.url.utf8.count <= Self.loggedPathLength ? context.url : String(context.url.prefix(Self.loggedPathLength))
        let record = AccessRecord(requestID: context.requestID, method: context.method, path: path,
                                  status: context.status, bytes: context.stream?.bytesSent ?? context.bytes,
                                  duration: (seconds * 1e6).rounded() / 1e6, client: context.client)
        if let accessLog {
            accessLog.logAccess(record)
        } else {
            logger.info("request", metadata: record.metadata)
        }
    }

    /// The logger's handler when it is the server's own (`LineLogHandler`), which writes
    /// access lines without swift-log's metadata dictionary (`LineLogHandler.logAccess`).
    private let accessLog: LineLogHandler?

    /// Longest path written to the access log (paths can be up to the 64 KiB request head).
    static let loggedPathLength = 512

    private static func text(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The peer's address, `IP:port` (`[IPv6]:port`), or "" when unknown.
    private static func clientAddress(_ fd: Int32) -> String {
        guard fd >= 0 else { return "" }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) == 0 }
        }
        guard found else { return "" }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var ip = address.pointee.sin_addr
                    inet_ntop(AF_INET, &ip, &text, socklen_t(text.count))
                    return "\(Self.text(text)):\(UInt16(bigEndian: address.pointee.sin_port))"
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var ip = address.pointee.sin6_addr
                    inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count))
                    return "[\(Self.text(text))]:\(UInt16(bigEndian: address.pointee.sin6_port))"
                }
            }
        default:
            return ""
        }
    }

    /// The request is over (answered, or the connection dropped).
    ///
    /// A computed answer may never have been queued: libmicrohttpd 0.9.75 keeps a suspended
    /// connection's last event-loop state, so when a computation resumes a connection that
    /// was reading its request, it reads before it calls the access handler again; if the
    /// client reset the connection meanwhile, that read fails and the connection is closed
    /// without the final call. A `/v1/streams` answer made on the pool is already in the
    /// stream registry (the `max-streams` limit is checked when it is made): it is closed
    /// here, or it would count against the limit and the open-streams gauge for good.
    fileprivate func completed(_ context: RequestContext) {
        if case .stream(let stream)? = context.abandon()?.body { stream.close() }
        if context.headSeen { logAccess(context) }
        if context.counted {
            counters.lock.withLock { counters.inFlight -= 1 }
            context.counted = false
        }
        if let track = context.track { connectionGuard.requestEnded(track) }
    }

    fileprivate func connectionOpened(_ connection: OpaquePointer, _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let fd = cmhd_connection_fd(connection)
        if fd >= 0, keepaliveIdle > 0 { Self.enableKeepalive(fd, idle: keepaliveIdle) }
        let track = connectionGuard.opened(fd: fd)
        socketContext.pointee = Unmanaged.passRetained(track).toOpaque()
    }

    fileprivate func connectionClosed(_ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        guard let raw = socketContext.pointee else { return }
        let track = Unmanaged<ConnectionGuard.Track>.fromOpaque(raw).takeRetainedValue()
        socketContext.pointee = nil
        connectionGuard.closed(track)
    }

    /// TCP keepalive on an accepted socket (`--tcp-keepalive`): probes after `idle` quiet
    /// seconds, every `tcpKeepaliveInterval` s, `tcpKeepaliveProbes` times. A failure to set
    /// it leaves the connection as it was (keepalive is a safety net, not a requirement).
    private static func enableKeepalive(_ fd: Int32, idle: Int32) {
        var on: Int32 = 1, idle = idle
        var interval = ServerConfiguration.tcpKeepaliveInterval, probes = ServerConfiguration.tcpKeepaliveProbes
        let size = socklen_t(MemoryLayout<Int32>.size)
        _ = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, size)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &idle, size)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &interval, size)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, &probes, size)
    }

    private static func track(_ connection: OpaquePointer) -> ConnectionGuard.Track? {
        cmhd_socket_context(connection).map { Unmanaged<ConnectionGuard.Track>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The request's header fields, each marked when libmicrohttpd built it from an obs-folded
    /// line: 0.9.75 parses the head in place, so a field's value follows its name and colon
    /// (and optional whitespace) in the same buffer — except for a folded field, whose name it
    /// reallocates elsewhere to append the continuation.
    ///
    /// The fields go into an array sized first (a null iterator only counts them), through a
    /// pointer to it rather than a class holding it: growing the array from empty four times
    /// and the holder's allocation cost about 1,500 instructions a request (callgrind, the small
    /// document of `make bench-instructions`: 194,764 → 193,740).
    private static func fields(_ connection: OpaquePointer) -> [RequestHead.Field] {
        var fields: [RequestHead.Field] = []
        // The count is bounded by what fits in the connection's memory pool (−1 only for a
        // null connection).
        fields.reserveCapacity(max(0, Int(MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, nil, nil))))
        withUnsafeMutablePointer(to: &fields) { fields in
            _ = MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, collectFields, UnsafeMutableRawPointer(fields))
        }
        return fields
    }

    /// `directWrites`: a stream's frames may be written straight to the socket (the request
    /// is HTTP/1.1, so libmicrohttpd frames the body in chunks, and not HEAD, so it has one).
    /// Queues `response`; a complete body is `held` (counted by `answer`).
    private func queue(_ response: HTTPResponse, held: HeldBody?, on connection: OpaquePointer, directWrites: Bool = false) -> MHD_Result {
        let mhdResponse: OpaquePointer?
        var stream: PacedStream?
        switch response.body {
        case .bytes:
            mhdResponse = held.flatMap(Self.makeResponse)
        case .stream(let frames):
            stream = frames
            let binding = StreamBinding(stream: frames, pacer: pacer, connection: connection)
            let cls = Unmanaged.passRetained(binding).toOpaque()
            mhdResponse = MHD_create_response_from_callback(cmhd_size_unknown(), 4 * 1024, streamReader, cls, streamFreed)
            if mhdResponse == nil { Unmanaged<StreamBinding>.fromOpaque(cls).release() }
        }
        guard let mhdResponse else {
            stream?.close()
            logger.error("could not create a response")
            return MHD_Result.NO
        }
        Self.addHeaders(response.headers, to: mhdResponse)
        stream?.attach(MHDConnection(connection, directWrites: directWrites), pacer: pacer, metrics: metrics, ledger: heldLedger)
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }

    /// Passes each header as the strings' own NUL-terminated bytes: the implicit String →
    /// C string conversion made a copy of each name and value (`queue`, small document:
    /// 9,500 → 5,900 instructions a request, callgrind).
    private static func addHeaders(_ headers: [(String, String)], to response: OpaquePointer) {
        for (name, value) in headers {
            name.withCString { name in
                value.withCString { value in _ = MHD_add_response_header(response, name, value) }
            }
        }
    }

    /// Answers this small are always sent, whatever the held bytes (problems, health checks,
    /// session states): with one answer in flight per connection, they hold at most
    /// `maxConnections` × 4 KiB.
    static let alwaysHeldBytes = 4 * 1024

    /// A response sending from `holder`'s memory; freeing it gives the bytes back.
    private static func makeResponse(_ holder: HeldBody) -> OpaquePointer? {
        let cls = Unmanaged.passRetained(holder).toOpaque()
        let response = MHD_create_response_from_buffer_with_free_callback_cls(
            holder.count, UnsafeMutableRawPointer(mutating: holder.memory), heldBodyFreed, cls) // only read
        if response == nil { Unmanaged<HeldBody>.fromOpaque(cls).release() }
        return response
    }

    /// The query's parameters, gathered as `fields` gathers the header (through a pointer to
    /// the dictionary, no holder object).
    private static func queryArguments(_ connection: OpaquePointer) -> [String: String] {
        var values: [String: String] = [:]
        withUnsafeMutablePointer(to: &values) { values in
            _ = MHD_get_connection_values(connection, MHD_ValueKind.GET_ARGUMENT_KIND, collectQuery, UnsafeMutableRawPointer(values))
        }
        return values
    }
}

/// Per-request state kept in libmicrohttpd's `con_cls` slot, made when the request line
/// arrives (the URI logger), before anything is decoded.
private final class RequestContext: @unchecked Sendable {
    let rawTarget: String
    var method = ""
    var version = ""
    var url = ""
    var headSeen = false
    var counted = false
    var arrivedWhileDraining = false
    var requestID = ""
    var client = ""
    /// The answer's status (0 until answered) and body bytes, for the access log.
    var status = 0
    var bytes = 0
    var stream: PacedStream?
    var body: [UInt8] = []
    /// The head's fields, collected once on the headers-only call.
    var fields: [RequestHead.Field] = []
    var track: ConnectionGuard.Track?
    /// A computation is under way on the pool (the connection is suspended).
    var computing = false
    /// Bytes of `body` counted in `bodyCounters.bodyBytes`: given back when the body is
    /// handed to the handler, or when the request ends before that.
    var heldBodyBytes = 0
    var bodyCounters: HTTPDaemonCounters?

    func releaseBody() {
        guard heldBodyBytes > 0 else { return }
        let bytes = heldBodyBytes
        heldBodyBytes = 0
        bodyCounters?.lock.withLock { bodyCounters?.bodyBytes -= bytes }
        MemoryTrim.shared.freed(bytes)
    }

    deinit { releaseBody() }
    private let lock = InlineLock()
    private var computed: (HTTPResponse, String)?
    /// The computation was not run: the client had gone when a compute thread took it.
    private var skipped = false
    /// The request is over (`HTTPDaemon.completed`).
    private var abandoned = false
    /// When the request line arrived (monotonic ns), for the request duration metric.
    let started = MonotonicClock.now()

    init(rawTarget: String) {
        self.rawTarget = rawTarget
    }

    /// The first field named `name` (ASCII letters in any case, as libmicrohttpd's own lookup
    /// compares), or nil: one pass over the collected fields, comparing the tags their names
    /// were given when collected, instead of a libmicrohttpd lookup (and a C string) per header.
    func header(_ name: RequestHead.KnownName) -> String? {
        for field in fields where field.known == name { return field.value }
        return nil
    }

    /// Called on the pool thread before the connection is resumed.
    func finish(_ response: HTTPResponse, route: String) {
        let late = lock.withLock { () -> Bool in
            guard !abandoned else { return true }
            computed = (response, route)
            return false
        }
        // The request was over before its answer was ready (not expected: its connection is
        // suspended meanwhile, and libmicrohttpd does not close suspended connections).
        if late, case .stream(let stream) = response.body { stream.close() }
    }

    /// The request is over: returns the computed answer that was never queued, if any, and
    /// makes a later `finish` close its stream itself.
    func abandon() -> HTTPResponse? {
        lock.withLock {
            abandoned = true
            defer { computed = nil }
            return computed?.0
        }
    }

    /// Called on the pool thread, instead of `finish`, when the client had gone.
    func skip() { lock.withLock { skipped = true } }

    /// Whether the computation was skipped (`skip`); the request is then no longer computing.
    func takeSkipped() -> Bool {
        lock.withLock {
            guard skipped else { return false }
            skipped = false
            computing = false
            return true
        }
    }

    func takeComputed() -> (HTTPResponse, String)? {
        lock.withLock {
            defer { computed = nil }
            if computed != nil { computing = false }
            return computed
        }
    }
}

/// An answer's body as libmicrohttpd sends it: the array itself, held until libmicrohttpd
/// frees the response. Once queued (`counters` set), its bytes count as held until then.
///
/// No copy is made. A Swift array on Linux is one heap buffer with its elements inline;
/// `withUnsafeBytes` on it yields that buffer's own element address (no temporary), and the
/// buffer neither moves nor is freed while `bytes` holds it, and nothing can mutate it:
/// `bytes` is a `let` and every other reference (the handler's answer) only reads. So the
/// address stays valid for as long as libmicrohttpd may read it. Two copies were made before
/// (one to append the final newline to a shared array, one into libmicrohttpd's buffer):
/// 100-track timeline, 534 → 497 instructions a sample (callgrind counts each byte `memcpy`
/// moves with `rep movsb`), and a 37 MB answer no longer needs 74 MB more at its peak.
private final class HeldBody: @unchecked Sendable {
    let bytes: [UInt8]
    let memory: UnsafeRawPointer
    var count: Int { bytes.count }
    var counters: HTTPDaemonCounters?

    init(holding bytes: [UInt8]) {
        self.bytes = bytes
        // An empty body points at a static byte (libmicrohttpd reads none: the size is 0).
        memory = bytes.withUnsafeBytes { $0.baseAddress } ?? UnsafeRawPointer(("" as StaticString).utf8Start)
    }

    deinit {
        counters?.release(count)
    }
}

/// How much of each 10 ms the connection threads may spend computing answers themselves
/// while streams are open, when their frames go through libmicrohttpd
/// (`--stream-writes libmicrohttpd`) or the pacer runs at the connection threads' priority.
///
/// A computation on a connection thread holds up every other connection of that thread,
/// streams waiting to be resumed by the pacer included. Each one is small
/// (`inlineMaxSamples`), but a flood of them could follow one another without a pause. While
/// a stream or session watcher is open, once the connection threads together have computed
/// for `budgetNanos` in the current window, the next requests go to the compute pool until
/// the window ends; so inline work delays a stream's resume by at most about `budgetNanos`
/// plus one small computation. With no stream open there is nothing paced to hold up, and
/// every small computation stays inline (other requests wait for it as they wait for any
/// request on that thread). With direct writes (the default) and the pacer at its higher
/// priority (`StreamPacer.runsAhead`), the pacer writes the frames itself, before any
/// connection thread, and nothing paced waits for one: there is no budget. With it, a burst
/// of 500 small stream requests at once on one core had 73–205 of them refused (503: the
/// pool's queue full once the budget was spent); Benchmarks/README.md, "Stream starts on the
/// connection thread". Without the priority, the budget keeps a flood of inline work from
/// taking the core from the frames as an equal (the pool runs at nice +5).
private final class InlineBudget: @unchecked Sendable {
    static let windowNanos: UInt64 = 10_000_000
    static let budgetNanos: UInt64 = 2_500_000
    private let lock = InlineLock()
    private var windowStart: UInt64 = 0
    private var spent: UInt64 = 0

    /// `now` when a computation may run on the connection thread, nil when it is to go to
    /// the pool.
    func admit(now: UInt64, streamsOpen: Bool) -> UInt64? {
        guard streamsOpen else { return now }
        return lock.withLock {
            if now &- windowStart >= Self.windowNanos {
                windowStart = now
                spent = 0
            }
            return spent < Self.budgetNanos ? now : nil
        }
    }

    func spend(since start: UInt64, now: UInt64) {
        lock.withLock { spent &+= now >= start ? now - start : 0 }
    }
}

/// A per-second budget for libmicrohttpd's messages.
private final class LibraryLog: @unchecked Sendable {
    static let perSecond = 10
    private let lock = NSLock()
    private var second: UInt64 = 0
    private var count = 0
    private var suppressed = 0

    /// nil when the message is to be dropped; else how many were dropped before it.
    func admit(now: UInt64) -> Int? {
        lock.withLock {
            let current = now / 1_000_000_000
            if current != second {
                second = current
                count = 0
            }
            count += 1
            guard count <= Self.perSecond else {
                suppressed += 1
                return nil
            }
            defer { suppressed = 0 }
            return suppressed
        }
    }
}

@_cdecl("motion_mhd_log")
func motionMHDLog(_ cls: UnsafeMutableRawPointer?, _ message: UnsafePointer<CChar>?) {
    guard let cls, let message else { return }
    Unmanaged<HTTPDaemon>.fromOpaque(cls).takeUnretainedValue().libraryMessage(String(cString: message))
}

/// Requests whose head has arrived and whose answer is not yet sent, and the bytes of
/// queued answers not yet sent.
private final class HTTPDaemonCounters: @unchecked Sendable {
    let lock = InlineLock()
    var inFlight = 0
    /// Bytes of answers and stream writes not yet sent (`--max-held-response-bytes`).
    private(set) var heldBytes = 0
    /// `--max-held-response-bytes`.
    let heldLimit: Int
    /// Request body bytes received and not yet handed to a handler (`--max-held-request-bytes`).
    var bodyBytes = 0

    init(heldLimit: Int) {
        self.heldLimit = heldLimit
    }

    /// Whether the held bytes are at `--max-held-response-bytes` or over it.
    var heldAtLimit: Bool { lock.withLock { heldBytes >= heldLimit } }

    /// Counts `bytes` as held and answers true, unless they would pass the limit and are not
    /// to be held `regardless` (then counts nothing and answers false). Every byte taken is
    /// given back through `release`.
    func take(_ bytes: Int, regardless: Bool = false) -> Bool {
        lock.withLock {
            guard regardless || heldBytes + bytes <= heldLimit else { return false }
            heldBytes += bytes
            return true
        }
    }

    func release(_ bytes: Int) {
        lock.withLock { heldBytes -= bytes }
        MemoryTrim.shared.freed(bytes)
    }
}

/// Ties a stream to the pacer for the reader callback.
private final class StreamBinding {
    let stream: PacedStream
    let pacer: StreamPacer
    /// The connection the response is queued on (used only on its own thread, from the reader).
    let connection: OpaquePointer

    init(stream: PacedStream, pacer: StreamPacer, connection: OpaquePointer) {
        self.stream = stream
        self.pacer = pacer
        self.connection = connection
    }

    /// Called from the reader just before it ends the response with an error (the client is
    /// gone): makes libmicrohttpd let go of the connection within `closeSoonSeconds`.
    ///
    /// libmicrohttpd 0.9.75 closes a connection whose reader fails (the response is freed,
    /// the socket shut down) but leaves it in its lists: the socket is closed, and the
    /// connection stops counting against `--max-connections` and the per-address limit,
    /// only when its thread next walks its idle connections. That walk starts from the
    /// longest idle one and stops at the first still open, so one idle keep-alive connection
    /// older than the stream (any client's, on the same thread) held the closed stream's
    /// socket until that connection's own timeout: 29 s with the default 30 s
    /// `--connection-timeout` (measured; `DisconnectedStreamTests`), for ever with 0. A
    /// connection with a timeout of its own is on a second list, which every pass walks in
    /// full, and the thread wakes by that timeout at the latest.
    func closeSoon() {
        cmhd_set_connection_timeout(connection, Self.closeSoonSeconds)
    }

    static let closeSoonSeconds: UInt32 = 1
}

/// A non-blocking `send` on a socket, as direct writes make it.
enum DirectSocket {
    /// Whether the client has closed its side (or the socket failed) with nothing left
    /// unread: a `recv` peek, about a microsecond.
    static func isPeerGone(_ fd: Int32) -> Bool {
        guard fd >= 0 else { return true }
        var byte: UInt8 = 0
        let received = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if received == 0 { return true }
        return received < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
    }

    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> DirectSend {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .sent(0) }
        while true {
            let sent = Glibc.send(fd, base, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if sent >= 0 { return .sent(sent) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .sent(0)
            default: return .gone
            }
        }
    }
}

/// A libmicrohttpd connection that a stream can park and wake.
private final class MHDConnection: SuspendableConnection, @unchecked Sendable {
    let connection: OpaquePointer
    /// The socket, looked up once (on the connection's thread, when the answer is queued).
    let fd: Int32
    let allowsDirectWrites: Bool

    init(_ connection: OpaquePointer, directWrites: Bool) {
        self.connection = connection
        fd = cmhd_connection_fd(connection)
        allowsDirectWrites = directWrites && fd >= 0
    }

    func send(_ bytes: UnsafeRawBufferPointer) -> DirectSend { DirectSocket.send(fd, bytes) }

    var directSocket: Int32? { fd >= 0 ? fd : nil }

    func suspend() { MHD_suspend_connection(connection) }
    func resume() { MHD_resume_connection(connection) }

    var isPeerGone: Bool { DirectSocket.isPeerGone(fd) }
}

// MARK: - C callbacks (plain functions: no captures, state through the cls pointers)

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, version, uploadData, uploadDataSize, conCls in
    guard let cls, let connection, let url, let method, let uploadDataSize, let conCls else { return MHD_Result.NO }
    let daemon = Unmanaged<HTTPDaemon>.fromOpaque(cls).takeUnretainedValue()
    return daemon.handle(connection: connection, url: url, method: method, version: version,
                         uploadData: uploadData, uploadDataSize: uploadDataSize, context: conCls)
}

private let requestCompleted: MHD_RequestCompletedCallback = { cls, _, conCls, _ in
    guard let cls, let conCls, let raw = conCls.pointee else { return }
    let daemon = Unmanaged<HTTPDaemon>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()
    conCls.pointee = nil
    daemon.completed(context)
}

/// The request line's target, before decoding: the request's context starts here.
///
/// libmicrohttpd 0.9.75 stores every query parameter in the connection's memory pool right
/// after this call; a query of a thousand parameters exhausts the pool, and the 431 it then
/// means to send cannot be sent either (no memory left to write it). So a query with more
/// than `RequestHead.maxQueryParameters` parameters, or one that does not fit the pool
/// (`RequestHead.queryFits`), is cut off here, in libmicrohttpd's own (writable,
/// NUL-terminated) request-line buffer, before it is parsed; the request is then answered 414
/// from the saved raw target.
private let uriLogger: cmhd_uri_logger = { cls, uri, _ in
    let rawTarget = uri.map { String(cString: $0) } ?? ""
    if let uri, let cls {
        let poolBytes = Unmanaged<HTTPDaemon>.fromOpaque(cls).takeUnretainedValue().connectionMemoryBytes
        let parameters = RequestHead.queryParameterCount(rawTarget)
        if parameters > RequestHead.maxQueryParameters || !RequestHead.queryFits(rawTarget, parameters: parameters, poolBytes: poolBytes),
           let mark = strchr(uri, Int32(UInt8(ascii: "?"))) {
            UnsafeMutablePointer(mutating: mark + 1).pointee = 0
        }
    }
    let context = RequestContext(rawTarget: rawTarget)
    return Unmanaged.passRetained(context).toOpaque()
}

private let connectionNotifier: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
    guard let cls, let connection, let socketContext else { return }
    let daemon = Unmanaged<HTTPDaemon>.fromOpaque(cls).takeUnretainedValue()
    if cmhd_notify_is_start(code) != 0 {
        daemon.connectionOpened(connection, socketContext)
    } else {
        daemon.connectionClosed(socketContext)
    }
}

private let heldBodyFreed: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<HeldBody>.fromOpaque(cls).release()
}

private let streamReader: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return cmhd_content_reader_end_with_error() }
    let binding = Unmanaged<StreamBinding>.fromOpaque(cls).takeUnretainedValue()
    switch binding.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max)) {
    case .bytes(let count):
        return count
    case .suspended(let wakeAt):
        if let wakeAt { binding.pacer.schedule(binding.stream, at: wakeAt) }
        return 0
    case .end:
        return cmhd_content_reader_end_of_stream()
    case .abort:
        binding.closeSoon()
        return cmhd_content_reader_end_with_error()
    }
}

private let streamFreed: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let binding = Unmanaged<StreamBinding>.fromOpaque(cls).takeRetainedValue()
    binding.stream.close()
}

private let collectFields: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return MHD_Result.YES }
    let fields = cls.assumingMemoryBound(to: [RequestHead.Field].self)
    let name = String(cString: key)
    var contiguous = true
    if let value {
        // In place: value - key = name length + 1 (the colon) + the whitespace skipped after it.
        let distance = UnsafeRawPointer(value) - UnsafeRawPointer(key)
        let nameLength = strlen(key)
        if distance < nameLength + 1 || distance > nameLength + 1 + 4096 {
            contiguous = false
        } else {
            let raw = UnsafeRawPointer(key)
            for offset in (nameLength + 1)..<distance {
                let byte = raw.load(fromByteOffset: offset, as: UInt8.self)
                if byte != 0x20 && byte != 0x09 { contiguous = false; break }
            }
        }
    }
    fields.pointee.append(RequestHead.Field(name: name, value: value.map { String(cString: $0) } ?? "", contiguous: contiguous))
    return MHD_Result.YES
}

private let collectQuery: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return MHD_Result.YES }
    let values = cls.assumingMemoryBound(to: [String: String].self)
    values.pointee[String(cString: key)] = value.map { String(cString: $0) } ?? ""
    return MHD_Result.YES
}
