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
        var builder = TrackBuilder(target: document.target, diagnostics: diagnostics)
        var planner = SchedulePlanner()
        let duration = planner.plan(document.motion, at: 0)
        for motion in planner.propertyMotions.sorted(by: { ($0.start, $0.order) < ($1.start, $1.order) }) {
            builder.add(motion)
        }
        try diagnostics.check()

        let window: TimeWindow
        if let given = document.window {
            window = given
        } else if let duration {
            window = TimeWindow(start: 0, end: duration)
        } else {
            throw DocumentError([Problem(pointer: "/window", message: "is required: the motion never ends (it repeats forever), so say which interval to sample", kind: .invalid)])
        }
        if let problem = infiniteZeroPeriodProblem(planner) { throw DocumentError([problem]) }

        let frameCount = try countFrames(window: window, fps: document.fps, tracks: builder.tracks.count)
        let events = try listEvents(planner, window: window)

        return Timeline(fps: document.fps, window: window, duration: duration, frameCount: frameCount,
                        tracks: builder.tracks, outputs: builder.outputs, events: events,
                        options: document.output, target: document.target)
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

    private func infiniteZeroPeriodProblem(_ planner: SchedulePlanner) -> Problem? {
        for node in planner.nodes where node.end == nil {
            for motion in planner.propertyMotions where motion.nodeIndex == node.index && motion.timing.period <= 0 {
                return Problem(pointer: node.pointer + "/repeat", message: "an infinitely repeating motion needs a positive duration or repeatDelay", kind: .invalid)
            }
        }
        return nil
    }

    /// Every event in the window, in time order and causal order at one instant.
    func listEvents(_ planner: SchedulePlanner, window: TimeWindow) throws(DocumentError) -> [TimelineEvent] {
        var events: [TimelineEvent] = []
        var overflow = false
        let lower = window.start - timeEpsilon, upper = window.end + timeEpsilon
        func emit(_ event: TimelineEvent) -> Bool {
            guard event.time >= lower, event.time <= upper else { return true }
            if events.count >= limits.maxEvents { overflow = true; return false }
            events.append(event)
            return true
        }
        for node in planner.nodes {
            _ = emit(TimelineEvent(time: node.start, kind: .started, motion: node.id))
            // Leg boundaries of every property timing, merged: identical timings report once.
            var boundaries: [(time: Double, cycle: Int, kind: CycleTiming.Boundary.Kind)] = []
            var seen: [(start: Double, timing: CycleTiming)] = []
            for motion in planner.propertyMotions where motion.nodeIndex == node.index {
                if seen.contains(where: { $0.start == motion.start && $0.timing == motion.timing }) { continue }
                seen.append((motion.start, motion.timing))
                motion.timing.forEachBoundary(from: window.start - motion.start, through: window.end - motion.start) { boundary in
                    boundaries.append((motion.start + boundary.time, boundary.cycle, boundary.kind))
                    if boundaries.count > limits.maxEvents { overflow = true; return false }
                    return true
                }
                if overflow { break }
            }
            boundaries.sort { ($0.time, $0.cycle, $0.kind.rawValue) < ($1.time, $1.cycle, $1.kind.rawValue) }
            var previous: (time: Double, cycle: Int, kind: CycleTiming.Boundary.Kind)?
            for boundary in boundaries {
                if let previous, previous.cycle == boundary.cycle, previous.kind == boundary.kind,
                   abs(previous.time - boundary.time) < timeEpsilon { continue }
                previous = boundary
                let kind: TimelineEvent.Kind = boundary.kind == .reversed ? .reversed : .repeated
                if !emit(TimelineEvent(time: boundary.time, kind: kind, motion: node.id)) { break }
            }
            if let end = node.end { _ = emit(TimelineEvent(time: end, kind: .completed, motion: node.id)) }
        }
        if overflow {
            throw DocumentError([Problem(pointer: "", message: "the result would hold more than \(limits.maxEvents) events (max-events); sample a shorter window", kind: .invalid)])
        }
        // Stable: generation order is causal order at one instant.
        return events.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }
}

/// One property of one node, with its absolute schedule.
struct PropertyMotion {
    /// Position in the document (pre-order), for ties.
    var order: Int
    var nodeIndex: Int
    /// Absolute start time (after delays).
    var start: Double
    var timing: CycleTiming
    var property: TweenProperty
    var easing: Easing
    var reverseEasing: Easing
}

/// One node's place in the absolute schedule.
struct ScheduledNode {
    var index: Int
    var id: String
    var pointer: String
    var start: Double
    /// nil when it never ends.
    var end: Double?
}

/// Walks the node tree once and lays out every node and property on absolute time.
struct SchedulePlanner {
    var nodes: [ScheduledNode] = []
    var propertyMotions: [PropertyMotion] = []

    /// Plans `node` starting at absolute time `t0`; returns its end (nil if infinite).
    @discardableResult
    mutating func plan(_ node: MotionNode, at t0: Double) -> Double? {
        switch node {
        case .tween(let tween): return plan(tween, at: t0)
        }
    }

    mutating func plan(_ tween: TweenNode, at t0: Double) -> Double? {
        let nodeIndex = nodes.count
        nodes.append(ScheduledNode(index: nodeIndex, id: tween.id, pointer: tween.pointer, start: t0 + tween.timing.delay, end: nil))
        var start = Double.infinity
        var end: Double? = t0 + tween.timing.delay
        for property in tween.properties {
            let timing = CycleTiming(legDuration: property.duration ?? tween.duration ?? 0,
                                     reverses: tween.timing.reverses,
                                     repetition: tween.timing.repetition,
                                     repeatDelay: tween.timing.repeatDelay)
            let propertyStart = t0 + (property.delay ?? tween.timing.delay)
            start = min(start, propertyStart)
            if let active = timing.activeDuration, let current = end {
                end = max(current, propertyStart + active)
            } else {
                end = nil
            }
            let easing = property.easing ?? tween.easing
            propertyMotions.append(PropertyMotion(order: propertyMotions.count, nodeIndex: nodeIndex, start: propertyStart,
                                                  timing: timing, property: property, easing: easing,
                                                  reverseEasing: tween.reverseEasing ?? easing))
        }
        if start.isFinite { nodes[nodeIndex].start = start }
        nodes[nodeIndex].end = end
        return end
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

    mutating func add(_ motion: PropertyMotion) {
        let property = motion.property
        let toLeaves = ValueShape.leaves(of: property.to)
        var fromValues: [Double] = []
        let template: JSON
        if let from = property.from {
            let fromLeaves = ValueShape.leaves(of: from)
            guard fromLeaves.map(\.relative) == toLeaves.map(\.relative) else {
                diagnostics.invalid(property.pointer + "/from", "has a different shape from 'to' at '\(property.path)': \(ValueShape.describe(from)) vs \(ValueShape.describe(property.to))")
                return
            }
            fromValues = fromLeaves.map(\.value)
            template = from
        } else {
            for leaf in toLeaves {
                let leafPath = PropertyPath(segments: property.path.segments + leaf.relative)
                guard let value = currentValue(leafPath, at: motion.start) else {
                    let found = property.path.lookup(in: target)
                    let detail = found.map { ", where target has \(ValueShape.describe($0)) at '\(property.path)'" } ?? ""
                    diagnostics.invalid(property.pointer + "/path", "no value at '\(leafPath)' in target, and no 'from'\(detail)")
                    return
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
            let curve = TweenCurve(from: from, to: leaf.value, timing: motion.timing,
                                   easing: motion.easing, reverseEasing: motion.reverseEasing)
            tracks[index].append(start: motion.start, curve: .tween(curve))
            leaves.append((leaf.relative, index))
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
