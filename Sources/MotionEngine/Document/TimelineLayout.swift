/// Where a `timeline` node places each of its children (docs/authoring.md): a position (`at`) per
/// child, the labels of the `labels` object, and the labels children give their own start.
public struct TimelineLayout: Sendable {
    /// What a position is measured from.
    public enum Anchor: Sendable, Equatable {
        /// The timeline's start (a number).
        case origin
        /// The end of the previous child (`>`, the default).
        case previousEnd
        /// The start of the previous child (`<`).
        case previousStart
        /// The end of everything placed so far (`+=x`, `-=x`).
        case everythingEnd
        /// A label's time.
        case label(String)
    }

    public struct Position: Sendable, Equatable {
        public var anchor: Anchor
        /// Seconds added to the anchor (negative for `-=`).
        public var offset: Double
    }

    /// One per child, in order.
    public var positions: [Position]
    /// The label a child gives its start (`label`), one per child.
    public var childLabels: [String?]
    /// The `labels` object: name → seconds from the timeline's start, in document order.
    public var labels: [(name: String, time: Double)]
    /// Each child's JSON pointer (problems found while placing name the child).
    public var childPointers: [String]

    /// Parses a position: a number, or one of the strings of docs/authoring.md. Nil (with `problem`
    /// set) when it is not one.
    static func parse(_ value: JSON) -> (position: Position?, problem: String?) {
        switch value {
        case .number(let n):
            guard n >= 0 else { return (nil, "a position must not be negative, not \(format(n))") }
            guard n <= ObjectReader.maximumTime else { return (nil, "must be at most 1e9 s, not \(format(n))") }
            return (Position(anchor: .origin, offset: n), nil)
        case .string(let text):
            var anchor: Anchor
            var rest: Substring
            if text.hasPrefix(">") {
                (anchor, rest) = (.previousEnd, text.dropFirst())
            } else if text.hasPrefix("<") {
                (anchor, rest) = (.previousStart, text.dropFirst())
            } else if text.hasPrefix("+=") || text.hasPrefix("-=") {
                (anchor, rest) = (.everythingEnd, Substring(text))
            } else {
                let plus = text.range(of: "+="), minus = text.range(of: "-=")
                let cut = [plus, minus].compactMap { $0 }.min { $0.lowerBound < $1.lowerBound }
                let name = cut.map { String(text[..<$0.lowerBound]) } ?? text
                guard !name.isEmpty else { return (nil, "'\(text)' is not a position") }
                anchor = .label(name)
                rest = cut.map { text[$0.lowerBound...] } ?? ""
            }
            if rest.isEmpty { return (Position(anchor: anchor, offset: 0), nil) }
            let sign: Double
            if rest.hasPrefix("+=") { sign = 1 } else if rest.hasPrefix("-=") { sign = -1 } else {
                return (nil, "'\(text)' is not a position: expected a number, '>', '<', '+=x', '-=x', '>+=x', '<-=x', 'label' or 'label+=x'")
            }
            let digits = String(rest.dropFirst(2))
            guard let x = DecimalText.decimal(digits), x >= 0, x <= ObjectReader.maximumTime else {
                return (nil, "'\(text)': the offset must be a number of seconds from 0 to 1e9")
            }
            return (Position(anchor: anchor, offset: sign * x), nil)
        default:
            return (nil, "must be a number of seconds or a position string, not \(value.typeDescription)")
        }
    }

    /// Decodes a timeline's placement: `labels` from `reader`, and each child's `at` and
    /// `label`, which are removed from the child objects (the node decoder sees the rest).
    /// Labels used before they are defined are reported here, naming the child.
    static func decode(_ reader: ObjectReader, children: inout [JSON], pointers: [String], _ diagnostics: Diagnostics) -> TimelineLayout {
        var labels: [(name: String, time: Double)] = []
        var defined = Set<String>()
        if let object = reader.object("labels") {
            for (name, _) in object.object.pairs {
                if let time = object.time(name) {
                    labels.append((name, time))
                    defined.insert(name)
                }
            }
            object.finish()
        }
        var positions: [Position] = []
        var childLabels: [String?] = []
        for index in children.indices {
            guard case .object(var object) = children[index] else {
                positions.append(Position(anchor: .previousEnd, offset: 0))
                childLabels.append(nil)
                continue
            }
            var position = Position(anchor: .previousEnd, offset: 0)
            if let at = object["at"] {
                let (parsed, problem) = parse(at)
                if let problem {
                    if case .number = at { diagnostics.invalid(pointers[index] + "/at", problem) } else if case .string = at {
                        diagnostics.invalid(pointers[index] + "/at", problem)
                    } else {
                        diagnostics.malformed(pointers[index] + "/at", problem)
                    }
                } else if let parsed {
                    if case .label(let name) = parsed.anchor, !defined.contains(name) {
                        diagnostics.invalid(pointers[index] + "/at", "label '\(name)' is not defined by this child: define it in the timeline's 'labels' or as the 'label' of an earlier child")
                    }
                    position = parsed
                }
                object["at"] = nil
            }
            var label: String?
            if let value = object["label"] {
                if case .string(let name) = value, !name.isEmpty {
                    if defined.contains(name) {
                        diagnostics.invalid(pointers[index] + "/label", "label '\(name)' is already defined in this timeline")
                    } else if parse(.string(name)).position?.anchor != .label(name) || name.contains("+=") || name.contains("-=") {
                        diagnostics.invalid(pointers[index] + "/label", "'\(name)' cannot be a label: it reads as a position")
                    } else {
                        label = name
                        defined.insert(name)
                    }
                } else {
                    diagnostics.malformed(pointers[index] + "/label", "must be a non-empty string")
                }
                object["label"] = nil
            }
            positions.append(position)
            childLabels.append(label)
            children[index] = .object(object)
        }
        return TimelineLayout(positions: positions, childLabels: childLabels, labels: labels, childPointers: pointers)
    }
}

/// Number parsing shared by the engine's string forms.
enum DecimalText {
    /// A plain decimal number (`1`, `0.25`, `.5`); nil for anything else (no exponent, sign,
    /// `inf` or `nan`, which `Double(_:)` would accept).
    static func decimal(_ text: String) -> Double? {
        guard !text.isEmpty, text.utf8.count <= 32 else { return nil }
        var dots = 0, digits = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") { dots += 1 } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") { digits += 1 } else { return nil }
        }
        guard dots <= 1, digits > 0 else { return nil }
        return Double(text)
    }
}
