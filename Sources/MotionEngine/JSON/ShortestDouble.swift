/// The shortest decimal that reads back as the same `Double`, written straight into bytes,
/// in exactly the text of Swift's `Double.description` (issue #14).
///
/// Algorithm: Schubfach (R. Giulietti, "The Schubfach way to render doubles", 2020; the one
/// behind Java 19's `Double.toString`). Chosen over Ryū and Grisu because it is the smallest
/// proven one: a fixed path of three 64×128-bit products against one table entry, no loop
/// over digits, no fallback (Grisu) and no trailing-zero bookkeeping (Ryū). Like the Swift
/// runtime's own formatter it picks, among the shortest decimals inside the rounding interval
/// (bounds included when the significand is even), the one closest to the exact binary value,
/// ties to an even last digit; so the digits are the same, and `write` lays them out as
/// `description` does: `1e-05` below 1e-4 and above 2^53 (`1.5e+16`, at least two exponent
/// digits), `0.001`, `12.5`, `100.0` otherwise. `ShortestDoubleTests` checks byte equality
/// with `description` over millions of doubles (random bit patterns, subnormals, integers,
/// powers of ten and two, the thresholds, ±0, the extremes) and that each text parses back.
///
/// Cost (callgrind, `make bench-instructions`, release): about 270 instructions a call for
/// `shortest` and 180 for the layout, against about 1,000 for `description` and its `String`
/// appended; the small document went from 554,107 to 486,416 instructions a request and the
/// 100-track timeline from 2,428 to 1,756 a sample (figures in `JSONWriter.number`).
enum ShortestDouble {
    /// The longest text `write` produces: `-2.2250738585072014e-308`.
    static let maxBytes = 24

    /// Writes `value` (finite) as `value.description` does and returns the byte count; the
    /// buffer must have room for `maxBytes`.
    @inline(__always)
    static func write(_ value: Double, to p: UnsafeMutablePointer<UInt8>) -> Int {
        Pow10Table.entries.withUnsafeBufferPointer { write(value, to: p, table: $0.baseAddress!) }
    }

    /// `write(_:to:)` with the table's storage (`Pow10Table.entries`) fetched by the caller:
    /// a loop over many numbers then checks the table's one-time initialisation once rather
    /// than once a number (about 20 instructions a number).
    ///
    /// `@_transparent` (always inlined, before optimisation) here, in `shortest` and in
    /// `layOut`: marked `@inline(__always)`, the optimiser still left `write` and `layOut` as
    /// calls inside the list loop (and `shortest`, once those were inlined), each call with
    /// its register saves and moves. Inlined, the 100-track request went from 444 to 405
    /// instructions a sample (callgrind, release), the small document 248,975 → 243,000.
    @_transparent
    static func write(_ value: Double, to p: UnsafeMutablePointer<UInt8>, table: UnsafePointer<(hi: UInt64, lo: UInt64)>) -> Int {
        let bits = value.bitPattern
        var i = 0
        if bits >> 63 != 0 { p[0] = UInt8(ascii: "-"); i = 1 }
        let magnitude = bits & ~(1 << 63)
        if magnitude == 0 {
            p[i] = UInt8(ascii: "0"); p[i + 1] = UInt8(ascii: "."); p[i + 2] = UInt8(ascii: "0")
            return i + 3
        }
        let (digits, exponent) = shortest(magnitudeBits: magnitude, table: table)
        // Swift's rule: exponential when the leading digit is below 10^-4 or |value| > 2^53.
        return i + layOut(digits, exponent, exponential: magnitude > twoToThe53Bits, to: p + i)
    }

    /// `(f, e)` with `f · 10^e` the shortest, closest decimal in the rounding interval of the
    /// positive finite double with these bits, `f` without trailing zeros (f < 10^17).
    @inline(__always)
    static func shortest(magnitudeBits bits: UInt64) -> (digits: UInt64, exponent: Int) {
        Pow10Table.entries.withUnsafeBufferPointer { shortest(magnitudeBits: bits, table: $0.baseAddress!) }
    }

    @_transparent
    static func shortest(magnitudeBits bits: UInt64, table: UnsafePointer<(hi: UInt64, lo: UInt64)>) -> (digits: UInt64, exponent: Int) {
        // Wrapping arithmetic and masking shifts throughout: every operand below is bounded
        // (c < 2^53, h in 1...4, s < 10^18), so none can overflow, and the checks and the
        // over-wide-shift handling of `+`, `*` and `<<` cost about 40 instructions a number.
        let biased = Int(truncatingIfNeeded: bits &>> 52)
        let fraction = bits & (1 &<< 52 &- 1)
        // value = c · 2^q.
        let c = biased == 0 ? fraction : fraction | 1 &<< 52
        let q = biased == 0 ? -1074 : biased &- 1075
        // The rounding interval is [cl, cr] · 2^q, in quarters: cb ± 2 (cb − 1 below a power
        // of two, where the spacing below halves), bounds included iff c is even.
        let out: UInt64 = c & 1
        let cb = c &<< 2
        let cbr = cb &+ 2
        let cbl: UInt64
        let k: Int
        if fraction != 0 || biased <= 1 {
            cbl = cb &- 2
            k = floorLog10Pow2(q)
        } else {
            cbl = cb &- 1
            k = floorLog10ThreeQuartersPow2(q)
        }
        // Scale by 10^-k ≈ g · 2^(r) (2^127 ≤ g < 2^128): vb = 4 · value · 10^-k, rounded to odd,
        // which keeps every comparison below exact (the paper's section 9).
        let h = UInt64(truncatingIfNeeded: q &+ floorLog2Pow10(0 &- k) &+ 1)
        let g = table[k &- Pow10Table.kMin]
        let vb = roundToOdd(g, cb &<< h)
        let vbl = roundToOdd(g, cbl &<< h)
        let vbr = roundToOdd(g, cbr &<< h)
        let s = vb &>> 2

        // One digit fewer: s' · 10^(k+1) or (s'+1) · 10^(k+1), when exactly one is inside.
        let sp = s / 10
        let up = sp &* 10
        let wp = up &+ 10
        let upIn = vbl &+ out <= up &<< 2
        let wpIn = (wp &<< 2) &+ out <= vbr
        if upIn != wpIn { return stripped(upIn ? sp : sp &+ 1, k &+ 1) }

        // Else s · 10^k or (s+1) · 10^k: the one inside, or the closer (ties to even).
        let t = s &+ 1
        let uIn = vbl &+ out <= s &<< 2
        let wIn = (t &<< 2) &+ out <= vbr
        if uIn != wIn { return stripped(uIn ? s : t, k) }
        let mid = (s &+ t) &<< 1
        return stripped(vb < mid || (vb == mid && s & 1 == 0) ? s : t, k)
    }

    /// `floor(g · cp / 2^128)`, its lowest bit set when the dropped part is not zero.
    @inline(__always)
    static func roundToOdd(_ g: (hi: UInt64, lo: UInt64), _ cp: UInt64) -> UInt64 {
        let x = g.lo.multipliedFullWidth(by: cp).high
        let y = g.hi.multipliedFullWidth(by: cp)
        let (zlo, carry) = y.low.addingReportingOverflow(x)
        let zhi = y.high &+ (carry ? 1 : 0)
        return zhi | (zlo != 0 ? 1 : 0)
    }

    @inline(__always)
    static func stripped(_ f: UInt64, _ e: Int) -> (digits: UInt64, exponent: Int) {
        var f = f, e = e
        while f % 100 == 0 { f /= 100; e &+= 2 }
        if f % 10 == 0 { f /= 10; e &+= 1 }
        return (f, e)
    }

    /// floor(log10(2^e)) for |e| ≤ 2620 (checked for every exponent a double has).
    @inline(__always)
    static func floorLog10Pow2(_ e: Int) -> Int { (e &* 315_653) &>> 20 }

    /// floor(log10(3/4 · 2^e)) for the same range.
    @inline(__always)
    static func floorLog10ThreeQuartersPow2(_ e: Int) -> Int { (e &* 315_653 &- 131_237) &>> 20 }

    /// floor(log2(10^e)) for |e| ≤ 1233.
    @inline(__always)
    static func floorLog2Pow10(_ e: Int) -> Int { (e &* 1_741_647) &>> 19 }

    /// The bits of 2^53: above it `description` switches to the exponential form.
    static let twoToThe53Bits: UInt64 = 0x4340_0000_0000_0000

    /// The bits of 1e15: below it `JSONWriter` writes integral values as integers.
    static let tenToThe15Bits: UInt64 = 0x430C_6BF5_2634_0000

    // MARK: - Layout

    /// `f · 10^e` in `description`'s layout; returns the byte count.
    @_transparent
    static func layOut(_ f: UInt64, _ e: Int, exponential: Bool, to p: UnsafeMutablePointer<UInt8>) -> Int {
        let n = decimalLength(f)
        let point = e &+ n &- 1 // the exponent of the leading digit
        if exponential || point < -4 {
            // d[.ddd]e±XX
            var i: Int
            if n == 1 {
                p[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: f)
                i = 1
            } else {
                writeDigits(f, count: n, to: p + 1)
                p[0] = p[1]
                p[1] = UInt8(ascii: ".")
                i = n + 1
            }
            p[i] = UInt8(ascii: "e")
            p[i + 1] = point < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+")
            let x = point.magnitude
            if x >= 100 {
                p[i + 2] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: x / 100)
                writeDigits(UInt64(x % 100), count: 2, to: p + i + 3)
                return i + 5
            }
            writeDigits(UInt64(x), count: 2, to: p + i + 2)
            return i + 4
        }
        if point < 0 {
            // 0.000ddd
            let zeros = -point - 1
            p[0] = UInt8(ascii: "0"); p[1] = UInt8(ascii: ".")
            for j in 0..<zeros { p[2 + j] = UInt8(ascii: "0") }
            writeDigits(f, count: n, to: p + 2 + zeros)
            return 2 + zeros + n
        }
        if n <= point + 1 {
            // ddd000.0
            writeDigits(f, count: n, to: p)
            var j = n
            while j <= point { p[j] = UInt8(ascii: "0"); j += 1 }
            p[point + 1] = UInt8(ascii: "."); p[point + 2] = UInt8(ascii: "0")
            return point + 3
        }
        // ddd.ddd: write the digits one place right, then move the integer part left. Up to
        // seven integer digits move as one 8-byte word, merged with the bytes after them (a
        // byte loop became a `memmove` call, about 17 instructions a number). The word reaches
        // 9 bytes past `p`, within the `maxBytes` the caller provides. 100 tracks: 603 → 597
        // instructions a sample.
        writeDigits(f, count: n, to: p + 1)
        if point < 7 {
            let raw = UnsafeMutableRawPointer(p)
            let moved = raw.loadUnaligned(fromByteOffset: 1, as: UInt64.self)
            let kept = raw.loadUnaligned(as: UInt64.self)
            let mask: UInt64 = (1 &<< UInt64(truncatingIfNeeded: 8 &* (point &+ 1))) &- 1 // the low point+1 bytes
            raw.storeBytes(of: (moved & mask) | (kept & ~mask), as: UInt64.self)
        } else {
            var j = 0
            while j <= point { p[j] = p[j &+ 1]; j &+= 1 }
        }
        p[point &+ 1] = UInt8(ascii: ".")
        return n &+ 1
    }

    /// Digits of `v` (< 10^20).
    @inline(__always)
    static func decimalLength(_ v: UInt64) -> Int {
        if v < 100_000_000 {
            if v < 10_000 { return v < 100 ? (v < 10 ? 1 : 2) : (v < 1000 ? 3 : 4) }
            return v < 1_000_000 ? (v < 100_000 ? 5 : 6) : (v < 10_000_000 ? 7 : 8)
        }
        if v < 10_000_000_000_000_000 {
            if v < 1_000_000_000_000 {
                return v < 10_000_000_000 ? (v < 1_000_000_000 ? 9 : 10) : (v < 100_000_000_000 ? 11 : 12)
            }
            return v < 100_000_000_000_000
                ? (v < 10_000_000_000_000 ? 13 : 14) : (v < 1_000_000_000_000_000 ? 15 : 16)
        }
        return v < 1_000_000_000_000_000_000 ? (v < 100_000_000_000_000_000 ? 17 : 18)
            : (v < 10_000_000_000_000_000_000 ? 19 : 20)
    }

    /// The `count` last decimal digits of `v` at `p`, from the right: eight at a time as two
    /// groups of four (a 32-bit remainder, `x / 100` as `(x · 5243) >> 19`, exact below
    /// 43,699), each pair of digits copied as one 16-bit word from `digitPairs`; the rest two
    /// at a time. Cost: a 17-digit number went from about 115 instructions (a 64-bit
    /// remainder and two byte copies per pair) to about 60.
    @inline(__always)
    static func writeDigits(_ v: UInt64, count: Int, to p: UnsafeMutablePointer<UInt8>) {
        let pairs = UnsafeRawPointer(digitPairs.utf8Start)
        let out = UnsafeMutableRawPointer(p)
        var v = v
        var end = count
        while end >= 8 {
            let chunk = UInt32(truncatingIfNeeded: v % 100_000_000)
            v /= 100_000_000
            let high = chunk / 10_000
            writeFour(chunk &- high &* 10_000, pairs, out + (end - 4))
            writeFour(high, pairs, out + (end - 8))
            end -= 8
        }
        while end >= 2 {
            let pair = Int(truncatingIfNeeded: v % 100)
            v /= 100
            (out + (end - 2)).storeBytes(of: pairs.loadUnaligned(fromByteOffset: pair &* 2, as: UInt16.self), as: UInt16.self)
            end -= 2
        }
        if end == 1 { p[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10) }
    }

    /// The four digits of `x` (< 10,000) at `out`.
    @inline(__always)
    static func writeFour(_ x: UInt32, _ pairs: UnsafeRawPointer, _ out: UnsafeMutableRawPointer) {
        let high = (x &* 5243) >> 19 // x / 100
        let low = x &- high &* 100
        out.storeBytes(of: pairs.loadUnaligned(fromByteOffset: Int(high) &* 2, as: UInt16.self), as: UInt16.self)
        out.storeBytes(of: pairs.loadUnaligned(fromByteOffset: Int(low) &* 2, as: UInt16.self), toByteOffset: 2, as: UInt16.self)
    }

    static let digitPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
}
