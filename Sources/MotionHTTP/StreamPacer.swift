import Foundation
import MotionEngine

/// Wakes suspended streams when their next frame is due.
///
/// One thread and a min-heap of wake-up times: it never encodes anything (that happens on
/// the libmicrohttpd worker that writes the socket), it only resumes connections. It takes
/// its own lock only to push and pop, never while calling into a stream, so streams may
/// schedule while holding their own lock.
///
/// The pacer never sleeps longer than `maxSleep` at a time, however far away the next frame
/// is (a stream at `speed=1e-10` is due in centuries, a date no timed wait can take), and
/// holds its streams weakly: a stream whose client left is freed at once, and its entry is
/// swept at the next step.
final class StreamPacer: @unchecked Sendable {
    private struct Entry {
        var due: UInt64
        weak var stream: PacedStream?
    }

    /// The longest single wait, seconds; also how often entries of freed streams are swept.
    static let maxSleep = 1.0

    private let condition = NSCondition()
    private var heap = MinHeap<Entry> { $0.due < $1.due }
    private var stopped = false
    private var lastSweep: UInt64 = 0

    // The thread is not kept: a stored `Thread` whose block holds `self` is a reference cycle
    // (LeakSanitizer reported the pacer, its condition and thread as leaked at every exit).
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "stream-pacer"
        thread.start()
    }

    func stop() {
        condition.withLock {
            stopped = true
            heap.removeAll()
            condition.signal()
        }
    }

    /// Wakes `stream` at monotonic time `due` (nanoseconds).
    func schedule(_ stream: PacedStream, at due: UInt64) {
        condition.withLock {
            heap.push(Entry(due: due, stream: stream))
            if heap.first?.stream === stream { condition.signal() }
        }
    }

    private func run() {
        var due: [PacedStream] = []
        while true {
            condition.lock()
            while !stopped {
                let now = MonotonicClock.now()
                guard let first = heap.first else {
                    condition.wait()
                    continue
                }
                if first.due <= now { break }
                let wait = min(Double(first.due - now) / 1e9, Self.maxSleep)
                _ = condition.wait(until: Date(timeIntervalSinceNow: wait))
                if MonotonicClock.now() >= lastSweep + UInt64(Self.maxSleep * 1e9) {
                    heap.removeAll { $0.stream == nil }
                    lastSweep = MonotonicClock.now()
                }
            }
            if stopped {
                condition.unlock()
                return
            }
            let now = MonotonicClock.now()
            while let first = heap.first, first.due <= now {
                if let stream = heap.pop()?.stream { due.append(stream) }
            }
            condition.unlock()
            for stream in due { stream.wake() }
            due.removeAll(keepingCapacity: true)
        }
    }
}
