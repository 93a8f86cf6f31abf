/// A dotted path into `target` (`frame.x`, `layers.2.opacity`); numeric segments index arrays.
public struct PropertyPath: Sendable, Hashable, CustomStringConvertible {
    public let segments: [String]

    /// Most segments in a path: as deep as JSON nesting may go (`JSONParser.defaultMaxDepth`).
    /// Paths are walked and written recursively (and so are the values they create), so a
    /// path of 100,000 segments would overflow the stack.
    public static let maxSegments = 256

    /// Parses a dotted path; nil when it is empty, has an empty segment or more than
    /// `maxSegments` segments.
    public init?(_ text: String) {
        var dots = 0
        for byte in text.utf8 where byte == UInt8(ascii: ".") {
            dots += 1
            if dots >= Self.maxSegments { return nil }
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !text.isEmpty, !parts.contains(where: \.isEmpty) else { return nil }
        segments = parts
    }

    /// Why `text` is not a path (for a 422 message).
    public static func problem(_ text: String) -> String {
        let segments = text.utf8.reduce(1) { $0 + ($1 == UInt8(ascii: ".") ? 1 : 0) }
        if segments > maxSegments {
            return "a property path has at most \(maxSegments) segments, not \(segments)"
        }
        return "'\(text)' is not a property path: expected dot-separated, non-empty segments"
    }

    public init(segments: [String]) { self.segments = segments }

    public var description: String { segments.joined(separator: ".") }

    public func appending(_ segment: String) -> PropertyPath { PropertyPath(segments: segments + [segment]) }

    /// The value at this path in `root`, if there is one.
    public func lookup(in root: JSONObject) -> JSON? {
        lookup(inValue: .object(root))
    }

    /// The value at this path inside any JSON value (objects by key, arrays by index).
    public func lookup(inValue value: JSON) -> JSON? {
        var current = value
        for segment in segments {
            switch current {
            case .object(let object):
                guard let next = object[segment] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(segment), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }

    /// The first proper prefix of this path that blocks writing it into `root`: a number,
    /// string, boolean or null (nothing can live below it), or an array without that index.
    /// Nil when the path can be written (missing objects are created).
    public func blockingPrefix(in root: JSONObject) -> (prefix: PropertyPath, value: JSON)? {
        var current = JSON.object(root)
        for (index, segment) in segments.enumerated() {
            let prefix = PropertyPath(segments: Array(segments[..<index]))
            switch current {
            case .object(let object):
                guard let next = object[segment] else { return nil }
                current = next
            case .array(let items):
                guard let position = Int(segment), items.indices.contains(position) else { return (prefix, current) }
                current = items[position]
            default:
                return (prefix, current)
            }
        }
        return nil
    }

    /// Writes `value` at this path, creating objects for missing segments. Returns false when
    /// an existing non-container value or an out-of-range array index is in the way.
    @discardableResult
    public func assign(_ value: JSON, in root: inout JSONObject) -> Bool {
        var node = JSON.object(root)
        guard Self.assign(value, segments: segments[...], in: &node), case .object(let updated) = node else { return false }
        root = updated
        return true
    }

    private static func assign(_ value: JSON, segments: ArraySlice<String>, in node: inout JSON) -> Bool {
        guard let segment = segments.first else {
            node = value
            return true
        }
        let rest = segments.dropFirst()
        switch node {
        case .object(var object):
            var child = object[segment] ?? .object(JSONObject())
            guard assign(value, segments: rest, in: &child) else { return false }
            object[segment] = child
            node = .object(object)
            return true
        case .array(var items):
            guard let index = Int(segment), items.indices.contains(index) else { return false }
            guard assign(value, segments: rest, in: &items[index]) else { return false }
            node = .array(items)
            return true
        default:
            return false
        }
    }
}
