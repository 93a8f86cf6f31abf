import Foundation
import CMicroHTTPD
import Glibc

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

    private let condition = NSCondition()
    private var queue: [Job] = []
    private var queueHead = 0
    private var running = 0
    private var stopped = false
    private var threads: [Thread] = []
    let threadCount: Int
    let maxQueued: Int
    private let niceness: Int32

    init(threads: Int, maxQueued: Int, niceness: Int32 = 5) {
        self.threadCount = max(1, threads)
        self.maxQueued = max(0, maxQueued)
        self.niceness = niceness
    }

    func start() {
        for index in 0..<threadCount {
            let thread = Thread { [self] in work() }
            thread.name = "compute-\(index)"
            threads.append(thread)
            thread.start()
        }
    }

    /// Queues `job`, or answers false when `maxQueued` jobs are already waiting.
    func submit(_ job: @escaping Job) -> Bool {
        condition.withLock {
            guard !stopped, queue.count - queueHead < maxQueued + idleThreads else { return false }
            queue.append(job)
            condition.signal()
            return true
        }
    }

    /// Jobs waiting or running.
    var busy: Int { condition.withLock { queue.count - queueHead + running } }

    /// Threads free to take a job at once (called with the lock held).
    private var idleThreads: Int { threadCount - running }

    /// Lets the queued jobs finish, then ends the threads.
    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }

    /// Blocks until no job is waiting or running, or until `deadline`.
    func waitIdle(until deadline: Date) {
        while busy > 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
    }

    private func work() {
        // Lower this thread's priority (Linux: per-thread nice); an error leaves it unchanged.
        _ = cmhd_nice_this_thread(niceness)
        while true {
            condition.lock()
            while queueHead == queue.count, !stopped { condition.wait() }
            if queueHead == queue.count {
                condition.unlock()
                return
            }
            let job = queue[queueHead]
            queueHead += 1
            if queueHead > 64, queueHead * 2 > queue.count {
                queue.removeFirst(queueHead)
                queueHead = 0
            }
            running += 1
            condition.unlock()
            job()
            condition.withLock { running -= 1 }
        }
    }
}
