import Foundation

/// The JSON text of recently written lists of frame times (`[0,0.016666666666666666,…]`),
/// keyed by the times themselves (bit for bit): answers on the same frame grid — the same
/// `fps`, duration and window, which most requests share — copy the text instead of
/// formatting every time again. Shared by every thread under one lock, held only to find or
/// replace an entry (the copy into the answer happens outside it).
///
/// Bounded: `maxEntries` lists of at most `maxTimes` times each (at most 8 × 4,096 × 25
/// bytes of text, about 800 KB); longer lists are always written. Entries are replaced in
/// turn. Small document (61 frames), callgrind, release: 239,116 → 220,959 instructions a
/// request.
final class TimesTextCache: @unchecked Sendable {
    static let shared = TimesTextCache()
    static let maxEntries = 8
    static let maxTimes = 4096

    private struct Entry {
        var times: [Double]
        var text: [UInt8]
    }

    private let lock = NSLock()
    private var entries: [Entry] = []
    private var next = 0

    /// The text of `times` if it is cached.
    func text(for times: UnsafeBufferPointer<Double>) -> [UInt8]? {
        guard times.count <= Self.maxTimes else { return nil }
        lock.lock()
        defer { lock.unlock() }
        for entry in entries where Self.same(entry.times, times) { return entry.text }
        return nil
    }

    /// Keeps `text` as the text of `times` (a list within `maxTimes`), replacing the oldest
    /// entry when full.
    func store(_ times: UnsafeBufferPointer<Double>, text: UnsafeBufferPointer<UInt8>) {
        guard times.count <= Self.maxTimes else { return }
        let entry = Entry(times: Array(times), text: Array(text))
        lock.lock()
        defer { lock.unlock() }
        if entries.contains(where: { Self.same($0.times, times) }) { return }
        if entries.count < Self.maxEntries {
            entries.append(entry)
        } else {
            entries[next] = entry
            next = (next + 1) % Self.maxEntries
        }
    }

    /// Bit-for-bit equal lists (so `0` and `-0` are different keys: their texts differ).
    private static func same(_ a: [Double], _ b: UnsafeBufferPointer<Double>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { a in
            for k in 0..<a.count where a[k].bitPattern != b[k].bitPattern { return false }
            return true
        }
    }

    /// Empties the cache (tests).
    func removeAll() {
        lock.lock()
        entries.removeAll()
        next = 0
        lock.unlock()
    }
}
