import MotionEngine

/// libFuzzer target: SVG path data through `SVGPathParser` (arcs become cubic pieces there)
/// and `PathGeometry` (measuring), then a few points and tangents along the path.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: buffer, as: UTF8.self)
    guard let geometry = try? PathGeometry(svg: text) else { return 0 }
    for p in [0, 0.3, 0.5, 1] as [Double] {
        _ = geometry.point(atFraction: p)
        _ = geometry.tangentAngle(atFraction: p)
    }
    _ = geometry.pointAndAngle(atDistance: geometry.length / 3)
    return 0
}
