/// Instants closer than this (seconds) are the same instant. Sample times are computed as
/// `start + k/fps` while schedule times are sums of delays and durations; the tolerance keeps
/// a boundary from missing the sample that lands on it because of rounding in the last bit.
public let timeEpsilon = 1e-9

/// The legs and cycles of one node's timing, as a function of local time τ (seconds since
/// the node started, after its delay). docs/timing-and-events.md.
public struct CycleTiming: Sendable, Equatable {
    /// Duration of one leg, seconds (≥ 0).
    public let legDuration: Double
    public let reverses: Bool
    public let repetition: Repetition
    /// Pause between cycles, seconds.
    public let repeatDelay: Double
    /// Local time at which the play stops and holds, possibly part-way through a cycle.
    public let playLimit: Double?

    /// Forward leg, plus the reverse leg when reversing.
    public let cycleLength: Double
    /// Start of one cycle to the start of the next.
    public let period: Double
    /// Time from the start to the end of the play; nil when it never ends.
    public let activeDuration: Double?

    /// The derived lengths are worked out once here rather than on every `phase(at:)`, which
    /// runs for every sample of a tween (callgrind, the small document of
    /// `make bench-instructions`, 61 samples: 196,433 → 195,001 instructions a request. A
    /// separate path for single forward legs saved 700 more, but repeated `phase`'s arithmetic).
    public init(legDuration: Double, reverses: Bool = false, repetition: Repetition = .count(0), repeatDelay: Double = 0,
                playLimit: Double? = nil) {
        self.legDuration = legDuration
        self.reverses = reverses
        self.repetition = repetition
        self.repeatDelay = repeatDelay
        self.playLimit = playLimit
        cycleLength = reverses ? 2 * legDuration : legDuration
        period = cycleLength + repeatDelay
        let natural: Double?
        switch repetition {
        case .infinite: natural = nil
        case .count(let n): natural = Double(n + 1) * cycleLength + Double(n) * repeatDelay
        }
        activeDuration = playLimit.map { min(natural ?? $0, $0) } ?? natural
    }

    /// Where a node is at local time τ.
    public enum Phase: Sendable, Equatable {
        /// Inside the forward leg at progress u ∈ [0, 1).
        case forward(Double)
        /// Inside the reverse leg at progress u ∈ [0, 1).
        case reverse(Double)
        /// At the end of a cycle: between cycles, or done. The value is the cycle's end value.
        case cycleEnd
    }

    /// The phase at local time τ. Right-continuous: at a boundary the leg that begins wins,
    /// except at the very end, which holds the final value.
    public func phase(at tau: Double) -> Phase {
        if let playLimit, tau >= playLimit - timeEpsilon, activeDuration.map({ playLimit < $0 + timeEpsilon }) ?? true {
            return phaseEnding(at: playLimit)
        }
        if let total = activeDuration, tau >= total - timeEpsilon { return .cycleEnd }
        guard period > 0 else { return .cycleEnd }
        let tau = max(0, tau)
        var cycle = (tau / period).rounded(.down)
        // Snap to the next cycle when rounding left τ a hair before its start.
        if tau - cycle * period >= period - timeEpsilon { cycle += 1 }
        let within = max(0, tau - cycle * period)
        if within >= cycleLength - timeEpsilon { return .cycleEnd }
        if within < legDuration - timeEpsilon {
            return .forward(within / legDuration)
        }
        return .reverse(min(1, max(0, (within - legDuration) / legDuration)))
    }

    /// The phase as a play that stops at τ sees it: at a boundary, the leg that ends.
    private func phaseEnding(at tau: Double) -> Phase {
        guard period > 0, legDuration > 0 else { return .cycleEnd }
        var cycle = max(0, (tau / period).rounded(.up) - 1)
        if tau - cycle * period > period + timeEpsilon { cycle += 1 }
        let within = tau - cycle * period
        if within >= cycleLength - timeEpsilon { return .cycleEnd }
        if within <= legDuration + timeEpsilon { return .forward(min(1, max(0, within / legDuration))) }
        return .reverse(min(1, max(0, (within - legDuration) / legDuration)))
    }

    /// A leg boundary that events report: the start of a reverse leg, or of a later cycle.
    public struct Boundary: Sendable, Equatable {
        public enum Kind: Int, Sendable { case repeated = 0, reversed = 1 }
        public var kind: Kind
        /// Zero-based cycle index.
        public var cycle: Int
        /// Local time of the boundary.
        public var time: Double
    }

    /// Cycle indexes from which `Double` time can no longer tell one cycle from the next.
    static let maxCycleIndex = 4e15

    /// Calls `body` for each boundary with local time in `from...through`, in time order.
    /// Cycles wholly before `from` are skipped, not walked. Returns false when it stopped
    /// early: `body` returned false, more than `maxSteps` cycles had to be visited, or the
    /// window lies more than `maxCycleIndex` cycles after the start.
    @discardableResult
    public func forEachBoundary(from lower: Double = 0, through limit: Double, maxSteps: Int = .max,
                                _ body: (Boundary) -> Bool) -> Bool {
        var cycle = 0
        if period > 0, lower > period {
            let first = (lower / period).rounded(.down) - 1
            guard first < Self.maxCycleIndex else { return false }
            cycle = Int(first)
        }
        let limit = min(limit, (playLimit ?? .infinity) - 2 * timeEpsilon)
        var steps = 0
        while true {
            steps += 1
            if steps > maxSteps { return false }
            if case .count(let n) = repetition, cycle > n { return true }
            let cycleStart = Double(cycle) * period
            if cycleStart > limit + timeEpsilon { return true }
            if cycle > 0, cycleStart >= lower - timeEpsilon, !body(Boundary(kind: .repeated, cycle: cycle, time: cycleStart)) { return false }
            if reverses {
                let reverseStart = cycleStart + legDuration
                if reverseStart > limit + timeEpsilon { return true }
                if reverseStart >= lower - timeEpsilon, !body(Boundary(kind: .reversed, cycle: cycle, time: reverseStart)) { return false }
            }
            if period <= 0, case .infinite = repetition { return true }
            cycle += 1
        }
    }
}
