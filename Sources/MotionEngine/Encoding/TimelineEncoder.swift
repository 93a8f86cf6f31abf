/// Writes the `POST /v1/timelines` response body (docs/documents.md): the `json` format.
/// With `output.simplify` each track is its reduced keyframes instead of one value per frame
/// (docs/exports.md): `{path, times, values, error}` (+ `slopes` for cubic) and no top-level `times`.
public enum TimelineEncoder: TimelineFormatEncoder {
    public static let contentType = "application/json"

    public static func encode(timeline: Timeline) throws(DocumentError) -> [UInt8] {
        guard let simplify = timeline.options.simplify, timeline.options.layout == .tracks else {
            let bytes = encode(timeline)
            // Sampling stops early, at its next look, once the computation is cancelled
            // (`Cancellation`): what it wrote is then cut short, and thrown away here.
            try Cancellation.check()
            return bytes
        }
        let reduced = try TimelineExport.reduce(timeline, tolerance: simplify.tolerance, interpolation: simplify.interpolation)
        return encode(timeline, reduced: reduced)
    }

    /// Samples written between two looks for a cancellation where a loop writes frames
    /// (the frames layout; `csv`): about 3 ms of writing, 6 ms of `csv` (release build).
    static let samplesPerLook = 65_536

    /// The body, with `reduced` (one per track, tracks layout) in place of the frame grid.
    public static func encode(_ timeline: Timeline, reduced: [ReducedTrack]? = nil) -> [UInt8] {
        // Reserve for the samples up to the default sample limit; beyond it (a raised limit)
        // the buffer grows as it is written. Saturating: a product that overflows must not trap.
        let (samples, overflow) = timeline.frameCount.multipliedReportingOverflow(by: max(1, timeline.tracks.count))
        var w = JSONWriter(capacity: 256 + (overflow ? 2_000_000 : min(samples, 2_000_000)) * 20)
        w.raw("{\"fps\":")
        w.number(timeline.fps)
        w.raw(",\"duration\":")
        if let duration = timeline.duration { w.number(duration) } else { w.raw("null") }
        w.raw(",\"frameCount\":")
        w.integer(timeline.frameCount)
        w.raw(",\"window\":{\"start\":")
        w.number(timeline.window.start)
        w.raw(",\"end\":")
        w.number(timeline.window.end)
        w.raw("}")

        switch timeline.options.layout {
        case .tracks where reduced != nil:
            w.raw(",\"tracks\":[")
            for (index, track) in timeline.tracks.enumerated() {
                if index > 0 { w.byte(UInt8(ascii: ",")) }
                let keys = reduced![index]
                w.raw("{\"path\":")
                w.string(track.path)
                w.raw(",\"times\":")
                writeNumbers(keys.times, into: &w)
                w.raw(",\"values\":")
                writeNumbers(keys.values, into: &w)
                if let slopes = keys.slopes {
                    w.raw(",\"slopes\":[")
                    for (k, slope) in slopes.enumerated() {
                        if k > 0 { w.byte(UInt8(ascii: ",")) }
                        w.byte(UInt8(ascii: "["))
                        w.number(slope.incoming)
                        w.byte(UInt8(ascii: ","))
                        w.number(slope.outgoing)
                        w.byte(UInt8(ascii: "]"))
                    }
                    w.raw("]")
                }
                w.raw(",\"error\":")
                w.number(keys.error)
                w.raw("}")
            }
            w.raw("]")
        case .tracks:
            writeFrameGrid(timeline, into: &w)
        case .frames:
            w.raw(",\"frames\":[")
            var values: [Double] = []
            var looks = PeriodicLook(every: samplesPerLook)
            for k in 0..<timeline.frameCount {
                // Cut short when cancelled: thrown away (`encode(timeline:)`).
                if looks.isRequested(after: timeline.tracks.count &+ 1) { break }
                if k > 0 { w.byte(UInt8(ascii: ",")) }
                let t = timeline.time(ofFrame: k)
                timeline.sample(at: t, into: &values)
                w.raw("{\"time\":")
                w.number(t)
                w.raw(",\"values\":")
                writeWholeValues(timeline, values, into: &w)
                w.raw("}")
            }
            w.raw("]")
        }

        if timeline.options.events {
            w.raw(",\"events\":[")
            for (index, event) in timeline.events.enumerated() {
                if index > 0 { w.byte(UInt8(ascii: ",")) }
                writeEvent(event, frame: timeline.frameIndex(at: event.time), streamForm: false, into: &w)
            }
            w.raw("]")
        }
        if let schedule = timeline.schedule { writeSchedule(schedule, into: &w) }
        if timeline.options.final {
            w.raw(",\"final\":")
            w.value(.object(timeline.document(at: timeline.window.end)))
        }
        w.raw("}")
        return w.bytes
    }

    /// `,"times":[…],"tracks":[{"path":…,"values":[…]},…]`: the frame grid of the tracks layout.
    ///
    /// Sampling and encoding fused: the sample times are computed once for every track; each
    /// track is sampled over all of them at once (`Track.values(at:into:cache:)`: a cursor
    /// over its segments, curves evaluated in place, tween progress shared between tracks)
    /// into one reused buffer, and its numbers written without checks into one reused text
    /// buffer sized for the longest number (`JSONWriter.write(_:to:)`), appended to the
    /// answer in one copy. The bytes are those of `number(_:)` for `track.value(at:)`.
    ///
    /// Cost (callgrind, release, `make bench-instructions`): the 100-track × 601-frame request
    /// went from 1,788 to 681 instructions a sample with the sampler (`Track+Sampling.swift`),
    /// then to 649 with the table fetched once a list and the digits written four at a time
    /// (`ShortestDouble.writeDigits`), then to 631 with the grid written straight into the
    /// answer's buffer, sized once for its longest text (no copy a track, no regrowth); the
    /// small document: 536,773 → 535,697 a request. Then 603 (532,490) with wrapping
    /// arithmetic in `ShortestDouble.shortest`.
    static func writeFrameGrid(_ timeline: Timeline, into w: inout JSONWriter, directLimit: Int = maxDirectBytes) {
        // frameCount is bounded by the compiler's sample limit, so the buffers are too.
        let frameCount = timeline.frameCount
        let frames = max(1, frameCount)
        // Raw buffers, not arrays: a new `[Double]` looks its storage's metadata up at run
        // time here (about 800 instructions; with `Timeline.document(at:)` the small document
        // went from 202,623 to 200,547 a request).
        let timesBuffer = UnsafeMutableBufferPointer<Double>.allocate(capacity: frames)
        defer { timesBuffer.deallocate() }
        for k in 0..<frameCount { timesBuffer[k] = timeline.time(ofFrame: k) }
        let values = UnsafeMutablePointer<Double>.allocate(capacity: frames)
        defer { values.deallocate() }
        var cache = TweenProgressCache(enabled: timeline.tracks.count > 1)
        // The grid's longest text: every number at its longest, every path byte escaped.
        let list = Double(frames) * Double(JSONWriter.maxNumberBytes + 1) + 2
        var longest = Double(w.bytes.count) + 32 + list
        for track in timeline.tracks { longest += 32 + 6 * Double(track.path.utf8.count) + list }
        do {
            let times = UnsafeBufferPointer(rebasing: timesBuffer[0..<frameCount])
            if longest <= Double(directLimit) {
                // The whole grid straight into the answer's one buffer, sized once.
                let capacity = Int(longest) + 4096
                let head = w.bytes
                w.bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                    let p = buffer.baseAddress!
                    head.withUnsafeBufferPointer { if let base = $0.baseAddress { p.initialize(from: base, count: $0.count) } }
                    var i = head.count
                    i &+= writeTimes(times, to: p + i)
                    for (index, track) in timeline.tracks.enumerated() {
                        // A look a track: cut short when cancelled (`encode(timeline:)`).
                        if Cancellation.isRequested { break }
                        if index > 0 { p[i] = UInt8(ascii: ","); i &+= 1 }
                        i &+= writeTrack(track, times, values, &cache, to: p + i)
                    }
                    p[i] = UInt8(ascii: "]")
                    initialized = i &+ 1
                }
                return
            }
            // A grid too large to size at once (raised limits): a track at a time through
            // one buffer, appended.
            let text = UnsafeMutablePointer<UInt8>.allocate(capacity: Int(list) + 32 + 6 * (timeline.tracks.map(\.path.utf8.count).max() ?? 0))
            defer { text.deallocate() }
            w.bytes.append(contentsOf: UnsafeBufferPointer(start: text, count: writeTimes(times, to: text)))
            for (index, track) in timeline.tracks.enumerated() {
                if Cancellation.isRequested { break }
                if index > 0 { w.byte(UInt8(ascii: ",")) }
                w.bytes.append(contentsOf: UnsafeBufferPointer(start: text, count: writeTrack(track, times, values, &cache, to: text)))
            }
            w.byte(UInt8(ascii: "]"))
        }
    }

    /// The largest grid written straight into one buffer sized for its longest text (larger
    /// ones, only possible with raised limits, go a track at a time).
    static let maxDirectBytes = 1 << 28

    /// `,"times":[…],"tracks":[` at `p`; returns the byte count. The list's text comes from
    /// `TimesTextCache` when the same times were written lately (most requests share a
    /// handful of frame grids: the small document's 61 times cost 17,600 instructions to
    /// write, a third of its encoding).
    @inline(__always)
    static func writeTimes(_ times: UnsafeBufferPointer<Double>, to p: UnsafeMutablePointer<UInt8>) -> Int {
        var i = copy(",\"times\":", to: p)
        if let text = TimesTextCache.shared.text(for: times) {
            text.withUnsafeBufferPointer { p.advanced(by: i).update(from: $0.baseAddress!, count: $0.count) }
            i &+= text.count
        } else {
            let count = writeList(times.baseAddress!, times.count, to: p + i)
            TimesTextCache.shared.store(times, text: UnsafeBufferPointer(start: p + i, count: count))
            i &+= count
        }
        return i &+ copy(",\"tracks\":[", to: p + i)
    }

    /// `{"path":…,"values":[…]}` at `p` (room for its longest text); returns the byte count.
    @inline(__always)
    static func writeTrack(_ track: Track, _ times: UnsafeBufferPointer<Double>, _ values: UnsafeMutablePointer<Double>,
                           _ cache: inout TweenProgressCache, to p: UnsafeMutablePointer<UInt8>) -> Int {
        var i = copy("{\"path\":", to: p)
        i &+= JSONWriter.write(string: track.path, to: p + i)
        i &+= copy(",\"values\":", to: p + i)
        track.values(at: times, into: values, cache: &cache)
        i &+= writeList(values, times.count, to: p + i)
        p[i] = UInt8(ascii: "}")
        return i &+ 1
    }

    @inline(__always)
    static func copy(_ text: StaticString, to p: UnsafeMutablePointer<UInt8>) -> Int {
        p.update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        return text.utf8CodeUnitCount
    }

    /// `[n0,n1,…]` at `p` (room for `count · (maxNumberBytes + 1) + 2` bytes); returns the byte count.
    @inline(__always)
    static func writeList(_ numbers: UnsafePointer<Double>, _ count: Int, to p: UnsafeMutablePointer<UInt8>) -> Int {
        JSONWriter.withNumberTable { table in
            p[0] = UInt8(ascii: "[")
            var i = 1
            for k in 0..<count {
                if k > 0 { p[i] = UInt8(ascii: ","); i &+= 1 }
                i &+= JSONWriter.write(numbers[k], to: p + i, table: table)
            }
            p[i] = UInt8(ascii: "]")
            return i &+ 1
        }
    }

    static func writeNumbers(_ numbers: [Double], into w: inout JSONWriter) {
        w.byte(UInt8(ascii: "["))
        for (k, n) in numbers.enumerated() {
            if k > 0 { w.byte(UInt8(ascii: ",")) }
            w.number(n)
        }
        w.byte(UInt8(ascii: "]"))
    }

    /// `{path: value}` for every track (tracks layout) at the current values.
    public static func writeTrackValues(_ timeline: Timeline, _ values: [Double], into w: inout JSONWriter) {
        w.byte(UInt8(ascii: "{"))
        for (index, track) in timeline.tracks.enumerated() {
            if index > 0 { w.byte(UInt8(ascii: ",")) }
            w.key(track.path)
            w.number(values[index])
        }
        w.byte(UInt8(ascii: "}"))
    }

    /// `{propertyPath: wholeValue}` for every property (frames layout).
    static func writeWholeValues(_ timeline: Timeline, _ values: [Double], into w: inout JSONWriter) {
        w.byte(UInt8(ascii: "{"))
        for index in timeline.outputs.indices {
            if index > 0 { w.byte(UInt8(ascii: ",")) }
            w.key(timeline.outputs[index].path.description)
            w.value(timeline.wholeValue(of: index, trackValues: values))
        }
        w.byte(UInt8(ascii: "}"))
    }

    /// An event object. The stream form starts with `"event": type`; the response form has
    /// `"type"` (docs/streams-and-sessions.md).
    public static func writeEvent(_ event: TimelineEvent, frame: Int, streamForm: Bool, into w: inout JSONWriter) {
        if streamForm {
            w.raw("{\"event\":")
            w.string(event.kind.rawValue)
            w.raw(",\"time\":")
            w.number(event.time)
            w.raw(",\"frame\":")
            w.integer(frame)
        } else {
            w.raw("{\"time\":")
            w.number(event.time)
            w.raw(",\"frame\":")
            w.integer(frame)
            w.raw(",\"type\":")
            w.string(event.kind.rawValue)
        }
        w.raw(",\"motion\":")
        w.string(event.motion)
        if let step = event.step {
            w.raw(",\"step\":")
            w.integer(step)
        }
        w.raw("}")
    }
}

extension TimelineEncoder {
    /// `"schedule": [{"motion", "start", "end"}]` and `"labels": {name: time}` (docs/authoring.md).
    static func writeSchedule(_ schedule: Timeline.Schedule, into w: inout JSONWriter) {
        w.raw(",\"schedule\":[")
        for (index, node) in schedule.nodes.enumerated() {
            if index > 0 { w.byte(UInt8(ascii: ",")) }
            w.raw("{\"motion\":")
            w.string(node.motion)
            w.raw(",\"start\":")
            w.number(node.start)
            w.raw(",\"end\":")
            if let end = node.end { w.number(end) } else { w.raw("null") }
            w.raw("}")
        }
        w.raw("],\"labels\":{")
        for (index, label) in schedule.labels.enumerated() {
            if index > 0 { w.byte(UInt8(ascii: ",")) }
            w.key(label.name)
            w.number(label.time)
        }
        w.raw("}")
    }
}
