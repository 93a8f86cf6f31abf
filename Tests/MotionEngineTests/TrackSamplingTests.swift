import XCTest
@testable import MotionEngine

/// `Track.values(at:into:cache:)` (the frame grid's sampler) gives `Track.value(at:)` bit for
/// bit, and the `json` answer's grid is `JSONWriter.number` of those values.
final class TrackSamplingTests: XCTestCase {
    /// Documents that reach every branch of the sampler: several segments a track, reverse
    /// legs and repeats with delays, play limits, additive motions, bounds, a hue, keyframes,
    /// springs, physics, `linear(…)` ending below 1, and tracks that share a tween's progress.
    static let documents = [
        #"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":"quadratic.inOut","properties":[{"path":"x","to":320}]}}"#,
        #"{"fps":30,"motion":{"type":"tween","duration":2,"easing":"ease-in-out","properties":[{"path":"a","from":0,"to":100},{"path":"b","from":5,"to":-7.25},{"path":"c","from":1e-9,"to":3e14}]}}"#,
        #"{"fps":24,"window":{"start":0,"end":5},"target":{"x":0,"y":0},"motion":{"type":"tween","duration":0.7,"reverses":true,"repeat":"infinite","repeatDelay":0.3,"easing":"back.out","properties":[{"path":"x","to":10},{"path":"y","to":-3}]}}"#,
        #"{"fps":10,"target":{"x":0},"motion":{"type":"sequence","reverses":true,"reversingMode":"contiguous","steps":[{"type":"tween","duration":1,"properties":[{"path":"x","to":5}]},{"type":"tween","duration":0.5,"easing":"bounce.out","properties":[{"path":"x","to":-5}]}]}}"#,
        #"{"fps":2,"target":{"x":0},"motion":{"type":"tween","duration":1,"reverses":true,"easing":"linear(0, 0.5, 0.8)","properties":[{"path":"x","to":100}]}}"#,
        #"{"fps":60,"target":{"x":0},"motion":{"type":"spring","response":0.5,"dampingRatio":0.3,"properties":[{"path":"x","to":1,"bounds":{"min":0,"max":0.5,"mode":"clamp"}}]}}"#,
        #"{"fps":60,"target":{"x":0},"motion":{"type":"physics","velocity":100,"friction":0.5,"properties":[{"path":"x","bounds":{"min":0,"max":100,"mode":"rubberband"}}]}}"#,
        #"{"fps":20,"target":{"x":0},"motion":{"type":"group","children":[{"type":"tween","duration":1,"properties":[{"path":"x","to":50}]},{"type":"physics","velocity":10,"friction":0.5,"additive":true,"properties":[{"path":"x"}]}]}}"#,
        #"{"fps":8,"target":{"x":10},"motion":{"type":"tween","duration":2,"additive":true,"properties":[{"path":"x","keyframes":[0,20,0]}]}}"#,
        ##"{"fps":30,"target":{"tint":"#ff00ff"},"motion":{"type":"tween","duration":1,"properties":[{"path":"tint.hue","to":60}]}}"##,
        #"{"fps":12,"target":{"x":0,"y":0},"motion":{"type":"group","stagger":{"each":0.25},"children":[{"type":"tween","duration":1,"easing":"steps(4, jump-both)","properties":[{"path":"x","to":1}]},{"type":"tween","duration":1,"easing":"steps(4, jump-both)","properties":[{"path":"y","to":1}]}]}}"#,
    ]

    /// A single forward leg's phase, with its lengths worked out once in `CycleTiming.init`,
    /// is exactly that of the same leg with a play limit far beyond every τ, which goes
    /// through the play-limit check and the `min` of the active duration (still the leg's).
    func testSingleLegPhaseIsTheGeneralPhase() {
        var generator = SystemRandomNumberGenerator()
        let lengths: [Double] = [0, 5e-324, 1e-12, 1e-9, 2e-9, 0.1, 1, 1.0 / 3, 7.25, 1e6, 1e15, 1e300, .infinity]
        for length in lengths {
            let single = CycleTiming(legDuration: length)
            let general = CycleTiming(legDuration: length, playLimit: .greatestFiniteMagnitude)
            var taus: [Double] = [-.infinity, -1, -0.0, 0, 5e-324, 1e-9, length, length - 1e-9, length + 1e-9,
                                  length.nextDown, length.nextUp, length / 2, length * 0.999999, .greatestFiniteMagnitude]
            for _ in 0..<2_000 {
                let u = Double.random(in: -0.1...1.1, using: &generator)
                taus.append(length.isFinite ? u * length : u * 1e6)
                taus.append(Double(bitPattern: generator.next() & 0x7FEF_FFFF_FFFF_FFFF) * (Bool.random(using: &generator) ? 1 : -1))
            }
            for tau in taus where tau < .greatestFiniteMagnitude {
                XCTAssertEqual(single.phase(at: tau), general.phase(at: tau), "length \(length), τ \(tau)")
            }
        }
    }

    func testBatchSamplingMatchesValueAtBitForBit() throws {
        for text in Self.documents {
            let timeline = try compile(text)
            // Forward times, then the same times backward and shuffled (the cursor restarts).
            var orders = [timeline.times, Array(timeline.times.reversed())]
            var shuffled = timeline.times
            var generator = SystemRandomNumberGenerator()
            shuffled.shuffle(using: &generator)
            orders.append(shuffled)
            for times in orders {
                var cache = TweenProgressCache(enabled: true)
                for track in timeline.tracks {
                    var out = [Double](repeating: .nan, count: times.count)
                    times.withUnsafeBufferPointer { t in
                        out.withUnsafeMutableBufferPointer { track.values(at: t, into: $0.baseAddress!, cache: &cache) }
                    }
                    for (k, t) in times.enumerated() {
                        XCTAssertEqual(out[k].bitPattern, track.value(at: t).bitPattern,
                                       "\(track.path) at \(t): \(out[k]) vs \(track.value(at: t)) in \(text)")
                    }
                }
            }
        }
    }

    /// The answer's grid is the per-sample path's numbers, byte for byte.
    func testEncodedGridIsNumberOfValueAt() throws {
        for text in Self.documents {
            let timeline = try compile(text)
            var expected = JSONWriter()
            expected.raw(",\"times\":[")
            for k in 0..<timeline.frameCount {
                if k > 0 { expected.byte(UInt8(ascii: ",")) }
                expected.number(timeline.time(ofFrame: k))
            }
            expected.raw("],\"tracks\":[")
            for (index, track) in timeline.tracks.enumerated() {
                if index > 0 { expected.byte(UInt8(ascii: ",")) }
                expected.raw("{\"path\":")
                expected.string(track.path)
                expected.raw(",\"values\":[")
                for k in 0..<timeline.frameCount {
                    if k > 0 { expected.byte(UInt8(ascii: ",")) }
                    expected.number(track.value(at: timeline.time(ofFrame: k)))
                }
                expected.raw("]}")
            }
            expected.raw("]")
            // Straight into one buffer, and a track at a time (the path for grids too large to size at once).
            for directLimit in [TimelineEncoder.maxDirectBytes, 0] {
                var grid = JSONWriter()
                grid.raw("{\"head\":1")
                TimelineEncoder.writeFrameGrid(timeline, into: &grid, directLimit: directLimit)
                XCTAssertEqual(String(decoding: grid.bytes, as: UTF8.self), "{\"head\":1" + String(decoding: expected.bytes, as: UTF8.self), text)
            }
        }
    }

    /// The frame-times text cache: found bit for bit, never mixed up, bounded, and the grid
    /// written with it is the grid written without it.
    func testTimesTextCacheKeysOnTheTimesBitForBit() throws {
        let cache = TimesTextCache()
        func text(_ times: [Double]) -> String? {
            times.withUnsafeBufferPointer { cache.text(for: $0) }.map { String(decoding: $0, as: UTF8.self) }
        }
        func store(_ times: [Double], _ text: String) {
            _ = times.withUnsafeBufferPointer { t in Array(text.utf8).withUnsafeBufferPointer { cache.store(t, text: $0) } }
        }
        store([0, 0.5, 1], "[0,0.5,1]")
        XCTAssertEqual(text([0, 0.5, 1]), "[0,0.5,1]")
        XCTAssertNil(text([0, 0.5]))
        XCTAssertNil(text([-0.0, 0.5, 1]))  // -0 writes as -0.0: a different key
        XCTAssertNil(text([0, 0.5, 1.0000000000000002]))
        for k in 0..<TimesTextCache.maxEntries { store([Double(k) + 10], "[\(k + 10)]") }
        XCTAssertNil(text([0, 0.5, 1]), "the oldest entry was replaced")
        XCTAssertEqual(text([17]), "[17]")
        let long = [Double](repeating: 1, count: TimesTextCache.maxTimes + 1)
        store(long, "[…]")
        XCTAssertNil(text(long), "longer lists are not kept")

        // Through the encoder: the same timeline twice (the second from the cache), then a
        // grid of other times, then the first again, each equal to a fresh encoding.
        TimesTextCache.shared.removeAll()
        let documents = [Self.documents[1], Self.documents[4], Self.documents[1]]
        var first: [UInt8]?
        for document in documents {
            let timeline = try compile(document)
            var w = JSONWriter()
            TimelineEncoder.writeFrameGrid(timeline, into: &w)
            var expected = JSONWriter()
            expected.raw(",\"times\":")
            TimelineEncoder.writeNumbers(timeline.times, into: &expected)
            XCTAssertEqual(Array(w.bytes.prefix(expected.bytes.count)), expected.bytes, document)
            if document == documents[0] { if let first { XCTAssertEqual(w.bytes, first) } else { first = w.bytes } }
        }
    }

    /// `JSONWriter.write(string:to:)` (no checks) escapes as `string(_:)` does, within its bound.
    func testUncheckedStringMatchesString() {
        let samples = ["", "x", "frame.width", "a\"b\\c", "tab\there\nnew\rline", "\u{01}\u{1f}\u{7f}", "hé", "🎉.x", String(repeating: "\u{0}", count: 40)]
        for value in samples {
            var w = JSONWriter()
            w.string(value)
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: 6 * value.utf8.count + 2)
            defer { p.deallocate() }
            let count = JSONWriter.write(string: value, to: p)
            XCTAssertEqual(Array(UnsafeBufferPointer(start: p, count: count)), w.bytes, value)
        }
    }

    /// `JSONWriter.write(_:to:)` (no checks) writes what `number(_:)` writes, at most `maxNumberBytes`.
    func testUncheckedNumberMatchesNumber() {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [0, -0.0, 1, -1, 1e15, 1e15 - 1, 999_999_999_999_999, 2.5, -2.2250738585072014e-308,
                                .greatestFiniteMagnitude, .leastNonzeroMagnitude, .infinity, -.infinity, .nan, 1e-7, 0.1, 100]
        for _ in 0..<20_000 { values.append(Double(bitPattern: generator.next())) }
        for _ in 0..<20_000 { values.append(Double.random(in: -1000...1000, using: &generator)) }
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: JSONWriter.maxNumberBytes)
        defer { p.deallocate() }
        for value in values {
            var w = JSONWriter()
            w.number(value)
            let count = JSONWriter.write(value, to: p)
            XCTAssertLessThanOrEqual(count, JSONWriter.maxNumberBytes)
            XCTAssertEqual(Array(UnsafeBufferPointer(start: p, count: count)), w.bytes, "\(value)")
            if value.isFinite {
                XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), Self.reference(value), "\(value)")
            }
        }
    }

    /// `Double.description`, integral values below 10^15 without the fraction.
    static func reference(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }
}
