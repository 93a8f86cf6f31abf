import Foundation
@testable import MotionHTTP
import XCTest

/// The pacer's timing wheel: every scheduled stream is woken, never before its due time, in
/// batches; far-future wakes wait without holding anything up; a stream is held only until its
/// wake.
/// (No upper bound on lateness is asserted: the machine may be busy.)
final class StreamPacerTests: XCTestCase {
    /// A stream that records when the pacer woke it.
    private final class Recorder: PacedStream, @unchecked Sendable {
        let woken = NSCondition()
        private(set) var wakes: [UInt64] = []

        override func wake() {
            let now = MonotonicClock.now()
            woken.withLock {
                wakes.append(now)
                woken.broadcast()
            }
        }

        func waitForWakes(_ count: Int, seconds: Double) -> [UInt64] {
            woken.withLock {
                let deadline = Date(timeIntervalSinceNow: seconds)
                while wakes.count < count, woken.wait(until: deadline) {}
                return wakes
            }
        }
    }

    func testGridTicksAreSixtyAHertzAndHalfASlotFromSlotEdges() {
        var previous: UInt64?
        var now: UInt64 = 1_234_567_891_011
        for _ in 0..<200 {
            let tick = StreamPacer.gridTick(atOrAfter: now)
            XCTAssertGreaterThanOrEqual(tick, now)
            XCTAssertLessThan(tick - now, 16_666_667, "the next tick is less than one tick away")
            // Every tick is at least 0.16 ms from a slot edge.
            let phase = tick % StreamPacer.slotNanos
            XCTAssertTrue(phase >= 160_000 && phase <= StreamPacer.slotNanos - 160_000, "phase \(phase)")
            if let previous { XCTAssertTrue([16_666_666, 16_666_667].contains(tick - previous), "\(tick - previous)") }
            XCTAssertEqual(StreamPacer.gridTick(atOrAfter: tick), tick, "a tick is its own next tick")
            previous = tick
            now = tick + 1
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
        for (stream, due) in zip(streams, dues) {
            let wakes = stream.waitForWakes(1, seconds: 30)
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
}
