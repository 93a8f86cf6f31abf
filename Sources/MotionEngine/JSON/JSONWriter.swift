/// Appends JSON text to a byte buffer.
///
/// Numbers are written in the shortest form that round-trips to the same `Double`
/// (integral values below 10^15 without a fraction: `20`, others as Swift's `description`
/// writes them: `0.016666666666666666`, `1e-07`, `1000000000000000.0`), by `ShortestDouble`. Non-finite numbers never reach the writer: the engine
/// rejects them on input and its kernels are finite.
public struct JSONWriter: Sendable {
    public var bytes: [UInt8]

    /// `capacity` 0 reserves nothing: `reserveCapacity(0)` on the empty array still goes
    /// through `_createNewBuffer` (the shared empty storage is never uniquely referenced),
    /// once for every streamed frame (`FrameStreamEncoder.writeNext`): 3,453 → 3,379
    /// user-space instructions a frame (callgrind, 200 streams).
    public init(capacity: Int = 256) {
        bytes = []
        if capacity > 0 { bytes.reserveCapacity(capacity) }
    }

    @inline(__always)
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    public mutating func byte(_ b: UInt8) { bytes.append(b) }

    /// Integral values below 10^15 in magnitude as integers (`20`, `-0.0` as `0`), other
    /// finite values in `Double.description`'s text (`ShortestDouble`), non-finite as `null`.
    /// Written straight into the buffer: no `String` per number.
    ///
    /// Cost (callgrind, `make bench-instructions`, release, 2026-11-25): the small document
    /// (129 numbers an answer) went from 554,107 to 486,416 instructions a request, and the
    /// 100-track timeline from 2,428 to 1,756 instructions a sample. A number now costs about
    /// 510 instructions (`ShortestDouble.shortest` ~270, layout ~180, the append ~95), where
    /// `description`, its `String` and appending it cost about 1,000.
    public mutating func number(_ value: Double) {
        appendFormatted { Self.write(value, to: $0) }
    }

    /// Appends `value`'s `description` text (`1.0`, `0.25`, `1e-05`; finite values only),
    /// without making a `String`: for text log lines, which have always written numbers so.
    public mutating func descriptionText(_ value: Double) {
        precondition(value.isFinite, "descriptionText is for finite numbers")
        appendFormatted { ShortestDouble.write(value, to: $0) }
    }

    /// The longest text `number` writes: `-2.2250738585072014e-308` (`null` and integers
    /// below 10^15 are shorter).
    public static let maxNumberBytes = ShortestDouble.maxBytes

    /// Writes `value` as `number(_:)` does at `p`, which must have room for
    /// `maxNumberBytes`, and returns the byte count. No bounds checks: for loops that size
    /// their buffer once (`TimelineEncoder`'s frame grid).
    @inline(__always)
    public static func write(_ value: Double, to p: UnsafeMutablePointer<UInt8>) -> Int {
        Pow10Table.entries.withUnsafeBufferPointer { write(value, to: p, table: NumberTable(base: $0.baseAddress!)) }
    }

    /// The table `ShortestDouble` scales by, fetched once for a loop over many numbers
    /// (`withNumberTable`).
    public struct NumberTable {
        let base: UnsafePointer<(hi: UInt64, lo: UInt64)>
    }

    /// Runs `body` with the number table, for `write(_:to:table:)` in a loop.
    @inline(__always)
    public static func withNumberTable<R>(_ body: (NumberTable) -> R) -> R {
        Pow10Table.entries.withUnsafeBufferPointer { body(NumberTable(base: $0.baseAddress!)) }
    }

    /// `write(_:to:)` with the table fetched once by the caller (`withNumberTable`).
    @inline(__always)
    public static func write(_ value: Double, to p: UnsafeMutablePointer<UInt8>, table: NumberTable) -> Int {
        let bits = value.bitPattern
        let magnitude = bits & ~(1 << 63)
        let biased = Int(magnitude >> 52)
        if biased == 0x7FF {
            p[0] = UInt8(ascii: "n"); p[1] = UInt8(ascii: "u"); p[2] = UInt8(ascii: "l"); p[3] = UInt8(ascii: "l")
            return 4
        }
        // Integral and below 10^15: exactly the doubles with a non-negative binary exponent,
        // or whose fraction bits below the binary point are all zero.
        if magnitude < ShortestDouble.tenToThe15Bits {
            let shift = 1075 - biased // bits below the binary point, when positive
            if magnitude == 0 { p[0] = UInt8(ascii: "0"); return 1 }
            if shift <= 52 {
                let c = magnitude & (1 << 52 - 1) | 1 << 52
                if shift <= 0 || c & (1 << UInt64(shift) - 1) == 0 {
                    let integral = shift <= 0 ? c << UInt64(-shift) : c >> UInt64(shift)
                    var i = 0
                    if bits >> 63 != 0 { p[0] = UInt8(ascii: "-"); i = 1 }
                    let n = ShortestDouble.decimalLength(integral)
                    ShortestDouble.writeDigits(integral, count: n, to: p + i)
                    return i + n
                }
            }
        }
        return ShortestDouble.write(value, to: p, table: table.base)
    }

    /// Runs `body` on a stack buffer of 32 bytes and appends the bytes it says it wrote.
    @inline(__always)
    mutating func appendFormatted(_ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        var scratch: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { raw in
            let p = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let count = body(p)
            bytes.append(contentsOf: UnsafeBufferPointer(start: p, count: count))
        }
    }

    public mutating func integer(_ value: Int64) {
        appendFormatted { p in
            var i = 0
            if value < 0 { p[0] = UInt8(ascii: "-"); i = 1 }
            let v = value.magnitude
            let n = ShortestDouble.decimalLength(v)
            ShortestDouble.writeDigits(v, count: n, to: p + i)
            return i + n
        }
    }

    public mutating func integer(_ value: Int) { integer(Int64(value)) }

    public mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    public mutating func string(_ value: String) {
        Self.withEscaped(value) { bytes.append(contentsOf: $0) }
    }

    /// `value` as a JSON string (quotes and escapes, as `write(string:to:)` writes it),
    /// handed to `body` from a scratch buffer: the one escaping routine for the writer and
    /// for `RequestTag`'s canonical form.
    public static func withEscaped<R>(_ value: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 6 * value.utf8.count + 2) { scratch in
            let count = write(string: value, to: scratch.baseAddress!)
            return body(UnsafeBufferPointer(rebasing: scratch[..<count]))
        }
    }

    /// Writes `value` as `string(_:)` does at `p`, which must have room for
    /// `6 · value.utf8.count + 2` bytes, and returns the byte count. No bounds checks.
    ///
    /// The bytes are read from the string's contiguous storage when it has one (every native
    /// string, small ones included): walking `String.UTF8View` by index cost about 25
    /// instructions a byte, and the keys and paths written per request made it about 5,700
    /// instructions of the small document (callgrind; 205,719 → 203,058 a request).
    public static func write(string value: String, to p: UnsafeMutablePointer<UInt8>) -> Int {
        if let count = value.utf8.withContiguousStorageIfAvailable({ write(utf8: $0, to: p) }) { return count }
        return write(utf8: value.utf8, to: p)
    }

    @inline(__always)
    private static func write<Bytes: Sequence>(utf8 bytes: Bytes, to p: UnsafeMutablePointer<UInt8>) -> Int where Bytes.Element == UInt8 {
        let hex = UnsafeRawPointer(hexDigits.utf8Start).assumingMemoryBound(to: UInt8.self)
        p[0] = UInt8(ascii: "\"")
        var i = 1
        for b in bytes {
            // The usual byte first: printable and neither quote nor backslash.
            if b >= 0x20, b != UInt8(ascii: "\""), b != UInt8(ascii: "\\") {
                p[i] = b
                i &+= 1
                continue
            }
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                p[i] = UInt8(ascii: "\\"); p[i + 1] = b; i += 2
            case 0x0A: p[i] = UInt8(ascii: "\\"); p[i + 1] = UInt8(ascii: "n"); i += 2
            case 0x0D: p[i] = UInt8(ascii: "\\"); p[i + 1] = UInt8(ascii: "r"); i += 2
            case 0x09: p[i] = UInt8(ascii: "\\"); p[i + 1] = UInt8(ascii: "t"); i += 2
            case 0x00..<0x20:
                p[i] = UInt8(ascii: "\\"); p[i + 1] = UInt8(ascii: "u"); p[i + 2] = UInt8(ascii: "0"); p[i + 3] = UInt8(ascii: "0")
                p[i + 4] = hex[Int(b >> 4)]; p[i + 5] = hex[Int(b & 0xF)]
                i += 6
            default: p[i] = b; i += 1
            }
        }
        p[i] = UInt8(ascii: "\"")
        return i + 1
    }

    static let hexDigits: StaticString = "0123456789abcdef"

    /// Writes `"key":`.
    public mutating func key(_ key: String) {
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    public mutating func value(_ json: JSON) {
        switch json {
        case .null: raw("null")
        case .bool(let b): bool(b)
        case .number(let n): number(n)
        case .string(let s): string(s)
        case .array(let items):
            byte(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { byte(UInt8(ascii: ",")) }
                value(item)
            }
            byte(UInt8(ascii: "]"))
        case .object(let object):
            byte(UInt8(ascii: "{"))
            for (i, pair) in object.pairs.enumerated() {
                if i > 0 { byte(UInt8(ascii: ",")) }
                key(pair.key)
                value(pair.value)
            }
            byte(UInt8(ascii: "}"))
        }
    }
}

extension JSON {
    /// The compact JSON text of this value.
    public var serialized: [UInt8] {
        var writer = JSONWriter()
        writer.value(self)
        return writer.bytes
    }
}

