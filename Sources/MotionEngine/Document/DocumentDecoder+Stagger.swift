/// Wildcard paths and `stagger` (docs/authoring.md), applied to nodes once they are decoded: a `*`
/// path becomes one property per element, and a stagger becomes start offsets (a tween's
/// per-property delays, a group's or timeline's child delays; a staggered physics, spring or
/// decay node becomes a group of one node per property).
extension DocumentDecoder {
    /// Replaces every property whose path has a `*` segment by one property per match, in
    /// document order. The extra properties count toward `max-properties` before any is made.
    func expandWildcards<P: PathProperty>(_ properties: [P], _ context: inout NodeContext, _ diagnostics: Diagnostics) -> [P]? {
        guard properties.contains(where: { $0.path.hasWildcard }) else { return properties }
        var result: [P] = []
        for property in properties {
            guard property.path.hasWildcard else {
                result.append(property)
                continue
            }
            let room = max(0, limits.maxProperties - context.propertyCount)
            var count = 0
            let walked = property.path.forEachExpansion(in: context.target, visits: &context.wildcardVisits) { _ in
                count += 1
                return count <= room + 1
            }
            guard walked else {
                diagnostics.invalid(property.pointer + "/path", "'\(property.path)' takes the document's '*' paths over \(limits.wildcardVisits) entries of target walked (\(EngineLimits.wildcardVisitsPerProperty) for each of max-properties): give fewer '*' paths, or a target with fewer entries to walk where they do not match")
                return nil
            }
            if count == 0 {
                diagnostics.invalid(property.pointer + "/path", "'\(property.path)' matches nothing in target: a '*' needs a non-empty array or object at that point")
                return nil
            }
            // The property itself was counted once already.
            context.propertyCount += count - 1
            if context.propertyCount > limits.maxProperties {
                diagnostics.invalid(property.pointer + "/path", "'\(property.path)' expands to more than \(limits.maxProperties) properties in the document (limit max-properties)")
                return nil
            }
            // The same walk again (its visits were counted by the first).
            var again = Int.max
            _ = property.path.forEachExpansion(in: context.target, visits: &again) { path in
                var copy = property
                copy.path = path
                result.append(copy)
                return true
            }
        }
        return result
    }

    /// Reads a node's `stagger`, if any.
    func staggerField(_ reader: ObjectReader, _ diagnostics: Diagnostics) -> Stagger?? {
        guard let object = reader.object("stagger") else { return reader.has("stagger") ? .some(nil) : nil }
        return .some(Stagger.decode(object, diagnostics))
    }

    /// Expands a property node's wildcards and applies its stagger.
    func authoring(_ node: MotionNode, stagger: Stagger??, _ context: inout NodeContext, _ diagnostics: Diagnostics) -> MotionNode? {
        // Built only for a node with a stagger (it is needed for its problems only).
        let pointer = stagger == nil ? "" : node.header.pointer + "/stagger"
        switch node {
        case .tween(var tween):
            guard let properties = expandWildcards(tween.properties, &context, diagnostics) else { return nil }
            tween.properties = properties
            if case .some(let stagger) = stagger {
                guard let stagger, let offsets = stagger.offsets(count: properties.count, at: pointer, diagnostics) else { return nil }
                for index in tween.properties.indices {
                    tween.properties[index].delay = (tween.properties[index].delay ?? tween.header.timing.delay) + offsets[index]
                }
            }
            return .tween(tween)
        case .physics(var dynamic):
            guard let properties = expandWildcards(dynamic.properties, &context, diagnostics) else { return nil }
            dynamic.properties = properties
            return split(.physics(dynamic), properties.count, stagger: stagger, at: pointer, &context, diagnostics) { header, property in
                var copy = dynamic
                (copy.header, copy.properties) = (header, [property])
                return .physics(copy)
            }
        case .spring(var dynamic):
            guard let properties = expandWildcards(dynamic.properties, &context, diagnostics) else { return nil }
            dynamic.properties = properties
            return split(.spring(dynamic), properties.count, stagger: stagger, at: pointer, &context, diagnostics) { header, property in
                var copy = dynamic
                (copy.header, copy.properties) = (header, [property])
                return .spring(copy)
            }
        case .decay(var dynamic):
            guard let properties = expandWildcards(dynamic.properties, &context, diagnostics) else { return nil }
            dynamic.properties = properties
            return split(.decay(dynamic), properties.count, stagger: stagger, at: pointer, &context, diagnostics) { header, property in
                var copy = dynamic
                (copy.header, copy.properties) = (header, [property])
                return .decay(copy)
            }
        case .group(var group):
            if case .some(let stagger) = stagger {
                guard let stagger, let offsets = stagger.offsets(count: group.children.count, at: pointer, diagnostics) else { return nil }
                for index in group.children.indices { group.children[index].addDelay(offsets[index]) }
            }
            return .group(group)
        default:
            return node
        }
    }

    /// A staggered physics, spring or decay node: a group with the node's id and timing
    /// whose children are the node with one property each (ids `<id>/<i>`), each starting
    /// its stagger offset after the group. Unstaggered nodes are returned as they are.
    private func split(_ node: MotionNode, _ count: Int, stagger: Stagger??, at pointer: String, _ context: inout NodeContext,
                       _ diagnostics: Diagnostics, make: (NodeHeader, DynamicProperty) -> MotionNode) -> MotionNode? {
        guard case .some(let stagger) = stagger else { return node }
        guard let stagger, let offsets = stagger.offsets(count: count, at: pointer, diagnostics) else { return nil }
        let properties: [DynamicProperty]
        switch node {
        case .physics(let n): properties = n.properties
        case .spring(let n): properties = n.properties
        case .decay(let n): properties = n.properties
        default: return node
        }
        var header = node.header
        var childTiming = header.timing
        header.timing = NodeTiming(delay: childTiming.delay)
        childTiming.delay = 0
        var children: [MotionNode] = []
        for (index, property) in properties.enumerated() {
            var timing = childTiming
            timing.delay = offsets[index]
            let child = NodeHeader(id: "\(header.id)/\(index)", pointer: property.pointer, order: context.nextOrder, timing: timing)
            context.nextOrder += 1
            children.append(make(child, property))
        }
        return .group(GroupNode(header: header, children: children, syncsChildren: false))
    }
}

/// A `properties` entry with a path (tween, physics, spring, decay).
protocol PathProperty {
    var path: PropertyPath { get set }
    var pointer: String { get }
}

extension TweenProperty: PathProperty {}
extension DynamicProperty: PathProperty {}

extension MotionNode {
    /// Adds seconds to the node's delay (a stagger offset).
    mutating func addDelay(_ seconds: Double) {
        guard seconds != 0 else { return }
        switch self {
        case .tween(var n):
            n.header.timing.delay += seconds
            // Per-property delays replace the node's: they move too.
            for index in n.properties.indices where n.properties[index].delay != nil { n.properties[index].delay! += seconds }
            self = .tween(n)
        case .physics(var n): n.header.timing.delay += seconds; self = .physics(n)
        case .spring(var n): n.header.timing.delay += seconds; self = .spring(n)
        case .decay(var n): n.header.timing.delay += seconds; self = .decay(n)
        case .path(var n): n.header.timing.delay += seconds; self = .path(n)
        case .group(var n): n.header.timing.delay += seconds; self = .group(n)
        case .sequence(var n): n.header.timing.delay += seconds; self = .sequence(n)
        }
    }
}

extension PropertyPath {
    /// Whether a segment is the wildcard `*`.
    public var hasWildcard: Bool { segments.contains("*") }

    /// Calls `body` with every concrete path this path matches in `root`: a `*` segment runs
    /// over the indices of an array or the keys of an object (document order); other
    /// segments are kept as they are. Stops when `body` returns false.
    ///
    /// Each entry of `root` the walk reaches is taken from `visits` (matching or not: `a.*.x`
    /// walks every element of `a`); false when they ran out before the walk ended, so that
    /// the walks of a document are bounded together, not each by what it matches (2,500
    /// properties `a.*.*` over 390,000 elements took 31 s).
    public func forEachExpansion(in root: JSONObject, visits: inout Int, _ body: (PropertyPath) -> Bool) -> Bool {
        // The walk's place, one step a segment: a `*`'s array index is kept as a number and
        // written as a path segment only for a match. Made into a `String` at every element
        // visited, it was 31 % of the decoder's time for `a.*.*` over 390,000 elements (perf).
        // Steps are assigned in place (no append and remove a visit), and which segments are
        // `*` is found once. That document's 422 took 1.35 s on the release build, now 0.28 s;
        // 5.9 s on the debug build, now 2.0 s (the abuse suite's `compile-work` allows 5).
        enum Step { case name(String), index(Int) }
        var prefix = segments.map { Step.name($0) }
        let wildcard = segments.map { $0 == "*" }
        let positions = segments.map { Int($0) }  // each segment as an array index, if it is one
        var exhausted = false
        func walk(_ node: JSON?, _ index: Int) -> Bool {
            guard visits > 0 else {
                exhausted = true
                return false
            }
            visits -= 1
            guard index < segments.count else {
                return body(PropertyPath(segments: prefix.map { step in
                    switch step {
                    case .name(let name): return name
                    case .index(let position): return String(position)
                    }
                }))
            }
            if wildcard[index] {
                switch node {
                case .array(let items)?:
                    for position in items.indices {
                        prefix[index] = .index(position)
                        if !walk(items[position], index + 1) { return false }
                    }
                case .object(let object)?:
                    for pair in object.pairs {
                        prefix[index] = .name(pair.key)
                        if !walk(pair.value, index + 1) { return false }
                    }
                default:
                    break
                }
                return true
            }
            let next: JSON?
            switch node {
            case .object(let object)?: next = object[segments[index]]
            case .array(let items)?: next = positions[index].flatMap { items.indices.contains($0) ? items[$0] : nil }
            default: next = nil
            }
            return walk(next, index + 1)
        }
        _ = walk(.object(root), 0)
        return !exhausted
    }
}

extension DocumentDecoder {
    /// Parses a request body as JSON; a malformed body is the 400 `decode(_:)` gives.
    public static func parse(_ body: [UInt8]) throws(DocumentError) -> JSON {
        do {
            return try JSONParser.parse(body)
        } catch {
            throw DocumentError([Problem(pointer: "", message: "malformed JSON at byte \(error.offset): \(error.message)", kind: .malformed)])
        }
    }
}
