/// A spring through successive targets (spring keyframes, docs/authoring.md) on one scalar: segment i
/// is the spring from where segment i − 1 was when it turned, with the velocity it had, toward
/// target i; it turns after its duration, or when the property's leaves come to rest (then
/// exactly at the target with velocity 0). From `settle` on the value is the last target.
public struct SpringChain: Sendable {
    public struct Segment: Sendable {
        /// Seconds from the chain's start.
        public var start: Double
        public var kernel: SpringKernel
    }

    public var segments: [Segment]
    /// When the last segment rests (∞ when it never does).
    public var settle: Double

    public var target: Double { segments[segments.count - 1].kernel.target }

    @inline(__always)
    func segment(at t: Double) -> Segment {
        var low = 0, high = segments.count
        while low < high {
            let mid = (low + high) / 2
            if segments[mid].start <= t { low = mid + 1 } else { high = mid }
        }
        return segments[Swift.max(0, low - 1)]
    }

    public func value(at t: Double) -> Double {
        if t >= settle { return target }
        let segment = segment(at: t)
        return segment.kernel.value(at: t - segment.start)
    }

    public func velocity(at t: Double) -> Double {
        if t >= settle { return 0 }
        let segment = segment(at: t)
        return segment.kernel.velocity(at: t - segment.start)
    }

    /// The chains of one property's leaves, which turn together: `values[leaf][k]` is keyframe
    /// k of a leaf (k = 0 the start), `velocities[leaf]` its initial velocity, `durations[k − 1]`
    /// the time spent heading for keyframe k (nil: until every leaf rests; the last segment
    /// always runs to rest, and lasts at least its duration when one is given). Returns the
    /// chains and the time the last segment rests (∞ for an undamped spring that never does).
    /// `cancellable`: looks for the thread's cancellation before each target and while
    /// settling (`SpringSettling.settle`), throwing `.cancelled` when it finds one. `memo`:
    /// rest times found earlier in the same computation (`SpringSettling.Memo`).
    public static func build(parameters: SpringParameters, values: [[Double]], velocities: [Double], durations: [Double?]?,
                             restDelta: Double, restSpeed: Double, cancellable: Bool = false,
                             memo: SpringSettling.Memo? = nil) throws(SpringSettling.Failure) -> (chains: [SpringChain], end: Double) {
        let count = values.first?.count ?? 0
        guard count >= 2, values.allSatisfy({ $0.count == count }), velocities.count == values.count else { return ([], 0) }
        let undamped = parameters.damping == 0
        let modes = SpringModes(parameters)
        var positions = values.map { $0[0] }
        var speeds = velocities
        var segments = [[Segment]](repeating: [], count: values.count)
        var time = 0.0
        for k in 1..<count {
            // Before each target: 200 elements through 300 spring keyframes took 145 ms to
            // build (release), of which a cancelled computation now runs at most one target.
            if cancellable, Cancellation.isRequested { throw .cancelled }
            let kernels = values.indices.map {
                SpringKernel(modes: modes, parameters: parameters, from: positions[$0], to: values[$0][k], velocity: speeds[$0])
            }
            for leaf in values.indices { segments[leaf].append(Segment(start: time, kernel: kernels[leaf])) }
            let duration = durations.flatMap { $0[k - 1] }
            if k < count - 1, let duration {
                for leaf in values.indices {
                    positions[leaf] = kernels[leaf].value(at: duration)
                    speeds[leaf] = kernels[leaf].velocity(at: duration)
                }
                time += duration
                continue
            }
            let rest: Double
            do {
                rest = try SpringSettling.settle(kernels, restDelta: restDelta, restSpeed: restSpeed, cancellable: cancellable,
                                                 memo: memo)
            } catch {
                // An undamped spring stays on this segment for ever.
                guard undamped, case .neverSettles = error else { throw error }
                return (segments.map { SpringChain(segments: $0, settle: .infinity) }, .infinity)
            }
            if k == count - 1 {
                let end = time + Swift.max(rest, duration ?? 0)
                return (segments.map { SpringChain(segments: $0, settle: time + rest) }, end)
            }
            for leaf in values.indices {
                positions[leaf] = values[leaf][k]
                speeds[leaf] = 0
            }
            time += rest
        }
        return (segments.map { SpringChain(segments: $0, settle: time) }, time)
    }
}
