import Foundation

/// A malformed JSON text: where it went wrong and what was expected.
public struct JSONSyntaxError: Error, Sendable, Equatable {
    /// Byte offset into the input.
    public var offset: Int
    public var message: String
}

/// A strict RFC 8259 parser over UTF-8 bytes.
///
/// Strict on purpose: duplicate keys, invalid UTF-8, lone surrogates, non-finite numbers and
/// trailing garbage are rejected; nesting is bounded (`maxDepth`) so hostile input cannot
/// exhaust the stack.
public struct JSONParser {
    public static let defaultMaxDepth = 256

    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONSyntaxError) -> JSON {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> JSON in
            var parser = Cursor(bytes: buffer, maxDepth: maxDepth)
            return try parser.parseDocument()
        }
    }

    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONSyntaxError) -> JSON {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

private struct Cursor {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func fail(_ message: String, at offset: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset ?? index, message: message)
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSON {
        skipWhitespace()
        if index == bytes.count { throw fail("empty body: expected a JSON value") }
        let value = try parseValue()
        skipWhitespace()
        if index != bytes.count { throw fail("unexpected data after the JSON value") }
        return value
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(JSONSyntaxError) -> JSON {
        guard index < bytes.count else { throw fail("unexpected end of input: expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw fail("unexpected character: expected a value")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("invalid literal: expected \(literal)") }
        let start = literal.utf8Start
        for i in 0..<count where bytes[index + i] != start[i] {
            throw fail("invalid literal: expected \(literal)")
        }
        index += count
    }

    mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > maxDepth { throw fail("nesting deeper than \(maxDepth) levels") }
    }

    /// Keys an object of a motion document usually has at most.
    static let usualObjectKeys = 4

    mutating func parseObject() throws(JSONSyntaxError) -> JSON {
        try enter()
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(JSONObject())
        }
        // Room for a usual object's keys at once: grown from empty, its pairs were
        // reallocated at the first, second and third key (the small document's five objects
        // grew nine times; callgrind: 198,198 → 195,791 instructions a request).
        var object = JSONObject(reservingCapacity: Self.usualObjectKeys)
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw fail("expected a string key")
            }
            let keyOffset = index
            let key = try parseString()
            if object.position(of: key) != nil { throw fail("duplicate key \"\(key)\"", at: keyOffset) }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            object.appendNew(key, try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input: expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; break }
            throw fail("expected ',' or '}'")
        }
        depth -= 1
        return .object(object)
    }

    mutating func parseArray() throws(JSONSyntaxError) -> JSON {
        try enter()
        index += 1
        var array: [JSON] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            array.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input: expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; break }
            throw fail("expected ',' or ']'")
        }
        depth -= 1
        return .array(array)
    }

    /// A string without escapes (nearly every key and value) becomes a `String` straight from
    /// the input bytes: no intermediate byte array, and no allocation at all up to 15 bytes.
    mutating func parseString() throws(JSONSyntaxError) -> String {
        let open = index
        index += 1
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                // ASCII is valid UTF-8 as it stands: `String(decoding:)` is the specialised fast
                // path, where `String(validating:)` runs a generic validator (~900 instructions).
                let string: String
                if ascii {
                    string = String(decoding: text, as: UTF8.self)
                } else {
                    guard let valid = String(validating: text, as: UTF8.self) else {
                        throw fail("string is not valid UTF-8", at: open)
                    }
                    string = valid
                }
                index += 1
                return string
            }
            if byte >= 0x80 { ascii = false }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in string") }
            index += 1
        }
        return try parseEscapedString(open: open, start: start)
    }

    /// The rest of a string from its first escape (or its unterminated end) on.
    mutating func parseEscapedString(open: Int, start: Int) throws(JSONSyntaxError) -> String {
        var scalars: [UInt8] = []
        var chunkStart = start
        while true {
            guard index < bytes.count else { throw fail("unterminated string", at: open) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[chunkStart..<index]))
                index += 1
                break
            }
            if byte < 0x20 { throw fail("control character in string") }
            if byte == UInt8(ascii: "\\") {
                scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[chunkStart..<index]))
                try parseEscape(into: &scalars)
                chunkStart = index
                continue
            }
            index += 1
        }
        guard let string = String(validating: scalars, as: UTF8.self) else {
            throw fail("string is not valid UTF-8", at: open)
        }
        return string
    }

    mutating func parseEscape(into out: inout [UInt8]) throws(JSONSyntaxError) {
        index += 1
        guard index < bytes.count else { throw fail("unterminated escape") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw fail("lone surrogate in \\u escape")
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid surrogate pair") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw fail("lone surrogate in \\u escape")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
            out.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw fail("invalid escape sequence", at: index - 2)
        }
    }

    mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> Double {
        let start = index
        func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number: expected a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw fail("invalid number: leading zero") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number: expected a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number: expected an exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let length = index - start
        guard length <= 512 else { throw fail("number literal too long", at: start) }
        if let exact = exactDecimal(start, length) { return exact }
        // strtod needs a NUL-terminated buffer; numbers are short, so copy to the stack.
        let value = withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buffer -> Double in
            for i in 0..<length { buffer[i] = CChar(bitPattern: bytes[start + i]) }
            buffer[length] = 0
            return strtod(buffer.baseAddress!, nil)
        }
        guard value.isFinite else { throw fail("number out of range", at: start) }
        return value
    }

    /// Powers of ten that a `Double` holds exactly.
    private static let exactPowersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]

    /// A number literal of at most 15 significant digits, a fraction of at most 22 digits and no
    /// exponent, as `strtod` reads it: the digits as an integer (exact below 2^53) divided by an
    /// exact power of ten is one correctly rounded operation, so the result is the same double
    /// (Clinger's fast path). Nil for anything else, which goes to `strtod`.
    /// (callgrind: strtod ~470 instructions for a short literal such as `320` → ~90.)
    func exactDecimal(_ start: Int, _ length: Int) -> Double? {
        var i = start
        let end = start + length
        let negative = bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var fraction = 0
        var inFraction = false
        while i < end {
            let byte = bytes[i]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if mantissa != 0 || byte != UInt8(ascii: "0") { digits += 1 }
                guard digits <= 15 else { return nil }
                mantissa = mantissa * 10 + UInt64(byte - UInt8(ascii: "0"))
                if inFraction { fraction += 1 }
            } else {
                return nil  // an exponent
            }
            i += 1
        }
        guard fraction < Self.exactPowersOfTen.count else { return nil }
        let magnitude = fraction == 0 ? Double(mantissa) : Double(mantissa) / Self.exactPowersOfTen[fraction]
        return negative ? -magnitude : magnitude
    }
}
