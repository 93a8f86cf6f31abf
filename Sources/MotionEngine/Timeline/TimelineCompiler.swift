/// Compiles a decoded document into a `Timeline`: resolves every node's absolute schedule and
/// implicit start values, builds the tracks, checks the limits and lists the events.
public struct TimelineCompiler: Sendable {
    public var limits: EngineLimits

    public init(limits: EngineLimits = .default) { self.limits = limits }

    /// Decodes and compiles a request body whose output goes to `use` (its size is checked
    /// against `maxResponseBytes` for that use).
    public func compile(_ body: [UInt8], for use: OutputSize.Use = .response) throws(DocumentError) -> Timeline {
        try compile(DocumentDecoder(limits: limits).decode(body), for: use)
    }

    public func compile(_ document: TimelineDocument, for use: OutputSize.Use = .response) throws(DocumentError) -> Timeline {
        let diagnostics = Diagnostics()
        let endless = Self.checkEndless(document.motion, diagnostics)
        try diagnostics.check()
        if endless, document.window == nil {
            let cause = Self.endlessCause(document.motion) ?? "something repeats forever"
            throw DocumentError([Problem(pointer: "/window", message: "is required: the motion never ends (\(cause)), so give a window {start, end} to sample", kind: .invalid)])
        }

        let scheduler = Scheduler(target: document.target, diagnostics: diagnostics, limits: limits,
                                  horizon: endless ? document.window!.end : .infinity, root: document.motion,
                                  charged: document.pathSegments)
        if endless, let window = document.window { scheduler.windowStart = window.start }
        scheduler.schedule.enabled = document.output.schedule
        let duration = scheduler.run(document.motion)
        try diagnostics.check()
        if let overflow = scheduler.overflow {
            throw DocumentError([Problem(pointer: "", message: overflow, kind: .invalid)])
        }

        let window = document.window ?? TimeWindow(start: 0, end: duration ?? 0)
        let builder = scheduler.builder
        // Each additive layer is evaluated at every frame as a track is: 3,000 layers of one
        // track over 1,000,001 frames took 26 s when only the tracks were counted.
        let layers = Timeline.layers(of: builder.tracks)
        let frameCount = try countFrames(window: window, fps: document.fps, tracks: layers, plainTracks: builder.tracks.count)
        let lower = window.start - timeEpsilon, upper = window.end + timeEpsilon
        // By time; at one instant causes first, otherwise document order (docs/timing-and-events.md).
        let events = EventOrder.sorted(scheduler.events, orders: scheduler.eventOrders, causes: scheduler.eventCauses)
            .filter { $0.time >= lower && $0.time <= upper }

        var timeline = Timeline(fps: document.fps, window: window, duration: endless ? nil : duration, frameCount: frameCount,
                                tracks: builder.tracks, outputs: builder.outputs, events: events,
                                options: document.output, target: document.target)
        if document.output.schedule { timeline.schedule = scheduler.schedule.output }
        timeline.limits = limits
        timeline.segments = builder.segments
        timeline.layers = layers
        try checkOutputSize(timeline, for: use)
        return timeline
    }

    /// Refuses a timeline whose output for `use` could exceed `maxResponseBytes` (422).
    func checkOutputSize(_ timeline: Timeline, for use: OutputSize.Use) throws(DocumentError) {
        let limit = limits.maxResponseBytes
        let bytes = OutputSize.estimate(timeline, for: use, limit: limit)
        guard bytes > Double(limit) else { return }
        let what: String
        switch use {
        case .response: what = "the response"
        case .stream: what = "one stream frame with its events"
        case .session(let backlog): what = "one session watcher read (up to \(backlog) frames and the events)"
        }
        let message = "\(what) would be up to about \(format(bytes.rounded(.up))) bytes, over the limit of \(limit) bytes (max-response-bytes); sample a shorter window or a lower fps, use shorter ids and property paths, or leave out events"
        throw DocumentError([Problem(pointer: "", message: message, kind: .invalid)])
    }

    /// Why a motion never ends, for the message asking for a window: the first node in
    /// document order that repeats forever or is an undamped spring.
    static func endlessCause(_ node: MotionNode) -> String? {
        let header = node.header
        if header.timing.isEndless { return "\(header.pointer) repeats forever" }
        switch node {
        case .spring(let spring) where Scheduler.isUndamped(spring):
            return "the spring at \(header.pointer) is undamped and never comes to rest"
        case .group(let group):
            return group.children.lazy.compactMap(endlessCause).first
        case .sequence(let sequence):
            return sequence.steps.lazy.compactMap(endlessCause).first
        default:
            return nil
        }
    }

    static func checkEndless(_ node: MotionNode, _ diagnostics: Diagnostics) -> Bool {
        let header = node.header
        var endless = false
        switch node {
        case .tween(let tween):
            if header.timing.isEndless {
                endless = true
                let longest = tween.properties.map { $0.duration ?? tween.duration ?? 0 }.max() ?? 0
                if longest <= 0, header.timing.repeatDelay <= 0 {
                    diagnostics.invalid(header.pointer + "/repeat", "an infinitely repeating motion needs a positive duration or repeatDelay")
                }
            }
        case .physics, .decay, .path:
            endless = header.timing.isEndless
        case .spring(let spring):
            endless = header.timing.isEndless || Scheduler.isUndamped(spring)
        case .group(let group):
            let children = group.children.map { checkEndless($0, diagnostics) }
            if let layout = group.layout { layout.checkNeverStarts(endless: children, diagnostics) }
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
        case .path(let path):
            if case .eased(let duration, _, _) = path.drive, duration > 0 { return true }
            return path.header.timing.delay > 0 || path.header.timing.repeatDelay > 0
        case .physics, .spring, .decay:
            // Their length comes from the motion; a repeat delay or delay certainly takes time.
            return node.header.timing.delay > 0 || node.header.timing.repeatDelay > 0
        case .group(let group):
            return group.header.timing.delay > 0 || group.children.contains(where: hasLength)
        case .sequence(let sequence):
            return sequence.header.timing.delay > 0 || sequence.steps.contains(where: hasLength)
        }
    }

    /// Frames in the window by the docs/documents.md rule, checked against the sample limit before
    /// anything is allocated.
    /// `tracks`: the tracks plus their additive layers (`Timeline.layers`); `plainTracks`, the
    /// tracks alone, for the message.
    func countFrames(window: TimeWindow, fps: Double, tracks: Int, plainTracks: Int? = nil) throws(DocumentError) -> Int {
        let estimate = (window.end - window.start) * fps + 2
        let perFrame = Double(max(1, tracks))
        guard estimate * perFrame <= Double(limits.maxSamples) * 1.01 + 2 else {
            throw samplesProblem(frames: estimate, tracks: tracks, plainTracks: plainTracks)
        }
        let frames = Timeline.frameCount(window: window, fps: fps)
        let (samples, overflow) = frames.multipliedReportingOverflow(by: max(1, tracks))
        guard !overflow, samples <= limits.maxSamples else {
            throw samplesProblem(frames: Double(frames), tracks: tracks, plainTracks: plainTracks)
        }
        return frames
    }

    private func samplesProblem(frames: Double, tracks: Int, plainTracks: Int?) -> DocumentError {
        let what = plainTracks.flatMap { plain in
            plain < tracks ? "\(max(1, plain)) track\(plain == 1 ? "" : "s") with \(tracks - max(1, plain)) additive layers (each evaluated at every frame)" : nil
        }
        let message = "the result would hold about \(format(frames.rounded())) frames × \(what ?? "\(max(1, tracks)) tracks"), over the limit of \(limits.maxSamples) samples (max-samples); sample a shorter window or a lower fps"
        return DocumentError([Problem(pointer: "", message: message, kind: .invalid)])
    }
}
