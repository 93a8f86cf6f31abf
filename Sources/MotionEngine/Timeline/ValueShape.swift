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

    /// The numbers of `value`'s leaves in `leaves(of:)`'s order, without their paths.
    static func numbers(of value: JSON) -> [Double] {
        var result: [Double] = []
        appendNumbers(of: value, to: &result)
        return result
    }

    private static func appendNumbers(of value: JSON, to result: inout [Double]) {
        switch value {
        case .number(let n): result.append(n)
        case .object(let object): for pair in object.pairs { appendNumbers(of: pair.value, to: &result) }
        case .array(let items): for item in items { appendNumbers(of: item, to: &result) }
        case .null, .bool, .string: break
        }
    }

    /// What must agree between a property's keyframes, written into `signature` (replacing
    /// what it held): a colour string is one byte (255); any other value the relative path
    /// of each numeric leaf in `leaves(of:)`'s order, each step an object key (1, its length
    /// in 4 bytes, its bytes) or an array index (2, the index in 4 bytes), each path ended by
    /// a 0. Equal signatures are the same leaves at the same paths: `{"0": 1}` is not `[1]`,
    /// nor `{"a.b": 1}` `{"a": {"b": 1}}`.
    ///
    /// No `String` or array per leaf: when each keyframe's shape was a `String` of its
    /// leaves' paths joined, that cost 2,555 instructions a leaf, and a property of 450
    /// numbers through 1,000 keyframes (a 0.9 MB body) took 0.27 s to answer; the signature
    /// costs 157 a leaf (callgrind, release).
    static func signature(of value: JSON, into signature: inout [UInt8]) {
        signature.removeAll(keepingCapacity: true)
        if case .string = value { signature.append(255); return }
        var prefix: [UInt8] = []
        appendSignature(of: value, prefix: &prefix, to: &signature)
    }

    private static func appendSignature(of value: JSON, prefix: inout [UInt8], to signature: inout [UInt8]) {
        switch value {
        case .number:
            signature.append(contentsOf: prefix)
            signature.append(0)
        case .object(let object):
            for pair in object.pairs {
                let length = pair.key.utf8.count
                appendStep(1, length, to: &prefix)
                prefix.append(contentsOf: pair.key.utf8)
                appendSignature(of: pair.value, prefix: &prefix, to: &signature)
                prefix.removeLast(5 + length)
            }
        case .array(let items):
            for (index, item) in items.enumerated() {
                if case .number = item {
                    // The usual member, written without growing the prefix.
                    signature.append(contentsOf: prefix)
                    appendStep(2, index, to: &signature)
                    signature.append(0)
                    continue
                }
                appendStep(2, index, to: &prefix)
                appendSignature(of: item, prefix: &prefix, to: &signature)
                prefix.removeLast(5)
            }
        case .null, .bool, .string:
            break
        }
    }

    /// A path step: `tag`, then `value`'s low 4 bytes, least significant first.
    @inline(__always)
    private static func appendStep(_ tag: UInt8, _ value: Int, to bytes: inout [UInt8]) {
        let v = UInt32(truncatingIfNeeded: value)
        bytes.append(tag)
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v >> 16))
        bytes.append(UInt8(truncatingIfNeeded: v >> 24))
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
