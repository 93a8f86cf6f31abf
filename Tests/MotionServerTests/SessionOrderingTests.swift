@testable import MotionEngine
@testable import MotionHTTP
import XCTest

/// A live session's watcher output at chosen wall times, without a socket: the order of
/// frames and command echoes must not depend on when the watcher happens to be woken.
final class SessionOrderingTests: XCTestCase {
    private func session(maxBacklogFrames: Int = 120, maxBacklogEvents: Int = 1_024, maxRetargets: Int = 10_000,
                         document: String = #"{"fps":10,"motion":{"type":"tween","duration":10,"properties":[{"path":"x","from":0,"to":100}]}}"#) throws -> LiveSession {
        let timeline = try TimelineCompiler(limits: .default).compile(Array(document.utf8))
        return LiveSession(id: "s", timeline: timeline, speed: 1, wall: 0, maxBacklogFrames: maxBacklogFrames,
                           maxBacklogEvents: maxBacklogEvents, maxRetargets: maxRetargets)
    }

    private func lines(_ session: LiveSession, _ watcher: SessionWatcher, atWall wall: Double) -> [String] {
        produce(session, watcher, atWall: wall).lines
    }

    private func produce(_ session: LiveSession, _ watcher: SessionWatcher, atWall wall: Double)
        -> (lines: [String], ended: Bool, dropped: Int, reason: String?) {
        var bytes: [UInt8] = []
        let result = session.produce(for: watcher, format: .ndjson, atWall: wall, draining: false, into: &bytes)
        return (String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init), result.ended, result.dropped, result.endReason)
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

    /// A watcher that is not read while commands keep coming (its client stopped reading)
    /// holds at most `maxBacklogEvents` echoes; one more ends it, and it is told so.
    func testAWatcherFurtherBehindThanTheEchoBacklogIsEndedAndToldSo() throws {
        let session = try session(maxBacklogEvents: 8)
        let kept = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
        let lost = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(session.addWatcher(kept, limit: 10))
        XCTAssertTrue(session.addWatcher(lost, limit: 10))
        _ = lines(session, kept, atWall: 0)
        _ = lines(session, lost, atWall: 0)
        for k in 0..<8 {
            try session.apply(k % 2 == 0 ? .pause : .resume, time: nil, atWall: 0.01 * Double(k + 1))
        }
        // `kept` reads after exactly eight echoes: it gets all of them and goes on.
        let keptLines = produce(session, kept, atWall: 0.085)
        XCTAssertFalse(keptLines.ended)
        XCTAssertEqual(keptLines.lines.filter { $0.contains(#""event":"#) }.count, 8, "\(keptLines.lines)")
        // A ninth echo: `lost` has not read since it joined.
        try session.apply(.pause, time: nil, atWall: 0.09)
        let lostLines = produce(session, lost, atWall: 0.1)
        XCTAssertTrue(lostLines.ended)
        XCTAssertEqual(lostLines.reason, "backlog")
        XCTAssertEqual(lostLines.lines.count, 1, "\(lostLines.lines)")
        XCTAssertTrue(lostLines.lines.first?.hasPrefix(#"{"end":true,"session":"s","state":"paused","time":"#) ?? false, "\(lostLines.lines)")
        XCTAssertTrue(lostLines.lines.first?.hasSuffix(#","interrupted":"backlog"}"#) ?? false, "\(lostLines.lines)")
        // `kept` read in between, so the ninth echo is its first of a new backlog.
        let after = produce(session, kept, atWall: 0.1)
        XCTAssertFalse(after.ended)
        XCTAssertEqual(after.lines.count, 1, "\(after.lines)")
        XCTAssertTrue(after.lines.first?.hasPrefix(#"{"event":"paused","time":0.0"#) ?? false, "\(after.lines)")
    }

    /// Frames crossed before several commands are bounded together by `maxBacklogFrames`:
    /// the oldest are dropped (and counted), the echoes keep their places.
    func testFramesQueuedAcrossCommandsKeepTheLatestBacklog() throws {
        let session = try session(maxBacklogFrames: 5)
        let watcher = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(session.addWatcher(watcher, limit: 10))
        _ = lines(session, watcher, atWall: 0)
        try session.apply(.pause, time: nil, atWall: 0.95)   // crossed 0.1…0.9: 0.5…0.9 kept, 4 dropped
        try session.apply(.resume, time: nil, atWall: 1.0)
        try session.apply(.pause, time: nil, atWall: 1.75)   // clock 1.7: 1.0…1.7 crossed, 1.3…1.7 kept
        let written = produce(session, watcher, atWall: 2)
        XCTAssertEqual(written.dropped, 4 + 3 + 5)
        let summary = written.lines.map { line -> String in
            if let range = line.range(of: #""event":""#) { return String(line[range.upperBound...].prefix { $0 != "\"" }) }
            guard let range = line.range(of: #""time":"#) else { return line }
            return String(line[range.upperBound...].prefix { $0 != "," })
        }
        XCTAssertEqual(summary, ["paused", "resumed", "1.3", "1.4", "1.5", "1.6", "1.7", "paused"])
    }

    /// Each number a retarget sets counts against `maxRetargets`; one that would pass it is
    /// refused whole, and the session goes on as before it.
    func testRetargetsAreCountedByTheValuesTheySet() throws {
        let document = ##"{"fps":10,"target":{"x":0,"fill":"#000000"},"motion":{"type":"tween","duration":10,"properties":[{"path":"x","to":100},{"path":"fill","to":"#ffffff"}]}}"##
        let session = try session(maxRetargets: 3, document: document)
        let spring = Timeline.defaultRetargetSpring
        try session.retarget(path: "x", to: .number(1), spring: spring, atWall: 0.5)
        try session.retarget(path: "x", to: .number(2), spring: spring, atWall: 0.6)
        XCTAssertThrowsError(try session.retarget(path: "fill", to: .string("#00ff00"), spring: spring, atWall: 0.7)) { error in
            guard case LiveSession.CommandError.conflict(let conflict, _) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(conflict.message.contains("2 of its 3 values (max-retargets)"), conflict.message)
        }
        try session.retarget(path: "x", to: .number(3), spring: spring, atWall: 0.8)
        XCTAssertThrowsError(try session.retarget(path: "x", to: .number(4), spring: spring, atWall: 0.9))
        let state = String(decoding: session.stateDocument(atWall: 1), as: UTF8.self)
        XCTAssertEqual(state.components(separatedBy: #"{"path":"#).count - 1, 3, state)
    }
}
