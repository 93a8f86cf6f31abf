/// Sampling a whole track at once (the `json` format's frame grid, issue #14).
///
/// `Track.value(at:)` answers one time: it searches the segments, copies the segment's curve
/// out of its box (a `TweenCurve` holds two `Easing`s, so the copy retains and releases) and
/// works out the timing afresh. `values(at:into:cache:)` walks increasing times with a
/// cursor, segment by segment: each segment's curve is taken out once for its whole run of
/// times and evaluated in place, and a tween's eased progress, which depends only on its
/// start, timing and easings, is shared by every track that has the same ones (a tween with
/// many properties) through `TweenProgressCache`. The values are those of `value(at:)`, bit
/// for bit: the same functions on the same operands, in the same order.
///
/// Cost (callgrind, release, `make bench-instructions`'s documents, 2026-11-25): with the fused
/// encoder (`TimelineEncoder.writeFrameGrid`) the 100-track × 601-frame request went from
/// 1,788 to 681 instructions a sample, the small document (one tween, 61 samples) from
/// 580,674 to 536,446 a request. Sampling itself is now the combining loop in `evaluate`
/// (about 30 instructions a sample, the first track of a group paying its timing and easing
/// once per frame); what is left is writing the numbers.
extension Track {
    /// Writes the track's value at each of `times` to `out` (room for `times.count`).
    /// Times should be non-decreasing (the cursor only moves forward); a time smaller than
    /// the one before restarts the cursor with a search, so any order gives the right values.
    /// `cache` must only ever be used with this same `times` buffer.
    public func values(at times: UnsafeBufferPointer<Double>, into out: UnsafeMutablePointer<Double>,
                       cache: inout TweenProgressCache) {
        let n = times.count
        guard n > 0 else { return }
        let ascending = cache.ascending(times)
        segments.withUnsafeBufferPointer { segments in
            var k = 0
            var index = -1 // the segment in force at times[k], -1 before the first
            while k < n {
                let t = times[k]
                if k > 0, t < times[k - 1] { index = segmentIndex(at: t) ?? -1 }
                let limit = t + timeEpsilon
                while index + 1 < segments.count, segments[index + 1].start <= limit { index += 1 }
                // The run: the following times, while they increase and the next segment has not started.
                let next = index + 1 < segments.count ? segments[index + 1].start : .infinity
                var end = k + 1
                if ascending {
                    // The usual frame grid: only the next segment's start ends the run.
                    if next == .infinity {
                        end = n
                    } else {
                        while end < n, !(next <= times[end] + timeEpsilon) { end += 1 }
                    }
                } else {
                    while end < n, times[end] >= times[end - 1], !(next <= times[end] + timeEpsilon) { end += 1 }
                }
                if index < 0 {
                    for j in k..<end { out[j] = base }
                } else {
                    Self.evaluate(segments[index], times: times, k..<end, into: out, cache: &cache)
                }
                k = end
            }
        }
        for item in additive {
            for j in 0..<n where item.segment.start <= times[j] + timeEpsilon {
                out[j] += item.weight * (item.segment.value(at: times[j]) - item.from)
            }
        }
        if wrapsDegrees {
            for j in 0..<n { out[j] = Colour.normalisedHue(out[j]) }
        }
    }

    /// `segment.value(at: times[j])` for j in `run`, the curve taken out of its box once.
    @inline(__always)
    static func evaluate(_ segment: Segment, times: UnsafeBufferPointer<Double>, _ run: Range<Int>,
                         into out: UnsafeMutablePointer<Double>, cache: inout TweenProgressCache) {
        let start = segment.start
        switch segment.curve {
        case .tween(let curve):
            if let entry = cache.entry(of: curve, start: start, times: times, run) {
                let progress = cache.entries[entry].progress
                let (from, to) = (curve.from, curve.to)
                if !progress.anyBackward {
                    // Forward only (no reversed cycle in the run): one multiply-add a time.
                    // With the run found without comparing times (`ascending`), the 100-track
                    // request went from 31 to 7 instructions a sample in this function
                    // (callgrind, release; 468 → 444 for the whole request).
                    let change = to - from
                    progress.eased.withUnsafeBufferPointer { eased in
                        for j in run {
                            let e = eased[j &- run.lowerBound]
                            out[j] = e == 1 ? to : from + change * e
                        }
                    }
                    break
                }
                progress.backward.withUnsafeBufferPointer { backward in
                    progress.eased.withUnsafeBufferPointer { eased in
                        for j in run {
                            let e = eased[j - run.lowerBound]
                            out[j] = backward[j - run.lowerBound] ? (e == 1 ? from : to + (from - to) * e)
                                : (e == 1 ? to : from + (to - from) * e)
                        }
                    }
                }
            } else {
                for j in run { out[j] = curve.value(at: times[j] - start) }
            }
        case .dynamic(let curve):
            for j in run { out[j] = curve.value(at: times[j] - start) }
        case .path(let curve):
            for j in run { out[j] = curve.value(at: times[j] - start) }
        case .keyframes(let curve):
            for j in run { out[j] = curve.value(at: times[j] - start) }
        }
        if let bounds = segment.bounds {
            for j in run { out[j] = bounds.apply(out[j]) }
        }
    }
}

/// Tween progress shared between the tracks of one sampling pass (`Track.values(at:into:cache:)`):
/// for a run of sample times, each time's eased progress and direction
/// (`TweenCurve.progress(at:)`), keyed by everything it depends on: the segment's start, its
/// timing and easings, and the run. Only valid for one buffer of times.
///
/// Bounded: at most `maxEntries` runs of at most `maxRun` times each (about 2 MB); a run
/// that does not fit is evaluated without it.
public struct TweenProgressCache {
    static let maxEntries = 4
    static let maxRun = 1 << 16

    struct Entry {
        var start: Double
        var timing: CycleTiming
        var easing: Easing
        var reverseEasing: Easing
        var run: Range<Int>
        var progress: Progress
    }

    /// The eased progress and direction at each time of a run.
    struct Progress {
        var backward: [Bool]
        var eased: [Double]
        /// Whether any of `backward` is true.
        var anyBackward: Bool
    }

    /// Whether the times of the buffer this cache serves never decrease, found on first use.
    private var timesAscending: Bool?

    /// Whether `times` (the buffer this cache serves) never decreases: checked once for every
    /// track sampled over it, rather than at every time of every track.
    @inline(__always)
    mutating func ascending(_ times: UnsafeBufferPointer<Double>) -> Bool {
        if let timesAscending { return timesAscending }
        var ascending = true
        var k = 1
        while k < times.count, ascending { ascending = times[k] >= times[k &- 1]; k &+= 1 }
        timesAscending = ascending
        return ascending
    }

    var entries: [Entry] = []
    var enabled: Bool
    /// The entry replaced next when the cache is full.
    var victim = 0

    /// A cache that shares nothing when `enabled` is false (one track: nothing to share with).
    public init(enabled: Bool = true) { self.enabled = enabled }

    /// The index in `entries` of the progress of `curve` (starting at `start`) over
    /// `times[run]`, computed now when no entry has it; nil when disabled or the run is too
    /// long to keep. An index rather than the entry: returning (and matching) entries by
    /// value copied each one, its easings included (about 1,300 instructions a track).
    @inline(__always)
    mutating func entry(of curve: TweenCurve, start: Double, times: UnsafeBufferPointer<Double>,
                        _ run: Range<Int>) -> Int? {
        guard enabled, run.count <= Self.maxRun else { return nil }
        for index in entries.indices where entries[index].run == run && entries[index].start == start
            && entries[index].timing == curve.timing && entries[index].easing == curve.easing
            && entries[index].reverseEasing == curve.reverseEasing {
            return index
        }
        var backward = [Bool](repeating: false, count: run.count)
        var eased = [Double](repeating: 0, count: run.count)
        for j in run {
            (backward[j - run.lowerBound], eased[j - run.lowerBound]) = curve.progress(at: times[j] - start)
        }
        let entry = Entry(start: start, timing: curve.timing, easing: curve.easing, reverseEasing: curve.reverseEasing,
                          run: run, progress: Progress(backward: backward, eased: eased, anyBackward: backward.contains(true)))
        if entries.count < Self.maxEntries {
            entries.append(entry)
            return entries.count - 1
        }
        let index = victim
        entries[index] = entry
        victim = (victim + 1) % Self.maxEntries
        return index
    }
}
