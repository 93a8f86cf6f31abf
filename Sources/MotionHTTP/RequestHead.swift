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
    }

    var method: String
    /// The request target as sent, before percent-decoding.
    var rawTarget: String
    var version: String
    var fields: [Field]

    /// Most query parameters accepted (each costs libmicrohttpd pool memory).
    static let maxQueryParameters = 256

    /// The first framing problem, or nil. `maxBodyBytes` bounds a declared Content-Length.
    func problem(maxBodyBytes: Int) -> ProblemDetails? {
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
        if version == "HTTP/1.1", !fields.contains(where: { Self.named($0, "host") }) {
            return .badRequest("an HTTP/1.1 request must carry a Host header")
        }
        let encodings = fields.filter { Self.named($0, "transfer-encoding") }
        let lengths = fields.filter { Self.named($0, "content-length") }
            .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if !encodings.isEmpty {
            let codings = encodings.flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard codings == ["chunked"] else {
                return ProblemDetails(status: 501, type: "/problems/not-implemented", title: "Not implemented",
                                      detail: "Transfer-Encoding '\(Self.printable(encodings.map(\.value).joined(separator: ", ")))' is not supported; only chunked is")
            }
            if !lengths.isEmpty {
                return .badRequest("a request must not carry both Content-Length and Transfer-Encoding")
            }
        }
        if Set(lengths).count > 1 {
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
            (Self.named(field, "content-length") && field.value.trimmingCharacters(in: .whitespaces) != "0")
                || Self.named(field, "transfer-encoding")
        }
    }

    /// Parameters in the query of a raw target (`&`-separated pieces after the first `?`).
    static func queryParameterCount(_ rawTarget: String) -> Int {
        let bytes = rawTarget.utf8
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return 0 }
        return bytes[bytes.index(after: mark)...].split(separator: UInt8(ascii: "&")).count
    }

    private static func named(_ field: Field, _ lowercased: String) -> Bool {
        field.name.utf8.count == lowercased.utf8.count && field.name.lowercased() == lowercased
    }

    private static func hasEncodedNUL(_ target: String) -> Bool {
        let bytes = Array(target.utf8)
        guard bytes.count >= 3 else { return false }
        for index in 0..<(bytes.count - 2) where bytes[index] == UInt8(ascii: "%")
            && bytes[index + 1] == UInt8(ascii: "0") && bytes[index + 2] == UInt8(ascii: "0") {
            return true
        }
        return false
    }

    /// At most 100 characters of client text, control characters replaced, for messages.
    static func printable(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.prefix(100).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        return text.unicodeScalars.count > 100 ? cleaned + "…" : cleaned
    }
}
