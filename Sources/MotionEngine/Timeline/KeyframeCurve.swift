/// One leg through keyframes: `values` placed at `offsets` (fractions of the leg, 0 … 1,
/// non-decreasing), segment i eased by `easings[i]`:
/// `v_i + (v_{i+1} − v_i)·E_i((u − o_i)/(o_{i+1} − o_i))` for `o_i ≤ u < o_{i+1}`. At equal
/// offsets the value jumps (right-continuous: the later keyframe wins). With two keyframes it
/// is exactly a tween leg.
public struct KeyframeLeg: Sendable {
    public var values: [Double]
    public var offsets: [Double]
    public var easings: [Easing]

    public init(values: [Double], offsets: [Double], easings: [Easing]) {
        precondition(values.count >= 2 && offsets.count == values.count && easings.count == values.count - 1)
        self.values = values
        self.offsets = offsets
        self.easings = easings
    }

    /// The same keyframes travelled from the last to the first; each segment eased by
    /// `easing` when given, else by its own easing in the direction of travel.
    public func reversed(easing: Easing?) -> KeyframeLeg {
        let timing = Self.reversedTiming(offsets: offsets, easings: easings, easing: easing)
        return KeyframeLeg(values: values.reversed(), offsets: timing.offsets, easings: timing.easings)
    }

    /// The offsets and easings of `reversed(easing:)`, which every leaf of one property
    /// shares: made once a property rather than once a leaf (a property of 450 numbers
    /// through 1,000 keyframes spent 57 million instructions reversing the same arrays 450
    /// times; callgrind, release).
    static func reversedTiming(offsets: [Double], easings: [Easing], easing: Easing?) -> (offsets: [Double], easings: [Easing]) {
        (offsets.reversed().map { 1 - $0 }, easing.map { [Easing](repeating: $0, count: easings.count) } ?? easings.reversed())
    }

    /// The value at progress u ∈ [0, 1).
    @inline(__always)
    public func value(_ u: Double) -> Double {
        let last = values.count - 1
        // The last keyframe whose offset is ≤ u (binary search), as a segment start.
        var low = 0, high = offsets.count
        while low < high {
            let mid = (low + high) / 2
            if offsets[mid] <= u { low = mid + 1 } else { high = mid }
        }
        let index = Swift.min(Swift.max(low - 1, 0), last - 1)
        let span = offsets[index + 1] - offsets[index]
        guard span > 0 else { return values[index + 1] }
        let e = easings[index]((u - offsets[index]) / span)
        return e == 1 ? values[index + 1] : values[index] + (values[index + 1] - values[index]) * e
    }

    /// Where the leg ends: the last keyframe, or for a last segment eased by a `linear()`
    /// that ends off 1, `v + (last − v)·E(1)` (docs/easings.md).
    public var end: Double {
        let last = values.count - 1
        guard offsets[last - 1] < offsets[last] else { return values[last] }
        return TweenCurve.end(values[last - 1], values[last], easings[last - 1])
    }
}

/// A tween property with keyframes on one scalar: the forward leg through them, the reverse
/// leg back, cycled by the node's timing (docs/timing-and-events.md).
public struct KeyframeCurve: Sendable {
    public var forward: KeyframeLeg
    public var reverse: KeyframeLeg
    public var timing: CycleTiming

    public init(forward: KeyframeLeg, reverse: KeyframeLeg, timing: CycleTiming) {
        self.forward = forward
        self.reverse = reverse
        self.timing = timing
    }

    public func value(at tau: Double) -> Double {
        switch timing.phase(at: tau) {
        case .forward(let u): return forward.value(u)
        case .reverse(let u): return reverse.value(u)
        case .cycleEnd: return timing.reverses ? reverse.end : forward.end
        }
    }
}
