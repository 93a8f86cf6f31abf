/// `keyframes` on a tween property (docs/authoring.md): values placed in the leg at `offsets`, each
/// segment with its own easing.
public struct TweenKeyframes: Sendable {
    /// At least two values of one shape; nil first = the current value (implicit start).
    public var values: [JSON?]
    /// One per value, non-decreasing from 0 to 1 (fractions of the leg).
    public var offsets: [Double]
    /// One per segment (values.count − 1); nil = the property's or the node's easing.
    public var easings: [Easing?]
}

/// `keyframes` on a spring property (docs/authoring.md): successive targets, the spring carrying its
/// position and velocity across every turn.
public struct SpringKeyframes: Sendable {
    /// At least two values of one shape; nil first = the current value.
    public var values: [JSON?]
    /// Seconds spent heading for each target (values[1…]) before turning to the next; nil
    /// (the whole list, or its last entry) = until it comes to rest.
    public var durations: [Double?]?
}

/// Limits of keyframe lists.
public enum KeyframeLimits {
    /// Most values in one property's `keyframes` (a 422 beyond). Every keyframe of every
    /// leaf is kept in memory and searched per sample (O(log n)), so this with the body size
    /// bounds what a document can make the engine hold.
    public static let maxKeyframes = 1000
}

extension DocumentDecoder {
    /// The `keyframes` list: 2…maxKeyframes values of one shape, only the first may be null.
    func decodeKeyframeValues(_ reader: ObjectReader, _ diagnostics: Diagnostics) -> [JSON?]? {
        guard let items = reader.array("keyframes") else { return nil }
        let pointer = reader.pointer("keyframes")
        guard items.count >= 2 else {
            diagnostics.invalid(pointer, "must hold at least 2 values, not \(items.count)")
            return nil
        }
        guard items.count <= KeyframeLimits.maxKeyframes else {
            diagnostics.invalid(pointer, "holds \(items.count) values, over the limit of \(KeyframeLimits.maxKeyframes) keyframes per property")
            return nil
        }
        var values: [JSON?] = []
        values.reserveCapacity(items.count)
        var valid = true
        // The first keyframe with a value, and its shape (`ValueShape.signature`); the
        // pointer of a keyframe is made only for a problem.
        var shape: (index: Int, signature: [UInt8])?
        var signature: [UInt8] = []
        for (index, item) in items.enumerated() {
            if case .null = item {
                if index == 0 {
                    values.append(nil)
                    continue
                }
                diagnostics.malformed(JSONPointer.appending(pointer, index), "only the first keyframe may be null (the current value)")
                valid = false
                continue
            }
            guard isPlainValue(item) else {
                reportValueType(item, at: JSONPointer.appending(pointer, index), diagnostics)
                valid = false
                continue
            }
            ValueShape.signature(of: item, into: &signature)
            if let shape, shape.signature != signature {
                diagnostics.invalid(JSONPointer.appending(pointer, index),
                                    "has a different shape from keyframe \(shape.index): \(ValueShape.describe(item)) vs \(ValueShape.describe(items[shape.index]))")
                valid = false
            } else if shape == nil {
                shape = (index, signature)
            }
            values.append(item)
        }
        return valid ? values : nil
    }

    /// A tween property's `keyframes`, `offsets` and `easings` (nil when it has no keyframes,
    /// or after a problem, which is reported).
    func decodeTweenKeyframes(_ reader: ObjectReader, hasEasing: Bool, _ diagnostics: Diagnostics) -> (TweenKeyframes?, failed: Bool) {
        let offsetsGiven = reader.has("offsets"), easingsGiven = reader.has("easings")
        guard reader.has("keyframes") else {
            for key in ["offsets", "easings"] where reader.has(key) {
                _ = reader.value(key)
                diagnostics.invalid(reader.pointer(key), "applies only with 'keyframes'")
            }
            return (nil, offsetsGiven || easingsGiven)
        }
        for key in ["from", "to"] where reader.has(key) {
            _ = reader.value(key)
            diagnostics.invalid(reader.pointer(key), "'keyframes' replaces 'from' and 'to'; give one or the other")
        }
        let values = decodeKeyframeValues(reader, diagnostics)
        var failed = values == nil || reader.has("from") || reader.has("to")
        let count = values?.count ?? 0

        var offsets: [Double] = []
        if let items = reader.array("offsets") {
            let pointer = reader.pointer("offsets")
            let numbers = items.compactMap(\.numberValue)
            if numbers.count != items.count {
                diagnostics.malformed(pointer, "must be an array of numbers")
                failed = true
            } else if values != nil, numbers.count != count {
                diagnostics.invalid(pointer, "must hold one offset per keyframe (\(count)), not \(numbers.count)")
                failed = true
            } else if numbers.first != 0 || numbers.last != 1 {
                diagnostics.invalid(pointer, "must start at 0 and end at 1")
                failed = true
            } else if let bad = zip(numbers, numbers.dropFirst()).enumerated().first(where: { $0.element.1 < $0.element.0 }) {
                diagnostics.invalid(JSONPointer.appending(pointer, bad.offset + 1), "offsets must not decrease (\(format(bad.element.1)) after \(format(bad.element.0)))")
                failed = true
            } else {
                offsets = numbers
            }
        } else if offsetsGiven {
            failed = true
        } else if count >= 2 {
            offsets = (0..<count).map { Double($0) / Double(count - 1) }
            offsets[count - 1] = 1
        }

        var easings = [Easing?](repeating: nil, count: max(0, count - 1))
        if let items = reader.array("easings") {
            let pointer = reader.pointer("easings")
            if hasEasing {
                diagnostics.invalid(pointer, "give either 'easing' (every segment) or 'easings' (one per segment), not both")
                failed = true
            } else if values != nil, items.count != count - 1 {
                diagnostics.invalid(pointer, "must hold one easing per segment (\(count - 1)), not \(items.count)")
                failed = true
            } else {
                for (index, item) in items.enumerated() {
                    guard let easing = Easing.decode(item, at: JSONPointer.appending(pointer, index), diagnostics) else {
                        failed = true
                        continue
                    }
                    if index < easings.count { easings[index] = easing }
                }
            }
        } else if easingsGiven {
            failed = true
        }
        guard !failed, let values else { return (nil, true) }
        return (TweenKeyframes(values: values, offsets: offsets, easings: easings), false)
    }

    /// A spring property's `keyframes` and `durations`.
    func decodeSpringKeyframes(_ reader: ObjectReader, _ diagnostics: Diagnostics) -> (SpringKeyframes?, failed: Bool) {
        guard reader.has("keyframes") else {
            if reader.has("durations") {
                _ = reader.value("durations")
                diagnostics.invalid(reader.pointer("durations"), "applies only with 'keyframes'")
                return (nil, true)
            }
            return (nil, false)
        }
        for key in ["from", "to"] where reader.has(key) {
            _ = reader.value(key)
            diagnostics.invalid(reader.pointer(key), "'keyframes' replaces 'from' and 'to'; give one or the other")
        }
        let values = decodeKeyframeValues(reader, diagnostics)
        var failed = values == nil || reader.has("from") || reader.has("to")
        var durations: [Double?]?
        if reader.has("durations") {
            let pointer = reader.pointer("durations")
            if let items = reader.array("durations") {
                let targets = (values?.count ?? 1) - 1
                // The last (to rest) may also be left out.
                if values != nil, items.count != targets, items.count != targets - 1 {
                    diagnostics.invalid(pointer, "must hold one duration per target after the first keyframe (\(targets); the last may be null or left out), not \(items.count)")
                    failed = true
                }
                var list: [Double?] = []
                for (index, item) in items.enumerated() {
                    let itemPointer = JSONPointer.appending(pointer, index)
                    switch item {
                    case .null where index == items.count - 1:
                        list.append(nil)
                    case .number(let n) where n > 0 && n <= ObjectReader.maximumTime:
                        list.append(n)
                    case .number(let n):
                        diagnostics.invalid(itemPointer, "must be positive and at most \(format(ObjectReader.maximumTime)) s, not \(format(n))")
                        failed = true
                    case .null:
                        // A null is a duration's type (the last may be one); where it stands is the problem.
                        diagnostics.invalid(itemPointer, "only the last duration may be null; this one must be a number of seconds")
                        failed = true
                    default:
                        diagnostics.malformed(itemPointer, "must be a number of seconds\(index == items.count - 1 ? " or null" : "") (only the last may be null)")
                        failed = true
                    }
                }
                if list.count == targets - 1 { list.append(nil) }
                durations = list
            } else {
                failed = true
            }
        }
        guard !failed, let values else { return (nil, true) }
        return (SpringKeyframes(values: values, durations: durations), false)
    }
}
