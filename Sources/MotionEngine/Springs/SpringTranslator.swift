import Foundation

/// `POST /v1/springs`: reads one spring in any form, answers with every form, the metrics of
/// its motion from 0 to 1 and a CSS `linear()` easing.
///
/// Limits (each a 422 naming the field): every time (`response`, `duration`, `frequency`,
/// `visualDuration`, `peakTime`) in (0, 3600] s, `settlingTime` in [0.2, 3600] s (the
/// settling time lives on a 1 ms grid, and 1 ms is 0.5 % of 0.2 s); `stiffness`, `mass`,
/// `tension`, `damping` (of `stiffness-damping-mass`) and `friction` in (0, 1e12];
/// `dampingRatio` and react-spring's `damping` in (0, 1000]; `bounce` in (−1, 1);
/// `overshoot` in (0, 1); `velocity` within ±1e6; `restDelta` in [1e-9, 0.1]; `tolerance`
/// in [1e-6, 0.1]. The spring must settle within 3600 s, `ω0` lie in [1e-6, 1e8] rad/s, and
/// the easing needs at most `SpringLinearEasing.maximumStops` stops.
public enum SpringTranslator {
    public static let defaultRestDelta = 0.001
    public static let defaultTolerance = 0.001
    public static let maximumTime = 3600.0
    public static let minimumSettlingTime = 0.2
    public static let maximumConstant = 1e12
    public static let maximumRatio = 1000.0
    public static let maximumVelocity = 1e6
    public static let restDeltaRange: ClosedRange<Double> = 1e-9...0.1

    /// The options every form may carry.
    public static let optionNames = ["velocity", "restDelta", "tolerance"]

    /// A decoded request.
    public struct Request: Sendable, Equatable {
        public var form: SpringDescription.Form
        public var values: [String: Double]
        public var velocity: Double
        public var restDelta: Double
        public var tolerance: Double
    }

    /// Which form the members present make, or a problem naming the field.
    static func identify(_ present: Set<String>, pointer: (String) -> String, _ diagnostics: Diagnostics) -> SpringDescription.Form? {
        let forms = SpringDescription.Form.allCases
        let complete = forms.filter { Set($0.required).isSubset(of: present) }
        if complete.count > 1 {
            let first = complete[0], second = complete[1]
            let key = second.required.first { !first.members.contains($0) } ?? second.required[0]
            diagnostics.invalid(pointer(key), "gives two spring forms at once, \(first.signature) and \(second.signature): use exactly one")
            return nil
        }
        if let form = complete.first {
            let extra = present.subtracting(form.members).sorted()
            for key in extra {
                diagnostics.invalid(pointer(key), "does not belong to \(form.signature); give exactly one form")
            }
            return extra.isEmpty ? form : nil
        }
        let containing = forms.filter { present.isSubset(of: Set($0.members)) }
        if present.isEmpty {
            diagnostics.invalid("", "needs one spring form: " + forms.map(\.signature).joined(separator: ", "))
        } else if containing.count == 1, let form = containing.first {
            for key in form.required where !present.contains(key) {
                diagnostics.invalid(pointer(key), "is required by \(form.signature)")
            }
        } else if containing.count > 1 {
            diagnostics.invalid("", "an incomplete spring form: " + containing.map(\.signature).joined(separator: ", ") + " are the forms with " + present.sorted().joined(separator: ", "))
        } else {
            diagnostics.invalid("", "mixes members of several forms (" + present.sorted().joined(separator: ", ") + "); give exactly one of " + forms.map(\.signature).joined(separator: ", "))
        }
        return nil
    }

    /// Reads the body's object. Unknown members and non-numbers are 400s, as everywhere;
    /// everything else is a 422.
    public static func decode(_ reader: ObjectReader, _ diagnostics: Diagnostics) -> Request? {
        let before = diagnostics.count
        let allMembers = Set(SpringDescription.Form.allCases.flatMap(\.members))
        var numbers: [String: Double] = [:]
        for key in reader.object.keys where allMembers.contains(key) || optionNames.contains(key) {
            if let n = reader.number(key) { numbers[key] = n }
        }
        reader.finish()
        let present = Set(reader.object.keys.filter(allMembers.contains))
        let form = identify(present, pointer: reader.pointer, diagnostics)

        func check(_ key: String, _ ok: (Double) -> Bool, _ message: String) {
            guard let n = numbers[key] else { return }
            if !ok(n) {
                diagnostics.invalid(reader.pointer(key), "\(message), not \(format(n))")
                numbers[key] = nil
            }
        }
        let positiveTime = { (n: Double) in n > 0 && n <= maximumTime }
        let constant = { (n: Double) in n > 0 && n <= maximumConstant }
        for key in ["response", "duration", "frequency", "visualDuration", "peakTime"] {
            check(key, positiveTime, "must be greater than 0 and at most 3600 seconds")
        }
        check("settlingTime", { $0 >= minimumSettlingTime && $0 <= maximumTime },
              "must be from 0.2 to 3600 seconds (the settling time is counted on a 1 ms grid)")
        for key in ["stiffness", "mass", "tension", "friction"] {
            check(key, constant, "must be greater than 0 and at most 1e12")
        }
        let ratioMessage = "must be greater than 0 (an undamped spring never comes to rest) and at most 1000"
        check("dampingRatio", { $0 > 0 && $0 <= maximumRatio }, ratioMessage)
        if form == .frequencyDamping {
            check("damping", { $0 > 0 && $0 <= maximumRatio }, "is react-spring's damping ratio: " + ratioMessage)
        } else {
            check("damping", constant, "must be greater than 0 (an undamped spring never comes to rest) and at most 1e12")
        }
        check("bounce", { $0 > -1 && $0 < 1 }, "must be greater than -1 and less than 1")
        check("overshoot", { $0 > 0 && $0 < 1 }, "must be greater than 0 and less than 1 (a fraction of the distance)")
        check("velocity", { Swift.abs($0) <= maximumVelocity }, "must be within ±1e6 distances per second")
        check("restDelta", { restDeltaRange.contains($0) }, "must be from 1e-9 to 0.1 (a fraction of the distance)")
        check("tolerance", { SpringLinearEasing.toleranceRange.contains($0) }, "must be from 1e-6 to 0.1")

        guard let form, diagnostics.count == before else { return nil }
        if form == .stiffnessDampingMass, numbers["mass"] == nil { numbers["mass"] = 1 }
        var values: [String: Double] = [:]
        for key in form.members { values[key] = numbers[key] }
        return Request(form: form, values: values, velocity: numbers["velocity"] ?? 0,
                       restDelta: numbers["restDelta"] ?? defaultRestDelta,
                       tolerance: numbers["tolerance"] ?? defaultTolerance)
    }

    /// The spring a request describes, or a problem.
    public static func spring(_ request: Request) throws(DocumentError) -> SpringDescription {
        let form = request.form
        let value = { (key: String) in request.values[key] ?? .nan }
        let field = "/" + form.required[0]
        let spring: SpringDescription
        if form.isInverse {
            let inverse: SpringFit.Request
            switch form {
            case .overshootSettlingTime:
                inverse = .overshootSettlingTime(overshoot: value("overshoot"), settlingTime: value("settlingTime"))
            case .overshootPeakTime:
                inverse = .overshootPeakTime(overshoot: value("overshoot"), peakTime: value("peakTime"))
            default:
                inverse = .dampingRatioSettlingTime(dampingRatio: value("dampingRatio"), settlingTime: value("settlingTime"))
            }
            do {
                spring = try SpringFit.fit(inverse, velocity: request.velocity, restDelta: request.restDelta)
            } catch {
                switch error {
                case .unreachable(let key, let message):
                    throw DocumentError([Problem(pointer: "/" + key, message: message, kind: .invalid)])
                }
            }
        } else {
            guard let made = SpringDescription.forward(form, value) else {
                throw DocumentError([Problem(pointer: field, message: "not a spring", kind: .invalid)])
            }
            spring = made
        }
        let omega = spring.naturalFrequency, zeta = spring.dampingRatio
        guard omega.isFinite, zeta.isFinite, spring.stiffness.isFinite, spring.damping.isFinite,
              omega >= SpringFit.omegaRange.low, omega <= SpringFit.omegaRange.high, zeta > 0 else {
            throw DocumentError([Problem(pointer: field, message: "this spring is out of range: its natural frequency √(k/m) must be from 1e-6 to 1e8 rad/s and its damping ratio positive (it is \(format(omega)) rad/s, ratio \(format(zeta)))", kind: .invalid)])
        }
        return spring
    }

    /// The whole answer for a request.
    public static func answer(_ request: Request) throws(DocumentError) -> JSON {
        let spring = try spring(request)
        let field = "/" + request.form.required[0]
        let kernel = spring.kernel(velocity: request.velocity)
        let metrics: SpringMotionMetrics
        do {
            metrics = try SpringMotionMetrics.measure(kernel, restDelta: request.restDelta, maxRestTime: maximumTime)
        } catch {
            throw DocumentError([Problem(pointer: field, message: error.message + " with this restDelta", kind: .invalid)])
        }
        let easing: SpringLinearEasing
        do {
            easing = try SpringLinearEasing(kernel: kernel, duration: metrics.settlingTime, tolerance: request.tolerance)
        } catch {
            let message: String
            switch error {
            case .tooManyStops(let limit):
                message = "the linear() easing would need more than \(limit) stops at this tolerance; raise it"
            case .notWithinTolerance(let deviation):
                message = "no linear() easing within this tolerance was found (the closest deviates by \(format(deviation))); raise it"
            }
            throw DocumentError([Problem(pointer: "/tolerance", message: message, kind: .invalid)])
        }
        return answer(spring, metrics, easing)
    }

    static func answer(_ spring: SpringDescription, _ metrics: SpringMotionMetrics, _ easing: SpringLinearEasing) -> JSON {
        func number(_ n: Double?) -> JSON { n.map { JSON.number($0) } ?? .null }
        var forms: [(String, JSON)] = []
        for form in SpringDescription.Form.forward {
            if let members = spring.members(of: form) {
                let entry = JSON.object(JSONObject(members.map { ($0.0, JSON.number($0.1)) }))
                forms.append((form.rawValue, accepts(entry, hasMass: members.contains { $0.0 == "mass" }, as: spring) ? entry : .null))
            } else {
                forms.append((form.rawValue, .null))
            }
        }
        return .object(JSONObject([
            ("mass", .number(spring.mass)),
            ("stiffness", .number(spring.stiffness)),
            ("damping", .number(spring.damping)),
            ("dampingRatio", .number(spring.dampingRatio)),
            ("naturalFrequency", .number(spring.naturalFrequency)),
            ("dampedPeriod", number(spring.dampedPeriod)),
            ("overshoot", .number(metrics.overshoot)),
            ("peakTime", number(metrics.peakTime)),
            ("settlingTime", .number(metrics.settlingTime)),
            ("forms", .object(JSONObject(forms))),
            ("easing", .object(JSONObject([
                ("css", .string(easing.css)),
                ("duration", .number(easing.duration)),
                ("error", .number(easing.error)),
            ]))),
        ]))
    }

    /// Whether a form's `entry`, posted back, is accepted (the same checks as a
    /// request's) and describe `spring` again: the same ω0 and ζ, and mass where the form
    /// has one, to 1e−9 relative. Otherwise the form is answered as null, so that every entry
    /// of `forms` can be posted back. Two ways a form fails: its numbers fall outside its own
    /// limits (a light, stiff spring accepted as `stiffness-damping-mass` at k = 1e12,
    /// m = 1e-3 has `stiffness-dampingRatio`'s stiffness ω0² = 1e15, over 1e12); or they cannot
    /// carry the spring that precisely (ζ = 5.5e8 as `bounce` = 1/ζ − 1 = −0.9999999982 comes
    /// back 1.1e-8 off).
    static func accepts(_ entry: JSON, hasMass: Bool, as spring: SpringDescription) -> Bool {
        let diagnostics = Diagnostics()
        guard let reader = ObjectReader.expecting(entry, at: "", diagnostics),
              let request = decode(reader, diagnostics), diagnostics.isEmpty,
              let back = try? self.spring(request) else { return false }
        func same(_ a: Double, _ b: Double) -> Bool { Swift.abs(a - b) <= 1e-9 * Swift.abs(b) }
        return same(back.naturalFrequency, spring.naturalFrequency) && same(back.dampingRatio, spring.dampingRatio)
            && (!hasMass || same(back.mass, spring.mass))
    }

    /// Parses and answers a body: the JSON text of the answer, or the problems (400 for
    /// malformed JSON, a non-object, a non-number or an unknown member; 422 otherwise).
    public static func translate(_ body: [UInt8]) throws(DocumentError) -> [UInt8] {
        let json: JSON
        do {
            json = try JSONParser.parse(body)
        } catch {
            throw DocumentError([Problem(pointer: "", message: "malformed JSON at byte \(error.offset): \(error.message)", kind: .malformed)])
        }
        let diagnostics = Diagnostics()
        guard let reader = ObjectReader.expecting(json, at: "", diagnostics),
              let request = decode(reader, diagnostics), diagnostics.isEmpty else {
            throw DocumentError(diagnostics)
        }
        return try answer(request).serialized
    }
}
