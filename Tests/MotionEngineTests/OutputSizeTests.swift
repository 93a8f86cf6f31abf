import Foundation
import XCTest
@testable import MotionEngine

/// `max-response-bytes` (issue #19 item 3): the size of an answer is bounded from the compiled
/// timeline before anything is encoded, and the bound is never below what is written.
final class OutputSizeTests: XCTestCase {
    private func expectOverLimit(_ document: String, for use: OutputSize.Use, limits: EngineLimits = .default,
                                 mentioning text: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try TimelineCompiler(limits: limits).compile(Array(document.utf8), for: use)
            XCTFail("document accepted", file: file, line: line)
        } catch {
            XCTAssertEqual(error.status, 422, file: file, line: line)
            XCTAssertEqual(error.problems.map(\.pointer), [""], "\(error.problems)", file: file, line: line)
            let message = error.problems.first?.message ?? ""
            XCTAssertTrue(message.contains("(max-response-bytes)"), message, file: file, line: line)
            XCTAssertTrue(message.contains(text), message, file: file, line: line)
        }
    }

    /// Every stream piece the encoder writes for `timeline`.
    private func streamPieces(_ timeline: Timeline, _ format: FrameStreamEncoder.Format) -> [Int] {
        var encoder = FrameStreamEncoder(timeline: timeline, format: format)
        var sizes: [Int] = []
        while !encoder.isFinished {
            var bytes: [UInt8] = []
            encoder.writeNext(into: &bytes)
            sizes.append(bytes.count)
        }
        return sizes
    }

    /// The estimate is at least what the encoders write, for the response and every stream piece.
    private func assertBounds(_ document: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let timeline = try TimelineCompiler().compile(Array(document.utf8))
        let written = TimelineEncoder.encode(timeline).count
        let estimate = OutputSize.estimate(timeline, for: .response)
        XCTAssertGreaterThanOrEqual(estimate, Double(written), document, file: file, line: line)
        XCTAssertLessThan(estimate, Double(written) * 4 + 4096, "too pessimistic: \(document)", file: file, line: line)
        let piece = OutputSize.estimate(timeline, for: .stream)
        for format in [FrameStreamEncoder.Format.ndjson, .serverSentEvents] {
            XCTAssertGreaterThanOrEqual(piece, Double(streamPieces(timeline, format).max() ?? 0), document, file: file, line: line)
        }
    }

    func testEstimateIsAnUpperBound() throws {
        let documents = [
            #"{"fps":30,"target":{"x":0},"motion":{"type":"tween","id":"slide \"in\"\n","duration":2,"repeat":3,"reverses":true,"properties":[{"path":"x","to":1.2345678901234567}]}}"#,
            ##"{"fps":60,"target":{"box":{"pos":[0,0,0],"tint":"#ff0000"}},"output":{"layout":"frames"},"motion":{"type":"group","children":[{"type":"tween","duration":1,"properties":[{"path":"box.pos.1","to":-1e-7},{"path":"box.tint","to":"#00ff0080"}]},{"type":"spring","response":0.4,"dampingRatio":0.5,"properties":[{"path":"box.pos.2","to":1e14}]}]}}"##,
            #"{"fps":10,"target":{},"output":{"layout":"frames"},"motion":{"type":"path","path":"M0 0 A50 50 0 0 1 100 0","duration":1,"output":"a.b.c","rotation":"a.angle"}}"#,
            #"{"fps":1000,"window":{"start":0,"end":3},"target":{"x":0},"motion":{"type":"tween","duration":0.001,"repeat":"infinite","properties":[{"path":"x","to":3}]}}"#,
        ]
        for document in documents { try assertBounds(document) }
    }

    /// The README's example documents are not refused, and their estimates hold.
    func testReadmeDocumentsPass() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let regex = try NSRegularExpression(pattern: "-d '(\\{.*?\\})'", options: [.dotMatchesLineSeparators])
        let matches = regex.matches(in: text, range: NSRange(text.startIndex..., in: text))
        XCTAssertGreaterThan(matches.count, 5)
        for match in matches {
            let document = String(text[Range(match.range(at: 1), in: text)!])
            for use in [OutputSize.Use.response, .stream, .session(backlogFrames: 120)] {
                do {
                    _ = try TimelineCompiler().compile(Array(document.utf8), for: use)
                } catch {
                    XCTAssertFalse(error.problems.contains { $0.message.contains("max-response-bytes") }, "\(document): \(error.problems)")
                }
            }
            if (try? TimelineCompiler().compile(Array(document.utf8))) != nil { try assertBounds(document) }
        }
    }

    func testLongIdInEveryEventIsRefused() {
        // ~100 kB document, ~10 GB of events.
        let id = String(repeating: "i", count: 100_000)
        let document = #"{"target":{"x":0},"motion":{"type":"tween","id":"\#(id)","duration":0.001,"repeat":99998,"properties":[{"path":"x","to":1}]}}"#
        let started = Date()
        expectOverLimit(document, for: .response, mentioning: "the response")
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
        // Without events in the answer the ids are not written: accepted.
        let quiet = document.replacingOccurrences(of: #"{"target""#, with: #"{"output":{"events":false},"target""#)
        XCTAssertNoThrow(try TimelineCompiler().compile(Array(quiet.utf8)))
    }

    func testWholeArrayInEveryFramesRowIsRefused() {
        // 10,000 numbers, one of them animated: each `frames` row repeats the whole array.
        let array = "[" + Array(repeating: "0", count: 10_000).joined(separator: ",") + "]"
        let to = array.replacingOccurrences(of: "[0,0,0,0,0,0", with: "[0,0,0,0,0,1")
        let document = #"{"fps":100,"target":{"a":\#(array)},"output":{"layout":"frames"},"motion":{"type":"tween","duration":100,"properties":[{"path":"a","to":\#(to)}]}}"#
        expectOverLimit(document, for: .response, mentioning: "the response")
        // The tracks layout writes the one animated leaf: fine.
        let tracks = document.replacingOccurrences(of: #""layout":"frames""#, with: #""layout":"tracks""#)
        XCTAssertNoThrow(try TimelineCompiler().compile(Array(tracks.utf8)))
    }

    func testLongPathAsAKeyInEveryRowIsRefused() {
        let key = String(repeating: "k", count: 10_000)
        let document = #"{"fps":100,"target":{"\#(key)":0},"output":{"layout":"frames"},"motion":{"type":"tween","duration":100,"properties":[{"path":"\#(key)","to":1}]}}"#
        expectOverLimit(document, for: .response, mentioning: "the response")
        // A stream writes the key once per frame: one frame is small.
        XCTAssertNoThrow(try TimelineCompiler().compile(Array(document.utf8), for: .stream))
    }

    func testAllEventsOnOneStreamFrameAreRefused() {
        // duration 0: every repeat's events fall on frame 0, written in one piece.
        let id = String(repeating: "e", count: 2_000)
        let document = #"{"target":{"x":0},"motion":{"type":"tween","id":"\#(id)","duration":0,"repeat":40000,"properties":[{"path":"x","to":1}]}}"#
        expectOverLimit(document, for: .stream, mentioning: "one stream frame with its events")
        // The same number of events spread over time: each frame is small, the stream is fine.
        let spread = document.replacingOccurrences(of: #""duration":0,"#, with: #""duration":0.1,"#)
        XCTAssertNoThrow(try TimelineCompiler().compile(Array(spread.utf8), for: .stream))
        expectOverLimit(spread, for: .response, mentioning: "the response")
    }

    func testSessionReadIsBounded() {
        let key = String(repeating: "p", count: 100_000)
        let document = #"{"fps":60,"target":{"\#(key)":0},"motion":{"type":"tween","duration":100,"properties":[{"path":"\#(key)","to":1}]}}"#
        // 120 backlog frames × a 100 kB key: about 12 MB per read.
        let limits = EngineLimits(maxResponseBytes: 8 << 20)
        expectOverLimit(document, for: .session(backlogFrames: 120), limits: limits, mentioning: "session watcher read")
        XCTAssertNoThrow(try TimelineCompiler(limits: limits).compile(Array(document.utf8), for: .session(backlogFrames: 10)))
    }

    func testLimitIsConfigurable() {
        let document = #"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":10,"properties":[{"path":"x","to":1}]}}"#
        XCTAssertNoThrow(try TimelineCompiler().compile(Array(document.utf8)))
        expectOverLimit(document, for: .response, limits: EngineLimits(maxResponseBytes: 10_000), mentioning: "10000 bytes")
        XCTAssertEqual(EngineLimits.default.maxResponseBytes, 67_108_864)
    }
}

extension OutputSizeTests {
    /// Ids just under the limit are measured once per distinct string, not once per event.
    func testLongIdsAreMeasuredQuickly() throws {
        let id = String(repeating: "m", count: 600)
        let document = #"{"target":{"x":0},"motion":{"type":"tween","id":"\#(id)","duration":0,"repeat":49000,"properties":[{"path":"x","to":1}]}}"#
        let started = Date()
        let timeline = try TimelineCompiler().compile(Array(document.utf8), for: .stream)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        let estimate = OutputSize.estimate(timeline, for: .stream)
        XCTAssertGreaterThanOrEqual(estimate, Double(49_000 * 600))
    }
    /// A string's measure is exactly what `JSONWriter.string` writes: every byte below 0x80
    /// alone and among others, multi-byte characters, empty, long (heap-stored) strings.
    func testStringBytesAreTheWrittenLength() {
        var samples = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        samples += ["", "x", "é", "€", "😀", "a\"b\\c\nd\re\tf\u{1}g\u{1f}", String(repeating: "\u{0}é\"", count: 40)]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let length = Int.random(in: 0..<80, using: &generator)
            samples.append(String(String.UnicodeScalarView((0..<length).map { _ in
                UnicodeScalar(UInt8.random(in: 0..<128, using: &generator))
            })) + (Bool.random(using: &generator) ? "ü" : ""))
        }
        for text in samples {
            var writer = JSONWriter()
            writer.string(text)
            XCTAssertEqual(OutputSize.stringBytes(text), writer.bytes.count, text.debugDescription)
        }
    }
}
