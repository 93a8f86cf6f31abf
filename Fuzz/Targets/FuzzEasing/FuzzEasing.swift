import MotionEngine

/// libFuzzer target: the easing string parser (`linear`, Penner names, CSS keywords,
/// `cubic-bezier(…)`, `steps(…)`, `linear(…)`), then the parsed easing at a few progress values.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let easing = try? Easing.parse(text) else { return 0 }
    for u in [0, 1e-9, 0.25, 0.5, 0.75, 1 - 1e-9, 1] as [Double] {
        _ = easing(u)
    }
    return 0
}
