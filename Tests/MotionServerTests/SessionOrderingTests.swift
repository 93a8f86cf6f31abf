@testable import MotionEngine
@testable import MotionHTTP
import XCTest

/// A live session's watcher output at chosen wall times, without a socket: the order of
/// frames and command echoes must not depend on when the watcher happens to be woken.
final class SessionOrderingTests: XCTestCase {
    private func session() throws -> LiveSession {
        let document = #"{"fps":10,"motion":{"type":"tween","duration":10,"properties":[{"path":"x","from":0,"to":100}]}}"#
        let timeline = try TimelineCompiler(limits: .default).compile(Array(document.utf8))
        return LiveSession(id: "s", timeline: timeline, speed: 1, wall: 0, maxBacklogFrames: 120)
    }

    private func lines(_ session: LiveSession, _ watcher: SessionWatcher, atWall wall: Double) -> [String] {
        var bytes: [UInt8] = []
        _ = session.produce(for: watcher, format: .ndjson, atWall: wall, draining: false, into: &bytes)
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func testFramesCrossedBeforeACommandComeBeforeItsEcho() throws {
        let session = try session()
        let watcher = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(session.addWatcher(watcher, limit: 10))
        XCTAssertEqual(lines(session, watcher, atWall: 0).count, 1, "the current frame on joining")
        // The watcher is not woken between its first frame and the pause at 0.35 s.
        try session.apply(.pause, time: nil, atWall: 0.35)
        let written = lines(session, watcher, atWall: 0.6)
        XCTAssertEqual(written.count, 4, "\(written)")
        guard written.count == 4 else { return }
        XCTAssertTrue(written[0].contains(#""time":0.1"#), written[0])
        XCTAssertTrue(written[1].contains(#""time":0.2"#), written[1])
        XCTAssertTrue(written[2].contains(#""time":0.3"#), written[2])
        XCTAssertTrue(written[3].contains(#""event":"paused""#), written[3])
        XCTAssertTrue(lines(session, watcher, atWall: 1.0).isEmpty, "nothing while paused")
    }

    func testASeekAfterUnsentFramesSendsThemThenTheEchoThenTheNewFrame() throws {
        let session = try session()
        let watcher = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(session.addWatcher(watcher, limit: 10))
        _ = lines(session, watcher, atWall: 0)
        try session.apply(.seek, time: 5, atWall: 0.25)
        let written = lines(session, watcher, atWall: 0.25)
        XCTAssertEqual(written.count, 4, "\(written)")
        guard written.count == 4 else { return }
        XCTAssertTrue(written[0].contains(#""time":0.1"#) && written[1].contains(#""time":0.2"#), "\(written)")
        XCTAssertTrue(written[2].contains(#""event":"seeked""#), written[2])
        XCTAssertTrue(written[3].contains(#""time":5"#), written[3])
    }
}
