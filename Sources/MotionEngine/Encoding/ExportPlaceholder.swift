/// What a `{path}` placeholder of `output.css` or `output.lottie` names (docs/exports.md): a
/// number (a track, a part of a composite value, a colour component, or a property no motion
/// touches) or a whole colour. Each is an exact function of time built on the timeline's
/// tracks, so an exporter can evaluate it at any instant.
struct ExportChannel {
    /// The exact value at time t.
    let value: (Double) -> Double
    /// Times where the value may jump (the starts of the tracks' segments), for the reducer.
    let hints: [Double]
    /// Whether it never changes (a property no motion touches).
    let isConstant: Bool
    /// Curves one call of `value` evaluates: a track and each of its additive layers
    /// (`Track.evaluationCost`), every track of a colour for a colour's channel. The
    /// export's evaluation budget counts calls times this: counted as 1, a property under
    /// 1,000 additive layers held a compute thread about 7.8 s (debug build) for each
    /// placeholder naming it, and 1,000 placeholders passed the channel pre-check.
    var cost = 1
}

enum ExportPlaceholder {
    case number(ExportChannel)
    /// Red, green, blue and alpha in 0…1 (clamped: what a browser or player shows).
    case colour([ExportChannel])

    var channels: [ExportChannel] {
        switch self {
        case .number(let channel): return [channel]
        case .colour(let channels): return channels
        }
    }
}

/// Resolves placeholder paths against one compiled timeline.
struct ExportResolver {
    let timeline: Timeline
    /// The document at the window's start: the shape of every property, animated or not.
    let document: JSONObject

    init(_ timeline: Timeline) {
        self.timeline = timeline
        self.document = timeline.document(at: timeline.window.start)
    }

    /// The placeholder `path` names, or why it names nothing usable (a 422 message).
    func resolve(_ path: String) -> Result<ExportPlaceholder, ExportProblem> {
        let tracks = timeline.tracks
        if let index = tracks.firstIndex(where: { $0.path == path }) {
            return .success(.number(channel(track: index)))
        }
        guard let parsed = PropertyPath(path) else { return .failure(ExportProblem(PropertyPath.problem(path))) }
        for (index, output) in timeline.outputs.enumerated() {
            let base = output.path.segments
            guard parsed.segments.count >= base.count, Array(parsed.segments[..<base.count]) == base else { continue }
            let rest = Array(parsed.segments[base.count...])
            switch output.kind {
            case .colour:
                if rest.isEmpty { return .success(.colour(colourChannels(output: index))) }
                guard rest.count == 1, Colour.components.contains(rest[0]) else {
                    return .failure(ExportProblem("'\(path)' names no part of the colour '\(output.path)'; expected one of \(Colour.components.joined(separator: ", "))"))
                }
                let component = rest[0]
                let hints = hints(ofOutput: index)
                let output = timeline.outputs[index]
                let tracks = timeline.tracks
                return .success(.number(ExportChannel(value: { t in
                    (output.colour { tracks[$0].value(at: t) } ?? Colour(red: 0, green: 0, blue: 0))[component]
                }, hints: hints, isConstant: false, cost: colourCost(output: index))))
            case .value(let template, let leaves):
                guard let node = PropertyPath(segments: rest).lookup(inValue: template) else {
                    return .failure(ExportProblem("'\(path)' names no property of the document"))
                }
                guard case .number(let constant) = node else {
                    return .failure(composite(path, node))
                }
                if let leaf = leaves.first(where: { $0.relative == rest }) {
                    return .success(.number(channel(track: leaf.track)))
                }
                return .success(.number(ExportChannel(value: { _ in constant }, hints: [], isConstant: true)))
            }
        }
        // A property no motion touches: a constant.
        guard let node = parsed.lookup(in: document) else {
            if parsed.segments.count > 1, Colour.components.contains(parsed.segments[parsed.segments.count - 1]),
               case .string(let text)? = PropertyPath(segments: Array(parsed.segments.dropLast())).lookup(in: document),
               let colour = Colour(css: text) {
                let value = colour[parsed.segments[parsed.segments.count - 1]]
                return .success(.number(ExportChannel(value: { _ in value }, hints: [], isConstant: true)))
            }
            return .failure(ExportProblem("'\(path)' names no property of the document"))
        }
        switch node {
        case .number(let value):
            return .success(.number(ExportChannel(value: { _ in value }, hints: [], isConstant: true)))
        case .string(let text):
            guard let colour = Colour(css: text) else {
                return .failure(ExportProblem("'\(path)' is the string '\(text.prefix(40))', not a number or a colour"))
            }
            return .success(.colour([colour.red, colour.green, colour.blue, colour.alpha].map { channel in
                ExportChannel(value: { _ in clamp01(channel) }, hints: [], isConstant: true)
            }))
        default:
            return .failure(composite(path, node))
        }
    }

    private func composite(_ path: String, _ node: JSON) -> ExportProblem {
        let parts = ValueShape.leaves(of: node).prefix(3).map { ([path] + $0.relative).joined(separator: ".") }
        if parts.isEmpty { return ExportProblem("'\(path)' is \(node.typeDescription), not a number or a colour") }
        return ExportProblem("'\(path)' is \(ValueShape.describe(node)), not a number or a colour: name one of its numbers (\(parts.joined(separator: ", ")))")
    }

    private func channel(track index: Int) -> ExportChannel {
        let track = timeline.tracks[index]
        var hints = track.segments.map(\.start)
        hints.append(contentsOf: track.additive.map(\.segment.start))
        return ExportChannel(value: { track.value(at: $0) }, hints: hints, isConstant: false, cost: track.evaluationCost)
    }

    /// What rendering the colour of output `index` evaluates: each of its channels' tracks.
    private func colourCost(output index: Int) -> Int {
        guard case .colour(_, let channels) = timeline.outputs[index].kind else { return 1 }
        return max(1, channels.reduce(0) { $0 &+ timeline.tracks[$1.track].evaluationCost })
    }

    private func hints(ofOutput index: Int) -> [Double] {
        guard case .colour(_, let channels) = timeline.outputs[index].kind else { return [] }
        return channels.flatMap { channel(track: $0.track).hints }
    }

    private func colourChannels(output index: Int) -> [ExportChannel] {
        let output = timeline.outputs[index]
        let tracks = timeline.tracks
        let hints = hints(ofOutput: index)
        let cost = colourCost(output: index)
        return ["red", "green", "blue", "alpha"].map { component in
            ExportChannel(value: { t in
                clamp01((output.colour { tracks[$0].value(at: t) } ?? Colour(red: 0, green: 0, blue: 0))[component])
            }, hints: hints, isConstant: false, cost: cost)
        }
    }
}

/// A problem with an export option; the encoder adds the pointer.
struct ExportProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A declaration template: literal text and `{path}` placeholders (docs/exports.md).
struct ExportTemplate {
    enum Part {
        case text(String)
        case placeholder(String)
    }

    let parts: [Part]

    /// Most placeholders in one template, and longest template (bytes).
    static let maxPlaceholders = 64
    static let maxLength = 4096

    /// Parses `translate({dot.x}px, {dot.y}px)`. Literal text may not contain what would end
    /// the declaration or the rule (`;`, `{`, `}`), escapes, comments, quotes' ends of line or `<`.
    static func parse(_ text: String) -> Result<ExportTemplate, ExportProblem> {
        guard text.utf8.count <= maxLength else {
            return .failure(ExportProblem("is longer than \(maxLength) bytes"))
        }
        var parts: [Part] = []
        var literal = ""
        var placeholder: String?
        for character in text {
            if var name = placeholder {
                if character == "}" {
                    let trimmed = name.trimmingSpaces
                    guard !trimmed.isEmpty else { return .failure(ExportProblem("has an empty placeholder '{}'")) }
                    parts.append(.placeholder(trimmed))
                    placeholder = nil
                } else if character == "{" {
                    return .failure(ExportProblem("has a '{' inside a placeholder"))
                } else {
                    name.append(character)
                    placeholder = name
                }
                continue
            }
            switch character {
            case "{":
                if !literal.isEmpty { parts.append(.text(literal)); literal = "" }
                placeholder = ""
            case "}":
                return .failure(ExportProblem("has a '}' without its '{'"))
            case ";", "\\", "<", "\n", "\r", "\u{0C}":
                return .failure(ExportProblem("may not contain '\(character.unicodeScalars.first.map { $0.value < 32 ? "\\u{\(String($0.value, radix: 16))}" : String(character) } ?? "")' outside a placeholder"))
            default:
                literal.append(character)
            }
        }
        if placeholder != nil { return .failure(ExportProblem("has a '{' without its '}'")) }
        if !literal.isEmpty { parts.append(.text(literal)) }
        if literal.contains("/*") || parts.contains(where: { if case .text(let t) = $0 { return t.contains("/*") || t.contains("*/") } else { return false } }) {
            return .failure(ExportProblem("may not contain a comment"))
        }
        let count = parts.filter { if case .placeholder = $0 { return true } else { return false } }.count
        guard count <= maxPlaceholders else {
            return .failure(ExportProblem("has \(count) placeholders; at most \(maxPlaceholders)"))
        }
        return .success(ExportTemplate(parts: parts))
    }

    var placeholders: [String] {
        parts.compactMap { if case .placeholder(let name) = $0 { return name } else { return nil } }
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
