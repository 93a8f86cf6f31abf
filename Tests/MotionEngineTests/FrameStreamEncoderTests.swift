@testable import MotionEngine
import XCTest

/// The stream encoder's frame lines (tracks layout) are written in one pass into one buffer
/// (`FrameStreamEncoder.writeTracksFrameLine`); they must be byte for byte what the
/// `JSONWriter` calls write, line by line, whatever the tracks, paths, values and format.
final class FrameStreamEncoderTests: XCTestCase {
    private func compile(_ json: String) throws -> Timeline {
        try TimelineCompiler().compile(Array(json.utf8))
    }

    /// Frame k's line as the `JSONWriter` pieces write it.
    private func referenceLine(_ timeline: Timeline, frame: Int, sse: Bool) -> String {
        var w = JSONWriter()
        var values: [Double] = []
        let t = timeline.time(ofFrame: frame)
        for track in timeline.tracks { values.append(track.value(at: t)) }
        if sse { w.raw("event: frame\ndata: ") }
        w.raw("{\"frame\":")
        w.integer(frame)
        w.raw(",\"time\":")
        w.number(t)
        w.raw(",\"values\":")
        TimelineEncoder.writeTrackValues(timeline, values, into: &w)
        w.raw("}")
        w.raw(sse ? "\n\n" : "\n")
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// `eventsOnNextFrame`: the events the next line carries, for the stream to weigh a wake.
    func testEventsOnTheNextFrameAreCounted() throws {
        let timeline = try compile(#"{"fps":10,"target":{"x":0,"y":0},"motion":{"type":"group","children":[{"type":"tween","duration":0.5,"properties":[{"path":"x","to":1}]},{"type":"tween","delay":0.15,"duration":1e-7,"repeat":2999,"properties":[{"path":"y","to":1}]}]}}"#)
        var encoder = FrameStreamEncoder(timeline: timeline, format: .ndjson)
        var counts: [Int] = []
        while encoder.nextFrameTime != nil {
            let expected = encoder.eventsOnNextFrame
            var bytes: [UInt8] = []
            encoder.writeNext(into: &bytes)
            let written = String(decoding: bytes, as: UTF8.self).split(separator: "\n").filter { $0.contains(#""event":"#) }.count
            XCTAssertEqual(expected, written)
            counts.append(expected)
        }
        // The group starts with its children at 0; the 3,000 plays cross frame 2 (0.2 s).
        XCTAssertGreaterThanOrEqual(counts[2], 3_000)
        XCTAssertEqual(counts.reduce(0, +), timeline.events.count)
    }

    func testFrameLinesAreTheJSONWriterBytes() throws {
        let documents = [
            // One track; many frames (numbers of every length, times like 0.016666666666666666).
            #"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":2,"easing":"cubic.inOut","properties":[{"path":"x","to":-321.5}]}}"#,
            // Paths that need escaping, nested paths, integers, a spring past its target.
            #"{"fps":30,"target":{"a\"b":0,"tab\there":1,"frame":{"x":0,"y":0},"é":2},"motion":{"type":"group","children":[{"type":"tween","duration":1,"properties":[{"path":"a\"b","to":1e-7},{"path":"tab\there","to":1e14}]},{"type":"spring","response":0.4,"dampingRatio":0.5,"properties":[{"path":"frame","to":{"x":100,"y":-50}},{"path":"é","to":0}]}]}}"#,
            // Many tracks and repeats with events on frames.
            #"{"fps":24,"target":{"p0":0,"p1":0,"p2":0,"p3":0,"p4":0,"p5":0,"p6":0,"p7":0},"motion":{"type":"tween","duration":0.5,"repeat":2,"reverses":true,"properties":[{"path":"p0","to":1},{"path":"p1","to":2},{"path":"p2","to":3},{"path":"p3","to":4},{"path":"p4","to":5},{"path":"p5","to":6},{"path":"p6","to":7},{"path":"p7","to":8}]}}"#,
        ]
        for document in documents {
            let timeline = try compile(document)
            XCTAssertGreaterThan(timeline.tracks.count, 0)
            for sse in [false, true] {
                var encoder = FrameStreamEncoder(timeline: timeline, format: sse ? .serverSentEvents : .ndjson)
                var bytes: [UInt8] = []
                var frame = 0
                while !encoder.isFinished {
                    bytes.removeAll(keepingCapacity: true)
                    let isFrame = encoder.nextFrame < timeline.frameCount
                    encoder.writeNext(into: &bytes)
                    guard isFrame else { break }
                    // The frame line comes first; event lines (unchanged code) may follow it.
                    let reference = referenceLine(timeline, frame: frame, sse: sse)
                    let text = String(decoding: bytes, as: UTF8.self)
                    XCTAssertTrue(text.hasPrefix(reference), "frame \(frame), sse \(sse):\n\(text)\nexpected\n\(reference)")
                    if !text.hasPrefix(reference) { return }
                    frame += 1
                }
                XCTAssertEqual(frame, timeline.frameCount)
            }
        }
    }

    func testAFrameLineAfterOtherBytesIsAppended() throws {
        // The caller's buffer keeps what it had: the line is appended to it.
        let timeline = try compile(#"{"fps":2,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]},"output":{"events":false}}"#)
        var encoder = FrameStreamEncoder(timeline: timeline, format: .ndjson)
        var bytes = Array("before\n".utf8)
        encoder.writeNext(into: &bytes)
        encoder.writeNext(into: &bytes)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "before\n{\"frame\":0,\"time\":0,\"values\":{\"x\":0}}\n{\"frame\":1,\"time\":0.5,\"values\":{\"x\":0.5}}\n")
    }

    /// The frame times' texts are shared by the timelines of one grid, keyed by the times
    /// bit for bit; a grid longer than `maxTimes` has none and formats as it goes; either
    /// way the lines are the `JSONWriter` bytes.
    func testFrameTimeTextsAreSharedPerGridAndWriteTheSameBytes() throws {
        let cache = TimesTextCache.shared
        cache.removeAll()
        defer { cache.removeAll() }
        let a = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":10,"properties":[{"path":"x","to":320}]}}"#)
        let b = try compile(#"{"fps":60,"target":{"y":5},"motion":{"type":"tween","duration":10,"easing":"quadratic.in","properties":[{"path":"y","to":-1}]}}"#)
        // Same fps, another duration: another grid (its last time differs).
        let c = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":9.99,"properties":[{"path":"x","to":320}]}}"#)
        let textsA = try XCTUnwrap(cache.entry(for: a))
        XCTAssertTrue(textsA === cache.entry(for: b), "one grid, one text")
        XCTAssertFalse(textsA === cache.entry(for: c))
        XCTAssertEqual(textsA.count, 601)
        var buffer = [UInt8](repeating: 0, count: JSONWriter.maxNumberBytes)
        for k in [0, 1, 7, 599, 600] {
            let count = buffer.withUnsafeMutableBufferPointer { textsA.copy(frame: k, to: $0.baseAddress!) }
            var w = JSONWriter()
            w.number(a.time(ofFrame: k))
            XCTAssertEqual(Array(buffer[0..<count]), w.bytes, "frame \(k)")
        }
        // 4,097 frames: none kept; the lines are still right, and the cache is untouched.
        let long = try compile(#"{"fps":1000,"target":{"x":0},"motion":{"type":"tween","duration":4.096,"properties":[{"path":"x","to":1}]}}"#)
        XCTAssertEqual(long.frameCount, TimesTextCache.maxTimes + 1)
        XCTAssertNil(cache.entry(for: long))
        for timeline in [a, c, long] {
            var encoder = FrameStreamEncoder(timeline: timeline, format: .ndjson)
            var bytes: [UInt8] = []
            for frame in 0..<timeline.frameCount {
                bytes.removeAll(keepingCapacity: true)
                encoder.writeNext(into: &bytes)
                guard [0, 1, 3, timeline.frameCount - 2, timeline.frameCount - 1].contains(frame) else { continue }
                let text = String(decoding: bytes, as: UTF8.self)
                let reference = referenceLine(timeline, frame: frame, sse: false)
                XCTAssertTrue(text.hasPrefix(reference), "frame \(frame):\n\(text)\nexpected\n\(reference)")
            }
        }
        // Bounded: after maxEntries other grids, the first one is no longer shared.
        for k in 0..<TimesTextCache.maxEntries {
            _ = cache.entry(for: try compile(#"{"fps":\#(10 + k),"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#))
        }
        XCTAssertFalse(textsA === cache.entry(for: a), "replaced in turn")
    }
}
