import MotionEngine

/// libFuzzer target: the JSON parser on arbitrary bytes; what it accepts must serialize to
/// text it accepts again, and that round trip must be stable.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let json = try? JSONParser.parse(bytes) else { return 0 }
    let once = json.serialized
    guard let reparsed = try? JSONParser.parse(once) else {
        fatalError("the parser rejects the writer's serialization of an accepted value: \(String(decoding: once, as: UTF8.self))")
    }
    let twice = reparsed.serialized
    if twice != once {
        fatalError("serialization is not stable: \(String(decoding: once, as: UTF8.self)) then \(String(decoding: twice, as: UTF8.self))")
    }
    return 0
}
