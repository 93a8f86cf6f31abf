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
    /// Tracks layout: `{"path":` for the first track, `,"path":` for each next one (escaped as
    /// `JSONWriter.key` escapes), made once; `trackKeyEnds[k]` is where track k's ends.
    private let trackKeys: [UInt8]
    private let trackKeyEnds: [Int]
    /// Where a frame line is written before it is appended (reused from frame to frame).
    private var line: [UInt8] = []
    /// The text of every frame time, shared with the answers and streams on this frame grid
    /// (nil for a grid too long to keep, or the frames layout): see `TimesTextCache`.
    private let timeTexts: TimesTextCache.Entry?

    public init(timeline: Timeline, format: Format) {
        self.timeline = timeline
        self.format = format
        self.eventFrames = timeline.options.events ? timeline.events.map { timeline.frameIndex(at: $0.time) } : []
        var keys = JSONWriter(capacity: 0)
        var ends: [Int] = []
        for (index, track) in timeline.tracks.enumerated() {
            keys.byte(UInt8(ascii: index == 0 ? "{" : ","))
            keys.key(track.path)
            ends.append(keys.bytes.count)
        }
        trackKeys = keys.bytes
        trackKeyEnds = ends
        timeTexts = timeline.options.layout == .tracks ? TimesTextCache.shared.entry(for: timeline) : nil
    }

    public var isFinished: Bool { nextFrame > timeline.frameCount }

    /// Virtual time of the next frame, or nil when only the end line (or nothing) is left.
    public var nextFrameTime: Double? {
        nextFrame < timeline.frameCount ? timeline.time(ofFrame: nextFrame) : nil
    }

    /// The events the next frame carries (found by bisection).
    public var eventsOnNextFrame: Int {
        var low = nextEvent, high = eventFrames.count
        while low < high {
            let middle = low + (high - low) / 2
            if eventFrames[middle] <= nextFrame { low = middle + 1 } else { high = middle }
        }
        return low - nextEvent
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
            // Sampled into a local, swapped with the stored buffer: passing the stored
            // `values` inout while calling a method of the stored `timeline` made a copy of
            // the timeline, retaining and releasing each of its references. With the same
            // for `line` below: 2,897 → 2,840 instructions a streamed frame (callgrind, 200
            // streams; Benchmarks/README.md "Where a streamed frame's user-space time goes").
            var values: [Double] = []
            swap(&values, &self.values)
            defer { swap(&values, &self.values) }
            timeline.sample(at: t, into: &values)
            switch timeline.options.layout {
            case .tracks:
                writeTracksFrameLine(time: t, values: values, into: &w.bytes)
            case .frames:
                begin(&w, event: "frame")
                w.raw("{\"frame\":")
                w.integer(nextFrame)
                w.raw(",\"time\":")
                w.number(t)
                w.raw(",\"values\":")
                TimelineEncoder.writeWholeValues(timeline, values, into: &w)
                w.raw("}")
                finish(&w)
            }
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

    /// The frame line of the tracks layout, `{"frame":N,"time":T,"values":{"path":V,…}}` and
    /// its line end (SSE: with its `event:`/`data:` framing), written without checks into one
    /// buffer sized for its longest text and appended at once: the same bytes as writing it
    /// piece by piece with `JSONWriter` (`FrameStreamEncoderTests`), without a
    /// capacity check and a copy for each of its dozen pieces. A stream frame of one track
    /// went from about 3,330 to 2,410 instructions (callgrind, Benchmarks/README.md "Direct
    /// writes"); copying the time's text from `timeTexts` rather than formatting it, 3,767
    /// → 3,503 (200 streams, the `TimesTextCache` measurement).
    private mutating func writeTracksFrameLine(time t: Double, values: [Double], into bytes: inout [UInt8]) {
        let count = values.count
        let longest = 64 + trackKeys.count + count * (JSONWriter.maxNumberBytes + 1) + JSONWriter.maxNumberBytes * 2
        var line: [UInt8] = []
        swap(&line, &self.line)
        defer { swap(&line, &self.line) }
        if line.count < longest { line = [UInt8](repeating: 0, count: longest) }
        let frame = nextFrame, sse = format == .serverSentEvents
        let written = line.withUnsafeMutableBufferPointer { buffer in
            trackKeys.withUnsafeBufferPointer { keys in
                values.withUnsafeBufferPointer { values in
                    JSONWriter.withNumberTable { table -> Int in
                        let p = buffer.baseAddress!
                        var i = sse ? TimelineEncoder.copy("event: frame\ndata: ", to: p) : 0
                        i &+= TimelineEncoder.copy("{\"frame\":", to: p + i)
                        let digits = ShortestDouble.decimalLength(UInt64(frame))
                        ShortestDouble.writeDigits(UInt64(frame), count: digits, to: p + i)
                        i &+= digits
                        i &+= TimelineEncoder.copy(",\"time\":", to: p + i)
                        if let timeTexts, frame < timeTexts.count {
                            i &+= timeTexts.copy(frame: frame, to: p + i)
                        } else {
                            i &+= JSONWriter.write(t, to: p + i, table: table)
                        }
                        i &+= TimelineEncoder.copy(",\"values\":", to: p + i)
                        if count == 0 {
                            p[i] = UInt8(ascii: "{")
                            i &+= 1
                        }
                        var start = 0
                        for k in 0..<count {
                            let end = trackKeyEnds[k]
                            (p + i).update(from: keys.baseAddress! + start, count: end &- start)
                            i &+= end &- start
                            start = end
                            i &+= JSONWriter.write(values[k], to: p + i, table: table)
                        }
                        i &+= TimelineEncoder.copy(sse ? "}}\n\n" : "}}\n", to: p + i)
                        return i
                    }
                }
            }
        }
        line.withUnsafeBufferPointer { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[0..<written])) }
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
