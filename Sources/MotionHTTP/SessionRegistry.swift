import Foundation
import MotionEngine

/// The live sessions: creation with a limit, lookup, deletion, and expiry of sessions left
/// unwatched past the idle TTL (checked once a second on a janitor thread).
final class SessionRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var sessions: [String: LiveSession] = [:]
    /// The ids of `sessions` in `String` order, for `page`: kept sorted as sessions come and
    /// go, so that a page is a binary search and a slice. (Sorting every id for each page,
    /// as before, made a page of 1,000 take 56 ms at 100,000 sessions, under the lock.)
    private var orderedIDs = SortedIDs()
    private let maxSessions: Int
    private let idleTTL: Double
    private let metrics: ServiceMetrics
    private var stopped = false
    private let wakeJanitor = NSCondition()

    init(maxSessions: Int, idleTTL: Double, metrics: ServiceMetrics) {
        self.maxSessions = maxSessions
        self.idleTTL = idleTTL
        self.metrics = metrics
    }

    var count: Int { lock.withLock { sessions.count } }

    /// Adds a session under a fresh random id, unless the registry is full.
    func create(_ make: (String) -> LiveSession) -> LiveSession? {
        let session: LiveSession? = lock.withLock {
            guard sessions.count < maxSessions else { return nil }
            var id: String
            repeat { id = Self.randomID() } while sessions[id] != nil
            let session = make(id)
            sessions[id] = session
            orderedIDs.insert(id)
            return session
        }
        metrics.setLiveSessions(count)
        return session
    }

    enum Creation {
        case created(LiveSession)
        case exists
        case full
    }

    /// Adds a session under an id the client chose (already validated), unless one with
    /// that id exists or the registry is full.
    func create(id: String, _ make: (String) -> LiveSession) -> Creation {
        let result: Creation = lock.withLock {
            guard sessions[id] == nil else { return .exists }
            guard sessions.count < maxSessions else { return .full }
            let session = make(id)
            sessions[id] = session
            orderedIDs.insert(id)
            return .created(session)
        }
        if case .created = result { metrics.setLiveSessions(count) }
        return result
    }

    /// Ids a client may choose: 1…64 characters of `A–Z a–z 0–9 _ -`.
    static func isValidClientID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard !bytes.isEmpty, bytes.count <= 64 else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }

    func session(_ id: String) -> LiveSession? { lock.withLock { sessions[id] } }

    /// One page of the live sessions in id order: up to `limit` whose id sorts after `after`,
    /// and whether more follow.
    func page(after: String?, limit: Int) -> (sessions: [LiveSession], more: Bool) {
        lock.withLock {
            let ids = orderedIDs.page(after: after, limit: limit)
            return (ids.ids.compactMap { sessions[$0] }, ids.more)
        }
    }

    /// Removes a session; its watchers end with an `end` line. With `only`, removes the
    /// session under `id` only if it is that one (not one made later under the same id).
    @discardableResult
    func delete(_ id: String, only: LiveSession? = nil) -> Bool {
        let removed: LiveSession? = lock.withLock {
            guard let session = sessions[id], only == nil || session === only else { return nil }
            sessions.removeValue(forKey: id)
            orderedIDs.remove(id)
            return session
        }
        guard let session = removed else { return false }
        session.delete()
        metrics.setLiveSessions(count)
        return true
    }

    /// Removes sessions unwatched for longer than the idle TTL.
    /// Each session's idleness is read outside the registry's lock, which is held only to
    /// copy a page of `expiryPage` sessions out at a time (`page`). Read under it, at 100,000
    /// sessions, lookups waited up to 26 ms once a second; with all the sessions copied out at
    /// once, up to 6.3 ms (release). A lookup thread beside 5 expiries of 100,000 sessions
    /// (debug): the longest wait 11 to 18 ms with one copy, 1.4 to 4.5 ms by pages (the rest is
    /// two cores shared by two busy threads); an expiry takes longer, 110 ms against 60, on
    /// the janitor's own thread.
    func expire(atWall wall: Double) {
        var after: String?
        while true {
            let (batch, more) = page(after: after, limit: Self.expiryPage)
            for session in batch where session.idleSeconds(atWall: wall) > idleTTL { delete(session.id, only: session) }
            guard more, let last = batch.last else { return }
            after = last.id
        }
    }

    /// Sessions `expire` reads under the lock at a time.
    static let expiryPage = 1_000

    /// Ends every session's watchers (SIGTERM).
    func endAll() {
        let all = lock.withLock { Array(sessions.keys) }
        for id in all { delete(id) }
    }

    func startJanitor() {
        let thread = Thread { [self] in
            while true {
                let done = wakeJanitor.withLock { () -> Bool in
                    if !stopped { _ = wakeJanitor.wait(until: Date(timeIntervalSinceNow: 1)) }
                    return stopped
                }
                if done { return }
                expire(atWall: MonotonicClock.seconds)
            }
        }
        thread.name = "session-janitor"
        thread.start()
    }

    func stopJanitor() {
        wakeJanitor.withLock {
            stopped = true
            wakeJanitor.signal()
        }
    }

    private static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<20).map { _ in digits[Int(generator.next() % 16)] })
    }
}

/// Strings kept in ascending `String` order, without repeats: the session ids a listing
/// pages through. Insertion and removal find their place by binary search and move the
/// ids after it (16 bytes an id, 1.6 MB at 100,000 sessions; creating 100,000 sessions over
/// HTTP took 6.8 s, 6.3 s when a page sorted the ids instead); a page is a binary search and
/// a copy of at most `limit` ids.
struct SortedIDs {
    private(set) var ids: [String] = []

    /// The index of the first id not below `id` (`ids.count` when every id is below).
    private func lowerBound(_ id: String) -> Int {
        var low = 0, high = ids.count
        while low < high {
            let middle = low + (high - low) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    mutating func insert(_ id: String) {
        let index = lowerBound(id)
        if index < ids.count, ids[index] == id { return }
        ids.insert(id, at: index)
    }

    mutating func remove(_ id: String) {
        let index = lowerBound(id)
        if index < ids.count, ids[index] == id { ids.remove(at: index) }
    }

    /// Up to `limit` (≥ 0) ids after `after` (all when nil), in order, and whether more follow.
    func page(after: String?, limit: Int) -> (ids: ArraySlice<String>, more: Bool) {
        var start = 0
        if let after {
            start = lowerBound(after)
            if start < ids.count, ids[start] == after { start += 1 }
        }
        let end = start + min(max(0, limit), ids.count - start)
        return (ids[start..<end], end < ids.count)
    }
}
