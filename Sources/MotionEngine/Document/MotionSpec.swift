/// A motion-interchange animation trait (docs/README.md): timing as data, inline or named in the
/// document's `specs` tree, mapped onto a tween as docs/values.md#motion-specs says.
public struct MotionSpec: Sendable {
    public enum Curve: Sendable {
        case bezier(CubicBezier)
        /// Runs for the spring's rest time; velocity is in distances per second.
        case spring(SpringCurve)
        /// The value is set at the start time; delay and duration are ignored.
        case instant
    }

    public enum Repetition: Sendable {
        case none
        /// n plays in all (Core Animation's `repeatCount`); fractional counts end part-way.
        case count(Double, autoreverses: Bool)
        /// Keep cycling until this many seconds have passed.
        case duration(Double, autoreverses: Bool)
    }

    public var delay: Double
    public var duration: Double
    public var curve: Curve
    public var repetition: Repetition

    static let fields: Set<String> = ["delay", "duration", "curve", "repetition"]

    /// `timing`: an inline spec object, or the dotted name of one in `specs`.
    static func resolve(_ value: JSON, at pointer: String, specs: JSONObject, _ diagnostics: Diagnostics) -> MotionSpec? {
        switch value {
        case .object:
            return decode(value, at: pointer, diagnostics)
        case .string(let name):
            guard let path = PropertyPath(name), let found = path.lookup(in: specs) else {
                diagnostics.invalid(pointer, "no spec named '\(name)' in specs")
                return nil
            }
            let specPointer = path.segments.reduce("/specs") { JSONPointer.appending($0, $1) }
            guard case .object(let object) = found, !object.isEmpty, Set(object.keys).isSubset(of: fields) else {
                diagnostics.invalid(pointer, "'\(name)' in specs is a group of specs, not a spec (a spec has only delay, duration, curve and repetition)")
                return nil
            }
            return decode(found, at: specPointer, diagnostics)
        default:
            diagnostics.malformed(pointer, "must be a spec object or the dotted name of a spec in specs, not \(value.typeDescription)")
            return nil
        }
    }

    static func decode(_ json: JSON, at pointer: String, _ diagnostics: Diagnostics) -> MotionSpec? {
        guard let reader = ObjectReader.expecting(json, at: pointer, diagnostics) else { return nil }
        defer { reader.finish() }
        let delay = reader.time("delay") ?? 0
        let duration = reader.time("duration")
        var curve: Curve? = .bezier(CubicBezier(x1: 0, y1: 0, x2: 1, y2: 1))
        if let curveReader = reader.object("curve") {
            curve = decodeCurve(curveReader, diagnostics)
        }
        var repetition: Repetition? = Repetition.none
        if let repetitionReader = reader.object("repetition") {
            repetition = decodeRepetition(repetitionReader, diagnostics)
        }
        guard let curve, let repetition else { return nil }
        switch curve {
        case .bezier:
            guard let duration else {
                diagnostics.malformed(reader.pointer("duration"), "is required for a bezier curve")
                return nil
            }
            return MotionSpec(delay: delay, duration: duration, curve: curve, repetition: repetition)
        case .spring(let spring):
            return MotionSpec(delay: delay, duration: spring.restTime, curve: curve, repetition: repetition)
        case .instant:
            return MotionSpec(delay: 0, duration: 0, curve: curve, repetition: repetition)
        }
    }

    private static func decodeCurve(_ reader: ObjectReader, _ diagnostics: Diagnostics) -> Curve? {
        defer { reader.finish() }
        guard let type = reader.string("type", required: true) else { return nil }
        switch type {
        case "bezier":
            guard let points = reader.array("controlPoints", required: true) else { return nil }
            let numbers = points.compactMap(\.numberValue)
            guard numbers.count == 4, points.count == 4 else {
                diagnostics.malformed(reader.pointer("controlPoints"), "must be four numbers [x1, y1, x2, y2]")
                return nil
            }
            for index in [0, 2] where !(0...1).contains(numbers[index]) {
                diagnostics.invalid(JSONPointer.appending(reader.pointer("controlPoints"), index), "x control points must be between 0 and 1, not \(format(numbers[index]))")
                return nil
            }
            let bezier = CubicBezier(x1: numbers[0], y1: numbers[1], x2: numbers[2], y2: numbers[3])
            guard Easing.cubicBezier(bezier).isTame else {
                diagnostics.invalid(reader.pointer("controlPoints"), "this curve leaves ±1e6 or is not finite for some progress; use milder control points")
                return nil
            }
            return .bezier(bezier)
        case "spring":
            let mass = reader.number("mass", required: true)
            let tension = reader.number("tension", required: true)
            let friction = reader.number("friction", required: true)
            let velocity = reader.bounded("initialVelocity") ?? 0
            guard let mass, let tension, let friction else { return nil }
            var valid = true
            if mass <= 0 { diagnostics.invalid(reader.pointer("mass"), "must be positive"); valid = false }
            if tension <= 0 { diagnostics.invalid(reader.pointer("tension"), "must be positive"); valid = false }
            if friction < 0 { diagnostics.invalid(reader.pointer("friction"), "must not be negative"); valid = false }
            guard valid else { return nil }
            do {
                return .spring(try SpringCurve(parameters: .mass(mass, tension: tension, friction: friction), initialVelocity: velocity))
            } catch {
                diagnostics.invalid(reader.pointer, error.message)
                return nil
            }
        case "instant":
            return .instant
        default:
            diagnostics.invalid(reader.pointer("type"), "unknown curve type '\(type)'; expected 'bezier', 'spring' or 'instant'")
            return nil
        }
    }

    private static func decodeRepetition(_ reader: ObjectReader, _ diagnostics: Diagnostics) -> Repetition? {
        defer { reader.finish() }
        guard let type = reader.string("type", required: true) else { return nil }
        switch type {
        case "none":
            return Repetition.none
        case "count", "duration":
            let amount = reader.number("amount", required: true)
            let autoreverses = reader.bool("autoreverses") ?? false
            guard let amount else { return nil }
            guard amount > 0, amount < 1e9 else {
                diagnostics.invalid(reader.pointer("amount"), "must be positive (and below 1e9)")
                return nil
            }
            return type == "count" ? .count(amount, autoreverses: autoreverses) : .duration(amount, autoreverses: autoreverses)
        default:
            diagnostics.invalid(reader.pointer("type"), "unknown repetition type '\(type)'; expected 'none', 'count' or 'duration'")
            return nil
        }
    }

    /// The tween timing this spec stands for, keeping the node's `repeatDelay`; `duration`
    /// replaces the spec's own (a spring curve's rest time in the property's units).
    func timing(repeatDelay: Double, duration: Double? = nil) -> NodeTiming {
        let duration = duration ?? self.duration
        var timing = NodeTiming(delay: delay, repeatDelay: repeatDelay)
        switch repetition {
        case .none:
            break
        case .count(let plays, let autoreverses):
            timing.reverses = autoreverses
            let whole = plays.rounded(.down)
            timing.repetition = .count(Int(plays.rounded(.up)) - 1)
            if plays != whole {
                let cycle = duration * (autoreverses ? 2 : 1)
                timing.playLimit = whole * (cycle + repeatDelay) + (plays - whole) * cycle
            }
        case .duration(let seconds, let autoreverses):
            timing.reverses = autoreverses
            timing.repetition = .infinite
            timing.playLimit = seconds
        }
        return timing
    }

    var easing: Easing {
        switch curve {
        case .bezier(let bezier): return .cubicBezier(bezier)
        case .spring(let spring): return .spring(spring)
        case .instant: return .linear
        }
    }
}
