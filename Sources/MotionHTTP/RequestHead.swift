import Glibc

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
        /// Whether the name holds a blank (a space or tab before the colon), found with `known`.
        var nameHasBlank = false
        /// Whether the value holds a carriage return (RFC 9112 §2.2: a bare CR is invalid),
        /// found with `memchr` on the value's own bytes (`String.UTF8View.contains` walked it
        /// by index: 1,430 instructions a request, callgrind).
        var valueHasCR = false

        init(name: String, value: String, contiguous: Bool = true) {
            self.name = name
            self.value = value
            self.contiguous = contiguous
            var name = name
            (known, nameHasBlank) = name.withUTF8 { bytes in
                (KnownName(UnsafeRawBufferPointer(bytes)), bytes.contains { $0 == 0x20 || $0 == 0x09 })
            }
            var value = value
            valueHasCR = value.withUTF8 { bytes in
                guard let base = bytes.baseAddress else { return false }
                return memchr(base, 0x0D, bytes.count) != nil
            }
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
            if field.nameHasBlank {
                return .badRequest("whitespace between a header name and its colon ('\(Self.printable(field.name))') is not allowed")
            }
            // RFC 9112 §2.2: a bare CR is invalid; libmicrohttpd passes it through.
            if field.valueHasCR {
                return .badRequest("a carriage return inside the value of '\(Self.printable(field.name))' is not allowed")
            }
        }
        var target = rawTarget
        let (encodedNUL, parameters) = target.withUTF8 { bytes in
            let bytes = UnsafeRawBufferPointer(bytes)
            return (Self.hasEncodedNUL(bytes), Self.queryParameterCount(bytes))
        }
        if encodedNUL {
            return .badRequest("the request target contains an encoded NUL (%00)")
        }
        if parameters > Self.maxQueryParameters {
            return ProblemDetails(status: 414, type: "/problems/uri-too-long", title: "URI too long",
                                  detail: "the query has \(parameters) parameters; at most \(Self.maxQueryParameters) are accepted")
        }
        if !Self.queryFits(rawTarget, parameters: parameters, poolBytes: poolBytes) {
            return ProblemDetails(status: 414, type: "/problems/uri-too-long", title: "URI too long",
                                  detail: "the request target (\(rawTarget.utf8.count) bytes, \(parameters) query parameters) does not fit the connection memory of \(poolBytes) bytes (connection-memory): its bytes plus \(Self.poolBytesPerParameter) per parameter must stay within \(poolBytes - Self.poolReserveBytes)")
        }
        // One pass over the fields for Host, Transfer-Encoding and Content-Length.
        var hosts = 0
        var encodings: [Field] = []
        var lengthFields = 0
        var lastLength = ""
        for field in fields {
            switch field.known {
            case .host:
                hosts += 1
            case .transferEncoding:
                encodings.append(field)
            case .contentLength:
                lengthFields += 1
                lastLength = field.value
            default:
                break
            }
        }
        if version == "HTTP/1.1", hosts == 0 {
            return .badRequest("an HTTP/1.1 request must carry a Host header")
        }
        // RFC 9112 §3.2: more than one Host field line is a 400, whatever the version.
        if hosts > 1 {
            return .badRequest("a request must not carry more than one Host header")
        }
        // The usual request: one Content-Length of 1 to 18 ASCII digits, no Transfer-Encoding.
        // Anything else takes the general checks below, which give every other answer.
        if encodings.isEmpty, lengthFields == 1, let length = Self.plainContentLength(lastLength) {
            return length > maxBodyBytes ? .payloadTooLarge(limit: maxBodyBytes) : nil
        }
        var lengths: [String] = []
        if lengthFields > 0 {
            for field in fields where field.known == .contentLength {
                if !field.value.utf8.contains(UInt8(ascii: ",")) {
                    lengths.append(Self.trimmingWhitespace(field.value[...]))
                } else {
                    lengths += field.value.split(separator: ",", omittingEmptySubsequences: false).map { Self.trimmingWhitespace($0) }
                }
            }
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

    /// Whether the head announces a body (a Content-Length other than `0`, or chunked).
    var expectsBody: Bool {
        fields.contains { field in
            switch field.known {
            case .contentLength:
                if let plain = Self.plainContentLength(field.value) {
                    return plain != 0 || !Self.isSingleZero(field.value)
                }
                return Self.trimmingWhitespace(field.value[...]) != "0"
            case .transferEncoding:
                return true
            default:
                return false
            }
        }
    }

    /// The value of a Content-Length field that is 1 to 18 ASCII digits between optional
    /// spaces and tabs, or nil for anything else (a list, another character, more digits).
    /// Such a value is what the general checks of `problem` accept as one length; they are
    /// left for every other value. Reading the bytes in place saved the trimmed `String`s and
    /// the array of them (callgrind, see `problem`).
    static func plainContentLength(_ value: String) -> Int? {
        var value = value
        return value.withUTF8 { bytes -> Int? in
            var start = 0, end = bytes.count
            while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
            while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
            guard end > start, end - start <= 18 else { return nil }
            var length = 0
            for index in start..<end {
                let digit = bytes[index] &- 0x30
                guard digit <= 9 else { return nil }
                length = length * 10 + Int(digit)  // at most 18 digits: no overflow
            }
            return length
        }
    }

    /// Whether `value`, without the blanks around it, is exactly `0` (not `00`).
    private static func isSingleZero(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in bytes.lazy.filter { $0 != 0x20 && $0 != 0x09 }.count == 1 }
    }

    /// Parameters in the query of a raw target (`&`-separated pieces after the first `?`).
    static func queryParameterCount(_ rawTarget: String) -> Int {
        var target = rawTarget
        return target.withUTF8 { queryParameterCount(UnsafeRawBufferPointer($0)) }
    }

    static func queryParameterCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return 0 }
        // The non-empty `&`-separated pieces, counted without making them.
        var count = 0
        var inPiece = false
        for byte in bytes[(mark + 1)...] {
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
    // Foundation path, so every answer stays what it was. Then (twelfth round) the usual
    // request's one plain Content-Length read from its bytes, the name's blank found when
    // the field is tagged, and the target scanned as a buffer: `problem` 5,311 → 808 and
    // `expectsBody` 1,178 → 279 (callgrind, a 304 for the small document).

    /// Whether `text` is `name` with ASCII letters in any case (as libmicrohttpd compares
    /// header names).
    static func equalsIgnoringASCIICase(_ text: String, _ name: StaticString) -> Bool {
        var text = text
        return text.withUTF8 { equalsIgnoringASCIICase(UnsafeRawBufferPointer($0), name) }
    }

    /// Whether `bytes` are `name` with ASCII letters in any case.
    ///
    /// A byte that differs from the name's must be the same letter in the other case: both
    /// are `lower` once 0x20 is set, and that is a letter (no other byte pair is 0x20 apart
    /// and lands on a letter). The closure that folded both bytes cost about 25 instructions
    /// a byte, this about 8 (callgrind: the names of the small document's headers,
    /// 1,424 → 435 instructions a request).
    static func equalsIgnoringASCIICase(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard bytes.count == count else { return false }
        let expected = UnsafeRawPointer(name.utf8Start)
        var index = 0
        while index < count {
            let byte = bytes.load(fromByteOffset: index, as: UInt8.self)
            let wanted = expected.load(fromByteOffset: index, as: UInt8.self)
            if byte != wanted {
                let lower = wanted | 0x20
                guard lower &- 0x61 < 26, byte | 0x20 == lower else { return false }
            }
            index &+= 1
        }
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

    private static func hasEncodedNUL(_ target: UnsafeRawBufferPointer) -> Bool {
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in target {
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
