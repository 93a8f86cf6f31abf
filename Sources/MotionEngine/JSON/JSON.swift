import Foundation

/// A parsed JSON value.
///
/// The engine parses request bodies itself (see `JSONParser`) so that it can keep object key
/// order (for `final`), tell a missing field from a `null`, reject duplicate keys, and point at
/// every problem with a JSON pointer.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    /// The JSON type name used in error messages ("a number", "an object", …).
    public var typeDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    public var numberValue: Double? {
        if case .number(let n) = self { return n }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The object this holds, moved out (`self` is left `.null`), or nil (`self` unchanged).
    /// The caller then holds the only reference to the object's storage and can change it in
    /// place before putting it back; binding it with `case .object(var o) = self` instead
    /// keeps `self`'s reference alive, and every change copies the whole object. `consume`
    /// is what guarantees the move (a `switch` on `self` did not, in release builds).
    mutating func takeObject() -> JSONObject? {
        guard case .object = self else { return nil }
        let taken = self
        self = .null
        guard case .object(let object) = consume taken else { return nil }
        return object
    }

    /// The array this holds, moved out as `takeObject` does.
    mutating func takeArray() -> [JSON]? {
        guard case .array = self else { return nil }
        let taken = self
        self = .null
        guard case .array(let items) = consume taken else { return nil }
        return items
    }
}

/// A JSON object that remembers the order of its keys.
///
/// Stored as its pairs in document order, found by a linear scan: request objects hold a
/// handful of fields, for which comparing keys costs less than hashing them (no `Hasher`, no
/// dictionary to allocate). An object with more than `indexedCount` keys also keeps a
/// key → position index, so that large objects (a `target` with thousands of fields, hostile
/// input) stay linear to build and constant to read.
/// (Small document, callgrind, release, per request: the JSON parse 43,000 → 11,700
/// instructions with the parser's string and number paths; the decoder after it, whose
/// lookups moved from `Dictionary`/`Set` hashing to this scan, 55,000 → 30,000.)
public struct JSONObject: Sendable, Equatable {
    /// Key/value pairs in document order.
    public private(set) var pairs: [(key: String, value: JSON)] = []
    /// Key → position in `pairs`, kept only past `indexedCount` keys.
    private var index: [String: Int]?

    /// Above this many keys the object keeps a hash index.
    static let indexedCount = 16

    public init() {}

    /// An empty object with room for `capacity` keys.
    init(reservingCapacity capacity: Int) {
        pairs.reserveCapacity(capacity)
    }

    public init(_ pairs: [(String, JSON)]) {
        for (key, value) in pairs { self[key] = value }
    }

    public var count: Int { pairs.count }
    public var isEmpty: Bool { pairs.isEmpty }

    /// The keys in document order.
    public var keys: [String] { pairs.map(\.key) }

    /// The position of `key` in `pairs`, or nil.
    public func position(of key: String) -> Int? {
        if let index { return index[key] }
        let count = key.utf8.count
        for i in pairs.indices {
            let candidate = pairs[i].key
            if candidate.utf8.count == count, candidate == key { return i }
        }
        return nil
    }

    public subscript(key: String) -> JSON? {
        get { position(of: key).map { pairs[$0].value } }
        set {
            if let position = position(of: key) {
                if let newValue {
                    pairs[position].value = newValue
                } else {
                    pairs.remove(at: position)
                    reindex()
                }
            } else if let newValue {
                appendNew(key, newValue)
            }
        }
    }

    /// The value at `position` (from `position(of:)`), moved out: `.null` is left in its
    /// place until `setValue(_:at:)` puts one back (see `JSON.takeObject`).
    mutating func takeValue(at position: Int) -> JSON {
        let value = pairs[position].value
        pairs[position].value = .null
        return value
    }

    /// Replaces the value at `position` (from `position(of:)`): no second lookup of the key.
    mutating func setValue(_ value: JSON, at position: Int) {
        pairs[position].value = value
    }

    /// Appends a pair whose key the object does not hold yet (the parser checks first).
    mutating func appendNew(_ key: String, _ value: JSON) {
        pairs.append((key, value))
        if index != nil {
            index![key] = pairs.count - 1
        } else if pairs.count > Self.indexedCount {
            reindex()
        }
    }

    private mutating func reindex() {
        guard pairs.count > Self.indexedCount else { index = nil; return }
        var built = [String: Int](minimumCapacity: pairs.count)
        for (position, pair) in pairs.enumerated() { built[pair.key] = position }
        index = built
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.pairs.count == rhs.pairs.count && zip(lhs.pairs, rhs.pairs).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

/// JSON pointers (RFC 6901) for error reports.
public enum JSONPointer {
    /// Appends one reference token, escaping `~` and `/`.
    public static func appending(_ pointer: String, _ token: String) -> String {
        var token = token
        let plain = token.withUTF8 { bytes in !bytes.contains { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") } }
        guard plain else {
            let escaped = token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
            return pointer + "/" + escaped
        }
        return joined(pointer, token)
    }

    public static func appending(_ pointer: String, _ index: Int) -> String {
        joined(pointer, String(index))
    }

    /// `pointer + "/" + token` written into one new string: no intermediate string, one
    /// allocation at most (the small document's decode makes 3 pointers: ~950 instructions
    /// each through `+` and `append`, ~450 this way; decode 49,300 → 47,600 a request).
    private static func joined(_ pointer: String, _ token: String) -> String {
        var pointer = pointer, token = token
        return pointer.withUTF8 { head in
            token.withUTF8 { tail in
                String(unsafeUninitializedCapacity: head.count + 1 + tail.count) { out in
                    var index = 0
                    for byte in head { out[index] = byte; index += 1 }
                    out[index] = UInt8(ascii: "/"); index += 1
                    for byte in tail { out[index] = byte; index += 1 }
                    return index
                }
            }
        }
    }
}
