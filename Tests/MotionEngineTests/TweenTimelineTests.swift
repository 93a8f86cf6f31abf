import XCTest
@testable import MotionEngine

final class TweenTimelineTests: XCTestCase {
    func testOneSecondAtSixtyFPSHasSixtyOneFramesEndingExactly() throws {
        let timeline = try compile(#"{"target":{"frame":{"x":20}},"motion":{"type":"tween","duration":1,"easing":"quadratic.inOut","properties":[{"path":"frame.x","to":200}]}}"#)
        XCTAssertEqual(timeline.frameCount, 61)
        XCTAssertEqual(timeline.duration, 1)
        XCTAssertEqual(timeline.times.first, 0)
        XCTAssertEqual(timeline.times.last, 1)
        XCTAssertEqual(timeline.times[1], 1.0 / 60)
        XCTAssertEqual(timeline.times[59], 59.0 / 60)
        let values = timeline.values(of: "frame.x")
        XCTAssertEqual(values.first, 20)
        XCTAssertEqual(values.last, 200)
        XCTAssertEqual(values[30], 110, accuracy: 1e-9, "quadratic.inOut is half way at u = 0.5")
    }

    func testSampleTimeRuleForFractionalDurations() throws {
        let timeline = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":0.6,"properties":[{"path":"x","to":6}]}}"#)
        XCTAssertEqual(timeline.frameCount, 7)
        XCTAssertEqual(timeline.times, [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
        // Computed as start + k/fps, never accumulated: 0.1 + 0.1 + 0.1 would be 0.30000000000000004.
        XCTAssertNotEqual(timeline.times[3], 0.1 + 0.1 + 0.1)
        XCTAssertEqual(timeline.values(of: "x").last, 6)
    }

    func testWindowSamplesExactlyAtItsEnd() throws {
        let timeline = try compile(#"{"fps":30,"target":{"x":0},"window":{"start":0.25,"end":0.5},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":100}]}}"#)
        XCTAssertEqual(timeline.times.first, 0.25)
        XCTAssertEqual(timeline.times.last, 0.5)
        // 0.25 + k/30 < 0.5 − 1 µs for k = 0…7, then the end itself.
        XCTAssertEqual(timeline.frameCount, 9)
        XCTAssertEqual(timeline.values(of: "x").last!, 50, accuracy: 1e-12)
    }

    func testReferenceEasingValuesThroughATween() throws {
        // docs/easings.md: 100·E(u). Sample at u = 0.25 and 0.5 with fps 4 over 1 s.
        let cases: [(String, Int, Double, Double)] = [
            ("quadratic.in", 1, 6.25, 1e-12), ("cubic.out", 1, 57.8125, 1e-12), ("sine.inOut", 1, 14.6447, 1e-4),
            ("expo.in", 2, 3.125, 1e-12), ("circular.out", 1, 66.14378, 1e-5), ("elastic.out", 2, 101.5625, 1e-9),
            ("back.in", 2, -8.76975, 1e-5), ("back.out", 1, 81.74097, 1e-5), ("bounce.out", 2, 76.5625, 1e-12),
            ("bounce.inOut", 1, 11.71875, 1e-12),
        ]
        for (easing, frame, expected, accuracy) in cases {
            let timeline = try compile(#"{"fps":4,"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":"\#(easing)","properties":[{"path":"x","to":100}]}}"#)
            XCTAssertEqual(timeline.values(of: "x")[frame], expected, accuracy: accuracy, easing)
            XCTAssertEqual(timeline.values(of: "x").last, 100, "\(easing) ends exactly")
        }
    }

    func testReverseLegRunsTheReverseEasingFromTheEnd() throws {
        // docs/timing-and-events.md: the reverse leg is b + (a−b)·E'(u), not a time mirror.
        let timeline = try compile(#"{"fps":4,"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":"quadratic.in","reverses":true,"properties":[{"path":"x","to":100}]}}"#)
        XCTAssertEqual(timeline.duration, 2)
        XCTAssertEqual(timeline.values(of: "x"), [0, 6.25, 25, 56.25, 100, 93.75, 75, 43.75, 0])
        XCTAssertEqual(timeline.eventSummary, ["started@0", "reversed@1", "completed@2"])
    }

    func testReverseEasingOverride() throws {
        let timeline = try compile(#"{"fps":2,"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":"linear","reverseEasing":"quadratic.out","reverses":true,"properties":[{"path":"x","to":100}]}}"#)
        // Reverse leg at u = 0.5: 100 + (0 − 100)·0.75 = 25.
        XCTAssertEqual(timeline.values(of: "x"), [0, 50, 100, 25, 0])
    }

    func testRepeatWithRepeatDelayHoldsAndRestartsFromTheStart() throws {
        let timeline = try compile(#"{"fps":4,"target":{"x":0},"motion":{"type":"tween","duration":1,"repeat":2,"repeatDelay":0.5,"properties":[{"path":"x","to":100}]}}"#)
        // Total = 3·1 + 2·0.5.
        XCTAssertEqual(timeline.duration, 4)
        XCTAssertEqual(timeline.values(of: "x"), [0, 25, 50, 75, 100, 100, 0, 25, 50, 75, 100, 100, 0, 25, 50, 75, 100])
        XCTAssertEqual(timeline.eventSummary, ["started@0", "repeated@1.5", "repeated@3", "completed@4"])
        XCTAssertEqual(timeline.events.map { timeline.frameIndex(at: $0.time) }, [0, 6, 12, 16])
    }

    func testRepeatWithoutDelayShowsTheNewCycleAtTheSeam() throws {
        // Right-continuous: at t = 1 the second cycle begins at a.
        let timeline = try compile(#"{"fps":2,"target":{"x":0},"motion":{"type":"tween","duration":1,"repeat":1,"properties":[{"path":"x","to":10}]}}"#)
        XCTAssertEqual(timeline.values(of: "x"), [0, 5, 0, 5, 10])
    }

    func testRepeatingReversingEventsAreInOrder() throws {
        let timeline = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","id":"fade","duration":0.5,"delay":0.25,"repeat":1,"reverses":true,"properties":[{"path":"x","to":1}]}}"#)
        XCTAssertEqual(timeline.duration, 2.25)
        XCTAssertEqual(timeline.eventSummary, ["started@0.25", "reversed@0.75", "repeated@1.25", "reversed@1.75", "completed@2.25"])
        XCTAssertEqual(Set(timeline.events.map(\.motion)), ["fade"])
        XCTAssertEqual(timeline.events.map { timeline.frameIndex(at: $0.time) }, [3, 8, 13, 18, 23])
    }

    func testDelayHoldsTheStartValue() throws {
        let timeline = try compile(#"{"fps":4,"target":{"x":5},"motion":{"type":"tween","duration":0.5,"delay":0.5,"properties":[{"path":"x","to":9}]}}"#)
        XCTAssertEqual(timeline.values(of: "x"), [5, 5, 5, 7, 9])
    }

    func testZeroDurationIsAnInstantChangeThatCompletes() throws {
        let timeline = try compile(#"{"target":{"x":5},"motion":{"type":"tween","duration":0,"properties":[{"path":"x","to":9}]}}"#)
        XCTAssertEqual(timeline.frameCount, 1)
        XCTAssertEqual(timeline.values(of: "x"), [9])
        XCTAssertEqual(timeline.eventSummary, ["started@0", "completed@0"])
    }

    func testInfiniteRepeatNeedsAWindowAndSamplesIt() throws {
        let missing = problems(#"{"target":{"x":0},"motion":{"type":"tween","duration":1,"repeat":"infinite","properties":[{"path":"x","to":1}]}}"#)
        XCTAssertEqual(missing.status, 422)
        XCTAssertEqual(missing.problems.first?.pointer, "/window")

        let timeline = try compile(#"{"fps":2,"target":{"x":0},"window":{"start":0,"end":2.5},"motion":{"type":"tween","duration":1,"repeat":"infinite","properties":[{"path":"x","to":1}]}}"#)
        XCTAssertNil(timeline.duration)
        XCTAssertEqual(timeline.values(of: "x"), [0, 0.5, 0, 0.5, 0, 0.5])
        XCTAssertEqual(timeline.eventSummary, ["started@0", "repeated@1", "repeated@2"])
    }

    func testEventsOutsideTheWindowAreLeftOut() throws {
        let timeline = try compile(#"{"fps":2,"target":{"x":0},"window":{"start":100,"end":101},"motion":{"type":"tween","duration":0.25,"repeat":"infinite","properties":[{"path":"x","to":1}]}}"#)
        XCTAssertEqual(timeline.eventSummary, ["repeated@100", "repeated@100.25", "repeated@100.5", "repeated@100.75", "repeated@101"])
    }

    func testPerPropertyDurationEasingAndDelay() throws {
        let timeline = try compile(#"""
        {"fps":4,"target":{"a":0,"b":0},"motion":{"type":"tween","duration":1,"properties":[
          {"path":"a","to":4},
          {"path":"b","to":8,"duration":0.5,"delay":0.5,"easing":"quadratic.in"}]}}
        """#)
        XCTAssertEqual(timeline.duration, 1)
        XCTAssertEqual(timeline.values(of: "a"), [0, 1, 2, 3, 4])
        XCTAssertEqual(timeline.values(of: "b"), [0, 0, 0, 2, 8])
    }

    func testCompositeValuesProduceTracksForChangingLeavesOnly() throws {
        let timeline = try compile(#"""
        {"fps":2,"output":{"layout":"frames"},"target":{"frame":{"x":0,"y":50,"width":10,"height":10}},
         "motion":{"type":"tween","duration":1,"properties":[{"path":"frame","to":{"x":100,"y":50,"width":20,"height":10}}]}}
        """#)
        XCTAssertEqual(timeline.tracks.map(\.path), ["frame.x", "frame.width"])
        let body = try parseJSON(TimelineEncoder.encode(timeline))
        let frames = body.objectValue?["frames"]?.arrayValue
        XCTAssertEqual(frames?.count, 3)
        XCTAssertEqual(frames?[1].objectValue?["values"], .object(JSONObject([("frame", .object(JSONObject([
            ("x", .number(50)), ("y", .number(50)), ("width", .number(15)), ("height", .number(10)),
        ])))])))
    }

    func testArrayValuesDecomposeIntoIndexedTracks() throws {
        let timeline = try compile(#"{"fps":1,"motion":{"type":"tween","duration":1,"properties":[{"path":"v","from":[0,1,2],"to":[10,1,4]}]}}"#)
        XCTAssertEqual(timeline.tracks.map(\.path), ["v.0", "v.2"])
        XCTAssertEqual(timeline.values(of: "v.2"), [2, 4])
        XCTAssertEqual(timeline.document(at: 1)["v"], .array([.number(10), .number(1), .number(4)]))
    }

    func testScalarAlwaysHasItsTrackEvenWhenUnchanged() throws {
        let timeline = try compile(#"{"fps":1,"target":{"o":1},"motion":{"type":"tween","duration":1,"properties":[{"path":"o","to":1}]}}"#)
        XCTAssertEqual(timeline.tracks.map(\.path), ["o"])
    }

    func testImplicitFromReadsTargetAndFinalKeepsTheRest() throws {
        let timeline = try compile(#"{"fps":1,"target":{"layers":[{"opacity":0.5},{"opacity":1}],"name":"card"},"motion":{"type":"tween","duration":1,"properties":[{"path":"layers.1.opacity","to":0}]}}"#)
        XCTAssertEqual(timeline.values(of: "layers.1.opacity"), [1, 0])
        let final = timeline.document(at: 1)
        XCTAssertEqual(final["name"], .string("card"))
        XCTAssertEqual(PropertyPath("layers.1.opacity")!.lookup(in: final), .number(0))
        XCTAssertEqual(PropertyPath("layers.0.opacity")!.lookup(in: final), .number(0.5))
    }

    func testMissingPathAndShapeMismatchAreNamed() {
        let missing = problems(#"{"target":{"frame":{}},"motion":{"type":"tween","duration":1,"properties":[{"path":"frame.q","to":1}]}}"#)
        XCTAssertEqual(missing.status, 422)
        XCTAssertEqual(missing.problems.first?.pointer, "/motion/properties/0/path")
        XCTAssertTrue(missing.problems.first?.message.contains("frame.q") ?? false)

        let mismatch = problems(#"{"motion":{"type":"tween","duration":1,"properties":[{"path":"p","from":{"x":1},"to":{"y":2}}]}}"#)
        XCTAssertEqual(mismatch.status, 422)
        XCTAssertEqual(mismatch.problems.first?.pointer, "/motion/properties/0/from")
    }

    func testLaterPropertyOnTheSamePathWinsFromItsStart() throws {
        // docs/timing-and-events.md overlap: the later start wins; its implicit from is the value then.
        let timeline = try compile(#"""
        {"fps":4,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[
          {"path":"x","to":100},
          {"path":"x","to":0,"delay":0.5,"duration":0.5}]}}
        """#)
        XCTAssertEqual(timeline.values(of: "x"), [0, 25, 50, 25, 0])
    }

    func testSampleLimitIsCheckedBeforeAllocating() {
        var limits = EngineLimits.default
        limits.maxSamples = 100
        let error = problems(#"{"fps":1000,"target":{"x":0},"window":{"start":0,"end":1e9},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#, limits: limits)
        XCTAssertEqual(error.status, 422)
        XCTAssertTrue(error.problems.first?.message.contains("max-samples") ?? false)
    }

    func testEventLimit() {
        var limits = EngineLimits.default
        limits.maxEvents = 10
        let error = problems(#"{"fps":1,"target":{"x":0},"motion":{"type":"tween","duration":0.001,"repeat":100,"properties":[{"path":"x","to":1}]}}"#, limits: limits)
        XCTAssertTrue(error.problems.first?.message.contains("max-events") ?? false, "\(error.problems)")
    }

    func testInfiniteZeroLengthCycleIsRejected() {
        let error = problems(#"{"window":{"start":0,"end":1},"target":{"x":0},"motion":{"type":"tween","duration":0,"repeat":"infinite","properties":[{"path":"x","to":1}]}}"#)
        XCTAssertEqual(error.problems.first?.pointer, "/motion/repeat")
    }

    func testEncodedResponseShape() throws {
        let timeline = try compile(#"{"fps":2,"target":{"x":0,"keep":true},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#)
        let text = String(decoding: TimelineEncoder.encode(timeline), as: UTF8.self)
        XCTAssertEqual(text, #"{"fps":2,"duration":1,"frameCount":3,"window":{"start":0,"end":1},"times":[0,0.5,1],"tracks":[{"path":"x","values":[0,0.5,1]}],"events":[{"time":0,"frame":0,"type":"started","motion":"/motion"},{"time":1,"frame":2,"type":"completed","motion":"/motion"}],"final":{"x":1,"keep":true}}"#)
    }

    func testStreamLinesMatchTheTimeline() throws {
        let timeline = try compile(#"{"fps":2,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#)
        var encoder = FrameStreamEncoder(timeline: timeline, format: .ndjson)
        var bytes: [UInt8] = []
        while !encoder.isFinished { encoder.writeNext(into: &bytes) }
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), """
        {"frame":0,"time":0,"values":{"x":0}}
        {"event":"started","time":0,"frame":0,"motion":"/motion"}
        {"frame":1,"time":0.5,"values":{"x":0.5}}
        {"frame":2,"time":1,"values":{"x":1}}
        {"event":"completed","time":1,"frame":2,"motion":"/motion"}
        {"end":true,"frames":3,"duration":1}

        """)

        var sse = FrameStreamEncoder(timeline: timeline, format: .serverSentEvents)
        var sseBytes: [UInt8] = []
        sse.writeNext(into: &sseBytes)
        XCTAssertEqual(String(decoding: sseBytes, as: UTF8.self), "event: frame\ndata: {\"frame\":0,\"time\":0,\"values\":{\"x\":0}}\n\nevent: motion\ndata: {\"event\":\"started\",\"time\":0,\"frame\":0,\"motion\":\"/motion\"}\n\n")
    }
    /// A number `to` (with a number `from`, or none) is resolved on its own path
    /// (`TrackBuilder.resolveNumber`); the same property as an object of one number goes the
    /// general way. Both must give the same track: its name, base and every sample.
    func testNumberPropertiesResolveAsTheirObjectForm() throws {
        let first = #"{"type":"tween","duration":1,"properties":[{"path":"a.x","from":0,"to":10}]}"#
        let cases: [(target: String, scalar: String, object: String)] = [
            (#"{"a":{"x":3}}"#, #"{"path":"a.x","to":5}"#, #"{"path":"a","to":{"x":5}}"#),
            (#"{"a":{"x":3}}"#, #"{"path":"a.x","from":1,"to":5}"#, #"{"path":"a","from":{"x":1},"to":{"x":5}}"#),
            (#"{"a":{}}"#, #"{"path":"a.x","from":-2,"to":5}"#, #"{"path":"a","from":{"x":-2},"to":{"x":5}}"#),
            (#"{"a":{"x":"3"}}"#, #"{"path":"a.x","from":1,"to":5}"#, #"{"path":"a","from":{"x":1},"to":{"x":5}}"#),
        ]
        for (target, scalar, object) in cases {
            for sequence in [false, true] {
                // In a sequence the property starts where the first step left `a.x` (10).
                func document(_ property: String) -> String {
                    let tween = #"{"type":"tween","duration":1,"easing":"cubic.inOut","properties":[\#(property)]}"#
                    let motion = sequence ? #"{"type":"sequence","steps":[\#(first),\#(tween)]}"# : tween
                    return #"{"fps":8,"target":\#(target),"motion":\#(motion)}"#
                }
                let one = try compile(document(scalar)), other = try compile(document(object))
                XCTAssertEqual(one.tracks.map(\.path), ["a.x"], scalar)
                XCTAssertEqual(other.tracks.map(\.path), ["a.x"], object)
                XCTAssertEqual(one.tracks.map(\.base), other.tracks.map(\.base), scalar)
                XCTAssertEqual(one.values(of: "a.x"), other.values(of: "a.x"), "\(scalar) in a sequence: \(sequence)")
            }
        }
        // The whole value is written into the target's number, else into the `from`.
        let inTarget = try compile(#"{"fps":1,"target":{"x":3},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":5}]}}"#)
        XCTAssertEqual(inTarget.outputs.map(\.path.description), ["x"])
        XCTAssertEqual(inTarget.wholeValue(of: 0, trackValues: [4]), .number(4))
        // A track already writing the path gives the start; a string in the target is no start.
        let started = try compile(#"{"fps":2,"target":{"x":"?"},"motion":{"type":"sequence","steps":[{"type":"tween","duration":1,"easing":"linear","properties":[{"path":"x","from":0,"to":10}]},{"type":"tween","duration":1,"easing":"linear","properties":[{"path":"x","to":0}]}]}}"#)
        XCTAssertEqual(started.values(of: "x"), [0, 5, 10, 5, 0])
        let unstarted = problems(#"{"fps":1,"target":{"x":"?"},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":5}]}}"#)
        XCTAssertEqual(unstarted.problems.map(\.pointer), ["/motion/properties/0/path"])
        XCTAssertTrue(unstarted.problems[0].message.contains("no value at 'x' in target, and no 'from', and target has a string at 'x'"),
                      unstarted.problems[0].message)
    }
    /// An array of numbers `to` is resolved on its own path (`TrackBuilder.resolveNumbers`);
    /// the same ends as an object keyed by index go the general way. Both must give the same
    /// tracks (names, bases, samples), the same whole values and the same problems.
    func testNumberArraysResolveAsTheirIndexedObjectForm() throws {
        func indexed(_ numbers: [Double]) -> String {
            "{" + numbers.enumerated().map { "\"\($0.offset)\":\(format($0.element))" }.joined(separator: ",") + "}"
        }
        func array(_ numbers: [Double]) -> String { "[" + numbers.map(format).joined(separator: ",") + "]" }
        let first = #"{"type":"tween","duration":1,"easing":"linear","properties":[{"path":"a.1","from":0,"to":10}]}"#
        // (target, from, to, physics): a leaf that does not change gets no track.
        let cases: [(target: String, from: [Double]?, to: [Double], decay: Bool)] = [
            (#"{"a":[0,1,2,3]}"#, nil, [4, 1, 6, 7], false),
            (#"{"a":[0,1,2,3]}"#, [1, 1, 1, 1], [4, 1, 6, 7], false),
            (#"{"a":{"0":5,"1":6}}"#, nil, [1, 2], false),
            (#"{"a":{"1":6}}"#, [0, 0], [1, 2], false),
            (#"{"b":1}"#, [3, 4], [5, 6], false),
            (#"{"a":[0.5,-2]}"#, nil, [0.5, -2], true),
        ]
        for (target, from, to, decay) in cases {
            for sequence in [false, true] {
                func document(_ from: String?, _ to: String) -> String {
                    let fromField = from.map { #","from":\#($0)"# } ?? ""
                    let node = decay
                        ? #"{"type":"decay","velocity":2,"properties":[{"path":"a"\#(fromField)}]}"#
                        : #"{"type":"tween","duration":1,"easing":"cubic.inOut","properties":[{"path":"a"\#(fromField),"to":\#(to)}]}"#
                    let motion = sequence ? #"{"type":"sequence","steps":[\#(first),\#(node)]}"# : node
                    return #"{"fps":8,"target":\#(target),"motion":\#(motion)}"#
                }
                let label = "\(target) from \(from.map(array) ?? "-") to \(array(to)), in a sequence: \(sequence)"
                let one = try compile(document(from.map(array), array(to)), file: #filePath, line: #line)
                let other = try compile(document(from.map(indexed), indexed(to)))
                XCTAssertEqual(one.tracks.map(\.path), other.tracks.map(\.path), label)
                XCTAssertEqual(one.tracks.map(\.base), other.tracks.map(\.base), label)
                for track in one.tracks.map(\.path) {
                    XCTAssertEqual(one.values(of: track), other.values(of: track), "\(label): \(track)")
                }
                if from == nil, !target.contains("b") {
                    // Both write into the target's value at `a`.
                    let values = one.tracks.indices.map { Double($0) + 0.5 }
                    let index = try XCTUnwrap(one.outputs.firstIndex { $0.path.description == "a" })
                    XCTAssertEqual(one.wholeValue(of: index, trackValues: values), other.wholeValue(of: index, trackValues: values), label)
                }
            }
        }
        // The problems: the first index with no start, and a start past ±1e15, named alike.
        for (target, to) in [(#"{"a":[0]}"#, [1.0, 2]), (#"{"a":{}}"#, [1.0]), (#"{"a":[0,1e16]}"#, [1.0, 2])] {
            func document(_ to: String) -> String {
                #"{"fps":1,"target":\#(target),"motion":{"type":"tween","duration":1,"properties":[{"path":"a","to":\#(to)}]}}"#
            }
            let one = problems(document(array(to))).problems, other = problems(document(indexed(to))).problems
            XCTAssertEqual(one.map(\.pointer), ["/motion/properties/0/path"], target)
            XCTAssertEqual(one.map(\.message), other.map(\.message), target)
        }
    }
}
