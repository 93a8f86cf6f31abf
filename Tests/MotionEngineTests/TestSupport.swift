import XCTest
@testable import MotionEngine

/// Compiles a document given as JSON text.
func compile(_ text: String, limits: EngineLimits = .default, file: StaticString = #filePath, line: UInt = #line) throws -> Timeline {
    do {
        return try TimelineCompiler(limits: limits).compile(Array(text.utf8))
    } catch {
        XCTFail("document rejected: \(error.problems)", file: file, line: line)
        throw error
    }
}

/// The problems a document is rejected with (fails the test when it is accepted).
func problems(_ text: String, limits: EngineLimits = .default, file: StaticString = #filePath, line: UInt = #line) -> DocumentError {
    do {
        _ = try TimelineCompiler(limits: limits).compile(Array(text.utf8))
        XCTFail("document accepted", file: file, line: line)
        return DocumentError([])
    } catch {
        return error
    }
}

extension Timeline {
    /// Every sample of the track at `path`.
    func values(of path: String) -> [Double] {
        guard let track = tracks.first(where: { $0.path == path }) else { return [] }
        return (0..<frameCount).map { track.value(at: time(ofFrame: $0)) }
    }

    var times: [Double] { (0..<frameCount).map { time(ofFrame: $0) } }

    /// The events as `type@time` strings, for compact order assertions.
    var eventSummary: [String] { events.map { "\($0.kind.rawValue)@\(format($0.time))" } }
}

/// The body as a JSON value.
func parseJSON(_ bytes: [UInt8]) throws -> JSON { try JSONParser.parse(bytes) }
