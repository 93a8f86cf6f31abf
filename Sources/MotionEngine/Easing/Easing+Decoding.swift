/// Why an easing string could not be read; the message quotes the string.
public struct EasingSyntaxError: Error, Sendable, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

extension Easing {
    /// Decodes an easing in any wire form of docs/easings.md: a name, a CSS keyword, a CSS function
    /// string, or an object with `type`.
    ///
    /// A wrong JSON type or an unknown field is recorded as malformed (400); an unknown name,
    /// a syntax error inside a CSS string or a parameter out of range as invalid (422). Returns
    /// nil after recording a problem.
    public static func decode(_ json: JSON, at pointer: String, _ diagnostics: Diagnostics) -> Easing? {
        let easing: Easing?
        switch json {
        case .string(let text):
            if let known = plainNames[text] { return known }
            do {
                easing = try parse(text)
            } catch {
                diagnostics.invalid(pointer, error.message)
                return nil
            }
        case .object(let object):
            easing = decodeObject(ObjectReader(object, at: pointer, diagnostics))
        default:
            diagnostics.malformed(pointer, "must be an easing name, CSS easing string or easing object, not \(json.typeDescription)")
            return nil
        }
        if let easing, !easing.isTame {
            diagnostics.invalid(pointer, "this easing's curve leaves ±1e6 or is not finite for some progress; use milder parameters")
            return nil
        }
        return easing
    }

    /// Every plain name spelled exactly (`linear`, the Penner names, the CSS keywords in
    /// lower case) with its easing, every one of them tame: `decode` answers these from one
    /// lookup instead of `parse`'s character scans and `isTame`'s check.
    /// (Small document, `"quadratic.inOut"`: `Easing.decode` 12,700 → about 700 instructions.
    /// The table costs ~1.9M instructions once, on first use: the tameness of six curves.)
    static let plainNames: [String: Easing] = {
        var table: [String: Easing] = [:]
        for name in ["linear"] + pennerNames + cssKeywords {
            if let easing = named(name), easing.isTame { table[name] = easing }
        }
        return table
    }()

    /// The largest |E(u)| an easing may reach: with values bounded by ±1e15 every sample
    /// then stays finite.
    public static let maximumMagnitude = 1e6  // messages say "±1e6"

    /// Whether E(u) stays finite and within ±`maximumMagnitude` (extreme parameters such as
    /// `period: 5e-324` or `overshoot: 1e308` do not). Fixed curves are tame by construction;
    /// a Bézier stays inside its control points' hull and `linear()` between its points; the
    /// other parameterised curves are checked on a grid of 1,025 progress values, once per
    /// document (this runs at decode time, not per sample).
    var isTame: Bool {
        switch self {
        case .linear, .penner, .steps:
            return true
        case .cubicBezier(let bezier):
            return max(abs(bezier.y1), abs(bezier.y2), 1) <= Self.maximumMagnitude
        case .piecewiseLinear(let curve):
            // Extremes of a piecewise-linear curve on [0, 1] lie at its points or at the ends
            // (where CSS extends the outer segments).
            return (curve.points.map(\.y) + [self(0), self(1)]).allSatisfy { $0.isFinite && abs($0) <= Self.maximumMagnitude }
        case .back, .elastic, .spring:
            return (0...1024).allSatisfy { index in
                let value = self(Double(index) / 1024)
                return value.isFinite && abs(value) <= Self.maximumMagnitude
            }
        }
    }

    /// Parses the string form: `linear`, a Penner name (`quadratic.inOut`), a CSS keyword
    /// (`ease`, `step-end`, …) or a CSS function (`cubic-bezier(…)`, `steps(…)`, `linear(…)`).
    ///
    /// Penner names are case-sensitive; CSS keywords and function names are ASCII
    /// case-insensitive, as in CSS. Surrounding whitespace is ignored.
    public static func parse(_ text: String) throws(EasingSyntaxError) -> Easing {
        let trimmed = text.trimmingCSSWhitespace()
        if trimmed.isEmpty {
            throw EasingSyntaxError("invalid easing '\(text)': expected an easing name such as 'linear', 'quadratic.inOut' or 'ease'")
        }
        if let open = trimmed.firstIndex(of: "(") {
            return try parseFunction(text, name: trimmed[..<open], rest: trimmed[trimmed.index(after: open)...])
        }
        if let easing = named(trimmed) { return easing }
        throw EasingSyntaxError(unknownNameMessage(text, trimmed))
    }

    /// The easing for a plain name (no parameters, no CSS function): `linear`, a Penner name
    /// with its default parameters, or a CSS keyword. Nil for anything else.
    public static func named(_ name: String) -> Easing? {
        if let dot = name.firstIndex(of: ".") {
            let family = name[..<dot]
            guard let mode = EaseMode(rawValue: String(name[name.index(after: dot)...])) else { return nil }
            switch family {
            case "back": return .back(mode, overshoot: defaultOvershoot)
            case "elastic": return .elastic(mode, amplitude: defaultAmplitude, period: defaultPeriod(mode))
            default:
                guard let penner = PennerFamily(rawValue: String(family)) else { return nil }
                return .penner(penner, mode)
            }
        }
        switch name.lowercased() {
        case "linear": return .linear
        case "ease": return .cubicBezier(.ease)
        case "ease-in": return .cubicBezier(.easeIn)
        case "ease-out": return .cubicBezier(.easeOut)
        case "ease-in-out": return .cubicBezier(.easeInOut)
        case "step-start": return .steps(count: 1, position: .jumpStart)
        case "step-end": return .steps(count: 1, position: .jumpEnd)
        default: return nil
        }
    }

    /// Every Penner name: `quadratic.in` … `back.inOut`.
    public static var pennerNames: [String] {
        let families = PennerFamily.allCases.map(\.rawValue) + ["back", "elastic"]
        return families.flatMap { family in EaseMode.allCases.map { "\(family).\($0.rawValue)" } }
    }

    /// The CSS keywords accepted as names.
    public static let cssKeywords = ["ease", "ease-in", "ease-out", "ease-in-out", "step-start", "step-end"]

    // MARK: - Names

    private static let familyList = "quadratic, cubic, quartic, quintic, sine, expo, circular, elastic, bounce, back"

    private static func unknownNameMessage(_ text: String, _ name: String) -> String {
        let lower = name.lowercased()
        if let match = pennerNames.first(where: { $0.lowercased() == lower }) {
            return "unknown easing '\(text)': did you mean '\(match)'? (names are case-sensitive)"
        }
        if let dot = name.firstIndex(of: ".") {
            let family = String(name[..<dot])
            if family == "back" || family == "elastic" || PennerFamily(rawValue: family) != nil {
                return "unknown easing '\(text)': the mode after '\(family).' must be in, out or inOut"
            }
        }
        if lower == "cubicbezier" || lower == "cubic-bezier" || lower == "steps" {
            return "unknown easing '\(text)': \(lower == "steps" ? "steps" : "cubic-bezier") needs its arguments, e.g. '\(lower == "steps" ? "steps(4, jump-end)" : "cubic-bezier(0.25, 0.1, 0.25, 1)")'"
        }
        return "unknown easing '\(text)': expected 'linear', a Penner name family.mode such as 'quadratic.inOut' (families: \(familyList); modes: in, out, inOut), a CSS keyword (\(cssKeywords.joined(separator: ", "))) or a CSS function cubic-bezier(x1, y1, x2, y2), steps(n, position) or linear(stops)"
    }

    // MARK: - CSS functions

    private static func parseFunction(_ text: String, name rawName: Substring, rest: Substring) throws(EasingSyntaxError) -> Easing {
        func fail(_ reason: String) -> EasingSyntaxError { EasingSyntaxError("invalid easing '\(text)': \(reason)") }
        let name = String(rawName).trimmingCSSWhitespace().lowercased()
        guard name == "cubic-bezier" || name == "steps" || name == "linear" else {
            throw EasingSyntaxError("unknown easing function '\(String(rawName).trimmingCSSWhitespace())()' in '\(text)': expected cubic-bezier(x1, y1, x2, y2), steps(n, position) or linear(stops)")
        }
        guard rest.last == ")" else { throw fail("expected ')' at the end") }
        let inner = rest.dropLast()
        if inner.contains("(") || inner.contains(")") {
            throw fail("unexpected parenthesis inside \(name)()")
        }
        let arguments = inner.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCSSWhitespace() }
        if arguments.count == 1 && arguments[0].isEmpty {
            switch name {
            case "cubic-bezier": throw fail("cubic-bezier() takes 4 numbers x1, y1, x2, y2")
            case "steps": throw fail("steps() takes a step count and an optional position")
            default: throw fail("linear() takes at least 2 stops, e.g. 'linear(0, 0.25 75%, 1)'")
            }
        }
        if let empty = arguments.firstIndex(where: \.isEmpty) {
            throw fail("argument \(empty + 1) of \(name)() is empty")
        }
        switch name {
        case "cubic-bezier":
            guard arguments.count == 4 else {
                throw fail("cubic-bezier() takes 4 numbers x1, y1, x2, y2, found \(arguments.count) argument\(arguments.count == 1 ? "" : "s")")
            }
            var values: [Double] = []
            for argument in arguments {
                guard let value = cssNumber(argument) else { throw fail("'\(argument)' is not a number") }
                values.append(value)
            }
            for (index, label) in [(0, "x1"), (2, "x2")] where !(0...1).contains(values[index]) {
                throw fail("\(label) must be between 0 and 1, not \(format(values[index]))")
            }
            return .cubicBezier(CubicBezier(x1: values[0], y1: values[1], x2: values[2], y2: values[3]))

        case "steps":
            guard arguments.count <= 2 else {
                throw fail("steps() takes a step count and an optional position, found \(arguments.count) arguments")
            }
            guard let count = cssInteger(arguments[0]) else {
                throw fail("the step count '\(arguments[0])' is not an integer")
            }
            var position = StepPosition.jumpEnd
            if arguments.count == 2 {
                guard let parsed = StepPosition(css: arguments[1]) else {
                    throw fail("unknown step position '\(arguments[1])': expected jump-start, jump-end, jump-none, jump-both, start or end")
                }
                position = parsed
            }
            if let reason = stepCountProblem(count, position) { throw fail("the step count \(reason)") }
            return .steps(count: Int(count), position: position)

        default:  // linear
            var stops: [PiecewiseLinear.Stop] = []
            for argument in arguments {
                stops.append(try linearStop(argument, fail))
            }
            guard stops.count >= 2 else {
                throw fail("linear() takes at least 2 stops, e.g. 'linear(0, 0.25 75%, 1)'")
            }
            guard let curve = PiecewiseLinear(css: stops) else { throw fail("the stops do not form a curve") }
            return .piecewiseLinear(curve)
        }
    }

    /// One `linear()` stop: `<number> && <percentage>{0,2}` (the percentages before or after).
    private static func linearStop(_ argument: String, _ fail: (String) -> EasingSyntaxError) throws(EasingSyntaxError) -> PiecewiseLinear.Stop {
        let parts = argument.split(whereSeparator: \.isCSSWhitespace).map(String.init)
        let isPercentage = parts.map { $0.hasSuffix("%") }
        let numbers = isPercentage.filter { !$0 }.count
        let shape = "each linear() stop is a number with up to two percentages, e.g. '0.25 75%'"
        guard numbers == 1, parts.count <= 3 else {
            throw fail("'\(argument)' is not a stop: \(shape)")
        }
        // The percentages must be together: "0.5 25% 75%" or "25% 75% 0.5", not "25% 0.5 75%".
        if parts.count == 3 && !isPercentage[1] {
            throw fail("'\(argument)' is not a stop: \(shape)")
        }
        var output = 0.0
        var positions: [Double] = []
        for part in parts {
            if part.hasSuffix("%") {
                let number = String(part.dropLast())
                guard let percent = cssNumber(number), (percent / 100).isFinite else {
                    throw fail("'\(part)' is not a percentage")
                }
                positions.append(percent / 100)
            } else {
                guard let value = cssNumber(part) else { throw fail("'\(part)' is not a number") }
                output = value
            }
        }
        return PiecewiseLinear.Stop(output, positions)
    }

    /// Nil when `count` is valid for `position`, else what is wrong ("must be at least 1").
    static func stepCountProblem(_ count: Double, _ position: StepPosition) -> String? {
        let minimum = Steps.minimumCount(position)
        if count < Double(minimum) {
            return "must be at least \(minimum)\(position == .jumpNone ? " for jump-none" : ""), not \(format(count))"
        }
        if count > Double(Steps.maximumCount) {
            return "must be at most \(Steps.maximumCount), not \(format(count))"
        }
        return nil
    }

    /// A CSS `<number>`: `[+-]? (digits | digits? '.' digits) ([eE] [+-]? digits)?`, finite.
    static func cssNumber(_ token: String) -> Double? {
        let bytes = Array(token.utf8)
        var i = 0
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        if i < bytes.count && (bytes[i] == 0x2B || bytes[i] == 0x2D) { i += 1 }  // + -
        var digits = 0
        while i < bytes.count && isDigit(bytes[i]) { i += 1; digits += 1 }
        if i < bytes.count && bytes[i] == 0x2E {  // .
            i += 1
            var fraction = 0
            while i < bytes.count && isDigit(bytes[i]) { i += 1; fraction += 1 }
            guard fraction > 0 else { return nil }
            digits += fraction
        }
        guard digits > 0 else { return nil }
        if i < bytes.count && (bytes[i] == 0x65 || bytes[i] == 0x45) {  // e E
            i += 1
            if i < bytes.count && (bytes[i] == 0x2B || bytes[i] == 0x2D) { i += 1 }
            var exponent = 0
            while i < bytes.count && isDigit(bytes[i]) { i += 1; exponent += 1 }
            guard exponent > 0 else { return nil }
        }
        guard i == bytes.count, let value = Double(token), value.isFinite else { return nil }
        return value
    }

    /// A CSS `<integer>`: `[+-]? digits` (as a Double, so that huge counts cannot overflow).
    static func cssInteger(_ token: String) -> Double? {
        var body = Substring(token)
        if body.first == "+" || body.first == "-" { body = body.dropFirst() }
        guard !body.isEmpty, body.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return cssNumber(token)
    }

    // MARK: - Object form

    private static func decodeObject(_ reader: ObjectReader) -> Easing? {
        let diagnostics = reader.diagnostics
        let before = diagnostics.count
        guard let type = reader.string("type", required: true) else { return nil }
        let typePointer = reader.pointer("type")
        var easing: Easing?

        switch type {
        case "cubicBezier":
            let x1 = reader.number("x1", in: 0...1, required: true)
            let y1 = reader.number("y1", required: true)
            let x2 = reader.number("x2", in: 0...1, required: true)
            let y2 = reader.number("y2", required: true)
            if let x1, let y1, let x2, let y2 {
                easing = .cubicBezier(CubicBezier(x1: x1, y1: y1, x2: x2, y2: y2))
            }

        case "steps":
            let count = reader.integer("count", required: true)
            var position: StepPosition? = .jumpEnd
            if let name = reader.string("position") {
                position = StepPosition(css: name)
                if position == nil {
                    diagnostics.invalid(reader.pointer("position"), "unknown step position '\(name)': expected jump-start, jump-end, jump-none, jump-both, start or end")
                }
            }
            if let count, let position {
                if let reason = stepCountProblem(Double(count), position) {
                    diagnostics.invalid(reader.pointer("count"), reason)
                } else {
                    easing = .steps(count: count, position: position)
                }
            }

        case "linear":
            if let items = reader.array("points") {
                easing = decodePoints(items, at: reader.pointer("points"), diagnostics)
            } else if !reader.has("points") {
                easing = .linear
            }

        case "spring":
            easing = decodeSpring(reader)

        case _ where type.hasPrefix("back."):
            guard let mode = EaseMode(rawValue: String(type.dropFirst(5))) else {
                diagnostics.invalid(typePointer, unknownTypeMessage(type))
                return nil
            }
            var overshoot = defaultOvershoot
            if let value = reader.nonNegative("overshoot") { overshoot = value }
            easing = .back(mode, overshoot: overshoot)

        case _ where type.hasPrefix("elastic."):
            guard let mode = EaseMode(rawValue: String(type.dropFirst(8))) else {
                diagnostics.invalid(typePointer, unknownTypeMessage(type))
                return nil
            }
            var amplitude = defaultAmplitude
            var period = defaultPeriod(mode)
            if let value = reader.number("amplitude") {
                if value > 0 {
                    amplitude = Swift.max(value, 1)  // below 1 is raised to 1 (Penner)
                } else {
                    diagnostics.invalid(reader.pointer("amplitude"), "must be positive, not \(format(value))")
                }
            }
            if let value = reader.number("period") {
                if value > 0 {
                    period = value
                } else {
                    diagnostics.invalid(reader.pointer("period"), "must be positive, not \(format(value))")
                }
            }
            easing = .elastic(mode, amplitude: amplitude, period: period)

        default:
            // Plain names: Penner names, `linear`, CSS keywords (not CSS function strings).
            guard !type.contains("("), let plain = named(type) else {
                diagnostics.invalid(typePointer, unknownTypeMessage(type))
                return nil
            }
            easing = plain
        }
        reader.finish()
        return diagnostics.count == before ? easing : nil
    }

    /// `{"type": "spring", <one parameterisation>, "initialVelocity"?, "restDelta"?, "restSpeed"?}`
    /// (docs/nodes.md#spring): the parameters as `SpringParameters.decode` reads them; `initialVelocity`
    /// in distances per second (default 0); `restDelta` and `restSpeed` positive (default
    /// 0.001). A spring that never rests, or rests only after the settling limit, is a 422 at
    /// the object.
    private static func decodeSpring(_ reader: ObjectReader) -> Easing? {
        let diagnostics = reader.diagnostics
        let parameters = SpringParameters.decode(from: reader, diagnostics)
        let initialVelocity = reader.number("initialVelocity") ?? 0
        func positive(_ key: String, _ fallback: Double) -> Double? {
            guard let n = reader.number(key) else { return reader.has(key) ? nil : fallback }
            guard n > 0 else {
                diagnostics.invalid(reader.pointer(key), "must be positive, not \(format(n))")
                return nil
            }
            return n
        }
        let restDelta = positive("restDelta", SpringCurve.defaultRestDelta)
        let restSpeed = positive("restSpeed", SpringCurve.defaultRestSpeed)
        guard let parameters, let restDelta, let restSpeed else { return nil }
        do {
            return .spring(try SpringCurve(parameters: parameters, initialVelocity: initialVelocity,
                                           restDelta: restDelta, restSpeed: restSpeed))
        } catch {
            diagnostics.invalid(reader.pointer, error.message)
            return nil
        }
    }

    private static func unknownTypeMessage(_ type: String) -> String {
        let lower = type.lowercased()
        if lower == "cubic-bezier" || lower == "cubicbezier" {
            return "unknown easing type '\(type)': did you mean 'cubicBezier'?"
        }
        if let match = pennerNames.first(where: { $0.lowercased() == lower }) {
            return "unknown easing type '\(type)': did you mean '\(match)'? (names are case-sensitive)"
        }
        return "unknown easing type '\(type)': expected cubicBezier, steps, linear, back.in|out|inOut, elastic.in|out|inOut, spring, or an easing name such as 'quadratic.inOut' or 'ease'"
    }

    /// `points`: at least two `[x, y]` pairs, x in [0, 1] non-decreasing (equal x makes a
    /// jump), the first x 0 and the last x 1; y is free.
    private static func decodePoints(_ items: [JSON], at pointer: String, _ diagnostics: Diagnostics) -> Easing? {
        let before = diagnostics.count
        var points: [PiecewiseLinear.Point] = []
        for (index, item) in items.enumerated() {
            let itemPointer = JSONPointer.appending(pointer, index)
            guard case .array(let pair) = item, pair.count == 2,
                  let x = pair[0].numberValue, let y = pair[1].numberValue
            else {
                diagnostics.malformed(itemPointer, "must be an [x, y] pair of numbers, not \(describePoint(item))")
                continue
            }
            if !(0...1).contains(x) {
                diagnostics.invalid(itemPointer, "x must be between 0 and 1, not \(format(x))")
            } else if let previous = points.last, x < previous.x {
                diagnostics.invalid(itemPointer, "x must not be less than the previous point's x (\(format(previous.x))), not \(format(x))")
            }
            points.append(PiecewiseLinear.Point(x: x, y: y))
        }
        guard diagnostics.count == before else { return nil }
        guard items.count >= 2 else {
            diagnostics.invalid(pointer, "needs at least 2 points, found \(items.count)")
            return nil
        }
        if let first = points.first, first.x != 0 {
            diagnostics.invalid(JSONPointer.appending(pointer, 0), "the first point's x must be 0, not \(format(first.x))")
        }
        if let last = points.last, last.x != 1 {
            diagnostics.invalid(JSONPointer.appending(pointer, points.count - 1), "the last point's x must be 1, not \(format(last.x))")
        }
        guard diagnostics.count == before, let curve = PiecewiseLinear(points: points) else { return nil }
        return .piecewiseLinear(curve)
    }

    private static func describePoint(_ item: JSON) -> String {
        if case .array(let pair) = item {
            if pair.count != 2 { return "an array of \(pair.count)" }
            return "an array holding \(pair[0].typeDescription) and \(pair[1].typeDescription)"
        }
        return item.typeDescription
    }
}

extension Character {
    /// CSS whitespace: space, tab, line feed, carriage return, form feed.
    fileprivate var isCSSWhitespace: Bool {
        self == " " || self == "\t" || self == "\n" || self == "\r" || self == "\u{0C}" || self == "\r\n"
    }
}

extension StringProtocol {
    fileprivate func trimmingCSSWhitespace() -> String {
        guard let start = firstIndex(where: { !$0.isCSSWhitespace }),
              let end = lastIndex(where: { !$0.isCSSWhitespace })
        else { return "" }
        return String(self[start...end])
    }
}
