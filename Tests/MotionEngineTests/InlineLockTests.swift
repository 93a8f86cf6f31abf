import Foundation
import XCTest
@testable import MotionEngine

/// `InlineLock` under contention: every increment made under it by competing threads is
/// counted, and (under `make test-sanitize`) ThreadSanitizer follows the lock from thread to
/// thread rather than taking the guarded counter for a race.
final class InlineLockTests: XCTestCase {
    private final class Counter: @unchecked Sendable {
        let lock = InlineLock()
        var value = 0
        var log: [Int] = []
    }

    func testContendedIncrementsAreAllCounted() {
        let counter = Counter()
        let threads = 4, rounds = 10_000
        // How many times each count was handed out: once each, if no two increments overlap.
        // Each thread writes only the slots of the counts it got, so the slots need no lock.
        nonisolated(unsafe) let seen = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads * rounds)
        seen.initialize(repeating: 0)
        defer { seen.deallocate() }
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for round in 0..<rounds {
                // Now and then the lock is held long enough that the others stop spinning and
                // wait in the kernel, which then hands the lock over (the contended path).
                let taken = counter.lock.withLock { () -> Int in
                    counter.value += 1
                    if round % 64 == 0 {
                        counter.log.append(thread)
                        usleep(20)
                    }
                    return counter.value
                }
                seen[taken - 1] += 1
            }
        }
        XCTAssertEqual(counter.lock.withLock { counter.value }, threads * rounds)
        XCTAssertEqual(seen.firstIndex { $0 != 1 }, nil, "a count handed out twice or never")
        XCTAssertEqual(counter.log.count, threads * ((rounds + 63) / 64))
    }

    func testTheBodysResultIsReturned() {
        let lock = InlineLock()
        XCTAssertEqual(lock.withLock { "held" }, "held")
        XCTAssertNil(lock.withLock { Optional<Int>.none })
    }
}
