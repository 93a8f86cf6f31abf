import Foundation
import CMicroHTTPD
import Glibc
import MotionEngine

/// The threads that compute answers to POST requests (compiling and encoding timelines),
/// apart from libmicrohttpd's connection threads.
///
/// A heavy document takes seconds of CPU; computed on a connection thread it would stall
/// every other connection of that thread, `/healthz` included. Here the connection is
/// suspended while a pool thread computes, and the connection threads keep serving. The pool
/// has a fixed number of threads and a bounded queue: a request that finds the queue full is
/// refused (503 with `Retry-After`) instead of piling up. Its threads run at a lower
/// scheduling priority (nice +`niceness`) so that, with every CPU busy computing, the
/// connection threads still get the CPU as soon as a request arrives.
final class ComputePool: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    /// How a running job learns that its answer will not be read: `isGone` is asked every
    /// `watchNanos` while the job runs, from the pool's watch thread, and `cancellation` is
    /// cancelled once it answers true. The job runs with `cancellation` as its thread's
    /// current one (`Cancellation.withCurrent`), which the engine looks at.
    struct Watch: Sendable {
        let cancellation: Cancellation
        let isGone: @Sendable () -> Bool
    }

    private let condition = NSCondition()
    /// Waiting jobs, oldest first (at most `maxQueued` + `threadCount`: removing the first is
    /// cheap). A job leaves the queue when a thread takes it, so nothing it captured (the
    /// request, its body) outlives it.
    private var queue: [(job: Job, watch: Watch?)] = []
    /// The watched jobs running, by thread, with when they started (monotonic ns); guarded by
    /// `watching`.
    private let watching = InlineLock()
    private var watched: [Int: (watch: Watch, started: UInt64)] = [:]
    private var watchStopped = false
    /// Whether the watch thread sleeps until a watched job starts (else it wakes on its own
    /// every `watchNanos`, and a job that starts is not signalled: no thread wake a job).
    private var watchIdle = false
    /// Wakes the watch thread; its timed waits are on the monotonic clock.
    private let wakeWatch = DispatchSemaphore(value: 0)
    /// How often a running job's client is looked at (a `recv` peek, about a microsecond):
    /// a computation whose client left stops within this and the engine's next look
    /// (`Cancellation`). Jobs shorter than this are never looked at.
    static let watchNanos: UInt64 = 50_000_000
    private var running = 0
    private var stopped = false
    let threadCount: Int
    let maxQueued: Int
    private let niceness: Int32

    init(threads: Int, maxQueued: Int, niceness: Int32 = 5) {
        self.threadCount = max(1, threads)
        self.maxQueued = max(0, maxQueued)
        self.niceness = niceness
    }

    /// Starts the threads. They are not kept: a stored `Thread` whose block holds the pool
    /// would be a reference cycle; they end after `stop()`.
    func start() {
        for index in 0..<threadCount {
            let thread = Thread { [self] in work(index) }
            thread.name = "compute-\(index)"
            thread.start()
        }
        let watch = Thread { [self] in watchRunningJobs() }
        watch.name = "compute-watch"
        watch.start()
    }

    /// Queues `job`, or answers false when `maxQueued` jobs are already waiting. With a
    /// `watch`, the job can be cancelled while it runs.
    func submit(_ job: @escaping Job, watch: Watch? = nil) -> Bool {
        condition.withLock {
            guard !stopped, queue.count < maxQueued + idleThreads else { return false }
            queue.append((job, watch))
            condition.signal()
            return true
        }
    }

    /// Jobs waiting or running.
    var busy: Int { condition.withLock { queue.count + running } }

    /// Threads free to take a job at once (called with the lock held).
    private var idleThreads: Int { threadCount - running }

    /// Lets the queued jobs finish, then ends the threads.
    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
        watching.withLock { watchStopped = true }
        wakeWatch.signal()
    }

    /// Cancels every job waiting or running (`Watch.cancellation`): the server is stopping
    /// and their answers will not be sent. A running one stops at the engine's next look; a
    /// waiting one, when a thread takes it. Without it, the drain after SIGTERM computed every
    /// queued document before stopping, whatever `--drain-timeout` said: 65 documents of
    /// 0.28 s each on one compute thread, 17 s after a 1 s drain (found by an adversarial
    /// review).
    func cancelAll() {
        let waiting = condition.withLock { queue.compactMap(\.watch) }
        let running = watching.withLock { watched.values.map(\.watch) }
        for watch in waiting + running { watch.cancellation.cancel() }
    }

    /// Blocks until no job is waiting or running, or until `deadline`.
    func waitIdle(until deadline: Date) {
        while busy > 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
    }

    /// A job that used this much CPU or more has its freed memory given back to the system
    /// when it ends. A large document is compiled into many small allocations; once freed,
    /// glibc keeps them in the thread's arena: one document of spring keyframes staggered
    /// over 1,000 elements (refused with 422 after compiling) left the release server at
    /// 63 MB resident instead of 27, for good, and each compute thread's arena keeps its own
    /// high-water mark. `malloc_trim` took 3.5 ms to give those 40 MB back, against the
    /// tenths of a second such a document computes; the small documents the pool mostly
    /// runs take well under this bound and pay nothing.
    static let trimAfterNanos: UInt64 = 20_000_000

    private func work(_ index: Int) {
        // Lower this thread's priority (Linux: per-thread nice); an error leaves it unchanged.
        _ = cmhd_nice_this_thread(niceness)
        while true {
            condition.lock()
            while queue.isEmpty, !stopped { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                return
            }
            let (job, watch) = queue.removeFirst()
            running += 1
            condition.unlock()
            let started = cmhd_thread_cpu_nanos()
            if let watch {
                let wake = watching.withLock { () -> Bool in
                    watched[index] = (watch, MonotonicClock.now())
                    defer { watchIdle = false }
                    return watchIdle
                }
                if wake { wakeWatch.signal() }
                Cancellation.withCurrent(watch.cancellation) { job() }
                // The job has resumed its connection by now, which libmicrohttpd may close at
                // once: a peek in between looks at a closed or reused descriptor, which takes
                // nothing from it (`MSG_PEEK`) and cancels only this finished job's flag.
                watching.withLock { watched[index] = nil }
            } else {
                job()
            }
            if cmhd_thread_cpu_nanos() &- started >= Self.trimAfterNanos { _ = cmhd_malloc_trim() }
            condition.withLock { running -= 1 }
        }
    }

    /// The watch thread: while watched jobs run, every `watchNanos` it asks those that have
    /// run that long whether their clients are gone, and cancels the ones that are. It
    /// sleeps while none runs.
    private func watchRunningJobs() {
        while true {
            let idle = watching.withLock { () -> Bool? in
                if watchStopped { return nil }
                watchIdle = watched.isEmpty
                return watchIdle
            }
            guard let idle else { return }
            if idle {
                wakeWatch.wait()
                continue
            }
            _ = wakeWatch.wait(timeout: .now() + .nanoseconds(Int(Self.watchNanos)))
            let now = MonotonicClock.now()
            let due = watching.withLock {
                watched.values.filter { now &- $0.started >= Self.watchNanos && !$0.watch.cancellation.isCancelled }
            }
            for (watch, _) in due where watch.isGone() { watch.cancellation.cancel() }
        }
    }
}

/// Gives memory that connection threads freed back to the system once enough of it has been
/// freed. Request bodies and answers are allocated and freed on libmicrohttpd's threads,
/// whose malloc arenas keep what they free: after 600 connections had each sent most of a
/// 1 MiB body and gone, the release server stayed at 178 MB resident (22 MB before them).
/// Ended streams and sessions count their timelines too (`LiveSegmentBudget.Reservation`).
/// Past `threshold` bytes freed, a `malloc_trim` runs on a utility queue (never on a
/// connection thread) once the frees have paused for `quietNanos`, or `longestWaitNanos` after the
/// threshold if they go on; for `burstNanos` after a trim, `tailBytes` more bring the next.
/// The compute pool trims after its own heavy jobs.
final class MemoryTrim: @unchecked Sendable {
    static let shared = MemoryTrim()
    static let threshold = 64 << 20
    static let countedBytes = 16 << 10

    private let lock = InlineLock()
    private var debt = 0
    private var scheduled = false
    /// When the threshold was passed, and when the last counted free came (monotonic ns).
    private var due: UInt64 = 0
    private var lastFree: UInt64 = 0
    /// When the last trim ended (monotonic ns; 0: never).
    private var lastTrim: UInt64 = 0
    /// A trim waits until no counted free has come for this long: a burst of frees (many
    /// connections closing at once) ends first. A trim in the middle of a burst left the
    /// rest of it resident: 20 to 39 MB of 100 MB of bodies on a loaded machine, with a
    /// fixed 250 ms delay.
    static let quietNanos: UInt64 = 100_000_000
    /// …but no longer than this after the threshold, while frees go on.
    static let longestWaitNanos: UInt64 = 1_000_000_000
    /// For this long after a trim, `tailBytes` freed bring the next: the rest of a burst
    /// that outlasted the wait.
    static let burstNanos: UInt64 = 2_000_000_000
    static let tailBytes = 1 << 20
    private let queue = DispatchQueue(label: "memory-trim", qos: .utility)

    /// Counts `bytes` freed; schedules a trim when they pass the threshold (`tailBytes` for
    /// `burstNanos` after a trim). Frees under `countedBytes` are not counted (no lock for
    /// the small answers and bodies of the request path): what a trim gives back is large
    /// blocks.
    func freed(_ bytes: Int) {
        guard bytes >= Self.countedBytes else { return }
        let start = lock.withLock { () -> Bool in
            let now = MonotonicClock.now()
            let (sum, overflow) = debt.addingReportingOverflow(bytes)
            debt = overflow ? .max : sum
            lastFree = now
            let bound = now &- lastTrim < Self.burstNanos ? Self.tailBytes : Self.threshold
            guard debt >= bound, !scheduled else { return false }
            scheduled = true
            due = now
            return true
        }
        if start { check(after: Self.quietNanos) }
    }

    /// Trims once the frees have been quiet for `quietNanos` (or `longestWaitNanos` have
    /// passed since the threshold); else looks again when they could have been.
    private func check(after nanos: UInt64) {
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanos))) { [self] in
            let wait = lock.withLock { () -> UInt64 in
                let now = MonotonicClock.now()
                let quietFor = now &- lastFree
                guard quietFor < Self.quietNanos, now &- due < Self.longestWaitNanos else {
                    debt = 0
                    return 0
                }
                return Self.quietNanos - quietFor
            }
            guard wait == 0 else { return check(after: wait) }
            _ = cmhd_malloc_trim()
            lock.withLock {
                scheduled = false
                lastTrim = MonotonicClock.now()
            }
        }
    }
}
