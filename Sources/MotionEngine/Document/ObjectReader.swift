/// Reads the fields of one JSON object, reporting missing fields, wrong types and (on
/// `finish()`) unknown fields to a shared `Diagnostics`, each with its JSON pointer.
///
/// Every accessor returns `nil` when the field is absent or wrong; the problem is already
/// recorded, so callers simply carry on and collect further problems.
public final class ObjectReader {
    public let object: JSONObject
    public let pointer: String
    public let diagnostics: Diagnostics
    /// Which of the object's fields were asked for, by position in `object.pairs`: a bit each
    /// for the first 64, a flag each past that. Names asked for that the object does not hold
    /// are kept in `askedAbsent`, only for the did-you-mean suggestion of an unknown field.
    /// (One list for every reader of a decode measured 700 instructions a request cheaper for
    /// the small document, but then each reader's `finish()` filters the whole list: quadratic
    /// in a document of many objects with unknown fields. One list a reader stays linear.)
    /// (No `Set<String>` and no hashing of every field name read. With `JSONObject`'s scan, the
    /// small document's decode after parsing went from ~55,000 to ~30,000 instructions.)
    /// (Unchecked exclusivity: these are touched only by this reader's own short methods, none
    /// of which calls out while accessing them; the runtime checks cost ~5,000 instructions a
    /// request for the small document: decode 54,200 → 49,300 with them off.)
    @exclusivity(unchecked) private var consumedBits: UInt64 = 0
    @exclusivity(unchecked) private var consumedMore: [Bool] = []
    @exclusivity(unchecked) private var askedAbsent: [String] = []

    public init(_ object: JSONObject, at pointer: String, _ diagnostics: Diagnostics) {
        self.object = object
        self.pointer = pointer
        self.diagnostics = diagnostics
    }

    /// Reads `value` as an object at `pointer`, or records a type problem and returns nil.
    public static func expecting(_ value: JSON, at pointer: String, _ diagnostics: Diagnostics) -> ObjectReader? {
        guard case .object(let object) = value else {
            diagnostics.malformed(pointer, "must be an object, not \(value.typeDescription)")
            return nil
        }
        return ObjectReader(object, at: pointer, diagnostics)
    }

    public func pointer(_ key: String) -> String { JSONPointer.appending(pointer, key) }

    public func has(_ key: String) -> Bool { object.position(of: key) != nil }

    /// Marks a field as known; returns its position in `object.pairs`, or nil when absent.
    @discardableResult
    private func consume(_ key: String) -> Int? {
        guard let position = object.position(of: key) else {
            if askedAbsent.isEmpty { askedAbsent.reserveCapacity(8) }
            askedAbsent.append(key)
            return nil
        }
        markConsumed(position)
        return position
    }

    private func markConsumed(_ position: Int) {
        if position < 64 {
            consumedBits |= 1 << UInt64(position)
        } else {
            if consumedMore.isEmpty { consumedMore = Array(repeating: false, count: object.count - 64) }
            consumedMore[position - 64] = true
        }
    }

    private func isConsumed(_ position: Int) -> Bool {
        position < 64 ? consumedBits & (1 << UInt64(position)) != 0 : !consumedMore.isEmpty && consumedMore[position - 64]
    }

    /// The raw value of a field (marks it as known).
    public func value(_ key: String, required: Bool = false) -> JSON? {
        guard let position = consume(key) else {
            if required { diagnostics.malformed(pointer(key), "is required") }
            return nil
        }
        return object.pairs[position].value
    }

    /// Marks fields as known without reading them (for fields another reader handles).
    public func accept(_ keys: String...) { keys.forEach { consume($0) } }

    /// Marks every field as known (for free-form objects, and nodes given up on).
    public func acceptAll() {
        for position in object.pairs.indices { markConsumed(position) }
    }

    public func number(_ key: String, required: Bool = false) -> Double? {
        guard let value = value(key, required: required) else { return nil }
        guard case .number(let n) = value else {
            diagnostics.malformed(pointer(key), "must be a number, not \(value.typeDescription)")
            return nil
        }
        return n
    }

    /// An integral number (`2` or `2.0`); `1.5` is a type problem (400).
    public func integer(_ key: String, required: Bool = false) -> Int? {
        guard let value = value(key, required: required) else { return nil }
        guard case .number(let n) = value, n == n.rounded(), abs(n) < 9e15 else {
            diagnostics.malformed(pointer(key), "must be an integer, not \(describe(value))")
            return nil
        }
        return Int(n)
    }

    public func string(_ key: String, required: Bool = false) -> String? {
        guard let value = value(key, required: required) else { return nil }
        guard case .string(let s) = value else {
            diagnostics.malformed(pointer(key), "must be a string, not \(value.typeDescription)")
            return nil
        }
        return s
    }

    public func bool(_ key: String, required: Bool = false) -> Bool? {
        guard let value = value(key, required: required) else { return nil }
        guard case .bool(let b) = value else {
            diagnostics.malformed(pointer(key), "must be a boolean, not \(value.typeDescription)")
            return nil
        }
        return b
    }

    public func object(_ key: String, required: Bool = false) -> ObjectReader? {
        guard let value = value(key, required: required) else { return nil }
        return ObjectReader.expecting(value, at: pointer(key), diagnostics)
    }

    public func array(_ key: String, required: Bool = false) -> [JSON]? {
        guard let value = value(key, required: required) else { return nil }
        guard case .array(let items) = value else {
            diagnostics.malformed(pointer(key), "must be an array, not \(value.typeDescription)")
            return nil
        }
        return items
    }

    /// A number that must lie in a range; out of range is a 422 saying which range.
    public func number(_ key: String, in range: ClosedRange<Double>, required: Bool = false) -> Double? {
        guard let n = number(key, required: required) else { return nil }
        guard range.contains(n) else {
            diagnostics.invalid(pointer(key), "must be between \(format(range.lowerBound)) and \(format(range.upperBound)), not \(format(n))")
            return nil
        }
        return n
    }

    /// A number that must be ≥ 0.
    public func nonNegative(_ key: String, required: Bool = false) -> Double? {
        guard let n = number(key, required: required) else { return nil }
        guard n >= 0 else {
            diagnostics.invalid(pointer(key), "must not be negative")
            return nil
        }
        return n
    }

    /// Times (delays, durations, window ends) are at most this many seconds (about 31 years),
    /// so that sums of them stay finite and exact enough.
    public static let maximumTime = 1e9  // messages say "1e9"
    /// Numbers in values and velocities are at most this large in magnitude, so that every
    /// sample stays finite.
    public static let maximumMagnitude = 1e15  // messages say "±1e15"

    /// A time in seconds: 0 … `maximumTime`.
    public func time(_ key: String, required: Bool = false) -> Double? {
        guard let n = number(key, required: required) else { return nil }
        guard n >= 0 else {
            diagnostics.invalid(pointer(key), "must not be negative")
            return nil
        }
        guard n <= Self.maximumTime else {
            diagnostics.invalid(pointer(key), "must be at most 1e9 seconds, not \(format(n))")
            return nil
        }
        return n
    }

    /// A number within ±`maximumMagnitude` (a velocity, a value).
    public func bounded(_ key: String, required: Bool = false) -> Double? {
        guard let n = number(key, required: required) else { return nil }
        guard abs(n) <= Self.maximumMagnitude else {
            diagnostics.invalid(pointer(key), "must be within ±1e15, not \(format(n))")
            return nil
        }
        return n
    }

    /// Records every field that no accessor asked for as unknown (400).
    /// Records every field that no accessor asked for as unknown (400), with the known field
    /// it most likely misspells ("did you mean …?").
    public func finish() {
        var known: Set<String>?
        for (position, pair) in object.pairs.enumerated() where !isConsumed(position) {
            let key = pair.key
            if known == nil {
                known = Set(askedAbsent)
                for (position, pair) in object.pairs.enumerated() where isConsumed(position) { known!.insert(pair.key) }
            }
            if let match = Self.suggestion(for: key, among: known!) {
                diagnostics.malformed(pointer(key), "unknown field '\(key)': did you mean '\(match)'?")
            } else {
                diagnostics.malformed(pointer(key), "unknown field '\(key)'")
            }
        }
    }

    /// The known name closest to `key`: the same ignoring case, or within an edit distance of
    /// a third of its length (at least 1, at most 3). Names over 64 characters get none (the
    /// distance costs length², and input reaches it).
    static func suggestion(for key: String, among known: Set<String>) -> String? {
        let a = Array(key.lowercased().utf8)
        guard !a.isEmpty, a.count <= 64 else { return nil }
        let limit = min(3, max(1, a.count / 3))
        var best: (name: String, distance: Int)?
        for name in known.sorted() {
            let b = Array(name.lowercased().utf8)
            guard b.count <= 64, abs(a.count - b.count) <= limit else { continue }
            let d = editDistance(a, b)
            if d <= limit, d < (best?.distance ?? Int.max) { best = (name, d) }
        }
        return best?.name
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// neighbours each cost 1.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, previous2[j - 2] + 1) }
                current[j] = value
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }

    private func describe(_ value: JSON) -> String {
        if case .number(let n) = value { return format(n) }
        return value.typeDescription
    }
}

/// Formats a number for messages: `2`, `1.5`, `0.001`.
public func format(_ n: Double) -> String {
    var writer = JSONWriter(capacity: 24)
    writer.number(n)
    return String(decoding: writer.bytes, as: UTF8.self)
}
