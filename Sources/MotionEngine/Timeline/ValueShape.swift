/// Decomposition of property values into scalar leaves (MotionMachine's `MotionState`).
enum ValueShape {
    /// The numeric leaves of a value in document order, each with its path relative to the
    /// value (`[]` for a plain number, `["width"]`, `["3"]`, `["origin", "x"]`).
    static func leaves(of value: JSON) -> [(relative: [String], value: Double)] {
        var result: [(relative: [String], value: Double)] = []
        collect(value, prefix: [], into: &result)
        return result
    }

    private static func collect(_ value: JSON, prefix: [String], into result: inout [(relative: [String], value: Double)]) {
        switch value {
        case .number(let n):
            result.append((prefix, n))
        case .object(let object):
            for (key, child) in object.pairs { collect(child, prefix: prefix + [key], into: &result) }
        case .array(let items):
            for (index, child) in items.enumerated() { collect(child, prefix: prefix + [String(index)], into: &result) }
        case .null, .bool, .string:
            return
        }
    }

    /// The first member of an object or array, in document order, that is neither a number
    /// nor an object or array (its path relative to the value and what it is), or nil when
    /// every leaf is a number.
    static func firstNonNumber(in value: JSON, prefix: [String] = []) -> (relative: [String], what: String)? {
        switch value {
        case .number:
            return nil
        case .object(let object):
            for (key, child) in object.pairs {
                if let found = firstNonNumber(in: child, prefix: prefix + [key]) { return found }
            }
            return nil
        case .array(let items):
            for (index, child) in items.enumerated() {
                if let found = firstNonNumber(in: child, prefix: prefix + [String(index)]) { return found }
            }
            return nil
        case .null, .bool, .string:
            return (prefix, value.typeDescription)
        }
    }

    /// A short description of a value's shape for error messages.
    static func describe(_ value: JSON) -> String {
        switch value {
        case .number: return "a number"
        case .object(let object): return "an object with keys \(object.keys.joined(separator: ", "))"
        case .array(let items): return "an array of \(items.count)"
        default: return value.typeDescription
        }
    }
}
