/// Decomposition of property values into scalar leaves (MotionMachine's `MotionState`).
enum ValueShape {
    /// The numeric leaves of a value in document order, each with its path relative to the
    /// value (`[]` for a plain number, `["width"]`, `["3"]`, `["origin", "x"]`); members that
    /// are not numbers, objects or arrays are passed over.
    static func leaves(of value: JSON) -> [(relative: [String], value: Double)] {
        var result: [(relative: [String], value: Double)] = []
        var other: (relative: [String], what: String)?
        collect(value, prefix: [], into: &result, other: &other)
        return result
    }

    /// The numeric leaves as `leaves(of:)`, and the first member, in document order, that is
    /// neither a number nor an object or array (its relative path and what it is), if any.
    static func numericLeaves(of value: JSON) -> (leaves: [(relative: [String], value: Double)], other: (relative: [String], what: String)?) {
        var result: [(relative: [String], value: Double)] = []
        var other: (relative: [String], what: String)?
        collect(value, prefix: [], into: &result, other: &other)
        return (result, other)
    }

    private static func collect(_ value: JSON, prefix: [String], into result: inout [(relative: [String], value: Double)],
                                other: inout (relative: [String], what: String)?) {
        switch value {
        case .number(let n):
            result.append((prefix, n))
        case .object(let object):
            for (key, child) in object.pairs { collect(child, prefix: prefix + [key], into: &result, other: &other) }
        case .array(let items):
            for (index, child) in items.enumerated() { collect(child, prefix: prefix + [String(index)], into: &result, other: &other) }
        case .null, .bool, .string:
            if other == nil { other = (prefix, value.typeDescription) }
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
