#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Darwin)
@_exported import Darwin
#endif

/// Nanoseconds on the monotonic clock.
@inline(__always)
public func nowNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Seconds taken by `body`.
@inline(__always)
public func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = nowNanos()
    try body()
    return Double(nowNanos() - start) / 1e9
}

/// A running checksum the optimiser cannot see through.
nonisolated(unsafe) public var sink: Double = 0

@inline(never)
public func consume(_ value: Double) { sink += value }

/// Median, min and max of a sample.
public struct Summary: Sendable {
    public var median: Double
    public var min: Double
    public var max: Double
    public var count: Int

    public init(_ values: [Double]) {
        precondition(!values.isEmpty, "empty sample")
        let sorted = values.sorted()
        let n = sorted.count
        median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
        min = sorted[0]
        max = sorted[n - 1]
        count = n
    }
}

/// Settings read from the environment (`run.sh` sets them).
public enum Settings {
    public static func string(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        let value = String(cString: raw)
        return value.isEmpty ? nil : value
    }

    public static func int(_ name: String, _ fallback: Int) -> Int {
        string(name).flatMap { Int($0) } ?? fallback
    }

    /// `BENCH_QUICK=1`: a smoke run, small sizes and few runs.
    public static var quick: Bool { string("BENCH_QUICK").map { $0 != "0" } ?? false }

    /// How many measured runs (after one warm-up) each figure is the median of.
    public static var runs: Int { int("BENCH_RUNS", quick ? 3 : 5) }
}

/// Prints a line at once (stdout is a pipe under run.sh).
public func say(_ text: String) {
    print(text)
    fflush(nil)
}

/// One measurement for run.sh's report: `SAMPLE <key> <metric>=<value> …`, one line per run.
public func sample(_ key: String, _ metrics: [(String, Double)]) {
    say("SAMPLE \(key) " + metrics.map { "\($0.0)=\(exact($0.1))" }.joined(separator: " "))
}

/// A note for the report (`NOTE <text>`).
public func note(_ text: String) {
    say("NOTE \(text)")
}

/// Shortest round-trip text of a double.
public func exact(_ value: Double) -> String { "\(value)" }

/// `value` with `digits` significant digits, for humans.
public func fmt(_ value: Double, _ digits: Int = 4) -> String {
    guard value.isFinite else { return "\(value)" }
    var buffer = [CChar](repeating: 0, count: 64)
    _ = withVaList([Int32(digits), value]) { vsnprintf(&buffer, 64, "%.*g", $0) }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Least-squares slope of log(y) on log(x): the growth exponent of y ~ x^k.
public func growthExponent(_ xs: [Double], _ ys: [Double]) -> Double {
    precondition(xs.count == ys.count && xs.count >= 2)
    let lx = xs.map { log($0) }, ly = ys.map { log($0) }
    let mx = lx.reduce(0, +) / Double(lx.count), my = ly.reduce(0, +) / Double(ly.count)
    var sxy = 0.0, sxx = 0.0
    for i in lx.indices {
        sxy += (lx[i] - mx) * (ly[i] - my)
        sxx += (lx[i] - mx) * (lx[i] - mx)
    }
    return sxy / sxx
}

/// Least-squares fit y = a + b·x; returns (a, b, r²).
public func linearFit(_ xs: [Double], _ ys: [Double]) -> (a: Double, b: Double, r2: Double) {
    let n = Double(xs.count)
    let mx = xs.reduce(0, +) / n, my = ys.reduce(0, +) / n
    var sxy = 0.0, sxx = 0.0, syy = 0.0
    for i in xs.indices {
        sxy += (xs[i] - mx) * (ys[i] - my)
        sxx += (xs[i] - mx) * (xs[i] - mx)
        syy += (ys[i] - my) * (ys[i] - my)
    }
    let b = sxy / sxx
    return (my - b * mx, b, syy == 0 ? 1 : (sxy * sxy) / (sxx * syy))
}
