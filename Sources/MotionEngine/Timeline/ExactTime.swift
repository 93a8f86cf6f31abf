import Foundation

/// Times as the decimals they are.
///
/// Schedules are sums of the document's decimal times (delays, durations, repeat delays):
/// 0.6 + 0.6 + 0.6 in binary floating point is 1.7999999999999998, one unit in the last
/// place (ulp) below the double nearest 1.8. Event times and durations are passed through
/// `exactTime` before they are written: a time within 4 ulps of a decimal of at most 12
/// significant digits becomes that decimal's nearest double (so it prints as `1.8`); any
/// other time (a spring's rest time, a collision) is left exactly as computed. The change is
/// at most 4 ulps, far below any time the service can tell apart (1 µs), and nothing a time
/// that already prints as a short decimal is changed.
@inline(__always)
public func exactTime(_ t: Double) -> Double {
    guard t.isFinite, t != 0 else { return t }
    let magnitude = abs(t)
    // The power of ten that puts 12 significant digits before the decimal point.
    let exponent = 11 - Int(log10(magnitude).rounded(.down))
    guard exponent >= 0, exponent <= 22 else { return t }
    let scale = pow(10, Double(exponent))   // exact for exponents up to 22
    let digits = (t * scale).rounded()
    guard abs(digits) < 9.007_199_254_740_992e15 else { return t }
    let candidate = digits / scale          // correctly rounded: the double nearest the decimal
    return abs(candidate - t) <= 4 * t.ulp ? candidate : t
}
