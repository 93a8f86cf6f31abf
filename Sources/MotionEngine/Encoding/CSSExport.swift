/// The `css` and `waapi` formats (docs/exports.md): the timeline as CSS keyframes, or as what
/// `element.animate()` takes, from `output.css`
/// (`{"selector": ".ball", "name": "ball", "declarations": {"transform": "translate({x}px, 0)"}}`).
///
/// Every declaration becomes one animation whose keyframes come from the linear reduction
/// (`ExportKeyframes.linearUnion`), played with `linear` timing between keyframes, over the
/// window (a repeating or endless motion is exported as its window: one finite iteration).
///
/// Why linear segments and not per-keyframe `cubic-bezier()` timing functions: a cubic
/// Hermite segment *can* be written exactly as `cubic-bezier(1/3, y1, 2/3, y2)` (control
/// times at thirds make the Bézier's time linear in its parameter, so the curve is the
/// Hermite cubic), but a keyframe's timing function applies to every value of the keyframe
/// at once: a `transform` with several placeholders, or a colour's four channels, would need
/// one curve per channel, and a segment whose ends have equal values (a spring's peak
/// between two crossings) cannot be scaled at all. Linear segments are exact for every
/// declaration, every channel and every browser; the reduction keeps their count small.
enum CSSExport {
    /// Most declarations in `output.css.declarations`.
    static let maxDeclarations = 256
    static let maxSelectorLength = 1024

    struct Options {
        var selector = ".motion"
        var name = "motion"
        /// (property, template, pointer) in document order; nil: one custom property per track.
        var declarations: [(property: String, template: ExportTemplate, pointer: String)]?
    }

    /// One exported declaration.
    struct Declaration {
        /// The CSS property (`transform`, `--frame-x`).
        let property: String
        let template: ExportTemplate
        /// The template's distinct placeholders, in the order they first appear: a path named
        /// twice (`translate({x}px, {x}px)`) is one placeholder, reduced once.
        let placeholders: [ExportPlaceholder]
        /// For each placeholder of the template in turn, its index in `placeholders`.
        let slots: [Int]
        /// Where each of `placeholders` starts among a keyframe's channel values.
        private let firstChannels: [Int]
        /// Keyframes; nil when every placeholder is constant (the declaration goes in `style`).
        var keyframes: UnionKeyframes?
        /// A registered custom property (`@property`, `properties`): its initial value.
        var registered: String?

        init(property: String, template: ExportTemplate, placeholders: [ExportPlaceholder], slots: [Int], registered: String? = nil) {
            self.property = property
            self.template = template
            self.placeholders = placeholders
            self.slots = slots
            self.registered = registered
            var first = 0
            firstChannels = placeholders.map { placeholder in
                defer { first += placeholder.channels.count }
                return first
            }
        }

        /// The declaration's value with the channel values of one keyframe (those of
        /// `placeholders`, one after the other).
        func text(_ values: [Double]) -> String {
            var result = ""
            var index = 0
            for part in template.parts {
                switch part {
                case .text(let text):
                    result += text
                case .placeholder:
                    let slot = slots[index], first = firstChannels[slot]
                    switch placeholders[slot] {
                    case .number:
                        result += format(values[first])
                    case .colour:
                        result += CSSExport.colour(Array(values[first..<(first + 4)]))
                    }
                    index += 1
                }
            }
            return result
        }

        /// The most bytes one keyframe of the declaration takes, in a stylesheet or in
        /// `waapi`'s JSON: its property (and waapi's key), the template's literal text
        /// escaped, every placeholder the template names (a path named twice is written
        /// twice) at its longest, and the keyframe's own text (offset, punctuation, a jump's
        /// `animation-timing-function: step-start;`). The answer's size is checked against
        /// `--max-response-bytes` with it: counting 26 bytes a channel, a 500 KB document
        /// (one track with a 250,000-character path, 4,000 keyframes) wrote a 1 GB
        /// stylesheet and held 2 GB.
        var keyframeBytes: Int {
            var bytes = 96 + CSSExport.escapedLength(property) + CSSExport.escapedLength(WAAPIEncoder.keyframeKey(property))
            var index = 0
            for part in template.parts {
                switch part {
                case .text(let text):
                    bytes += CSSExport.escapedLength(text)
                case .placeholder:
                    if case .colour = placeholders[slots[index]] {
                        bytes += 16 + 4 * (JSONWriter.maxNumberBytes + 1)  // `rgb(R G B / A)`
                    } else {
                        bytes += JSONWriter.maxNumberBytes
                    }
                    index += 1
                }
            }
            return bytes
        }

        /// Every channel's value at t.
        func values(at t: Double) -> [Double] {
            placeholders.flatMap { $0.channels.map { $0.value(t) } }
        }
    }

    /// The bytes `text` takes as a JSON string (quotes and escapes), at least its own.
    static func escapedLength(_ text: String) -> Int {
        JSONWriter.withEscaped(text) { $0.count }
    }

    /// `rgb(R G B / A)` with channels in 0…255 written in full precision.
    static func colour(_ channels: [Double]) -> String {
        "rgb(\(format(channels[0] * 255)) \(format(channels[1] * 255)) \(format(channels[2] * 255)) / \(format(channels[3])))"
    }

    /// Decodes `output.css`: every problem is a 422 naming its member.
    static func decodeOptions(_ json: JSON?) throws(DocumentError) -> Options {
        var options = Options()
        guard let json else { return options }
        let pointer = "/output/css"
        guard case .object(let object) = json else {
            throw DocumentError([Problem(pointer: pointer, message: "must be an object, not \(json.typeDescription)", kind: .invalid)])
        }
        var problems: [Problem] = []
        func problem(_ key: String, _ message: String) {
            problems.append(Problem(pointer: JSONPointer.appending(pointer, key), message: message, kind: .invalid))
        }
        for (key, value) in object.pairs {
            switch key {
            case "selector":
                guard case .string(let text) = value else { problem(key, "must be a string, not \(value.typeDescription)"); continue }
                if let message = selectorProblem(text) { problem(key, message) } else { options.selector = text }
            case "name":
                guard case .string(let text) = value else { problem(key, "must be a string, not \(value.typeDescription)"); continue }
                if isIdentifier(text), !reservedNames.contains(text.lowercased()), text.utf8.count <= 128 {
                    options.name = text
                } else {
                    problem(key, "must be a CSS identifier of at most 128 characters (letters, digits, '-', '_', not starting with a digit, not a CSS keyword), not '\(text.prefix(40))'")
                }
            case "declarations":
                guard case .object(let declarations) = value else { problem(key, "must be an object, not \(value.typeDescription)"); continue }
                if declarations.count > maxDeclarations {
                    problem(key, "has \(declarations.count) declarations; at most \(maxDeclarations)")
                    continue
                }
                var list: [(property: String, template: ExportTemplate, pointer: String)] = []
                let base = JSONPointer.appending(pointer, key)
                for (property, template) in declarations.pairs {
                    let at = JSONPointer.appending(base, property)
                    guard isPropertyName(property) else {
                        problems.append(Problem(pointer: at, message: "'\(property.prefix(40))' is not a CSS property name", kind: .invalid))
                        continue
                    }
                    guard case .string(let text) = template else {
                        problems.append(Problem(pointer: at, message: "must be a string (a template with {path} placeholders), not \(template.typeDescription)", kind: .invalid))
                        continue
                    }
                    switch ExportTemplate.parse(text) {
                    case .success(let parsed): list.append((property, parsed, at))
                    case .failure(let failure): problems.append(Problem(pointer: at, message: failure.message, kind: .invalid))
                    }
                }
                options.declarations = list
            default:
                problem(key, "unknown member '\(key)' of output.css; expected selector, name or declarations")
            }
        }
        if !problems.isEmpty { throw DocumentError(problems) }
        return options
    }

    static let reservedNames: Set<String> = ["none", "initial", "inherit", "unset", "default", "revert", "revert-layer"]

    static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first else { return false }
        if first.properties.numericType != nil || ("0"..."9").contains(first) { return false }
        var scalars = text.unicodeScalars[...]
        if first == "-" {
            scalars = scalars.dropFirst()
            guard let second = scalars.first, second != "-", !("0"..."9").contains(second) else { return false }
        }
        return scalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
    }

    /// A standard property (`transform`, `background-color`, `-webkit-x`) or a custom one (`--x`).
    static func isPropertyName(_ text: String) -> Bool {
        guard text.utf8.count <= 128 else { return false }
        if text.hasPrefix("--") {
            return text.count > 2 && text.unicodeScalars.dropFirst(2).allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
            }
        }
        return isIdentifier(text)
    }

    /// Why a selector cannot be written into a stylesheet, or nil.
    static func selectorProblem(_ text: String) -> String? {
        if text.trimmingSpaces.isEmpty { return "must not be empty" }
        if text.utf8.count > maxSelectorLength { return "is longer than \(maxSelectorLength) bytes" }
        for forbidden in ["{", "}", ";", "\\", "<", "/*", "*/", "\n", "\r", "@"] where text.contains(forbidden) {
            return "may not contain '\(forbidden == "\n" ? "\\n" : forbidden == "\r" ? "\\r" : forbidden)'"
        }
        return nil
    }

    /// `--` and the track path with `.` (and anything a custom property name cannot hold) as `-`.
    static func customPropertyName(_ path: String) -> String {
        "--" + String(String.UnicodeScalarView(path.unicodeScalars.map { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
                ? scalar : "-"
        }))
    }

    /// The declarations with their keyframes.
    static func plan(_ timeline: Timeline) throws(DocumentError) -> (options: Options, declarations: [Declaration]) {
        let options = try decodeOptions(timeline.options.css)
        let resolver = ExportResolver(timeline)
        var declarations: [Declaration] = []
        var problems: [Problem] = []
        if let given = options.declarations {
            for entry in given {
                var placeholders: [ExportPlaceholder] = [], names: [String] = [], slots: [Int] = []
                for name in entry.template.placeholders {
                    if let known = names.firstIndex(of: name) {
                        slots.append(known)
                        continue
                    }
                    switch resolver.resolve(name) {
                    case .success(let placeholder):
                        slots.append(placeholders.count)
                        placeholders.append(placeholder)
                        names.append(name)
                    case .failure(let failure):
                        problems.append(Problem(pointer: entry.pointer, message: "placeholder {\(name)}: \(failure.message)", kind: .invalid))
                    }
                }
                declarations.append(Declaration(property: entry.property, template: entry.template, placeholders: placeholders, slots: slots))
            }
        } else {
            var seen: [String: String] = [:]
            for track in timeline.tracks {
                let name = customPropertyName(track.path)
                if let other = seen[name] {
                    problems.append(Problem(pointer: "/output/css", message: "tracks '\(other)' and '\(track.path)' would both be \(name); give output.css.declarations", kind: .invalid))
                    continue
                }
                seen[name] = track.path
                guard case .success(let placeholder) = resolver.resolve(track.path) else { continue }
                declarations.append(Declaration(property: name, template: ExportTemplate(parts: [.placeholder(track.path)]),
                                                placeholders: [placeholder], slots: [0], registered: ""))
            }
        }
        if !problems.isEmpty { throw DocumentError(problems) }

        var budget = ExportBudget(timeline: timeline)
        // Refuse at once what the evaluation budget cannot reduce: every channel costs at
        // least `ExportKeyframes.minimumEvaluations`.
        let animated = declarations.flatMap { $0.placeholders.flatMap(\.channels) }.filter { !$0.isConstant }
        try ExportKeyframes.checkChannelCount(animated, &budget)
        for index in declarations.indices {
            let declaration = declarations[index]
            if declaration.registered != nil {
                declarations[index].registered = format(declaration.values(at: timeline.window.start)[0])
            }
            let channels = declaration.placeholders.flatMap(\.channels)
            guard channels.contains(where: { !$0.isConstant }) else { continue }
            // A colour is reduced premultiplied (red·alpha, …, alpha): browsers interpolate
            // colours that way, so the composited colour stays within ε.
            let reduced = declaration.placeholders.flatMap { placeholder -> [ExportChannel] in
                guard case .colour(let rgba) = placeholder else { return placeholder.channels }
                return premultiplied(rgba)
            }
            var tolerances: [Double] = []
            for channel in reduced { tolerances.append(try ExportKeyframes.tolerance(channel, timeline, &budget)) }
            declarations[index].keyframes = try ExportKeyframes.linearUnion(channels, reducing: reduced, timeline, tolerances: tolerances,
                                                                            label: "\(declaration.property)",
                                                                            keyframeBytes: declaration.keyframeBytes, budget: &budget)
        }
        return (options, declarations)
    }

    /// A colour's channels as browsers interpolate them: red·alpha, green·alpha, blue·alpha
    /// and alpha.
    static func premultiplied(_ rgba: [ExportChannel]) -> [ExportChannel] {
        let alpha = rgba[3]
        return rgba.prefix(3).map { channel in
            // Both read one colour at one instant: the alpha is the colour's last instant
            // again (`ColourInstants`), a comparison rather than a curve.
            let shared = channel.colour != nil && channel.colour === alpha.colour
            return ExportChannel(value: { t in channel.value(t) * alpha.value(t) }, hints: channel.hints,
                                 isConstant: channel.isConstant && alpha.isConstant,
                                 cost: shared ? channel.cost : channel.cost &+ alpha.cost, colour: channel.colour ?? alpha.colour)
        } + [alpha]
    }

    /// The window's length in milliseconds.
    static func durationMilliseconds(_ timeline: Timeline) -> Double { (timeline.window.end - timeline.window.start) * 1000 }

    /// Keyframe offsets in 0…1 (a zero-length window: 0 then 1, holding its one value).
    static func offsets(_ keyframes: UnionKeyframes, _ timeline: Timeline) -> [Double] {
        let length = timeline.window.end - timeline.window.start
        guard length > 0 else { return keyframes.times.indices.map { $0 == 0 ? 0 : 1 } }
        var previous = 0.0
        return keyframes.times.map { t in
            let offset = min(1, max(previous, (t - timeline.window.start) / length))
            previous = offset
            return offset
        }
    }
}

/// `text/css`: `@property` rules (custom properties), one `@keyframes` per animated
/// declaration, and a rule for `selector` that plays them.
public enum CSSEncoder: TimelineFormatEncoder {
    public static let contentType = "text/css"

    /// A jump is written as a keyframe with the value before it and `step-start` timing,
    /// followed after this fraction of the window by the value after it: CSS merges keyframes
    /// with equal selectors, so two keyframes at one offset are impossible in a stylesheet.
    /// With `step-start` the value after the jump shows from the jump's instant on.
    static let jumpOffset = 1e-9

    public static func encode(timeline: Timeline) throws(DocumentError) -> [UInt8] {
        let (options, declarations) = try CSSExport.plan(timeline)
        // Written as bytes (not one `String` copied at the end): the answer is up to
        // `--max-response-bytes`, held once.
        var css: [UInt8] = []
        func add(_ text: String) { css.append(contentsOf: text.utf8) }
        for declaration in declarations where declaration.registered != nil {
            add("@property \(declaration.property) { syntax: '<number>'; inherits: false; initial-value: \(declaration.registered ?? "0"); }\n")
        }
        var names: [String] = []
        var constant: [String] = []
        for declaration in declarations {
            guard let keyframes = declaration.keyframes else {
                constant.append("  \(declaration.property): \(declaration.text(declaration.values(at: timeline.window.start)));\n")
                continue
            }
            let name = "\(options.name)-\(names.count)"
            names.append(name)
            add("@keyframes \(name) {\n")
            if timeline.window.end <= timeline.window.start || keyframes.times.count == 1 {
                // A window of one instant: its value throughout.
                add("  0%, 100% { \(declaration.property): \(declaration.text(keyframes.values[keyframes.values.count - 1])); }\n}\n")
                continue
            }
            let offsets = CSSExport.offsets(keyframes, timeline)
            var k = 0
            while k < keyframes.times.count {
                if k + 1 < keyframes.times.count, keyframes.times[k + 1] == keyframes.times[k] {
                    // Before the jump (step-start: the next keyframe's value from this instant on).
                    var at = offsets[k], after = offsets[k] + jumpOffset
                    if after > 1 { after = 1; at = 1 - jumpOffset }
                    add("  \(percent(at)) { \(declaration.property): \(declaration.text(keyframes.values[k])); animation-timing-function: step-start; }\n")
                    add("  \(percent(after)) { \(declaration.property): \(declaration.text(keyframes.values[k + 1])); }\n")
                    k += 2
                    continue
                }
                add("  \(percent(offsets[k])) { \(declaration.property): \(declaration.text(keyframes.values[k])); }\n")
                k += 1
            }
            add("}\n")
        }
        add("\(options.selector) {\n")
        add(constant.joined())
        if !names.isEmpty {
            add("  animation-name: \(names.joined(separator: ", "));\n")
            add("  animation-duration: \(format(CSSExport.durationMilliseconds(timeline)))ms;\n")
            add("  animation-timing-function: linear;\n")
            add("  animation-delay: 0s;\n")
            add("  animation-iteration-count: 1;\n")
            add("  animation-direction: normal;\n")
            add("  animation-fill-mode: both;\n")
        }
        add("}\n")
        return css
    }

    static func percent(_ offset: Double) -> String { "\(format(offset * 100))%" }
}

/// `application/json` for `element.animate()`: `properties` to register, constant `style`,
/// and one animation per animated declaration (times in milliseconds).
public enum WAAPIEncoder: TimelineFormatEncoder {
    public static let contentType = "application/json"

    public static func encode(timeline: Timeline) throws(DocumentError) -> [UInt8] {
        let (_, declarations) = try CSSExport.plan(timeline)
        var w = JSONWriter(capacity: 4096)
        w.raw("{\"properties\":[")
        var first = true
        for declaration in declarations where declaration.registered != nil {
            if !first { w.byte(UInt8(ascii: ",")) }
            first = false
            w.raw("{\"name\":")
            w.string(declaration.property)
            w.raw(",\"syntax\":\"<number>\",\"inherits\":false,\"initialValue\":")
            w.string(declaration.registered ?? "0")
            w.raw("}")
        }
        w.raw("],\"style\":{")
        first = true
        for declaration in declarations where declaration.keyframes == nil {
            if !first { w.byte(UInt8(ascii: ",")) }
            first = false
            w.key(declaration.property)
            w.string(declaration.text(declaration.values(at: timeline.window.start)))
        }
        w.raw("},\"animations\":[")
        first = true
        for declaration in declarations {
            guard var keyframes = declaration.keyframes else { continue }
            if !first { w.byte(UInt8(ascii: ",")) }
            first = false
            if timeline.window.end <= timeline.window.start || keyframes.times.count == 1 {
                // A window of one instant: its value throughout.
                keyframes.times = [timeline.window.start, timeline.window.end]
                keyframes.values = [keyframes.values[keyframes.values.count - 1], keyframes.values[keyframes.values.count - 1]]
            }
            let offsets = CSSExport.offsets(keyframes, timeline)
            let key = keyframeKey(declaration.property)
            w.raw("{\"property\":")
            w.string(declaration.property)
            w.raw(",\"keyframes\":[")
            for k in keyframes.times.indices {
                if k > 0 { w.byte(UInt8(ascii: ",")) }
                w.raw("{\"offset\":")
                w.number(offsets[k])
                w.byte(UInt8(ascii: ","))
                w.key(key)
                w.string(declaration.text(keyframes.values[k]))
                w.raw("}")
            }
            w.raw("],\"options\":{\"duration\":")
            w.number(CSSExport.durationMilliseconds(timeline))
            w.raw(",\"easing\":\"linear\",\"fill\":\"both\",\"iterations\":1}}")
        }
        w.raw("]}")
        return w.bytes
    }

    /// The keyframe key `element.animate()` expects: custom properties as written, others in
    /// camel case (`background-color` → `backgroundColor`, `float` → `cssFloat`).
    static func keyframeKey(_ property: String) -> String {
        if property.hasPrefix("--") { return property }
        if property == "float" { return "cssFloat" }
        var result = ""
        var upper = false
        for (index, character) in property.enumerated() {
            if character == "-" {
                upper = index > 0
                continue
            }
            result.append(upper ? Character(character.uppercased()) : character)
            upper = false
        }
        return result
    }
}
