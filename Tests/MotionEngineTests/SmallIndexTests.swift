import XCTest
@testable import MotionEngine

/// `SmallIndex` finds every key of a growing array at its position, below the linear limit,
/// across it and far past it, made with and without an expected size; and TrackBuilder's
/// tracks stay one a path with many properties.
final class SmallIndexTests: XCTestCase {
    func testEveryKeyIsFoundAtItsPositionAcrossTheLimit() {
        for (expected, reserving) in [(0, false), (3, false), (SmallIndex<String>.linearLimit, false),
                                      (SmallIndex<String>.linearLimit + 1, false), (500, false), (0, true), (3, true)] {
            var keys: [String] = []
            var index = SmallIndex<String>(expected: expected)
            for n in 0..<200 {
                // Room made now and then for a few more keys (`reserve`), across the limit too.
                if reserving, n % 9 == 4 { index.reserve(n % 23, count: keys.count) { keys[$0] } }
                let key = "p\(n * 7 % 200)"
                XCTAssertNil(index.position(of: key, count: keys.count) { keys[$0] }, "\(key) before it is added")
                keys.append(key)
                index.appended(key, count: keys.count) { keys[$0] }
                // Every key so far, and one never added.
                for (position, earlier) in keys.enumerated() {
                    XCTAssertEqual(index.position(of: earlier, count: keys.count) { keys[$0] }, position, "\(earlier), expected \(expected)")
                }
                XCTAssertNil(index.position(of: "absent", count: keys.count) { keys[$0] })
            }
        }
    }

    /// Properties past the limit, some named twice in one group: each path gets one track
    /// and one output, with the values of the last start.
    func testManyPropertiesKeepOneTrackAPath() throws {
        let count = 3 * SmallIndex<String>.linearLimit
        let first = (0..<count).map { #"{"path":"p\#($0)","from":0,"to":\#($0)}"# }.joined(separator: ",")
        let second = (0..<count).filter { $0 % 5 == 0 }.map { #"{"path":"p\#($0)","to":-1}"# }.joined(separator: ",")
        let text = #"{"fps":4,"motion":{"type":"sequence","steps":[{"type":"tween","duration":1,"properties":[\#(first)]},{"type":"tween","duration":1,"properties":[\#(second)]}]}}"#
        let timeline = try compile(text)
        XCTAssertEqual(timeline.tracks.map(\.path), (0..<count).map { "p\($0)" })
        let final = timeline.document(at: 2)
        for n in 0..<count {
            XCTAssertEqual(final["p\(n)"]?.numberValue, n % 5 == 0 ? -1 : Double(n), "p\(n)")
        }
    }
}
