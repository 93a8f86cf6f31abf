import Foundation
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

    /// A watcher that fell behind is given at most `LiveSession.maxReadBytes` of frames at
    /// once (at least one), the older ones counted as dropped: a whole backlog of a wide
    /// session was held in the stream's buffer (120 frames of 10,000 tracks, 29 MB a watcher).
    func testAWatcherThatFellBehindIsGivenAtMostAMegabyteAtOnce() throws {
        // 2,000 tracks: a frame line is at most about 70 KB (every number at its longest).
        let properties = (0..<2_000).map { #"{"path":"track\#($0)","from":0,"to":1}"# }.joined(separator: ",")
        let wide = try session(maxBacklogFrames: 120, document: #"{"fps":10,"motion":{"type":"tween","duration":60,"properties":[\#(properties)]}}"#)
        let watcher = SessionWatcher(session: wide, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(wide.addWatcher(watcher, limit: 10))
        XCTAssertEqual(lines(wide, watcher, atWall: 0).count, 1)
        // 12 s later 120 frames are due; the read holds what fits in a megabyte.
        let behind = produce(wide, watcher, atWall: 12)
        XCTAssertGreaterThan(behind.lines.count, 5)
        XCTAssertLessThan(behind.lines.count, 20, "frames in one read")
        XCTAssertEqual(behind.dropped, 120 - behind.lines.count, "the others are counted as dropped")
        XCTAssertLessThanOrEqual(behind.lines.reduce(0) { $0 + $1.utf8.count + 1 }, LiveSession.maxReadBytes)
        XCTAssertTrue(behind.lines.last?.contains(#""time":12"#) ?? false, "the newest frames are the ones sent")
        // A narrow session is held to the frame count only.
        let narrow = try session(maxBacklogFrames: 120)
        let narrowWatcher = SessionWatcher(session: narrow, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(narrow.addWatcher(narrowWatcher, limit: 10))
        _ = lines(narrow, narrowWatcher, atWall: 0)
        XCTAssertEqual(produce(narrow, narrowWatcher, atWall: 9.95).lines.count, 99)
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

    /// A seek on a paused session and a resume, both before the watcher is woken: the frame at
    /// the seek's time comes between the two echoes (it once came after both, at the clock's
    /// time when the watcher was woken, and the frame at the seek's time was never sent).
    func testASeekFollowedByACommandBeforeAnyWriteKeepsTheSeeksFrame() throws {
        let session = try session()
        let watcher = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(session.addWatcher(watcher, limit: 10))
        _ = lines(session, watcher, atWall: 0)
        try session.apply(.pause, time: nil, atWall: 0.25)
        try session.apply(.seek, time: 5, atWall: 0.3)
        try session.apply(.resume, time: nil, atWall: 0.4)
        let summary = Self.summary(lines(session, watcher, atWall: 0.55))
        XCTAssertEqual(summary, ["0.1", "0.2", "paused", "seeked", "5", "resumed", "5.1"])
    }

    /// A command before a new watcher's first write: its first line is still a frame, at the
    /// time the command found, and the echo follows it.
    func testAJoiningWatchersFirstLineIsAFrameEvenWhenACommandCameFirst() throws {
        let session = try session()
        let watcher = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(session.addWatcher(watcher, limit: 10))
        try session.apply(.pause, time: nil, atWall: 0.35)
        XCTAssertEqual(Self.summary(lines(session, watcher, atWall: 0.5)), ["0.35", "paused"])
        XCTAssertTrue(lines(session, watcher, atWall: 1).isEmpty, "nothing while paused")
    }

    /// Each line as its event name or its frame's time.
    private static func summary(_ lines: [String]) -> [String] {
        lines.map { line -> String in
            if let range = line.range(of: #""event":""#) { return String(line[range.upperBound...].prefix { $0 != "\"" }) }
            guard let range = line.range(of: #""time":"#) else { return line }
            return String(line[range.upperBound...].prefix { $0 != "," })
        }
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
        XCTAssertEqual(Self.summary(written.lines), ["paused", "resumed", "1.3", "1.4", "1.5", "1.6", "1.7", "paused"])
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

    /// A refused retarget queues nothing for a watcher that is not reading: before, each one
    /// caught the watchers up first, so a stream of them grew the queue without end.
    func testRefusedRetargetsQueueNothing() throws {
        let session = try session()
        let watcher = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(session.addWatcher(watcher, limit: 10))
        _ = lines(session, watcher, atWall: 0)
        let spring = Timeline.defaultRetargetSpring
        for k in 1...500 {
            XCTAssertThrowsError(try session.retarget(path: "nope", to: .number(1), spring: spring, atWall: Double(k) * 0.01))
        }
        XCTAssertEqual(session.queued(for: watcher)?.entries, 0)
        try session.apply(.pause, time: nil, atWall: 5.05)
        XCTAssertEqual(session.queued(for: watcher)?.entries, 2, "the frames crossed, then the echo")
        let written = produce(session, watcher, atWall: 6)
        XCTAssertEqual(written.lines.count, 51, "frames 0.1 … 5.0 and the echo")
        XCTAssertTrue(written.lines.last?.contains(#""event":"paused""#) ?? false)
    }

    /// However many commands come while a watcher does not read, what waits for it stays
    /// bounded: `maxBacklogEvents` echoes (each after at most one entry of frames), then,
    /// once it is ended, nothing.
    func testAStalledWatchersQueueStaysBounded() throws {
        let session = try session(maxBacklogFrames: 5, maxBacklogEvents: 64)
        let watcher = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(session.addWatcher(watcher, limit: 10))
        _ = lines(session, watcher, atWall: 0)
        for k in 1...64 {
            try session.apply(k % 2 == 1 ? .pause : .resume, time: nil, atWall: Double(k) * 0.13)
        }
        XCTAssertEqual(session.queued(for: watcher)?.events, 64)
        for k in 65...300 {   // 0.01 s apart: the clock (at about 4.2 s) stays short of the end
            try session.apply(k % 2 == 1 ? .pause : .resume, time: nil, atWall: 8.32 + Double(k - 64) * 0.01)
            XCTAssertEqual(session.queued(for: watcher)?.entries, 0, "ended: nothing more is kept (command \(k))")
        }
    }

    /// A watcher reading a session with many events, several at each instant, gets each
    /// event after it joined exactly once, in the order of the `/v1/timelines` answer,
    /// however its reads fall between frames. (Before, an event between a frame and the
    /// clock time of the read that wrote it was lost: here, with reads every 0.03 s, those
    /// at 0.25, 0.75, … .) The events at the instant it joins (the `started` ones at 0) came
    /// before it.
    func testWatchersGetEveryEventOnceInOrder() throws {
        let document = #"{"fps":10,"target":{"x":0,"y":0},"motion":{"type":"group","children":[{"type":"tween","duration":0.25,"repeat":19,"properties":[{"path":"x","to":1}]},{"type":"tween","duration":0.5,"repeat":9,"properties":[{"path":"y","to":1}]}]}}"#
        let timeline = try TimelineCompiler(limits: .default).compile(Array(document.utf8))
        XCTAssertEqual(timeline.events.count, 34)
        let expected = timeline.events.filter { $0.time > 0 }.map { "\($0.kind)@" + String(format: "%.6f", $0.time) }
        XCTAssertEqual(expected.count, 31)
        for step in [0.03, 0.1, 0.37, 1.1] {
            let session = try session(document: document)
            let watcher = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
            XCTAssertTrue(session.addWatcher(watcher, limit: 10))
            var seen: [String] = []
            var wall = 0.0, ended = false
            while !ended, wall < 10 {
                let read = produce(session, watcher, atWall: wall)
                ended = read.ended
                for line in read.lines where line.contains(#""motion":"#) {
                    let event = try XCTUnwrap(line.range(of: #""event":""#).map { line[$0.upperBound...].prefix { $0 != "\"" } })
                    let time = try XCTUnwrap(line.range(of: #""time":"#).map { line[$0.upperBound...].prefix { $0 != "," && $0 != "}" } })
                    seen.append("\(event)@" + String(format: "%.6f", try XCTUnwrap(Double(String(time)))))
                }
                wall += step
            }
            XCTAssertTrue(ended, "step \(step)")
            XCTAssertEqual(seen, expected, "step \(step)")
        }
    }

    /// The session encodes each event once for all its watchers, by blocks of 256, whatever
    /// interval each watcher's frames span: the same lines, in either format (a session of
    /// 25,000 events a second and 100 watchers kept the pacer busy all the time when each
    /// watcher's were encoded for it; 98,000 events at one instant, crossed by watchers that
    /// had written at different clock times, took 5 s of the pacer's time when intervals
    /// were cached).
    func testWatchersOfOneSessionShareTheirEventsEncoding() throws {
        let document = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":0.01,"repeat":999,"properties":[{"path":"x","to":1}]}}"#
        let session = try session(document: document)
        let watchers = (0..<10).map { SessionWatcher(session: session, format: $0 == 9 ? .serverSentEvents : .ndjson, metrics: ServiceMetrics()) }
        for watcher in watchers { XCTAssertTrue(session.addWatcher(watcher, limit: 10)) }
        var reads: [[String]] = Array(repeating: [], count: watchers.count)
        var encodingsPerRound: [Int] = []
        for round in 1...5 {
            let before = session.eventEncodings
            for (index, watcher) in watchers.enumerated() {
                var bytes: [UInt8] = []
                // Between joining (round 1) and the last read (round 5), each watcher a
                // little later than the one before: their frames span different intervals
                // of the clock, and cross the same events in all.
                let wall = 0.25 * Double(round) + (2...4 ~= round ? 0.003 * Double(index) : 0)
                _ = session.produce(for: watcher, format: watcher.format, atWall: wall, draining: false, into: &bytes)
                let text = String(decoding: bytes, as: UTF8.self)
                reads[index] += text.split(separator: "\n").map(String.init).filter { $0.contains(#""event":"#) }
            }
            encodingsPerRound.append(session.eventEncodings - before)
        }
        // The first read is the joining frame; then two or three frames a round, each
        // carrying its interval's events, from blocks encoded once for the ten watchers:
        // about 120 events so far, the first block of 256.
        XCTAssertGreaterThan(reads[0].count, 80)
        for index in 1..<9 { XCTAssertEqual(reads[index], reads[0]) }
        XCTAssertEqual(reads[9].map { $0.replacingOccurrences(of: "data: ", with: "") }, reads[0])
        XCTAssertEqual(encodingsPerRound.first, 0)
        XCTAssertEqual(encodingsPerRound.reduce(0, +), 1, "\(encodingsPerRound)")
    }

    /// The encoded events a session keeps count in `--max-live-segments` (95 bytes a segment)
    /// while it has watchers, and are let go, their segments given back, when the last one
    /// leaves; a block the budget cannot take is encoded for the read and not kept, and the
    /// read is the same. Uncounted, 100 sessions' blocks held 1.3 GB beside a gauge at half
    /// the budget.
    func testEncodedEventsCountInTheLiveSegments() throws {
        let document = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":0.001,"repeat":999,"properties":[{"path":"x","to":1}]}}"#
        let timeline = try TimelineCompiler(limits: .default).compile(Array(document.utf8))
        func read(limit: Int) throws -> (text: String, held: Int, after: Int, encodings: Int) {
            let budget = LiveSegmentBudget(limit: limit)
            let reservation = try XCTUnwrap(budget.reserve(LiveSegmentBudget.cost(of: timeline)))
            let session = LiveSession(id: "s", timeline: timeline, speed: 1, wall: 0, maxBacklogFrames: 120,
                                      maxBacklogEvents: 1_024, maxRetargets: 10, liveSegments: reservation)
            let before = budget.current
            let watcher = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
            XCTAssertTrue(session.addWatcher(watcher, limit: 10))
            var bytes: [UInt8] = []
            _ = session.produce(for: watcher, format: .ndjson, atWall: 0, draining: false, into: &bytes)
            _ = session.produce(for: watcher, format: .ndjson, atWall: 2, draining: false, into: &bytes)
            let held = budget.current - before
            session.removeWatcher(watcher)
            return (String(decoding: bytes, as: UTF8.self), held, budget.current - before, session.eventEncodings)
        }
        // About 1,000 events of about 63 bytes: 63 KB of blocks, about 660 segments.
        let kept = try read(limit: 10_000_000)
        XCTAssertGreaterThan(kept.text.components(separatedBy: #""event""#).count, 1_000)
        XCTAssertGreaterThan(kept.held, 500)
        XCTAssertLessThan(kept.held, 1_000)
        XCTAssertEqual(kept.after, 0, "given back when the last watcher left")
        // A budget with no room: the same lines, nothing kept.
        let refused = try read(limit: LiveSegmentBudget.cost(of: timeline))
        XCTAssertEqual(refused.text, kept.text)
        XCTAssertEqual(refused.held, 0)
    }

    /// A watcher's next read is weighed by the events it will carry (`dueEventCount`, for
    /// `PacedStream.dueIsHeavy`): none while paused, the instant's 3,000 once the clock is
    /// past it, and again after a seek back before it.
    func testAWatchersDueEventsAreCounted() throws {
        let document = #"{"fps":10,"target":{"x":0,"y":0},"motion":{"type":"group","children":[{"type":"tween","duration":2,"properties":[{"path":"x","to":1}]},{"type":"tween","delay":0.5,"duration":1e-7,"repeat":2999,"properties":[{"path":"y","to":1}]}]}}"#
        let session = try session(document: document)
        let watcher = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(session.addWatcher(watcher, limit: 10))
        _ = produce(session, watcher, atWall: 0.1)
        XCTAssertLessThan(session.dueEventCount(for: watcher, atWall: 0.2), 5)
        let crossing = session.dueEventCount(for: watcher, atWall: 0.7)
        XCTAssertGreaterThanOrEqual(crossing, 3_000)
        XCTAssertGreaterThan(crossing, PacedStream.heavyEvents)
        let read = produce(session, watcher, atWall: 0.7)
        XCTAssertGreaterThanOrEqual(read.lines.filter { $0.contains(#""event":"repeated""#) }.count, 2_999)
        XCTAssertLessThan(session.dueEventCount(for: watcher, atWall: 0.7), 5, "nothing more is owed")
        try session.apply(.seek, time: 0.3, atWall: 0.8)
        _ = produce(session, watcher, atWall: 0.8)
        XCTAssertGreaterThanOrEqual(session.dueEventCount(for: watcher, atWall: 1.2), 3_000, "crossed again after the seek")
    }

    /// The bisection for a frame's first event, with the events of one instant a little out
    /// of time order (less than `timeEpsilon`), as `EventOrder` may leave them.
    func testFirstEventBisection() {
        let times = [0.0, 0.5, 0.5 + timeEpsilon / 2, 0.5, 0.5 + timeEpsilon / 4, 1.0, 2.0]
        let events = times.map { TimelineEvent(time: $0, kind: .started, motion: "/motion") }
        for probe in [-1.0, 0.0, 0.25, 0.5 - timeEpsilon, 0.5, 0.5 + timeEpsilon, 0.75, 1.0, 1.5, 2.0, 3.0] {
            let index = LiveSession.firstEvent(in: events, laterThan: probe)
            XCTAssertTrue(events[..<index].allSatisfy { $0.time < probe + timeEpsilon }, "\(probe): \(index)")
            XCTAssertTrue(events[index...].contains { $0.time > probe } || index == events.count, "\(probe): \(index)")
            if let first = events.firstIndex(where: { $0.time > probe + timeEpsilon }) {
                XCTAssertLessThanOrEqual(index, first, "\(probe)")
            }
        }
    }

    /// Events crossed forward go out once; the clock running back over them sends none, and
    /// running forward over them again sends them again.
    func testEventsAfterReversals() throws {
        let document = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":0.25,"repeat":3,"properties":[{"path":"x","to":1}]}}"#
        let session = try session(document: document)
        let watcher = SessionWatcher(session: session, format: .ndjson, metrics: ServiceMetrics())
        XCTAssertTrue(session.addWatcher(watcher, limit: 10))
        var seen: [String] = []
        func read(_ wall: Double) {
            for line in produce(session, watcher, atWall: wall).lines where line.contains(#""event":"#) {
                let event = line.range(of: #""event":""#).map { String(line[$0.upperBound...].prefix { $0 != "\"" }) } ?? "?"
                let time = line.range(of: #""time":"#).map { String(line[$0.upperBound...].prefix { $0 != "," && $0 != "}" }) } ?? "?"
                seen.append("\(event)@\(time)")
            }
        }
        for wall in stride(from: 0.0, through: 0.6, by: 0.05) { read(wall) }
        try session.apply(.reverse, time: nil, atWall: 0.625)   // clock 0.625, running back
        for wall in stride(from: 0.65, through: 1.1, by: 0.05) { read(wall) }
        try session.apply(.reverse, time: nil, atWall: 1.125)   // clock 0.125, forward again
        for wall in stride(from: 1.15, through: 2.2, by: 0.05) { read(wall) }
        XCTAssertEqual(seen, ["repeated@0.25", "repeated@0.5", "reversed@0.625", "reversed@0.125",
                              "repeated@0.25", "repeated@0.5", "repeated@0.75", "completed@1"])
    }
}
