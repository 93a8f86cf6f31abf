import MotionEngine

/// Entry point for the `FuzzHTTP` libFuzzer target (Fuzz/, docs/fuzzing.md): the service's
/// router and handlers, without a daemon or sockets.
///
/// An input is one or more requests separated by a line `%%` (`\n%%\n`), each written like
/// HTTP/1.1 without the version:
///
///     POST /v1/sessions?speed=2
///     Content-Type: application/json
///     Accept: text/event-stream
///
///     {"target":{"x":0},"motion":{"type":"tween","path":"x","to":1,"duration":1}}
///
/// The request line is the method, a space, and the target (path, `?`, query); then header
/// lines up to an empty line; the rest up to the separator is the body. A path segment `@`
/// stands for the id of the last session this input created, so commands, retargets, watchers
/// and deletion reach a live session. Path and query are percent-decoded as libmicrohttpd
/// does; strings stop at a NUL byte, as libmicrohttpd's C strings do.
///
/// Streamed answers (`/v1/streams`, session watchers) are read without a connection: up to
/// `maxStreamBytes` of what is due now, then closed as if the client went away. Answers are
/// checked: a status the API defines, JSON bodies and stream lines that parse. Every session
/// an input created is deleted before the next input, so inputs do not depend on each other
/// (except through metrics, which only grow).
public enum FuzzEntry {
    /// Requests per input beyond which the rest of the input is ignored.
    public static let maxRequests = 8
    /// Bytes read from one streamed answer before it is closed.
    public static let maxStreamBytes = 256 * 1024

    private static let service = FuzzService()

    /// Runs every request in `data`; returns the status of each (for tests).
    @discardableResult
    public static func handle(_ data: UnsafeRawBufferPointer) -> [Int] {
        service.handle(Array(data))
    }

    @discardableResult
    public static func handle(_ bytes: [UInt8]) -> [Int] {
        service.handle(bytes)
    }
}

/// What `MotionService` builds for its daemon, minus the daemon, pacer and janitor.
private final class FuzzService: @unchecked Sendable {
    let configuration: ServerConfiguration
    let state = ServiceState()
    let metrics = ServiceMetrics()
    let streams: StreamRegistry
    let sessions: SessionRegistry
    let router: Router

    init() {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        self.configuration = configuration
        let metrics = self.metrics
        streams = StreamRegistry { metrics.setOpenStreams($0) }
        sessions = SessionRegistry(maxSessions: configuration.maxSessions, idleTTL: configuration.sessionTTL, metrics: metrics)
        router = Handlers(configuration: configuration, state: state, streams: streams, sessions: sessions, metrics: metrics).router()
    }

    func handle(_ bytes: [UInt8]) -> [Int] {
        var statuses: [Int] = []
        var lastSession: String?
        for chunk in Self.split(bytes).prefix(FuzzEntry.maxRequests) {
            guard var request = Self.request(chunk) else { continue }
            if let id = lastSession {
                request.path = request.path.split(separator: "/", omittingEmptySubsequences: false)
                    .map { $0 == "@" ? id : String($0) }.joined(separator: "/")
            }
            let started = MonotonicClock.now()
            let (response, route) = router.handle(request)
            metrics.recordRequest(route: route, method: request.method, status: response.status,
                                  seconds: Double(MonotonicClock.now() - started) / 1e9)
            statuses.append(response.status)
            if response.status == 201, request.path == "/v1/sessions",
               let location = response.headers.first(where: { $0.0 == "Location" })?.1 {
                lastSession = String(location.dropFirst("/v1/sessions/".count))
            }
            switch response.body {
            case .bytes(let body): Self.check(response, body: body, for: request)
            case .stream(let stream): Self.check(response, stream: Self.drain(stream), for: request)
            }
        }
        // Every session this input made, however its request was spelled, ends with it: a
        // session left alive would be reported by LeakSanitizer, which cannot follow the
        // tagged pointers of Swift enum payloads inside a live timeline.
        sessions.endAll()
        return statuses
    }

    /// Reads what the stream has due now (bounded), then closes it like a departed client.
    private static func drain(_ stream: PacedStream) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var output: [UInt8] = []
        reading: while output.count < FuzzEntry.maxStreamBytes {
            let result = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
            switch result {
            case .bytes(let count): output += buffer[..<count]
            case .suspended, .end, .abort: break reading
            }
        }
        stream.close()
        return output
    }

    // MARK: - Invariants (a violation is a crash the fuzzer reports)

    /// Statuses the API defines; anything else (a 500) is a bug.
    private static let statuses: Set<Int> = [200, 201, 204, 400, 404, 405, 409, 413, 415, 422, 429, 503]

    /// Every answer has a defined status, and a JSON or problem+json body is valid JSON.
    private static func check(_ response: HTTPResponse, body: [UInt8], for request: HTTPRequest) {
        guard statuses.contains(response.status) else {
            fatalError("\(request.method) \(request.path): status \(response.status)")
        }
        let type = response.headers.first { $0.0 == "Content-Type" }?.1 ?? ""
        guard type == "application/json" || type == "application/problem+json" else { return }
        if (try? JSONParser.parse(body)) == nil {
            fatalError("\(request.method) \(request.path): invalid JSON body: \(String(decoding: body.prefix(2000), as: UTF8.self))")
        }
    }

    /// A streamed answer is NDJSON (each complete line valid JSON) or server-sent events (each
    /// `data:` line valid JSON); the last line may be cut short by the read limit.
    private static func check(_ response: HTTPResponse, stream bytes: [UInt8], for request: HTTPRequest) {
        guard response.status == 200 else {
            fatalError("\(request.method) \(request.path): stream with status \(response.status)")
        }
        let sse = response.headers.contains { $0.0 == "Content-Type" && $0.1 == "text/event-stream" }
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        if bytes.last != UInt8(ascii: "\n"), !lines.isEmpty { lines.removeLast() }
        for line in lines {
            var json = line[...]
            if sse {
                guard line.starts(with: Array("data: ".utf8)) else { continue }
                json = line.dropFirst(6)
            }
            if (try? JSONParser.parse(Array(json))) == nil {
                fatalError("\(request.method) \(request.path): invalid stream line: \(String(decoding: line.prefix(2000), as: UTF8.self))")
            }
        }
    }

    // MARK: - Parsing the fuzz input

    private static let separator: [UInt8] = Array("\n%%\n".utf8)

    static func split(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var parts: [ArraySlice<UInt8>] = []
        var start = 0, index = 0
        while index + separator.count <= bytes.count {
            if bytes[index] == separator[0], bytes[index..<(index + separator.count)].elementsEqual(separator) {
                parts.append(bytes[start..<index])
                index += separator.count
                start = index
            } else {
                index += 1
            }
        }
        parts.append(bytes[start...])
        return parts
    }

    static func request(_ chunk: ArraySlice<UInt8>) -> HTTPRequest? {
        var lines: [ArraySlice<UInt8>] = []
        var position = chunk.startIndex
        var bodyStart = chunk.endIndex
        while position < chunk.endIndex {
            let end = chunk[position...].firstIndex(of: UInt8(ascii: "\n")) ?? chunk.endIndex
            var line = chunk[position..<end]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            position = end < chunk.endIndex ? end + 1 : end
            if line.isEmpty, !lines.isEmpty {
                bodyStart = position
                break
            }
            lines.append(line)
        }
        guard let requestLine = lines.first else { return nil }
        let words = requestLine.split(separator: UInt8(ascii: " "), maxSplits: 1)
        guard words.count == 2 else { return nil }
        let method = cString(words[0])
        let target = words[1].split(separator: UInt8(ascii: " ")).first ?? words[1][words[1].startIndex...]
        let question = target.firstIndex(of: UInt8(ascii: "?"))
        let path = cString(unescape(target[target.startIndex..<(question ?? target.endIndex)], plus: false))
        var query: [String: String] = [:]
        if let question {
            for argument in target[(question + 1)...].split(separator: UInt8(ascii: "&")) {
                let pair = argument.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
                query[cString(unescape(pair[0], plus: true))] = pair.count > 1 ? cString(unescape(pair[1], plus: true)) : ""
            }
        }
        var contentType: String?, accept: String?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = cString(line[line.startIndex..<colon]).lowercased()
            let value = cString(line[(colon + 1)...]).trimmingSpaces()
            // libmicrohttpd's lookup answers the first header of a name.
            if name == "content-type", contentType == nil { contentType = value }
            if name == "accept", accept == nil { accept = value }
        }
        return HTTPRequest(method: method, path: path, query: query, contentType: contentType, accept: accept,
                           body: Array(chunk[bodyStart...]))
    }

    /// `%XX` escapes (and `+` as a space in query arguments), as libmicrohttpd decodes them.
    static func unescape(_ bytes: ArraySlice<UInt8>, plus: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(plus && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The bytes up to the first NUL, as a C string would hold them (invalid UTF-8 repaired).
    private static func cString<C: Collection<UInt8>>(_ bytes: C) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
}

private extension String {
    func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while scalars.first == " " || scalars.first == "\t" { scalars.removeFirst() }
        while scalars.last == " " || scalars.last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
