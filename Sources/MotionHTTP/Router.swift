/// Maps method + path to a handler. Patterns may hold `{name}` segments; unknown paths are
/// 404 and wrong methods 405 with `Allow`, both as problem+json.
struct Router: Sendable {
    typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    private struct Route: Sendable {
        var pattern: String
        var segments: [Substring]
        var methods: [(method: String, handler: Handler)]
    }

    private var routes: [Route] = []

    mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        if let index = routes.firstIndex(where: { $0.pattern == pattern }) {
            routes[index].methods.append((method, handler))
        } else {
            routes.append(Route(pattern: pattern, segments: pattern.split(separator: "/"), methods: [(method, handler)]))
        }
    }

    /// The response, and the route pattern that answered (the label for metrics).
    func handle(_ request: HTTPRequest) -> (response: HTTPResponse, route: String) {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for route in routes {
            guard let parameters = Self.match(route.segments, segments) else { continue }
            // HEAD is answered like GET; libmicrohttpd omits the body.
            let method = request.method == "HEAD" ? "GET" : request.method
            guard let entry = route.methods.first(where: { $0.method == method }) else {
                var allowed = route.methods.map(\.method)
                if allowed.contains("GET") { allowed.append("HEAD") }
                return (ProblemDetails.methodNotAllowed(request.method, allowed: allowed).response, route.pattern)
            }
            var matched = request
            matched.pathParameters = parameters
            return (entry.handler(matched), route.pattern)
        }
        return (ProblemDetails.notFound(request.path).response, "unmatched")
    }

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
