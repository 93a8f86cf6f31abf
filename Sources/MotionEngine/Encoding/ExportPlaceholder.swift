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
    /// (`Track.evaluationCost`); 1 for a colour's channel, which reads its colour's instants
    /// (`colour`). The export's evaluation budget counts calls times this: counted as 1, a
    /// property under 1,000 additive layers held a compute thread about 7.8 s (debug build)
    /// for each placeholder naming it, and 1,000 placeholders passed the channel pre-check.
    var cost = 1
    /// The colour a colour channel reads: a call costs `cost` and, when the instant is new to
    /// the colour, `colour.renderCost` more (every track of the colour), which the export's
    /// budget charges as the renders happen (`ExportBudget.renderedCurves`).
    var colour: ColourInstants? = nil

    /// The most curves one call may evaluate: what the budget must hold before a call.
    var worstCost: Int { cost &+ (colour?.renderCost ?? 0) }
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

/// A colour output's value at the instants an export asks for, each rendered once for every
/// channel that names the colour (its four channels, the premultiplied ones that multiply
/// by alpha, every placeholder or component naming it).
///
/// A channel is reduced on its own, so without this the colour's tracks were all evaluated
/// for each channel at each instant: four to eight renders of the colour where one does.
/// The channels' scans share their instants (the same grid and segment starts), the
/// default tolerance's samples too, and a premultiplied channel asks twice in a row.
/// (Callgrind, release: the css export of two declarations of one elastic rgba tween, 8 s
/// at 60 fps, 1,631 → 285 million instructions with `Timeline.ColourRecipe`, 0.31 → 0.08 s;
/// `testColourExportsRenderEachInstantOnce` counts the renders.)
///
/// Bounded: the colours of one export keep at most `Store.capacity` instants between them
/// (a few MB); the next one forgets them all and they fill again, so a colour reduced
/// after another finds its own instants. The export's evaluation budget counts what is
/// done: a channel's call as one curve, and each render as the colour's `renderCost`
/// (`Store.renderedCurves`). Charging every call the colour's full cost instead refused a
/// css export of 50 staggered rgba colours after 12 (32 curves a colour against the
/// answer's 5,000,000 evaluations), where the renders of all 50 fit.
final class ColourInstants {
    /// The instants every colour of one export keeps.
    final class Store {
        static let capacity = 1 << 16
        fileprivate(set) var kept = 0
        /// Curves the colours have evaluated to render, in all (`renderCost` a render): what
        /// the export's budget charges for them (`ExportBudget.charge`).
        fileprivate(set) var renderedCurves = 0
        /// Weak: a channel's closure may hold its colour's instants after the export.
        private struct Member { weak var instants: ColourInstants? }
        private var members: [Member] = []

        init() {}

        fileprivate func join(_ instants: ColourInstants) {
            members.append(Member(instants: instants))
        }

        fileprivate func makeRoom() {
            guard kept >= Self.capacity else { return }
            for member in members { member.instants?.kept.removeAll() }
            kept = 0
        }
    }

    private let render: (Double) -> Colour
    /// What the export's colours keep, and have rendered, between them.
    let store: Store
    /// Curves one render evaluates: every track of the colour, each with its additive layers.
    let renderCost: Int
    private var kept: [UInt64: Colour] = [:]
    private var lastTime: UInt64 = Double.nan.bitPattern
    private var last = Colour(red: 0, green: 0, blue: 0)
    /// How many times the colour was rendered (for the tests).
    private(set) var renders = 0

    init(store: Store, renderCost: Int, _ render: @escaping (Double) -> Colour) {
        self.render = render
        self.store = store
        self.renderCost = renderCost
        store.join(self)
    }

    func colour(at t: Double) -> Colour {
        let key = t.bitPattern
        if key == lastTime { return last }
        let colour: Colour
        if let known = kept[key] {
            colour = known
        } else {
            colour = render(t)
            renders += 1
            store.renderedCurves &+= renderCost
            store.makeRoom()
            kept[key] = colour
            store.kept += 1
        }
        lastTime = key
        last = colour
        return colour
    }
}

/// Resolves placeholder paths against one compiled timeline.
struct ExportResolver {
    let timeline: Timeline
    /// The document at the window's start: the shape of every property, animated or not.
    let document: JSONObject
    /// Each colour output's instants, made when a placeholder first names it.
    private final class Instants {
        let store = ColourInstants.Store()
        var byOutput: [Int: ColourInstants] = [:]
    }
    private let instants = Instants()
    /// What the colours keep between them (for the tests).
    var colourStore: ColourInstants.Store { instants.store }

    init(_ timeline: Timeline) {
        self.timeline = timeline
        self.document = timeline.document(at: timeline.window.start)
    }

    /// The shared instants of colour output `index`.
    func colourInstants(output index: Int) -> ColourInstants {
        if let made = instants.byOutput[index] { return made }
        let output = timeline.outputs[index]
        let tracks = timeline.tracks
        let made = ColourInstants(store: instants.store, renderCost: colourCost(output: index)) { t in output.colour { tracks[$0].value(at: t) } ?? Colour(red: 0, green: 0, blue: 0) }
        instants.byOutput[index] = made
        return made
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
                guard rest.count == 1, let component = Colour.Component(rest[0]) else {
                    return .failure(ExportProblem("'\(path)' names no part of the colour '\(output.path)'; expected one of \(Colour.components.joined(separator: ", "))"))
                }
                let instants = colourInstants(output: index)
                return .success(.number(ExportChannel(value: { t in component.value(of: instants.colour(at: t)) },
                                                      hints: hints(ofOutput: index), isConstant: false, colour: instants)))
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
        let instants = colourInstants(output: index)
        let hints = hints(ofOutput: index)
        return [Colour.Component.red, .green, .blue, .alpha].map { component in
            ExportChannel(value: { t in clamp01(component.value(of: instants.colour(at: t))) }, hints: hints, isConstant: false, colour: instants)
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
