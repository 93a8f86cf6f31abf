import Foundation

/// The text of every frame time of one frame grid (`0`, `0.016666666666666666`, …, each as
/// `JSONWriter.write` writes it), shared by the live streams on that grid: a stream's frame
/// line copies its time instead of formatting it again.
///
/// Most streams share a handful of grids (the same `fps`, window and duration), and a time
/// is the longest number of a frame line (17 significant digits for most multiples of 1/60).
/// Under callgrind, 200 streams of one tween at 60 fps for 6 s and 12 s (the difference ÷
/// the frames between them): 3,767 → 3,503 user-space instructions a frame for the whole
/// server (`FrameStreamEncoder.writeTracksFrameLine`).
///
/// Immutable once made. `texts(for:)` keeps the grids of up to `maxEntries` timelines of at
/// most `maxFrames` frames each (at most 8 × 4,096 × (25 + 4 + 8) bytes, about 1.2 MB),
/// keyed by the times bit for bit; longer grids get none (their times are formatted as
/// they go). Entries are replaced in turn.
public final class FrameTimeTexts: Sendable {
    public static let maxEntries = 8
    public static let maxFrames = 4096

    /// The times, bit for bit (the key).
    let times: [Double]
    /// Every time's text, one after another.
    let text: [UInt8]
    /// `ends[k]`: where time k's text ends in `text` (it starts where time k − 1's ends).
    let ends: [UInt32]

    init(times: [Double]) {
        self.times = times
        var text = [UInt8](repeating: 0, count: times.count * JSONWriter.maxNumberBytes)
        var ends: [UInt32] = []
        ends.reserveCapacity(times.count)
        let count = text.withUnsafeMutableBufferPointer { buffer in
            JSONWriter.withNumberTable { table -> Int in
                var i = 0
                for time in times {
                    i &+= JSONWriter.write(time, to: buffer.baseAddress! + i, table: table)
                    ends.append(UInt32(i))
                }
                return i
            }
        }
        text.removeSubrange(count...)
        self.text = text
        self.ends = ends
    }

    /// Frames in the grid.
    public var count: Int { ends.count }

    /// Copies frame `k`'s time text (0 ≤ k < `count`) to `p`; returns its byte count (at
    /// most `JSONWriter.maxNumberBytes`).
    @inline(__always)
    func copy(frame k: Int, to p: UnsafeMutablePointer<UInt8>) -> Int {
        ends.withUnsafeBufferPointer { ends in
            let start = k == 0 ? 0 : Int(ends[k &- 1])
            let length = Int(ends[k]) &- start
            text.withUnsafeBufferPointer { p.update(from: $0.baseAddress! + start, count: length) }
            return length
        }
    }

    // MARK: - The shared grids

    private static let lock = NSLock()
    nonisolated(unsafe) private static var entries: [FrameTimeTexts] = []
    nonisolated(unsafe) private static var next = 0

    /// The texts of `timeline`'s frame times (`Timeline.time(ofFrame:)`), shared with every
    /// other timeline on the same grid; nil for a grid of more than `maxFrames` frames.
    public static func texts(for timeline: Timeline) -> FrameTimeTexts? {
        let frames = timeline.frameCount
        guard frames > 0, frames <= maxFrames else { return nil }
        let times = (0..<frames).map { timeline.time(ofFrame: $0) }
        if let found = lock.withLock({ entries.first { same($0.times, times) } }) { return found }
        // Made outside the lock (formatting 4,096 times takes a while); two threads that make
        // the same grid at once both keep theirs, the first one filed is shared from then on.
        let made = FrameTimeTexts(times: times)
        return lock.withLock {
            if let found = entries.first(where: { same($0.times, times) }) { return found }
            if entries.count < maxEntries {
                entries.append(made)
            } else {
                entries[next] = made
                next = (next + 1) % maxEntries
            }
            return made
        }
    }

    /// Bit-for-bit equal lists (`0` and `-0` differ: so do their texts).
    private static func same(_ a: [Double], _ b: [Double]) -> Bool {
        guard a.count == b.count else { return false }
        for k in 0..<a.count where a[k].bitPattern != b[k].bitPattern { return false }
        return true
    }

    /// Forgets every grid (tests).
    static func removeAll() {
        lock.withLock {
            entries.removeAll()
            next = 0
        }
    }
}
