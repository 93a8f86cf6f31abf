/// Decodes and validates a timeline document, reporting every problem at once.
public struct DocumentDecoder: Sendable {
    public var limits: EngineLimits

    public init(limits: EngineLimits = .default) { self.limits = limits }

    /// Node types the contract names that this build does not compute yet.
    static let nodeTypes = ["tween", "physics", "spring", "decay", "path", "pathPhysics", "group", "sequence", "timeline"]

    /// Parses and decodes a request body.
    public func decode(_ body: [UInt8]) throws(DocumentError) -> TimelineDocument {
        let json: JSON
        do {
            json = try JSONParser.parse(body)
        } catch {
            throw DocumentError([Problem(pointer: "", message: "malformed JSON at byte \(error.offset): \(error.message)", kind: .malformed)])
        }
        return try decode(json)
    }

    public func decode(_ json: JSON) throws(DocumentError) -> TimelineDocument {
        let diagnostics = Diagnostics()
        let document = decode(json, diagnostics)
        try diagnostics.check()
        guard let document else {
            throw DocumentError([Problem(pointer: "", message: "invalid document", kind: .malformed)])
        }
        return document
    }

    func decode(_ json: JSON, _ diagnostics: Diagnostics) -> TimelineDocument? {
        guard let root = ObjectReader.expecting(json, at: "", diagnostics) else { return nil }

        var fps = 60.0
        if let value = root.number("fps") {
            let maximum = min(1000, limits.maxFPS)
            if value < 1 || value > 1000 {
                diagnostics.invalid(root.pointer("fps"), "must be between 1 and 1000, not \(format(value))")
            } else if value > maximum {
                diagnostics.invalid(root.pointer("fps"), "exceeds the fps limit of \(format(maximum)) (max-fps)")
            } else {
                fps = value
            }
        }

        let target = root.object("target")?.consumeAll() ?? JSONObject()
        let specs = root.object("specs")?.consumeAll() ?? JSONObject()

        var window: TimeWindow?
        if let reader = root.object("window") {
            let start = reader.time("start", required: true)
            let end = reader.time("end", required: true)
            reader.finish()
            if let start, let end {
                if start < 0 {
                    diagnostics.invalid(reader.pointer("start"), "must not be negative")
                } else if end < start {
                    diagnostics.invalid(reader.pointer("end"), "must not be before window.start (\(format(start)))")
                } else {
                    window = TimeWindow(start: start, end: end)
                }
            }
        }

        var output = OutputOptions()
        if let reader = root.object("output") {
            if let layout = reader.string("layout") {
                if let value = OutputOptions.Layout(rawValue: layout) {
                    output.layout = value
                } else {
                    diagnostics.invalid(reader.pointer("layout"), "unknown layout '\(layout)'; expected 'tracks' or 'frames'")
                }
            }
            output.events = reader.bool("events") ?? true
            output.final = reader.bool("final") ?? true
            output.schedule = reader.bool("schedule") ?? false
            decodeFormats(reader, into: &output, diagnostics)
            reader.finish()
        }

        var context = NodeContext(specs: specs, target: target, wildcardVisits: limits.wildcardVisits)
        var motion: MotionNode?
        if let value = root.value("motion", required: true) {
            motion = decodeNode(value, at: "/motion", depth: 0, &context, diagnostics)
            ImplicitStartCheck.run(motion: value, target: target, diagnostics)
        }
        root.finish()

        guard let motion else { return nil }
        return TimelineDocument(fps: fps, target: target, specs: specs, motion: motion, window: window, output: output,
                                pathSegments: context.pathSegments)
    }

    // MARK: - Nodes

    /// Running state while the node tree is decoded.
    struct NodeContext {
        /// The document's `specs` tree, for `timing` names.
        var specs = JSONObject()
        /// The document's `target`, for wildcard paths.
        var target = JSONObject()
        /// Pre-order counter.
        var nextOrder = 0
        var propertyCount = 0
        /// What the document's paths have charged to `max-segments` (`chargePath`), and
        /// whether they went over.
        var pathSegments = 0
        var pathsOverBudget = false
        /// Entries of `target` the document's `*` paths may still walk (`expandWildcards`).
        var wildcardVisits = Int.max
    }

    /// Decodes one node. `depth` counts the groups and sequences around it.
    func decodeNode(_ json: JSON, at pointer: String, depth: Int, _ context: inout NodeContext, _ diagnostics: Diagnostics) -> MotionNode? {
        guard let reader = ObjectReader.expecting(json, at: pointer, diagnostics) else { return nil }
        guard let type = reader.string("type", required: true) else {
            reader.acceptAll()
            return nil
        }
        // Two literal checks rather than a loop over an array literal (one allocation a node).
        func refuseTimelineField(_ key: String) {
            guard reader.has(key) else { return }
            reader.accept(key)
            diagnostics.invalid(reader.pointer(key), "'\(key)' applies only to a child of a timeline")
        }
        refuseTimelineField("at")
        refuseTimelineField("label")
        switch type {
        case "tween":
            let stagger = staggerField(reader, diagnostics)
            return decodeTween(reader, &context, diagnostics).flatMap { authoring(.tween($0), stagger: stagger, &context, diagnostics) }
        case "physics", "spring", "decay":
            let stagger = staggerField(reader, diagnostics)
            let header = decodeHeader(reader, &context, diagnostics)
            if reader.value("timing") != nil {
                diagnostics.invalid(reader.pointer("timing"), "'timing' (a motion spec) applies to tweens only")
            }
            return decodeDynamic(type, header, reader, &context, diagnostics).flatMap { authoring($0, stagger: stagger, &context, diagnostics) }
        case "path", "pathPhysics":
            let header = decodeHeader(reader, &context, diagnostics)
            if reader.value("timing") != nil {
                diagnostics.invalid(reader.pointer("timing"), "'timing' (a motion spec) applies to tweens only")
            }
            return decodePathNode(type, header, reader, &context, diagnostics).map(MotionNode.path)
        case "group", "sequence", "timeline":
            guard depth < limits.maxDepth else {
                reader.acceptAll()
                diagnostics.invalid(pointer, "groups and sequences nest deeper than \(limits.maxDepth) levels (max-depth)")
                return nil
            }
            let header = decodeHeader(reader, &context, diagnostics)
            if reader.value("timing") != nil {
                diagnostics.invalid(reader.pointer("timing"), "'timing' (a motion spec) applies to tweens only")
            }
            let key = type == "sequence" ? "steps" : "children"
            var children: [MotionNode] = []
            var complete = true
            let stagger = type == "sequence" ? nil : staggerField(reader, diagnostics)
            var layout: TimelineLayout?
            if var items = reader.array(key, required: true) {
                if type == "timeline" {
                    let pointers = items.indices.map { JSONPointer.appending(reader.pointer(key), $0) }
                    layout = TimelineLayout.decode(reader, children: &items, pointers: pointers, diagnostics)
                }
                if items.isEmpty { diagnostics.invalid(reader.pointer(key), "must hold at least one node") }
                for (index, item) in items.enumerated() {
                    if let child = decodeNode(item, at: JSONPointer.appending(reader.pointer(key), index), depth: depth + 1, &context, diagnostics) {
                        children.append(child)
                    } else {
                        complete = false
                    }
                }
            } else {
                complete = false
            }
            if type == "group" || type == "timeline" {
                let syncs = type == "group" ? reader.bool("syncsChildren") ?? false : false
                if type == "timeline", layout == nil { _ = reader.object("labels") }
                reader.finish()
                guard complete else { return nil }
                return authoring(.group(GroupNode(header: header, children: children, syncsChildren: syncs, layout: layout)),
                                 stagger: stagger, &context, diagnostics)
            }
            var mode = SequenceNode.ReversingMode.sequential
            if let text = reader.string("reversingMode") {
                if let value = SequenceNode.ReversingMode(rawValue: text) {
                    mode = value
                } else {
                    diagnostics.invalid(reader.pointer("reversingMode"), "unknown reversing mode '\(text)'; expected 'sequential' or 'contiguous'")
                }
            }
            reader.finish()
            return complete ? .sequence(SequenceNode(header: header, steps: children, reversingMode: mode)) : nil
        default:
            reader.acceptAll()
            diagnostics.invalid(reader.pointer("type"), "unknown node type '\(type)'; expected one of \(Self.nodeTypes.joined(separator: ", "))")
            return nil
        }
    }

    /// The fields every node shares: `id`, `delay`, `repeat`, `reverses`, `repeatDelay`.
    func decodeHeader(_ reader: ObjectReader, _ context: inout NodeContext, _ diagnostics: Diagnostics) -> NodeHeader {
        var timing = NodeTiming()
        let id = reader.string("id") ?? reader.pointer
        if let delay = reader.time("delay") { timing.delay = delay }
        if let value = reader.value("repeat") {
            switch value {
            case .string("infinite"):
                timing.repetition = .infinite
            case .number(let n) where n == n.rounded() && abs(n) < 9e15:
                if n < 0 {
                    diagnostics.invalid(reader.pointer("repeat"), "must not be negative")
                } else {
                    timing.repetition = .count(Int(n))
                }
            default:
                diagnostics.malformed(reader.pointer("repeat"), "must be an integer ≥ 0 or \"infinite\", not \(describe(value))")
            }
        }
        if let reverses = reader.bool("reverses") { timing.reverses = reverses }
        if let repeatDelay = reader.time("repeatDelay") { timing.repeatDelay = repeatDelay }
        defer { context.nextOrder += 1 }
        return NodeHeader(id: id, pointer: reader.pointer, order: context.nextOrder, timing: timing)
    }

    func decodeTween(_ reader: ObjectReader, _ context: inout NodeContext, _ diagnostics: Diagnostics) -> TweenNode? {
        var header = decodeHeader(reader, &context, diagnostics)
        var duration = reader.time("duration")
        var durationGiven = reader.has("duration")
        var easing = reader.value("easing").flatMap { Easing.decode($0, at: reader.pointer("easing"), diagnostics) }
        var springTiming: MotionSpec?
        if let timing = reader.value("timing") {
            durationGiven = true
            let replaced = ["delay", "duration", "easing", "repeat", "reverses"].filter(reader.has)
            if !replaced.isEmpty {
                diagnostics.invalid(reader.pointer("timing"), "'timing' replaces delay, duration, easing, repeat and reverses; remove \(replaced.map { "'\($0)'" }.joined(separator: ", ")) or 'timing'")
            } else if let spec = MotionSpec.resolve(timing, at: reader.pointer("timing"), specs: context.specs, diagnostics) {
                header.timing = spec.timing(repeatDelay: header.timing.repeatDelay)
                if case .spring = spec.curve { springTiming = spec }
                duration = spec.duration
                durationGiven = true
                easing = spec.easing
            } else {
                durationGiven = true
            }
        }
        let reverseEasing = reader.value("reverseEasing").flatMap { Easing.decode($0, at: reader.pointer("reverseEasing"), diagnostics) }
        let additiveWeight = decodeAdditive(reader, diagnostics)

        var properties: [TweenProperty] = []
        var overLimit = false
        if let items = propertyItems(reader, &context, &overLimit, diagnostics) {
            let base = reader.pointer("properties")
            for (index, item) in items.enumerated() {
                let pointer = JSONPointer.appending(base, index)
                if let property = decodeTweenProperty(item, at: pointer, diagnostics) { properties.append(property) }
            }
            if !durationGiven, !items.isEmpty, properties.count == items.count, properties.contains(where: { $0.duration == nil }) {
                diagnostics.malformed(reader.pointer("duration"), "is required unless every property has its own duration")
            }
        }
        if overLimit { return nil }
        if springTiming != nil, let keyed = properties.first(where: { $0.keyframes != nil }) {
            diagnostics.invalid(keyed.pointer + "/keyframes", "keyframes do not combine with a timing whose curve is a spring (its duration comes from the spring)")
        }
        reader.finish()
        return TweenNode(header: header, duration: duration, easing: easing ?? .linear,
                         reverseEasing: reverseEasing, properties: properties, additiveWeight: additiveWeight,
                         springTiming: springTiming)
    }

    func decodeTweenProperty(_ json: JSON, at pointer: String, _ diagnostics: Diagnostics) -> TweenProperty? {
        guard let reader = ObjectReader.expecting(json, at: pointer, diagnostics) else { return nil }
        defer { reader.finish() }
        let path = decodePath(reader, diagnostics)
        let (keyframes, keyframesFailed) = decodeTweenKeyframes(reader, hasEasing: reader.has("easing"), diagnostics)
        var from = keyframes == nil ? reader.value("from") : nil
        var to = keyframes == nil ? reader.value("to", required: !keyframesFailed) : nil
        if let from { checkValueType(from, at: reader, "from", diagnostics) }
        if let to { checkValueType(to, at: reader, "to", diagnostics) }
        if let keyframes {
            from = keyframes.values.first!
            to = keyframes.values.last!
        }
        let easing = reader.value("easing").flatMap { Easing.decode($0, at: reader.pointer("easing"), diagnostics) }
        let duration = reader.time("duration")
        let delay = reader.time("delay")
        let bounds = reader.object("bounds").flatMap { Bounds.decode($0, diagnostics) }
        guard let path, let to, !keyframesFailed else { return nil }
        return TweenProperty(pointer: pointer, path: path, from: from, to: to, easing: easing, duration: duration, delay: delay, bounds: bounds,
                             keyframes: keyframes)
    }

    func decodePath(_ reader: ObjectReader, _ diagnostics: Diagnostics) -> PropertyPath? {
        guard let text = reader.string("path", required: true) else { return nil }
        guard let path = PropertyPath(text) else {
            diagnostics.invalid(reader.pointer("path"), PropertyPath.problem(text))
            return nil
        }
        return path
    }

    /// The physics, spring and decay nodes (docs/README.md–3.4).
    func decodeDynamic(_ type: String, _ header: NodeHeader, _ reader: ObjectReader, _ context: inout NodeContext,
                       _ diagnostics: Diagnostics) -> MotionNode? {
        let additiveWeight = decodeAdditive(reader, diagnostics)
        var properties: [DynamicProperty] = []
        var complete = true
        var overLimit = false
        if let items = propertyItems(reader, &context, &overLimit, diagnostics) {
            let base = reader.pointer("properties")
            for (index, item) in items.enumerated() {
                let pointer = JSONPointer.appending(base, index)
                guard let property = ObjectReader.expecting(item, at: pointer, diagnostics) else { complete = false; continue }
                let path = decodePath(property, diagnostics)
                let (keyframes, keyframesFailed) = type == "spring" ? decodeSpringKeyframes(property, diagnostics) : (nil, false)
                var from = keyframes == nil ? property.value("from") : nil
                var to = keyframes == nil ? property.value("to", required: type == "spring" && !keyframesFailed) : nil
                if let from { checkValueType(from, at: property, "from", diagnostics) }
                if let to { checkValueType(to, at: property, "to", diagnostics) }
                if let keyframes {
                    from = keyframes.values.first!
                    to = keyframes.values.last!
                }
                let velocity = type == "spring" ? property.bounded("velocity") : nil
                let bounds = property.object("bounds").flatMap { Bounds.decode($0, diagnostics) }
                property.finish()
                guard let path, !keyframesFailed else { complete = false; continue }
                properties.append(DynamicProperty(pointer: pointer, path: path, from: from, to: to, velocity: velocity, bounds: bounds,
                                                  keyframes: keyframes))
            }
        } else {
            complete = false
        }
        if overLimit { return nil }

        switch type {
        case "physics":
            let law = decodePhysicsLaw(reader, defaultRestitution: PhysicsKernel.defaultRestitution, diagnostics)
            let collisions = reader.bool("collisions") ?? false
            reader.finish()
            guard complete, let law else { return nil }
            return .physics(PhysicsNode(header: header, properties: properties, velocity: law.velocity, friction: law.friction,
                                        restitution: law.restitution, collisions: collisions, restVelocity: law.restVelocity,
                                        additiveWeight: additiveWeight))
        case "spring":
            let parameters = SpringParameters.decode(from: reader, diagnostics, allowsUndamped: true)
            let velocity = reader.bounded("velocity") ?? 0
            let restDelta = positive(reader, "restDelta", diagnostics) ?? 0.01
            let restSpeed = positive(reader, "restSpeed", diagnostics) ?? 0.01
            let stopAtTarget = reader.bool("stopAtTarget") ?? false
            if stopAtTarget, let keyed = properties.first(where: { $0.keyframes != nil }) {
                diagnostics.invalid(reader.pointer("stopAtTarget"), "does not combine with keyframes (\(keyed.pointer)/keyframes)")
            }
            var clamp: ClosedRange<Double>?
            if let items = reader.array("clamp") {
                let numbers = items.compactMap(\.numberValue)
                if numbers.count != 2 || items.count != 2 {
                    diagnostics.malformed(reader.pointer("clamp"), "must be two numbers [min, max]")
                } else if numbers[0] > numbers[1] {
                    diagnostics.invalid(reader.pointer("clamp"), "min must not be above max")
                } else {
                    clamp = numbers[0]...numbers[1]
                }
            }
            reader.finish()
            guard complete, let parameters else { return nil }
            return .spring(SpringNode(header: header, properties: properties, parameters: parameters, velocity: velocity,
                                      restDelta: restDelta, restSpeed: restSpeed, stopAtTarget: stopAtTarget,
                                      clamp: clamp, additiveWeight: additiveWeight))
        default:
            let velocity = reader.bounded("velocity")
            var decayConstant = DecayKernel.defaultDecayConstant
            if let value = reader.number("decayConstant") {
                if value > 0 && value < 1 { decayConstant = value } else {
                    diagnostics.invalid(reader.pointer("decayConstant"), "must be in (0, 1) (the velocity factor per millisecond), not \(format(value))")
                }
            }
            let roundingFactor = reader.nonNegative("roundingFactor") ?? DecayKernel.defaultRoundingFactor
            let restVelocity = positive(reader, "restVelocity", diagnostics) ?? DecayKernel.defaultRestVelocity
            if velocity == nil, properties.contains(where: { $0.to == nil }) {
                diagnostics.malformed(reader.pointer("velocity"), "is required unless every property has 'to'")
            }
            reader.finish()
            guard complete else { return nil }
            return .decay(DecayNode(header: header, properties: properties, velocity: velocity, decayConstant: decayConstant,
                                    roundingFactor: roundingFactor, restVelocity: restVelocity, additiveWeight: additiveWeight))
        }
    }

    /// `path` and `pathPhysics` (docs/nodes.md#path-and-pathphysics).
    func decodePathNode(_ type: String, _ header: NodeHeader, _ reader: ObjectReader, _ context: inout NodeContext,
                        _ diagnostics: Diagnostics) -> PathNode? {
        let geometry = reader.value("path", required: true).flatMap { value -> PathGeometry? in
            // Once the document's paths are over the budget, no other is built.
            guard !context.pathsOverBudget else { return nil }
            // Measuring stops once the path is over what the document has left.
            guard let geometry = PathElement.decode(value, at: reader.pointer("path"), diagnostics,
                                                    maxCharge: max(0, limits.maxSegments - context.pathSegments)) else { return nil }
            guard chargePath(geometry, at: reader.pointer("path"), &context, diagnostics) else { return nil }
            return geometry
        }
        func propertyPath(_ key: String) -> PropertyPath? {
            guard let text = reader.string(key) else { return nil }
            guard let path = PropertyPath(text) else {
                diagnostics.invalid(reader.pointer(key), PropertyPath.problem(text))
                return nil
            }
            return path
        }
        let output = propertyPath("output") ?? PropertyPath("position")!
        let rotation = propertyPath("rotation")
        let startPosition = reader.number("startPosition", in: 0...1) ?? 0
        let endPosition = reader.number("endPosition", in: 0...1) ?? 1
        var edgeBehavior = PathNode.EdgeBehavior.stopAtEdges
        if let text = reader.string("edgeBehavior") {
            if let value = PathNode.EdgeBehavior(rawValue: text) { edgeBehavior = value } else {
                diagnostics.invalid(reader.pointer("edgeBehavior"), "unknown edge behavior '\(text)'; expected 'stopAtEdges' or 'contiguousEdges'")
            }
        }
        let drive: PathNode.Drive?
        if type == "path" {
            let duration = reader.time("duration", required: true)
            let easing = reader.value("easing").flatMap { Easing.decode($0, at: reader.pointer("easing"), diagnostics) } ?? .linear
            let reverseEasing = reader.value("reverseEasing").flatMap { Easing.decode($0, at: reader.pointer("reverseEasing"), diagnostics) }
            drive = duration.map { .eased(duration: $0, easing: easing, reverseEasing: reverseEasing) }
        } else {
            drive = decodePhysicsLaw(reader, defaultRestitution: 0, diagnostics).map {
                .physics(velocity: $0.velocity, friction: $0.friction, restitution: $0.restitution, restVelocity: $0.restVelocity)
            }
        }
        reader.finish()
        guard let geometry, let drive else { return nil }
        return PathNode(header: header, geometry: geometry, output: output, rotation: rotation, startPosition: startPosition,
                        endPosition: endPosition, edgeBehavior: edgeBehavior, drive: drive)
    }

    /// Charges a path's measuring (`PathGeometry.charge`: its drawn segments,
    /// `PathGeometry.segmentWeight` each, or its curves' tables when larger) to the document's
    /// `max-segments` budget, which the compiler goes on spending (`TimelineDocument.pathSegments`).
    /// Each path is bounded on its own (`PathGeometry.defaultMaxSegments`), but the paths of a
    /// document were not: 150 path nodes of eccentric arcs in 945 KB made 15 million Bézier
    /// pieces, 18 s of measuring and 4.8 GB (release build). False, with a problem at
    /// `pointer`, when the document's paths go over.
    private func chargePath(_ geometry: PathGeometry, at pointer: String, _ context: inout NodeContext,
                            _ diagnostics: Diagnostics) -> Bool {
        guard let total = EngineLimits.segments(context.pathSegments, charging: geometry.charge,
                                                weight: 1, limit: limits.maxSegments) else {
            context.pathsOverBudget = true
            diagnostics.invalid(pointer, "takes the document over \(limits.maxSegments) curve segments (max-segments): each drawn segment of a path counts \(PathGeometry.segmentWeight) (an arc is drawn as up to \(EllipticalArc.maxPieces) Bézier pieces), or its curves half of each piece they are measured in when they need more (curves that turn back on themselves), summed over the document's paths; use fewer or simpler paths")
            return false
        }
        context.pathSegments = total
        return true
    }

    /// The `properties` array: required, non-empty, counted against `max-properties`. Nil
    /// when it is missing, or over the limit (then `overLimit` is set and the node is dropped).
    private func propertyItems(_ reader: ObjectReader, _ context: inout NodeContext, _ overLimit: inout Bool,
                               _ diagnostics: Diagnostics) -> [JSON]? {
        guard let items = reader.array("properties", required: true) else { return nil }
        if items.isEmpty { diagnostics.invalid(reader.pointer("properties"), "must list at least one property") }
        context.propertyCount += items.count
        if context.propertyCount > limits.maxProperties {
            diagnostics.invalid(reader.pointer("properties"), "more than \(limits.maxProperties) properties in the document (limit max-properties)")
            reader.acceptAll()
            overLimit = true
            return nil
        }
        return items
    }

    /// The smallest friction: below it the body would coast for longer than any window.
    static let minimumFriction = 1e-9  // messages say "1e-9"

    /// The physics law's fields (physics, pathPhysics): `velocity` and `friction` (0 < f ≤ 1)
    /// required, `restitution` (0…1) and `restVelocity` (> 0) optional.
    private func decodePhysicsLaw(_ reader: ObjectReader, defaultRestitution: Double, _ diagnostics: Diagnostics)
        -> (velocity: Double, friction: Double, restitution: Double, restVelocity: Double)? {
        let velocity = reader.bounded("velocity", required: true)
        let friction = reader.number("friction", required: true)
        let restitution = reader.number("restitution", in: 0...1) ?? defaultRestitution
        let restVelocity = positive(reader, "restVelocity", diagnostics) ?? PhysicsKernel.defaultRestVelocity
        if let friction, !(friction >= Self.minimumFriction && friction <= 1) {
            diagnostics.invalid(reader.pointer("friction"), "must be in [1e-9, 1] (the velocity is multiplied by 1 − friction every second), not \(format(friction))")
            return nil
        }
        guard let velocity, let friction else { return nil }
        return (velocity, friction, restitution, restVelocity)
    }

    /// A number that must be > 0.
    private func positive(_ reader: ObjectReader, _ key: String, _ diagnostics: Diagnostics) -> Double? {
        guard let value = reader.number(key) else { return nil }
        guard value > 0 else {
            diagnostics.invalid(reader.pointer(key), "must be positive")
            return nil
        }
        return value
    }

    /// `additive` and `additiveWeight` (0…1, default 1): the weight, or nil when not additive.
    func decodeAdditive(_ reader: ObjectReader, _ diagnostics: Diagnostics) -> Double? {
        let additive = reader.bool("additive") ?? false
        let weight = reader.number("additiveWeight", in: 0...1)
        if weight != nil, !additive {
            diagnostics.invalid(reader.pointer("additiveWeight"), "applies only with \"additive\": true")
        }
        return additive ? weight ?? 1 : nil
    }

    /// `checkValueType` for the field `key` of `reader`, building its pointer only for a
    /// problem: a plain number within range (nearly every value) needs none.
    func checkValueType(_ value: JSON, at reader: ObjectReader, _ key: String, _ diagnostics: Diagnostics) {
        guard !isPlainValue(value) else { return }
        reportValueType(value, at: reader.pointer(key), diagnostics)
    }

    /// Values are numbers, colour strings, or objects/arrays whose leaves are numbers (docs/values.md).
    func checkValueType(_ value: JSON, at pointer: String, _ diagnostics: Diagnostics) {
        guard !isPlainValue(value) else { return }
        reportValueType(value, at: pointer, diagnostics)
    }

    /// Whether `checkValueType` finds nothing wrong with `value`: the same walk, without a
    /// pointer for every member (they are made only for a value with a problem). A keyframed
    /// property of 450 numbers through 1,000 keyframes made 450,000 pointers: 1,253
    /// instructions a member, where this walk costs 72 (callgrind, release).
    func isPlainValue(_ value: JSON) -> Bool {
        switch value {
        case .number(let n): return abs(n) <= ObjectReader.maximumMagnitude
        case .string(let text): return Colour(css: text) != nil
        case .array(let items): return !items.isEmpty && items.allSatisfy(isPlainValue)
        case .object(let object): return !object.isEmpty && object.pairs.allSatisfy { isPlainValue($0.value) }
        case .null, .bool: return false
        }
    }

    /// Reports every problem `checkValueType` names, each at its member's pointer (for a
    /// value `isPlainValue` found wrong).
    func reportValueType(_ value: JSON, at pointer: String, _ diagnostics: Diagnostics) {
        switch value {
        case .number(let n):
            if abs(n) > ObjectReader.maximumMagnitude {
                diagnostics.invalid(pointer, "must be within ±1e15, not \(format(n))")
            }
        case .string(let text):
            if Colour(css: text) == nil {
                diagnostics.invalid(pointer, "'\(text)' is not a colour: expected #rgb, #rrggbb, #rrggbbaa, rgb(), rgba(), hsl() or hsla()")
            }
        case .array(let items):
            if items.isEmpty { diagnostics.invalid(pointer, "must not be an empty array") }
            for (index, item) in items.enumerated() { reportValueType(item, at: JSONPointer.appending(pointer, index), diagnostics) }
        case .object(let object):
            if object.isEmpty { diagnostics.invalid(pointer, "must not be an empty object") }
            for (key, item) in object.pairs { reportValueType(item, at: JSONPointer.appending(pointer, key), diagnostics) }
        case .null, .bool:
            diagnostics.malformed(pointer, "must be a number, a colour string, or an object or array of numbers, not \(value.typeDescription)")
        }
    }

    private func describe(_ value: JSON) -> String {
        switch value {
        case .number(let n): return format(n)
        case .string(let s): return "'\(s)'"
        default: return value.typeDescription
        }
    }
}

extension ObjectReader {
    /// Returns the whole object, accepting every key (for free-form objects like `target`).
    func consumeAll() -> JSONObject {
        acceptAll()
        return object
    }

    func accept(contentsOf keys: [String]) { for key in keys { accept(key) } }
}
