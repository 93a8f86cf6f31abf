import Foundation
import MotionEngine

/// A live, steerable timeline (docs/streams-and-sessions.md): a compiled `Timeline` on a `SessionClock`, watched
/// by any number of frame streams.
///
/// Every method takes the session's lock. Watchers keep their own lock and take this one
/// while they fill; commands take this one and wake watchers only after releasing it, so
/// the two locks are never held in the opposite order.
final class LiveSession: @unchecked Sendable {
    let id: String
    private let lock = NSLock()
    private var timeline: Timeline
    private var clock: SessionClock
    private var retargets: [(path: String, to: JSON, time: Double)] = []
    private var watchers: [ObjectIdentifier: WatcherState] = [:]
    private var streams: [ObjectIdentifier: SessionWatcher] = [:]
    private var deleted = false
    /// Wall time (s) since which nobody has watched; nil while watched.
    private var unwatchedSince: Double?
    /// Most frames a watcher is sent at once; when more are due, the older ones are skipped.
    let maxBacklogFrames: Int
    /// `maxBacklogFrames`, or fewer so that they take at most `maxReadBytes` (at least one
    /// frame); set from the timeline's frame size.
    private var backlogFrames: Int

    /// The most bytes of frames a watcher is given at once (one frame at least). A watcher
    /// that fell behind was given a whole backlog in one read, held in its stream's buffer
    /// until sent: 120 frames of a 10,000-track session, 29 MB a watcher, and 100 slow
    /// watchers took the server to 1.6 GB.
    static let maxReadBytes = 1 << 20

    private static func backlogFrames(_ timeline: Timeline, limit: Int) -> Int {
        let perFrame = max(1, OutputSize.sessionFrameBytes(timeline))
        return max(1, Int(min(Double(limit), Double(maxReadBytes) / perFrame)))
    }
    /// Most command echoes that wait for one watcher. A watcher that has not taken that many
    /// (its client stopped reading while commands kept coming) is ended rather than queued
    /// for without bound: it is sent an `end` line with `"interrupted":"backlog"` if it ever
    /// reads again, and may watch again.
    let maxBacklogEvents: Int
    /// Most values a session's retargets may set in all (each number of a `to` counts one):
    /// every retarget adds a segment to each track it redirects, kept for seeking back, and
    /// an entry to the state document.
    let maxRetargets: Int
    /// Values set by retargets so far (`maxRetargets`).
    private var retargetedValues = 0
    /// The state document's names (every track's path, every retarget's path), counted as
    /// samples at `pathBytesPerSample` bytes each for `fitsInline`.
    private var pathBytes = 0
    /// Bytes of names a sample stands for when a state document's size is weighed: about
    /// what a sample itself takes in it (a shortest-form number and its punctuation).
    static let pathBytesPerSample = 24
    /// The last frame objects written (their JSON, without the line framing) by time: the
    /// watchers of a session cross the same grid times, so all but the first one to write a
    /// frame copy its bytes instead of sampling and encoding it again. A few entries, so
    /// that watchers catching up on several frames at once still share them. Valid for the
    /// current `timeline` only (a retarget empties it).
    private var frameCache: [(time: Double, json: [UInt8])] = []
    private var frameCacheNext = 0
    static let frameCacheSize = 8
    /// The timeline's events encoded for watchers, by blocks of `eventBlockSize` consecutive
    /// events (`writeEvents`): each block's JSON objects, each followed by a newline (an
    /// ndjson watcher's lines as they are), and where each object ends. Watchers copy the
    /// bytes of the events their frames carry out of the blocks, whatever interval each
    /// frame spans. Oldest block first in `eventBlockOrder`, evicted past `eventCacheMaxBytes`.
    private var eventBlocks: [Int: (lines: [UInt8], ends: [Int])] = [:]
    private var eventBlockOrder: [Int] = []
    /// The bytes of `eventBlocks`' lines.
    private var eventCacheBytes = 0
    static let eventBlockSize = 256
    /// The most the encoded blocks take together. Cached by interval before (a frame's
    /// events, up to 1 MiB), one instant of 98,000 events (about 8 MB) was encoded again for
    /// each of 100 watchers whenever a command made the clock cross it, and the intervals of
    /// watchers that had not written at the same clock times never matched: 5 s of the
    /// pacer's time for each crossing, every paced stream stalled as long (found by an
    /// adversarial review).
    /// The blocks hold `cacheSegments(eventCacheBytes)` of `--max-live-segments`
    /// (`LiveSegmentBudget.bytesPerSegment` a segment, taken as they are added, given back
    /// as they go). Uncounted, 100 sessions' blocks held 1.3 GB beside a gauge at half the
    /// budget (found by an adversarial review); a block the budget cannot take is encoded
    /// for the read and not kept.
    static let eventCacheMaxBytes = 16 << 20
    /// Blocks of events encoded (for the tests: watchers of one session share them).
    private(set) var eventEncodings = 0
    /// Reused by every sampling under the lock (no allocation per frame).
    private var sampleScratch: [Double] = []

    enum Pending {
        /// A session event line's payload.
        case event([UInt8])
        /// Grid frames at these times, crossed as the clock went from `from` to `to`, before a
        /// command changed it (`writeSpan`).
        case frames([Double], from: Double, to: Double)
    }

    /// What one watcher has been sent.
    struct WatcherState {
        /// Virtual time of the last frame sent, nil before the first.
        var lastTime: Double?
        /// The clock time after which the timeline's events are owed: they go out with the
        /// next frame sent moving forward (`writeSpan`).
        var eventsAfter = 0.0
        /// What waits to be written before anything newer, in order: the frames a watcher had
        /// not been sent yet when a command changed the clock, and the command's echo.
        var queued: [Pending] = []
        /// Frames in `queued` (at most `maxBacklogFrames`; older ones are dropped).
        var queuedFrames = 0
        /// Frames dropped from `queued`, reported with the next write.
        var queuedDropped = 0
        /// Command echoes in `queued` (at most `maxBacklogEvents`).
        var queuedEvents = 0
        /// Where in `queued` the oldest frames that may still be dropped are: every entry
        /// before it is an echo or frames already dropped, so that dropping does not walk the
        /// queue from its start on every command.
        var framesHead = 0
        /// More echoes were due than `maxBacklogEvents`: the watcher is ended (`queued` was
        /// emptied and takes nothing more).
        var overflowed = false
        /// Send a frame at the current time next (after joining, a seek or a retarget).
        var frameNow = true
    }

    /// The timeline's share of `--max-live-segments`, given back when the session is freed.
    let liveSegments: LiveSegmentBudget.Reservation?

    init(id: String, timeline: Timeline, speed: Double, wall: Double, maxBacklogFrames: Int, maxBacklogEvents: Int, maxRetargets: Int,
         liveSegments: LiveSegmentBudget.Reservation? = nil) {
        self.id = id
        self.liveSegments = liveSegments
        self.timeline = timeline
        self.clock = SessionClock(start: timeline.window.start, end: timeline.window.end, speed: speed, wall: wall)
        self.maxBacklogFrames = maxBacklogFrames
        self.backlogFrames = Self.backlogFrames(timeline, limit: maxBacklogFrames)
        self.maxBacklogEvents = maxBacklogEvents
        self.maxRetargets = maxRetargets
        self.unwatchedSince = wall
        self.pathBytes = timeline.tracks.reduce(0) { $0 &+ $1.path.utf8.count }
    }

    var framesPath: String { "/v1/sessions/\(id)/frames" }

    /// Whether a command, retarget or state read on this session is small enough for a
    /// connection thread (`HTTPRequest.inlineSampleLimit`): its answer, the state document,
    /// holds a value for every track and every value each retarget so far set, and a
    /// retarget looks its values up among the tracks, so tracks and retargeted values count
    /// as samples. (The state of a session with 10,000 retargets, `--max-retargets`'
    /// default, is 475 KB and took about 4.9 ms an answer in a release build; with none,
    /// under 0.3 ms. Ten retargets of 1,000 values each make a state of 237 KB: counting
    /// retargets rather than their values kept those on the connection threads.) The paths
    /// count too, `pathBytesPerSample` bytes a sample: 2,000 tracks named in 200 bytes each
    /// make a state of 430 KB, about 4.6 ms to write and compress, which 16 readers turned
    /// into a `/healthz` p99 of 111 ms (found by an adversarial review).
    func fitsInline(limit: Int) -> Bool {
        lock.withLock { inlineSamples(watchers: 0) <= limit }
    }

    /// What `fitsInline` weighs (under the lock): the state's tracks, retargeted values and
    /// names, the tracks once more for each of `watchers`; `Int.max` when it overflows.
    private func inlineSamples(watchers: Int) -> Int {
        let (frames, overflow) = timeline.tracks.count.multipliedReportingOverflow(by: 1 + watchers)
        let (total, overflowed) = frames.addingReportingOverflow(retargetedValues &+ pathBytes / Self.pathBytesPerSample)
        return overflow || overflowed ? .max : total
    }

    /// As `fitsInline`, for a command or retarget, which also gives every watcher the
    /// frames it is owed (`catchUpWatchers`): each watcher counts its tracks once more. A
    /// `seek` on a session of 1,990 tracks with 100 watchers held a connection thread
    /// 30–46 ms (found by an adversarial review).
    func commandFitsInline(limit: Int) -> Bool {
        lock.withLock { inlineSamples(watchers: streams.count) <= limit }
    }

    // MARK: - State

    /// The session's state now (`running`, `paused`, …), as the state document names it.
    func stateName(atWall wall: Double) -> String {
        lock.withLock {
            clock.settle(atWall: wall)
            return clock.state(atWall: wall).rawValue
        }
    }

    /// The session's entry in `GET /v1/sessions`: id, state, clock time, watchers.
    func writeSummary(atWall wall: Double, into w: inout JSONWriter) {
        lock.withLock {
            clock.settle(atWall: wall)
            w.raw("{\"id\":")
            w.string(id)
            w.raw(",\"state\":")
            w.string(clock.state(atWall: wall).rawValue)
            w.raw(",\"time\":")
            w.number(clock.time(atWall: wall))
            w.raw(",\"watchers\":")
            w.integer(streams.count)
            w.raw("}")
        }
    }

    /// The state document: id, state, time, speed, duration, frames, values, retargets.
    func stateDocument(atWall wall: Double) -> [UInt8] {
        // What the document shows is taken under the lock and written after it: the
        // timeline and the retargets are copied by reference, and the state of a session with
        // thousands of tracks or retargets takes milliseconds to write (10,000 retargets:
        // 475 KB, about 4.9 ms), while the pacer takes this lock to write the frames of the
        // session's watchers.
        let (state, time, speed, timeline, watchers, retargets) = lock.withLock {
            clock.settle(atWall: wall)
            return (clock.state(atWall: wall), clock.time(atWall: wall), clock.speed, self.timeline, streams.count, self.retargets)
        }
        var w = JSONWriter(capacity: 256 + timeline.tracks.count * 32)
        w.raw("{\"id\":")
        w.string(id)
        w.raw(",\"state\":")
        w.string(state.rawValue)
        w.raw(",\"time\":")
        w.number(time)
        w.raw(",\"speed\":")
        w.number(speed)
        w.raw(",\"duration\":")
        if let duration = timeline.duration { w.number(duration) } else { w.raw("null") }
        w.raw(",\"window\":{\"start\":")
        w.number(timeline.window.start)
        w.raw(",\"end\":")
        w.number(timeline.window.end)
        w.raw("},\"frames\":")
        w.string(framesPath)
        w.raw(",\"watchers\":")
        w.integer(watchers)
        w.raw(",\"values\":")
        var values: [Double] = []
        timeline.sample(at: time, into: &values)
        TimelineEncoder.writeTrackValues(timeline, values, into: &w)
        w.raw(",\"retargets\":[")
        for (index, retarget) in retargets.enumerated() {
            if index > 0 { w.byte(UInt8(ascii: ",")) }
            w.raw("{\"path\":")
            w.string(retarget.path)
            w.raw(",\"to\":")
            w.value(retarget.to)
            w.raw(",\"time\":")
            w.number(retarget.time)
            w.raw("}")
        }
        w.raw("]}")
        return w.bytes
    }

    /// Seconds the session has gone unwatched at `wall` (0 while watched).
    func idleSeconds(atWall wall: Double) -> Double {
        lock.withLock { unwatchedSince.map { wall - $0 } ?? 0 }
    }

    // MARK: - Commands

    enum CommandError: Error {
        case conflict(SessionClock.Conflict, field: String? = nil)
        /// A 422, with the body field at fault.
        case invalid(String, field: String?)
        /// A 503: the retarget would pass `--max-live-segments`.
        case unavailable(String)
    }

    /// Applies a command and echoes it to every watcher.
    func apply(_ command: SessionClock.Command, time: Double?, atWall wall: Double) throws(CommandError) {
        let toWake: [SessionWatcher] = try locked { () throws(CommandError) -> [SessionWatcher] in
            if command == .seek, let time, !(timeline.window.start...timeline.window.end).contains(time) {
                throw .invalid("time must be within the session's window \(format(timeline.window.start))…\(format(timeline.window.end)), not \(format(time))", field: "time")
            }
            catchUpWatchers(atWall: wall)
            do throws(SessionClock.Conflict) {
                try clock.apply(command, time: time, atWall: wall)
            } catch {
                throw .conflict(error)
            }
            let event: String
            switch command {
            case .pause: event = "paused"
            case .resume: event = "resumed"
            case .reverse: event = "reversed"
            case .seek: event = "seeked"
            case .stop: event = "stopped"
            }
            broadcast(event: event, atWall: wall, frameNow: command == .seek)
            return Array(streams.values)
        }
        toWake.forEach { $0.wake() }
    }

    /// Redirects a property toward `to` from the current time (docs/streams-and-sessions.md `retarget`).
    func retarget(path: String, to value: JSON, spring: SpringParameters, atWall wall: Double) throws(CommandError) {
        let toWake: [SessionWatcher] = try locked { () throws(CommandError) -> [SessionWatcher] in
            clock.settle(atWall: wall)
            let state = clock.state(atWall: wall)
            if state == .stopped || state == .completed {
                throw .conflict(SessionClock.Conflict(state: state, message: "the session is \(state.rawValue); it takes no more commands"))
            }
            if clock.direction < 0 {
                // A retarget shapes the timeline after now; a clock running back never gets there.
                throw .conflict(SessionClock.Conflict(state: state, message: "the session's clock runs backwards; reverse it to run forward before retargeting"))
            }
            let time = clock.time(atWall: wall)
            if retargetedValues >= maxRetargets {
                throw .conflict(SessionClock.Conflict(state: state, message: retargetLimitMessage))
            }
            do throws(RetargetError) {
                // The value is checked and counted before anything is computed.
                let targets = try timeline.retargetTargets(path, to: value)
                if retargetedValues + targets.count > maxRetargets {
                    throw RetargetError(kind: .conflict, message: retargetLimitMessage)
                }
                // Each redirected track gains a spring segment, for the session's life: its
                // share of `--max-live-segments` grows first (10,000 retarget values on a
                // session of 1,000 tracks held 5 MB the budget did not see).
                let cost = targets.count.multipliedReportingOverflow(by: Timeline.segmentsPerRetargetedTrack)
                if let liveSegments, cost.overflow || !liveSegments.grow(by: cost.partialValue) {
                    throw RetargetError(kind: .unavailable, message: liveSegments.budget.refusalMessage(
                        "retarget", segments: cost.overflow ? Int.max : cost.partialValue))
                }
                let updated: Timeline
                do throws(RetargetError) {
                    updated = try timeline.retargeting(targets, at: time, spring: spring)
                } catch {
                    liveSegments?.shrink(by: cost.partialValue)
                    throw error
                }
                catchUpWatchers(atWall: wall)
                retargetedValues += targets.count
                clock.extend(to: updated.window.end)
                timeline = updated
                backlogFrames = Self.backlogFrames(updated, limit: maxBacklogFrames)
                frameCache.removeAll()
                frameCacheNext = 0
                dropEventBlocks()
            } catch {
                switch error.kind {
                case .conflict: throw .conflict(SessionClock.Conflict(state: state, message: error.message), field: error.field)
                case .invalid: throw .invalid(error.message, field: error.field)
                case .unavailable: throw .unavailable(error.message)
                }
            }
            retargets.append((path, value, time))
            pathBytes &+= path.utf8.count
            var w = JSONWriter(capacity: 128)
            w.raw(",\"path\":")
            w.string(path)
            w.raw(",\"to\":")
            w.value(value)
            broadcast(event: "retargeted", atWall: wall, frameNow: false, extra: w.bytes)
            return Array(streams.values)
        }
        toWake.forEach { $0.wake() }
    }

    private var retargetLimitMessage: String {
        "this session's retargets have set \(retargetedValues) of its \(maxRetargets) values (max-retargets); start a new session from its current values"
    }

    private func locked<T>(_ body: () throws(CommandError) -> T) throws(CommandError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Before a command changes the clock: queues, for every watcher, the grid frames it has
    /// crossed and not yet been sent, so that they come before the command's echo (a watcher
    /// woken late would otherwise get the echo first and those frames after it). Called with
    /// the lock held, only once a command is sure to be applied: each catch-up is then
    /// followed by an echo, so the entries it adds are bounded with the echoes
    /// (`maxBacklogEvents`). (A refused retarget once caught up first, and a stream of them
    /// added an entry each, without end, to a watcher that did not read. A command refused
    /// by a stopped or completed clock still catches up, but that clock no longer moves.)
    private func catchUpWatchers(atWall wall: Double) {
        clock.settle(atWall: wall)
        let now = clock.time(atWall: wall)
        // In place (`values[index]`): a copy of a watcher's state would copy its queue on
        // every append.
        for index in watchers.values.indices {
            catchUp(&watchers.values[index], to: now)
        }
    }

    private func catchUp(_ state: inout WatcherState, to now: Double) {
        guard !state.overflowed else { return }
        if state.frameNow {
            // The frame a join or a seek owes the watcher, queued at the time it shows (on a
            // paused clock, the seek's own time) so that it comes before this command's echo.
            // Left for the next write, it came after the echo, at the clock's time then: a
            // seek and a resume before the watcher was woken lost the frame at the seek's time.
            state.queued.append(.frames([now], from: now, to: now))
            state.queuedFrames += 1
            state.frameNow = false
        } else {
            guard let last = state.lastTime, last != now else { return }
            let (due, skipped) = gridTimes(from: last, to: now, limit: backlogFrames)
            state.queuedDropped += skipped
            if !due.isEmpty {
                state.queued.append(.frames(due, from: last, to: now))
                state.queuedFrames += due.count
            }
        }
        state.lastTime = now
        // Bound what waits: drop the oldest frames beyond one backlog.
        while state.queuedFrames > backlogFrames, state.framesHead < state.queued.count {
            if case .frames(let times, let from, let to) = state.queued[state.framesHead] {
                let drop = min(times.count, state.queuedFrames - backlogFrames)
                state.queuedFrames -= drop
                state.queuedDropped += drop
                if drop < times.count {
                    state.queued[state.framesHead] = .frames(Array(times.dropFirst(drop)), from: from, to: to)
                    break
                }
                state.queued[state.framesHead] = .frames([], from: from, to: to)
            }
            state.framesHead += 1
        }
    }

    /// Queues a session event on every watcher. Called with the lock held.
    private func broadcast(event: String, atWall wall: Double, frameNow: Bool, extra: [UInt8] = []) {
        var w = JSONWriter(capacity: 96)
        w.raw("{\"event\":")
        w.string(event)
        w.raw(",\"time\":")
        w.number(clock.time(atWall: wall))
        w.raw(",\"session\":")
        w.string(id)
        w.bytes.append(contentsOf: extra)
        w.raw("}")
        for index in watchers.values.indices {
            queue(event: w.bytes, frameNow: frameNow, on: &watchers.values[index])
        }
    }

    private func queue(event: [UInt8], frameNow: Bool, on state: inout WatcherState) {
        guard !state.overflowed else { return }
        if state.queuedEvents >= maxBacklogEvents {
            state.overflowed = true
            state.queued = []
            state.queuedFrames = 0
            state.framesHead = 0
            return
        }
        state.queued.append(.event(event))
        state.queuedEvents += 1
        if frameNow { state.frameNow = true }
    }

    /// Ends the session now (DELETE, expiry): watchers finish with their `end` line.
    func delete() {
        let toWake = lock.withLock {
            deleted = true
            return Array(streams.values)
        }
        toWake.forEach { $0.wake() }
    }

    // MARK: - Watchers

    func addWatcher(_ watcher: SessionWatcher, limit: Int) -> Bool {
        lock.withLock {
            guard streams.count < limit, !deleted else { return false }
            let key = ObjectIdentifier(watcher)
            streams[key] = watcher
            watchers[key] = WatcherState()
            unwatchedSince = nil
            return true
        }
    }

    /// What waits for `watcher` (for tests): entries in its queue, and the echoes among them.
    func queued(for watcher: SessionWatcher) -> (entries: Int, events: Int)? {
        lock.withLock { watchers[ObjectIdentifier(watcher)].map { ($0.queued.count, $0.queuedEvents) } }
    }

    func removeWatcher(_ watcher: SessionWatcher) {
        lock.withLock {
            let key = ObjectIdentifier(watcher)
            streams.removeValue(forKey: key)
            watchers.removeValue(forKey: key)
            if streams.isEmpty {
                unwatchedSince = MonotonicClock.seconds
                dropEventBlocks()
            }
        }
    }

    /// What a watcher writes next at `wall`, how many frames it skipped, and the wall time of
    /// its next frame (nil: only a command or the end can bring more).
    func produce(for watcher: SessionWatcher, format: FrameStreamEncoder.Format, atWall wall: Double, draining: Bool,
                 into bytes: inout [UInt8]) -> (ended: Bool, sent: Int, dropped: Int, nextWall: Double?, endReason: String?) {
        lock.withLock {
            let key = ObjectIdentifier(watcher)
            guard var state = watchers[key] else { return (true, 0, 0, nil, "session-deleted") }
            defer { watchers[key] = state }
            clock.settle(atWall: wall)
            let now = clock.time(atWall: wall)
            var sent = 0, dropped = 0
            if state.overflowed {
                // Echoes were lost (`maxBacklogEvents`): the watcher is told so and ended,
                // rather than going on as if it had seen every command.
                writeEnd(state: deleted ? "deleted" : clock.state(atWall: wall).rawValue, time: now,
                         interrupted: "backlog", format: format, into: &bytes)
                return (true, 0, state.queuedDropped, nil, "backlog")
            }

            for pending in state.queued {
                switch pending {
                case .event(let event):
                    line(format, "session", event, into: &bytes)
                case .frames(let times, let from, let to):
                    writeSpan(times, from: from, to: to, state: &state, format: format, into: &bytes)
                    sent += times.count
                }
            }
            dropped += state.queuedDropped
            // Frames written from the queue count against this read's backlog.
            let budget = max(1, backlogFrames - state.queuedFrames)
            state.queued.removeAll()
            state.queuedFrames = 0
            state.queuedDropped = 0
            state.queuedEvents = 0
            state.framesHead = 0

            if state.frameNow || state.lastTime == nil {
                writeFrame(at: now, format: format, into: &bytes)
                sent += 1
                state.frameNow = false
                state.lastTime = now
                state.eventsAfter = now
            } else if let last = state.lastTime, last != now {
                // Grid samples crossed since the last frame, in the direction of travel.
                let (due, skipped) = gridTimes(from: last, to: now, limit: budget)
                dropped += skipped
                writeSpan(due, from: last, to: now, state: &state, format: format, into: &bytes)
                sent += due.count
                state.lastTime = now
            }

            let clockState = clock.state(atWall: wall)
            let finished = clockState == .stopped || clockState == .completed
            if deleted || finished || draining {
                writeEnd(state: deleted ? "deleted" : clockState.rawValue, time: now,
                         interrupted: draining && !deleted && !finished ? "shutdown" : nil, format: format, into: &bytes)
                let reason = deleted ? "session-deleted" : finished ? "session-\(clockState.rawValue)" : "shutdown"
                return (true, sent, dropped, nil, reason)
            }
            let next = nextGridTime(after: now)
            let nextWall = next.flatMap { clock.wall(atTime: $0) } ?? clock.completionWall
            return (false, sent, dropped, nextWall, nil)
        }
    }

    /// About how many of the timeline's events `watcher`'s next read at `wall` carries: those
    /// between the earliest and the latest clock time it has to cover (what it is owed, the
    /// spans queued by commands, and now), both ways. An estimate, for `dueIsHeavy`.
    ///
    /// `Int.max` when the session's lock is taken: another thread is writing for one of its
    /// watchers (a heavy write on libmicrohttpd's thread holds it for milliseconds), and the
    /// pacer must not wait for it; the read then goes to libmicrohttpd as well. Waiting, the
    /// pacer was held back 0.46 s while 100 watchers' heavy writes went one after another.
    func dueEventCount(for watcher: SessionWatcher, atWall wall: Double) -> Int {
        guard lock.try() else { return .max }
        defer { lock.unlock() }
        guard let state = watchers[ObjectIdentifier(watcher)] else { return 0 }
        let now = clock.time(atWall: wall)
        var low = min(state.eventsAfter, now), high = max(state.eventsAfter, now)
        for case .frames(_, let from, let to) in state.queued {
            low = min(low, from, to)
            high = max(high, from, to)
        }
        let events = timeline.events
        return Self.firstEvent(in: events, laterThan: high + timeEpsilon) - Self.firstEvent(in: events, laterThan: low - timeEpsilon)
    }

    /// A watcher's `end` line when its write could not be held (`PacedStream.admit`).
    func writeUnreadEnd(format: FrameStreamEncoder.Format, atWall wall: Double, into bytes: inout [UInt8]) {
        lock.withLock {
            clock.settle(atWall: wall)
            writeEnd(state: clock.state(atWall: wall).rawValue, time: clock.time(atWall: wall), interrupted: "unread", format: format, into: &bytes)
        }
    }

    /// A watcher's last line: the session's state and clock time, and why it ended early.
    private func writeEnd(state: String, time: Double, interrupted: StaticString?, format: FrameStreamEncoder.Format,
                          into bytes: inout [UInt8]) {
        var w = JSONWriter(capacity: 96)
        w.raw("{\"end\":true,\"session\":")
        w.string(id)
        w.raw(",\"state\":")
        w.string(state)
        w.raw(",\"time\":")
        w.number(time)
        if let interrupted {
            w.raw(",\"interrupted\":\"")
            w.raw(interrupted)
            w.raw("\"")
        }
        w.raw("}")
        line(format, "end", w.bytes, into: &bytes)
    }

    /// Sample times strictly after `from` up to and including `to` (or down to, reversing),
    /// on the grid `start + k/fps`, plus the window's end when reached — at most `limit` of
    /// them, the latest ones, with the number of earlier ones skipped. The grid indexes are
    /// computed, not walked, so a reader far behind costs no more than one that is not.
    private func gridTimes(from: Double, to: Double, limit: Int) -> (times: [Double], skipped: Int) {
        let start = timeline.window.start, end = timeline.window.end, fps = timeline.fps
        func t(_ k: Int) -> Double { start + Double(k) / fps }
        if to > from {
            // First index after `from`, last index at or before `to` (and before the end).
            var first = Int(((from - start) * fps).rounded(.down)) + 1
            while t(first) <= from + timeEpsilon { first += 1 }
            var last = Int(((min(to, end) - start) * fps).rounded(.down)) + 1
            while last >= first, t(last) > to + timeEpsilon || t(last) > end - 1e-6 { last -= 1 }
            let reachesEnd = to >= end && from < end
            let count = max(0, last - first + 1) + (reachesEnd ? 1 : 0)
            let skipped = max(0, count - limit)
            first += skipped
            var times = first <= last ? (first...last).map(t) : []
            if reachesEnd { times.append(end) }
            return (times, skipped)
        }
        // Reversing: first index before `from`, last index at or after `to`, counting down.
        var first = Int(((from - start) * fps).rounded(.up)) - 1
        while first >= 0, t(first) >= from - timeEpsilon { first -= 1 }
        var last = max(0, Int(((to - start) * fps).rounded(.up)) - 1)
        while t(last) < to - timeEpsilon { last += 1 }
        let count = max(0, first - last + 1)
        let skipped = max(0, count - limit)
        first -= skipped
        return (first >= last ? stride(from: first, through: last, by: -1).map(t) : [], skipped)
    }

    /// The next grid time after `now` in the direction of travel.
    private func nextGridTime(after now: Double) -> Double? {
        let start = timeline.window.start, end = timeline.window.end, fps = timeline.fps
        if clock.direction > 0 {
            var k = Int(((now - start) * fps).rounded(.down)) + 1
            while start + Double(k) / fps <= now + timeEpsilon { k += 1 }
            let t = start + Double(k) / fps
            return t > end - 1e-6 ? end : t
        }
        var k = Int(((now - start) * fps).rounded(.up)) - 1
        while k > 0, start + Double(k) / fps >= now - timeEpsilon { k -= 1 }
        return max(start, start + Double(k) / fps)
    }

    /// Frames at `times`, crossed as the clock went from `from` to `to`. Moving forward,
    /// each carries the timeline events since the last frame this watcher was sent moving
    /// forward (`eventsAfter`), each event once: one that falls between a frame and the
    /// clock time of a read or a command goes out with the next frame (before, it was lost:
    /// the next frame carried only the events after that clock time). Moving back, frames
    /// carry no events, and those after `to` are owed again.
    private func writeSpan(_ times: [Double], from: Double, to: Double, state: inout WatcherState,
                           format: FrameStreamEncoder.Format, into bytes: inout [UInt8]) {
        guard to > from else {
            for t in times { writeFrame(at: t, format: format, into: &bytes) }
            state.eventsAfter = to
            return
        }
        for t in times {
            writeFrame(at: t, format: format, into: &bytes)
            if t > state.eventsAfter {
                writeEvents(after: state.eventsAfter, through: t, format: format, into: &bytes)
                state.eventsAfter = t
            }
        }
    }

    /// One frame line. Watchers of one session share the encoding (`frameCache`). Measured
    /// under callgrind, 40 watchers over 4 sessions (Benchmarks/README.md, "Session
    /// watchers, the frame writer"): 6,507 → 952 instructions a frame here, 14,012 → 9,670
    /// for the whole server with `PacedStream.quietUntil`; server CPU with 1,000 watchers over
    /// 100 sessions 0.90× before's, round by round.
    private func writeFrame(at time: Double, format: FrameStreamEncoder.Format, into bytes: inout [UInt8]) {
        // Bit-equal times only: the same grid time computes to the same Double every time.
        for index in frameCache.indices where frameCache[index].time.bitPattern == time.bitPattern {
            line(format, "frame", frameCache[index].json, into: &bytes)
            return
        }
        var w = JSONWriter(capacity: 0)
        let slot = frameCacheNext
        if slot < frameCache.count {
            swap(&w.bytes, &frameCache[slot].json)
            w.bytes.removeAll(keepingCapacity: true)
        } else {
            w.bytes.reserveCapacity(64 + timeline.tracks.count * 24)
        }
        w.raw("{\"frame\":")
        w.integer(timeline.frameIndex(at: time))
        w.raw(",\"time\":")
        w.number(time)
        w.raw(",\"values\":")
        timeline.sample(at: time, into: &sampleScratch)
        TimelineEncoder.writeTrackValues(timeline, sampleScratch, into: &w)
        w.raw("}")
        line(format, "frame", w.bytes, into: &bytes)
        if slot < frameCache.count {
            frameCache[slot] = (time, w.bytes)
        } else {
            frameCache.append((time, w.bytes))
        }
        frameCacheNext = (slot + 1) % Self.frameCacheSize
    }

    /// The timeline's own events in (after, through], moving forward. Found by bisection
    /// rather than a walk of every event on every frame (a session may hold 100,000
    /// events, and this runs for each watcher's every frame, on the pacer thread).
    ///
    /// Each event is encoded once for every watcher (`eventBlocks`), and copied. Encoded per watcher, a
    /// session of 99,000 events at speed 24.75 (25,000 events a second) with its 100
    /// watchers kept the pacer busy all the time, and every other stream was up to 0.65 s
    /// late (found by an adversarial review). Shared, that session's pacer thread spent
    /// 0.79 s of CPU in 6.5 s instead of 5.74 s, and a stream beside it was late by 11 ms
    /// at p99 instead of 74 ms (release, the same machine and minute).
    private func writeEvents(after: Double, through: Double, format: FrameStreamEncoder.Format, into bytes: inout [UInt8]) {
        let events = timeline.events
        var index = Self.firstEvent(in: events, laterThan: after - timeEpsilon)
        // A run of consecutive events of one block, written with one copy.
        var run: (block: Int, from: Int, to: Int)?
        while index < events.count {
            let time = events[index].time
            // In time order up to `timeEpsilon` (the events of one instant are in cause
            // order), so nothing after this one can be due.
            if time > through + 2 * timeEpsilon { break }
            if time > after + timeEpsilon && time <= through + timeEpsilon {
                let block = index / Self.eventBlockSize
                if let current = run, current.block == block, current.to == index {
                    run?.to = index + 1
                } else {
                    if let current = run { writeEventRun(current, format: format, into: &bytes) }
                    run = (block, index, index + 1)
                }
            }
            index += 1
        }
        if let current = run { writeEventRun(current, format: format, into: &bytes) }
    }

    /// The lines of events `from..<to` of block `block` (encoded first if it is not cached).
    private func writeEventRun(_ run: (block: Int, from: Int, to: Int), format: FrameStreamEncoder.Format, into bytes: inout [UInt8]) {
        let encoded = eventBlock(run.block)
        let base = run.block * Self.eventBlockSize
        let first = run.from - base, last = run.to - base - 1
        let start = first == 0 ? 0 : encoded.ends[first - 1] + 1
        encoded.lines.withUnsafeBufferPointer { lines in
            guard format == .serverSentEvents else {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: lines[start...encoded.ends[last]]))
                return
            }
            var from = start
            for k in first...last {
                line(format, "motion", UnsafeBufferPointer(rebasing: lines[from..<encoded.ends[k]]), into: &bytes)
                from = encoded.ends[k] + 1
            }
        }
    }

    /// Block `block` of the timeline's events, encoded (`eventBlocks`).
    private func eventBlock(_ block: Int) -> (lines: [UInt8], ends: [Int]) {
        if let cached = eventBlocks[block] { return cached }
        eventEncodings += 1
        let events = timeline.events
        let range = (block * Self.eventBlockSize)..<min(events.count, (block + 1) * Self.eventBlockSize)
        var w = JSONWriter(capacity: 0)
        var ends: [Int] = []
        ends.reserveCapacity(range.count)
        for index in range {
            TimelineEncoder.writeEvent(events[index], frame: timeline.frameIndex(at: events[index].time), streamForm: true, into: &w)
            ends.append(w.bytes.count)
            w.byte(UInt8(ascii: "\n"))
        }
        let encoded = (lines: w.bytes, ends: ends)
        let held = Self.cacheSegments(eventCacheBytes)
        while let oldest = eventBlockOrder.first, eventCacheBytes + encoded.lines.count > Self.eventCacheMaxBytes {
            eventBlockOrder.removeFirst()
            eventCacheBytes -= eventBlocks.removeValue(forKey: oldest)?.lines.count ?? 0
        }
        let kept = encoded.lines.count <= Self.eventCacheMaxBytes
        let wanted = Self.cacheSegments(eventCacheBytes + (kept ? encoded.lines.count : 0))
        guard kept, wanted <= held || liveSegments?.grow(by: wanted - held) ?? true else {
            liveSegments?.shrink(by: held - Self.cacheSegments(eventCacheBytes))
            return encoded
        }
        if wanted < held { liveSegments?.shrink(by: held - wanted) }
        eventBlocks[block] = encoded
        eventBlockOrder.append(block)
        eventCacheBytes += encoded.lines.count
        return encoded
    }

    /// The segments `bytes` of encoded events hold.
    private static func cacheSegments(_ bytes: Int) -> Int {
        (bytes + LiveSegmentBudget.bytesPerSegment - 1) / LiveSegmentBudget.bytesPerSegment
    }

    /// Lets every encoded block go (the timeline changed, or no one watches), and gives back
    /// their segments.
    private func dropEventBlocks() {
        // Freed on the pacer's thread, whose malloc arena would keep them (`MemoryTrim`).
        MemoryTrim.shared.freed(eventCacheBytes)
        liveSegments?.shrink(by: Self.cacheSegments(eventCacheBytes))
        eventBlocks.removeAll()
        eventBlockOrder.removeAll()
        eventCacheBytes = 0
    }

    /// Bisection for the first event later than `time`, in events sorted by time up to
    /// `timeEpsilon` (`EventOrder`: within one instant they are in cause order, and a time
    /// may step back by less than `timeEpsilon`). Every event before the index returned is
    /// earlier than `time + timeEpsilon`: the last step that moved `low` found one at or
    /// before `time`, and no earlier event is more than `timeEpsilon` later than it.
    static func firstEvent(in events: [TimelineEvent], laterThan time: Double) -> Int {
        var low = 0, high = events.count
        while low < high {
            let middle = low + (high - low) / 2
            if events[middle].time > time { high = middle } else { low = middle + 1 }
        }
        return low
    }

    private func line(_ format: FrameStreamEncoder.Format, _ event: StaticString, _ json: [UInt8], into bytes: inout [UInt8]) {
        json.withUnsafeBufferPointer { line(format, event, $0, into: &bytes) }
    }

    private func line(_ format: FrameStreamEncoder.Format, _ event: StaticString, _ json: UnsafeBufferPointer<UInt8>, into bytes: inout [UInt8]) {
        if format == .serverSentEvents {
            bytes.append(contentsOf: "event: ".utf8)
            bytes.append(contentsOf: UnsafeBufferPointer(start: event.utf8Start, count: event.utf8CodeUnitCount))
            bytes.append(contentsOf: "\ndata: ".utf8)
            bytes.append(contentsOf: json)
            bytes.append(contentsOf: "\n\n".utf8)
        } else {
            bytes.append(contentsOf: json)
            bytes.append(UInt8(ascii: "\n"))
        }
    }
}

/// One client watching a session's frames.
final class SessionWatcher: PacedStream, @unchecked Sendable {
    let session: LiveSession
    let format: FrameStreamEncoder.Format
    private let metrics: ServiceMetrics

    init(session: LiveSession, format: FrameStreamEncoder.Format, metrics: ServiceMetrics) {
        self.session = session
        self.format = format
        self.metrics = metrics
    }

    private var next: UInt64?

    override func fill(now: UInt64, into bytes: inout [UInt8]) {
        let result = session.produce(for: self, format: format, atWall: Double(now) / 1e9, draining: draining, into: &bytes)
        metrics.framesSent(result.sent)
        metrics.framesDropped(result.dropped)
        framesSent += result.sent
        framesDropped += result.dropped
        if result.ended {
            ended = true
            endReason = result.endReason
        }
        // Clamped: a tiny speed puts the next frame centuries away, beyond UInt64 nanoseconds.
        next = result.nextWall.map { UInt64(min(max(0, $0) * 1e9, 9e18)) }
        if !result.ended, let next { quietUntil = next }
    }

    override func dueIsHeavy(now: UInt64) -> Bool {
        session.dueEventCount(for: self, atWall: Double(now) / 1e9) > Self.heavyEvents
    }

    override func endUnread(into bytes: inout [UInt8]) {
        session.writeUnreadEnd(format: format, atWall: MonotonicClock.seconds, into: &bytes)
    }

    // nil while paused: `PacedStream` then wakes the connection every `heartbeatNanos`, so
    // that a client that went away is noticed and freed.
    override func nextWake(now: UInt64) -> UInt64? { next }

    override func didClose() {
        session.removeWatcher(self)
    }
}
