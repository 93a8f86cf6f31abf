import Foundation

/// The JSON text of recently written lists of frame times (`[0,0.016666666666666666,…]`),
/// keyed by the times themselves (bit for bit): answers on the same frame grid — the same
/// `fps`, duration and window, which most requests share — copy the text instead of
/// formatting every time again. A `/v1/timelines` answer copies a whole list
/// (`text(for:)`); a live stream's frame line copies its one time out of it
/// (`entry(for:)`, `Entry.copy(frame:to:)`). Shared by every thread under one lock, held
/// only to find or replace an entry (the copies happen outside it).
///
/// Bounded: `maxEntries` lists of at most `maxTimes` times each (at most 8 × 4,096 × (25 +
/// 4 + 8) bytes of text, ends and times, about 1.2 MB); longer lists are always written.
/// Entries are replaced in turn. Callgrind, release: the small document (61 frames)
/// 239,116 → 220,959 instructions a request; a streamed frame 3,767 → 3,503 (200 streams
/// of one tween at 60 fps, the 12 s run minus the 6 s run ÷ the frames between them).
final class TimesTextCache: @unchecked Sendable {
    static let shared = TimesTextCache()
    static let maxEntries = 8
    static let maxTimes = 4096

    /// One list of times and its text. Immutable, shared by reference.
    final class Entry: Sendable {
        /// The times, bit for bit (the key).
        let times: [Double]
        /// `[t0,t1,…]`.
        let text: [UInt8]
        /// `ends[k]`: where time k's text ends in `text` (at the `,` or `]` after it; it
        /// starts one byte after the previous end, or after the `[`).
        let ends: [UInt32]

        /// Nil when `text` is not a list of `times.count` numbers.
        init?(times: [Double], text: [UInt8]) {
            var ends: [UInt32] = []
            ends.reserveCapacity(times.count)
            for (index, byte) in text.enumerated() where byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") {
                ends.append(UInt32(index))
            }
            guard ends.count == times.count, text.first == UInt8(ascii: "[") else { return nil }
            self.times = times
            self.text = text
            self.ends = ends
        }

        /// Times in the list.
        var count: Int { ends.count }

        /// Copies time `k`'s text (0 ≤ k < `count`) to `p`; returns its byte count (at most
        /// `JSONWriter.maxNumberBytes`).
        @inline(__always)
        func copy(frame k: Int, to p: UnsafeMutablePointer<UInt8>) -> Int {
            ends.withUnsafeBufferPointer { ends in
                let start = k == 0 ? 1 : Int(ends[k &- 1]) &+ 1
                let length = Int(ends[k]) &- start
                text.withUnsafeBufferPointer { p.update(from: $0.baseAddress! + start, count: length) }
                return length
            }
        }
    }

    private let lock = InlineLock()
    private var entries: [Entry] = []
    private var next = 0

    /// The text of `times` if it is cached.
    func text(for times: UnsafeBufferPointer<Double>) -> [UInt8]? {
        find(times)?.text
    }

    /// The entry of `timeline`'s frame times (`Timeline.time(ofFrame:)`), written and kept
    /// if it was not cached; nil for more than `maxTimes` frames.
    func entry(for timeline: Timeline) -> Entry? {
        let frames = timeline.frameCount
        guard frames > 0, frames <= Self.maxTimes else { return nil }
        let times = (0..<frames).map { timeline.time(ofFrame: $0) }
        return times.withUnsafeBufferPointer { times in
            if let found = find(times) { return found }
            var text = [UInt8](repeating: 0, count: frames * (JSONWriter.maxNumberBytes + 1) + 2)
            let count = text.withUnsafeMutableBufferPointer { TimelineEncoder.writeList(times.baseAddress!, frames, to: $0.baseAddress!) }
            return text.withUnsafeBufferPointer { store(times, text: UnsafeBufferPointer(rebasing: $0[0..<count])) }
        }
    }

    /// Keeps `text` as the text of `times` (a list within `maxTimes`), replacing the oldest
    /// entry when full; returns the entry kept for `times` (one already there, or this one).
    @discardableResult
    func store(_ times: UnsafeBufferPointer<Double>, text: UnsafeBufferPointer<UInt8>) -> Entry? {
        guard times.count <= Self.maxTimes, let entry = Entry(times: Array(times), text: Array(text)) else { return nil }
        return lock.withLock {
            if let found = entries.first(where: { Self.same($0.times, times) }) { return found }
            if entries.count < Self.maxEntries {
                entries.append(entry)
            } else {
                entries[next] = entry
                next = (next + 1) % Self.maxEntries
            }
            return entry
        }
    }

    private func find(_ times: UnsafeBufferPointer<Double>) -> Entry? {
        guard times.count <= Self.maxTimes else { return nil }
        return lock.withLock { entries.first { Self.same($0.times, times) } }
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
        lock.withLock {
            entries.removeAll()
            next = 0
        }
    }
}
