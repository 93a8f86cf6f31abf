/// Maps method + path to a handler. Patterns may hold `{name}` segments; unknown paths are
/// 404, wrong methods 405 with `Allow`, query parameters a route does not take 400 naming
/// the parameter, all as problem+json. `OPTIONS` on a known path is 204 with `Allow` (and a
/// CORS preflight answer when `cors` allows the origin). Every answer then goes through
/// `HTTPResponse.finished` (compression, CORS headers).
struct Router: Sendable {
    typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    /// What becomes of a route's answer when answers not yet read by their clients hold
    /// `--max-held-response-bytes` (HTTPDaemon).
    enum HeldAnswers: Sendable {
        /// A pure answer (nothing changed): an answer over 4 KiB is replaced by a 503.
        case replaceable
        /// Always delivered: small, or needed by monitoring.
        case delivered
        /// The request changes state: it is refused with 503 before its handler runs while
        /// the held answers are at the limit, and its answer is then always delivered.
        case checkedFirst
    }

    private struct Route: Sendable {
        var pattern: String
        var segments: [Substring]
        var methods: [(method: String, query: [String], inline: Bool, held: HeldAnswers, handler: Handler)]
        /// Whether the pattern has `{name}` segments.
        var parameterized: Bool
    }

    private var routes: [Route] = []
    /// Patterns without `{name}` segments by path, to their index in `routes`: one hash
    /// lookup instead of splitting the path and matching every pattern (the router's own work, callgrind, small
    /// document: 13,500 → 1,000 instructions a request).
    private var exact: [String: Int] = [:]
    /// `--cors-origin`, nil for no cross-origin access.
    var cors: CORSPolicy?

    /// Serves `method` on `pattern`; `query` names the query parameters it takes (any other
    /// is a 400). `inline`: the handler may run on a connection thread when the request sets
    /// `inlineSampleLimit` (it keeps to that bound, answering `HTTPResponse.computeOnPool`
    /// beyond); any other handler answers `computeOnPool` at once for such a request. By
    /// default a `POST` or `PUT` handler is not inline (it computes a document) and any other
    /// is (it reads what is there; one that can be large keeps to the bound).
    /// `held`: what becomes of its answer while answers not read hold too much (`HeldAnswers`).
    mutating func add(_ method: String, _ pattern: String, query: [String] = [], inline: Bool? = nil,
                      held: HeldAnswers = .replaceable, _ handler: @escaping Handler) {
        let inline = inline ?? (method != "POST" && method != "PUT")
        if let index = routes.firstIndex(where: { $0.pattern == pattern }) {
            routes[index].methods.append((method, query, inline, held, handler))
        } else {
            let segments = pattern.split(separator: "/")
            let parameterized = segments.contains { $0.hasPrefix("{") && $0.hasSuffix("}") }
            routes.append(Route(pattern: pattern, segments: segments, methods: [(method, query, inline, held, handler)], parameterized: parameterized))
            if !parameterized { exact[pattern] = routes.count - 1 }
        }
    }

    /// The response, and the route pattern that answered (the label for metrics).
    func handle(_ request: HTTPRequest) -> (response: HTTPResponse, route: String) {
        let (response, route) = route(request)
        if response.isComputeOnPool || (request.method == "OPTIONS" && response.status == 204) { return (response, route) }
        // HEAD of a stream (a session's frames): the head only. libmicrohttpd 0.9.75 writes a
        // chunked body's last chunk even for HEAD, which the client then takes for the start
        // of the next answer on the connection.
        if case .stream(let stream) = response.body, request.method == "HEAD" {
            stream.close()
            var head = response
            head.body = .bytes([])
            return (head.finished(for: request, cors: cors), route)
        }
        return (response.finished(for: request, cors: cors), route)
    }

    private func route(_ request: HTTPRequest) -> (response: HTTPResponse, route: String) {
        // An exact pattern wins over `{name}` ones (no two routes of the service overlap);
        // the others are tried in order.
        if let index = exact[request.path] { return answer(request, routes[index], parameters: [:]) }
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for route in routes where route.parameterized {
            guard let parameters = Self.match(route.segments, segments) else { continue }
            return answer(request, route, parameters: parameters)
        }
        return (ProblemDetails.notFound(request.path).response, "unmatched")
    }

    private func answer(_ request: HTTPRequest, _ route: Route, parameters: [String: String]) -> (response: HTTPResponse, route: String) {
        // HEAD is answered like GET; libmicrohttpd omits the body.
        let method = request.method == "HEAD" ? "GET" : request.method
        guard let entry = route.methods.first(where: { $0.method == method }) else {
            var allowed = route.methods.map(\.method)
            if allowed.contains("GET") { allowed.append("HEAD") }
            if method == "OPTIONS" {
                return (.options(allowed: allowed + ["OPTIONS"], request: request, cors: cors), route.pattern)
            }
            return (ProblemDetails.methodNotAllowed(request.method, allowed: allowed + ["OPTIONS"]).response, route.pattern)
        }
        if !request.query.isEmpty, let unknown = request.query.keys.sorted().first(where: { !entry.query.contains($0) }) {
            let takes = entry.query.isEmpty ? "this endpoint takes no query parameters"
                : "this endpoint takes \(entry.query.map { "'\($0)'" }.joined(separator: ", "))"
            let shown = unknown.count > 64 ? String(unknown.prefix(64)) + "…" : unknown
            return (ProblemDetails.badRequest("unknown query parameter '\(shown)': \(takes)", parameter: shown).response, route.pattern)
        }
        if request.inlineSampleLimit != nil, !entry.inline { return (.computeOnPool, route.pattern) }
        if entry.held == .checkedFirst, request.heldAnswersAtLimit { return (Self.heldRefusal.response, route.pattern) }
        var response: HTTPResponse
        if parameters.isEmpty {
            response = entry.handler(request)
        } else {
            var matched = request
            matched.pathParameters = parameters
            response = entry.handler(matched)
        }
        if entry.held != .replaceable { response.alwaysDelivered = true }
        return (response, route.pattern)
    }

    /// The 503 for answers not read holding `--max-held-response-bytes` (the daemon replaces a
    /// replaceable answer by it too).
    static let heldRefusal = ProblemDetails.unavailable(
        "answers not yet read by their clients hold the most bytes allowed (max-held-response-bytes); try again")

    private static func match(_ pattern: [Substring], _ path: ArraySlice<Substring>) -> [String: String]? {
        // The root: the pattern "/" has no segments, the path "/" one empty one.
        if pattern.isEmpty { return path.count == 1 && path.first == "" ? [:] : nil }
        guard pattern.count == path.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, actual) in zip(pattern, path) {
            if expected.hasPrefix("{"), expected.hasSuffix("}") {
                guard !actual.isEmpty else { return nil }
                parameters[String(expected.dropFirst().dropLast())] = String(actual)
            } else if expected != actual {
                return nil
            }
        }
        return parameters
    }
}
