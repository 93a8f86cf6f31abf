/// A physics, spring or decay motion on one scalar: legs whose lengths come from the
/// kernels' rest times (the forward leg, and the reverse leg when reversing), cycled like any
/// node's timing. Each leaf holds its own rest value until the node's leg ends, so all the
/// leaves of a node hand over to the next leg together.
public struct DynamicCurve: Sendable {
    public enum Kernel: Sendable {
        case physics(PhysicsKernel)
        /// Exactly the target from `settle` on (rest time, or first crossing with stopAtTarget).
        case spring(SpringKernel, settle: Double)
        case decay(DecayKernel)
        /// Spring keyframes: successive targets, turning with position and velocity.
        case springChain(SpringChain)

        @inline(__always)
        public func value(at t: Double) -> Double {
            switch self {
            case .physics(let kernel): return kernel.value(at: t)
            case .spring(let kernel, let settle): return t >= settle ? kernel.target : kernel.value(at: t)
            case .decay(let kernel): return kernel.value(at: t)
            case .springChain(let chain): return chain.value(at: t)
            }
        }

        public func velocity(at t: Double) -> Double {
            switch self {
            case .physics(let kernel): return kernel.velocity(at: t)
            case .spring(let kernel, let settle): return t >= settle ? 0 : kernel.velocity(at: t)
            case .decay(let kernel): return kernel.velocity(at: t)
            case .springChain(let chain): return chain.velocity(at: t)
            }
        }

        public var initialValue: Double { value(at: 0) }
    }

    public struct Leg: Sendable {
        public var kernel: Kernel
        /// The node's leg length (s); infinite for a spring that never rests.
        public var duration: Double
    }

    public var legs: [Leg]
    public var repetition: Repetition
    public var repeatDelay: Double

    public init(legs: [Leg], repetition: Repetition = .count(0), repeatDelay: Double = 0) {
        self.legs = legs
        self.repetition = repetition
        self.repeatDelay = repeatDelay
    }

    public var cycleLength: Double { legs.reduce(0) { $0 + $1.duration } }

    /// From the start to the end of the last cycle; nil when it never ends.
    public var activeDuration: Double? {
        let cycle = cycleLength
        guard cycle.isFinite, case .count(let n) = repetition else { return nil }
        return Double(n + 1) * cycle + Double(n) * repeatDelay
    }

    /// The leg and the time into it at local time τ (right-continuous; holds the end).
    @inline(__always)
    func locate(_ tau: Double) -> (leg: Leg, time: Double) {
        let (index, time) = legIndex(at: tau)
        return (legs[index], time)
    }

    /// As `locate(_:)`, the leg's index: sampling reads the leg in place rather than copying
    /// it (its kernel) out of the array on every sample (figures in `Track.value(at:)`).
    @inline(__always)
    func legIndex(at tau: Double) -> (index: Int, time: Double) {
        let lastIndex = legs.count - 1
        let lastDuration = legs[lastIndex].duration
        if let total = activeDuration, tau >= total - timeEpsilon { return (lastIndex, lastDuration) }
        let cycle = cycleLength
        let period = cycle + repeatDelay
        var within = max(0, tau)
        if period.isFinite, period > 0 {
            var index = (within / period).rounded(.down)
            if within - index * period >= period - timeEpsilon { index += 1 }
            within = max(0, within - index * period)
        }
        if within >= cycle - timeEpsilon, cycle.isFinite { return (lastIndex, lastDuration) }
        for index in legs.indices {
            let duration = legs[index].duration
            if within < duration - timeEpsilon { return (index, within) }
            within -= duration
        }
        return (lastIndex, lastDuration)
    }

    @inline(__always)
    public func value(at tau: Double) -> Double {
        let (index, time) = legIndex(at: tau)
        return legs.withUnsafeBufferPointer { $0[index].kernel.value(at: time) }
    }

    public func velocity(at tau: Double) -> Double {
        if let total = activeDuration, tau >= total - timeEpsilon { return 0 }
        let (leg, time) = locate(tau)
        return leg.kernel.velocity(at: time)
    }
}
