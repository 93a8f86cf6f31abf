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
}

/// A JSON object that remembers the order of its keys.
public struct JSONObject: Sendable, Equatable {
    public private(set) var keys: [String] = []
    private var storage: [String: JSON] = [:]

    public init() {}

    public init(_ pairs: [(String, JSON)]) {
        for (key, value) in pairs { self[key] = value }
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    public subscript(key: String) -> JSON? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if storage.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    /// Key/value pairs in document order.
    public var pairs: [(key: String, value: JSON)] {
        keys.map { ($0, storage[$0]!) }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.keys == rhs.keys && lhs.storage == rhs.storage
    }
}

/// JSON pointers (RFC 6901) for error reports.
public enum JSONPointer {
    /// Appends one reference token, escaping `~` and `/`.
    public static func appending(_ pointer: String, _ token: String) -> String {
        // Field names almost never need escaping; a byte scan avoids Foundation on every read.
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else {
            return pointer + "/" + token
        }
        let escaped = token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
        return pointer + "/" + escaped
    }

    public static func appending(_ pointer: String, _ index: Int) -> String {
        pointer + "/" + String(index)
    }
}
