import MotionEngine

/// A request as the router sees it: the daemon adapter has already read the whole body.
struct HTTPRequest: Sendable {
    var method: String
    var path: String
    var query: [String: String]
    var contentType: String?
    var accept: String?
    var body: [UInt8]
    /// `Accept-Encoding`, `Origin` and `Access-Control-Request-Method` (compression, CORS).
    var acceptEncoding: String? = nil
    var origin: String? = nil
    var accessControlRequestMethod: String? = nil
    /// The `If-None-Match` field, for answers with an `ETag`.
    var ifNoneMatch: String? = nil
    /// `{name}` segments of the matched route.
    var pathParameters: [String: String] = [:]
    /// Whether the server was already draining when the request head arrived (nil: unknown,
    /// read the state when handling).
    var arrivedWhileDraining: Bool? = nil
    /// Set when the request is being computed on a connection thread (`HTTPDaemon`): the
    /// most frames × tracks its handler may compute there. A handler whose work is larger
    /// answers `HTTPResponse.computeOnPool` instead, and the request is computed again on the
    /// compute pool (nil there: no bound but the engine's limits).
    var inlineSampleLimit: Int? = nil
    /// Whether answers not yet read by their clients already hold `--max-held-response-bytes`
    /// (set by `HTTPDaemon` for POST and PUT): a route that changes state is then refused
    /// before it does anything (`Router.HeldAnswers.checkedFirst`).
    var heldAnswersAtLimit = false
}

/// What a handler answers: a complete body, or a stream the daemon pulls from.
struct HTTPResponse: Sendable {
    enum Body: Sendable {
        case bytes([UInt8])
        case stream(PacedStream)
    }

    var status: Int
    var headers: [(String, String)]
    var body: Body
    /// Never replaced by the 503 for answers not read (`--max-held-response-bytes`): the
    /// answer of a request that changed state (the change is made; a 503 saying "try again"
    /// would be false), or one that monitoring needs. Set by the router.
    var alwaysDelivered = false
    /// The body's compressed forms, when the body is a constant (`StaticBody`).
    var staticBody: StaticBody?

    init(status: Int, headers: [(String, String)] = [], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// A constant body, compressed once per coding (`StaticBody`).
    init(status: Int, headers: [(String, String)] = [], staticBody: StaticBody) {
        self.status = status
        self.headers = headers
        self.body = .bytes(staticBody.bytes)
        self.staticBody = staticBody
    }

    init(status: Int, headers: [(String, String)], stream: PacedStream) {
        self.status = status
        self.headers = headers
        self.body = .stream(stream)
    }

    /// Not an answer: "compute this request on the compute pool" (see
    /// `HTTPRequest.inlineSampleLimit`). Never sent; its status 0 cannot be a real one.
    static let computeOnPool = HTTPResponse(status: 0, body: [])

    var isComputeOnPool: Bool { status == 0 }

    /// The body of a complete answer (empty for a stream).
    var bodyBytes: [UInt8] {
        if case .bytes(let bytes) = body { return bytes }
        return []
    }

    /// A JSON answer; the body ends with a newline (added here when it does not). `body` is
    /// consumed, so that the newline goes into an answer's own buffer (the encoders leave
    /// room) rather than into a copy of it.
    static func json(_ status: Int, _ body: consuming [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        var body = body
        if body.last != UInt8(ascii: "\n") { body.append(UInt8(ascii: "\n")) }
        // Room for the headers added on the way out (ETag, Vary, X-Request-Id, CORS), so
        // that the list is not reallocated for each (callgrind, the small document:
        // 194,640 → 194,437 instructions a request).
        var all: [(String, String)] = []
        all.reserveCapacity(headers.count + 6)
        all.append(("Content-Type", "application/json"))
        all.append(contentsOf: headers)
        return HTTPResponse(status: status, headers: all, body: body)
    }
}

/// An RFC 9457 problem (docs/README.md).
struct ProblemDetails: Error, Sendable {
    struct Entry: Sendable {
        /// JSON pointer into the body, or nil for a query parameter / header problem.
        var pointer: String?
        /// The query parameter or header at fault, when it is not in the body.
        var parameter: String?
        var message: String
    }

    var status: Int
    var type: String
    var title: String
    var detail: String
    var errors: [Entry] = []
    var extraHeaders: [(String, String)] = []
    /// A session's state, carried by 409 answers.
    var state: String?

    /// A malformed (400) or meaningless (422) timeline document, with pointers.
    static func from(_ error: DocumentError) -> ProblemDetails {
        listing(error, malformed: ("/problems/malformed-document", "Malformed timeline document"),
                invalid: ("/problems/invalid-document", "Invalid timeline document"))
    }

    /// The problems of `error` as the `malformed` type and title (400) or the `invalid` ones
    /// (422): every one counted in `detail` ("1 problem", "3 problems", or "30001 problems;
    /// the first 100 are listed" when the error kept only the first `DocumentError.listed`),
    /// the kept ones in `errors`. (The types are written out: every type in the sources has
    /// a page, `UsabilityTests`.)
    private static func listing(_ error: DocumentError, malformed: (type: String, title: String),
                                invalid: (type: String, title: String)) -> ProblemDetails {
        let (type, title) = error.status == 400 ? malformed : invalid
        let count = error.count == 1 ? "1 problem" : "\(error.count) problems"
        return ProblemDetails(
            status: error.status,
            type: type,
            title: title,
            detail: error.unlisted > 0 ? "\(count); the first \(error.problems.count) are listed" : count,
            errors: error.problems.map { Entry(pointer: $0.pointer, parameter: nil, message: $0.message) })
    }

    var response: HTTPResponse {
        var w = JSONWriter(capacity: 256)
        w.raw("{\"type\":")
        w.string(type)
        w.raw(",\"title\":")
        w.string(title)
        w.raw(",\"status\":")
        w.integer(status)
        w.raw(",\"detail\":")
        w.string(detail)
        if let state {
            w.raw(",\"state\":")
            w.string(state)
        }
        if !errors.isEmpty {
            w.raw(",\"errors\":[")
            for (index, entry) in errors.enumerated() {
                if index > 0 { w.byte(UInt8(ascii: ",")) }
                w.byte(UInt8(ascii: "{"))
                if let pointer = entry.pointer {
                    w.key("pointer")
                    w.string(pointer)
                } else if let parameter = entry.parameter {
                    w.key("parameter")
                    w.string(parameter)
                }
                w.raw(",\"message\":")
                w.string(entry.message)
                w.byte(UInt8(ascii: "}"))
            }
            w.raw("]")
        }
        w.raw("}\n")
        return HTTPResponse(status: status, headers: [("Content-Type", "application/problem+json")] + extraHeaders, body: w.bytes)
    }

    static func notFound(_ path: String) -> ProblemDetails {
        ProblemDetails(status: 404, type: "/problems/not-found", title: "Not found", detail: "no resource at \(path)")
    }

    static func methodNotAllowed(_ method: String, allowed: [String]) -> ProblemDetails {
        ProblemDetails(status: 405, type: "/problems/method-not-allowed", title: "Method not allowed",
                       detail: "\(method) is not allowed here; use \(allowed.joined(separator: ", "))",
                       extraHeaders: [("Allow", allowed.joined(separator: ", "))])
    }

    static func unsupportedMediaType(_ contentType: String?) -> ProblemDetails {
        let given = contentType.map { "'\($0)'" } ?? "no Content-Type"
        return ProblemDetails(status: 415, type: "/problems/unsupported-media-type", title: "Unsupported media type",
                              detail: "the body must be application/json, not \(given)")
    }

    static func payloadTooLarge(limit: Int) -> ProblemDetails {
        ProblemDetails(status: 413, type: "/problems/payload-too-large", title: "Payload too large",
                       detail: "the body exceeds the limit of \(limit) bytes (max-body-bytes)")
    }

    static func badRequest(_ detail: String, parameter: String? = nil) -> ProblemDetails {
        var problem = ProblemDetails(status: 400, type: "/problems/bad-request", title: "Bad request", detail: detail)
        if let parameter { problem.errors = [Entry(pointer: nil, parameter: parameter, message: detail)] }
        return problem
    }

    static func unavailable(_ detail: String) -> ProblemDetails {
        ProblemDetails(status: 503, type: "/problems/unavailable", title: "Service unavailable", detail: detail,
                       extraHeaders: [("Retry-After", "1")])
    }

    static func tooManyRequests(_ detail: String) -> ProblemDetails {
        ProblemDetails(status: 429, type: "/problems/too-many-requests", title: "Too many requests", detail: detail,
                       extraHeaders: [("Retry-After", "1")])
    }

    static func sessionNotFound(_ id: String) -> ProblemDetails {
        ProblemDetails(status: 404, type: "/problems/session-not-found", title: "Session not found",
                       detail: "no session '\(id)' (it may have been deleted or expired)")
    }

    /// A command the session refuses in its state (409); the body also carries `state`.
    static func conflict(_ detail: String, state: String?) -> ProblemDetails {
        var problem = ProblemDetails(status: 409, type: "/problems/conflict", title: "Conflict", detail: detail)
        problem.state = state
        return problem
    }

    /// A malformed command or retarget body (400) or a meaningless one (422), with pointers.
    static func invalidBody(_ error: DocumentError) -> ProblemDetails {
        listing(error, malformed: ("/problems/malformed-body", "Malformed request body"),
                invalid: ("/problems/invalid-body", "Invalid request body"))
    }
}


/// A body that never changes (the OpenAPI document, the easing catalogue, the playground's
/// files) and its compressed forms, each made on first use and kept. Compressing
/// `openapi.yaml` for every request took about 12 ms of a connection thread: 64 clients
/// asking for it with gzip held `/healthz` at 294 ms (p50), against 6.7 ms without.
final class StaticBody: @unchecked Sendable {
    let bytes: [UInt8]
    private let lock = InlineLock()
    private var forms: [ContentCoding: [UInt8]] = [:]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The body in `coding`, or nil if zlib fails.
    func compressed(_ coding: ContentCoding) -> [UInt8]? {
        if let form = lock.withLock({ forms[coding] }) { return form }
        guard let made = Compression.compress(bytes, coding) else { return nil }
        lock.withLock { forms[coding] = made }
        return made
    }
}
