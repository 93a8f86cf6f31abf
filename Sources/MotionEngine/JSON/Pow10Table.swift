/// The powers of ten `ShortestDouble` scales by: for every k in -324...292 (every decimal
/// exponent a double needs), 10^-k = β · 2^r with 2^127 ≤ β < 2^128, and g = floor(β) + 1,
/// so that (g − 1) · 2^r ≤ 10^-k < g · 2^r. Stored as (hi, lo) 64-bit words.
///
/// Computed exactly, once, at first use, from integer powers of ten (617 entries; a few
/// milliseconds), rather than kept as 1,234 literals: what the numbers are is then visible here.
enum Pow10Table {
    static let kMin = -324
    static let kMax = 292

    static let entries: [(hi: UInt64, lo: UInt64)] = build()

    @inline(__always)
    static func entry(_ k: Int) -> (hi: UInt64, lo: UInt64) {
        entries.withUnsafeBufferPointer { $0[k &- kMin] }
    }

    static func build() -> [(hi: UInt64, lo: UInt64)] {
        var table = [(hi: UInt64, lo: UInt64)](repeating: (0, 0), count: kMax - kMin + 1)
        var power = Natural(1) // 10^m
        for m in 0...max(-kMin, kMax) {
            let length = power.bitLength
            if m <= -kMin {
                // k = -m ≤ 0: 10^m is an integer; β is its top 128 bits (exact when it has fewer).
                let beta = power.top128(length: length)
                table[-m - kMin] = increment(beta)
            }
            if m >= 1 && m <= kMax {
                // k = m > 0: β = 2^(127 + L) / 10^m with L = bitLength(10^m), 128 bits of
                // quotient by long division; 2^(L−1) < 10^m, so the part above them is zero.
                var remainder = Natural(power: length - 1)
                var q: (hi: UInt64, lo: UInt64) = (0, 0)
                for _ in 0..<128 {
                    remainder.shiftLeftOne()
                    q = (q.hi << 1 | q.lo >> 63, q.lo << 1)
                    if !remainder.isLess(than: power) {
                        remainder.subtract(power)
                        q.lo |= 1
                    }
                }
                table[m - kMin] = increment(q)
            }
            power.multiply(by: 10)
        }
        return table
    }

    private static func increment(_ x: (hi: UInt64, lo: UInt64)) -> (hi: UInt64, lo: UInt64) {
        let (lo, carry) = x.lo.addingReportingOverflow(1)
        return (x.hi &+ (carry ? 1 : 0), lo)
    }

    /// A non-negative integer of any size: little-endian 64-bit words, no leading zero words.
    struct Natural {
        var words: [UInt64]

        init(_ value: UInt64) { words = value == 0 ? [] : [value] }

        init(power n: Int) {
            words = [UInt64](repeating: 0, count: n / 64 + 1)
            words[n / 64] = 1 << UInt64(n % 64)
        }

        var bitLength: Int {
            guard let top = words.last else { return 0 }
            return (words.count - 1) * 64 + (64 - top.leadingZeroBitCount)
        }

        /// The bit at `index` (0 is the lowest).
        func bit(_ index: Int) -> UInt64 {
            guard index >= 0, index / 64 < words.count else { return 0 }
            return (words[index / 64] >> UInt64(index % 64)) & 1
        }

        /// floor(self / 2^(length − 128)) for length ≥ 128, else self · 2^(128 − length).
        func top128(length: Int) -> (hi: UInt64, lo: UInt64) {
            var hi: UInt64 = 0, lo: UInt64 = 0
            for i in 0..<128 {
                let b = bit(length - 1 - i)
                hi = hi << 1 | lo >> 63
                lo = lo << 1 | b
            }
            return (hi, lo)
        }

        mutating func multiply(by factor: UInt64) {
            var carry: UInt64 = 0
            for i in words.indices {
                let (high, low) = words[i].multipliedFullWidth(by: factor)
                let (sum, overflow) = low.addingReportingOverflow(carry)
                words[i] = sum
                carry = high &+ (overflow ? 1 : 0)
            }
            if carry != 0 { words.append(carry) }
        }

        mutating func shiftLeftOne() {
            var carry: UInt64 = 0
            for i in words.indices {
                let next = words[i] >> 63
                words[i] = words[i] << 1 | carry
                carry = next
            }
            if carry != 0 { words.append(carry) }
        }

        func isLess(than other: Natural) -> Bool {
            if words.count != other.words.count { return words.count < other.words.count }
            for i in words.indices.reversed() where words[i] != other.words[i] {
                return words[i] < other.words[i]
            }
            return false
        }

        /// self − other, for other ≤ self.
        mutating func subtract(_ other: Natural) {
            var borrow = false
            for i in words.indices {
                let o = i < other.words.count ? other.words[i] : 0
                let (d1, b1) = words[i].subtractingReportingOverflow(o)
                let (d2, b2) = d1.subtractingReportingOverflow(borrow ? 1 : 0)
                words[i] = d2
                borrow = b1 || b2
            }
            while words.last == 0 { words.removeLast() }
        }
    }
}
