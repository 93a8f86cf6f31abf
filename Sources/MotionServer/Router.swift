/// Maps method + path to a handler; unknown paths are 404, wrong methods 405 with `Allow`.
struct Router: Sendable {
    typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    private var routes: [String: [(method: String, handler: Handler)]] = [:]

    mutating func add(_ method: String, _ path: String, _ handler: @escaping Handler) {
        routes[path, default: []].append((method, handler))
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        guard let candidates = routes[request.path] else {
            return ProblemDetails.notFound(request.path).response
        }
        // HEAD is answered like GET; libmicrohttpd omits the body.
        let method = request.method == "HEAD" ? "GET" : request.method
        guard let route = candidates.first(where: { $0.method == method }) else {
            var allowed = candidates.map(\.method)
            if allowed.contains("GET") { allowed.append("HEAD") }
            return ProblemDetails.methodNotAllowed(request.method, allowed: allowed).response
        }
        return route.handler(request)
    }
}
