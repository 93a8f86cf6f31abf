extension Easing {
    /// The body of `GET /v1/easings`: every easing name with its parameters and examples.
    ///
    /// `{"easings": [entry…]}`; each entry has `name`, `description`, `parameters`
    /// (`name`, `type`, `default`?, `minimum`?, `maximum`?, `exclusiveMinimum`?, `enum`?,
    /// `description`) and `examples` (wire values that `decode` accepts). CSS functions also
    /// carry `form` (their CSS syntax) and `object` (the `type` of their object form).
    public static var catalogue: JSON { cachedCatalogue }

    private static let cachedCatalogue: JSON = buildCatalogue()

    private static func buildCatalogue() -> JSON {
        var entries: [JSON] = []

        entries.append(entry("linear", "Constant speed: E(u) = u.", examples: [.string("linear")]))

        let pennerDescriptions: [PennerFamily: String] = [
            .quadratic: "Penner quadratic (u²)",
            .cubic: "Penner cubic (u³)",
            .quartic: "Penner quartic (u⁴)",
            .quintic: "Penner quintic (u⁵)",
            .sine: "Penner sine (quarter cosine wave)",
            .expo: "Penner exponential (2^(10(u−1)))",
            .circular: "Penner circular (quarter circle)",
            .bounce: "Penner bounce (decaying bounces; inOut is the easings.net curve)",
        ]
        for family in PennerFamily.allCases {
            for mode in EaseMode.allCases {
                let name = "\(family.rawValue).\(mode.rawValue)"
                let text = "\(pennerDescriptions[family] ?? family.rawValue), \(modeDescription(mode))."
                entries.append(entry(name, text, examples: [.string(name), object([("type", .string(name))])]))
            }
        }

        for mode in EaseMode.allCases {
            let name = "back.\(mode.rawValue)"
            let overshoot = parameter(
                "overshoot", "number", default: .number(defaultOvershoot), minimum: 0,
                "How far the curve overshoots: k = 1.70158 × overshoot / 0.1 (k × 1.525 for inOut).")
            entries.append(entry(
                name, "Penner back (overshoots, then settles), \(modeDescription(mode)).",
                parameters: [overshoot],
                examples: [.string(name), object([("type", .string(name)), ("overshoot", .number(0.2))])]))
        }

        for mode in EaseMode.allCases {
            let name = "elastic.\(mode.rawValue)"
            let amplitude = parameter(
                "amplitude", "number", default: .number(defaultAmplitude), exclusiveMinimum: 0,
                "Amplitude A of the oscillation; values below 1 are raised to 1.")
            let period = parameter(
                "period", "number", default: .number(defaultPeriod(mode)), exclusiveMinimum: 0,
                "Period p of the oscillation in units of progress.")
            entries.append(entry(
                name, "Penner elastic (damped oscillation), \(modeDescription(mode)).",
                parameters: [amplitude, period],
                examples: [.string(name),
                           object([("type", .string(name)), ("amplitude", .number(1.2)), ("period", .number(0.4))])]))
        }

        let keywords: [(String, String)] = [
            ("ease", "CSS keyword: cubic-bezier(0.25, 0.1, 0.25, 1)."),
            ("ease-in", "CSS keyword: cubic-bezier(0.42, 0, 1, 1)."),
            ("ease-out", "CSS keyword: cubic-bezier(0, 0, 0.58, 1)."),
            ("ease-in-out", "CSS keyword: cubic-bezier(0.42, 0, 0.58, 1)."),
            ("step-start", "CSS keyword: steps(1, jump-start) (jumps to 1 at the start)."),
            ("step-end", "CSS keyword: steps(1, jump-end) (jumps to 1 at the end)."),
        ]
        for (name, text) in keywords {
            entries.append(entry(name, text, examples: [.string(name)]))
        }

        entries.append(entry(
            "cubic-bezier",
            "CSS cubic Bézier through (0,0), (x1,y1), (x2,y2), (1,1); solved to |ΔX| ≤ 1e-7.",
            form: "cubic-bezier(x1, y1, x2, y2)", objectType: "cubicBezier",
            parameters: [
                parameter("x1", "number", minimum: 0, maximum: 1, "x of the first control point."),
                parameter("y1", "number", "y of the first control point (any value)."),
                parameter("x2", "number", minimum: 0, maximum: 1, "x of the second control point."),
                parameter("y2", "number", "y of the second control point (any value)."),
            ],
            examples: [
                .string("cubic-bezier(0.25, 0.1, 0.25, 1)"),
                object([("type", .string("cubicBezier")), ("x1", .number(0.4)), ("y1", .number(0)),
                        ("x2", .number(0.2)), ("y2", .number(1))]),
            ]))

        entries.append(entry(
            "steps",
            "CSS steps: count equal jumps placed by position (start = jump-start, end = jump-end).",
            form: "steps(count, position)", objectType: "steps",
            parameters: [
                parameter("count", "integer", minimum: 1, maximum: Double(Steps.maximumCount),
                          "Number of steps; at least 2 for jump-none."),
                parameter("position", "string", default: .string(StepPosition.jumpEnd.rawValue),
                          enumeration: ["jump-start", "jump-end", "jump-none", "jump-both", "start", "end"],
                          "Where the jumps happen."),
            ],
            examples: [
                .string("steps(4)"), .string("steps(4, jump-start)"),
                object([("type", .string("steps")), ("count", .number(3)), ("position", .string("jump-both"))]),
            ]))

        entries.append(entry(
            "linear()",
            "CSS linear(): piecewise linear through stops, each a number with up to two percentages (missing ones spread evenly). The object form takes [x, y] points with x in [0, 1] non-decreasing (equal x makes a jump), the first x 0 and the last x 1.",
            form: "linear(stop, stop, …)", objectType: "linear",
            parameters: [
                parameter("points", "array",
                          "Object form: at least 2 [x, y] pairs, x in [0, 1] non-decreasing, first x 0, last x 1."),
            ],
            examples: [
                .string("linear(0, 0.25 75%, 1)"),
                object([("type", .string("linear")),
                        ("points", .array([.array([.number(0), .number(0)]), .array([.number(0.5), .number(0.8)]),
                                           .array([.number(1), .number(1)])]))]),
            ]))

        entries.append(entry(
            "spring",
            "A damped spring solved from 0 to 1 and stretched over the tween's duration: E(u) = x(u·T), T the spring's rest time (the first millisecond from which |x − 1| ≤ restDelta and |x'| ≤ restSpeed hold for good). Give exactly one parameterisation: {response, dampingRatio} | {stiffness, damping, mass?} | {duration, bounce} | {mass, tension, friction}. Overshoots when the damping ratio is below 1.",
            form: "{\"type\": \"spring\", <spring parameters>}", objectType: "spring",
            parameters: [
                parameter("response", "number", exclusiveMinimum: 0,
                          "{response, dampingRatio}: the undamped period in seconds (m = 1, k = (2π/response)²)."),
                parameter("dampingRatio", "number", default: .number(1), exclusiveMinimum: 0,
                          "{response, dampingRatio}: ζ; below 1 oscillates, 1 is critically damped."),
                parameter("stiffness", "number", exclusiveMinimum: 0, "{stiffness, damping, mass?}: k."),
                parameter("damping", "number", minimum: 0, "{stiffness, damping, mass?}: c (0 never rests)."),
                parameter("mass", "number", exclusiveMinimum: 0,
                          "m: optional (default 1) with stiffness and damping, required with tension and friction."),
                parameter("duration", "number", exclusiveMinimum: 0,
                          "{duration, bounce}: the perceptual duration in seconds (k = (2π/duration)², m = 1)."),
                parameter("bounce", "number", default: .number(0),
                          "{duration, bounce}: in (−1, 1); ζ = 1 − bounce for bounce ≥ 0, 1/(1 + bounce) below."),
                parameter("tension", "number", exclusiveMinimum: 0, "{mass, tension, friction}: k (motion-interchange)."),
                parameter("friction", "number", minimum: 0, "{mass, tension, friction}: c (motion-interchange)."),
                parameter("initialVelocity", "number", default: .number(0),
                          "Initial velocity in distances per second; positive moves toward the target."),
                parameter("restDelta", "number", default: .number(SpringCurve.defaultRestDelta), exclusiveMinimum: 0,
                          "The spring is at rest once |x − 1| stays within this."),
                parameter("restSpeed", "number", default: .number(SpringCurve.defaultRestSpeed), exclusiveMinimum: 0,
                          "The spring is at rest once |x'| stays within this (per second)."),
            ],
            examples: [
                object([("type", .string("spring")), ("response", .number(0.5)), ("dampingRatio", .number(0.8))]),
                object([("type", .string("spring")), ("stiffness", .number(170)), ("damping", .number(26))]),
                object([("type", .string("spring")), ("duration", .number(0.5)), ("bounce", .number(0.3))]),
                object([("type", .string("spring")), ("mass", .number(1)), ("tension", .number(300)),
                        ("friction", .number(20)), ("initialVelocity", .number(1))]),
            ]))

        return object([("easings", .array(entries))])
    }

    private static func modeDescription(_ mode: EaseMode) -> String {
        switch mode {
        case .in: return "accelerating from rest"
        case .out: return "decelerating to rest"
        case .inOut: return "accelerating, then decelerating"
        }
    }

    private static func object(_ pairs: [(String, JSON)]) -> JSON {
        .object(JSONObject(pairs))
    }

    private static func entry(
        _ name: String, _ description: String, form: String? = nil, objectType: String? = nil,
        parameters: [JSON] = [], examples: [JSON]
    ) -> JSON {
        var pairs: [(String, JSON)] = [("name", .string(name))]
        if let form { pairs.append(("form", .string(form))) }
        if let objectType { pairs.append(("object", .string(objectType))) }
        pairs.append(("description", .string(description)))
        pairs.append(("parameters", .array(parameters)))
        pairs.append(("examples", .array(examples)))
        return object(pairs)
    }

    private static func parameter(
        _ name: String, _ type: String, default value: JSON? = nil,
        minimum: Double? = nil, maximum: Double? = nil, exclusiveMinimum: Double? = nil,
        enumeration: [String]? = nil, _ description: String
    ) -> JSON {
        var pairs: [(String, JSON)] = [("name", .string(name)), ("type", .string(type))]
        if let value { pairs.append(("default", value)) }
        if let minimum { pairs.append(("minimum", .number(minimum))) }
        if let exclusiveMinimum { pairs.append(("exclusiveMinimum", .number(exclusiveMinimum))) }
        if let maximum { pairs.append(("maximum", .number(maximum))) }
        if let enumeration { pairs.append(("enum", .array(enumeration.map { .string($0) }))) }
        pairs.append(("description", .string(description)))
        return object(pairs)
    }
}
