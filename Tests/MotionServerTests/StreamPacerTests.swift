import Foundation
@testable import MotionHTTP
import XCTest

/// The pacer's timing wheel: every scheduled stream is woken, never before its due time, in
/// batches; far-future wakes wait without holding anything up; a stream is held only until its
/// wake.
/// (No upper bound on lateness is asserted: the machine may be busy.)
final class StreamPacerTests: XCTestCase {
    /// A stream that records when the pacer woke it (the pacer's first pass over a batch,
    /// `prepareWake`, is its wake; nothing is left for the second).
    private final class Recorder: PacedStream, @unchecked Sendable {
        let woken = NSCondition()
        private(set) var wakes: [UInt64] = []

        override func prepareWake(by pacer: StreamPacer) -> Bool {
            let now = MonotonicClock.now()
            woken.withLock {
                wakes.append(now)
                woken.broadcast()
            }
            return false
        }

        func waitForWakes(_ count: Int, seconds: Double) -> [UInt64] {
            waitForWakes(count, until: Date(timeIntervalSinceNow: seconds))
        }

        func waitForWakes(_ count: Int, until deadline: Date) -> [UInt64] {
            woken.withLock {
                while wakes.count < count, woken.wait(until: deadline) {}
                return wakes
            }
        }
    }

    func testGridTicksAreEvenlySpacedPhasesOfSixtyAHertzAwayFromSlotEdges() {
        for phases: UInt64 in [1, 2, 4, 8] {
            let spacing = 50_000_000 / (3 * phases)  // ns between ticks, rounded down
            let margin = StreamPacer.slotNanos / (6 * phases) - 1
            var previous: UInt64?
            var now: UInt64 = 1_234_567_891_011
            for _ in 0..<(200 * phases) {
                let tick = StreamPacer.gridTick(atOrAfter: now, phases: phases)
                XCTAssertGreaterThanOrEqual(tick, now)
                XCTAssertLessThanOrEqual(tick - now, spacing + 1, "the next tick is at most one phase away (\(phases) phases)")
                if let previous { XCTAssertTrue([spacing, spacing + 1].contains(tick - previous), "\(tick - previous) ns between ticks (\(phases) phases)") }
                // The tick and every 60 fps due time after it, as a stream computes them, keep
                // their distance from the edges of the wheel's slots.
                for k in 0..<120 {
                    let due = tick + UInt64(Double(k) / 60 * 1e9)
                    let phase = due % StreamPacer.slotNanos
                    XCTAssertTrue(phase >= margin && phase <= StreamPacer.slotNanos - margin,
                                  "frame \(k) of a tick: \(phase) ns into its slot (\(phases) phases)")
                }
                XCTAssertEqual(StreamPacer.gridTick(atOrAfter: tick, phases: phases), tick, "a tick is its own next tick")
                previous = tick
                now = tick + 1
            }
            // 60 × phases ticks make exactly one second: a phase's frames stay on its ticks.
            let first = StreamPacer.gridTick(atOrAfter: 5_000_000_000, phases: phases)
            let second = StreamPacer.gridTick(atOrAfter: first + 1_000_000_000 - 1_000, phases: phases)
            XCTAssertEqual(second - first, 1_000_000_000, "60 × \(phases) ticks a second")
        }
    }

    func testDirectWritesSpreadStreamsOverFourPhasesAndLibmicrohttpdWritesKeepOne() {
        var configuration = ServerConfiguration()
        XCTAssertEqual(configuration.pacerPhases, 4)
        configuration.streamDirectWrites = false
        XCTAssertEqual(configuration.pacerPhases, 1)
    }

    func testThePacerThreadRunsAheadOfRequestHandlingWhenAllowed() throws {
        let pacer = StreamPacer()
        XCTAssertFalse(pacer.runsAhead)
        let refused = pacer.start()
        defer { pacer.stop() }
        // What the daemon reads to decide whether inline work needs a budget.
        XCTAssertEqual(pacer.runsAhead, refused == nil)
        // The nice value is field 19 of /proc/self/task/TID/stat (after the parenthesised name).
        let stat = try String(contentsOfFile: "/proc/self/task/\(pacer.threadID)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
        let nice = Int32(fields[16])
        if let refused {
            // Unprivileged (no CAP_SYS_NICE, RLIMIT_NICE too low): the thread keeps the
            // process's priority, and the server says so in its log.
            XCTAssertTrue([EPERM, EACCES].contains(refused), "error \(refused)")
            XCTAssertEqual(nice, getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
        } else {
            XCTAssertEqual(nice, StreamPacer.niceness)
            XCTAssertLessThan(StreamPacer.niceness, 0, "the pacer goes before libmicrohttpd's threads (nice 0)")
        }
    }

    func testEveryStreamIsWokenAtOrAfterItsDueTime() {
        let pacer = StreamPacer()
        pacer.start()
        defer { pacer.stop() }
        let start = MonotonicClock.now()
        // 300 streams at scattered times over 0.6 s, several in the same slot, some already due.
        var generator = SystemRandomNumberGenerator()
        let streams = (0..<300).map { _ in Recorder() }
        var dues: [UInt64] = []
        for stream in streams {
            let due = start + UInt64.random(in: 0...600_000_000, using: &generator) / 7 * 7
            dues.append(due)
            pacer.schedule(stream, at: due)
        }
        // One deadline for all of them: a pacer that wakes nothing fails in 30 s, not 300 × 30.
        let deadline = Date(timeIntervalSinceNow: 30)
        for (stream, due) in zip(streams, dues) {
            let wakes = stream.waitForWakes(1, until: deadline)
            XCTAssertEqual(wakes.count, 1)
            if let woken = wakes.first { XCTAssertGreaterThanOrEqual(woken, due, "never woken early") }
        }
    }

    func testAWakeBeyondTheHorizonDoesNotHoldUpNearerOnes() {
        let pacer = StreamPacer()
        pacer.start()
        defer { pacer.stop() }
        let now = MonotonicClock.now()
        let far = Recorder(), near = Recorder(), beyondHorizon = Recorder()
        pacer.schedule(far, at: UInt64.max / 2)  // centuries away
        pacer.schedule(beyondHorizon, at: now + UInt64(StreamPacer.slotCount) * StreamPacer.slotNanos + 300_000_000)
        pacer.schedule(near, at: now + 50_000_000)
        XCTAssertEqual(near.waitForWakes(1, seconds: 30).count, 1)
        // Filed from the overflow list once within the horizon, woken at or after its time.
        let wakes = beyondHorizon.waitForWakes(1, seconds: 60)
        XCTAssertEqual(wakes.count, 1)
        if let woken = wakes.first {
            XCTAssertGreaterThanOrEqual(woken, now + UInt64(StreamPacer.slotCount) * StreamPacer.slotNanos + 300_000_000)
        }
        XCTAssertEqual(far.wakes.count, 0)
    }

    /// The pacer holds a stream until its wake and lets it go then: a stream whose client
    /// left (nothing else holds it) is freed at its next wake, never later.
    func testThePacerLetsAStreamGoAtItsWake() {
        let pacer = StreamPacer()
        pacer.start()
        defer { pacer.stop() }
        weak var gone: Recorder?
        let due = MonotonicClock.now() + 200_000_000
        do {
            let stream = Recorder()
            gone = stream
            pacer.schedule(stream, at: due)
        }
        XCTAssertNotNil(gone, "held until its wake")
        // Another stream due later: once it is woken, the first one's wake has been served.
        let other = Recorder()
        pacer.schedule(other, at: due + 50_000_000)
        XCTAssertEqual(other.waitForWakes(1, seconds: 30).count, 1)
        let deadline = Date(timeIntervalSinceNow: 5)
        while gone != nil, Date() < deadline { usleep(1_000) }
        XCTAssertNil(gone, "freed once woken")
        // A stream woken and rescheduled is held again, and released by stop().
        weak var parked: Recorder?
        do {
            let stream = Recorder()
            parked = stream
            pacer.schedule(stream, at: UInt64.max / 2)
        }
        XCTAssertNotNil(parked)
        pacer.stop()
        XCTAssertNil(parked, "stop() lets every stream go")
    }

    /// A stream has one live wake: asking again for the same or a later time files nothing,
    /// and it is woken once.
    func testAStreamAskingAgainAndAgainIsWokenOnce() {
        let pacer = StreamPacer()
        pacer.start()
        defer { pacer.stop() }
        let stream = Recorder()
        let due = MonotonicClock.now() + 100_000_000
        for k in 0..<1_000 { pacer.schedule(stream, at: due + UInt64(k) * 1_000) }
        XCTAssertEqual(pacer.filedWakes, 1)
        XCTAssertEqual(stream.waitForWakes(1, seconds: 30).count, 1)
        usleep(300_000)  // past every time asked for
        XCTAssertEqual(stream.wakes.count, 1, "one wake, not one per request")
        XCTAssertEqual(pacer.filedWakes, 0)
    }

    /// An earlier wake replaces a later one: the stream is woken at the earlier time, and the
    /// replaced entry is dropped when its slot comes, without a second wake.
    func testAnEarlierWakeReplacesALaterOne() {
        let pacer = StreamPacer()
        pacer.start()
        defer { pacer.stop() }
        let stream = Recorder()
        let now = MonotonicClock.now()
        pacer.schedule(stream, at: now + 400_000_000)
        pacer.schedule(stream, at: now + 100_000_000)
        XCTAssertEqual(pacer.filedWakes, 2, "the replaced entry waits for its slot")
        let wakes = stream.waitForWakes(1, seconds: 30)
        XCTAssertEqual(wakes.count, 1)
        if let woken = wakes.first { XCTAssertGreaterThanOrEqual(woken, now + 100_000_000) }
        // Past the replaced time (the machine may be slow: wait for the entry to go).
        let deadline = Date(timeIntervalSinceNow: 30)
        while pacer.filedWakes > 0, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(pacer.filedWakes, 0)
        XCTAssertGreaterThan(MonotonicClock.now(), now + 400_000_000)
        XCTAssertEqual(stream.wakes.count, 1, "the replaced wake is not served")
        // Once served, the stream may ask again, for any time.
        pacer.schedule(stream, at: MonotonicClock.now() + 50_000_000)
        XCTAssertEqual(stream.waitForWakes(2, seconds: 30).count, 2)
    }

    /// The pacer serves a batch in two passes: every due stream prepares its frame, then every
    /// one that prepared sends it, in the order they were filed (`PacedStream.prepareWake`).
    func testABatchIsPreparedWholeBeforeAnythingIsSent() {
        final class Log: @unchecked Sendable {
            let condition = NSCondition()
            var entries: [String] = []
            func add(_ entry: String) { condition.withLock { entries.append(entry); condition.broadcast() } }
        }
        final class TwoPass: PacedStream, @unchecked Sendable {
            let name: String, log: Log, prepares: Bool
            init(_ name: String, _ log: Log, prepares: Bool) { self.name = name; self.log = log; self.prepares = prepares }
            override func prepareWake(by pacer: StreamPacer) -> Bool { log.add("prepare \(name)"); return prepares }
            override func sendPrepared(by pacer: StreamPacer) { log.add("send \(name)") }
        }
        let pacer = StreamPacer()
        pacer.start()
        defer { pacer.stop() }
        let log = Log()
        let streams = [TwoPass("a", log, prepares: true), TwoPass("b", log, prepares: false), TwoPass("c", log, prepares: true)]
        let due = MonotonicClock.now() + 50_000_000
        for stream in streams { pacer.schedule(stream, at: due) }
        let entries = log.condition.withLock {
            let deadline = Date(timeIntervalSinceNow: 30)
            while log.entries.count < 5, log.condition.wait(until: deadline) {}
            return log.entries
        }
        XCTAssertEqual(entries, ["prepare a", "prepare b", "prepare c", "send a", "send c"])
    }

    /// A replaced wake in the same 1 ms slot as its replacement: still one wake, and the
    /// other streams of the slot are all served.
    func testAReplacedWakeInTheSameSlotIsNotServedTwice() {
        let pacer = StreamPacer()
        pacer.start()
        defer { pacer.stop() }
        let slot = MonotonicClock.now() / StreamPacer.slotNanos + 100
        let later = slot * StreamPacer.slotNanos + 800_000, earlier = later - 500_000
        let others = (0..<5).map { _ in Recorder() }
        let stream = Recorder()
        pacer.schedule(others[0], at: later)
        pacer.schedule(stream, at: later)
        pacer.schedule(others[1], at: earlier)
        pacer.schedule(stream, at: earlier)
        for other in others[2...] { pacer.schedule(other, at: later) }
        XCTAssertEqual(pacer.filedWakes, 7)
        XCTAssertEqual(stream.waitForWakes(1, seconds: 30).count, 1)
        let deadline = Date(timeIntervalSinceNow: 30)
        for other in others { XCTAssertEqual(other.waitForWakes(1, until: deadline).count, 1) }
        usleep(50_000)
        XCTAssertEqual(stream.wakes.count, 1, "one wake for the two entries")
        XCTAssertEqual(pacer.filedWakes, 0)
    }
}
