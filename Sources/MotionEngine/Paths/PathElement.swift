/// A point of a path, in path units.
public struct PathPoint: Sendable, Equatable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    public init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }

    var isFinite: Bool { x.isFinite && y.isFinite }
}

/// One element of a path in absolute coordinates: the API's element-array form
/// (`{"op": "move" | "line" | "quad" | "cubic" | "close", …}`), and what SVG path data is
/// reduced to (relative, H/V, S/T and arc commands become these).
///
/// Each drawing element starts at the current point; `close` draws a line back to the start
/// of the current subpath, which becomes the current point.
public enum PathElement: Sendable, Equatable {
    case move(to: PathPoint)
    case line(to: PathPoint)
    case quad(control: PathPoint, to: PathPoint)
    case cubic(control1: PathPoint, control2: PathPoint, to: PathPoint)
    case close

    /// The `op` names of the wire form.
    static let opNames = ["move", "line", "quad", "cubic", "close"]

    /// The point fields each `op` takes, in wire order.
    static func fields(ofOp op: String) -> [String]? {
        switch op {
        case "move", "line": return ["to"]
        case "quad": return ["control", "to"]
        case "cubic": return ["control1", "control2", "to"]
        case "close": return []
        default: return nil
        }
    }

    var isMove: Bool {
        if case .move = self { return true }
        return false
    }

    /// Every coordinate is finite.
    var isFinite: Bool {
        switch self {
        case .move(let p), .line(let p): return p.isFinite
        case .quad(let c, let p): return c.isFinite && p.isFinite
        case .cubic(let c1, let c2, let p): return c1.isFinite && c2.isFinite && p.isFinite
        case .close: return true
        }
    }

    /// Decodes the element-array form at `pointer` (e.g. `/motion/path`).
    ///
    /// A non-object element, a missing or non-string `op`, a missing point field, a point that
    /// is not an array of numbers, or a field the `op` does not take is malformed (400, pointed
    /// at the field, e.g. `/motion/path/2/control1`). An empty array, an unknown `op`, a first
    /// element that is not a move, a point without exactly two coordinates or more than
    /// `maxSegments` elements is invalid (422). Returns nil after recording a problem.
    public static func decodeElements(_ json: [JSON], at pointer: String, _ diagnostics: Diagnostics,
                                      maxSegments: Int = PathGeometry.defaultMaxSegments) -> [PathElement]? {
        if json.isEmpty {
            diagnostics.invalid(pointer, "must contain at least one path element (a move)")
            return nil
        }
        if json.count > maxSegments {
            diagnostics.invalid(pointer, "has \(json.count) path elements; at most \(maxSegments) are allowed")
            return nil
        }
        var elements: [PathElement] = []
        elements.reserveCapacity(json.count)
        var failed = false
        for (index, item) in json.enumerated() {
            let itemPointer = JSONPointer.appending(pointer, index)
            if let element = decodeElement(item, at: itemPointer, isFirst: index == 0, diagnostics) {
                elements.append(element)
            } else {
                failed = true
            }
        }
        return failed ? nil : elements
    }

    private static func decodeElement(_ json: JSON, at pointer: String, isFirst: Bool, _ diagnostics: Diagnostics) -> PathElement? {
        guard let reader = ObjectReader.expecting(json, at: pointer, diagnostics) else { return nil }
        guard let op = reader.string("op", required: true) else {
            // Without a usable op the other fields cannot be judged; accept the known names.
            reader.accept("to", "control", "control1", "control2")
            reader.finish()
            return nil
        }
        guard let fields = fields(ofOp: op) else {
            diagnostics.invalid(reader.pointer("op"), "unknown path element op '\(op)'; expected one of \(opNames.map { "'\($0)'" }.joined(separator: ", "))")
            reader.accept("to", "control", "control1", "control2")
            reader.finish()
            return nil
        }
        var points: [PathPoint] = []
        var failed = false
        for field in fields {
            if let point = decodePoint(reader, field) { points.append(point) } else { failed = true }
        }
        reader.finish()
        if isFirst && op != "move" {
            diagnostics.invalid(reader.pointer("op"), "the first path element must be a 'move', not '\(op)'")
            return nil
        }
        if failed { return nil }
        switch op {
        case "move": return .move(to: points[0])
        case "line": return .line(to: points[0])
        case "quad": return .quad(control: points[0], to: points[1])
        case "cubic": return .cubic(control1: points[0], control2: points[1], to: points[2])
        default: return .close
        }
    }

    /// A required `[x, y]` field.
    private static func decodePoint(_ reader: ObjectReader, _ field: String) -> PathPoint? {
        guard let items = reader.array(field, required: true) else { return nil }
        let pointer = reader.pointer(field)
        var coordinates: [Double] = []
        var failed = false
        for (index, item) in items.enumerated() {
            guard case .number(let n) = item else {
                reader.diagnostics.malformed(JSONPointer.appending(pointer, index), "must be a number, not \(item.typeDescription)")
                failed = true
                continue
            }
            guard abs(n) <= ObjectReader.maximumMagnitude else {
                reader.diagnostics.invalid(JSONPointer.appending(pointer, index), "must be within ±1e15, not \(format(n))")
                failed = true
                continue
            }
            coordinates.append(n)
        }
        if failed { return nil }
        guard coordinates.count == 2 else {
            reader.diagnostics.invalid(pointer, "must have exactly 2 coordinates [x, y], not \(coordinates.count)")
            return nil
        }
        return PathPoint(coordinates[0], coordinates[1])
    }
}

extension PathElement {
    /// Decodes a `path` field (docs/nodes.md#path-and-pathphysics) into a measured path: SVG path data (a string) or the
    /// element-array form.
    ///
    /// A value of another JSON type is malformed (400). A syntax error in path data is invalid
    /// (422) with the message `invalid path data at character N: expected …` (N counts
    /// characters from 0); element-array problems are reported as in
    /// `PathElement.decodeElements`. Returns nil after recording a problem.
    public static func decode(_ json: JSON, at pointer: String, _ diagnostics: Diagnostics,
                              maxSegments: Int = PathGeometry.defaultMaxSegments, maxCharge: Int = .max) -> PathGeometry? {
        switch json {
        case .string(let text):
            do {
                return try PathGeometry(svg: text, maxSegments: maxSegments, maxCharge: maxCharge)
            } catch {
                diagnostics.invalid(pointer, "invalid path data at character \(error.offset): \(error.message)")
                return nil
            }
        case .array(let items):
            guard let elements = PathElement.decodeElements(items, at: pointer, diagnostics, maxSegments: maxSegments) else { return nil }
            do {
                return try PathGeometry(elements: elements, maxCharge: maxCharge)
            } catch {
                diagnostics.invalid(JSONPointer.appending(pointer, error.index), error.message)
                return nil
            }
        default:
            diagnostics.malformed(pointer, "must be SVG path data (a string) or an array of path elements, not \(json.typeDescription)")
            return nil
        }
    }
}
