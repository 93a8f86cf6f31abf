import Synchronization

/// The curve segments held by the timelines of open streams and live sessions together
/// (`--max-live-segments`). A compiled document may hold up to `--max-segments` of them,
/// and each stream or session keeps its timeline for as long as it lives: a session of tween
/// keyframes at that bound held 95 MB (release build), so 1,000 sessions (`--max-sessions`)
/// could have asked for 95 GB. A stream or session reserves its timeline's segments when it is
/// created (503 when the total would pass the limit) and gives them back when it is freed,
/// however it ends (`Reservation.deinit`).
final class LiveSegmentBudget: Sendable {
    let limit: Int
    private let held = Mutex(0)

    init(limit: Int) { self.limit = limit }

    /// Segments reserved now.
    var current: Int { held.withLock { $0 } }

    /// Holds `count` segments of the budget until it is freed.
    final class Reservation: Sendable {
        let budget: LiveSegmentBudget
        let count: Int

        fileprivate init(budget: LiveSegmentBudget, count: Int) {
            self.budget = budget
            self.count = count
        }

        deinit { budget.held.withLock { $0 -= count } }
    }

    /// A reservation of `count` segments (at least one, so that every stream and session
    /// counts), or nil when the total would pass `limit`.
    func reserve(_ count: Int) -> Reservation? {
        let count = max(1, count)
        let taken = held.withLock { total -> Bool in
            let (sum, overflow) = total.addingReportingOverflow(count)
            guard !overflow, sum <= limit else { return false }
            total = sum
            return true
        }
        return taken ? Reservation(budget: self, count: count) : nil
    }

    /// The 503 for a stream or session that does not fit.
    func refusal(_ what: String, segments: Int) -> ProblemDetails {
        .unavailable("the open streams and live sessions hold \(current) curve segments; this \(what) needs \(segments) more, over the limit of \(limit) (max-live-segments); end a stream or delete a session, or compile a smaller document")
    }
}
