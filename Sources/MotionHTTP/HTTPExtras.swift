import CZlib
import MotionEngine

// What every answer gets on its way out (docs/http.md): CORS headers, and gzip or deflate
// for large complete answers. Streams are never compressed.

/// `--cors-origin`: which browser origins may call the service from another origin.
struct CORSPolicy: Sendable, Equatable {
    /// `*` (any origin, without credentials), or exact origins such as `https://app.example`.
    let origins: [String]

    /// Parses the flag: `*`, or origins separated by commas. Nil when empty.
    init?(_ text: String?) {
        guard let text else { return nil }
        let origins = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !origins.isEmpty else { return nil }
        self.origins = origins
    }

    var allowsAny: Bool { origins.contains("*") }

    /// Whether the flag's origins are each `*` or `scheme://host[:port]`.
    var invalidOrigin: String? {
        origins.first { origin in
            guard origin != "*" else { return false }
            guard let schemeEnd = origin.range(of: "://") else { return true }
            let rest = origin[schemeEnd.upperBound...]
            return rest.isEmpty || rest.contains("/") || origin.count > 256
        }
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, nil when that
    /// origin is not allowed.
    func allowedOrigin(_ origin: String?) -> String? {
        guard let origin else { return nil }
        if allowsAny { return "*" }
        return origins.contains(origin) ? origin : nil
    }

    /// Request headers a browser may send (preflight `Access-Control-Allow-Headers`).
    static let allowedHeaders = "Content-Type, Accept, Accept-Encoding, If-None-Match, X-Request-Id"
    /// Response headers a page's script may read besides the CORS-safelisted ones.
    static let exposedHeaders = "Location, Retry-After, Allow, ETag, Content-Encoding, X-Request-Id, X-Instance-Id"
    /// Seconds a browser may cache a preflight answer.
    static let maxAge = 600
}

/// The codings `Accept-Encoding` may choose.
enum ContentCoding: String, Sendable {
    case gzip, deflate

    /// The coding to use for a client's `Accept-Encoding`: gzip if acceptable (q > 0, or
    /// through `*`), else deflate, else nil (identity).
    static func negotiate(_ acceptEncoding: String?) -> ContentCoding? {
        guard let acceptEncoding, acceptEncoding.utf8.count <= 4096 else { return nil }
        // The usual header needs no table: `identity` alone, what many clients send (21,300 →
        // 350 instructions a request, callgrind, small document).
        if RequestHead.equalsIgnoringASCIICase(acceptEncoding, "identity") { return nil }
        var qualities: [String: Double] = [:]
        for item in acceptEncoding.split(separator: ",").prefix(64) {
            let parts = item.split(separator: ";").map { RequestHead.trimmingWhitespace($0).lowercased() }
            guard let name = parts.first, !name.isEmpty else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            qualities[name] = q.isFinite ? q : 0
        }
        func acceptable(_ name: String) -> Bool {
            if let q = qualities[name] { return q > 0 }
            if let q = qualities["*"] { return q > 0 }
            return false
        }
        if acceptable("gzip") { return .gzip }
        if acceptable("deflate") { return .deflate }
        return nil
    }
}

enum Compression {
    /// Answers smaller than this are sent as they are: compressing them saves little.
    static let minimumBytes = 1024
    /// Answers from this size on are compressed at zlib level 1 (fast), smaller ones at 6.
    static let fastLevelBytes = 1 << 20

    /// `input` compressed with `coding` (gzip: RFC 1952; deflate: the zlib format of RFC 1950,
    /// as HTTP's `deflate` means), or nil if zlib fails or the computation is cancelled
    /// (`Cancellation`: its answer is not sent).
    static func compress(_ input: [UInt8], _ coding: ContentCoding) -> [UInt8]? {
        var stream = z_stream()
        let level: Int32 = input.count >= fastLevelBytes ? 1 : 6
        let windowBits: Int32 = coding == .gzip ? 15 + 16 : 15
        guard cz_deflate_init2(&stream, level, windowBits) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let chunk = 256 * 1024
        var buffer = [UInt8](repeating: 0, count: chunk)
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 + 64)
        let finished = input.withUnsafeBufferPointer { source -> Bool in
            var offset = 0
            repeat {
                let take = min(source.count - offset, 1 << 30)
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress.map { $0 + offset })
                stream.avail_in = uInt(take)
                offset += take
                let flush = offset == source.count ? Z_FINISH : Z_NO_FLUSH
                var status: Int32 = Z_OK
                repeat {
                    let produced = buffer.withUnsafeMutableBufferPointer { out -> Int in
                        stream.next_out = out.baseAddress
                        stream.avail_out = uInt(chunk)
                        status = deflate(&stream, flush)
                        return chunk - Int(stream.avail_out)
                    }
                    if status == Z_STREAM_ERROR { return false }
                    output.append(contentsOf: buffer[0..<produced])
                    // A look for a cancellation after each full 256 KB written (about 5 ms at
                    // level 1): a cancelled answer is thrown away, so it need not be finished.
                    if stream.avail_out == 0, Cancellation.isRequested { return false }
                } while stream.avail_out == 0
                if flush == Z_FINISH { return status == Z_STREAM_END }
            } while true
        }
        return finished ? output : nil
    }
}

extension HTTPResponse {
    func header(_ name: String) -> String? {
        // ASCII names (all of the service's) are compared byte by byte, not through
        // Foundation's `caseInsensitiveCompare` (10,400 → 1,400 instructions a request;
        // with `negotiate`, `finished` went from 32,500 to 2,300; callgrind, small document).
        var wanted = name  // `withUTF8` needs a variable; the copy shares the storage
        guard wanted.withUTF8({ $0.allSatisfy { $0 < 0x80 } }) else {
            return headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }
        return headers.first { Self.sameASCIIName($0.0, name) ?? ($0.0.caseInsensitiveCompare(name) == .orderedSame) }?.1
    }

    /// Whether two header names are equal ignoring ASCII case; nil when `candidate` is not
    /// ASCII (then Foundation decides).
    ///
    /// On the names' contiguous bytes: walking the two `UTF8View`s with `zip` cost about
    /// 1,400 instructions a 200 for the small document (`header("Content-Encoding")` over its
    /// four headers); with the bytes, `finished` as a whole went from 1,837 to 1,306
    /// (callgrind).
    private static func sameASCIIName(_ candidate: String, _ name: String) -> Bool? {
        var candidate = candidate, name = name
        return candidate.withUTF8 { a in
            name.withUTF8 { b -> Bool? in
                guard a.count == b.count else { return a.allSatisfy { $0 < 0x80 } ? false : nil }
                let lower = { (byte: UInt8) -> UInt8 in byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
                var equal = true
                var index = 0
                while index < a.count {
                    let x = a[index]
                    if x >= 0x80 { return nil }
                    if lower(x) != lower(b[index]) { equal = false }
                    index &+= 1
                }
                return equal
            }
        }
    }

    /// This answer as it goes out to `request`: compressed when the client accepts it and the
    /// body is large enough, with the CORS headers when the request comes from an allowed
    /// origin.
    consuming func finished(for request: HTTPRequest, cors: CORSPolicy?) -> HTTPResponse {
        var response = self
        if case .bytes(let body) = response.body, response.status != 204, response.status != 304 {
            response.headers.append(("Vary", "Accept-Encoding"))
            if body.count >= Compression.minimumBytes, response.header("Content-Encoding") == nil,
               let coding = ContentCoding.negotiate(request.acceptEncoding),
               let compressed = response.staticBody?.compressed(coding) ?? Compression.compress(body, coding) {
                response.body = .bytes(compressed)
                response.headers.append(("Content-Encoding", coding.rawValue))
                // A compressed representation is a different one: its strong ETag differs.
                if let index = response.headers.firstIndex(where: { Self.sameASCIIName($0.0, "ETag") ?? ($0.0.caseInsensitiveCompare("ETag") == .orderedSame) }) {
                    let tag = response.headers[index].1
                    if tag.hasSuffix("\"") {
                        response.headers[index].1 = String(tag.dropLast()) + "-\(coding.rawValue)\""
                    }
                }
            }
        }
        return response.withCORS(origin: request.origin, cors: cors)
    }

    /// This answer with the CORS headers for a request from `origin`, when `cors` allows that
    /// origin and they are not there yet. Answers made before routing (a 413 announced by
    /// `Content-Length`, a 503 when every compute thread is busy) get them this way too, so
    /// that a browser sees the problem rather than a CORS failure.
    consuming func withCORS(origin: String?, cors: CORSPolicy?) -> HTTPResponse {
        guard let cors, let allowed = cors.allowedOrigin(origin), header("Access-Control-Allow-Origin") == nil else { return self }
        var response = self
        response.headers.append(("Access-Control-Allow-Origin", allowed))
        response.headers.append(("Access-Control-Expose-Headers", CORSPolicy.exposedHeaders))
        if allowed != "*" { response.headers.append(("Vary", "Origin")) }
        return response
    }

    /// The answer to `OPTIONS` on a known path: 204 with `Allow`, and for a CORS preflight
    /// from an allowed origin the `Access-Control-Allow-*` headers.
    static func options(allowed: [String], request: HTTPRequest, cors: CORSPolicy?) -> HTTPResponse {
        let methods = allowed.joined(separator: ", ")
        var headers: [(String, String)] = [("Allow", methods)]
        if let cors, let origin = cors.allowedOrigin(request.origin), request.accessControlRequestMethod != nil {
            headers.append(("Access-Control-Allow-Origin", origin))
            headers.append(("Access-Control-Allow-Methods", methods))
            headers.append(("Access-Control-Allow-Headers", CORSPolicy.allowedHeaders))
            headers.append(("Access-Control-Max-Age", String(CORSPolicy.maxAge)))
            if origin != "*" { headers.append(("Vary", "Origin")) }
        }
        return HTTPResponse(status: 204, headers: headers, body: [])
    }
}
