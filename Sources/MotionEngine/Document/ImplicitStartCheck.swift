/// Finds properties whose start value can come from nowhere, while the document is decoded,
/// so that they are reported together with every other problem (docs/README.md).
///
/// It works on the raw JSON, so nodes with other problems still take part, and it is
/// conservative: a property without `from` is reported only when its path is missing from
/// `target` and no motion anywhere in the document could provide it (an explicit `from` on
/// the same path, a prefix or an extension of it, a path node's output or rotation, or a
/// colour it is a component of). Everything subtler is left to the compiler, which resolves
/// start values in time order.
enum ImplicitStartCheck {
    /// A property without `from`; its pointer (`<node>/properties/<index>`) is written only
    /// when it is reported.
    private struct Candidate {
        var node: String
        var index: Int
        var path: PropertyPath
        var to: JSON?
    }

    static func run(motion: JSON, target: JSONObject, _ diagnostics: Diagnostics) {
        var providers: [PropertyPath] = []
        var candidates: [Candidate] = []
        collect(motion, at: "/motion", &providers, &candidates)
        for candidate in candidates {
            if let missing = missingLeaf(candidate, target: target, providers: providers) {
                let pointer = JSONPointer.appending(candidate.node + "/properties", candidate.index)
                diagnostics.invalid(pointer + "/path", "no value at '\(missing)' in target, and no 'from'")
            }
        }
    }

    private static func collect(_ node: JSON, at pointer: String, _ providers: inout [PropertyPath], _ candidates: inout [Candidate]) {
        guard case .object(let object) = node else { return }
        let type = object["type"]?.stringValue
        if type == "path" || type == "pathPhysics" {
            providers.append(object["output"]?.stringValue.flatMap(PropertyPath.init) ?? PropertyPath("position")!)
            if let rotation = object["rotation"]?.stringValue.flatMap(PropertyPath.init) { providers.append(rotation) }
        }
        for (index, item) in (object["properties"]?.arrayValue ?? []).enumerated() {
            guard case .object(let property) = item, let path = property["path"]?.stringValue.flatMap(PropertyPath.init) else { continue }
            // `keyframes` stand for from (the first, null = implicit) and to (the last).
            var from = property["from"], to = property["to"]
            if let keyframes = property["keyframes"]?.arrayValue {
                from = keyframes.first.flatMap { $0 == .null ? nil : $0 }
                to = keyframes.last
            }
            if from != nil {
                providers.append(path)
            } else {
                candidates.append(Candidate(node: pointer, index: index, path: path, to: to))
            }
        }
        // Called twice rather than looping over an array literal (an allocation a node).
        func collectChildren(_ key: String) {
            guard let items = object[key]?.arrayValue else { return }
            for (index, child) in items.enumerated() {
                collect(child, at: JSONPointer.appending(pointer + "/" + key, index), &providers, &candidates)
            }
        }
        collectChildren("children")
        collectChildren("steps")
    }

    /// The first leaf of the candidate that nothing can provide, if any.
    private static func missingLeaf(_ candidate: Candidate, target: JSONObject, providers: [PropertyPath]) -> PropertyPath? {
        let path = candidate.path
        // A `*` path is expanded against target by the decoder, which reports what it misses.
        if path.hasWildcard { return nil }
        if providers.contains(where: { overlaps($0, path) }) { return nil }
        if path.lookup(in: target) != nil { return nil }
        // A component of a colour (`tint.alpha`).
        if path.segments.count >= 2, let last = path.segments.last, Colour.components.contains(last),
           case .string? = PropertyPath(segments: Array(path.segments.dropLast())).lookup(in: target) {
            return nil
        }
        switch candidate.to {
        case .object?, .array?:
            for leaf in ValueShape.leaves(of: candidate.to!) {
                let leafPath = path.appending(contentsOf: leaf.relative)
                if leafPath.lookup(in: target) == nil { return leafPath }
            }
            return nil
        default:
            return path
        }
    }

    /// Whether one path is the other, or contains it.
    private static func overlaps(_ a: PropertyPath, _ b: PropertyPath) -> Bool {
        let n = min(a.segments.count, b.segments.count)
        return zip(a.segments.prefix(n), b.segments.prefix(n)).allSatisfy { $0 == $1 || $0 == "*" || $1 == "*" }
    }
}
