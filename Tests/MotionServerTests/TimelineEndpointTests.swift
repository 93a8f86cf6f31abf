import Foundation
import XCTest

/// `POST /v1/timelines` against the real server (docs/documents.md, docs/timing-and-events.md, docs/easings.md).
final class TimelineEndpointTests: DefaultServerTestCase {
    private func trackValues(_ body: JSONValue, _ path: String, file: StaticString = #filePath, line: UInt = #line) -> [Double] {
        let track = body["tracks"]?.array?.first { $0["path"]?.string == path }
        guard let values = track?["values"]?.doubles else {
            XCTFail("no track '\(path)' in \(body["tracks"]?.description ?? "nil")", file: file, line: line)
            return []
        }
        return values
    }

    private func event(_ time: Double, _ frame: Int, _ type: String, _ motion: String) -> JSONValue {
        ["time": .number(time), "frame": .number(Double(frame)), "type": .string(type), "motion": .string(motion)]
    }

    // MARK: - A plain tween

    func testOneSecondTweenAtSixtyFPS() throws {
        let body = try timeline(server, """
            {"fps": 60,
             "target": {"frame": {"x": 20, "y": 50, "width": 50, "height": 50}, "opacity": 1},
             "motion": {"type": "tween", "duration": 1, "easing": "quadratic.inOut",
                        "properties": [{"path": "frame.x", "to": 200}]}}
            """)
        XCTAssertEqual(body["fps"], 60)
        XCTAssertEqual(body["duration"], 1)
        XCTAssertEqual(body["frameCount"], 61)
        XCTAssertEqual(body["window"], ["start": 0, "end": 1])

        let times = try XCTUnwrap(body["times"]?.doubles)
        XCTAssertEqual(times.count, 61)
        for k in 0..<60 {
            XCTAssertEqual(times[k], 0 + Double(k) / 60, "time of frame \(k) must be start + k/fps exactly")
        }
        XCTAssertEqual(times.last, 1, "the last sample is exactly window.end")

        XCTAssertEqual(body["tracks"]?.array?.count, 1)
        XCTAssertEqual(body["tracks"]?[0]?["path"], "frame.x")
        let x = trackValues(body, "frame.x")
        XCTAssertEqual(x.count, 61)
        XCTAssertEqual(x.first, 20)
        XCTAssertEqual(x.last, 200, "the last frame holds the exact end value")
        // quadratic.inOut: 2u² below ½, −2w²+2w+½ above (w = u − ½).
        XCTAssertEqual(x[15], 20 + 180 * 0.125, accuracy: 1e-9)
        XCTAssertEqual(x[30], 110, accuracy: 1e-9)
        XCTAssertEqual(x[45], 20 + 180 * 0.875, accuracy: 1e-9)
        for k in 1..<x.count {
            XCTAssertGreaterThanOrEqual(x[k], x[k - 1], "frame.x must not go backwards at frame \(k)")
        }

        XCTAssertEqual(body["events"], [event(0, 0, "started", "/motion"), event(1, 60, "completed", "/motion")])
        XCTAssertEqual(body["final"], ["frame": ["x": 200, "y": 50, "width": 50, "height": 50], "opacity": 1])
    }

    func testEasingReferenceValues() throws {
        // docs/easings.md reference values of 100·E(u), at u = 0.25 (frame 1) and 0.5 (frame 2).
        let atQuarter: [(String, Double)] = [
            ("quadratic.in", 6.25), ("cubic.out", 57.8125), ("sine.inOut", 14.6447),
            ("circular.out", 66.14378), ("back.out", 81.74097), ("bounce.inOut", 11.71875),
        ]
        let atHalf: [(String, Double)] = [
            ("expo.in", 3.125), ("elastic.out", 101.5625), ("back.in", -8.76975), ("bounce.out", 76.5625),
            ("ease-in-out", 50),
        ]
        let all = atQuarter + atHalf
        let target = all.indices.map { "\"p\($0)\": 0" }.joined(separator: ", ")
        let properties = all.enumerated().map { index, entry in
            "{\"path\": \"p\(index)\", \"to\": 100, \"easing\": \"\(entry.0)\"}"
        }.joined(separator: ", ")
        let body = try timeline(server, """
            {"fps": 4, "target": {\(target)},
             "motion": {"type": "tween", "duration": 1, "properties": [\(properties)]}}
            """)
        XCTAssertEqual(body["times"], [0, 0.25, 0.5, 0.75, 1])
        for (index, (name, expected)) in all.enumerated() {
            let values = trackValues(body, "p\(index)")
            guard values.count == 5 else {
                XCTFail("\(name): expected 5 values, got \(values)")
                continue
            }
            let frame = index < atQuarter.count ? 1 : 2
            XCTAssertEqual(values[frame], expected, accuracy: 1e-4, "\(name) at u = \(Double(frame) / 4)")
            XCTAssertEqual(values[0], 0, "\(name) starts exactly at from")
            XCTAssertEqual(values[4], 100, "\(name) ends exactly at to")
        }
    }

    func testQuadraticInIsSixPointTwoFivePercentOfTheDistanceAtAQuarter() throws {
        let body = try timeline(server, """
            {"fps": 4, "target": {"x": 20},
             "motion": {"type": "tween", "duration": 1, "easing": "quadratic.in", "properties": [{"path": "x", "to": 180}]}}
            """)
        let x = trackValues(body, "x")
        XCTAssertEqual(x.count, 5)
        guard x.count == 5 else { return }
        XCTAssertEqual(x[1], 20 + 160 * 0.0625, accuracy: 1e-12)
        XCTAssertEqual(x[2], 20 + 160 * 0.25, accuracy: 1e-12)
        XCTAssertEqual(x[3], 20 + 160 * 0.5625, accuracy: 1e-12)
        XCTAssertEqual(x[4], 180)
    }

    // MARK: - Composite values

    func testObjectValueIsDecomposedIntoTracksOfChangingLeavesOnly() throws {
        let body = try timeline(server, """
            {"fps": 10,
             "target": {"frame": {"x": 20, "y": 50, "width": 50, "height": 50}, "v": [0, 0, 0]},
             "motion": {"type": "tween", "duration": 0.5,
                        "properties": [{"path": "frame", "to": {"x": 100, "y": 50, "width": 80, "height": 50}},
                                       {"path": "v", "to": [10, 0, 5]}]}}
            """)
        let paths = body["tracks"]?.array?.compactMap { $0["path"]?.string }
        XCTAssertEqual(paths, ["frame.x", "frame.width", "v.0", "v.2"], "unchanged leaves (y, height, v.1) must not get tracks")
        XCTAssertEqual(body["frameCount"], 6)
        XCTAssertEqual(trackValues(body, "frame.x").first, 20)
        XCTAssertEqual(trackValues(body, "frame.x").last, 100)
        XCTAssertEqual(trackValues(body, "frame.width").first, 50)
        XCTAssertEqual(trackValues(body, "frame.width").last, 80)
        XCTAssertEqual(trackValues(body, "frame.width")[safe: 3] ?? .nan, 50 + 30 * 0.6, accuracy: 1e-9)
        let v2 = trackValues(body, "v.2")
        XCTAssertEqual(v2.count, 6)
        for (k, value) in v2.enumerated() {
            XCTAssertEqual(value, Double(k), accuracy: 1e-9, "linear 0 → 5 over 0.5 s at 10 fps, frame \(k)")
        }
        XCTAssertEqual(v2.last, 5)
        XCTAssertEqual(body["final"], ["frame": ["x": 100, "y": 50, "width": 80, "height": 50], "v": [10, 0, 5]])
    }

    func testColourIsDecomposedIntoChangingChannelsAndWrittenWhole() throws {
        let tracks = try timeline(server, """
            {"fps": 2, "target": {"tint": "#336699"},
             "motion": {"type": "tween", "duration": 1, "properties": [{"path": "tint", "to": "#3366ff"}]}}
            """)
        // Only blue changes (0x99 → 0xff); channels are in 0…1.
        XCTAssertEqual(tracks["tracks"]?.array?.compactMap { $0["path"]?.string }, ["tint.blue"])
        let blue = trackValues(tracks, "tint.blue")
        XCTAssertEqual(blue.count, 3)
        XCTAssertEqual(blue[safe: 0] ?? .nan, 153.0 / 255, accuracy: 1e-12)
        XCTAssertEqual(blue[safe: 1] ?? .nan, 204.0 / 255, accuracy: 1e-12)
        XCTAssertEqual(blue[safe: 2], 1)
        XCTAssertEqual(tracks["final"], ["tint": "#3366ffff"], "an animated colour is written #rrggbbaa")

        let frames = try timeline(server, """
            {"fps": 2, "target": {"tint": "#336699", "label": "#abc"},
             "motion": {"type": "tween", "duration": 1, "properties": [{"path": "tint", "to": "#3366ff"}]},
             "output": {"layout": "frames"}}
            """)
        XCTAssertEqual(frames["frames"]?.array?.compactMap { $0["values"]?["tint"]?.string }, ["#336699ff", "#3366ccff", "#3366ffff"])
        XCTAssertEqual(frames["final"], ["tint": "#3366ffff", "label": "#abc"], "untouched properties keep their original form")
    }

    func testScalarPropertyAlwaysHasItsTrack() throws {
        let body = try timeline(server, """
            {"fps": 2, "target": {"opacity": 1},
             "motion": {"type": "tween", "duration": 1, "properties": [{"path": "opacity", "to": 1}]}}
            """)
        XCTAssertEqual(body["tracks"], [["path": "opacity", "values": [1, 1, 1]]])
    }

    func testFramesLayoutWritesCompositeValuesWhole() throws {
        let body = try timeline(server, """
            {"fps": 4,
             "target": {"frame": {"x": 20, "y": 50, "width": 50, "height": 50}, "opacity": 1},
             "motion": {"type": "tween", "duration": 1,
                        "properties": [{"path": "frame", "to": {"x": 100, "y": 50, "width": 90, "height": 50}},
                                       {"path": "opacity", "from": 0, "to": 1}]},
             "output": {"layout": "frames"}}
            """)
        XCTAssertNil(body["times"], "frames layout has no columnar times")
        XCTAssertNil(body["tracks"], "frames layout has no columnar tracks")
        XCTAssertEqual(body["frameCount"], 5)
        let frames = try XCTUnwrap(body["frames"]?.array)
        XCTAssertEqual(frames.count, 5)
        XCTAssertEqual(frames.compactMap { $0["time"]?.double }, [0, 0.25, 0.5, 0.75, 1])
        XCTAssertEqual(frames.first?["values"], ["frame": ["x": 20, "y": 50, "width": 50, "height": 50], "opacity": 0])
        XCTAssertEqual(frames.last?["values"], ["frame": ["x": 100, "y": 50, "width": 90, "height": 50], "opacity": 1])
        let middle = try XCTUnwrap(frames[2]["values"]?["frame"])
        XCTAssertEqual(middle["x"]?.double ?? .nan, 60, accuracy: 1e-9)
        XCTAssertEqual(middle["width"]?.double ?? .nan, 70, accuracy: 1e-9)
        XCTAssertEqual(middle["y"], 50, "untouched leaves keep their value inside the whole object")
        XCTAssertEqual(middle["height"], 50)
        XCTAssertEqual(frames[2]["values"]?["opacity"]?.double ?? .nan, 0.5, accuracy: 1e-12)
        XCTAssertEqual(body["events"], [event(0, 0, "started", "/motion"), event(1, 4, "completed", "/motion")])
        XCTAssertEqual(body["final"], ["frame": ["x": 100, "y": 50, "width": 90, "height": 50], "opacity": 1])
    }

    // MARK: - Timing: repeat, reverses, repeatDelay, delay, duration 0

    func testRepeatReversesAndRepeatDelayEventsInOrder() throws {
        // A cycle is 0.5 s forward + 0.5 s back; 0.25 s pause; 2 cycles: 2.25 s.
        let body = try timeline(server, """
            {"fps": 10, "target": {"x": 0},
             "motion": {"type": "tween", "id": "pulse", "duration": 0.5, "repeat": 1, "reverses": true,
                        "repeatDelay": 0.25, "properties": [{"path": "x", "to": 100}]}}
            """)
        XCTAssertEqual(body["duration"], 2.25)
        XCTAssertEqual(body["frameCount"], 24, "k/10 for k = 0…22, plus 2.25")
        XCTAssertEqual(body["times"]?.doubles?.last, 2.25)
        XCTAssertEqual(body["events"], [
            event(0, 0, "started", "pulse"),
            event(0.5, 5, "reversed", "pulse"),
            event(1.25, 13, "repeated", "pulse"),
            event(1.75, 18, "reversed", "pulse"),
            event(2.25, 23, "completed", "pulse"),
        ])
        let x = trackValues(body, "x")
        XCTAssertEqual(x.count, 24)
        guard x.count == 24 else { return }
        XCTAssertEqual(x[0], 0)
        XCTAssertEqual(x[3], 60, accuracy: 1e-9)
        XCTAssertEqual(x[5], 100, "the reverse leg starts at b")
        XCTAssertEqual(x[8], 40, accuracy: 1e-9, "the reverse leg runs back linearly")
        XCTAssertEqual(x[10], 0, "the cycle ends exactly at a")
        XCTAssertEqual(x[11], 0, "repeatDelay holds the cycle's end value")
        XCTAssertEqual(x[12], 0, "repeatDelay holds the cycle's end value")
        XCTAssertEqual(x[13], 10, accuracy: 1e-9, "second cycle, 0.05 s into its forward leg")
        XCTAssertEqual(x[18], 90, accuracy: 1e-9, "0.05 s into the second reverse leg")
        XCTAssertEqual(x[23], 0, "a reversing motion ends at a")
        XCTAssertEqual(body["final"], ["x": 0])
    }

    func testRepeatWithoutReversesRestartsFromTheStart() throws {
        let body = try timeline(server, """
            {"fps": 4, "target": {"x": 0},
             "motion": {"type": "tween", "duration": 0.5, "repeat": 2, "properties": [{"path": "x", "to": 100}]}}
            """)
        XCTAssertEqual(body["duration"], 1.5)
        XCTAssertEqual(body["times"], [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5])
        // Right-continuous: at 0.5 and 1.0 the new cycle's a shows; the very end holds b.
        XCTAssertEqual(trackValues(body, "x"), [0, 50, 0, 50, 0, 50, 100])
        XCTAssertEqual(body["events"], [
            event(0, 0, "started", "/motion"),
            event(0.5, 2, "repeated", "/motion"),
            event(1, 4, "repeated", "/motion"),
            event(1.5, 6, "completed", "/motion"),
        ])
    }

    func testDelayHoldsTheTargetValueThenStarts() throws {
        let body = try timeline(server, """
            {"fps": 4, "target": {"x": 7},
             "motion": {"type": "tween", "delay": 0.5, "duration": 0.5, "properties": [{"path": "x", "to": 17}]}}
            """)
        XCTAssertEqual(body["duration"], 1)
        XCTAssertEqual(trackValues(body, "x"), [7, 7, 7, 12, 17])
        XCTAssertEqual(body["events"], [event(0.5, 2, "started", "/motion"), event(1, 4, "completed", "/motion")])
    }

    func testEventFrameIsTheFirstSampleAtOrAfterTheEvent() throws {
        // Starts at 0.125 and completes at 0.875, between quarter-second samples; the repeat
        // at 0.5 falls on one.
        let body = try timeline(server, """
            {"fps": 4, "target": {"x": 0},
             "motion": {"type": "tween", "delay": 0.125, "duration": 0.375, "repeat": 1, "properties": [{"path": "x", "to": 3}]}}
            """)
        XCTAssertEqual(body["duration"], 0.875)
        XCTAssertEqual(body["times"], [0, 0.25, 0.5, 0.75, 0.875])
        XCTAssertEqual(body["events"], [
            event(0.125, 1, "started", "/motion"),
            event(0.5, 2, "repeated", "/motion"),
            event(0.875, 4, "completed", "/motion"),
        ])
        let x = trackValues(body, "x")
        XCTAssertEqual(x[safe: 0], 0, "before the delay the target value shows")
        XCTAssertEqual(x[safe: 1] ?? .nan, 1, accuracy: 1e-9)
        XCTAssertEqual(x[safe: 2], 0, "the repeat restarts from a")
        XCTAssertEqual(x[safe: 4], 3)
    }

    func testZeroDurationIsAnInstantChangeThatCompletes() throws {
        let body = try timeline(server, """
            {"target": {"x": 1},
             "motion": {"type": "tween", "duration": 0, "properties": [{"path": "x", "to": 5}]}}
            """)
        XCTAssertEqual(body["duration"], 0)
        XCTAssertEqual(body["frameCount"], 1)
        XCTAssertEqual(body["times"], [0])
        XCTAssertEqual(trackValues(body, "x"), [5])
        XCTAssertEqual(body["events"], [event(0, 0, "started", "/motion"), event(0, 0, "completed", "/motion")],
                       "started comes before its own completed at the same instant")
        XCTAssertEqual(body["final"], ["x": 5])
    }

    // MARK: - Sampling and output options

    func testSixTenthsOfASecondAtTenFPSHasSevenFrames() throws {
        let body = try timeline(server, """
            {"fps": 10, "target": {"x": 0},
             "motion": {"type": "tween", "duration": 0.6, "properties": [{"path": "x", "to": 6}]}}
            """)
        XCTAssertEqual(body["frameCount"], 7)
        let times = try XCTUnwrap(body["times"]?.doubles)
        XCTAssertEqual(times.count, 7)
        for k in 0..<6 { XCTAssertEqual(times[k], Double(k) / 10) }
        XCTAssertEqual(times.last, 0.6)
        XCTAssertEqual(trackValues(body, "x").last, 6)
    }

    func testWindowSamplesFromItsStartAndListsOnlyEventsInside() throws {
        let body = try timeline(server, """
            {"fps": 10, "target": {"x": 0},
             "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 100}]},
             "window": {"start": 0.25, "end": 0.8}}
            """)
        XCTAssertEqual(body["duration"], 1, "duration is the motion's, not the window's")
        XCTAssertEqual(body["window"], ["start": 0.25, "end": 0.8])
        let times = try XCTUnwrap(body["times"]?.doubles)
        XCTAssertEqual(times.count, 7)
        for k in 0..<6 { XCTAssertEqual(times[safe: k], 0.25 + Double(k) / 10, "start + k/fps, never accumulated") }
        XCTAssertEqual(times.last, 0.8)
        let x = trackValues(body, "x")
        for (k, t) in times.enumerated() { XCTAssertEqual(x[safe: k] ?? .nan, 100 * t, accuracy: 1e-9) }
        XCTAssertEqual(body["events"], [], "started (0) and completed (1) are outside [0.25, 0.8]")
        XCTAssertEqual(body["final"]?["x"]?.double ?? .nan, 80, accuracy: 1e-9, "final is the target at window.end")
    }

    func testInfiniteRepeatWithAWindowHasNullDuration() throws {
        let body = try timeline(server, """
            {"fps": 2, "target": {"x": 0},
             "motion": {"type": "tween", "duration": 0.5, "repeat": "infinite", "properties": [{"path": "x", "to": 1}]},
             "window": {"start": 0, "end": 1.5}}
            """)
        XCTAssertEqual(body["duration"], .null)
        XCTAssertEqual(body["frameCount"], 4)
        XCTAssertEqual(body["events"], [
            event(0, 0, "started", "/motion"),
            event(0.5, 1, "repeated", "/motion"),
            event(1, 2, "repeated", "/motion"),
            event(1.5, 3, "repeated", "/motion"),
        ], "a motion that never ends never completes")
    }

    func testOutputCanLeaveOutEventsAndFinal() throws {
        let body = try timeline(server, """
            {"fps": 2, "target": {"x": 0},
             "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]},
             "output": {"layout": "tracks", "events": false, "final": false}}
            """)
        XCTAssertNil(body["events"])
        XCTAssertNil(body["final"])
        XCTAssertEqual(body["tracks"], [["path": "x", "values": [0, 0.5, 1]]])
    }

    func testDefaultsAreSixtyFPSAndEmptyTargetWithExplicitFrom() throws {
        let body = try timeline(server, """
            {"motion": {"type": "tween", "duration": 0.5, "properties": [{"path": "x", "from": 3, "to": 9}]}}
            """)
        XCTAssertEqual(body["fps"], 60)
        XCTAssertEqual(body["frameCount"], 31)
        XCTAssertEqual(trackValues(body, "x").first, 3)
        XCTAssertEqual(trackValues(body, "x").last, 9)
        XCTAssertEqual(body["final"], ["x": 9], "a path created by from/to appears in final")
    }

    func testTimelineAcceptsJSONContentTypeWithCharset() throws {
        let response = try post(server, "/v1/timelines", """
            {"fps": 1, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "from": 0, "to": 1}]}}
            """, contentType: "application/json; charset=utf-8")
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(try response.json()["frameCount"], 2)
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
