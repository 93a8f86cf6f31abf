/// A request head as libmicrohttpd parsed it, and the checks it must pass before any body is
/// read: the framing rules of RFC 9112 that libmicrohttpd 0.9.75 lets through.
///
/// Each problem is answered at once (the daemon queues the answer on the headers-only call,
/// after which libmicrohttpd closes the connection), so a request never waits for a timeout and
/// bytes after a bad head are never read as another request.
struct RequestHead: Sendable {
    struct Field: Sendable {
        var name: String
        var value: String
        /// False when libmicrohttpd built the field from an obs-folded continuation line (its
        /// name no longer sits just before its value in the request buffer).
        var contiguous = true
        /// Which of the headers the server reads this is, found once from the name's bytes.
        var known: KnownName?

        init(name: String, value: String, contiguous: Bool = true) {
            self.name = name
            self.value = value
            self.contiguous = contiguous
            var name = name
            self.known = name.withUTF8 { KnownName(UnsafeRawBufferPointer($0)) }
        }
    }

    /// The header names the server reads, matched as libmicrohttpd compares names (ASCII
    /// letters in any case). Each field's name is matched once, when it is collected, and
    /// every later question ("is this Content-Length?", "the Accept header?") compares the
    /// tag. Matching every name again for each header wanted cost about 5,600 instructions a
    /// request more (callgrind, the small document of `make bench-instructions`: 214,271 →
    /// 208,658).
    enum KnownName: CaseIterable, Sendable {
        case host, transferEncoding, contentLength, contentType, accept, acceptEncoding, origin,
             accessControlRequestMethod, ifNoneMatch, requestID

        var lowercased: StaticString {
            switch self {
            case .host: return "host"
            case .transferEncoding: return "transfer-encoding"
            case .contentLength: return "content-length"
            case .contentType: return "content-type"
            case .accept: return "accept"
            case .acceptEncoding: return "accept-encoding"
            case .origin: return "origin"
            case .accessControlRequestMethod: return "access-control-request-method"
            case .ifNoneMatch: return "if-none-match"
            case .requestID: return "x-request-id"
            }
        }

        /// The name `bytes` spells, or nil for any other. The length picks the one or two
        /// names to compare with.
        init?(_ bytes: UnsafeRawBufferPointer) {
            func either(_ first: KnownName, _ second: KnownName? = nil) -> KnownName? {
                if RequestHead.equalsIgnoringASCIICase(bytes, first.lowercased) { return first }
                if let second, RequestHead.equalsIgnoringASCIICase(bytes, second.lowercased) { return second }
                return nil
            }
            let found: KnownName?
            switch bytes.count {
            case 4: found = either(.host)
            case 6: found = either(.accept, .origin)
            case 12: found = either(.contentType, .requestID)
            case 13: found = either(.ifNoneMatch)
            case 14: found = either(.contentLength)
            case 15: found = either(.acceptEncoding)
            case 17: found = either(.transferEncoding)
            case 29: found = either(.accessControlRequestMethod)
            default: found = nil
            }
            guard let found else { return nil }
            self = found
        }
    }

    var method: String
    /// The request target as sent, before percent-decoding.
    var rawTarget: String
    var version: String
    var fields: [Field]

    /// Most query parameters accepted (each costs libmicrohttpd pool memory).
    static let maxQueryParameters = 256

    /// Bytes a query parameter takes from libmicrohttpd's per-connection memory besides its
    /// text (0.9.75: a 56-byte entry, allocated in 16-byte steps).
    static let poolBytesPerParameter = 64
    /// Connection memory kept for the rest of the head and the answer's head when a query is
    /// measured against it.
    static let poolReserveBytes = 2048

    /// Whether the query of `rawTarget` (with `parameters` parameters) may be parsed in a
    /// connection memory of `poolBytes`. libmicrohttpd 0.9.75 answers nothing to a request
    /// whose query exhausts that memory (the connection waits for the header timeout), so such
    /// a query is cut off and answered 414 at once instead.
    static func queryFits(_ rawTarget: String, parameters: Int, poolBytes: Int) -> Bool {
        parameters == 0 || rawTarget.utf8.count + parameters * poolBytesPerParameter <= poolBytes - poolReserveBytes
    }

    /// The first framing problem, or nil. `maxBodyBytes` bounds a declared Content-Length;
    /// `poolBytes` is the per-connection memory (`--connection-memory`).
    func problem(maxBodyBytes: Int, poolBytes: Int) -> ProblemDetails? {
        for field in fields {
            if !field.contiguous {
                return .badRequest("a header line continued on the next line (obs-fold) is not allowed")
            }
            if field.name.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) {
                return .badRequest("whitespace between a header name and its colon ('\(Self.printable(field.name))') is not allowed")
            }
        }
        if Self.hasEncodedNUL(rawTarget) {
            return .badRequest("the request target contains an encoded NUL (%00)")
        }
        let parameters = Self.queryParameterCount(rawTarget)
        if parameters > Self.maxQueryParameters {
            return ProblemDetails(status: 414, type: "/problems/uri-too-long", title: "URI too long",
                                  detail: "the query has \(parameters) parameters; at most \(Self.maxQueryParameters) are accepted")
        }
        if !Self.queryFits(rawTarget, parameters: parameters, poolBytes: poolBytes) {
            return ProblemDetails(status: 414, type: "/problems/uri-too-long", title: "URI too long",
                                  detail: "the request target (\(rawTarget.utf8.count) bytes, \(parameters) query parameters) does not fit the connection memory of \(poolBytes) bytes (connection-memory): its bytes plus \(Self.poolBytesPerParameter) per parameter must stay within \(poolBytes - Self.poolReserveBytes)")
        }
        // One pass over the fields for Host, Transfer-Encoding and Content-Length.
        var hasHost = false
        var encodings: [Field] = []
        var lengths: [String] = []
        for field in fields {
            switch field.known {
            case .host:
                hasHost = true
            case .transferEncoding:
                encodings.append(field)
            case .contentLength:
                if !field.value.utf8.contains(UInt8(ascii: ",")) {
                    lengths.append(Self.trimmingWhitespace(field.value[...]))
                } else {
                    lengths += field.value.split(separator: ",", omittingEmptySubsequences: false).map { Self.trimmingWhitespace($0) }
                }
            default:
                break
            }
        }
        if version == "HTTP/1.1", !hasHost {
            return .badRequest("an HTTP/1.1 request must carry a Host header")
        }
        if !encodings.isEmpty {
            let codings = encodings.flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
                .map { Self.trimmingWhitespace($0).lowercased() }
            guard codings == ["chunked"] else {
                return ProblemDetails(status: 501, type: "/problems/not-implemented", title: "Not implemented",
                                      detail: "Transfer-Encoding '\(Self.printable(encodings.map(\.value).joined(separator: ", ")))' is not supported; only chunked is")
            }
            if !lengths.isEmpty {
                return .badRequest("a request must not carry both Content-Length and Transfer-Encoding")
            }
        }
        if lengths.count > 1, Set(lengths).count > 1 {
            return .badRequest("conflicting Content-Length headers")
        }
        if let text = lengths.first {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return .badRequest("invalid Content-Length '\(Self.printable(text))'")
            }
            if text.utf8.count > 18 || Int(text) ?? Int.max > maxBodyBytes {
                return .payloadTooLarge(limit: maxBodyBytes)
            }
        }
        return nil
    }

    /// Whether the head announces a body (a Content-Length above 0, or chunked).
    var expectsBody: Bool {
        fields.contains { field in
            (field.known == .contentLength && Self.trimmingWhitespace(field.value[...]) != "0")
                || field.known == .transferEncoding
        }
    }

    /// Parameters in the query of a raw target (`&`-separated pieces after the first `?`).
    static func queryParameterCount(_ rawTarget: String) -> Int {
        let bytes = rawTarget.utf8
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return 0 }
        // The non-empty `&`-separated pieces, counted without making them.
        var count = 0
        var inPiece = false
        for byte in bytes[bytes.index(after: mark)...] {
            if byte == UInt8(ascii: "&") {
                inPiece = false
            } else if !inPiece {
                inPiece = true
                count += 1
            }
        }
        return count
    }

    // The checks above run on every request: they compare and trim header bytes directly
    // (no Foundation `trimmingCharacters`, no `lowercased()` copies; `problem` and
    // `expectsBody` together, callgrind, small document: 24,000 → 11,500 instructions a request). Text that is not ASCII takes the
    // Foundation path, so every answer stays what it was.

    /// Whether `text` is `name` with ASCII letters in any case (as libmicrohttpd compares
    /// header names).
    static func equalsIgnoringASCIICase(_ text: String, _ name: StaticString) -> Bool {
        var text = text
        return text.withUTF8 { equalsIgnoringASCIICase(UnsafeRawBufferPointer($0), name) }
    }

    /// Whether `bytes` are `name` with ASCII letters in any case.
    static func equalsIgnoringASCIICase(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard bytes.count == count else { return false }
        let expected = name.utf8Start
        let lower = { (byte: UInt8) -> UInt8 in byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
        for index in 0..<count where lower(bytes[index]) != lower(expected[index]) { return false }
        return true
    }

    /// `text` without leading and trailing whitespace (space, tab; Foundation's
    /// `.whitespaces` when the text is not ASCII).
    static func trimmingWhitespace(_ text: Substring) -> String {
        let bytes = text.utf8
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return text.trimmingCharacters(in: .whitespaces) }
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(text[first...last])
    }

    private static func hasEncodedNUL(_ target: String) -> Bool {
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in target.utf8 {
            if byte == UInt8(ascii: "0"), previous.0 == UInt8(ascii: "%"), previous.1 == UInt8(ascii: "0") { return true }
            previous = (previous.1, byte)
        }
        return false
    }

    /// At most 100 characters of client text, control characters replaced, for messages.
    static func printable(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.prefix(100).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        return text.unicodeScalars.count > 100 ? cleaned + "…" : cleaned
    }
}
