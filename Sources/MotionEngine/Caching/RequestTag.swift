/// Strong entity tags for computed answers (docs/authoring.md, "Batches and caching"): a 128-bit FNV-1a hash of the engine
/// version and the canonical form of the request (its numbers hashed by their bits).
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
        digest(for: request, kind: kind, engineVersion: engineVersion).quotedHex
    }

    /// The hash the tag writes out (`tag` is its `quotedHex`): a value to keep in a set.
    ///
    /// The canonical form is hashed while it is walked (`CanonicalWalk` into the hash): no
    /// buffer of the whole form, no `Array` of each key's bytes per comparison when sorting.
    /// (Small document, callgrind, release: RequestTag 37,000 → 10,400 instructions a request.)
    public static func digest(for request: JSON, kind: String, engineVersion: String = RequestTag.engineVersion) -> FNV1a128 {
        var walk = CanonicalWalk(sink: FNV1a128())
        walk.sink.add(engineVersion.utf8)
        walk.sink.add(byte: 0)
        walk.sink.add(kind.utf8)
        walk.sink.add(byte: 0)
        walk.write(request, ordered: false)
        return walk.sink
    }

    /// The request as the engine sees it, written one way: no insignificant whitespace,
    /// numbers in their shortest round-trip form (`1.0` and `1` are one number), strings
    /// with one escaping. Keys are sorted where their order cannot shape the answer (the
    /// document's fields, nodes, properties, options) and kept in document order where it
    /// can: inside `target`, values (`from`, `to`, `keyframes`) and `labels`, whose order
    /// is the order of tracks, `final`, wildcard expansions and the `labels` answer.
    public static func canonical(_ json: JSON) -> [UInt8] {
        var walk = CanonicalWalk(sink: CanonicalBytes())
        walk.write(json, ordered: false)
        return walk.sink.bytes
    }

    /// What `digest` hashes after the engine version and the kind: the canonical form with
    /// each number as `#` and its bits (`CanonicalSink.addBits`) instead of its text.
    static func hashedForm(_ json: JSON) -> [UInt8] {
        var walk = CanonicalWalk(sink: CanonicalBytes(numbersAsBits: true))
        walk.write(json, ordered: false)
        return walk.sink.bytes
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

    /// An `If-None-Match` field that matched: which form of the tag it listed.
    public struct Match: Sendable, Equatable {
        /// The content coding appended to the listed tag (`gzip` for `"…-gzip"`), nil for
        /// the plain tag or `*`.
        public let coding: String?
    }

    /// Whether an `If-None-Match` field value matches `tag`, and how (nil: it does not):
    /// RFC 9110 §13.1.2, `*` or a comma-separated list of tags compared weakly (a `W/`
    /// prefix is ignored), blanks around each. A compressed answer carried the tag with its
    /// coding appended inside the quotes (`"…-gzip"`, the HTTP layer's compression): it
    /// names the same answer, and the match says which coding it listed.
    ///
    /// Read as bytes, with nothing allocated: the `String` version (trim, split, a `String`
    /// per item, suffixes built by interpolation) cost 22,172 instructions; this costs 1,451
    /// (callgrind, a 304 for the small document: 165,173 → 144,199 instructions a request).
    public static func match(ifNoneMatch field: String, tag: String) -> Match? {
        var field = field, tag = tag
        return field.withUTF8 { field in tag.withUTF8 { tag in match(ifNoneMatch: field, tag: tag) } }
    }

    static func match(ifNoneMatch field: UnsafeBufferPointer<UInt8>, tag: UnsafeBufferPointer<UInt8>) -> Match? {
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        /// `field[start..<end]` without the blanks at either end.
        func trimmed(_ start: Int, _ end: Int) -> Range<Int> {
            var start = start, end = end
            while start < end, isBlank(field[start]) { start += 1 }
            while end > start, isBlank(field[end - 1]) { end -= 1 }
            return start..<end
        }
        let whole = trimmed(0, field.count)
        if whole.count == 1, field[whole.lowerBound] == UInt8(ascii: "*") { return Match(coding: nil) }
        var itemStart = whole.lowerBound
        while itemStart < whole.upperBound {
            var itemEnd = itemStart
            while itemEnd < whole.upperBound, field[itemEnd] != UInt8(ascii: ",") { itemEnd += 1 }
            var item = trimmed(itemStart, itemEnd)
            if item.count >= 2, field[item.lowerBound] == UInt8(ascii: "W"), field[item.lowerBound + 1] == UInt8(ascii: "/") {
                item = (item.lowerBound + 2)..<item.upperBound
            }
            if let coding = listed(UnsafeBufferPointer(rebasing: field[item]), tag: tag) { return coding }
            itemStart = itemEnd + 1
        }
        return nil
    }

    /// Whether one listed tag is `tag` itself, or `tag` with `-gzip` or `-deflate` before
    /// its closing quote.
    private static func listed(_ item: UnsafeBufferPointer<UInt8>, tag: UnsafeBufferPointer<UInt8>) -> Match? {
        if item.count == tag.count, samePrefix(item, tag, count: tag.count) { return Match(coding: nil) }
        guard tag.count >= 2, tag.last == UInt8(ascii: "\""), item.count > tag.count,
              item.last == UInt8(ascii: "\""), samePrefix(item, tag, count: tag.count - 1) else { return nil }
        let suffix = item[(tag.count - 1)..<(item.count - 1)]
        for coding in ["gzip", "deflate"] where suffix.count == coding.utf8.count + 1
            && suffix.first == UInt8(ascii: "-") && suffix.dropFirst().elementsEqual(coding.utf8) {
            return Match(coding: coding)
        }
        return nil
    }

    /// Whether the first `count` bytes of `a` and `b` (both at least that long) are the same.
    /// A byte loop: `elementsEqual` on the buffers cost about 30 instructions a byte, 989 a
    /// 304 for the small document (callgrind).
    @inline(__always)
    private static func samePrefix(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, count: Int) -> Bool {
        var index = 0
        while index < count {
            if a[index] != b[index] { return false }
            index &+= 1
        }
        return true
    }
}

/// 128-bit FNV-1a (Fowler, Noll, Vo): for each byte, xor it in, then multiply by the FNV
/// prime 2^88 + 2^8 + 0x3b, modulo 2^128.
public struct FNV1a128: Sendable, Hashable {
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

    mutating func add(bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes { add(byte: byte) }
    }

    @inline(__always)
    mutating func add(byte: UInt8) {
        low ^= UInt64(byte)
        // x · (2^88 + 0x13b) = x · 0x13b + (x << 88), modulo 2^128.
        let product = low.multipliedFullWidth(by: 0x13b)
        let newHigh = high &* 0x13b &+ product.high &+ (low << 24)
        low = product.low
        high = newHigh
    }

    /// 32 lower-case hex digits, most significant first.
    public var hex: String { digits(quoted: false) }

    /// `hex` in double quotes, as an entity tag is written.
    public var quotedHex: String { digits(quoted: true) }

    private func digits(quoted: Bool) -> String {
        let digits: StaticString = "0123456789abcdef"
        let first = quoted ? 1 : 0
        return String(unsafeUninitializedCapacity: 32 + 2 * first) { out in
            for i in 0..<16 {
                out[first + i] = digits.utf8Start[Int((high >> UInt64(60 - 4 * i)) & 0xF)]
                out[first + 16 + i] = digits.utf8Start[Int((low >> UInt64(60 - 4 * i)) & 0xF)]
            }
            if quoted {
                out[0] = UInt8(ascii: "\"")
                out[33] = UInt8(ascii: "\"")
            }
            return 32 + 2 * first
        }
    }
}

/// Where the canonical form goes: bytes (for `RequestTag.canonical`) or the hash.
protocol CanonicalSink {
    mutating func add(bytes: UnsafeBufferPointer<UInt8>)
    mutating func add(byte: UInt8)
    /// A number of the request: its text, or its bits (`addBits`).
    mutating func add(number: Double)
}

extension CanonicalSink {
    /// `value` as `JSONWriter` writes it, the shortest text that reads back as it (`1.0`
    /// and `1e0` are `1`; −0 is `0`).
    mutating func addText(of value: Double) {
        // Into a stack buffer: a scratch `JSONWriter` emptied for every number cost its
        // generic `removeAll` each time, and its own allocation (the small document of
        // `make bench-instructions`: 188,976 → 187,193 instructions a request).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: JSONWriter.maxNumberBytes) { buffer in
            let count = JSONWriter.write(value, to: buffer.baseAddress!)
            add(bytes: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// `value` as `#` and the 8 bytes of its bits, least significant first, −0 as 0: as one
    /// to one as its shortest text (two numbers have the same text exactly when they are the
    /// same `Double`, or ±0), in a fixed length after a byte no other value starts with, so
    /// no two requests give the same bytes. Cheaper than the text: finding a fraction's
    /// shortest digits costs about 300 instructions, hashing 9 bytes about 80.
    mutating func addBits(of value: Double) {
        add(byte: UInt8(ascii: "#"))
        var bits = value == 0 ? 0 : value.bitPattern
        for _ in 0..<8 {
            add(byte: UInt8(truncatingIfNeeded: bits))
            bits &>>= 8
        }
    }
}

/// The hash takes numbers by their bits (`addBits`), not their text: a request whose target
/// holds 50,000 fractions, 171.6 → 150.1 million instructions (callgrind, release); the
/// small document (four integers), 174,722 → 174,325.
extension FNV1a128: CanonicalSink {
    mutating func add(number: Double) { addBits(of: number) }
}

/// The canonical form as bytes; with `numbersAsBits`, exactly the bytes the tag hashes after
/// its prefix (tests).
struct CanonicalBytes: CanonicalSink {
    var bytes: [UInt8] = []
    var numbersAsBits = false
    mutating func add(bytes more: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: more) }
    mutating func add(byte: UInt8) { bytes.append(byte) }
    mutating func add(number: Double) { numbersAsBits ? addBits(of: number) : addText(of: number) }
}

/// Writes the canonical form of a request into a sink: the JSON text as `JSONWriter` writes it
/// (numbers through `JSONWriter.number`; strings with the same escapes: `\"`, `\\`, `\n`,
/// `\r`, `\t`, other control bytes as `\u00xx`), object keys sorted by their UTF-8 bytes
/// except under the `RequestTag.keepsOrder` keys.
struct CanonicalWalk<Sink: CanonicalSink> {
    var sink: Sink

    init(sink: Sink) { self.sink = sink }

    mutating func write(_ json: JSON, ordered: Bool) {
        switch json {
        case .object(let object):
            sink.add(byte: UInt8(ascii: "{"))
            let pairs = object.pairs
            if ordered || pairs.count < 2 {
                for (index, pair) in pairs.enumerated() {
                    if index > 0 { sink.add(byte: UInt8(ascii: ",")) }
                    key(pair.key)
                    write(pair.value, ordered: ordered || RequestTag.keepsOrder(pair.key))
                }
            } else {
                // Positions sorted by the keys' bytes, compared in place: by insertion into a
                // stack buffer for the usual handful of keys, by `sorted` past 16 (insertion
                // sort is quadratic, and input reaches the count).
                func precedes(_ a: Int, _ b: Int) -> Bool { Self.utf8Precedes(pairs[a].key, pairs[b].key) }
                let writeSorted = { (walk: inout CanonicalWalk, order: UnsafeBufferPointer<Int>) in
                    for (index, position) in order.enumerated() {
                        if index > 0 { walk.sink.add(byte: UInt8(ascii: ",")) }
                        let pair = pairs[position]
                        walk.key(pair.key)
                        walk.write(pair.value, ordered: RequestTag.keepsOrder(pair.key))
                    }
                }
                if pairs.count <= 16 {
                    withUnsafeTemporaryAllocation(of: Int.self, capacity: pairs.count) { order in
                        for position in pairs.indices {
                            var slot = position
                            while slot > 0, precedes(position, order[slot - 1]) {
                                order[slot] = order[slot - 1]
                                slot -= 1
                            }
                            order[slot] = position
                        }
                        writeSorted(&self, UnsafeBufferPointer(order))
                    }
                } else {
                    pairs.indices.sorted(by: precedes).withUnsafeBufferPointer { writeSorted(&self, $0) }
                }
            }
            sink.add(byte: UInt8(ascii: "}"))
        case .array(let items):
            sink.add(byte: UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { sink.add(byte: UInt8(ascii: ",")) }
                write(item, ordered: ordered)
            }
            sink.add(byte: UInt8(ascii: "]"))
        case .null: literal("null")
        case .bool(let value): literal(value ? "true" : "false")
        case .number(let value): sink.add(number: value)
        case .string(let text): string(text)
        }
    }

    private mutating func literal(_ text: StaticString) {
        sink.add(bytes: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Whether `a`'s UTF-8 bytes sort before `b`'s (`lexicographicallyPrecedes` on the
    /// bytes), compared on the strings' storage rather than through `String.UTF8View`'s
    /// indexes (with the escaping shortcut in `JSONWriter.write(string:to:)`, the small
    /// document: 203,058 → 202,623 instructions a request; callgrind).
    static func utf8Precedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { a in
            b.withUTF8 { b in
                for index in 0..<min(a.count, b.count) where a[index] != b[index] { return a[index] < b[index] }
                return a.count < b.count
            }
        }
    }

    mutating func key(_ text: String) {
        string(text)
        sink.add(byte: UInt8(ascii: ":"))
    }

    /// A JSON string, escaped as `JSONWriter` escapes it.
    private mutating func string(_ text: String) {
        JSONWriter.withEscaped(text) { sink.add(bytes: $0) }
    }
}
