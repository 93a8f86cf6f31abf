import MotionEngine

/// The curve segments held by the timelines of open streams and live sessions together
/// (`--max-live-segments`). A compiled document may hold up to `--max-segments` of them,
/// and each stream or session keeps its timeline for as long as it lives: a session of tween
/// keyframes at that bound held 95 MB (release build), so 1,000 sessions (`--max-sessions`)
/// could have asked for 95 GB. A stream or session reserves its timeline's segments when it is
/// created (503 when the total would pass the limit) and gives them back when it is freed,
/// however it ends (`Reservation.deinit`).
///
/// Its counts are guarded by `InlineLock`s, which tell ThreadSanitizer where they are taken
/// (a bare `Mutex` handed over inside the kernel made it report two compute threads
/// reserving at once as a race).
final class LiveSegmentBudget: @unchecked Sendable {
    let limit: Int
    private let lock = InlineLock()
    private var held = 0

    init(limit: Int) { self.limit = limit }

    /// About the fewest bytes a segment of a live timeline holds (a session of tween
    /// keyframes at `--max-segments`, 1,000,000, held 95 MB; plain tracks hold more).
    static let bytesPerSegment = 95

    /// What a stream or session of `timeline` holds, in segments: its curve segments, and
    /// its document's target and events beyond their first `freeRetainedBytes` at
    /// `bytesPerSegment` a segment (`Timeline.retainedBytes`). Counting the segments alone,
    /// a session of one tween over a 760 KB target counted 1 and held 13 MB; 300 sessions
    /// of a tween repeated 100,000 times held 1.5 GB and counted 300.
    static func cost(of timeline: Timeline) -> Int {
        let extra = max(0, timeline.retainedBytes - freeRetainedBytes) / bytesPerSegment
        let (sum, overflow) = timeline.segments.addingReportingOverflow(extra)
        return overflow ? .max : sum
    }

    /// A timeline's target and events up to this size go with its segments uncounted (a
    /// usual document's are a few hundred bytes; 10,000 streams at this size, 41 MB).
    static let freeRetainedBytes = 4096

    /// Segments reserved now.
    var current: Int { lock.withLock { held } }

    /// Holds `count` segments of the budget until it is freed; a session's grows with its
    /// retargets (`grow`).
    final class Reservation: @unchecked Sendable {
        let budget: LiveSegmentBudget
        /// Segments held (under `lock`).
        private let lock = InlineLock()
        private var held: Int

        fileprivate init(budget: LiveSegmentBudget, count: Int) {
            self.budget = budget
            self.held = count
        }

        /// Takes `extra` more segments, or answers false (taking none) when the total would
        /// pass the limit.
        func grow(by extra: Int) -> Bool {
            guard budget.take(extra) else { return false }
            lock.withLock { held += extra }
            return true
        }

        /// Gives back `extra` segments taken by `grow` for work that was then refused.
        func shrink(by extra: Int) {
            lock.withLock { held -= extra }
            budget.give(extra)
        }

        /// Gives the segments back, and counts the memory of their timeline as freed
        /// (`MemoryTrim`): it was allocated on a compute thread, whose malloc arena kept it
        /// when the stream or session went. Four sessions of tween keyframes at
        /// `--max-segments` (386 MB) left the release server at 244 MB once deleted, for
        /// good; now at 28 MB (from 26) half a second later.
        deinit {
            let count = lock.withLock { held }
            budget.give(count)
            let (bytes, overflow) = count.multipliedReportingOverflow(by: LiveSegmentBudget.bytesPerSegment)
            MemoryTrim.shared.freed(overflow ? .max : bytes)
        }
    }

    /// A reservation of `count` segments (at least one, so that every stream and session
    /// counts), or nil when the total would pass `limit`.
    func reserve(_ count: Int) -> Reservation? {
        let count = max(1, count)
        return take(count) ? Reservation(budget: self, count: count) : nil
    }

    private func take(_ count: Int) -> Bool {
        lock.withLock { () -> Bool in
            let (sum, overflow) = held.addingReportingOverflow(count)
            guard !overflow, sum <= limit else { return false }
            held = sum
            return true
        }
    }

    private func give(_ count: Int) {
        lock.withLock { held -= count }
    }

    /// The 503 for a new stream or session while the budget is full: every one reserves at
    /// least one segment (`reserve`), so none can fit, and none is compiled to find out (a
    /// document at `--max-segments` takes about 0.46 s to compile, release build).
    func refusalWhenFull(_ what: String) -> ProblemDetails? {
        let held = current
        guard held >= limit else { return nil }
        return .unavailable("the open streams and live sessions hold \(held) curve segments (their targets and events counted one for every \(Self.bytesPerSegment) bytes), the limit of \(limit) (max-live-segments): no \(what) can start until one ends; end a stream or delete a session")
    }

    /// The 503 for a stream or session that does not fit.
    func refusal(_ what: String, segments: Int) -> ProblemDetails {
        .unavailable(refusalMessage(what, segments: segments))
    }

    func refusalMessage(_ what: String, segments: Int) -> String {
        "the open streams and live sessions hold \(current) curve segments (their targets and events counted one for every \(Self.bytesPerSegment) bytes); this \(what) needs \(segments) more, over the limit of \(limit) (max-live-segments); end a stream or delete a session, or compile a smaller document"
    }
}
