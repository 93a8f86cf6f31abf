/// Per-property output bounds (docs/values.md#bounds): `clamp`, or b3ll's `rubberband`.
public struct Bounds: Sendable, Equatable {
    public enum Mode: String, Sendable, CaseIterable {
        case clamp, rubberband
    }

    public var min: Double
    public var max: Double
    public var mode: Mode
    /// Rubber-band stiffness, default 0.55.
    public var coefficient: Double
    /// Rubber-band dimension D, default `max − min`.
    public var dimension: Double

    public init(min: Double, max: Double, mode: Mode, coefficient: Double = 0.55, dimension: Double? = nil) {
        self.min = min
        self.max = max
        self.mode = mode
        self.coefficient = coefficient
        self.dimension = dimension ?? (max - min)
    }

    /// The bounded value: past `max` it becomes `max + D·(1 − 1/((v−max)·c/D + 1))` in
    /// rubberband mode, and symmetrically below `min`.
    @inline(__always)
    public func apply(_ value: Double) -> Double {
        switch mode {
        case .clamp:
            return Swift.min(max, Swift.max(min, value))
        case .rubberband:
            if value > max { return max + dimension * (1 - 1 / ((value - max) * coefficient / dimension + 1)) }
            if value < min { return min - dimension * (1 - 1 / ((min - value) * coefficient / dimension + 1)) }
            return value
        }
    }

    /// Decodes `{"min", "max", "mode", "coefficient"?, "dimension"?}`.
    static func decode(_ reader: ObjectReader, _ diagnostics: Diagnostics) -> Bounds? {
        let min = reader.number("min", required: true)
        let max = reader.number("max", required: true)
        var mode: Mode?
        if let text = reader.string("mode", required: true) {
            mode = Mode(rawValue: text)
            if mode == nil { diagnostics.invalid(reader.pointer("mode"), "unknown bounds mode '\(text)'; expected 'clamp' or 'rubberband'") }
        }
        let coefficient = reader.number("coefficient")
        let dimension = reader.number("dimension")
        reader.finish()
        guard let min, let max, let mode else { return nil }
        var valid = true
        if max < min {
            diagnostics.invalid(reader.pointer("max"), "must not be below min (\(format(min)))")
            valid = false
        }
        if let coefficient, coefficient <= 0 {
            diagnostics.invalid(reader.pointer("coefficient"), "must be positive")
            valid = false
        }
        if let dimension, dimension <= 0 {
            diagnostics.invalid(reader.pointer("dimension"), "must be positive")
            valid = false
        }
        if mode == .rubberband, dimension == nil, max == min {
            diagnostics.invalid(reader.pointer("dimension"), "is required when min equals max (the default max − min would be 0)")
            valid = false
        }
        return valid ? Bounds(min: min, max: max, mode: mode, coefficient: coefficient ?? 0.55, dimension: dimension) : nil
    }
}
