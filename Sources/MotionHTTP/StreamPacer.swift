import CMicroHTTPD
import Foundation
import MotionEngine
import Synchronization

/// Wakes suspended streams when their next frame is due.
///
/// One thread and a timing wheel of 1 ms slots: scheduling a wake files the stream in the
/// slot of its due time (O(1)); the thread sleeps until the latest due time in the next
/// occupied slot, then resumes every stream of every slot that has come due in one batch.
/// Streams start on a 60 Hz grid (`gridTick(atOrAfter:phases:)`), so the frames of every
/// 60 fps stream at speed 1 started on one of its phases fall in the same slot: one wake
/// serves them all. With one phase (frames written through libmicrohttpd), libmicrohttpd,
/// which walks its whole list of suspended connections once per round in which any
/// connection was resumed (0.9.75, `resume_suspended_connections`), walks it about once per
/// tick rather than once per frame. A stream is woken at most one slot (1 ms) after
/// its due time by the wheel, never before it.
///
/// With direct writes (the default) its thread produces the due frames and sends them itself,
/// in two passes a batch (`PacedStream.prepareWake`, `sendPrepared`); without, it only
/// resumes connections, and libmicrohttpd's worker that writes the socket produces the
/// frames. It takes its own lock only to file and take entries, never while calling into a
/// stream, so streams may schedule while holding their own lock.
///
/// The pacer never sleeps longer than `maxSleep` at a time, however far away the next frame
/// is (a stream at `speed=1e-10` is due in centuries, a date no timed wait can take): wakes
/// beyond the wheel's horizon wait in an overflow list and are filed in the wheel once they
/// come within it.
///
/// It holds a scheduled stream strongly until its wake: a stream whose client left is
/// freed at its next wake (`PacedStream.wake()` does nothing on a closed stream), which a
/// `PacedStream` never sets more than its heartbeat, 250 ms, away. Weak references would
/// free it at once, but one weak reference gives the object a side table, and from then on
/// every retain and release of it takes the runtime's slow path: at 2,000 streams (perf,
/// 4 s of a 60 fps run) the weak loads and copies and those slow paths were 5.5 % of the
/// server's CPU, about 0.45 µs of the 8.3 µs a frame costs.
///
/// Measured (Benchmarks/README.md, "Streams vs the floor"): server CPU per delivered frame
/// at 500 streams of 60 fps, alternating with the heap and with `c/stream_floor.c` (one
/// `send` per frame) on a busy 2-core machine, medians of five rounds: heap 19.4 µs, 2.77×
/// the floor; wheel 10.2 µs, 1.23× the floor (0.53× the heap, round by round). That floor
/// formatted its numbers on every frame; against the corrected one (preformatted lines) the
/// wheel is at 1.7–1.9× at 500 and 1,000 streams ("Session watchers, the frame writer").
final class StreamPacer: @unchecked Sendable {
    /// A wake beyond the wheel's horizon.
    private struct Entry {
        var due: UInt64
        var stream: PacedStream
    }

    /// The longest single wait, seconds; also how often the overflow list is looked at.
    static let maxSleep = 1.0
    /// One slot of the wheel, nanoseconds: the most a wake can be late by the wheel.
    static let slotNanos: UInt64 = 1_000_000
    /// Slots in the wheel (a power of two): its horizon, 4.096 s, is more than maxSleep plus
    /// the time a wake may wait in the overflow list before it is filed.
    static let slotCount = 4096
    private static let slotMask = UInt64(slotCount - 1)

    /// The tick a stream or session clock started at `now` starts on: the first at or after
    /// `now` of a 60 Hz grid split into `phases` evenly spaced phases (60 × `phases` ticks a
    /// second). A stream's frames then come due on its start's phase, 60 times a second, with
    /// the frames of every other 60 fps stream started on that phase: one pacer wake serves
    /// them all.
    ///
    /// One phase (frames written by resuming the connection) puts every stream in the same
    /// wake, so libmicrohttpd walks its list of suspended connections once a tick. More
    /// phases (direct writes, which do not resume the connection) spread the streams over
    /// the tick in `phases` smaller batches. The frames of one wake go out one after the
    /// other, so a stream's frame leaves the server later the more streams are written before
    /// it in its batch, and that delay changes as streams ahead of it start and end: with one
    /// batch of 1,600 streams it was up to 11–15 ms (the p99 of frame lateness in the steady
    /// part of a run), with four it was 2.5–3.4 ms (Benchmarks/README.md, "Phases").
    ///
    /// Tick n is at n × 50,000,000 / (3 × phases) ns (rounded down) plus an offset of
    /// `slotNanos / (6 × phases)`: every tick, and every due time `k/60 s` after one (rounded
    /// down to the nanosecond, as streams compute it), is at least that offset minus 1 ns from
    /// an edge of the wheel's 1 ms slots, so rounding never splits a phase's wakes over two
    /// slots.
    static func gridTick(atOrAfter now: UInt64, phases: UInt64) -> UInt64 {
        let perFifty = 3 * max(phases, 1)  // ticks per 50 ms
        let offset = slotNanos / (2 * perFifty)
        guard now > offset else { return offset }
        let elapsed = now - offset
        var n = elapsed / 50_000_000 * perFifty + (elapsed % 50_000_000) * perFifty / 50_000_000
        while tick(n, perFifty: perFifty) + offset < now { n += 1 }
        return tick(n, perFifty: perFifty) + offset
    }

    /// Tick n of a grid of `perFifty` ticks every 50 ms, before its offset.
    private static func tick(_ n: UInt64, perFifty: UInt64) -> UInt64 {
        n / perFifty * 50_000_000 + (n % perFifty) * 50_000_000 / perFifty
    }

    private let condition = NSCondition()
    /// The streams to wake in each slot, in the order they were filed: a stream that is
    /// woken and files its next wake keeps its place among the others, tick after tick.
    /// An entry whose wake was replaced by an earlier one is dropped when its slot is served.
    private var slots = [[PacedStream]](repeating: [], count: StreamPacer.slotCount)
    /// The latest due time filed in each slot (the slot is served once it has passed).
    private var slotLatest = [UInt64](repeating: 0, count: StreamPacer.slotCount)
    /// One bit per slot: occupied.
    private var occupied = [UInt64](repeating: 0, count: StreamPacer.slotCount / 64)
    /// The next slot (absolute: due / slotNanos) to serve; every earlier one has been served.
    private var cursor: UInt64 = MonotonicClock.now() / StreamPacer.slotNanos
    /// Wakes beyond the wheel's horizon.
    private var overflow: [Entry] = []
    private var lastOverflowCheck: UInt64 = 0
    /// When the thread will wake by itself (0 while it is not waiting: it looks at the wheel
    /// before it waits again, so a schedule need not signal).
    private var plannedWake: UInt64 = 0
    private var stopped = false

    /// The nice value the pacer's thread asks for (Linux: per thread). Its work comes due at
    /// fixed times and is bounded by the open streams; request handling (libmicrohttpd's
    /// threads at the process's nice, the compute pool 5 below them) can wait a few
    /// milliseconds. Without the higher priority, a burst of new streams takes the core from
    /// the frames of those already open: 1,600 streams connecting at about 2,000 a second made
    /// every frame up to 20–30 ms late for about 0.3 s (Benchmarks/README.md, "Phases").
    static let niceness: Int32 = -10

    /// Starts the pacer's thread and returns once it has asked for its priority: nil when it
    /// runs at nice `niceness`, else the error (EPERM or EACCES without CAP_SYS_NICE; the
    /// thread then runs at the process's priority).
    @discardableResult
    func start() -> Int32? {
        // The thread is not kept: a stored `Thread` whose block holds `self` is a reference
        // cycle (LeakSanitizer reported the pacer, its condition and thread as leaked at every
        // exit).
        let asked = DispatchSemaphore(value: 0)
        let outcome = Mutex<(thread: Int32, error: Int32)>((0, 0))
        let thread = Thread { [self] in
            let error = cmhd_nice_this_thread(Self.niceness)
            outcome.withLock { $0 = (cmhd_gettid(), error) }
            asked.signal()
            run()
        }
        thread.name = "stream-pacer"
        thread.start()
        asked.wait()
        let (id, error) = outcome.withLock { $0 }
        threadID = id
        runsAhead = error == 0
        return error == 0 ? nil : error
    }

    /// The pacer thread's id once started (Linux; tests read its priority from /proc).
    private(set) var threadID: Int32 = 0
    /// Whether the pacer's thread runs at nice `niceness`, ahead of request handling (set by
    /// `start()`, before the daemon's threads exist).
    private(set) var runsAhead = false

    func stop() {
        condition.withLock {
            stopped = true
            for index in slots.indices { slots[index].removeAll() }
            for index in occupied.indices { occupied[index] = 0 }
            overflow.removeAll()
            condition.signal()
        }
    }

    /// Wakes `stream` at monotonic time `due` (nanoseconds), unless a wake at or before
    /// `due` is already filed for it: that one comes first, and the stream asks for its next
    /// wake then.
    ///
    /// So a stream has at most one live wake filed. Without this, every outside wake (a
    /// session command wakes every watcher, which writes its event and asks for its next
    /// frame) added a wake that stayed: each one, when served, asked for the next. After
    /// 3,000 `seek` commands to a session, its one watcher was woken 3,000 times a frame and
    /// the idle server used 12 % of a core for it, for as long as the watcher lived.
    /// A wake that an earlier one replaced stays in its slot until the slot comes due and is
    /// dropped then (`PacedStream.pacerDue`): at most one per request for an earlier wake,
    /// each gone within the heartbeat (250 ms).
    func schedule(_ stream: PacedStream, at due: UInt64) {
        condition.withLock {
            let filed = stream.pacerDue
            if filed != 0, filed <= due { return }
            stream.pacerDue = max(due, 1)
            file(stream, at: due)
            if due < plannedWake { condition.signal() }
        }
    }

    /// Wakes filed and not yet served, live or replaced (tests).
    var filedWakes: Int {
        condition.withLock { slots.reduce(overflow.count) { $0 + $1.count } }
    }

    /// Puts a stream in the slot of `due`, or in the overflow list beyond the horizon.
    /// Lock held.
    private func file(_ stream: PacedStream, at due: UInt64) {
        let slot = max(due / Self.slotNanos, cursor)
        guard slot - cursor < UInt64(Self.slotCount) else {
            overflow.append(Entry(due: due, stream: stream))
            return
        }
        let index = Int(slot & Self.slotMask)
        if occupied[index >> 6] & (1 << UInt64(index & 63)) == 0 {
            occupied[index >> 6] |= 1 << UInt64(index & 63)
            slotLatest[index] = due
        } else {
            slotLatest[index] = max(slotLatest[index], due)
        }
        slots[index].append(stream)
    }

    /// The first occupied slot at or after the cursor, as an offset from it (nil: none).
    private func nextOccupied() -> UInt64? {
        let start = Int(cursor & Self.slotMask)
        var word = start >> 6
        var bits = occupied[word] & (~UInt64(0) << UInt64(start & 63))
        for _ in 0...occupied.count {
            if bits != 0 {
                let index = (word << 6) + bits.trailingZeroBitCount
                return UInt64((index - start + Self.slotCount) & (Self.slotCount - 1))
            }
            word = (word + 1) % occupied.count
            bits = occupied[word]
        }
        return nil
    }

    /// Takes every entry due at `now` into `due`, moving the cursor. Lock held.
    private func takeDue(now: UInt64, into due: inout [PacedStream]) {
        let nowSlot = now / Self.slotNanos
        while cursor <= nowSlot, let offset = nextOccupied() {
            let slot = cursor + offset
            if slot > nowSlot { break }
            let index = Int(slot & Self.slotMask)
            // The current slot is served once its latest wake has come: never early.
            if slot == nowSlot, slotLatest[index] > now {
                cursor = slot
                return
            }
            // A stream's live wake is its latest filed, and slots are served in order: when
            // this slot is served, a stream whose `pacerDue` falls in it (or, filed late,
            // before it) has its live wake here; any other entry of it was replaced.
            let isLive = { (stream: PacedStream) in stream.pacerDue != 0 && stream.pacerDue / Self.slotNanos <= slot }
            // Each live entry is marked served as it is taken (so a second entry of the same
            // stream in this slot is not).
            let filed = slots[index]
            var live = 0
            while live < filed.count, isLive(filed[live]) {
                filed[live].pacerDue = 0
                live += 1
            }
            if live == filed.count, due.isEmpty {
                // The usual case, one slot a tick and every entry live: the slot's array
                // becomes the batch and the batch's emptied array the slot's (no retain and
                // release of each stream to copy it across: 3,700 → 3,556 instructions a
                // frame, the measurement of `TimesTextCache`).
                swap(&due, &slots[index])
            } else {
                due.append(contentsOf: filed[0..<live])
                for stream in filed[live...] where isLive(stream) {
                    stream.pacerDue = 0
                    due.append(stream)
                }
                slots[index].removeAll(keepingCapacity: slots[index].count <= 4096)
            }
            occupied[index >> 6] &= ~(1 << UInt64(index & 63))
            cursor = slot + 1
        }
        cursor = max(cursor, nowSlot)
    }

    /// Files the overflow entries that have come within the horizon.
    private func refileOverflow(now: UInt64) {
        lastOverflowCheck = now
        guard !overflow.isEmpty else { return }
        let waiting = overflow
        overflow.removeAll(keepingCapacity: true)
        for entry in waiting where entry.stream.pacerDue == max(entry.due, 1) { file(entry.stream, at: entry.due) }
    }

    private func run() {
        var due: [PacedStream] = []
        /// Which streams of `due` have a chunk waiting for the second pass.
        var prepared: [Bool] = []
        let maxSleepNanos = UInt64(Self.maxSleep * 1e9)
        while true {
            condition.lock()
            while !stopped {
                let now = MonotonicClock.now()
                if now >= lastOverflowCheck + maxSleepNanos / 4 { refileOverflow(now: now) }
                takeDue(now: now, into: &due)
                if !due.isEmpty { break }
                var wake = now + maxSleepNanos
                if let offset = nextOccupied() {
                    wake = min(wake, slotLatest[Int((cursor + offset) & Self.slotMask)])
                }
                if !overflow.isEmpty { wake = min(wake, lastOverflowCheck + maxSleepNanos / 4) }
                if wake <= now { continue }
                plannedWake = wake
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(wake - now) / 1e9))
                plannedWake = 0
            }
            if stopped {
                condition.unlock()
                return
            }
            condition.unlock()
            // One batch: libmicrohttpd picks up all these resumes in one pass over its
            // suspended connections. Direct writes in two passes: every due frame is
            // produced, then every one is sent (`PacedStream.prepareWake`).
            for stream in due { prepared.append(stream.prepareWake(by: self)) }
            for index in due.indices where prepared[index] { due[index].sendPrepared(by: self) }
            // Releases the streams: one whose client has left is freed here. A batch far
            // larger than usual does not keep its memory.
            prepared.removeAll(keepingCapacity: prepared.count <= 65_536)
            due.removeAll(keepingCapacity: due.count <= 65_536)
        }
    }
}
