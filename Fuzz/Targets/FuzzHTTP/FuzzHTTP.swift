import MotionHTTP

/// libFuzzer target: requests through the service's router and handlers, without a daemon
/// (input format: `FuzzEntry` in Sources/MotionHTTP/FuzzEntry.swift).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzEntry.handle(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
