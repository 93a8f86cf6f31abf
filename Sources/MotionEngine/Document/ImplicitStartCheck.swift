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
        let index = ProviderIndex(providers, candidates: candidates.count)
        for candidate in candidates {
            if let missing = missingLeaf(candidate, target: target, providers: index) {
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
    private static func missingLeaf(_ candidate: Candidate, target: JSONObject, providers: ProviderIndex) -> PropertyPath? {
        let path = candidate.path
        // A `*` path is expanded against target by the decoder, which reports what it misses.
        if path.hasWildcard { return nil }
        if providers.overlaps(path) { return nil }
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

    /// The providers, to ask whether any is a candidate's path, a prefix or an extension of it.
    ///
    /// Every candidate was compared with every provider: 20,000 properties with `from` and
    /// 30,000 without (830 KB) took 16 s before the document's 422 for `max-properties`. Now
    /// the providers without `*` are a tree of their segments, walked once along the
    /// candidate's path; those with `*` (rare) are compared one by one, for at most
    /// `maxComparisons` candidate–provider pairs in all, beyond which they are taken to
    /// provide everything (the check stays conservative: the compiler still refuses a start
    /// value that is missing when it is needed).
    private struct ProviderIndex {
        final class Node {
            var children: [String: Node] = [:]
            /// A provider ends here.
            var ends = false
        }

        let root = Node()
        let wildcards: [PropertyPath]
        /// Wildcard providers are compared with every candidate only when the pairs are few.
        let compareWildcards: Bool
        static let maxComparisons = 1_000_000

        init(_ providers: [PropertyPath], candidates: Int) {
            var wildcards: [PropertyPath] = []
            for provider in providers {
                if provider.hasWildcard {
                    wildcards.append(provider)
                    continue
                }
                var node = root
                for segment in provider.segments {
                    let next = node.children[segment] ?? Node()
                    node.children[segment] = next
                    node = next
                }
                node.ends = true
            }
            self.wildcards = wildcards
            let (pairs, overflow) = wildcards.count.multipliedReportingOverflow(by: candidates)
            compareWildcards = !overflow && pairs <= Self.maxComparisons
        }

        /// Whether a provider is `path`, a prefix of it, or an extension of it.
        func overlaps(_ path: PropertyPath) -> Bool {
            if !wildcards.isEmpty {
                if !compareWildcards { return true }
                if wildcards.contains(where: { ImplicitStartCheck.overlaps($0, path) }) { return true }
            }
            var node = root
            for segment in path.segments {
                if node.ends { return true }
                guard let next = node.children[segment] else { return false }
                node = next
            }
            // The whole path is in the tree: a provider is the path or extends it.
            return true
        }
    }

    /// Whether one path is the other, or contains it.
    private static func overlaps(_ a: PropertyPath, _ b: PropertyPath) -> Bool {
        let n = min(a.segments.count, b.segments.count)
        return zip(a.segments.prefix(n), b.segments.prefix(n)).allSatisfy { $0 == $1 || $0 == "*" || $1 == "*" }
    }
}
