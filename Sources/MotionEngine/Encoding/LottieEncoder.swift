/// The `lottie` format (docs/exports.md): a Bodymovin 5.x animation of shape layers (a rectangle or
/// an ellipse with a fill) whose transform and fill colour follow the timeline, from
/// `output.lottie` (`{"width", "height", "layers": [{"name", "shape", "size", "fill",
/// "position", "rotation", "scale", "opacity", "anchor"}]}`).
///
/// Frames: `fr` is the document's fps, `ip` 0, `op` the window's length in frames, and
/// keyframe times are `(t − window.start)·fps` (fractional where the reduction put them).
///
/// Keyframes come from the cubic reduction (`KeyframeReducer`, cubic Hermite segments with
/// the exact slopes). A Hermite segment from (t0, v0, slope m0) to (t1, v1, m1) is exactly a
/// Lottie bezier easing with handles `o = (1/3, m0·h/(3Δv))`, `i = (2/3, 1 − m1·h/(3Δv))`
/// (h = t1 − t0, Δv = v1 − v0): control times at thirds make the Bézier's time linear in its
/// parameter, so value against time is the Hermite cubic itself. Δv = 0 cannot be scaled, so
/// every segment is first split at its turning points (an exact split: the pieces are the
/// same cubic), after which each piece is monotone and Δv = 0 only where it is constant.
///
/// One easing applies to every component of a keyframe (players differ on per-component
/// handles), so the position is written split (`"s": true`, x and y each a scalar property
/// with its own curve) and the scale is uniform. The fill colour's three channels share one
/// easing per keyframe when that stays within ε (`sharedCubic`), else linear keyframes at
/// the union of their reduced times (`ExportKeyframes.linearUnion`); the colour's alpha is
/// the fill's opacity, a scalar of its own.
public enum LottieEncoder: TimelineFormatEncoder {
    public static let contentType = "application/json"

    static let maxLayers = 256
    static let maxCanvas = 100_000.0

    enum Shape: String { case rect, ellipse }

    /// A layer property: a number, or a placeholder naming a number.
    enum Scalar {
        case constant(Double)
        case channel(ExportChannel, path: String)
    }

    struct Layer {
        var name: String
        var shape = Shape.rect
        var size = (100.0, 100.0)
        var fill: ExportPlaceholder = .colour([0.0, 0, 0, 1].map { v in ExportChannel(value: { _ in v }, hints: [], isConstant: true) })
        var position: (Scalar, Scalar)?
        var rotation = Scalar.constant(0)
        var scale = Scalar.constant(1)
        var opacity = Scalar.constant(1)
        var anchor = (0.0, 0.0)
    }

    public static func encode(timeline: Timeline) throws(DocumentError) -> [UInt8] {
        let (width, height, layers) = try decode(timeline)
        var budget = ExportBudget(timeline: timeline)
        var animated: [ExportChannel] = []
        for layer in layers {
            for scalar in [layer.position?.0, layer.position?.1, layer.rotation, layer.scale, layer.opacity] {
                if case .channel(let channel, _)? = scalar, !channel.isConstant { animated.append(channel) }
            }
            animated += layer.fill.channels.filter { !$0.isConstant }
        }
        try ExportKeyframes.checkChannelCount(animated, &budget)
        let fps = timeline.fps
        let frames = (timeline.window.end - timeline.window.start) * fps
        var w = JSONWriter(capacity: 4096)
        w.raw("{\"v\":\"5.7.0\",\"nm\":\"MotionServer\",\"ddd\":0,\"fr\":")
        w.number(fps)
        w.raw(",\"ip\":0,\"op\":")
        w.number(frames)
        w.raw(",\"w\":")
        w.number(width)
        w.raw(",\"h\":")
        w.number(height)
        w.raw(",\"assets\":[],\"layers\":[")
        for (index, layer) in layers.enumerated() {
            if index > 0 { w.byte(UInt8(ascii: ",")) }
            w.raw("{\"ddd\":0,\"ty\":4,\"ind\":")
            w.integer(index + 1)
            w.raw(",\"nm\":")
            w.string(layer.name)
            w.raw(",\"sr\":1,\"ao\":0,\"bm\":0,\"ip\":0,\"op\":")
            w.number(frames)
            w.raw(",\"st\":0,\"ks\":{\"a\":{\"a\":0,\"k\":[")
            w.number(layer.anchor.0)
            w.byte(UInt8(ascii: ","))
            w.number(layer.anchor.1)
            w.raw("]},\"p\":")
            let position = layer.position ?? (.constant(width / 2), .constant(height / 2))
            w.raw("{\"s\":true,\"x\":")
            try scalarProperty(position.0, scale: 1, timeline, &budget, into: &w)
            w.raw(",\"y\":")
            try scalarProperty(position.1, scale: 1, timeline, &budget, into: &w)
            w.raw("},\"s\":")
            try scalarProperty(layer.scale, scale: 100, dimensions: 2, timeline, &budget, into: &w)
            w.raw(",\"r\":")
            try scalarProperty(layer.rotation, scale: 1, timeline, &budget, into: &w)
            w.raw(",\"o\":")
            try scalarProperty(layer.opacity, scale: 100, timeline, &budget, into: &w)
            w.raw("},\"shapes\":[{\"ty\":\"gr\",\"nm\":\"shape\",\"it\":[{\"ty\":")
            w.raw(layer.shape == .rect ? "\"rc\",\"nm\":\"rect\",\"r\":{\"a\":0,\"k\":0}" : "\"el\",\"nm\":\"ellipse\"")
            w.raw(",\"p\":{\"a\":0,\"k\":[0,0]},\"s\":{\"a\":0,\"k\":[")
            w.number(layer.size.0)
            w.byte(UInt8(ascii: ","))
            w.number(layer.size.1)
            w.raw("]}},{\"ty\":\"fl\",\"nm\":\"fill\",\"r\":1,\"c\":")
            let rgba = layer.fill.channels
            try colourProperty(Array(rgba.prefix(3)), timeline, &budget, label: "the fill of layer '\(layer.name)'", into: &w)
            w.raw(",\"o\":")
            try scalarProperty(rgba[3].isConstant ? .constant(rgba[3].value(timeline.window.start)) : .channel(rgba[3], path: "fill alpha"),
                               scale: 100, timeline, &budget, into: &w)
            w.raw("},{\"ty\":\"tr\",\"a\":{\"a\":0,\"k\":[0,0]},\"p\":{\"a\":0,\"k\":[0,0]},\"s\":{\"a\":0,\"k\":[100,100]},\"r\":{\"a\":0,\"k\":0},\"o\":{\"a\":0,\"k\":100}}]}]}")
        }
        w.raw("]}")
        return w.bytes
    }

    // MARK: - Properties

    static func frame(_ t: Double, _ timeline: Timeline) -> Double { (t - timeline.window.start) * timeline.fps }

    /// A scalar property (`dimensions` copies of the value: 2 for a uniform scale), cubic.
    static func scalarProperty(_ scalar: Scalar, scale: Double, dimensions: Int = 1, _ timeline: Timeline,
                               _ budget: inout ExportBudget, into w: inout JSONWriter) throws(DocumentError) {
        func vector(_ value: Double) {
            w.byte(UInt8(ascii: "["))
            for d in 0..<dimensions {
                if d > 0 { w.byte(UInt8(ascii: ",")) }
                w.number(value * scale)
            }
            w.byte(UInt8(ascii: "]"))
        }
        guard case .channel(let channel, let path) = scalar, !channel.isConstant else {
            var value = 0.0
            switch scalar {
            case .constant(let v): value = v
            case .channel(let channel, _): value = channel.value(timeline.window.start)
            }
            w.raw("{\"a\":0,\"k\":")
            if dimensions == 1 { w.number(value * scale) } else { vector(value) }
            w.raw("}")
            return
        }
        let tolerance = try ExportKeyframes.tolerance(channel, timeline, &budget)
        let reduced = try ExportKeyframes.reduce(channel, timeline, tolerance: tolerance, cubic: true,
                                                 label: "'\(path)'", budget: &budget)
        let keys = monotonePieces(reduced)
        // `{"t":…,"s":[…],"o":{"x":[…],"y":[…]},"i":{"x":[…],"y":[…]}}`: the time, the
        // value's copies and four handle numbers, each at its longest.
        try budget.spend(keyframes: keys.count, each: 48 + (5 + dimensions) * (JSONWriter.maxNumberBytes + 1))
        w.raw("{\"a\":1,\"k\":[")
        for k in keys.indices {
            if k > 0 { w.byte(UInt8(ascii: ",")) }
            let key = keys[k]
            w.raw("{\"t\":")
            w.number(frame(key.t, timeline))
            w.raw(",\"s\":")
            vector(key.v)
            if k + 1 < keys.count {
                let next = keys[k + 1]
                let h = next.t - key.t
                if h <= 0 {
                    w.raw(",\"h\":1")
                } else {
                    let (y1, y2) = handles(key.v, key.slopeOut, next.v, next.slopeIn, h)
                    w.raw(",\"o\":{\"x\":[")
                    w.number(1.0 / 3)
                    w.raw("],\"y\":[")
                    w.number(y1)
                    w.raw("]},\"i\":{\"x\":[")
                    w.number(2.0 / 3)
                    w.raw("],\"y\":[")
                    w.number(y2)
                    w.raw("]}")
                }
            }
            w.raw("}")
        }
        w.raw("]}")
    }

    /// The normalised bezier handles' values of one Hermite segment (see the type's comment).
    static func handles(_ v0: Double, _ m0: Double, _ v1: Double, _ m1: Double, _ h: Double) -> (Double, Double) {
        let delta = v1 - v0
        guard abs(delta) > 1e-12 * max(1, abs(v0), abs(v1)) else { return (1.0 / 3, 2.0 / 3) }
        let (y1, y2) = (m0 * h / (3 * delta), 1 - m1 * h / (3 * delta))
        // Finite for any curve the engine computes; never write a non-number.
        guard y1.isFinite, y2.isFinite else { return (1.0 / 3, 2.0 / 3) }
        return (y1, y2)
    }

    struct Key {
        var t: Double
        var v: Double
        var slopeIn: Double
        var slopeOut: Double
    }

    /// The reduced keyframes with every Hermite segment split at its turning points.
    static func monotonePieces(_ reduced: ReducedTrack) -> [Key] {
        let slopes = reduced.slopes ?? reduced.times.map { _ in ReducedTrack.Slope(incoming: 0, outgoing: 0) }
        var keys: [Key] = []
        for k in reduced.times.indices {
            let key = Key(t: reduced.times[k], v: reduced.values[k], slopeIn: slopes[k].incoming, slopeOut: slopes[k].outgoing)
            if let previous = keys.last, key.t > previous.t {
                let h = key.t - previous.t
                let (v0, m0, v1, m1) = (previous.v, previous.slopeOut * h, key.v, key.slopeIn * h)
                let delta = v1 - v0
                // p'(u) = a·u² + b·u + c on u ∈ [0, 1].
                let a = 3 * (-2 * delta + m0 + m1), b = 2 * (3 * delta - 2 * m0 - m1), c = m0
                var roots: [Double] = []
                if abs(a) > 1e-12 * (abs(b) + abs(c) + 1e-300) {
                    let discriminant = b * b - 4 * a * c
                    if discriminant >= 0 {
                        let q = -0.5 * (b + (b >= 0 ? 1 : -1) * discriminant.squareRoot())
                        roots = [q / a, q != 0 ? c / q : -1]
                    }
                } else if b != 0 {
                    roots = [-c / b]
                }
                for u in roots.filter({ $0 > 1e-6 && $0 < 1 - 1e-6 }).sorted() {
                    let u2 = u * u, u3 = u2 * u
                    let value = (2 * u3 - 3 * u2 + 1) * v0 + (u3 - 2 * u2 + u) * m0 + (-2 * u3 + 3 * u2) * v1 + (u3 - u2) * m1
                    let derivative = ((6 * u2 - 6 * u) * v0 + (3 * u2 - 4 * u + 1) * m0 + (-6 * u2 + 6 * u) * v1 + (3 * u2 - 2 * u) * m1) / h
                    keys.append(Key(t: previous.t + u * h, v: value, slopeIn: derivative, slopeOut: derivative))
                }
            }
            keys.append(key)
        }
        return keys
    }

    /// The fill colour: linear keyframes at the union of the channels' times.
    static func colourProperty(_ channels: [ExportChannel], _ timeline: Timeline, _ budget: inout ExportBudget, label: String,
                               into w: inout JSONWriter) throws(DocumentError) {
        func colour(_ values: [Double]) {
            w.byte(UInt8(ascii: "["))
            for (i, v) in values.enumerated() {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                w.number(v)
            }
            w.byte(UInt8(ascii: "]"))
        }
        guard channels.contains(where: { !$0.isConstant }) else {
            w.raw("{\"a\":0,\"k\":")
            colour(channels.map { $0.value(timeline.window.start) })
            w.raw("}")
            return
        }
        var tolerances: [Double] = []
        for channel in channels { tolerances.append(try ExportKeyframes.tolerance(channel, timeline, &budget)) }
        if let shared = try sharedCubic(channels, timeline, tolerances: tolerances, label: label, budget: &budget) {
            try budget.spend(keyframes: shared.times.count, each: 48 + (5 + channels.count) * (JSONWriter.maxNumberBytes + 1))
            w.raw("{\"a\":1,\"k\":[")
            for k in shared.times.indices {
                if k > 0 { w.byte(UInt8(ascii: ",")) }
                w.raw("{\"t\":")
                w.number(frame(shared.times[k], timeline))
                w.raw(",\"s\":")
                colour(shared.values[k])
                if k < shared.handles.count {
                    w.raw(",\"o\":{\"x\":[")
                    w.number(1.0 / 3)
                    w.raw("],\"y\":[")
                    w.number(shared.handles[k].0)
                    w.raw("]},\"i\":{\"x\":[")
                    w.number(2.0 / 3)
                    w.raw("],\"y\":[")
                    w.number(shared.handles[k].1)
                    w.raw("]}")
                }
                w.raw("}")
            }
            w.raw("]}")
            return
        }
        let keyframes = try ExportKeyframes.linearUnion(channels, timeline, tolerances: tolerances, label: label,
                                                        keyframeBytes: 64 + (1 + channels.count) * (JSONWriter.maxNumberBytes + 1), budget: &budget)
        w.raw("{\"a\":1,\"k\":[")
        for k in keyframes.times.indices {
            if k > 0 { w.byte(UInt8(ascii: ",")) }
            w.raw("{\"t\":")
            w.number(frame(keyframes.times[k], timeline))
            w.raw(",\"s\":")
            colour(keyframes.values[k])
            if k + 1 < keyframes.times.count {
                if keyframes.times[k + 1] <= keyframes.times[k] {
                    w.raw(",\"h\":1")
                } else {
                    w.raw(",\"o\":{\"x\":[0],\"y\":[0]},\"i\":{\"x\":[1],\"y\":[1]}")
                }
            }
            w.raw("}")
        }
        w.raw("]}")
    }

    /// A colour's channels as one cubic property with one easing per keyframe, when that is
    /// exact enough: each channel is reduced cubic within ε/2, the keyframes are the union of
    /// their times and of every channel's turning points (each channel's Hermite cubic split
    /// exactly there), and a segment takes the handles of the channel that moves most. Another
    /// channel's curve with those handles differs from its own by at most
    /// 4/9·|Δv|·(|Δy1| + |Δy2|) (the largest Bernstein weight of a handle); when that exceeds
    /// its ε/2 anywhere — channels eased differently — or a channel jumps, nil: the caller
    /// writes linear keyframes. A whole-colour tween (every channel on one easing) is cubic.
    static func sharedCubic(_ channels: [ExportChannel], _ timeline: Timeline, tolerances: [Double], label: String,
                            budget: inout ExportBudget) throws(DocumentError) -> (times: [Double], values: [[Double]], handles: [(Double, Double)])? {
        guard timeline.window.end > timeline.window.start else { return nil }
        var curves: [[Key]?] = []
        var times: [Double] = [timeline.window.start, timeline.window.end]
        for (index, channel) in channels.enumerated() {
            guard !channel.isConstant else { curves.append(nil); continue }
            let reduced = try ExportKeyframes.reduce(channel, timeline, tolerance: tolerances[index] / 2, shown: tolerances[index],
                                                     cubic: true, label: label, budget: &budget)
            let keys = monotonePieces(reduced)
            for k in 1..<max(1, keys.count) where keys[k].t <= keys[k - 1].t { return nil }  // a jump
            times.append(contentsOf: keys.map(\.t))
            curves.append(keys)
        }
        times.sort()
        var union: [Double] = []
        for t in times where union.last.map({ t - $0 > ExportKeyframes.mergeDistance }) ?? true { union.append(t) }
        guard union.count >= 2 else { return nil }
        // Each channel's value and slope at every union time, on its own Hermite cubic.
        var samples: [[(v: Double, m: Double)]] = []
        for (index, curve) in curves.enumerated() {
            guard let keys = curve, keys.count >= 2 else {
                let v = channels[index].value(timeline.window.start)
                samples.append(union.map { _ in (v, 0) })
                continue
            }
            var row: [(v: Double, m: Double)] = []
            var segment = 0
            for t in union {
                while segment + 2 < keys.count, keys[segment + 1].t <= t { segment += 1 }
                let (k0, k1) = (keys[segment], keys[segment + 1])
                let h = k1.t - k0.t
                let u = min(1, max(0, (t - k0.t) / h))
                let u2 = u * u, u3 = u2 * u
                let (m0, m1) = (k0.slopeOut * h, k1.slopeIn * h)
                let v = (2 * u3 - 3 * u2 + 1) * k0.v + (u3 - 2 * u2 + u) * m0 + (-2 * u3 + 3 * u2) * k1.v + (u3 - u2) * m1
                let d = ((6 * u2 - 6 * u) * k0.v + (3 * u2 - 4 * u + 1) * m0 + (-6 * u2 + 6 * u) * k1.v + (3 * u2 - 2 * u) * m1) / h
                row.append((v, d))
            }
            samples.append(row)
        }
        var easings: [(Double, Double)] = []
        for k in 0..<(union.count - 1) {
            let h = union[k + 1] - union[k]
            let deltas = samples.map { $0[k + 1].v - $0[k].v }
            guard let lead = deltas.indices.max(by: { abs(deltas[$0]) < abs(deltas[$1]) }) else { return nil }
            let shared = Self.handles(samples[lead][k].v, samples[lead][k].m, samples[lead][k + 1].v, samples[lead][k + 1].m, h)
            for c in samples.indices where c != lead {
                let own = Self.handles(samples[c][k].v, samples[c][k].m, samples[c][k + 1].v, samples[c][k + 1].m, h)
                let bound = 4.0 / 9 * abs(deltas[c]) * (abs(own.0 - shared.0) + abs(own.1 - shared.1))
                if bound > tolerances[c] / 2 { return nil }
            }
            easings.append(shared)
        }
        var values: [[Double]] = []
        for k in union.indices { values.append(samples.map { $0[k].v }) }
        return (union, values, easings)
    }

    // MARK: - Options

    /// Decodes `output.lottie`; every problem is a 422 naming its member.
    static func decode(_ timeline: Timeline) throws(DocumentError) -> (Double, Double, [Layer]) {
        let pointer = "/output/lottie"
        var problems: [Problem] = []
        func problem(_ at: String, _ message: String) { problems.append(Problem(pointer: at, message: message, kind: .invalid)) }
        guard let json = timeline.options.lottie else {
            throw DocumentError([Problem(pointer: pointer, message: "is required by the lottie format: {width, height, layers: [...]}", kind: .invalid)])
        }
        guard case .object(let object) = json else {
            throw DocumentError([Problem(pointer: pointer, message: "must be an object, not \(json.typeDescription)", kind: .invalid)])
        }
        let resolver = ExportResolver(timeline)
        func size(_ key: String, in object: JSONObject, at base: String) -> Double? {
            guard let value = object[key] else { problem(JSONPointer.appending(base, key), "is required"); return nil }
            guard case .number(let n) = value else { problem(JSONPointer.appending(base, key), "must be a number, not \(value.typeDescription)"); return nil }
            guard n > 0, n <= maxCanvas else { problem(JSONPointer.appending(base, key), "must be greater than 0 and at most \(format(maxCanvas)), not \(format(n))"); return nil }
            return n
        }
        func pair(_ value: JSON, at: String, positive: Bool) -> (Double, Double)? {
            guard case .array(let items) = value, items.count == 2 else { problem(at, "must be an array of two numbers, not \(value.typeDescription)"); return nil }
            var numbers: [Double] = []
            for (i, item) in items.enumerated() {
                guard case .number(let n) = item else { problem(JSONPointer.appending(at, i), "must be a number, not \(item.typeDescription)"); return nil }
                guard abs(n) <= maxCanvas, !positive || n >= 0 else { problem(JSONPointer.appending(at, i), positive ? "must be between 0 and \(format(maxCanvas))" : "must be within ±\(format(maxCanvas))"); return nil }
                numbers.append(n)
            }
            return (numbers[0], numbers[1])
        }
        func scalar(_ value: JSON, at: String) -> Scalar? {
            switch value {
            case .number(let n):
                guard abs(n) <= ObjectReader.maximumMagnitude else { problem(at, "must be within ±1e15"); return nil }
                return .constant(n)
            case .string(let text):
                guard let name = placeholderName(text) else { problem(at, "must be a number or one placeholder \"{path}\", not '\(text.prefix(40))'"); return nil }
                switch resolver.resolve(name) {
                case .success(.number(let channel)): return .channel(channel, path: name)
                case .success(.colour): problem(at, "{\(name)} is a colour; a number is needed here"); return nil
                case .failure(let failure): problem(at, "placeholder {\(name)}: \(failure.message)"); return nil
                }
            default:
                problem(at, "must be a number or a placeholder \"{path}\", not \(value.typeDescription)")
                return nil
            }
        }
        var width: Double?, height: Double?
        var layers: [Layer] = []
        for (key, value) in object.pairs {
            let at = JSONPointer.appending(pointer, key)
            switch key {
            case "width": width = size(key, in: object, at: pointer)
            case "height": height = size(key, in: object, at: pointer)
            case "layers":
                guard case .array(let items) = value else { problem(at, "must be an array, not \(value.typeDescription)"); continue }
                guard !items.isEmpty, items.count <= maxLayers else { problem(at, "must hold 1 to \(maxLayers) layers, not \(items.count)"); continue }
                for (index, item) in items.enumerated() {
                    let base = JSONPointer.appending(at, index)
                    guard case .object(let fields) = item else { problem(base, "must be an object, not \(item.typeDescription)"); continue }
                    var layer = Layer(name: "layer \(index + 1)")
                    for (field, value) in fields.pairs {
                        let fieldAt = JSONPointer.appending(base, field)
                        switch field {
                        case "name":
                            guard case .string(let text) = value, text.utf8.count <= 256 else { problem(fieldAt, "must be a string of at most 256 bytes"); continue }
                            layer.name = text
                        case "shape":
                            guard case .string(let text) = value, let shape = Shape(rawValue: text) else { problem(fieldAt, "must be 'rect' or 'ellipse'"); continue }
                            layer.shape = shape
                        case "size":
                            if let size = pair(value, at: fieldAt, positive: true) { layer.size = size }
                        case "anchor":
                            if let anchor = pair(value, at: fieldAt, positive: false) { layer.anchor = anchor }
                        case "fill":
                            guard case .string(let text) = value else { problem(fieldAt, "must be a colour or \"{path}\", not \(value.typeDescription)"); continue }
                            if let name = placeholderName(text) {
                                switch resolver.resolve(name) {
                                case .success(.colour(let channels)): layer.fill = .colour(channels)
                                case .success(.number): problem(fieldAt, "{\(name)} is a number; the fill needs a colour")
                                case .failure(let failure): problem(fieldAt, "placeholder {\(name)}: \(failure.message)")
                                }
                            } else if let colour = Colour(css: text) {
                                layer.fill = .colour([colour.red, colour.green, colour.blue, colour.alpha].map { v in
                                    ExportChannel(value: { _ in clamp01(v) }, hints: [], isConstant: true)
                                })
                            } else {
                                problem(fieldAt, "must be a colour (#rrggbb, rgb(), hsl()…) or \"{path}\", not '\(text.prefix(40))'")
                            }
                        case "position":
                            switch value {
                            case .string(let text):
                                guard let name = placeholderName(text) else { problem(fieldAt, "must be \"{path}\" naming a point, or [\"{x}\", \"{y}\"]"); continue }
                                if let x = scalar(.string("{\(name).x}"), at: fieldAt), let y = scalar(.string("{\(name).y}"), at: fieldAt) {
                                    layer.position = (x, y)
                                }
                            case .array(let items) where items.count == 2:
                                if let x = scalar(items[0], at: JSONPointer.appending(fieldAt, 0)),
                                   let y = scalar(items[1], at: JSONPointer.appending(fieldAt, 1)) {
                                    layer.position = (x, y)
                                }
                            default:
                                problem(fieldAt, "must be \"{path}\" naming a point, or [\"{x}\", \"{y}\"], not \(value.typeDescription)")
                            }
                        case "rotation": if let s = scalar(value, at: fieldAt) { layer.rotation = s }
                        case "scale": if let s = scalar(value, at: fieldAt) { layer.scale = s }
                        case "opacity": if let s = scalar(value, at: fieldAt) { layer.opacity = s }
                        default:
                            problem(fieldAt, "unknown member '\(field)' of a layer; expected name, shape, size, fill, position, rotation, scale, opacity or anchor")
                        }
                    }
                    layers.append(layer)
                }
            default:
                problem(at, "unknown member '\(key)' of output.lottie; expected width, height or layers")
            }
        }
        if object["width"] == nil { problem(JSONPointer.appending(pointer, "width"), "is required") }
        if object["height"] == nil { problem(JSONPointer.appending(pointer, "height"), "is required") }
        if object["layers"] == nil { problem(JSONPointer.appending(pointer, "layers"), "is required") }
        if !problems.isEmpty { throw DocumentError(problems) }
        return (width ?? 0, height ?? 0, layers)
    }

    /// `name` of a string that is exactly one placeholder `{name}`.
    static func placeholderName(_ text: String) -> String? {
        guard case .success(let template) = ExportTemplate.parse(text), template.parts.count == 1,
              case .placeholder(let name) = template.parts[0] else { return nil }
        return name
    }
}
