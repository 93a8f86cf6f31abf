/// CSS `steps(n, position)` evaluation (CSS Easing Functions Level 2, "step easing functions").
public enum Steps {
    /// The largest step count decoding accepts.
    public static let maximumCount = 1_000_000

    /// The smallest valid count for a position: 2 for `jump-none`, else 1.
    public static func minimumCount(_ position: Easing.StepPosition) -> Int {
        position == .jumpNone ? 2 : 1
    }

    /// The output of `steps(count, position)` at progress `u` (clamped to [0, 1]).
    ///
    /// The "before flag" of the spec does not apply (samples never lie before a leg starts).
    /// A count below the position's minimum is raised to it.
    public static func evaluate(_ u: Double, count: Int, position: Easing.StepPosition) -> Double {
        let u = u.isNaN ? 0 : Swift.min(Swift.max(u, 0), 1)
        let n = Double(Swift.max(count, minimumCount(position)))
        // 1. current step = floor(u × steps); 2. +1 for jump-start / jump-both.
        var step = (u * n).rounded(.down)
        if position == .jumpStart || position == .jumpBoth { step += 1 }
        // 5. jumps by position; 6. clamp the step to the number of jumps.
        let jumps: Double
        switch position {
        case .jumpStart, .jumpEnd: jumps = n
        case .jumpNone: jumps = n - 1
        case .jumpBoth: jumps = n + 1
        }
        if step > jumps { step = jumps }
        return step / jumps
    }
}

extension Easing.StepPosition {
    /// Parses a CSS step position: the four `jump-*` keywords, `start` (= jump-start) and
    /// `end` (= jump-end), ASCII case-insensitively.
    public init?(css: String) {
        switch css.lowercased() {
        case "jump-start", "start": self = .jumpStart
        case "jump-end", "end": self = .jumpEnd
        case "jump-none": self = .jumpNone
        case "jump-both": self = .jumpBoth
        default: return nil
        }
    }
}
