import Foundation
import XCTest

/// `POST /v1/springs` against the real server (docs/springs.md): every form posted back describes the
/// same spring; inverse fits and the `linear()` easing are checked against the server's own
/// timeline engine, which animates the fitted spring as a `spring` node and the easing as a
/// tween's easing; refusals name the member.
final class SpringEndpointTests: DefaultServerTestCase {
    private func springs(_ json: String, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        let response = try post(server, "/v1/springs", json)
        XCTAssertEqual(response.status, 200, "\(json): \(response.text)", file: file, line: line)
        XCTAssertEqual(response.mediaType, "application/json", file: file, line: line)
        guard response.status == 200 else { throw TestServerError(description: "POST /v1/springs answered \(response.status): \(response.text)") }
        return try response.json()
    }

    private func relative(_ a: Double?, _ b: Double?) -> Double {
        guard let a, let b else { return .infinity }
        return b == 0 ? Swift.abs(a) : Swift.abs(a - b) / Swift.abs(b)
    }

    /// The text of a JSON object, for posting a `forms` entry back.
    private func text(_ value: JSONValue) -> String {
        guard let object = value.object else { return "null" }
        return "{" + object.map { "\"\($0.key)\": \($0.value.double.map { "\($0)" } ?? "null")" }.joined(separator: ", ") + "}"
    }

    func testEveryFormPostedBackIsTheSameSpring() throws {
        for body in [#"{"response": 0.45, "dampingRatio": 0.7}"#,
                     #"{"stiffness": 300, "damping": 10, "mass": 2.5}"#,
                     #"{"duration": 0.8, "bounce": -0.4, "velocity": 2}"#] {
            let answer = try springs(body)
            let forms = try XCTUnwrap(answer["forms"]?.object)
            XCTAssertEqual(forms.count, 7)
            for (key, form) in forms where form != .null {
                let back = try springs(text(form))
                for metric in ["naturalFrequency", "dampingRatio"] {
                    XCTAssertLessThanOrEqual(relative(back[metric]?.double, answer[metric]?.double), 1e-9, "\(body) via \(key): \(metric)")
                }
                if form["mass"] != nil {
                    XCTAssertLessThanOrEqual(relative(back["mass"]?.double, answer["mass"]?.double), 1e-9, "\(body) via \(key): mass")
                }
            }
        }
    }

    /// The fitted spring animated by `/v1/timelines` as a spring node from 0 to 1 (rest band
    /// 0.001 in value and speed, as the translator's default): its duration is the settling
    /// time, its largest value 1 + overshoot, reached at the peak time.
    private func animated(_ answer: JSONValue, velocity: Double = 0) throws -> (overshoot: Double, peakTime: Double, settlingTime: Double) {
        let stiffness = try XCTUnwrap(answer["stiffness"]?.double), damping = try XCTUnwrap(answer["damping"]?.double)
        let mass = try XCTUnwrap(answer["mass"]?.double)
        let body = try timeline(server, """
            {"fps": 1000, "target": {"x": 0}, "output": {"events": false, "final": false},
             "motion": {"type": "spring", "stiffness": \(stiffness), "damping": \(damping), "mass": \(mass),
                        "velocity": \(velocity), "restDelta": 0.001, "restSpeed": 0.001,
                        "properties": [{"path": "x", "from": 0, "to": 1}]}}
            """)
        let times = try XCTUnwrap(body["times"]?.doubles)
        let values = try XCTUnwrap(body["tracks"]?[0]?["values"]?.doubles)
        let peak = try XCTUnwrap(values.indices.max { values[$0] < values[$1] })
        return (values[peak] - 1, times[peak], try XCTUnwrap(body["duration"]?.double))
    }

    func testInverseFitsMeasuredByTheTimelineEngine() throws {
        for (body, velocity) in [(#"{"overshoot": 0.1, "settlingTime": 0.8}"#, 0.0),
                                 (#"{"overshoot": 0.25, "peakTime": 0.3}"#, 0),
                                 (#"{"overshoot": 0.05, "settlingTime": 1.2, "velocity": 2}"#, 2),
                                 (#"{"dampingRatio": 0.4, "settlingTime": 1.5}"#, 0)] {
            let answer = try springs(body)
            let measured = try animated(answer, velocity: velocity)
            let request = try JSONValue.parse(body)
            if let overshoot = request["overshoot"]?.double {
                // Sampled every 1 ms: the sampled peak is a little below the true one.
                XCTAssertLessThanOrEqual(relative(measured.overshoot, overshoot), 0.005, "\(body): overshoot \(measured.overshoot)")
            }
            if let peak = request["peakTime"]?.double {
                XCTAssertLessThanOrEqual(Swift.abs(measured.peakTime - peak), Swift.max(0.005 * peak, 0.0005), "\(body): peak \(measured.peakTime)")
            }
            if let settling = request["settlingTime"]?.double {
                XCTAssertLessThanOrEqual(relative(measured.settlingTime, settling), 0.005, "\(body): settling \(measured.settlingTime)")
                XCTAssertEqual(measured.settlingTime, answer["settlingTime"]?.double, "the node rests when the translator says")
            }
        }
    }

    func testLinearEasingDrivesATweenLikeTheSpring() throws {
        let answer = try springs(#"{"response": 0.5, "dampingRatio": 0.55}"#)
        let css = try XCTUnwrap(answer["easing"]?["css"]?.string)
        let duration = try XCTUnwrap(answer["easing"]?["duration"]?.double)
        let stiffness = try XCTUnwrap(answer["stiffness"]?.double), damping = try XCTUnwrap(answer["damping"]?.double)
        let body = try timeline(server, """
            {"fps": 500, "target": {"eased": 0, "spring": 0}, "output": {"events": false, "final": false},
             "motion": {"type": "group", "children": [
               {"type": "tween", "duration": \(duration), "easing": "\(css)", "properties": [{"path": "eased", "to": 1}]},
               {"type": "spring", "stiffness": \(stiffness), "damping": \(damping), "restDelta": 0.001, "restSpeed": 0.001,
                "properties": [{"path": "spring", "from": 0, "to": 1}]}]}}
            """)
        let tracks = try XCTUnwrap(body["tracks"]?.array)
        let eased = try XCTUnwrap(tracks.first { $0["path"] == "eased" }?["values"]?.doubles)
        let spring = try XCTUnwrap(tracks.first { $0["path"] == "spring" }?["values"]?.doubles)
        XCTAssertEqual(eased.count, spring.count)
        let worst = zip(eased, spring).map { Swift.abs($0 - $1) }.max() ?? .infinity
        XCTAssertLessThanOrEqual(worst, 0.001 + 1e-12)
        XCTAssertLessThanOrEqual(worst, try XCTUnwrap(answer["easing"]?["error"]?.double) + 1e-12)
    }

    func testRefusals() throws {
        for (body, status, pointer) in [
            (#"{"response": 0.5, "dampingRatio": 0.6, "stiffness": 100}"#, 422, "/stiffness"),
            (#"{"tension": 100, "friction": 10}"#, 422, "/mass"),
            (#"{"overshoot": 1.2, "peakTime": 0.3}"#, 422, "/overshoot"),
            (#"{"overshoot": 0.2, "peakTime": -1}"#, 422, "/peakTime"),
            (#"{"duration": 0.5, "bounce": 1}"#, 422, "/bounce"),
            (#"{"response": 0.5, "dampingRatio": 0.6, "tolerance": 1}"#, 422, "/tolerance"),
            (#"{"response": 0.5, "dampingRatio": true}"#, 400, "/dampingRatio"),
            (#"{"response": 0.5, "dampingRatio": 0.5, "color": 1}"#, 400, "/color"),
        ] {
            let response = try post(server, "/v1/springs", body)
            let problem = try assertProblem(response, status: status)
            XCTAssertTrue(problemEntries(problem).contains { $0.pointer == pointer }, "\(body): \(response.text)")
        }
        try assertProblem(post(server, "/v1/springs", #"{"response": 1, "dampingRatio": 1}"#, contentType: "text/plain"), status: 415)
        let get = try self.get(server, "/v1/springs")
        XCTAssertEqual(get.status, 405)
        assertHealthy(server)
    }

    /// `motion-server springs FILE` and `… springs < body` print exactly the endpoint's answer.
    func testSpringsSubcommandPrintsTheEndpointsAnswer() throws {
        let binary = try TestServer.locateBinary()
        func run(_ arguments: [String], stdin: [UInt8]) throws -> (output: [UInt8], status: Int32) {
            let process = Process()
            process.executableURL = binary
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MOTION_") }
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(Data(stdin))
            try input.fileHandleForWriting.close()
            let bytes = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (Array(bytes), process.terminationStatus)
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("springs-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        for (body, status) in [(#"{"overshoot": 0.15, "peakTime": 0.25, "velocity": 1}"#, Int32(0)),
                               (#"{"response": 0.5, "stiffness": 3}"#, 1),
                               (#"{"response": "fast"}"#, 1)] {
            let answer = try post(server, "/v1/springs", body)
            try Data(body.utf8).write(to: file)
            let fromFile = try run(["springs", file.path], stdin: [])
            let fromStdin = try run(["springs"], stdin: Array(body.utf8))
            for result in [fromFile, fromStdin] {
                // The endpoint's bytes on success; a problem goes to stderr (as `render` does).
                XCTAssertEqual(String(decoding: result.output, as: UTF8.self), status == 0 ? answer.text : "", body)
                XCTAssertEqual(result.status, status, body)
            }
        }
    }
}
