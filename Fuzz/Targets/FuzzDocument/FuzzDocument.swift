import MotionEngine

/// libFuzzer target: what `POST /v1/timelines` does before encoding — decode a document with
/// the default `EngineLimits`, compile it, and sample every track once (mid-window), plus each
/// output's whole value at that instant.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: data, count: size)
    let bytes = Array(buffer)
    let compiler = TimelineCompiler(limits: .default)
    guard let document = try? DocumentDecoder(limits: .default).decode(bytes),
          let timeline = try? compiler.compile(document) else { return 0 }
    let t = timeline.time(ofFrame: timeline.frameCount / 2)
    var values: [Double] = []
    timeline.sample(at: t, into: &values)
    for index in timeline.outputs.indices {
        _ = timeline.wholeValue(of: index, trackValues: values)
    }
    return 0
}
