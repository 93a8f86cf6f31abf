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

    /// Holds `count` segments of the budget until it is freed; a session's grows with its
    /// retargets (`grow`).
    final class Reservation: Sendable {
        let budget: LiveSegmentBudget
        /// Segments held (changed under the budget's lock).
        private let held: Mutex<Int>

        fileprivate init(budget: LiveSegmentBudget, count: Int) {
            self.budget = budget
            self.held = Mutex(count)
        }

        /// Takes `extra` more segments, or answers false (taking none) when the total would
        /// pass the limit.
        func grow(by extra: Int) -> Bool {
            guard budget.take(extra) else { return false }
            held.withLock { $0 += extra }
            return true
        }

        /// Gives back `extra` segments taken by `grow` for work that was then refused.
        func shrink(by extra: Int) {
            held.withLock { $0 -= extra }
            budget.held.withLock { $0 -= extra }
        }

        deinit {
            let count = held.withLock { $0 }
            budget.held.withLock { $0 -= count }
        }
    }

    /// A reservation of `count` segments (at least one, so that every stream and session
    /// counts), or nil when the total would pass `limit`.
    func reserve(_ count: Int) -> Reservation? {
        let count = max(1, count)
        return take(count) ? Reservation(budget: self, count: count) : nil
    }

    private func take(_ count: Int) -> Bool {
        held.withLock { total -> Bool in
            let (sum, overflow) = total.addingReportingOverflow(count)
            guard !overflow, sum <= limit else { return false }
            total = sum
            return true
        }
    }

    /// The 503 for a stream or session that does not fit.
    func refusal(_ what: String, segments: Int) -> ProblemDetails {
        .unavailable(refusalMessage(what, segments: segments))
    }

    func refusalMessage(_ what: String, segments: Int) -> String {
        "the open streams and live sessions hold \(current) curve segments; this \(what) needs \(segments) more, over the limit of \(limit) (max-live-segments); end a stream or delete a session, or compile a smaller document"
    }
}
