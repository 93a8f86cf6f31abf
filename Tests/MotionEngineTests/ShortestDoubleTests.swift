import Foundation
import XCTest
@testable import MotionEngine

/// `ShortestDouble` and `JSONWriter.number` against the text the service wrote before them:
/// `Double.description` (kept here as the reference), over millions of doubles; and every text
/// reads back as the same double. `MOTION_NUMBER_CASES` sets the random case count (default
/// 1,000,000 over the random families below; e.g. 100000000 for a long run in release).
final class ShortestDoubleTests: XCTestCase {
    /// `JSONWriter.number` as it was: integral values below 10^15 as integers, other finite
    /// values by `description`, non-finite as `null`.
    static func referenceNumber(_ value: Double) -> String {
        if value == value.rounded(.towardZero), abs(value) < 1e15 { return String(Int64(value)) }
        return value.isFinite ? value.description : "null"
    }

    static func written(_ value: Double) -> String {
        var buffer = [UInt8](repeating: 0, count: ShortestDouble.maxBytes + 8)
        let count = buffer.withUnsafeMutableBufferPointer { ShortestDouble.write(value, to: $0.baseAddress!) }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    static func jsonNumber(_ value: Double, into w: inout JSONWriter) -> String {
        w.bytes.removeAll(keepingCapacity: true)
        w.number(value)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// Asserts both texts for `value`; returns false on the first mismatch (to stop a long loop).
    @discardableResult
    static func check(_ value: Double, _ w: inout JSONWriter, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        let json = jsonNumber(value, into: &w)
        let expectedJSON = referenceNumber(value)
        guard json == expectedJSON else {
            XCTFail("JSON \(value.bitPattern) (\(expectedJSON)): wrote \(json)", file: file, line: line)
            return false
        }
        guard value.isFinite else { return true }
        let text = written(value)
        guard text == value.description else {
            XCTFail("description of \(value.bitPattern) is \(value.description), wrote \(text)", file: file, line: line)
            return false
        }
        guard let back = Double(json), back.bitPattern == (value == 0 ? 0 : value.bitPattern) else {
            XCTFail("\(json) does not read back as \(value.bitPattern)", file: file, line: line)
            return false
        }
        return true
    }

    func testChosenValues() {
        var w = JSONWriter()
        var values: [Double] = [
            0, -0.0, 1, -1, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 1.0 / 60, 0.5, 0.25, 12.5, 100.25,
            .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude,
            .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 2 * .leastNonzeroMagnitude,
            3 * .leastNonzeroMagnitude, .leastNormalMagnitude.nextDown, .ulpOfOne, .pi, -.pi,
            .infinity, -.infinity, .nan,
            1e15, -1e15, 1e15.nextDown, 1e15.nextUp, 999_999_999_999_999, 999_999_999_999_999.5,
            9_007_199_254_740_992, 9_007_199_254_740_992.0.nextUp, 9_007_199_254_740_992.0.nextDown,
            -9_007_199_254_740_992, -9_007_199_254_740_992.0.nextUp, 1.8014398509481984e16,
            0.0001, 0.0001.nextDown, 0.0001.nextUp, 0.00012, 1e-5, 0.001, 1e21, 1e22, 1e23, 1e100,
            5e-324, 1e-323, 2.2250738585072014e-308, 4.9406564584124654e-324, 1.7976931348623157e308,
            123_456_789_012_345_680, 0.1 + 0.2, 60.00000000000001, 160.00000000000003,
        ]
        // Every power of ten a double has, its neighbours, and 2·, 5· it.
        for e in -323...308 {
            guard let p = Double("1e\(e)") else { continue }
            values += [p, p.nextUp, p.nextDown, 2 * p, 5 * p, -p]
        }
        // Every power of two (the irregular spacing below each), with neighbours.
        for e in -1074...1023 {
            let p = Double(sign: .plus, exponent: e, significand: 1)
            values += [p, p.nextUp, p.nextDown, 3 * p, -p]
        }
        // The smallest subnormals, exhaustively.
        for c in 1..<5_000 as Range<UInt64> { values.append(Double(bitPattern: c)) }
        for value in values { Self.check(value, &w) }
        XCTAssertEqual(Self.written(1e15), "1000000000000000.0")
        XCTAssertEqual(Self.written(-0.0), "-0.0")
        XCTAssertEqual(Self.written(.leastNonzeroMagnitude), "5e-324")
        XCTAssertEqual(Self.written(1.5e16), "1.5e+16")
        XCTAssertEqual(Self.jsonNumber(-0.0, into: &w), "0")
        XCTAssertEqual(Self.jsonNumber(1e300 * 1e300, into: &w), "null")
        XCTAssertEqual(Self.jsonNumber(-999_999_999_999_999, into: &w), "-999999999999999")
    }

    /// Random doubles of several families, `MOTION_NUMBER_CASES` in all (default 1,000,000).
    func testRandomDoublesMatchDescription() {
        let total = ProcessInfo.processInfo.environment["MOTION_NUMBER_CASES"].flatMap(Int.init) ?? 1_000_000
        // The engine's deterministic generator (SplitMix64), so a failure names a reproducible case.
        var generator = SplitMix64(seed: 0x5EED_14)
        var w = JSONWriter()
        let families: [(String, (inout SplitMix64) -> Double)] = [
            // Any bit pattern: mostly huge and tiny exponents (non-finite ones give null).
            ("bits", { Double(bitPattern: $0.next()) }),
            // Ordinary magnitudes, where animation values live.
            ("ordinary", { g in
                let e = Int(g.next() % 80) - 40
                return Double(sign: g.next() & 1 == 0 ? .plus : .minus, exponent: e,
                              significand: 1 + Double(g.next() >> 11) * 0x1p-53)
            }),
            // Subnormals.
            ("subnormal", { Double(bitPattern: $0.next() & (1 << 52 - 1)) }),
            // Integers and halves up to past 2^54.
            ("integer", { g in Double(Int64(bitPattern: g.next() >> (g.next() % 64 + 9))) / (g.next() & 1 == 0 ? 1 : 2) }),
            // Short decimals (their shortest text is the short one), and frame times k/fps.
            ("short", { g in
                let digits = Double(g.next() % 100_000)
                return digits * [1e-9, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 1e15, 1e16, 1e20][Int(g.next() % 12)]
            }),
            ("times", { g in Double(g.next() % 100_000) / Double(g.next() % 240 + 1) }),
        ]
        let per = max(1, total / families.count)
        for (name, make) in families {
            var failed = false
            for _ in 0..<per where !failed {
                failed = !Self.check(make(&generator), &w)
            }
            XCTAssertFalse(failed, "family \(name)")
        }
    }

    /// The three logarithm formulas against exact integer powers, over every exponent used.
    func testLogarithmFormulasAreExact() {
        func powers(_ base: UInt64, upTo n: Int) -> [Pow10Table.Natural] {
            var all = [Pow10Table.Natural(1)]
            for _ in 0..<n { var x = all[all.count - 1]; x.multiply(by: base); all.append(x) }
            return all
        }
        let twos = powers(2, upTo: 1400), tens = powers(10, upTo: 410)
        func pow(_ base: UInt64, _ n: Int) -> Pow10Table.Natural { base == 2 ? twos[n] : tens[n] }
        // 10^k ≤ 2^q < 10^(k+1)  ⇔  (q ≥ 0) 10^k ≤ 2^q < 10^(k+1); (q < 0) 10^-k-1 < 2^-q ≤ 10^-k
        func lessOrEqual(_ a: Pow10Table.Natural, _ b: Pow10Table.Natural) -> Bool { !b.isLess(than: a) }
        for q in -1074...971 {
            let k = ShortestDouble.floorLog10Pow2(q)
            if q >= 0 {
                XCTAssertTrue(lessOrEqual(pow(10, k), pow(2, q)) && pow(2, q).isLess(than: pow(10, k + 1)), "q \(q)")
            } else {
                XCTAssertTrue(lessOrEqual(pow(2, -q), pow(10, -k)) && pow(10, -k - 1).isLess(than: pow(2, -q)), "q \(q)")
            }
            // 3/4 · 2^q: 4 · 10^k ≤ 3 · 2^q < 4 · 10^(k+1), in integers.
            let k34 = ShortestDouble.floorLog10ThreeQuartersPow2(q)
            var three = pow(2, max(q, 0)); three.multiply(by: 3)
            if q == 0 {
                XCTAssertEqual(k34, -1) // log10(3/4) ≈ −0.12
            } else if q > 0 {
                var low = pow(10, k34); low.multiply(by: 4)
                var high = pow(10, k34 + 1); high.multiply(by: 4)
                XCTAssertTrue(lessOrEqual(low, three) && three.isLess(than: high), "3/4 q \(q)")
            } else {
                // 4 · 10^k34 ≤ 3 · 2^q  ⇔  4 · 2^-q ≤ 3 · 10^-k34 (k34 < 0), and so on.
                var left = pow(2, -q); left.multiply(by: 4)
                var right = pow(10, -k34); right.multiply(by: 3)
                var left2 = pow(2, -q); left2.multiply(by: 4)
                var right2 = pow(10, -k34 - 1); right2.multiply(by: 3)
                XCTAssertTrue(lessOrEqual(left, right) && right2.isLess(than: left2), "3/4 q \(q)")
            }
        }
        for e in -400...400 {
            // 2^l ≤ 10^e < 2^(l+1)
            let l = ShortestDouble.floorLog2Pow10(e)
            if e >= 0 {
                XCTAssertTrue(lessOrEqual(pow(2, l), pow(10, e)) && pow(10, e).isLess(than: pow(2, l + 1)), "e \(e)")
            } else {
                XCTAssertTrue(lessOrEqual(pow(10, -e), pow(2, -l)) && pow(2, -l - 1).isLess(than: pow(10, -e)), "e \(e)")
            }
        }
    }

    /// Entries of the table are floor(β) + 1 with β the top 128 bits of 10^-k: spot checks
    /// by an independent route (10^0, exact small powers, and 10^-1 = 0.1 as a binary fraction).
    func testPowerTableEntries() {
        XCTAssertEqual(Pow10Table.entry(0).hi, 1 << 63)
        XCTAssertEqual(Pow10Table.entry(0).lo, 1)
        // 10^3 = 1000 = 0b1111101000 → β = 1000 · 2^118.
        XCTAssertEqual(Pow10Table.entry(-3).hi, 1000 << 54)
        XCTAssertEqual(Pow10Table.entry(-3).lo, 1)
        // 0.1 = 0x1.999…p-4: β = 0xCCCC…CCCC (128 bits), floor + 1 = …CCCD.
        XCTAssertEqual(Pow10Table.entry(1).hi, 0xCCCC_CCCC_CCCC_CCCC)
        XCTAssertEqual(Pow10Table.entry(1).lo, 0xCCCC_CCCC_CCCC_CCCD)
        XCTAssertEqual(Pow10Table.entries.count, 617)
        XCTAssertTrue(Pow10Table.entries.allSatisfy { $0.hi >> 63 == 1 })
    }
}
