/// Appends JSON text to a byte buffer.
///
/// Numbers are written in the shortest form that round-trips to the same `Double`
/// (integral values without a fraction: `20`, others as Swift's shortest representation:
/// `0.016666666666666666`, `1e-07`). Non-finite numbers never reach the writer: the engine
/// rejects them on input and its kernels are finite.
public struct JSONWriter: Sendable {
    public var bytes: [UInt8]

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always)
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    public mutating func byte(_ b: UInt8) { bytes.append(b) }

    public mutating func number(_ value: Double) {
        if value == value.rounded(.towardZero), abs(value) < 1e15 {
            integer(Int64(value))
        } else if value.isFinite {
            bytes.append(contentsOf: value.description.utf8)
        } else {
            raw("null")
        }
    }

    public mutating func integer(_ value: Int64) {
        if value == 0 { bytes.append(UInt8(ascii: "0")); return }
        var v = value.magnitude
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while v > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[i]) }
        }
    }

    public mutating func integer(_ value: Int) { integer(Int64(value)) }

    public mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for b in value.utf8 {
            switch b {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x00..<0x20:
                raw("\\u00")
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(b >> 4)])
                bytes.append(hex[Int(b & 0xF)])
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

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

