import Foundation
import XCTest

/// `output.format` and `output.simplify` on `POST /v1/timelines` (docs/exports.md): the json
/// reduction against the exact frames, csv read by Python's `csv` module, svg parsed as XML
/// by Python's `xml.etree`, and the 422s naming the field.
final class ExportEndpointTests: DefaultServerTestCase {
    /// Runs a Python 3 script with `input` on stdin and returns its stdout parsed as JSON.
    func python(_ script: String, input: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, String(decoding: errors, as: UTF8.self), file: file, line: line)
        return try JSONValue.parse(Array(output))
    }

    func problemPointers(_ document: String) throws -> [String] {
        let response = try post(server, "/v1/timelines", document)
        let body = try assertProblem(response, status: 422)
        return problemEntries(body).map(\.pointer)
    }

    // MARK: - json with simplify

    func testLinearTweenSimplifiesToTwoKeyframes() throws {
        let body = try timeline(server, """
            {"fps": 60, "target": {"x": 20},
             "motion": {"type": "tween", "duration": 1, "easing": "linear", "properties": [{"path": "x", "to": 200}]},
             "output": {"simplify": {"tolerance": 0.001}}}
            """)
        XCTAssertNil(body["times"], "no top-level times with simplify")
        XCTAssertEqual(body["frameCount"], 61, "frameCount still tells the frame grid")
        XCTAssertEqual(body["tracks"]?[0]?["path"], "x")
        XCTAssertEqual(body["tracks"]?[0]?["times"], [0, 1])
        XCTAssertEqual(body["tracks"]?[0]?["values"], [20, 200])
        XCTAssertNil(body["tracks"]?[0]?["slopes"])
        XCTAssertLessThanOrEqual(try XCTUnwrap(body["tracks"]?[0]?["error"]?.double), 0.001)
        XCTAssertEqual(body["events"]?.array?.count, 2)
        XCTAssertEqual(body["final"], ["x": 200])
    }

    /// Cubic Hermite segments rebuilt from the answer match the exact frames of the same
    /// document asked for without simplify, within ε.
    func testCubicKeyframesReproduceTheFrames() throws {
        let document = { (output: String) in """
            {"fps": 240, "target": {"x": 0, "ball": 0},
             "motion": {"type": "group", "children": [
               {"type": "spring", "response": 0.5, "dampingRatio": 0.4, "properties": [{"path": "x", "to": 100}]},
               {"type": "physics", "velocity": 400, "friction": 0.4, "restitution": 0.7, "collisions": true,
                "properties": [{"path": "ball", "from": 0, "to": 100}]}]},
             "output": \(output)}
            """ }
        let exact = try timeline(server, document(#"{"events": false}"#))
        let tolerance = 0.05
        let reduced = try timeline(server, document(#"{"events": false, "simplify": {"tolerance": 0.05, "interpolation": "cubic"}}"#))
        let times = try XCTUnwrap(exact["times"]?.doubles)
        for (index, track) in (reduced["tracks"]?.array ?? []).enumerated() {
            let keyTimes = try XCTUnwrap(track["times"]?.doubles), values = try XCTUnwrap(track["values"]?.doubles)
            let slopes = try XCTUnwrap(track["slopes"]?.array?.map { try XCTUnwrap($0.doubles) })
            XCTAssertEqual(slopes.count, keyTimes.count)
            XCTAssertTrue(slopes.allSatisfy { $0.count == 2 })
            XCTAssertLessThan(keyTimes.count, times.count / 4, "\(track["path"]!): \(keyTimes.count) keyframes for \(times.count) frames")
            let frames = try XCTUnwrap(exact["tracks"]?[index]?["values"]?.doubles)
            for (k, t) in times.enumerated() {
                var i = 0
                while i + 2 < keyTimes.count, keyTimes[i + 1] <= t { i += 1 }
                let (t0, t1) = (keyTimes[i], keyTimes[i + 1])
                let h = t1 - t0, u = h > 0 ? (t - t0) / h : 1
                let value = (2 * u * u * u - 3 * u * u + 1) * values[i] + (u * u * u - 2 * u * u + u) * h * slopes[i][1]
                    + (-2 * u * u * u + 3 * u * u) * values[i + 1] + (u * u * u - u * u) * h * slopes[i + 1][0]
                XCTAssertEqual(value, frames[k], accuracy: tolerance, "\(track["path"]!) at \(t)")
            }
        }
    }

    // MARK: - csv

    func testCSVReadsBackWithPythonsCSVModule() throws {
        let document = ##"""
            {"fps": 10, "target": {"frame": {"x": 0, "y": 5}, "tint": "#336699", "say \"hi\", twice": 1},
             "motion": {"type": "tween", "duration": 0.5, "easing": "ease-in-out", "properties": [
               {"path": "frame", "to": {"x": 100, "y": 5}}, {"path": "tint", "to": "#ff9933"},
               {"path": "say \"hi\", twice", "to": 0}]},
             "output": {"format": "csv"}}
            """##
        let response = try post(server, "/v1/timelines", document)
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(response.mediaType, "text/csv")
        XCTAssertTrue(response.text.hasSuffix("\r\n"))
        XCTAssertFalse(response.text.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "every line ends in CRLF")
        let rows = try python("""
            import csv, io, json, sys
            text = sys.stdin.buffer.read().decode('utf-8')
            print(json.dumps(list(csv.reader(io.StringIO(text, newline=''), strict=True))))
            """, input: response.body)
        let exact = try timeline(server, document.replacingOccurrences(of: #""format": "csv""#, with: #""format": "json""#))
        let paths = (exact["tracks"]?.array ?? []).compactMap { $0["path"]?.string }
        XCTAssertEqual(paths, ["frame.x", "tint.red", "tint.green", "tint.blue", #"say "hi", twice"#])
        XCTAssertEqual(rows[0], .array((["time"] + paths).map(JSONValue.string)), "header: time, then every track path (quoted where needed)")
        let times = try XCTUnwrap(exact["times"]?.doubles)
        XCTAssertEqual(rows.array?.count, times.count + 1)
        for (k, t) in times.enumerated() {
            let row = try XCTUnwrap(rows[k + 1]?.array?.map { try XCTUnwrap(Double(XCTUnwrap($0.string))) })
            XCTAssertEqual(row[0], t, "time of row \(k)")
            for (column, _) in paths.enumerated() {
                XCTAssertEqual(row[column + 1], exact["tracks"]?[column]?["values"]?[k]?.double, "row \(k), \(paths[column]): numbers round-trip exactly")
            }
        }
    }

    // MARK: - svg

    func testSVGIsAReadablePlot() throws {
        let response = try post(server, "/v1/timelines", """
            {"fps": 30, "target": {"x": 0, "ball": 0, "opacity": 1},
             "motion": {"type": "group", "children": [
               {"type": "spring", "response": 0.5, "dampingRatio": 0.5, "properties": [{"path": "x", "to": 100}]},
               {"type": "physics", "velocity": 300, "friction": 0.5, "restitution": 0.6, "collisions": true,
                "properties": [{"path": "ball", "from": 0, "to": 100}]},
               {"type": "tween", "id": "fade", "delay": 0.5, "duration": 0.5, "properties": [{"path": "opacity", "to": 0}]}]},
             "output": {"format": "svg", "svg": {"width": 800, "height": 420}}}
            """)
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(response.mediaType, "image/svg+xml")
        let parsed = try python("""
            import json, sys, xml.etree.ElementTree as ET
            ns = {'s': 'http://www.w3.org/2000/svg'}
            root = ET.fromstring(sys.stdin.buffer.read())
            tracks = root.findall('s:g[@class="track"]', ns)
            print(json.dumps({
              'width': root.get('width'), 'height': root.get('height'),
              'lines': [t.find('s:path', ns).get('d') for t in tracks],
              'labels': [[x.text for x in t.findall('s:text', ns)] for t in tracks],
              'ticks': [x.text for x in root.findall('s:g[@class="ticks"]/s:text', ns)],
              'marks': len(root.findall('s:g[@class="events"]/s:line', ns)),
              'markLabels': [x.text for x in root.findall('s:g[@class="events"]/s:text', ns)]}))
            """, input: response.body)
        XCTAssertEqual(parsed["width"], "800")
        XCTAssertEqual(parsed["height"], "420")
        XCTAssertEqual(parsed["lines"]?.array?.count, 3, "one line per track")
        XCTAssertEqual(parsed["labels"]?[0]?[0], "x")
        XCTAssertEqual(parsed["labels"]?[1]?[0], "ball")
        XCTAssertEqual(parsed["labels"]?[2]?[0], "opacity")
        XCTAssertEqual(parsed["labels"]?[2]?[1], "0 … 1", "the range of the track")
        XCTAssertEqual(parsed["labels"]?[1]?[1], "0 … 100", "the ball reaches the walls at 0 and 100 between frames")
        let ticks = try XCTUnwrap(parsed["ticks"]?.array?.compactMap { $0.string.flatMap(Double.init) })
        XCTAssertGreaterThanOrEqual(ticks.count, 3)
        XCTAssertEqual(ticks.first, 0)
        let timeline = try timeline(server, String(decoding: Array(#"{"fps": 30, "target": {"x": 0, "ball": 0, "opacity": 1}, "motion": {"type": "group", "children": [{"type": "spring", "response": 0.5, "dampingRatio": 0.5, "properties": [{"path": "x", "to": 100}]}, {"type": "physics", "velocity": 300, "friction": 0.5, "restitution": 0.6, "collisions": true, "properties": [{"path": "ball", "from": 0, "to": 100}]}, {"type": "tween", "id": "fade", "delay": 0.5, "duration": 0.5, "properties": [{"path": "opacity", "to": 0}]}]}}"#.utf8), as: UTF8.self))
        var instants: [Double] = []
        for time in timeline["events"]?.array?.compactMap({ $0["time"]?.double }) ?? [] where instants.last.map({ abs($0 - time) > 1e-9 }) ?? true {
            instants.append(time)
        }
        XCTAssertEqual(parsed["marks"]?.int, instants.count, "one mark per event instant")
        let labels = parsed["markLabels"]?.array?.compactMap(\.string) ?? []
        XCTAssertTrue(labels.contains { $0.contains("started fade") }, "\(labels)")
        XCTAssertTrue(labels.contains { $0.contains("collided") }, "\(labels)")
    }

    /// With `simplify` the svg draws the keyframes of the json reduction over the exact curve.
    func testSVGWithSimplifyDrawsTheJSONKeyframes() throws {
        let document = { (output: String) in """
            {"fps": 60, "target": {"x": 0, "y": 0},
             "motion": {"type": "group", "children": [
               {"type": "spring", "response": 0.5, "dampingRatio": 0.4, "properties": [{"path": "x", "to": 100}]},
               {"type": "tween", "duration": 1, "easing": "steps(3, jump-end)", "properties": [{"path": "y", "to": 30}]}]},
             "output": \(output)}
            """ }
        let keys = try timeline(server, document(#"{"simplify": {"tolerance": 0.5, "interpolation": "cubic"}}"#))
        let response = try post(server, "/v1/timelines", document(#"{"format": "svg", "simplify": {"tolerance": 0.5, "interpolation": "cubic"}}"#))
        XCTAssertEqual(response.status, 200, response.text)
        let parsed = try python("""
            import json, sys, xml.etree.ElementTree as ET
            ns = {'s': 'http://www.w3.org/2000/svg'}
            root = ET.fromstring(sys.stdin.buffer.read())
            tracks = root.findall('s:g[@class="track"]', ns)
            print(json.dumps([{'paths': [p.get('d') for p in t.findall('s:path', ns)],
                               'dots': len(t.findall('s:g/s:circle', ns)),
                               'range': t.findall('s:text', ns)[1].text} for t in tracks]))
            """, input: response.body)
        let tracks = keys["tracks"]?.array ?? []
        XCTAssertEqual(tracks.count, 2)
        for (index, track) in tracks.enumerated() {
            let count = try XCTUnwrap(track["times"]?.array?.count)
            XCTAssertEqual(parsed[index]?["dots"]?.int, count, "one dot per keyframe of \(track["path"]!)")
            XCTAssertEqual(parsed[index]?["paths"]?.array?.count, 2, "the exact curve and the keyframes' curve")
            XCTAssertTrue(parsed[index]?["range"]?.string?.hasSuffix(", \(count) keyframes") ?? false, "\(parsed[index]!)")
        }
        XCTAssertTrue(parsed[0]?["paths"]?[1]?.string?.contains("C") ?? false, "cubic segments are drawn as Bézier curves")
    }

    // MARK: - Bad input

    func testBadOutputOptionsAre422NamingTheField() throws {
        let motion = #""target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]}"#
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"format": "gif"}}"#), ["/output/format"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"format": "css", "css": {"selector": 1}}}"#), ["/output/css/selector"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"format": "waapi", "css": {"declarations": {"opacity": "{y}"}}}}"#), ["/output/css/declarations/opacity"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"css": {"selector": ".a"}}}"#), ["/output/css"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"format": "lottie"}}"#), ["/output/lottie"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"format": "css", "lottie": {}}}"#), ["/output/lottie"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"simplify": {"tolerance": 0}}}"#), ["/output/simplify/tolerance"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"simplify": {"tolerance": -1}}}"#), ["/output/simplify/tolerance"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"simplify": {"tolerance": 1, "interpolation": "bezier"}}}"#), ["/output/simplify/interpolation"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"format": "csv", "simplify": {"tolerance": 1}}}"#), ["/output/simplify"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"layout": "frames", "simplify": {"tolerance": 1}}}"#), ["/output/simplify"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"format": "svg", "svg": {"width": 100000}}}"#), ["/output/svg/width"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"format": "svg", "svg": {"height": 10}}}"#), ["/output/svg/height"])
        XCTAssertEqual(try problemPointers(#"{\#(motion), "output": {"svg": {"width": 500}}}"#), ["/output/svg"])
        let many = (0..<12).map { #"{"path": "p\#($0)", "to": 1}"# }.joined(separator: ",")
        let target = (0..<12).map { #""p\#($0)": 0"# }.joined(separator: ",")
        XCTAssertEqual(try problemPointers(#"{"target": {\#(target)}, "motion": {"type": "tween", "duration": 1, "properties": [\#(many)]}, "output": {"format": "svg", "svg": {"height": 300}}}"#),
                       ["/output/svg/height"], "12 lanes do not fit in 300 px")
        // A tolerance too small to reach within the work limits.
        XCTAssertEqual(try problemPointers(#"{"fps": 60, "target": {"x": 0}, "motion": {"type": "tween", "duration": 100, "repeat": 20, "easing": "elastic.inOut", "properties": [{"path": "x", "to": 1000000}]}, "output": {"simplify": {"tolerance": 1e-9}}}"#),
                       ["/output/simplify/tolerance"])
        // Streams and sessions write frames: formats and reduction are refused there.
        for path in ["/v1/streams", "/v1/sessions"] {
            let response = try post(server, path, #"{\#(motion), "output": {"format": "csv"}}"#)
            XCTAssertEqual(problemEntries(try assertProblem(response, status: 422)).map(\.pointer), ["/output/format"], path)
        }
        assertHealthy(server)
    }
}
