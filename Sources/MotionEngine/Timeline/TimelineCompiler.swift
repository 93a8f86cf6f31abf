/// Compiles a decoded document into a `Timeline`: resolves every node's absolute schedule and
/// implicit start values, builds the tracks, checks the limits and lists the events.
public struct TimelineCompiler: Sendable {
    public var limits: EngineLimits

    public init(limits: EngineLimits = .default) { self.limits = limits }

    /// Decodes and compiles a request body.
    public func compile(_ body: [UInt8]) throws(DocumentError) -> Timeline {
        try compile(DocumentDecoder(limits: limits).decode(body))
    }

    public func compile(_ document: TimelineDocument) throws(DocumentError) -> Timeline {
        let diagnostics = Diagnostics()
        let endless = Self.checkEndless(document.motion, diagnostics)
        try diagnostics.check()
        if endless, document.window == nil {
            throw DocumentError([Problem(pointer: "/window", message: "is required: the motion never ends (something repeats forever), so say which interval to sample", kind: .invalid)])
        }

        let scheduler = Scheduler(target: document.target, diagnostics: diagnostics, limits: limits,
                                  horizon: endless ? document.window!.end : .infinity)
        if endless, let window = document.window { scheduler.windowStart = window.start }
        let duration = scheduler.run(document.motion)
        try diagnostics.check()
        if let overflow = scheduler.overflow {
            throw DocumentError([Problem(pointer: "", message: overflow, kind: .invalid)])
        }

        let window = document.window ?? TimeWindow(start: 0, end: duration ?? 0)
        let builder = scheduler.builder
        let frameCount = try countFrames(window: window, fps: document.fps, tracks: builder.tracks.count)
        let lower = window.start - timeEpsilon, upper = window.end + timeEpsilon
        // Stable by generation order, which is causal order at one instant.
        let events = scheduler.events.enumerated()
            .filter { $0.element.time >= lower && $0.element.time <= upper }
            .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
            .map(\.element)

        return Timeline(fps: document.fps, window: window, duration: endless ? nil : duration, frameCount: frameCount,
                        tracks: builder.tracks, outputs: builder.outputs, events: events,
                        options: document.output, target: document.target)
    }

    /// Whether the motion never ends; reports steps that could never start and cycles of
    /// zero length that would repeat forever at one instant.
    static func checkEndless(_ node: MotionNode, _ diagnostics: Diagnostics) -> Bool {
        let header = node.header
        var endless = false
        switch node {
        case .tween(let tween):
            if header.timing.repetition == .infinite {
                endless = true
                let longest = tween.properties.map { $0.duration ?? tween.duration ?? 0 }.max() ?? 0
                if longest <= 0, header.timing.repeatDelay <= 0 {
                    diagnostics.invalid(header.pointer + "/repeat", "an infinitely repeating motion needs a positive duration or repeatDelay")
                }
            }
        case .group(let group):
            let children = group.children.map { checkEndless($0, diagnostics) }
            endless = children.contains(true)
            if header.timing.repetition == .infinite {
                endless = true
                if !children.contains(true), header.timing.repeatDelay <= 0, !hasLength(node) {
                    diagnostics.invalid(header.pointer + "/repeat", "an infinitely repeating group needs children that take time, or a repeatDelay")
                }
            }
        case .sequence(let sequence):
            for (index, step) in sequence.steps.enumerated() where checkEndless(step, diagnostics) {
                endless = true
                if index + 1 < sequence.steps.count {
                    diagnostics.invalid(JSONPointer.appending(header.pointer + "/steps", index + 1),
                                        "this step never starts: step \(index) never ends")
                }
                break
            }
            if header.timing.repetition == .infinite {
                endless = true
                if header.timing.repeatDelay <= 0, !hasLength(node) {
                    diagnostics.invalid(header.pointer + "/repeat", "an infinitely repeating sequence needs steps that take time, or a repeatDelay")
                }
            }
        }
        return endless
    }

    /// Whether a node certainly takes time (some tween in it has a positive duration or delay).
    static func hasLength(_ node: MotionNode) -> Bool {
        switch node {
        case .tween(let tween):
            return tween.header.timing.delay > 0 || tween.header.timing.repeatDelay > 0
                || (tween.duration ?? 0) > 0 || tween.properties.contains { ($0.duration ?? 0) > 0 || ($0.delay ?? 0) > 0 }
        case .group(let group):
            return group.header.timing.delay > 0 || group.children.contains(where: hasLength)
        case .sequence(let sequence):
            return sequence.header.timing.delay > 0 || sequence.steps.contains(where: hasLength)
        }
    }

    /// Frames in the window by the API §4 rule, checked against the sample limit before
    /// anything is allocated.
    func countFrames(window: TimeWindow, fps: Double, tracks: Int) throws(DocumentError) -> Int {
        let estimate = (window.end - window.start) * fps + 2
        let perFrame = Double(max(1, tracks))
        guard estimate * perFrame <= Double(limits.maxSamples) * 1.01 + 2 else {
            throw samplesProblem(frames: estimate, tracks: tracks)
        }
        let limit = window.end - 1e-6
        var k = max(0, Int(((limit - window.start) * fps).rounded(.up)))
        while k > 0, window.start + Double(k - 1) / fps >= limit { k -= 1 }
        while window.start + Double(k) / fps < limit { k += 1 }
        let frames = k + 1
        guard frames * max(1, tracks) <= limits.maxSamples else {
            throw samplesProblem(frames: Double(frames), tracks: tracks)
        }
        return frames
    }

    private func samplesProblem(frames: Double, tracks: Int) -> DocumentError {
        let message = "the result would hold about \(format(frames.rounded())) frames × \(max(1, tracks)) tracks, over the limit of \(limits.maxSamples) samples (max-samples); sample a shorter window or a lower fps"
        return DocumentError([Problem(pointer: "", message: message, kind: .invalid)])
    }
}

/// Resolves start values and appends segments to tracks, in start order.
struct TrackBuilder {
    let target: JSONObject
    let diagnostics: Diagnostics
    private(set) var tracks: [Track] = []
    private(set) var outputs: [Timeline.PropertyOutput] = []
    private var trackIndex: [String: Int] = [:]
    private var outputIndex: [PropertyPath: Int] = [:]

    init(target: JSONObject, diagnostics: Diagnostics) {
        self.target = target
        self.diagnostics = diagnostics
    }

    /// The current value of a scalar path at time t: its track if a motion already writes
    /// it, else the target's value.
    func currentValue(_ path: PropertyPath, at t: Double) -> Double? {
        if let index = trackIndex[path.description] { return tracks[index].value(at: t) }
        return path.lookup(in: target)?.numberValue
    }

    /// One scalar leg a tween wrote: what a homeward part needs to run it backwards.
    struct Leg {
        var track: Int
        var from: Double
        var to: Double
        var duration: Double
        var reverseEasing: Easing
    }

    /// Resolves a tween property at its start time and appends its segments; returns the legs.
    mutating func add(_ property: TweenProperty, start: Double, timing: CycleTiming, easing: Easing, reverseEasing: Easing) -> [Leg] {
        let toLeaves = ValueShape.leaves(of: property.to)
        var fromValues: [Double] = []
        let template: JSON
        if let from = property.from {
            let fromLeaves = ValueShape.leaves(of: from)
            guard fromLeaves.map(\.relative) == toLeaves.map(\.relative) else {
                diagnostics.invalid(property.pointer + "/from", "has a different shape from 'to' at '\(property.path)': \(ValueShape.describe(from)) vs \(ValueShape.describe(property.to))")
                return []
            }
            fromValues = fromLeaves.map(\.value)
            template = from
        } else {
            for leaf in toLeaves {
                let leafPath = PropertyPath(segments: property.path.segments + leaf.relative)
                guard let value = currentValue(leafPath, at: start) else {
                    let found = property.path.lookup(in: target)
                    let detail = found.map { ", where target has \(ValueShape.describe($0)) at '\(property.path)'" } ?? ""
                    diagnostics.invalid(property.pointer + "/path", "no value at '\(leafPath)' in target, and no 'from'\(detail)")
                    return []
                }
                fromValues.append(value)
            }
            if let existing = property.path.lookup(in: target),
               toLeaves.allSatisfy({ PropertyPath(segments: $0.relative).lookup(inValue: existing)?.numberValue != nil }) {
                template = existing
            } else {
                template = property.to
            }
        }

        var legs: [Leg] = []
        var leaves: [(relative: [String], track: Int)] = []
        let isScalar = toLeaves.count == 1 && toLeaves[0].relative.isEmpty
        for (offset, leaf) in toLeaves.enumerated() {
            let from = fromValues[offset]
            guard isScalar || from != leaf.value else { continue }
            let leafPath = PropertyPath(segments: property.path.segments + leaf.relative)
            let key = leafPath.description
            let index: Int
            if let existing = trackIndex[key] {
                index = existing
            } else {
                index = tracks.count
                tracks.append(Track(path: key, base: leafPath.lookup(in: target)?.numberValue ?? from))
                trackIndex[key] = index
            }
            let curve = TweenCurve(from: from, to: leaf.value, timing: timing, easing: easing, reverseEasing: reverseEasing)
            tracks[index].append(start: start, curve: .tween(curve))
            leaves.append((leaf.relative, index))
            legs.append(Leg(track: index, from: from, to: leaf.value, duration: timing.legDuration, reverseEasing: reverseEasing))
        }

        if let existing = outputIndex[property.path] {
            let output = outputs[existing]
            var merged = output.leaves
            for leaf in leaves where !merged.contains(where: { $0.track == leaf.track }) { merged.append(leaf) }
            outputs[existing] = Timeline.PropertyOutput(path: output.path, template: output.template, leaves: merged)
        } else {
            outputIndex[property.path] = outputs.count
            outputs.append(Timeline.PropertyOutput(path: property.path, template: template, leaves: leaves))
        }
        return legs
    }

    /// A leg run backwards from `to` to `from` with the reverse easing, starting at `start`.
    mutating func addReverseLeg(_ leg: Leg, at start: Double) {
        let curve = TweenCurve(from: leg.to, to: leg.from, timing: CycleTiming(legDuration: leg.duration),
                               easing: leg.reverseEasing, reverseEasing: leg.reverseEasing)
        tracks[leg.track].append(start: start, curve: .tween(curve))
    }
}

extension PropertyPath {
    /// Looks the path up inside an arbitrary JSON value (not only an object root).
    func lookup(inValue value: JSON) -> JSON? {
        if segments.isEmpty { return value }
        guard case .object(let object) = value else {
            if case .array = value {
                var wrapper = JSONObject()
                wrapper["_"] = value
                return PropertyPath(segments: ["_"] + segments).lookup(in: wrapper)
            }
            return nil
        }
        return lookup(in: object)
    }
}
