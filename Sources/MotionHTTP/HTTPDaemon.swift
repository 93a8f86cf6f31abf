import CMicroHTTPD
import Foundation
import Logging

/// The libmicrohttpd adapter: every unsafe pointer and C callback of the server lives here.
///
/// One daemon with an internal epoll thread and a worker pool; suspend/resume on for
/// streams. A request's body is collected (bounded by `maxBodyBytes`) across the access
/// handler's calls, then the router answers on the final call, so keep-alive is kept
/// (0.9.75 closes the connection when a response is queued on the headers-only call, which is
/// why only rejections are queued there).
final class HTTPDaemon: @unchecked Sendable {
    private let configuration: ServerConfiguration
    private let router: Router
    private let pacer: StreamPacer
    private let metrics: ServiceMetrics
    private let logger: Logger
    private var daemon: OpaquePointer?

    /// The bound port, known once `start()` returns.
    private(set) var port: UInt16 = 0

    init(configuration: ServerConfiguration, router: Router, pacer: StreamPacer, metrics: ServiceMetrics, logger: Logger) {
        self.configuration = configuration
        self.router = router
        self.pacer = pacer
        self.metrics = metrics
        self.logger = logger
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
        daemon = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                cmhd_start_daemon(flags, configuration.port, address,
                                  accessHandler, cls, requestCompleted, cls,
                                  UInt32(configuration.threads), configuration.connectionTimeout,
                                  configuration.maxConnections, configuration.connectionMemoryBytes, 1024)
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

    /// Closes every connection and joins the threads. No stream may be suspended.
    func stop() {
        guard let daemon else { return }
        MHD_stop_daemon(daemon)
        self.daemon = nil
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

    fileprivate func handle(connection: OpaquePointer, url: String, method: String,
                            uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>,
                            context slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        guard let raw = slot.pointee else {
            // Headers only: set up the request, and reject here what must not be read.
            let context = RequestContext(method: method, url: url)
            slot.pointee = Unmanaged.passRetained(context).toOpaque()
            if let rejection = rejectEarly(connection) {
                return answer(rejection.response, route: "rejected", context: context, on: connection)
            }
            return MHD_Result.YES
        }
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        let size = uploadDataSize.pointee
        if size > 0 {
            if !context.tooLarge, let uploadData {
                if context.body.count + size > configuration.maxBodyBytes {
                    context.tooLarge = true
                    context.body = []
                } else {
                    uploadData.withMemoryRebound(to: UInt8.self, capacity: size) { bytes in
                        context.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: size))
                    }
                }
            }
            uploadDataSize.pointee = 0
            return MHD_Result.YES
        }
        if context.tooLarge {
            return answer(ProblemDetails.payloadTooLarge(limit: configuration.maxBodyBytes).response, route: "rejected", context: context, on: connection)
        }
        let request = HTTPRequest(method: context.method, path: context.url,
                                  query: Self.queryArguments(connection),
                                  contentType: Self.header(connection, "Content-Type"),
                                  accept: Self.header(connection, "Accept"),
                                  body: context.body)
        context.body = []
        let (response, route) = router.handle(request)
        return answer(response, route: route, context: context, on: connection)
    }

    /// Queues the response and records the request in the metrics.
    private func answer(_ response: HTTPResponse, route: String, context: RequestContext, on connection: OpaquePointer) -> MHD_Result {
        let result = queue(response, on: connection)
        let seconds = Double(MonotonicClock.now() - context.started) / 1e9
        metrics.recordRequest(route: route, method: context.method, status: response.status, seconds: seconds)
        return result
    }

    /// Framing problems 0.9.75 lets through, and bodies announced over the limit.
    private func rejectEarly(_ connection: OpaquePointer) -> ProblemDetails? {
        let framing = FramingHeaders()
        let cls = Unmanaged.passUnretained(framing).toOpaque()
        MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, collectFraming, cls)
        if !framing.contentLengths.isEmpty, framing.chunked {
            return .badRequest("a request must not carry both Content-Length and Transfer-Encoding: chunked")
        }
        if Set(framing.contentLengths).count > 1 {
            return .badRequest("conflicting Content-Length headers")
        }
        if let text = framing.contentLengths.first {
            guard let length = Int(text.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                return .badRequest("invalid Content-Length '\(text)'")
            }
            if length > configuration.maxBodyBytes { return .payloadTooLarge(limit: configuration.maxBodyBytes) }
        }
        return nil
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let mhdResponse: OpaquePointer?
        var stream: PacedStream?
        switch response.body {
        case .bytes(let body):
            mhdResponse = body.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
            }
        case .stream(let frames):
            stream = frames
            let binding = StreamBinding(stream: frames, pacer: pacer)
            let cls = Unmanaged.passRetained(binding).toOpaque()
            mhdResponse = MHD_create_response_from_callback(cmhd_size_unknown(), 4 * 1024, streamReader, cls, streamFreed)
            if mhdResponse == nil { Unmanaged<StreamBinding>.fromOpaque(cls).release() }
        }
        guard let mhdResponse else {
            stream?.close()
            logger.error("could not create a response")
            return MHD_Result.NO
        }
        for (name, value) in response.headers {
            MHD_add_response_header(mhdResponse, name, value)
        }
        stream?.attach(MHDConnection(connection))
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }

    private static func header(_ connection: OpaquePointer, _ name: String) -> String? {
        MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, name).map { String(cString: $0) }
    }

    private static func queryArguments(_ connection: OpaquePointer) -> [String: String] {
        let box = QueryBox()
        MHD_get_connection_values(connection, MHD_ValueKind.GET_ARGUMENT_KIND, collectQuery, Unmanaged.passUnretained(box).toOpaque())
        return box.values
    }
}

/// Per-request state kept in libmicrohttpd's `con_cls` slot.
private final class RequestContext {
    let method: String
    let url: String
    var body: [UInt8] = []
    var tooLarge = false
    /// When the headers arrived (monotonic ns), for the request duration metric.
    let started = MonotonicClock.now()

    init(method: String, url: String) {
        self.method = method
        self.url = url
    }
}

private final class FramingHeaders {
    var contentLengths: [String] = []
    var chunked = false
}

private final class QueryBox {
    var values: [String: String] = [:]
}

/// Ties a stream to the pacer for the reader callback.
private final class StreamBinding {
    let stream: PacedStream
    let pacer: StreamPacer

    init(stream: PacedStream, pacer: StreamPacer) {
        self.stream = stream
        self.pacer = pacer
    }
}

/// A libmicrohttpd connection that a stream can park and wake.
private final class MHDConnection: SuspendableConnection, @unchecked Sendable {
    let connection: OpaquePointer

    init(_ connection: OpaquePointer) { self.connection = connection }

    func suspend() { MHD_suspend_connection(connection) }
    func resume() { MHD_resume_connection(connection) }

    var isPeerGone: Bool {
        let fd = cmhd_connection_fd(connection)
        guard fd >= 0 else { return true }
        var byte: UInt8 = 0
        let received = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if received == 0 { return true }
        return received < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
    }
}

// MARK: - C callbacks (plain functions: no captures, state through the cls pointers)

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadDataSize, conCls in
    guard let cls, let connection, let url, let method, let uploadDataSize, let conCls else { return MHD_Result.NO }
    let daemon = Unmanaged<HTTPDaemon>.fromOpaque(cls).takeUnretainedValue()
    return daemon.handle(connection: connection, url: String(cString: url), method: String(cString: method),
                         uploadData: uploadData, uploadDataSize: uploadDataSize, context: conCls)
}

private let requestCompleted: MHD_RequestCompletedCallback = { _, _, conCls, _ in
    guard let conCls, let raw = conCls.pointee else { return }
    Unmanaged<RequestContext>.fromOpaque(raw).release()
    conCls.pointee = nil
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
        return cmhd_content_reader_end_with_error()
    }
}

private let streamFreed: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let binding = Unmanaged<StreamBinding>.fromOpaque(cls).takeRetainedValue()
    binding.stream.close()
}

private let collectFraming: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return MHD_Result.YES }
    let framing = Unmanaged<FramingHeaders>.fromOpaque(cls).takeUnretainedValue()
    let name = String(cString: key).lowercased()
    let text = value.map { String(cString: $0) } ?? ""
    if name == "content-length" {
        framing.contentLengths.append(contentsOf: text.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) })
    } else if name == "transfer-encoding", text.lowercased().contains("chunked") {
        framing.chunked = true
    }
    return MHD_Result.YES
}

private let collectQuery: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return MHD_Result.YES }
    let box = Unmanaged<QueryBox>.fromOpaque(cls).takeUnretainedValue()
    box.values[String(cString: key)] = value.map { String(cString: $0) } ?? ""
    return MHD_Result.YES
}
