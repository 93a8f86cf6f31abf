import MotionEngine

/// A request as the router sees it: the daemon adapter has already read the whole body.
struct HTTPRequest: Sendable {
    var method: String
    var path: String
    var query: [String: String]
    var contentType: String?
    var accept: String?
    var body: [UInt8]
}

/// What a handler answers: a complete body, or a stream the daemon pulls from.
struct HTTPResponse: Sendable {
    enum Body: Sendable {
        case bytes([UInt8])
        case stream(FrameStream)
    }

    var status: Int
    var headers: [(String, String)]
    var body: Body

    init(status: Int, headers: [(String, String)] = [], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    init(status: Int, headers: [(String, String)], stream: FrameStream) {
        self.status = status
        self.headers = headers
        self.body = .stream(stream)
    }

    static func json(_ status: Int, _ body: [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    static func text(_ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: Array(text.utf8))
    }
}

/// An RFC 9457 problem (API §7).
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

    static func from(_ error: DocumentError) -> ProblemDetails {
        let count = error.problems.count
        let status = error.status
        return ProblemDetails(
            status: status,
            type: status == 400 ? "/problems/malformed-document" : "/problems/invalid-document",
            title: status == 400 ? "Malformed timeline document" : "Invalid timeline document",
            detail: count == 1 ? "1 problem" : "\(count) problems",
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
        w.raw("}")
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
}
