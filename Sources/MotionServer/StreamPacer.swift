import Foundation

/// Wakes suspended streams when their next frame is due.
///
/// One thread and a min-heap of wake-up times: it never encodes anything (that happens on
/// the libmicrohttpd worker that writes the socket), it only resumes connections. It takes
/// its own lock only to push and pop, never while calling into a stream, so streams may
/// schedule while holding their own lock.
final class StreamPacer: @unchecked Sendable {
    private struct Entry {
        var due: UInt64
        var stream: PacedStream
    }

    private let condition = NSCondition()
    private var heap: [Entry] = []
    private var stopped = false
    private var thread: Thread?

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "stream-pacer"
        self.thread = thread
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
            push(Entry(due: due, stream: stream))
            if heap[0].stream === stream { condition.signal() }
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
                let wait = Double(first.due - now) / 1e9
                _ = condition.wait(until: Date(timeIntervalSinceNow: wait))
            }
            if stopped {
                condition.unlock()
                return
            }
            let now = MonotonicClock.now()
            while let first = heap.first, first.due <= now {
                due.append(pop().stream)
            }
            condition.unlock()
            for stream in due { stream.wake() }
            due.removeAll(keepingCapacity: true)
        }
    }

    // MARK: - Binary heap on `due`

    private func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].due < heap[parent].due else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func pop() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].due < heap[smallest].due { smallest = left }
                if right < heap.count, heap[right].due < heap[smallest].due { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }
}
