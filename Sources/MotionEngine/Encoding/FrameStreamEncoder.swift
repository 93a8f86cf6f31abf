/// Produces the lines of a frame stream (docs/README.md) one frame at a time: the frame, then the
/// events that fall on it, and finally the `end` line. Used by `/v1/streams`; the caller
/// decides when each frame is due.
public struct FrameStreamEncoder: Sendable {
    public enum Format: Sendable {
        /// `application/x-ndjson`: one JSON object per line.
        case ndjson
        /// `text/event-stream`: `event: frame|motion|end` + `data:` lines.
        case serverSentEvents
    }

    public let timeline: Timeline
    public let format: Format
    /// Index of the next frame to write.
    public private(set) var nextFrame = 0
    private var nextEvent = 0
    private var values: [Double] = []
    private var eventFrames: [Int]

    public init(timeline: Timeline, format: Format) {
        self.timeline = timeline
        self.format = format
        self.eventFrames = timeline.options.events ? timeline.events.map { timeline.frameIndex(at: $0.time) } : []
    }

    public var isFinished: Bool { nextFrame > timeline.frameCount }

    /// Virtual time of the next frame, or nil when only the end line (or nothing) is left.
    public var nextFrameTime: Double? {
        nextFrame < timeline.frameCount ? timeline.time(ofFrame: nextFrame) : nil
    }

    /// Appends the next frame with its events (or, after the last frame, the end line).
    public mutating func writeNext(into bytes: inout [UInt8]) {
        // The writer takes the caller's buffer (reused from frame to frame by the stream): a
        // buffer of its own would be allocated and freed on every frame for nothing.
        // Under callgrind (40 streams, 60 fps, 4 s; Benchmarks/README.md, "Session
        // watchers, the frame writer"): writeNext 3,803 → 3,486 instructions a frame.
        var w = JSONWriter(capacity: 0)
        swap(&w.bytes, &bytes)
        defer { swap(&w.bytes, &bytes) }
        if nextFrame < timeline.frameCount {
            let t = timeline.time(ofFrame: nextFrame)
            timeline.sample(at: t, into: &values)
            begin(&w, event: "frame")
            w.raw("{\"frame\":")
            w.integer(nextFrame)
            w.raw(",\"time\":")
            w.number(t)
            w.raw(",\"values\":")
            switch timeline.options.layout {
            case .tracks: TimelineEncoder.writeTrackValues(timeline, values, into: &w)
            case .frames: TimelineEncoder.writeWholeValues(timeline, values, into: &w)
            }
            w.raw("}")
            finish(&w)
            while nextEvent < eventFrames.count, eventFrames[nextEvent] == nextFrame {
                begin(&w, event: "motion")
                TimelineEncoder.writeEvent(timeline.events[nextEvent], frame: nextFrame, streamForm: true, into: &w)
                finish(&w)
                nextEvent += 1
            }
        } else if nextFrame == timeline.frameCount {
            writeEndLine(&w, interrupted: nil)
        }
        nextFrame += 1
    }

    /// Appends an `end` line now, before the timeline is done: `frames` counts the frames
    /// written and `interrupted` says why (e.g. `"shutdown"`). Nothing may follow it.
    public mutating func writeEnd(into bytes: inout [UInt8], interrupted reason: String) {
        var w = JSONWriter(capacity: 0)
        swap(&w.bytes, &bytes)
        defer { swap(&w.bytes, &bytes) }
        writeEndLine(&w, interrupted: reason)
        nextFrame = timeline.frameCount + 1
    }

    private func writeEndLine(_ w: inout JSONWriter, interrupted reason: String?) {
        begin(&w, event: "end")
        w.raw("{\"end\":true,\"frames\":")
        w.integer(min(nextFrame, timeline.frameCount))
        w.raw(",\"duration\":")
        if let duration = timeline.duration { w.number(duration) } else { w.raw("null") }
        if let reason {
            w.raw(",\"interrupted\":")
            w.string(reason)
        }
        w.raw("}")
        finish(&w)
    }

    private func begin(_ w: inout JSONWriter, event: StaticString) {
        if format == .serverSentEvents {
            w.raw("event: ")
            w.raw(event)
            w.raw("\ndata: ")
        }
    }

    private func finish(_ w: inout JSONWriter) {
        w.raw(format == .serverSentEvents ? "\n\n" : "\n")
    }
}
