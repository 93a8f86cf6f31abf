import XCTest
@testable import MotionEngine

/// The `svg` plot's text: XML escaping and the event marks' size, counted before drawing.
final class SVGEncoderTests: XCTestCase {
    /// The rules, one scalar at a time, as the plot escaped text before it walked bytes.
    private func reference(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\t", "\n", "\r": result += " "
            default:
                if scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) {
                    result += "\u{FFFD}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    private func escaped(_ text: String) -> String {
        var bytes: [UInt8] = []
        SVGEncoder.escape(text) { bytes.append(contentsOf: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    func testEscapingFollowsXMLsRulesByteForByte() {
        var samples = ["", "plain", "a&b<c>d\"e'f", "tab\tline\nreturn\r", "\u{0}\u{1}\u{1F}", "\u{FFFE}\u{FFFF}\u{FFFD}",
                       "é ü ß 中文 🎉", "\u{FEFF}\u{EF}", "&&&&", "x\u{FFFE}", "\u{FFFF}y", "\u{7F}\u{80}\u{D7FF}\u{E000}"]
        // Every scalar of the planes the rules touch, in runs, and random mixtures.
        samples.append(String(String.UnicodeScalarView((0..<0x300).compactMap(Unicode.Scalar.init))))
        samples.append(String(String.UnicodeScalarView((0xFF00..<0x10100).compactMap(Unicode.Scalar.init))))
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Unicode.Scalar] = ["&", "<", ">", "\"", "'", "\t", "\n", "\u{1}", "\u{FFFE}", "\u{FFFF}", "\u{FFFD}", "a", "é", "🎉", "\u{EFBF}"]
        for _ in 0..<500 {
            let count = Int.random(in: 0..<40, using: &generator)
            samples.append(String(String.UnicodeScalarView((0..<count).map { _ in alphabet.randomElement(using: &generator)! })))
        }
        for sample in samples {
            XCTAssertEqual(escaped(sample), reference(sample), sample.debugDescription)
            XCTAssertEqual(SVGEncoder.escapedLength(sample), reference(sample).utf8.count)
        }
    }

    /// The events are counted at what their marks write (`EventMark.bytes`): counting 200
    /// bytes an event, a 50 KB document (a 50,000-character id on 2,500 events) made a
    /// 630 MB plot. A mark names a motion id of at most `maxMarkedName` characters.
    func testEventMarksAreCountedAtWhatTheyWrite() throws {
        let id = String(repeating: "&'", count: 1_000)
        let timeline = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","id":"\#(id)","duration":0.01,"repeat":30,"properties":[{"path":"x","to":1}]},"output":{"format":"svg"}}"#)
        let marks = SVGEncoder.eventMarks(timeline)
        XCTAssertGreaterThan(marks.count, 30)
        for mark in marks {
            XCTAssertLessThanOrEqual(mark.title.unicodeScalars.count, 80 + 2 + SVGEncoder.maxMarkedName)
            XCTAssertTrue(mark.title.hasSuffix("…"), mark.title)
        }
        let svg = String(decoding: try SVGEncoder.encode(timeline: timeline), as: UTF8.self)
        let events = try XCTUnwrap(svg.range(of: "<g class=\"events\"")).lowerBound
        let group = svg[events...]
        let end = try XCTUnwrap(group.range(of: "</g>\n"))
        let written = group[..<end.upperBound].utf8.count
        let counted = marks.reduce(0) { $0 + $1.bytes }
        XCTAssertLessThanOrEqual(written, counted)
        XCTAssertGreaterThan(written * 3, counted, "counted far beyond what is written")
        XCTAssertTrue(svg.contains("&amp;&apos;&amp;&apos;"))

        // Over --max-response-bytes with its events (five bytes for each `&` of the id,
        // where the json answer takes one): a 422 before drawing.
        var limits = EngineLimits.default
        limits.maxResponseBytes = 300_000
        let ampersands = String(repeating: "&", count: SVGEncoder.maxMarkedName - 12)
        let many = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","id":"\#(ampersands)","duration":0.01,"repeat":400,"properties":[{"path":"x","to":1}]},"output":{"format":"svg"}}"#,
                               limits: limits)
        XCTAssertThrowsError(try SVGEncoder.encode(timeline: many)) { error in
            let problem = (error as? DocumentError)?.problems.first
            XCTAssertEqual(problem?.pointer, "/output/svg/width")
            XCTAssertTrue(problem?.message.contains("leave out events") ?? false, problem?.message ?? "")
        }
    }

    /// What one evaluation of a track counts against the reduction and drawing budgets: one,
    /// one more for each additive layer, four for a path curve.
    func testEvaluationCostsWeighPathsAndLayers() throws {
        XCTAssertEqual(try compile(#"{"fps":1,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#).tracks.map(\.evaluationCost), [1])
        let path = try compile(#"{"fps":1,"target":{},"motion":{"type":"path","path":"M0 0 C10 50 90 50 100 0","duration":1,"output":"p","rotation":"r"}}"#)
        XCTAssertEqual(path.tracks.map(\.evaluationCost), [4, 4, 4])
        let layered = try compile(#"{"fps":1,"target":{"x":0},"motion":{"type":"group","repeat":2,"children":[{"type":"tween","additive":true,"duration":1,"properties":[{"path":"x","from":0,"to":1}]}]}}"#)
        XCTAssertEqual(layered.tracks.map(\.evaluationCost), [4])  // three layers over the base
    }

    /// The plot's range scans and envelopes have a budget of their own, counted as reductions
    /// count evaluations: a lane that adds up 10,000 additive layers costs 10,001 at each of
    /// its scan's 675 points, over the 5,000,000, and is refused before any is evaluated.
    func testDrawingIsBoundedAsReductionsAre() throws {
        let layers = #"{"fps":1,"window":{"start":0,"end":1},"target":{"x":0},"motion":{"type":"group","repeat":9999,"children":[{"type":"tween","additive":true,"duration":1,"properties":[{"path":"x","from":0,"to":1}]}]},"output":{"format":"svg","events":false}}"#
        let timeline = try compile(layers)
        XCTAssertEqual(timeline.tracks.first?.evaluationCost, 10_001)
        XCTAssertThrowsError(try SVGEncoder.encode(timeline: timeline)) { error in
            let problem = (error as? DocumentError)?.problems.first
            XCTAssertEqual(problem?.pointer, "/output/format")
            XCTAssertTrue(problem?.message.contains("the plot needs more than 5000000 curve evaluations in all to find its lanes' ranges") ?? false, problem?.message ?? "")
            XCTAssertTrue(problem?.message.contains("track 'x' counts 10001 at each point") ?? false, problem?.message ?? "")
        }
        // 1,000 layers: 675,675 evaluations, drawn.
        let fewer = try compile(layers.replacingOccurrences(of: #""repeat":9999"#, with: #""repeat":999"#))
        let svg = String(decoding: try SVGEncoder.encode(timeline: fewer), as: UTF8.self)
        XCTAssertTrue(svg.hasSuffix("</svg>\n"))
    }
}
