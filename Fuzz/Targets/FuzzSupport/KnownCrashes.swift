/// Inputs the fuzz targets step around while a crash already reported is being fixed
/// elsewhere, so that fuzzing goes on finding new ones. Set `FUZZ_ALLOW_KNOWN_CRASHES=1` to
/// fuzz them too (once the fixes have landed, delete the filter).
public enum KnownCrashes {
    static let allowed: Bool = {
        guard let value = getenv("FUZZ_ALLOW_KNOWN_CRASHES") else { return false }
        return String(cString: value) == "1"
    }()

    /// Known: `EllipticalArc.pieceCount` traps converting a non-finite or huge piece count to
    /// `Int` when the ellipse's radius ratio is beyond about 1e90 (`M0 0 A1 1e-95 0 0 1 1 0`,
    /// `M0 0 A1e300 1e-300 0 0 1 1e300 0`); the engine fix is in progress on another branch.
    /// True when `text` has an arc command and a nonzero number outside 1e-40…1e40.
    public static func extremeArc<C: Collection<UInt8>>(_ text: C) -> Bool {
        if allowed { return false }
        guard text.contains(UInt8(ascii: "A")) || text.contains(UInt8(ascii: "a")) else { return false }
        for number in numbers(text) {
            let magnitude = abs(number)
            if magnitude != 0, !(magnitude >= 1e-40 && magnitude <= 1e40) { return true }
        }
        return false
    }

    /// `extremeArc` for every JSON string literal in `bytes` (documents, HTTP bodies): the
    /// text between unescaped double quotes.
    public static func extremeArcInStrings(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if allowed { return false }
        var start: Int?
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if let open = start {
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    if extremeArc(bytes[(open + 1)..<index]) { return true }
                    start = nil
                }
            } else if byte == UInt8(ascii: "\"") {
                start = index
            }
            index += 1
        }
        return false
    }

    /// Numbers in SVG path syntax (sign, digits, fraction, exponent), greedily.
    static func numbers<C: Collection<UInt8>>(_ text: C) -> [Double] {
        let bytes = Array(text)
        var result: [Double] = []
        var index = 0
        func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= 0x30 && bytes[i] <= 0x39 }
        while index < bytes.count {
            let start = index
            var i = index
            if bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            var digits = 0
            while isDigit(i) { i += 1; digits += 1 }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                while isDigit(i) { i += 1; digits += 1 }
            }
            guard digits > 0 else { index = start + 1; continue }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                var j = i + 1
                if j < bytes.count, bytes[j] == UInt8(ascii: "+") || bytes[j] == UInt8(ascii: "-") { j += 1 }
                if isDigit(j) {
                    while isDigit(j) { j += 1 }
                    i = j
                }
            }
            if let value = Double(String(decoding: bytes[start..<i], as: UTF8.self)) { result.append(value) }
            index = i
        }
        return result
    }
}

#if canImport(Glibc)
import Glibc
#endif
