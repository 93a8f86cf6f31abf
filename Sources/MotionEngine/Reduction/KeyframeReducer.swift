/// A track reduced to keyframes (docs/exports.md): `times` ascending (a jump is two keyframes at one
/// time), `values` the exact values there, and for cubic interpolation `slopes`, the [in, out]
/// derivative at each keyframe in units per second. `error` is the largest deviation between
/// the interpolated keyframes and the exact curve found by the final check.
public struct ReducedTrack: Sendable, Equatable {
    public struct Slope: Sendable, Equatable {
        public var incoming: Double
        public var outgoing: Double

        public init(incoming: Double, outgoing: Double) {
            self.incoming = incoming
            self.outgoing = outgoing
        }
    }

    public var times: [Double]
    public var values: [Double]
    /// Cubic interpolation only.
    public var slopes: [Slope]?
    public var error: Double
    /// Curve evaluations spent (for the work limit and the benchmarks).
    public var evaluations: Int

    /// The interpolated value at t (the keyframes' own interpolation: linear, or cubic
    /// Hermite with `slopes`). Before the first or after the last keyframe it holds the end
    /// value; at a jump time it takes the value after the jump.
    public func value(at t: Double) -> Double {
        guard let first = times.first, t > first else { return values.first ?? 0 }
        guard t < times[times.count - 1] else { return values[values.count - 1] }
        // The last keyframe at or before t, then the segment to the next one.
        var low = 0, high = times.count
        while low < high {
            let mid = (low + high) / 2
            if times[mid] <= t { low = mid + 1 } else { high = mid }
        }
        let i = low - 1
        return KeyframeReducer.interpolate(t, times[i], values[i], slopes?[i].outgoing ?? 0,
                                           times[i + 1], values[i + 1], slopes?[i + 1].incoming ?? 0,
                                           cubic: slopes != nil)
    }
}

/// Error-bounded keyframe reduction of one scalar curve (docs/exports.md).
///
/// The method, and why: the engine evaluates any instant exactly, so no least-squares fit of
/// noisy samples is needed — keyframes sit on the exact curve and only the segments' error
/// has to be controlled. A fixed frame grid would miss what happens between frames (a
/// collision's turning point, a spring's peak), so every check evaluates the curve itself:
///
/// 1. A dense scan (`gridIntervals` equal steps plus the track's own segment starts, where
///    instant sets and overlapping motions begin) finds the jumps: where a scan step changes
///    the value by more than ε/4, bisection keeps the half with the larger change down to
///    1e-10 s; a change that survives is a discontinuity (steps easing, instant set, hue
///    wrap) and becomes two keyframes at one time with the values on either side, so jumps
///    are exact.
/// 2. Between jumps, greedy longest segments: from the last keyframe, an exponential search
///    then bisection finds the farthest end whose segment (chord, or cubic Hermite with the
///    exact one-sided derivatives as slopes) fits within 0.9·ε. Greedy "as far as it fits"
///    keeps the count within a small factor of the fewest keyframes that lie on the curve,
///    at O(log) fit tests per keyframe — cheaper and closer to minimal than top-down
///    subdivision (Ramer–Douglas–Peucker), which splits at the worst point and so places
///    keyframes where the error is largest rather than where segments end.
///    A fit test checks the scan points inside the segment and eight evenly spaced exact
///    evaluations, then refines around the worst of them with a golden-section search (the
///    deviation near a kink or peak is unimodal at that scale, so the search lands on it).
/// 3. A final, independent check evaluates every segment between the scan points (the
///    midpoints, which the fit never saw) and at sixteen even points, refined again around
///    the worst; a segment over ε (possible only for a feature narrower than the scan)
///    is split at its worst point and checked again. `error` is the largest deviation seen;
///    should it still exceed ε (a feature narrower than the time resolution, or the
///    keyframe limit reached), the reduction fails rather than break its promise.
///
/// Work is bounded: at most `Limits.maxKeyframes` keyframes and `Limits.maxEvaluations`
/// curve evaluations per track, otherwise `ReductionError` (a 422 asking for a larger ε).
public enum KeyframeReducer {
    public struct Limits: Sendable, Equatable {
        public var maxKeyframes: Int
        public var maxEvaluations: Int

        public init(maxKeyframes: Int = 10_000, maxEvaluations: Int = 1_000_000) {
            self.maxKeyframes = maxKeyframes
            self.maxEvaluations = maxEvaluations
        }

        public static let `default` = Limits()
    }

    public enum ReductionError: Error, Sendable, Equatable {
        case tooManyKeyframes(limit: Int)
        case tooManyEvaluations(limit: Int)
        /// The final check still finds a deviation over ε after splitting (a feature
        /// narrower than the time resolution): the bound cannot be promised.
        case toleranceNotMet(deviation: Double)
        /// ε is not a positive finite number.
        case invalidTolerance
    }

    /// The scan's step count for a window with `frameCount` frames: four scan steps per frame,
    /// at least 2,048 and at most 32,768.
    public static func gridIntervals(frameCount: Int) -> Int {
        min(32_768, max(2_048, 4 * max(0, frameCount - 1)))
    }

    /// Reduces a timeline track over `window`.
    public static func reduce(track: Track, in timeline: Timeline, window: TimeWindow? = nil, tolerance: Double,
                              interpolation: SimplifyOptions.Interpolation,
                              limits: Limits = .default) throws(ReductionError) -> ReducedTrack {
        var evaluations = 0
        return try reduce(track: track, in: timeline, window: window, tolerance: tolerance, interpolation: interpolation,
                          limits: limits, evaluations: &evaluations)
    }

    /// As `reduce(track:…)`, with the curve evaluations it made in `evaluations` whether it
    /// answers or throws: a reduction that fails has done its work too, and a batch charges
    /// it (100 documents each failing after up to 1,000,000 evaluations were 7.2 s of one
    /// thread that the batch's budget never saw).
    static func reduce(track: Track, in timeline: Timeline, window: TimeWindow? = nil, tolerance: Double,
                       interpolation: SimplifyOptions.Interpolation, limits: Limits,
                       evaluations: inout Int) throws(ReductionError) -> ReducedTrack {
        var hints = track.segments.map(\.start)
        hints.append(contentsOf: track.additive.map(\.segment.start))
        return try reduce({ track.value(at: $0) }, window: window ?? timeline.window, tolerance: tolerance,
                          interpolation: interpolation, hints: hints, preferred: timeline.events.prefix(100_000).map(\.time) + hints,
                          gridIntervals: gridIntervals(frameCount: timeline.frameCount), limits: limits, evaluations: &evaluations)
    }

    /// Reduces any curve `f` over `window`. `hints` are times where a discontinuity may start
    /// (scanned in addition to the even grid); `preferred` are times where a keyframe is
    /// placed when one fits there in the second half of a segment (events: a motion's end or
    /// a collision is a kink, and a keyframe exactly on it reads better and fits better).
    public static func reduce(_ f: (Double) -> Double, window: TimeWindow, tolerance: Double,
                              interpolation: SimplifyOptions.Interpolation, hints: [Double] = [], preferred: [Double] = [],
                              gridIntervals: Int = 2_048, limits: Limits = .default) throws(ReductionError) -> ReducedTrack {
        var evaluations = 0
        return try reduce(f, window: window, tolerance: tolerance, interpolation: interpolation, hints: hints, preferred: preferred,
                          gridIntervals: gridIntervals, limits: limits, evaluations: &evaluations)
    }

    /// As `reduce(_:…)`, with the evaluations of `f` it made in `evaluations`, answering or not.
    static func reduce(_ f: (Double) -> Double, window: TimeWindow, tolerance: Double,
                       interpolation: SimplifyOptions.Interpolation, hints: [Double], preferred: [Double],
                       gridIntervals: Int, limits: Limits, evaluations: inout Int) throws(ReductionError) -> ReducedTrack {
        evaluations = 0
        guard tolerance > 0, tolerance.isFinite else { throw .invalidTolerance }
        let result: Result<ReducedTrack, ReductionError> = withoutActuallyEscaping(f) { f in
            var run = Run(f: f, epsilon: tolerance, cubic: interpolation == .cubic, limits: limits)
            run.preferred = preferred.filter { $0 > window.start && $0 < window.end }.sorted()
            defer { evaluations = run.evaluations }
            do {
                return .success(try run.reduce(window: window, hints: hints, gridIntervals: max(1, gridIntervals)))
            } catch let error as ReductionError {
                return .failure(error)
            } catch {
                return .failure(.tooManyEvaluations(limit: limits.maxEvaluations))
            }
        }
        return try result.get()
    }

    /// Linear, or cubic Hermite with slopes m0 (out of t0) and m1 (into t1).
    @inline(__always)
    static func interpolate(_ t: Double, _ t0: Double, _ v0: Double, _ m0: Double,
                            _ t1: Double, _ v1: Double, _ m1: Double, cubic: Bool) -> Double {
        let h = t1 - t0
        guard h > 0 else { return v1 }
        let u = (t - t0) / h
        guard cubic else { return v0 + (v1 - v0) * u }
        let u2 = u * u, u3 = u2 * u
        return (2 * u3 - 3 * u2 + 1) * v0 + (u3 - 2 * u2 + u) * h * m0 + (-2 * u3 + 3 * u2) * v1 + (u3 - u2) * h * m1
    }

    /// One keyframe while reducing.
    struct Key {
        var t: Double
        var v: Double
        var slopeIn: Double
        var slopeOut: Double
    }

    struct Run {
        let f: (Double) -> Double
        let epsilon: Double
        let cubic: Bool
        let limits: Limits
        var evaluations = 0
        var exhausted = false
        /// The scan: times and exact values.
        var gridT: [Double] = []
        var gridV: [Double] = []
        /// Sorted times where a keyframe is placed when it fits (`reduce(_:…preferred:)`).
        var preferred: [Double] = []

        init(f: @escaping (Double) -> Double, epsilon: Double, cubic: Bool, limits: Limits) {
            self.f = f
            self.epsilon = epsilon
            self.cubic = cubic
            self.limits = limits
        }

        /// Smallest time step looked at (jump location, search resolution).
        static let resolution = 1e-10
        /// How far from a jump's written time the curve may still stand on the other side of
        /// it (`locateJump`: the bracket's width, and `timeEpsilon` after it): instants the
        /// segments on either side of the jump are not held to.
        static let jumpInstant = timeEpsilon + resolution

        mutating func eval(_ t: Double) -> Double {
            evaluations += 1
            if evaluations > limits.maxEvaluations { exhausted = true }
            return f(t)
        }

        mutating func reduce(window: TimeWindow, hints: [Double], gridIntervals: Int) throws(ReductionError) -> ReducedTrack {
            let a = window.start, b = window.end
            guard b > a else {
                let v = eval(a)
                return ReducedTrack(times: [a], values: [v], slopes: cubic ? [.init(incoming: 0, outgoing: 0)] : nil,
                                    error: 0, evaluations: evaluations)
            }
            // 1. The scan.
            var times = (0...gridIntervals).map { k in k == gridIntervals ? b : a + (b - a) * Double(k) / Double(gridIntervals) }
            times.append(contentsOf: hints.filter { $0 > a && $0 < b && $0.isFinite }.prefix(limits.maxEvaluations))
            times.sort()
            gridT.reserveCapacity(times.count)
            for t in times where gridT.last.map({ t > $0 }) ?? true {
                gridT.append(t)
                gridV.append(eval(t))
            }
            if exhausted { throw .tooManyEvaluations(limit: limits.maxEvaluations) }

            // Jumps: (time, value before, value after).
            var jumps: [(t: Double, before: Double, after: Double)] = []
            for i in 0..<(gridT.count - 1) where abs(gridV[i + 1] - gridV[i]) > epsilon / 4 {
                if var jump = locateJump(gridT[i], gridV[i], gridT[i + 1], gridV[i + 1]) {
                    // In order and inside the window (a rounded time may pass the scan step).
                    jump.t = min(b, max(jump.t, jumps.last?.t ?? a))
                    jumps.append(jump)
                }
                if exhausted { throw .tooManyEvaluations(limit: limits.maxEvaluations) }
            }

            // 2. Greedy segments on each continuous piece.
            var keys: [Key] = []
            var pieceStart = (t: a, v: gridV[0])
            for index in 0...jumps.count {
                let end = index < jumps.count ? (t: jumps[index].t, v: jumps[index].before) : (t: b, v: gridV[gridV.count - 1])
                try fitPiece(from: pieceStart, to: end, startsAtJump: index > 0, endsAtJump: index < jumps.count, into: &keys)
                if index < jumps.count { pieceStart = (t: jumps[index].t, v: jumps[index].after) }
            }

            // 3. The independent check, splitting a segment that exceeds ε.
            var error = 0.0
            var i = 0
            while i + 1 < keys.count {
                if exhausted { throw .tooManyEvaluations(limit: limits.maxEvaluations) }
                let (k0, k1) = (keys[i], keys[i + 1])
                guard k1.t > k0.t else { i += 1; continue }
                // A jump is written at a round time within its bracket or up to `timeEpsilon`
                // after it (`locateJump`): the instants that close to it are the jump's own,
                // where the curve may stand on either side. Checked there, `steps(3)` over
                // 10 s (its jump at 3.33333333333333, written at 3.3333333333) was a whole
                // step off and refused.
                let from = i > 0 && keys[i - 1].t == k0.t ? k0.t + Self.jumpInstant : k0.t
                let until = i + 2 < keys.count && keys[i + 2].t == k1.t ? k1.t - Self.jumpInstant : k1.t
                guard until > from else { i += 1; continue }
                let (worstT, deviation) = verify(k0, k1, from: from, until: until)
                if deviation > epsilon, worstT > k0.t, worstT < k1.t, keys.count < limits.maxKeyframes {
                    let v = eval(worstT)
                    let m = cubic ? centralSlope(at: worstT, within: k0.t, k1.t) : 0
                    keys.insert(Key(t: worstT, v: v, slopeIn: m, slopeOut: m), at: i + 1)
                    continue
                }
                error = max(error, deviation)
                i += 1
            }
            if keys.count > limits.maxKeyframes { throw .tooManyKeyframes(limit: limits.maxKeyframes) }
            if exhausted { throw .tooManyEvaluations(limit: limits.maxEvaluations) }
            if error > epsilon { throw .toleranceNotMet(deviation: error) }
            return ReducedTrack(times: keys.map(\.t), values: keys.map(\.v),
                                slopes: cubic ? keys.map { .init(incoming: $0.slopeIn, outgoing: $0.slopeOut) } : nil,
                                error: error, evaluations: evaluations)
        }

        /// Bisects [t0, t1] toward the larger change; a change over ε/4 that survives down to
        /// `resolution` is a jump. Its time is the shortest decimal in the final interval (or
        /// within `timeEpsilon` after it).
        mutating func locateJump(_ t0: Double, _ v0: Double, _ t1: Double, _ v1: Double) -> (t: Double, before: Double, after: Double)? {
            var (l, vl, r, vr) = (t0, v0, t1, v1)
            while r - l > Self.resolution, !exhausted {
                let m = l + (r - l) / 2
                guard m > l, m < r else { break }
                let vm = eval(m)
                if abs(vm - vl) >= abs(vr - vm) { (r, vr) = (m, vm) } else { (l, vl) = (m, vm) }
                if abs(vr - vl) <= epsilon / 4 { return nil }
            }
            guard abs(vr - vl) > epsilon / 4 else { return nil }
            var time = r
            for digits in 0...12 {
                let scale = pow10(digits)
                let q = (r * scale).rounded() / scale
                // The engine treats instants within `timeEpsilon` as one (a motion ends, a
                // segment starts, 1e-9 s early), so a round time that close stands for the jump.
                if q > l, q <= r + timeEpsilon { time = q; break }
            }
            return (time, vl, vr)
        }

        func pow10(_ n: Int) -> Double {
            var x = 1.0
            for _ in 0..<n { x *= 10 }
            return x
        }

        /// Derivative step: small against the piece, at least well above the time resolution.
        func slopeStep(_ length: Double) -> Double { min(1e-5, max(length / 4, 8 * Self.resolution)) }

        /// The derivative at t from the right, extrapolated from the quadratic through three
        /// points after it: the value at t itself is left out, so a keyframe after a jump or at
        /// a motion's final snap to rest gets the slope of the curve it starts, not of the snap.
        mutating func rightSlope(at t: Double, pieceLength: Double) -> Double {
            let h = slopeStep(pieceLength) / 2
            return (-5 * eval(t + h) + 8 * eval(t + 2 * h) - 3 * eval(t + 3 * h)) / (2 * h)
        }

        /// The derivative at t from the left, from three points before it.
        mutating func leftSlope(at t: Double, pieceLength: Double) -> Double {
            let h = slopeStep(pieceLength) / 2
            return (5 * eval(t - h) - 8 * eval(t - 2 * h) + 3 * eval(t - 3 * h)) / (2 * h)
        }

        mutating func centralSlope(at t: Double, within lower: Double, _ upper: Double) -> Double {
            let h = min(1e-5, (t - lower) / 2, (upper - t) / 2)
            guard h > 0 else { return 0 }
            return (eval(t + h) - eval(t - h)) / (2 * h)
        }

        /// Greedy longest segments from `start` to `end` (no jump between them; `startsAtJump`:
        /// `start` is a jump's value after it, `endsAtJump`: `end` one's value before it, each
        /// at the jump's written time).
        mutating func fitPiece(from start: (t: Double, v: Double), to end: (t: Double, v: Double), startsAtJump: Bool, endsAtJump: Bool,
                               into keys: inout [Key]) throws(ReductionError) {
            let length = end.t - start.t
            var current = Key(t: start.t, v: start.v, slopeIn: 0, slopeOut: 0)
            if cubic, length > 0 {
                let m = rightSlope(at: start.t, pieceLength: length)
                current.slopeIn = m
                current.slopeOut = m
                // A keyframe right after a jump: its incoming slope is the one before the jump.
                if let last = keys.last, last.t == start.t { current.slopeIn = last.slopeIn }
            }
            // A jump's first keyframe is already the end of the previous piece.
            keys.append(current)
            guard length > 0 else { return }
            var last = Key(t: end.t, v: end.v, slopeIn: 0, slopeOut: 0)
            if cubic {
                let m = leftSlope(at: end.t, pieceLength: length)
                last.slopeIn = m
                last.slopeOut = m
            }
            var step = length / 16
            // Segments next to a jump are held to the curve outside the jump's own instants.
            let firstFrom = startsAtJump ? start.t + Self.jumpInstant : start.t
            let lastUntil = endsAtJump ? end.t - Self.jumpInstant : end.t
            func from(_ key: Key) -> Double { key.t == start.t ? firstFrom : key.t }
            while current.t < end.t {
                if exhausted { throw .tooManyEvaluations(limit: limits.maxEvaluations) }
                if keys.count >= limits.maxKeyframes { throw .tooManyKeyframes(limit: limits.maxKeyframes) }
                if lastUntil <= from(current) || fits(current, last, from: from(current), until: lastUntil) {
                    break
                }
                // Exponential search for a bracket [good, bad], then bisection.
                var good = 0.0, bad = end.t - current.t
                var trial = min(step, bad / 2)
                var goodKey: Key?
                // The smallest step that moves: the resolution, or a few ulps far from 0.
                let smallest = max(Self.resolution, 4 * current.t.magnitude.ulp)
                while trial > smallest, !exhausted {
                    let key = makeKey(current.t + trial, piece: (start.t, end.t))
                    if fits(current, key, from: from(current), until: key.t) {
                        good = trial
                        goodKey = key
                        if trial * 2 >= bad { break }
                        trial *= 2
                        if goodKey != nil, trial >= bad { break }
                    } else {
                        bad = trial
                        if goodKey != nil { break }
                        trial /= 2
                    }
                }
                if goodKey != nil {
                    // Bisect to 1/64 of the bracket.
                    let precision = (bad - good) / 64
                    while bad - good > max(precision, smallest), !exhausted {
                        let mid = good + (bad - good) / 2
                        let key = makeKey(current.t + mid, piece: (start.t, end.t))
                        if fits(current, key, from: from(current), until: key.t) { good = mid; goodKey = key } else { bad = mid }
                    }
                }
                // A preferred time in the segment's second half, if the segment fits up to it.
                if let good = goodKey, let p = lastPreferred(in: current.t + (good.t - current.t) / 2, good.t), p < good.t {
                    let key = makeKey(p, piece: (start.t, end.t))
                    if fits(current, key, from: from(current), until: key.t) { goodKey = key }
                }
                // No extension fits even at the time resolution: a feature narrower than the
                // scan; take the smallest step (the final check reports the deviation).
                let fallback = current.t + max(trial, smallest)
                if goodKey == nil, fallback >= end.t { break }
                let next = goodKey ?? makeKey(fallback, piece: (start.t, end.t))
                guard next.t > current.t, next.t < end.t else { break }
                step = next.t - current.t
                keys.append(next)
                current = next
            }
            keys.append(last)
        }

        /// The last preferred time in [lower, upper], if any.
        func lastPreferred(in lower: Double, _ upper: Double) -> Double? {
            var low = 0, high = preferred.count
            while low < high {
                let mid = (low + high) / 2
                if preferred[mid] <= upper { low = mid + 1 } else { high = mid }
            }
            guard low > 0, preferred[low - 1] >= lower else { return nil }
            return preferred[low - 1]
        }

        /// A keyframe on the curve at t, with its slope (cubic) from either side.
        mutating func makeKey(_ t: Double, piece: (Double, Double)) -> Key {
            let v = eval(t)
            guard cubic else { return Key(t: t, v: v, slopeIn: 0, slopeOut: 0) }
            let m = centralSlope(at: t, within: piece.0, piece.1)
            return Key(t: t, v: v, slopeIn: m, slopeOut: m)
        }

        @inline(__always)
        func deviation(_ t: Double, _ value: Double, _ k0: Key, _ k1: Key) -> Double {
            abs(value - KeyframeReducer.interpolate(t, k0.t, k0.v, k0.slopeOut, k1.t, k1.v, k1.slopeIn, cubic: cubic))
        }

        /// The scan indices strictly inside (t0, t1).
        func gridRange(_ t0: Double, _ t1: Double) -> Range<Int> {
            func firstAbove(_ x: Double) -> Int {
                var low = 0, high = gridT.count
                while low < high {
                    let mid = (low + high) / 2
                    if gridT[mid] <= x { low = mid + 1 } else { high = mid }
                }
                return low
            }
            func firstAtOrAbove(_ x: Double) -> Int {
                var low = 0, high = gridT.count
                while low < high {
                    let mid = (low + high) / 2
                    if gridT[mid] < x { low = mid + 1 } else { high = mid }
                }
                return low
            }
            let lower = firstAbove(t0), upper = firstAtOrAbove(t1)
            return lower < upper ? lower..<upper : lower..<lower
        }

        /// Whether the segment k0→k1 stays within 0.9·ε at the scan points, eight even points
        /// and the refined worst point.
        /// Whether the segment k0–k1 stays within 0.9·ε of the curve on (`from`, `until`),
        /// within [k0.t, k1.t].
        mutating func fits(_ k0: Key, _ k1: Key, from: Double, until: Double) -> Bool {
            let target = 0.9 * epsilon
            guard until > from else { return true }
            var worst = (t: from, d: 0.0, spacing: (until - from) / 9)
            let range = gridRange(from, until)
            // A coarse pass first: a segment that does not fit usually misses widely, so most
            // of the search's trials end here after a few dozen scan points.
            let stride = max(1, range.count / 32)
            if stride > 1 {
                for i in Swift.stride(from: range.lowerBound, to: range.upperBound, by: stride)
                    where deviation(gridT[i], gridV[i], k0, k1) > target {
                    return false
                }
            }
            for i in range {
                let d = deviation(gridT[i], gridV[i], k0, k1)
                if d > target { return false }
                if d > worst.d {
                    let spacing = max(gridT[i] - gridT[i - 1], i + 1 < gridT.count ? gridT[i + 1] - gridT[i] : 0)
                    worst = (gridT[i], d, spacing)
                }
            }
            for j in 1...8 {
                let t = from + (until - from) * Double(j) / 9
                let d = deviation(t, eval(t), k0, k1)
                if d > target { return false }
                if d > worst.d { worst = (t, d, (until - from) / 9) }
            }
            return refine(around: worst.t, spacing: worst.spacing, k0, k1, from: from, until: until).deviation <= target
        }

        /// The final check of one segment: the scan midpoints inside it, sixteen even points,
        /// and a refinement around the worst. Returns where the deviation is largest.
        /// The largest deviation of the segment k0–k1 from the curve found on (`from`,
        /// `until`) (within [k0.t, k1.t]: outside a jump's own instants), and where.
        mutating func verify(_ k0: Key, _ k1: Key, from: Double, until: Double) -> (t: Double, deviation: Double) {
            var worst = (t: (from + until) / 2, d: 0.0, spacing: (until - from) / 17)
            let range = gridRange(from, until)
            var previous = from
            for i in range.lowerBound...range.upperBound {
                let next = i < range.upperBound ? gridT[i] : until
                let t = previous + (next - previous) / 2
                if t > from, t < until {
                    let d = deviation(t, eval(t), k0, k1)
                    if d > worst.d { worst = (t, d, next - previous) }
                }
                if i < range.upperBound, gridT[i] < until {
                    let d = deviation(gridT[i], gridV[i], k0, k1)
                    if d > worst.d { worst = (gridT[i], d, next - previous) }
                }
                previous = next
            }
            for j in 1...16 {
                let t = from + (until - from) * Double(j) / 17
                let d = deviation(t, eval(t), k0, k1)
                if d > worst.d { worst = (t, d, (until - from) / 17) }
            }
            let refined = refine(around: worst.t, spacing: worst.spacing, k0, k1, from: from, until: until)
            return refined.deviation > worst.d ? (refined.t, refined.deviation) : (worst.t, worst.d)
        }

        /// Golden-section search for the largest deviation within one spacing of `t`, inside
        /// [`from`, `until`].
        mutating func refine(around t: Double, spacing: Double, _ k0: Key, _ k1: Key, from: Double, until: Double) -> (t: Double, deviation: Double) {
            var lo = max(from, t - spacing), hi = min(until, t + spacing)
            guard hi > lo else { return (t, 0) }
            let ratio = 0.6180339887498949
            var x1 = hi - ratio * (hi - lo), x2 = lo + ratio * (hi - lo)
            var d1 = deviation(x1, eval(x1), k0, k1), d2 = deviation(x2, eval(x2), k0, k1)
            for _ in 0..<14 {
                if d1 >= d2 {
                    hi = x2; x2 = x1; d2 = d1
                    x1 = hi - ratio * (hi - lo)
                    d1 = deviation(x1, eval(x1), k0, k1)
                } else {
                    lo = x1; x1 = x2; d1 = d2
                    x2 = lo + ratio * (hi - lo)
                    d2 = deviation(x2, eval(x2), k0, k1)
                }
            }
            return d1 >= d2 ? (x1, d1) : (x2, d2)
        }
    }
}
