/// Upper bounds on the bytes the encoders write for a compiled timeline, computed before
/// anything is encoded (issue #19): the output of a document can be ~100,000× its size (a
/// long node `id` in every event, a whole array value in every `frames` row, a long property
/// path as a key in every row, every event on one stream frame).
///
/// Every number is counted at its longest form (`JSONWriter` writes at most 24 bytes for a
/// `Double`, 20 for an integer), every string at its exact escaped length, and the fixed JSON
/// text around them generously; so the estimate is never below what is written, and for
/// ordinary documents is within a small factor of it.
public enum OutputSize {
    /// `-2.2250738585072014e-308`.
    static let numberBytes = 24
    /// `-9223372036854775808` and a bit.
    static let integerBytes = 20
    /// An event in either form, without its `motion` string: `{"time":…,"frame":…,"type":
    /// "completed","motion":,"step":…}` plus a separator, or the stream form with its SSE
    /// framing (`event: motion\ndata: ` … `\n\n`).
    static let eventBytes = 24 + 2 * integerBytes + 96

    /// Where the output goes, which decides what must fit in the limit.
    public enum Use: Sendable, Equatable {
        /// The whole `POST /v1/timelines` body.
        case response
        /// `/v1/streams`: each frame with the events on it is written in one piece.
        case stream
        /// A session: a watcher's fill holds up to `backlogFrames` frames and the timeline's
        /// events (and the session state document one frame's values).
        case session(backlogFrames: Int)
    }

    /// The bound for `use`. `limit` only lets it stop early (once the total exceeds `limit`
    /// the exact escaped lengths of the remaining strings are not measured), so the work
    /// is bounded by the limit, not by the (possibly huge) output.
    public static func estimate(_ timeline: Timeline, for use: Use, limit: Int = .max) -> Double {
        switch use {
        case .response: return response(timeline, limit: limit)
        case .stream: return largestStreamFrame(timeline, limit: limit)
        case .session(let backlog):
            // The backlog, not the frame count: a retarget can lengthen the window later.
            let frames = Double(max(1, backlog))
            return frames * (frameLineOverhead + trackRowBytes(timeline))
                + eventsBytes(timeline.events, limit: limit) + 1024
        }
    }

    /// The longest a session watcher's frame line can be (without events).
    public static func sessionFrameBytes(_ timeline: Timeline) -> Double {
        frameLineOverhead + trackRowBytes(timeline)
    }

    // MARK: - Pieces

    /// The escaped length of `text` as `JSONWriter.string` writes it, quotes included.
    ///
    /// Over the string's contiguous bytes (`withUTF8`) rather than `String.UTF8View`'s
    /// indexes: the small document's compilation, 25,475 → 25,234 instructions (callgrind,
    /// release; a few short strings). `OutputSizeTests` holds it to what is written.
    static func stringBytes(_ text: String) -> Int {
        var text = text
        return text.withUTF8 { bytes in
            var count = 2 &+ bytes.count
            for b in bytes where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                // `\n`, `\r`, `\t`, `\"` and `\\` take one byte more; other controls `\u00XX`, five.
                count &+= b == 0x0A || b == 0x0D || b == 0x09 || b >= 0x20 ? 1 : 5
            }
            return count
        }
    }

    /// `stringBytes` for many strings that mostly share storage (every event of a node carries
    /// the same `id` string): a long string is measured once per distinct buffer.
    struct StringMeasure {
        private var cache: [Key: Int] = [:]
        private struct Key: Hashable {
            let address: UInt
            let count: Int
        }

        mutating func bytes(_ text: String) -> Int {
            let count = text.utf8.count
            if count <= 64 { return stringBytes(text) }
            let address = text.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) }
            guard let address else { return stringBytes(text) }
            let key = Key(address: address, count: count)
            if let known = cache[key] { return known }
            let measured = stringBytes(text)
            cache[key] = measured
            return measured
        }
    }

    /// An upper bound on `JSONWriter.value(json)` with every number at its longest.
    static func valueBytes(_ json: JSON) -> Int {
        switch json {
        case .null, .bool: return 5
        case .number: return numberBytes
        case .string(let s): return stringBytes(s)
        case .array(let items): return 2 + items.reduce(0) { $0 + valueBytes($1) + 1 }
        case .object(let object): return 2 + object.pairs.reduce(0) { $0 + stringBytes($1.key) + 2 + valueBytes($1.value) }
        }
    }

    /// A whole property value (`frames` rows, `final`): its template, with room for every
    /// leaf a track writes into it, or a quoted `#rrggbbaa`.
    static func outputBytes(_ output: Timeline.PropertyOutput) -> Int {
        switch output.kind {
        case .value(let template, let leaves): return valueBytes(template) + leaves.count * numberBytes
        case .colour: return 12
        }
    }

    /// `{path: wholeValue, …}` of one `frames` row.
    static func wholeRowBytes(_ timeline: Timeline) -> Double {
        Double(timeline.outputs.reduce(2) { $0 + stringBytes($1.path.description) + 2 + outputBytes($1) })
    }

    /// `{trackPath: number, …}` of one stream or session frame in the tracks layout.
    static func trackRowBytes(_ timeline: Timeline) -> Double {
        Double(timeline.tracks.reduce(2) { $0 + stringBytes($1.path) + 2 + numberBytes })
    }

    /// `event: frame\ndata: {"frame":…,"time":…,"values":` … `}\n\n`.
    static let frameLineOverhead = Double(64 + integerBytes + numberBytes)

    /// The events, each with its `motion` string; stops measuring strings past `limit`.
    static func eventsBytes(_ events: [TimelineEvent], limit: Int) -> Double {
        // A cheap lower bound first (utf8.count is O(1)): a huge total is refused without
        // scanning every id.
        var lower = 0.0
        for event in events { lower += Double(eventBytes + event.motion.utf8.count) }
        if lower > Double(limit) { return lower }
        var total = 0.0
        var measure = StringMeasure()
        for event in events {
            total += Double(eventBytes + measure.bytes(event.motion))
        }
        return total
    }

    /// The whole `/v1/timelines` body (`TimelineEncoder.encode`).
    static func response(_ timeline: Timeline, limit: Int) -> Double {
        let frames = Double(timeline.frameCount)
        var total = 256.0
        switch timeline.options.layout {
        case .tracks:
            total += frames * Double(numberBytes + 1) + 32
            for track in timeline.tracks {
                total += Double(32 + stringBytes(track.path)) + frames * Double(numberBytes + 1)
            }
        case .frames:
            total += frames * (Double(32 + numberBytes) + wholeRowBytes(timeline))
        }
        if total > Double(limit) { return total }
        if timeline.options.events {
            total += eventsBytes(timeline.events, limit: limit) + 16
        }
        if let schedule = timeline.schedule {
            for node in schedule.nodes { total += Double(64 + 2 * numberBytes + stringBytes(node.motion)) }
            for label in schedule.labels { total += Double(8 + numberBytes + stringBytes(label.name)) }
        }
        if timeline.options.final {
            // `target` with every output written into it, creating objects along its path.
            total += Double(valueBytes(.object(timeline.target)) + 16)
            for output in timeline.outputs {
                total += Double(stringBytes(output.path.description) + 4 * output.path.segments.count + outputBytes(output))
            }
        }
        return total
    }

    /// The largest piece a stream writes at once (`FrameStreamEncoder.writeNext`): a frame
    /// line and the event lines on that frame.
    static func largestStreamFrame(_ timeline: Timeline, limit: Int) -> Double {
        let row = timeline.options.layout == .tracks ? trackRowBytes(timeline) : wholeRowBytes(timeline)
        var largestEvents = 0.0
        if timeline.options.events, !timeline.events.isEmpty {
            // Events are in time order, so those on one frame are adjacent.
            var frame = -1
            var onFrame = 0.0
            var lower = 0.0
            for event in timeline.events { lower += Double(eventBytes + event.motion.utf8.count) }
            // Too much to scan: every byte counted at its longest escape instead.
            let exact = lower <= Double(limit)
            var measure = StringMeasure()
            for event in timeline.events {
                let k = timeline.frameIndex(at: event.time)
                if k != frame {
                    frame = k
                    onFrame = 0
                }
                onFrame += Double(eventBytes + (exact ? measure.bytes(event.motion) : 6 * event.motion.utf8.count + 2))
                largestEvents = max(largestEvents, onFrame)
            }
        }
        return frameLineOverhead + row + largestEvents
    }
}
