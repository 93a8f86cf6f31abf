/// Resolves property values at their start times and appends segments to tracks.
///
/// Values decompose into scalar tracks (MotionMachine's `MotionState`): numbers, the numeric
/// leaves of objects and arrays, the red/green/blue/alpha channels of colours, or one colour
/// component named by the path (`tint.hue`, animated in HSB). Only leaves that change get a
/// track, except that a scalar property always has one.
struct TrackBuilder {
    let target: JSONObject
    let diagnostics: Diagnostics
    private(set) var tracks: [Track] = []
    private(set) var outputs: [Timeline.PropertyOutput] = []
    private var trackIndex = SmallIndex<String>()
    private var outputIndex = SmallIndex<PropertyPath>()
    /// The last additive motion on each track: the next one is rebased onto its weighted end.
    private var lastAdditive: [Int: (from: Double, to: Double, weight: Double)] = [:]
    /// Curve segments charged so far (`charge`), and the most allowed (`EngineLimits.maxSegments`).
    private(set) var segments = 0
    let maxSegments: Int
    /// Set when a charge went over `maxSegments` (reported once, at that property), or found
    /// the computation cancelled (`Cancellation`); the scheduler then stops.
    private(set) var stopped = false

    /// `expectedProperties`: about how many properties the motions write (room is reserved
    /// for that many tracks and outputs, so that the indexes are not rehashed as they grow:
    /// the 100-track request went from 396 to 392 instructions a sample). It must be bounded
    /// by the caller (the decoder's property limit). The indexes search a list up to 16
    /// properties (`SmallIndex`).
    /// `charged`: segments already spent on the document (its paths' geometry,
    /// `TimelineDocument.pathSegments`).
    init(target: JSONObject, diagnostics: Diagnostics, expectedProperties: Int = 0, maxSegments: Int = .max, charged: Int = 0) {
        self.target = target
        self.diagnostics = diagnostics
        self.maxSegments = maxSegments
        self.segments = charged
        tracks.reserveCapacity(expectedProperties)
        outputs.reserveCapacity(expectedProperties)
        trackIndex = SmallIndex(expected: expectedProperties)
        outputIndex = SmallIndex(expected: expectedProperties)
    }

    /// How a motion writes its leaves.
    struct Blending {
        /// Additive weight, or nil for a motion that replaces the value (later start wins).
        var additiveWeight: Double?
        var bounds: Bounds?

        static let replace = Blending(additiveWeight: nil, bounds: nil)
    }

    /// One scalar leaf a motion writes, with its resolved start and end values.
    struct Leaf {
        var track: Int
        var from: Double
        var to: Double
    }

    /// One scalar leg a tween wrote: what a homeward part needs to run it backwards.
    struct Leg {
        var track: Int
        var from: Double
        var to: Double
        var duration: Double
        var reverseEasing: Easing
        var blending: Blending
    }

    // MARK: - The segment budget

    /// What one segment of a spring counts against `maxSegments`: finding where a spring rests
    /// (`SpringSettling`, a scan of its 1 ms grid) costs about twenty times building a tween's
    /// segment. Measured on the release build, one document at a time on the compute pool,
    /// 9,000 staggered elements: a tween's keyframe segment 0.41 µs, a spring's 9.7 µs (both
    /// directions), a spring without keyframes 4.4 µs an element (16.7 µs staggered, where each
    /// element is its own node), a physics bounce 0.18 µs. At the default budget of 1,000,000 a
    /// document of spring keyframes compiles in about a second, one of tweens in under half.
    /// Springs settled again in a run come from `SpringSettling.Memo` (the same document of
    /// spring keyframes, refused at the budget: 1.2 s -> 0.16 s), but the weight stays: a
    /// document whose segments all differ defeats any memo (0.7 s at the budget).
    static let springSegmentWeight = 10

    /// Charges `count` × `weight` segments for the property at `pointer` before they are built.
    /// False, with a problem reported at `pointer` (the first time), when the total would pass
    /// `maxSegments`; every later charge is refused too. False as well, with a problem no one
    /// reads, once the thread's computation is cancelled (`Cancellation`): a charge comes
    /// before each property, element, play and body's bounces is built, where the work of a
    /// document is divided.
    mutating func charge(_ count: Int, weight: Int = 1, at pointer: String) -> Bool {
        guard stillWanted() else { return false }
        guard let total = EngineLimits.segments(segments, charging: count, weight: weight, limit: maxSegments) else {
            stopped = true
            diagnostics.invalid(pointer, "takes the document over \(maxSegments) curve segments (max-segments): in every play, each element a path, wildcard or stagger reaches counts one per keyframe segment, \(Self.springSegmentWeight) per spring segment, a physics body one more per bounce, reading a track's value for a start one more per additive layer on it, and the document's paths \(PathGeometry.segmentWeight) per drawn segment; use fewer keyframes, elements or repeats")
            return false
        }
        segments = total
        return true
    }

    /// False once the builder has stopped, or when the thread's computation has been asked
    /// to stop (`Cancellation`), which stops it with a problem no one reads: the look that
    /// begins every charge, and what follows a `.cancelled` from a long piece of one
    /// property's work (settling many springs, a chain of spring keyframes).
    mutating func stillWanted() -> Bool {
        guard !stopped else { return false }
        if Cancellation.isRequested {
            stopped = true
            diagnostics.add(Cancellation.problem)
            return false
        }
        return true
    }

    // MARK: - Tweens

    /// Resolves a tween property at its start time and appends its segments; returns the legs.
    mutating func add(_ property: TweenProperty, start: Double, timing: CycleTiming, easing: Easing,
                      reverseEasing: Easing, blending: Blending) -> [Leg] {
        guard let leaves = resolve(path: property.path, pointer: property.pointer, from: property.from, to: property.to, at: start),
              charge(leaves.count, at: property.pointer) else {
            return []
        }
        var legs: [Leg] = []
        for var leaf in leaves {
            leaf.from = rebase(leaf, blending)
            let curve = TweenCurve(from: leaf.from, to: leaf.to, timing: timing, easing: easing, reverseEasing: reverseEasing)
            append(.tween(curve), to: leaf, at: start, blending)
            legs.append(Leg(track: leaf.track, from: leaf.from, to: leaf.to, duration: timing.legDuration,
                            reverseEasing: reverseEasing, blending: blending))
        }
        return legs
    }

    /// A leg run backwards from `to` to `from` with the reverse easing, starting at `start`.
    /// An additive leg's reverse contribution is measured from `to`, so that with the forward
    /// leg's held `w·(to − from)` the sum returns to 0.
    mutating func addReverseLeg(_ leg: Leg, at start: Double) {
        let curve = TweenCurve(from: leg.to, to: leg.from, timing: CycleTiming(legDuration: leg.duration),
                               easing: leg.reverseEasing, reverseEasing: leg.reverseEasing)
        tracks[leg.track].append(start: start, curve: .tween(curve),
                                 additive: leg.blending.additiveWeight.map { ($0, leg.to) }, bounds: leg.blending.bounds)
    }

    /// Appends the homeward (reverse) part of a leaf's motion; an additive one is measured
    /// from where it starts, so that it cancels what the outward part added.
    mutating func appendHomeward(_ curve: Curve, track: Int, at start: Double, _ blending: Blending) {
        tracks[track].append(start: start, curve: curve, additive: blending.additiveWeight.map { ($0, curve.initialValue) },
                             bounds: blending.bounds)
    }

    /// Appends a curve for one leaf with the motion's blending. Its layers cost where they are
    /// read: an implicit start adds them all up (`readCharged`).
    mutating func append(_ curve: Curve, to leaf: Leaf, at start: Double, _ blending: Blending) {
        if let weight = blending.additiveWeight {
            lastAdditive[leaf.track] = (leaf.from, leaf.to, weight)
            tracks[leaf.track].append(start: start, curve: curve, additive: (weight, leaf.from), bounds: blending.bounds)
        } else {
            tracks[leaf.track].append(start: start, curve: curve, additive: nil, bounds: blending.bounds)
        }
    }

    /// docs/timing-and-events.md: an additive motion's `from` is rebased onto the weighted end of the
    /// additive motion that started before it on the same track.
    func rebase(_ leaf: Leaf, _ blending: Blending) -> Double {
        guard blending.additiveWeight != nil, let previous = lastAdditive[leaf.track] else { return leaf.from }
        return previous.from + (previous.to - previous.from) * previous.weight
    }

    // MARK: - Paths

    /// Tracks for a path motion: `output.x` and `output.y` (written whole as a point), and the
    /// tangent angle at `rotation`. Returns each track with the component it carries.
    mutating func addPath(output: PropertyPath, rotation: PropertyPath?, at start: Double, pointer: String,
                          curve: (PathCurve.Component) -> Curve) -> [(track: Int, component: PathCurve.Component)] {
        guard writable(output, at: pointer + "/output"), rotation.map({ writable($0, at: pointer + "/rotation") }) ?? true,
              charge(rotation == nil ? 2 : 3, at: pointer) else { return [] }
        var result: [(track: Int, component: PathCurve.Component)] = []
        var leaves: [(relative: [String], track: Int)] = []
        var point = JSONObject()
        for (name, component) in [("x", PathCurve.Component.x), ("y", .y)] {
            let made = curve(component)
            let leafPath = output.appending(name)
            let index = track(for: leafPath.description, base: leafPath.lookup(in: target)?.numberValue ?? made.initialValue)
            tracks[index].append(start: start, curve: made)
            leaves.append(([name], index))
            result.append((index, component))
            point[name] = .number(made.initialValue)
        }
        var template = JSON.object(point)
        if case .object(let existing)? = output.lookup(in: target), existing["x"]?.numberValue != nil, existing["y"]?.numberValue != nil {
            template = .object(existing)
        }
        register(Timeline.PropertyOutput(path: output, kind: .value(template: template, leaves: leaves)))
        if let rotation {
            let made = curve(.angle)
            let index = track(for: rotation.description, base: rotation.lookup(in: target)?.numberValue ?? made.initialValue)
            tracks[index].append(start: start, curve: made)
            result.append((index, .angle))
            register(Timeline.PropertyOutput(path: rotation, kind: .value(template: .number(made.initialValue), leaves: [([], index)])))
        }
        return result
    }

    // MARK: - Resolution

    /// Decomposes `from`/`to` at `path` into leaves with tracks, reading implicit starts from
    /// the current values at `start`. Reports a problem and returns nil when the shapes do not fit.
    /// With `keepAll`, every leaf gets a track even when it does not change (physics and
    /// decay without `to`, whose end is not known from the values).
    mutating func resolve(path: PropertyPath, pointer: String, from: JSON?, to: JSON, at start: Double, keepAll: Bool = false) -> [Leaf]? {
        if let component = colourComponent(path) {
            // A component is written as part of its colour.
            guard writable(component.colour, at: pointer + "/path") else { return nil }
            return resolveColourComponent(path: path, colourPath: component.colour, component: component.name,
                                          pointer: pointer, from: from, to: to, at: start)
        }
        guard writable(path, at: pointer + "/path") else { return nil }
        if case .string = to { return resolveColour(path: path, pointer: pointer, from: from, to: to, at: start) }
        if case .string = from { return resolveColour(path: path, pointer: pointer, from: from, to: to, at: start) }
        if case .number(let end) = to {
            switch from {
            case nil: return resolveNumber(path: path, pointer: pointer, from: nil, to: end, at: start)
            case .number(let begin)?: return resolveNumber(path: path, pointer: pointer, from: begin, to: end, at: start)
            default: break
            }
        }
        if case .array(let ends) = to, let leaves = resolveNumbers(path: path, pointer: pointer, from: from, to: ends, at: start, keepAll: keepAll) {
            return leaves
        }

        let toLeaves = ValueShape.leaves(of: to)
        var fromValues: [Double] = []
        fromValues.reserveCapacity(toLeaves.count)
        // Each leaf's name and its value in the target, found once. Without a `from` they are
        // found for every leaf to read its start, and kept for its track (they were found
        // again there; a `to` of 200,000 numbers: `resolve` 1,405 → 1,090 million
        // instructions, callgrind); with a `from`, only for the leaves that get a track.
        var names: [String] = [], targetValues: [JSON?] = []
        let template: JSON
        if let from {
            let fromLeaves = ValueShape.leaves(of: from)
            guard fromLeaves.map(\.relative) == toLeaves.map(\.relative) else {
                diagnostics.invalid(pointer + "/from", "has a different shape from 'to' at '\(path)': \(ValueShape.describe(from)) vs \(ValueShape.describe(to))")
                return nil
            }
            fromValues = fromLeaves.map(\.value)
            template = from
        } else {
            names.reserveCapacity(toLeaves.count)
            targetValues.reserveCapacity(toLeaves.count)
            for leaf in toLeaves {
                let leafPath = path.appending(contentsOf: leaf.relative)
                let name = leafPath.description, targetValue = leafPath.lookup(in: target)
                names.append(name)
                targetValues.append(targetValue)
                // Read first: the read may stop the builder, which `implicitStart` looks at.
                let current = currentValue(named: name, target: targetValue, at: start, pointer: pointer)
                guard let value = implicitStart(current, of: name, path: path, found: path.lookup(in: target), pointer: pointer) else { return nil }
                fromValues.append(value)
            }
            if let existing = path.lookup(in: target),
               toLeaves.allSatisfy({ PropertyPath(segments: $0.relative).lookup(inValue: existing)?.numberValue != nil }) {
                template = existing
            } else {
                template = to
            }
        }

        var leaves: [Leaf] = []
        var outputLeaves: [(relative: [String], track: Int)] = []
        let isScalar = toLeaves.count == 1 && toLeaves[0].relative.isEmpty
        reserveTracks(toLeaves.count)
        leaves.reserveCapacity(toLeaves.count)
        outputLeaves.reserveCapacity(toLeaves.count)
        for (offset, leaf) in toLeaves.enumerated() {
            let from = fromValues[offset]
            guard isScalar || keepAll || from != leaf.value else { continue }
            let name: String, targetValue: JSON?
            if names.isEmpty {
                let leafPath = path.appending(contentsOf: leaf.relative)
                (name, targetValue) = (leafPath.description, leafPath.lookup(in: target))
            } else {
                (name, targetValue) = (names[offset], targetValues[offset])
            }
            let index = track(for: name, base: targetValue?.numberValue ?? from)
            leaves.append(Leaf(track: index, from: from, to: leaf.value))
            outputLeaves.append((leaf.relative, index))
        }
        register(Timeline.PropertyOutput(path: path, kind: .value(template: template, leaves: outputLeaves)))
        return leaves
    }

    /// A leaf's start without `from`: its `current` value (its track's, else the target's),
    /// or nil with the problem reported when there is none or it is beyond ±1e15. `found` is
    /// what the target holds at the property's `path`, looked up only for the message.
    private func implicitStart(_ current: Double?, of leaf: String, path: PropertyPath, found: @autoclosure () -> JSON?, pointer: String) -> Double? {
        guard let value = current else {
            if stopped { return nil }  // the read went over the budget: that problem is reported
            let detail = found().map { ", and target has \(ValueShape.describe($0)) at '\(path)', not the shape of 'to'" } ?? ""
            diagnostics.invalid(pointer + "/path", "no value at '\(leaf)' in target, and no 'from'\(detail)")
            return nil
        }
        guard abs(value) <= ObjectReader.maximumMagnitude else {
            diagnostics.invalid(pointer + "/path", "the value at '\(leaf)' (\(format(value))) is outside ±1e15")
            return nil
        }
        return value
    }

    /// `resolve` for a number `to` (and a number `from`, or none): the usual property, one
    /// leaf, one track. The same outcome as the general path (same track, output, problems)
    /// without its lists of leaves, relative paths and names, and with the target looked up
    /// once instead of three times. The small document of `make bench-instructions` (one
    /// such property): `Scheduler.run` 19,555 → 16,413 instructions (callgrind, release).
    private mutating func resolveNumber(path: PropertyPath, pointer: String, from: Double?, to end: Double, at start: Double) -> [Leaf]? {
        let name = path.description, targetValue = path.lookup(in: target)
        let begin: Double
        if let from {
            begin = from
        } else {
            let current = currentValue(named: name, target: targetValue, at: start, pointer: pointer)
            guard let value = implicitStart(current, of: name, path: path, found: targetValue, pointer: pointer) else { return nil }
            begin = value
        }
        // The template the whole value is written into: with a `from`, the `from`; else the
        // target's number, or `to` when the target has none there.
        let template: JSON
        if let from {
            template = .number(from)
        } else if let targetValue, targetValue.numberValue != nil {
            template = targetValue
        } else {
            template = .number(end)
        }
        reserveTracks(1)
        let index = track(for: name, base: targetValue?.numberValue ?? begin)
        register(Timeline.PropertyOutput(path: path, kind: .value(template: template, leaves: [([], index)])))
        return [Leaf(track: index, from: begin, to: end)]
    }

    /// `resolve` for an array of numbers `to` (and an array of as many numbers `from`, or
    /// none): a track per index, as the general path gives them (same names, bases, starts,
    /// output, problems), without its per-leaf paths, joins and lookups from the target's
    /// root. The value at `path` in the target is looked up once, each leaf's name is
    /// written once and looked up among the tracks once. nil (nothing done) for any other
    /// shape, left to the general path. A `to` of 50,000 numbers: 564 → 411 million
    /// instructions a request (callgrind, release; `resolve` about 4,900 → 1,800 a leaf);
    /// 200,000 numbers about 0.48 → 0.40 s.
    ///
    /// The returned optional is two-level: nil means "not this shape", `.some(nil)` a
    /// problem reported.
    private mutating func resolveNumbers(path: PropertyPath, pointer: String, from: JSON?, to ends: [JSON], at start: Double, keepAll: Bool) -> [Leaf]?? {
        // Every end a number; a `from`, if any, an array of as many numbers.
        let endValues = ends.compactMap(\.numberValue)
        guard endValues.count == ends.count else { return nil }
        var begins: [Double]?
        if let from {
            guard case .array(let items) = from else { return nil }
            let values = items.compactMap(\.numberValue)
            guard values.count == items.count, values.count == ends.count else { return nil }
            begins = values
        }
        let existing = path.lookup(in: target)
        /// The target's value at `path` followed by index `k`, as `PropertyPath.lookup` finds it.
        func targetChild(_ k: Int, _ text: String) -> JSON? {
            switch existing {
            case .array(let items)?: return k < items.count ? items[k] : nil
            case .object(let object)?: return object[text]
            default: return nil
            }
        }
        let prefix = path.description
        let count = ends.count
        var names: [String] = [], indexTexts: [String] = [], bases: [Double?] = [], known: [Int?] = [], starts: [Double] = []
        names.reserveCapacity(count)
        indexTexts.reserveCapacity(count)
        bases.reserveCapacity(count)
        known.reserveCapacity(count)
        starts.reserveCapacity(count)
        for k in 0..<count {
            let text = String(k), name = prefix + "." + text
            let targetValue = targetChild(k, text)
            let position = trackPosition(name)
            let begin: Double
            if let begins {
                begin = begins[k]
            } else {
                var current = targetValue?.numberValue
                if let position {
                    guard readCharged(tracks[position].additive.count, at: pointer) else { return .some(nil) }
                    current = tracks[position].value(at: start)
                }
                guard let value = implicitStart(current, of: name, path: path, found: existing, pointer: pointer) else { return .some(nil) }
                begin = value
            }
            names.append(name)
            indexTexts.append(text)
            bases.append(targetValue?.numberValue)
            known.append(position)
            starts.append(begin)
        }
        // The whole value is written into the `from`; else the target's value when it holds a
        // number at every index, else the `to`.
        let template: JSON
        if let from {
            template = from
        } else if let existing, (0..<count).allSatisfy({ targetChild($0, indexTexts[$0])?.numberValue != nil }) {
            template = existing
        } else {
            template = .array(ends)
        }
        var leaves: [Leaf] = []
        var outputLeaves: [(relative: [String], track: Int)] = []
        reserveTracks(count)
        leaves.reserveCapacity(count)
        outputLeaves.reserveCapacity(count)
        for k in 0..<count {
            let begin = starts[k], end = endValues[k]
            guard keepAll || begin != end else { continue }
            // The names differ from one another, so a track found absent above still is.
            let index = known[k] ?? appendTrack(names[k], base: bases[k] ?? begin)
            leaves.append(Leaf(track: index, from: begin, to: end))
            outputLeaves.append(([indexTexts[k]], index))
        }
        register(Timeline.PropertyOutput(path: path, kind: .value(template: template, leaves: outputLeaves)))
        return .some(leaves)
    }

    /// A whole colour: red, green, blue and alpha tracks for the channels that change.
    private mutating func resolveColour(path: PropertyPath, pointer: String, from: JSON?, to: JSON, at start: Double) -> [Leaf]? {
        guard let end = colour(to, at: pointer + "/to") else { return nil }
        let begin: Colour
        if let from {
            guard let parsed = colour(from, at: pointer + "/from") else { return nil }
            begin = parsed
        } else {
            guard let current = currentColour(path, at: start, pointer: pointer) else {
                if stopped { return nil }
                diagnostics.invalid(pointer + "/path", "no colour at '\(path)' in target, and no 'from'")
                return nil
            }
            begin = current
        }
        let base = path.lookup(in: target).flatMap { $0.stringValue.flatMap(Colour.init(css:)) } ?? begin
        var leaves: [Leaf] = []
        var channels: [(component: String, track: Int)] = []
        for channel in Colour.channels where begin[channel] != end[channel] {
            let index = track(for: path.appending(channel).description, base: base[channel])
            leaves.append(Leaf(track: index, from: begin[channel], to: end[channel]))
            channels.append((channel, index))
        }
        register(Timeline.PropertyOutput(path: path, kind: .colour(base: base, channels: channels)))
        return leaves
    }

    /// One component of a colour named by the path (`tint.hue`): a scalar track; hue takes
    /// the short way round and is written in [0, 360).
    mutating func resolveColourComponent(path: PropertyPath, colourPath: PropertyPath, component: String,
                                                 pointer: String, from: JSON?, to: JSON, at start: Double) -> [Leaf]? {
        guard case .number(var end) = to else {
            diagnostics.invalid(pointer + "/to", "must be a number: '\(path)' names the \(component) of a colour")
            return nil
        }
        guard let current = currentColour(colourPath, at: start, pointer: pointer) else {
            if stopped { return nil }
            diagnostics.invalid(pointer + "/path", "no colour at '\(colourPath)' in target")
            return nil
        }
        var begin = current[component]
        if let from {
            guard case .number(let value) = from else {
                diagnostics.invalid(pointer + "/from", "must be a number: '\(path)' names the \(component) of a colour")
                return nil
            }
            begin = value
        }
        if component == "hue" {
            begin = Colour.normalisedHue(begin)
            var delta = (Colour.normalisedHue(end) - begin).truncatingRemainder(dividingBy: 360)
            if delta > 180 { delta -= 360 } else if delta < -180 { delta += 360 }
            end = begin + delta
        } else if !(0...1).contains(end) {
            diagnostics.invalid(pointer + "/to", "a colour's \(component) must be between 0 and 1, not \(format(end))")
            return nil
        }
        let base = colourPath.lookup(in: target).flatMap { $0.stringValue.flatMap(Colour.init(css:)) } ?? current
        let index = track(for: path.description, base: base[component], wrapsDegrees: component == "hue")
        if let existing = outputPosition(colourPath), case .colour(let base, var channels) = outputs[existing].kind {
            if !channels.contains(where: { $0.track == index }) { channels.append((component, index)) }
            outputs[existing] = Timeline.PropertyOutput(path: colourPath, kind: .colour(base: base, channels: channels))
        } else {
            register(Timeline.PropertyOutput(path: colourPath, kind: .colour(base: base, channels: [(component, index)])))
        }
        return [Leaf(track: index, from: begin, to: end)]
    }

    func colour(_ value: JSON, at pointer: String) -> Colour? {
        guard case .string(let text) = value else {
            diagnostics.invalid(pointer, "must be a colour string like the other end of the motion, not \(value.typeDescription)")
            return nil
        }
        guard let colour = Colour(css: text) else {
            diagnostics.invalid(pointer, "'\(text)' is not a colour: expected #rgb, #rrggbb, #rrggbbaa, rgb(), rgba(), hsl() or hsla()")
            return nil
        }
        return colour
    }

    /// Whether `path` can be written into `target` (for `final`); reports why not.
    /// `pointer` is only built when there is a problem to report: `pointer + "/path"` for
    /// every property cost about 900 instructions (a string built, grown and freed).
    func writable(_ path: PropertyPath, at pointer: @autoclosure () -> String) -> Bool {
        guard let (prefix, value) = path.blockingPrefix(in: target) else { return true }
        let place = prefix.segments.isEmpty ? "the target" : "'\(prefix)'"
        let what: String
        if case .array(let items) = value { what = "an array of \(items.count)" } else { what = value.typeDescription }
        diagnostics.invalid(pointer(), "'\(path)' cannot be written into target: \(place) holds \(what)")
        return false
    }

    /// Whether `path` names a component of a colour (`tint.alpha` where `tint` is a colour).
    func colourComponent(_ path: PropertyPath) -> (colour: PropertyPath, name: String)? {
        guard path.segments.count >= 2, let name = path.segments.last, Colour.components.contains(name) else { return nil }
        let parent = PropertyPath(segments: Array(path.segments.dropLast()))
        if let existing = outputPosition(parent), case .colour = outputs[existing].kind { return (parent, name) }
        if case .string(let text)? = parent.lookup(in: target), Colour(css: text) != nil { return (parent, name) }
        return nil
    }

    // MARK: - Current values

    /// The current value of a scalar path at time t: its track if a motion already writes
    /// it, else the target's value. Nil as well once the builder has stopped
    /// (`readCharged`): callers look at `stopped` before reporting a missing value.
    mutating func currentValue(_ path: PropertyPath, at t: Double, pointer: String) -> Double? {
        let found = path.lookup(in: target)
        return currentValue(named: path.description, target: found, at: t, pointer: pointer)
    }

    /// `currentValue` of a path given by its name and its value in the target.
    mutating func currentValue(named name: String, target value: @autoclosure () -> JSON?, at t: Double, pointer: String) -> Double? {
        if let index = trackPosition(name) {
            guard readCharged(tracks[index].additive.count, at: pointer) else { return nil }
            return tracks[index].value(at: t)
        }
        return value()?.numberValue
    }

    /// The current colour at `path`: rendered from its tracks, else parsed from the target.
    /// Nil once the builder has stopped, as `currentValue`.
    mutating func currentColour(_ path: PropertyPath, at t: Double, pointer: String) -> Colour? {
        if let index = outputPosition(path), case .colour(_, let channels) = outputs[index].kind {
            var layers = 0
            for channel in channels { layers &+= tracks[channel.track].additive.count }
            guard readCharged(layers, at: pointer) else { return nil }
            if let colour = outputs[index].colour({ tracks[$0].value(at: t) }) { return colour }
        }
        guard case .string(let text)? = path.lookup(in: target) else { return nil }
        return Colour(css: text)
    }

    /// Charges reading a value that adds up `layers` additive layers (an implicit start, a
    /// null first keyframe, a colour's start): one segment a layer; reads of tracks without
    /// layers are free. 33,000 plays of one additive tween in a repeating group (a 234-byte
    /// document), each starting from the sum of the layers before it, compiled for 21 s before
    /// layers were counted; counted as they were added (one for each layer already on the
    /// track), 816 layers then 660,000 plays of other tweens on the same track, each reading
    /// them (a 115 KB document), still compiled for 105 s within `max-segments` (found by an
    /// adversarial review).
    private mutating func readCharged(_ layers: Int, at pointer: String) -> Bool {
        layers == 0 ? !stopped : charge(layers, at: pointer)
    }

    // MARK: - Bookkeeping

    mutating func track(for key: String, base: Double, wrapsDegrees: Bool = false) -> Int {
        if let existing = trackPosition(key) { return existing }
        return appendTrack(key, base: base, wrapsDegrees: wrapsDegrees)
    }

    /// A new track named `key`, which no track has yet; returns its index.
    private mutating func appendTrack(_ key: String, base: Double, wrapsDegrees: Bool = false) -> Int {
        let index = tracks.count
        tracks.append(Track(path: key, base: base, wrapsDegrees: wrapsDegrees))
        trackIndex.appended(key, count: tracks.count) { tracks[$0].path }
        return index
    }

    /// Room for up to `count` more tracks (a property's leaves, before they get theirs).
    private mutating func reserveTracks(_ count: Int) {
        // At least doubled, as growth would: a reservation per property must not copy the
        // tracks each time.
        if tracks.count + count > tracks.capacity { tracks.reserveCapacity(max(tracks.count + count, 2 * tracks.capacity)) }
        trackIndex.reserve(count, count: tracks.count) { tracks[$0].path }
    }

    private func trackPosition(_ key: String) -> Int? {
        trackIndex.position(of: key, count: tracks.count) { tracks[$0].path }
    }

    private func outputPosition(_ path: PropertyPath) -> Int? {
        outputIndex.position(of: path, count: outputs.count) { outputs[$0].path }
    }

    /// Adds an output for a property path, or merges the leaves into the existing one.
    mutating func register(_ output: Timeline.PropertyOutput) {
        guard let existing = outputPosition(output.path) else {
            outputs.append(output)
            outputIndex.appended(output.path, count: outputs.count) { outputs[$0].path }
            return
        }
        switch (outputs[existing].kind, output.kind) {
        case (.value(let template, var leaves), .value(_, let added)):
            for leaf in added where !leaves.contains(where: { $0.track == leaf.track }) { leaves.append(leaf) }
            outputs[existing] = Timeline.PropertyOutput(path: output.path, kind: .value(template: template, leaves: leaves))
        case (.colour(let base, var channels), .colour(_, let added)):
            for channel in added where !channels.contains(where: { $0.track == channel.track }) { channels.append(channel) }
            outputs[existing] = Timeline.PropertyOutput(path: output.path, kind: .colour(base: base, channels: channels))
        default:
            // A path animated both as a colour and as numbers: keep the first form.
            break
        }
    }
}
