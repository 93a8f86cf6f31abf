/// A compiled, immutable timeline: tracks with an absolute schedule, the events in the
/// window, and how to write values back into property shapes. `/v1/timelines`, streams and
/// sessions all sample the same `Timeline`.
public struct Timeline: Sendable {
    public let fps: Double
    public let window: TimeWindow
    /// Total duration of the motion; nil when it never ends.
    public let duration: Double?
    /// Number of samples in the window (docs/documents.md sample-time rule).
    public let frameCount: Int
    public let tracks: [Track]
    /// One entry per distinct property path, in document order (for `frames` and `final`).
    public let outputs: [PropertyOutput]
    /// Events inside the window, in time order and, at one instant, in causal order.
    public let events: [TimelineEvent]
    public let options: OutputOptions
    /// The document's `target`, as given.
    public let target: JSONObject
    /// Every node's start and first cycle end, and the labels, when `output.schedule` asks.
    public var schedule: Schedule? = nil
    /// The limits it was compiled under (the encoders bound their work and output by them).
    public internal(set) var limits = EngineLimits.default
    /// The curve segments compiled for it, as `EngineLimits.maxSegments` counts them (a
    /// spring's 10): about what it holds in memory.
    public internal(set) var segments = 0
    /// Its tracks plus their additive layers: a track's value adds up every additive motion
    /// that has started on it (`Track.value(at:)`), so evaluating one frame costs about this
    /// many curve evaluations. Frames × layers is what `maxSamples` bounds.
    public internal(set) var layers = 0

    /// Tracks plus additive layers of `tracks` (saturating).
    static func layers(of tracks: [Track]) -> Int {
        var total = 0
        for track in tracks {
            let (sum, overflow) = total.addingReportingOverflow(1 &+ track.additive.count)
            total = overflow ? .max : sum
        }
        return total
    }

    /// How a property's whole value is rebuilt from its tracks (`frames` layout, `final`).
    public struct PropertyOutput: Sendable {
        public enum Kind: Sendable {
            /// A number or an object/array of numbers: `template` with its start values,
            /// and the leaves driven by tracks (relative path → index into `tracks`).
            case value(template: JSON, leaves: [(relative: [String], track: Int)])
            /// A colour: its base colour and the channels or components driven by tracks.
            case colour(base: Colour, channels: [(component: String, track: Int)])
        }

        /// The property path (the key in `frames` values).
        public let path: PropertyPath
        public let kind: Kind
        /// For a colour, its channels' tracks found once (nil otherwise).
        let colourRecipe: ColourRecipe?

        public init(path: PropertyPath, kind: Kind) {
            self.path = path
            self.kind = kind
            if case .colour(let base, let channels) = kind {
                colourRecipe = ColourRecipe(base: base, channels: channels)
            } else {
                colourRecipe = nil
            }
        }

        /// The colour, for a colour output: RGB channels first, then HSB components, then alpha.
        @inline(__always)
        func colour(_ value: (Int) -> Double) -> Colour? {
            colourRecipe?.colour(value)
        }

        /// The whole value, given each track's current value.
        func render(_ value: (Int) -> Double) -> JSON {
            switch kind {
            case .value(let template, let leaves):
                var result = template
                for leaf in leaves { Timeline.replaceLeaf(&result, at: leaf.relative[...], with: value(leaf.track)) }
                return result
            case .colour:
                return .string(colour(value)?.hexString ?? "")
            }
        }
    }

    /// A colour output's tracks by component, found once when the output is made, so that
    /// rendering the colour compares no component names and builds no arrays. (An export
    /// renders a colour at hundreds of thousands of instants: a css export of two
    /// declarations of one elastic rgba tween, 8 s at 60 fps, spent 1.50 of its 1.63 billion
    /// instructions rendering the colour by name, of which the curves took 0.31; see
    /// `ColourInstants` for the rest.)
    ///
    /// A class, made once: an output is copied wherever a timeline is, and a number's output
    /// then carries one nil reference, not the recipe's fields (as a struct it cost the
    /// small document about 150 instructions of copying).
    final class ColourRecipe: Sendable {
        let base: Colour
        /// The track of each component, or -1 when none drives it.
        private let red: Int, green: Int, blue: Int, alpha: Int
        private let hue: Int, saturation: Int, brightness: Int

        init(base: Colour, channels: [(component: String, track: Int)]) {
            self.base = base
            var tracks = [Int](repeating: -1, count: Colour.Component.allCases.count)
            for (name, track) in channels {
                if let component = Colour.Component(name) { tracks[component.rawValue] = track }
            }
            (red, green, blue, alpha) = (tracks[0], tracks[1], tracks[2], tracks[3])
            (hue, saturation, brightness) = (tracks[4], tracks[5], tracks[6])
        }

        /// RGB channels first, then HSB components (from the colour so far), then alpha.
        func colour(_ value: (Int) -> Double) -> Colour {
            var colour = base
            if red >= 0 { colour.red = value(red) }
            if green >= 0 { colour.green = value(green) }
            if blue >= 0 { colour.blue = value(blue) }
            if hue >= 0 || saturation >= 0 || brightness >= 0 {
                var hsb = colour.hsb
                if hue >= 0 { hsb.hue = value(hue) }
                if saturation >= 0 { hsb.saturation = value(saturation) }
                if brightness >= 0 { hsb.brightness = value(brightness) }
                colour = Colour(hue: hsb.hue, saturation: hsb.saturation, brightness: hsb.brightness, alpha: colour.alpha)
            }
            if alpha >= 0 { colour.alpha = value(alpha) }
            return colour
        }
    }

    /// Samples in a window (docs/documents.md): `start + k/fps` while that is more than 1 µs before the
    /// end, plus the end itself. The caller bounds the window first.
    public static func frameCount(window: TimeWindow, fps: Double) -> Int {
        let limit = window.end - 1e-6
        var k = max(0, Int(((limit - window.start) * fps).rounded(.up)))
        while k > 0, window.start + Double(k - 1) / fps >= limit { k -= 1 }
        while window.start + Double(k) / fps < limit { k += 1 }
        return k + 1
    }

    /// Time of sample k: `start + k/fps`, and exactly `window.end` for the last one.
    @inline(__always)
    public func time(ofFrame k: Int) -> Double {
        k == frameCount - 1 ? window.end : window.start + Double(k) / fps
    }

    /// The index of the first sample at or after t (clamped to the last sample).
    /// Any t is accepted: the estimate is clamped as a `Double` before it becomes an `Int`
    /// (a far-off, infinite or NaN time would otherwise trap).
    public func frameIndex(at t: Double) -> Int {
        let estimate = (((t - window.start) * fps) - 1e-6).rounded(.up)
        let last = Double(max(0, frameCount - 1))
        var k = estimate >= last ? Int(last) : (estimate > 0 ? Int(estimate) : 0)
        while k > 0, time(ofFrame: k - 1) >= t - timeEpsilon { k -= 1 }
        while k < frameCount - 1, time(ofFrame: k) < t - timeEpsilon { k += 1 }
        return k
    }

    /// The value of every track at time t, written into `values` (resized to `tracks.count`).
    @inline(__always)
    public func sample(at t: Double, into values: inout [Double]) {
        if values.count != tracks.count { values = [Double](repeating: 0, count: tracks.count) }
        for index in tracks.indices { values[index] = tracks[index].value(at: t) }
    }

    /// The whole value of output `index` given every track's current value.
    public func wholeValue(of index: Int, trackValues: [Double]) -> JSON {
        outputs[index].render { trackValues[$0] }
    }

    /// `target` with every animated property as it is at time t.
    /// Each track is read where an output needs it, with no array of every track's value
    /// (a new `[Double]` looks its storage's metadata up at run time: about 800
    /// instructions of the small document's `final`).
    public func document(at t: Double) -> JSONObject {
        var result = target
        for index in outputs.indices {
            outputs[index].path.assign(outputs[index].render { tracks[$0].value(at: t) }, in: &result)
        }
        return result
    }

    static func replaceLeaf(_ node: inout JSON, at path: ArraySlice<String>, with number: Double) {
        guard let head = path.first else {
            node = .number(number)
            return
        }
        // Each container is taken out of its parent while it is written, so that it is the
        // only reference to its storage and is updated in place (as `PropertyPath.assign`).
        if var object = node.takeObject() {
            defer { node = .object(object) }
            guard let position = object.position(of: head) else { return }
            var child = object.takeValue(at: position)
            replaceLeaf(&child, at: path.dropFirst(), with: number)
            object.setValue(child, at: position)
        } else if var items = node.takeArray() {
            defer { node = .array(items) }
            guard let index = Int(head), items.indices.contains(index) else { return }
            replaceLeaf(&items[index], at: path.dropFirst(), with: number)
        }
    }
}

extension Timeline {
    /// About the bytes the timeline keeps besides its curves: the document's `target` as
    /// given (its parsed tree, `JSON.heapBytes`) and its events (48 bytes each). A stream or
    /// live session keeps both for its life, so the live budget counts them: a session of
    /// one tween over an untouched 760 KB target held 13 MB, one of a tween repeated 100,000
    /// times (100,000 events) 4.9 MB, each counted as one segment (found by an adversarial
    /// review: 300 such sessions held 1.5 GB).
    public var retainedBytes: Int {
        let (events, overflow) = events.count.multipliedReportingOverflow(by: MemoryLayout<TimelineEvent>.stride)
        let (sum, overflowed) = JSON.object(target).heapBytes.addingReportingOverflow(overflow ? .max / 2 : events)
        return overflowed ? .max : sum
    }
}

extension JSON {
    /// About the heap a parsed value holds (release build, measured by resident memory):
    /// 40 bytes a value (its 24-byte slot in an array grown by doubling), 64 more an array
    /// or object, 16 more a member (its key beside the value), and a string longer than 15
    /// bytes (not stored inline) 32 plus its bytes. Measured against this: 40,000 `[1.5,
    /// {"k": 2.25}]` held 12.7 MB (13.1 estimated), 100,000 numbers 5.0 MB (4.0), 20,000
    /// objects of two members with long strings 5.6 MB (7.6), an object of 20,000 small
    /// arrays 3.2 MB (4.5). Nesting is bounded by the parser (`JSONParser.defaultMaxDepth`).
    public var heapBytes: Int {
        func string(_ text: String) -> Int {
            let count = text.utf8.count
            return count > 15 ? 32 + count : 0
        }
        switch self {
        case .null, .bool, .number: return 40
        case .string(let text): return 40 + string(text)
        case .array(let items): return items.reduce(104) { $0 &+ $1.heapBytes }
        case .object(let object): return object.pairs.reduce(104) { $0 &+ 16 &+ string($1.key) &+ $1.value.heapBytes }
        }
    }
}
