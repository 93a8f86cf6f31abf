/// A dotted path into `target` (`frame.x`, `layers.2.opacity`); numeric segments index arrays.
public struct PropertyPath: Sendable, Hashable, CustomStringConvertible {
    public let segments: [String]

    /// Most segments in a path: as deep as JSON nesting may go (`JSONParser.defaultMaxDepth`).
    /// Paths are walked and written recursively (and so are the values they create), so a
    /// path of 100,000 segments would overflow the stack.
    public static let maxSegments = 256

    /// Parses a dotted path; nil when it is empty, has an empty segment or more than
    /// `maxSegments` segments.
    ///
    /// ASCII text (nearly every path) is split on its bytes; other text by `Character`, as
    /// always (a `.` followed by a combining mark is one character, not a separator). The
    /// `Character` split cost about 2,700 instructions for `p0`; the byte path about 300
    /// (100-track request, callgrind: 403 → 396 instructions a sample).
    public init?(_ text: String) {
        guard !text.isEmpty else { return nil }
        var dots = 0
        var ascii = true
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                dots += 1
                if dots >= Self.maxSegments { return nil }
            } else if byte >= 0x80 {
                ascii = false
            }
        }
        let parts: [String]
        if dots == 0 {
            parts = [text]
        } else if ascii {
            parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { String(Substring($0)) }
        } else {
            parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        }
        guard !parts.contains(where: \.isEmpty) else { return nil }
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

    /// The dotted text. A one-segment path (most of them) is its segment, without `joined`'s
    /// generic walk. (With `appending(contentsOf:)` for a scalar's empty relative path, the
    /// small document of `make bench-instructions`: 190,846 → 188,976 instructions a request.)
    public var description: String { segments.count == 1 ? segments[0] : segments.joined(separator: ".") }

    /// This path followed by `relative` (itself when `relative` is empty: no new array).
    public func appending(contentsOf relative: [String]) -> PropertyPath {
        relative.isEmpty ? self : PropertyPath(segments: segments + relative)
    }

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
            // Built only for the answer (an array a segment on every call cost ~300 instructions).
            var prefix: PropertyPath { PropertyPath(segments: Array(segments[..<index])) }
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
        root = JSONObject() // `node` holds the only reference: written in place, not copied
        let written = Self.assign(value, segments: segments[...], in: &node)
        if case .object(let updated) = node { root = updated }
        return written
    }

    /// Writes `value` at `segments` below `node`; when that fails (false), `node` is left as
    /// it was. Each container is taken out of its parent while it is written (the parent
    /// holds `.null` meanwhile) so that it is the only reference to its storage and is
    /// updated in place (`JSON.takeObject`): assigning 100 properties into one object used
    /// to copy the object's pairs and hash index on every assignment, quadratic in the
    /// properties (100-track request, callgrind: 494 → 468 instructions a sample, the
    /// `final` document at 18,000 instructions a property before).
    private static func assign(_ value: JSON, segments: ArraySlice<String>, in node: inout JSON) -> Bool {
        guard let segment = segments.first else {
            node = value
            return true
        }
        let rest = segments.dropFirst()
        if var object = node.takeObject() {
            defer { node = .object(object) }
            // The key looked up once (hashed, past 16 keys): three lookups a property cost
            // about 800 instructions more.
            if let position = object.position(of: segment) {
                var child = object.takeValue(at: position)
                let written = assign(value, segments: rest, in: &child)
                object.setValue(child, at: position)
                return written
            }
            var child = JSON.object(JSONObject())
            guard assign(value, segments: rest, in: &child) else { return false }
            object.appendNew(segment, child)
            return true
        }
        if var items = node.takeArray() {
            defer { node = .array(items) }
            guard let index = Int(segment), items.indices.contains(index) else { return false }
            return assign(value, segments: rest, in: &items[index])
        }
        return false
    }
}
