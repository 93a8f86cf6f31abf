/// Strong entity tags for computed answers (docs/authoring.md, "Batches and caching"): a 128-bit FNV-1a hash of the engine
/// version and the canonical form of the request.
///
/// FNV-1a rather than a cryptographic hash: the tag only has to change when the request
/// changes (it is a cache validator, not a defence against someone forging collisions —
/// a forged match would only let a client fool its own cache), and a dozen lines of
/// well-known arithmetic cost nothing to build, where swift-crypto would add a large
/// dependency. 128 bits make accidental collisions negligible.
public enum RequestTag {
    /// Names the computation: the release version (`MotionServerVersion.current`), which
    /// changes with every release — and every release that can change an answer for the
    /// same request (a fix in a kernel, an easing, the encoder, the order of events…) is a
    /// new version in CHANGELOG.md — so that tags issued by an earlier build stop matching.
    public static let engineVersion = "motion-server \(MotionServerVersion.current)"

    /// The tag for a request body already parsed as JSON, quoted: `"<32 hex digits>"`.
    /// `kind` separates endpoints whose answers differ for the same body.
    public static func tag(for request: JSON, kind: String, engineVersion: String = RequestTag.engineVersion) -> String {
        var hash = FNV1a128()
        hash.add(engineVersion.utf8)
        hash.add(CollectionOfOne(0))
        hash.add(kind.utf8)
        hash.add(CollectionOfOne(0))
        var w = JSONWriter(capacity: 1024)
        write(request, ordered: false, into: &w)
        hash.add(w.bytes)
        return "\"" + hash.hex + "\""
    }

    /// The request as the engine sees it, written one way: no insignificant whitespace,
    /// numbers in their shortest round-trip form (`1.0` and `1` are one number), strings
    /// with one escaping. Keys are sorted where their order cannot shape the answer (the
    /// document's fields, nodes, properties, options) and kept in document order where it
    /// can: inside `target`, values (`from`, `to`, `keyframes`) and `labels`, whose order
    /// is the order of tracks, `final`, wildcard expansions and the `labels` answer.
    public static func canonical(_ json: JSON) -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        write(json, ordered: false, into: &w)
        return w.bytes
    }

    /// The keys under which order is kept (`target`, `from`, `to`, `keyframes`, `labels`),
    /// compared as bytes rather than hashed into a `Set`.
    static func keepsOrder(_ key: String) -> Bool {
        switch key.utf8.count {
        case 2: return key == "to"
        case 4: return key == "from"
        case 6: return key == "target" || key == "labels"
        case 9: return key == "keyframes"
        default: return false
        }
    }

    /// Keys are sorted by their UTF-8 bytes compared in place (before: an `Array` of each
    /// key's bytes for every comparison, and a `Set` lookup for every key).
    private static func write(_ json: JSON, ordered: Bool, into w: inout JSONWriter) {
        switch json {
        case .object(let object):
            w.byte(UInt8(ascii: "{"))
            let pairs = object.pairs
            if ordered || pairs.count < 2 {
                for (index, pair) in pairs.enumerated() {
                    if index > 0 { w.byte(UInt8(ascii: ",")) }
                    w.key(pair.key)
                    write(pair.value, ordered: ordered || keepsOrder(pair.key), into: &w)
                }
            } else {
                let order = pairs.indices.sorted { pairs[$0].key.utf8.lexicographicallyPrecedes(pairs[$1].key.utf8) }
                for (index, position) in order.enumerated() {
                    if index > 0 { w.byte(UInt8(ascii: ",")) }
                    let pair = pairs[position]
                    w.key(pair.key)
                    write(pair.value, ordered: keepsOrder(pair.key), into: &w)
                }
            }
            w.byte(UInt8(ascii: "}"))
        case .array(let items):
            w.byte(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { w.byte(UInt8(ascii: ",")) }
                write(item, ordered: ordered, into: &w)
            }
            w.byte(UInt8(ascii: "]"))
        default:
            w.value(json)
        }
    }

    /// Whether an `If-None-Match` field value matches `tag` (RFC 9110 §13.1.2: `*`, or a
    /// list of tags compared weakly).
    public static func matches(ifNoneMatch field: String, tag: String) -> Bool {
        let trimmed = field.trimmingBlanks()
        if trimmed == "*" { return true }
        for item in trimmed.split(separator: ",") {
            var candidate = String(item).trimmingBlanks()
            if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
            // A compressed answer carried the tag with its coding appended inside the quotes
            // (the HTTP layer's compression); it names the same answer.
            for coding in ["-gzip\"", "-deflate\""] where candidate.hasSuffix(coding) {
                candidate = String(candidate.dropLast(coding.count)) + "\""
            }
            if candidate == tag { return true }
        }
        return false
    }
}

/// 128-bit FNV-1a (Fowler, Noll, Vo): for each byte, xor it in, then multiply by the FNV
/// prime 2^88 + 2^8 + 0x3b, modulo 2^128.
public struct FNV1a128: Sendable {
    public private(set) var high: UInt64 = 0x6c62_272e_07bb_0142
    public private(set) var low: UInt64 = 0x62b8_2175_6295_c58d

    public init() {}

    public mutating func add(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { add(bytes: $0) }
    }

    public mutating func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        if bytes.withContiguousStorageIfAvailable({ add(bytes: $0) }) == nil {
            for byte in bytes { add(byte: byte) }
        }
    }

    private mutating func add(bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes { add(byte: byte) }
    }

    @inline(__always)
    private mutating func add(byte: UInt8) {
        low ^= UInt64(byte)
        // x · (2^88 + 0x13b) = x · 0x13b + (x << 88), modulo 2^128.
        let product = low.multipliedFullWidth(by: 0x13b)
        let newHigh = high &* 0x13b &+ product.high &+ (low << 24)
        low = product.low
        high = newHigh
    }

    /// 32 lower-case hex digits, most significant first.
    public var hex: String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 32) { out in
            for i in 0..<16 {
                out[i] = digits.utf8Start[Int((high >> UInt64(60 - 4 * i)) & 0xF)]
                out[16 + i] = digits.utf8Start[Int((low >> UInt64(60 - 4 * i)) & 0xF)]
            }
            return 32
        }
    }
}

private extension String {
    func trimmingBlanks() -> String {
        let characters: Set<Character> = [" ", "\t"]
        var slice = Substring(self)
        while let first = slice.first, characters.contains(first) { slice.removeFirst() }
        while let last = slice.last, characters.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
