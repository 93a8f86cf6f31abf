extension SpringParameters {
    /// The four ways to give a spring's constants on the wire (docs/README.md), each named by its
    /// first field.
    public enum Form: String, Sendable, Equatable, CaseIterable {
        /// `{response, dampingRatio?}`
        case response
        /// `{stiffness, damping, mass?}`
        case stiffness
        /// `{duration, bounce?}`
        case duration
        /// `{mass, tension, friction}`
        case tension

        /// The fields that identify this form. `mass` is shared by `stiffness` and `tension`
        /// and identifies neither.
        public var identifyingKeys: [String] {
            switch self {
            case .response: return ["response", "dampingRatio"]
            case .stiffness: return ["stiffness", "damping"]
            case .duration: return ["duration", "bounce"]
            case .tension: return ["tension", "friction"]
            }
        }

        /// Every field of the form, for messages: `{stiffness, damping, mass?}`.
        public var signature: String {
            switch self {
            case .response: return "{response, dampingRatio}"
            case .stiffness: return "{stiffness, damping, mass?}"
            case .duration: return "{duration, bounce}"
            case .tension: return "{mass, tension, friction}"
            }
        }
    }

    /// Every field any form may read.
    public static let fieldNames = ["response", "dampingRatio", "stiffness", "damping", "mass",
                                    "duration", "bounce", "tension", "friction"]

    /// Reads whichever parameterisation `reader`'s object holds (docs/README.md), recording problems
    /// with their JSON pointers; nil after a problem or when none is present.
    ///
    /// It reads only the fields of the `allowed` forms (plus `mass` when `stiffness` or
    /// `tension` is allowed) and never calls `finish()`: a field of a form that is not
    /// allowed stays unread, so the caller can use it for its own purposes or let `finish()`
    /// report it as unknown. Which form is meant is decided by its identifying fields:
    /// - `response` or `dampingRatio` → `{response, dampingRatio}`; `dampingRatio` defaults to
    ///   1 (critically damped), `response` is required;
    /// - `stiffness` or `damping` → `{stiffness, damping, mass?}`; both required, mass
    ///   defaults to 1;
    /// - `duration` or `bounce` → `{duration, bounce}`; `bounce` defaults to 0 (critically
    ///   damped, as SwiftUI's `Spring(duration:)`), `duration` is required;
    /// - `tension` or `friction` → `{mass, tension, friction}`; all three required.
    ///
    /// Problems: no form at all (when `required`), a missing field of the chosen form or a
    /// wrong JSON type → malformed (400); two forms at once → invalid (422) naming both; a
    /// value out of range → invalid (422): mass, stiffness, tension, response, duration > 0;
    /// damping, friction ≥ 0; dampingRatio > 0 (0 never rests), or ≥ 0 with `allowsUndamped`
    /// (a spring node, which a `window` can sample for ever); bounce in (−1, 1); constants
    /// whose derived values overflow.
    public static func decode(
        from reader: ObjectReader, _ diagnostics: Diagnostics,
        allowed: Set<Form> = Set(Form.allCases), required: Bool = true, allowsUndamped: Bool = false
    ) -> SpringParameters? {
        let before = diagnostics.count
        let forms = Form.allCases.filter { allowed.contains($0) && $0.identifyingKeys.contains(where: reader.has) }
        let massAllowed = allowed.contains(.stiffness) || allowed.contains(.tension)

        guard let form = forms.first else {
            if massAllowed && reader.has("mass") {
                _ = reader.number("mass")
                let needs = [Form.stiffness, .tension].filter(allowed.contains).map(\.signature).joined(separator: " or ")
                diagnostics.malformed(reader.pointer, "mass alone is not a spring: give \(needs)")
            } else if required {
                let forms = Form.allCases.filter(allowed.contains).map(\.signature).joined(separator: " | ")
                diagnostics.malformed(reader.pointer, "needs spring parameters: \(forms)")
            }
            return nil
        }
        if forms.count > 1 {
            // Mark every field as known so the caller does not also call them unknown.
            for key in fieldNames where reader.has(key) { _ = reader.value(key) }
            let second = forms[1]
            let key = second.identifyingKeys.first(where: reader.has) ?? second.rawValue
            let names = forms.map { "\($0.signature) (\($0.identifyingKeys.filter(reader.has).map { "'\($0)'" }.joined(separator: ", ")))" }
            diagnostics.invalid(reader.pointer(key), "gives two spring parameterisations at once, \(names.joined(separator: " and ")): use exactly one")
            return nil
        }

        func positive(_ key: String, required: Bool) -> Double? {
            guard let n = reader.number(key, required: required) else { return nil }
            guard n > 0 else {
                diagnostics.invalid(reader.pointer(key), "must be positive, not \(format(n))")
                return nil
            }
            return n
        }

        var parameters: SpringParameters?
        switch form {
        case .response:
            let response = positive("response", required: true)
            var ratio: Double? = 1
            if let n = reader.number("dampingRatio") {
                if n > 0 || (n == 0 && allowsUndamped) {
                    ratio = n
                } else {
                    diagnostics.invalid(reader.pointer("dampingRatio"), n == 0
                        ? "must be positive, not 0: an undamped spring never comes to rest"
                        : "must be positive, not \(format(n))")
                    ratio = nil
                }
            }
            if let response, let ratio { parameters = .response(response, dampingRatio: ratio) }
        case .stiffness:
            let stiffness = positive("stiffness", required: true)
            let damping = reader.nonNegative("damping", required: true)
            let mass = reader.has("mass") ? positive("mass", required: false) : 1
            if let stiffness, let damping, let mass { parameters = .stiffness(stiffness, damping: damping, mass: mass) }
        case .duration:
            let duration = positive("duration", required: true)
            var bounce: Double? = 0
            if let n = reader.number("bounce") {
                if n > -1 && n < 1 {
                    bounce = n
                } else {
                    diagnostics.invalid(reader.pointer("bounce"), "must be greater than -1 and less than 1, not \(format(n))\(n >= 1 ? " (1 would never come to rest)" : "")")
                    bounce = nil
                }
            }
            if let duration, let bounce { parameters = .duration(duration, bounce: bounce) }
        case .tension:
            let mass = positive("mass", required: true)
            let tension = positive("tension", required: true)
            let friction = reader.nonNegative("friction", required: true)
            if let mass, let tension, let friction { parameters = .mass(mass, tension: tension, friction: friction) }
        }
        // A stray `mass` next to a form that has none.
        if massAllowed && (form == .response || form == .duration) && reader.has("mass") {
            _ = reader.value("mass")
            diagnostics.invalid(reader.pointer("mass"), "does not belong to \(form.signature); mass goes with {stiffness, damping, mass?} or {mass, tension, friction}")
        }

        guard diagnostics.count == before, let parameters else { return nil }
        let omegaSquared = parameters.stiffness / parameters.mass
        let rate = parameters.damping / parameters.mass
        guard omegaSquared.isFinite, omegaSquared > 0, rate.isFinite, parameters.dampingRatio.isFinite else {
            // At the first of the spring's fields (the object holds other members too: a
            // retarget's `path` and `to`, a node's properties).
            let field = fieldNames.first(where: reader.has).map(reader.pointer) ?? reader.pointer
            diagnostics.invalid(field, "these spring parameters are out of range: stiffness/mass and damping/mass must be finite and stiffness/mass positive")
            return nil
        }
        return parameters
    }
}
