/// Keyframed properties (docs/authoring.md): every keyframe decomposed into the same scalar leaves as
/// `from`/`to` are (numbers, composites, colours, one colour component), with the first
/// (null) keyframe read from the current value at the start.
extension TrackBuilder {
    /// One leaf of a keyframed property: its track and its value at every keyframe.
    struct KeyframedLeaf {
        var track: Int
        var values: [Double]

        var leaf: Leaf { Leaf(track: track, from: values[0], to: values[values.count - 1]) }
    }

    /// Resolves keyframes at `start`; nil after a problem (reported). A leaf gets a track when
    /// some keyframe differs from the first (a scalar property always has one).
    mutating func resolveKeyframes(path: PropertyPath, pointer: String, values keyframes: [JSON?], at start: Double) -> [KeyframedLeaf]? {
        let keyPointer = pointer + "/keyframes"
        if let component = colourComponent(path) {
            guard writable(component.colour, at: pointer + "/path") else { return nil }
            var numbers: [Double?] = []
            for (index, value) in keyframes.enumerated() {
                guard let value else { numbers.append(nil); continue }
                guard case .number(let n) = value else {
                    diagnostics.invalid(JSONPointer.appending(keyPointer, index), "must be a number: '\(path)' names the \(component.name) of a colour")
                    return nil
                }
                if component.name != "hue", !(0...1).contains(n) {
                    diagnostics.invalid(JSONPointer.appending(keyPointer, index), "a colour's \(component.name) must be between 0 and 1, not \(format(n))")
                    return nil
                }
                numbers.append(n)
            }
            // Registers the component's track and output, and reads the implicit start.
            guard let first = resolveColourComponent(path: path, colourPath: component.colour, component: component.name, pointer: pointer,
                                                     from: keyframes[0], to: keyframes[keyframes.count - 1]!, at: start)?.first else { return nil }
            var values = [first.from]
            for number in numbers.dropFirst() {
                guard var next = number else { continue }
                if component.name == "hue" {
                    // Each keyframe is reached the short way round from the one before.
                    let previous = values[values.count - 1]
                    var delta = (Colour.normalisedHue(next) - Colour.normalisedHue(previous)).truncatingRemainder(dividingBy: 360)
                    if delta > 180 { delta -= 360 } else if delta < -180 { delta += 360 }
                    next = previous + delta
                }
                values.append(next)
            }
            return [KeyframedLeaf(track: first.track, values: values)]
        }
        guard writable(path, at: pointer + "/path") else { return nil }
        if keyframes.contains(where: { if case .string? = $0 { return true } else { return false } }) {
            return resolveColourKeyframes(path: path, pointer: pointer, keyframes: keyframes, at: start)
        }

        let shape = keyframes[keyframes.count - 1]!
        let shapeLeaves = ValueShape.leaves(of: shape)
        var columns: [[Double]] = []  // per keyframe, the leaves in shape order
        let template: JSON
        if let first = keyframes[0] {
            template = first
        } else {
            var current: [Double] = []
            for leaf in shapeLeaves {
                let leafPath = path.appending(contentsOf: leaf.relative)
                guard let value = currentValue(leafPath, at: start, pointer: pointer) else {
                    if stopped { return nil }
                    let found = path.lookup(in: target)
                    let detail = found.map { ", and target has \(ValueShape.describe($0)) at '\(path)', not the shape of the keyframes" } ?? ""
                    diagnostics.invalid(pointer + "/path", "no value at '\(leafPath)' in target for the null first keyframe\(detail)")
                    return nil
                }
                guard abs(value) <= ObjectReader.maximumMagnitude else {
                    diagnostics.invalid(pointer + "/path", "the value at '\(leafPath)' (\(format(value))) is outside ±1e15")
                    return nil
                }
                current.append(value)
            }
            columns.append(current)
            if let existing = path.lookup(in: target),
               shapeLeaves.allSatisfy({ PropertyPath(segments: $0.relative).lookup(inValue: existing)?.numberValue != nil }) {
                template = existing
            } else {
                template = shape
            }
        }
        // The numbers alone: the paths are `shapeLeaves`' (the decoder checked every keyframe
        // has the same).
        for case let value? in keyframes { columns.append(ValueShape.numbers(of: value)) }

        var result: [KeyframedLeaf] = []
        var outputLeaves: [(relative: [String], track: Int)] = []
        let isScalar = shapeLeaves.count == 1 && shapeLeaves[0].relative.isEmpty
        for (offset, leaf) in shapeLeaves.enumerated() {
            let values = columns.map { $0[offset] }
            guard isScalar || values.contains(where: { $0 != values[0] }) else { continue }
            let leafPath = path.appending(contentsOf: leaf.relative)
            let index = track(for: leafPath.description, base: leafPath.lookup(in: target)?.numberValue ?? values[0])
            result.append(KeyframedLeaf(track: index, values: values))
            outputLeaves.append((leaf.relative, index))
        }
        register(Timeline.PropertyOutput(path: path, kind: .value(template: template, leaves: outputLeaves)))
        return result
    }

    /// Whole colours: red, green, blue and alpha tracks for the channels some keyframe changes.
    private mutating func resolveColourKeyframes(path: PropertyPath, pointer: String, keyframes: [JSON?], at start: Double) -> [KeyframedLeaf]? {
        var colours: [Colour] = []
        for (index, value) in keyframes.enumerated() {
            if let value {
                guard let parsed = colour(value, at: JSONPointer.appending(pointer + "/keyframes", index)) else { return nil }
                colours.append(parsed)
            } else {
                guard let current = currentColour(path, at: start, pointer: pointer) else {
                    if stopped { return nil }
                    diagnostics.invalid(pointer + "/path", "no colour at '\(path)' in target for the null first keyframe")
                    return nil
                }
                colours.append(current)
            }
        }
        let base = path.lookup(in: target).flatMap { $0.stringValue.flatMap(Colour.init(css:)) } ?? colours[0]
        var result: [KeyframedLeaf] = []
        var channels: [(component: String, track: Int)] = []
        for channel in Colour.channels {
            let values = colours.map { $0[channel] }
            guard values.contains(where: { $0 != values[0] }) else { continue }
            let index = track(for: path.appending(channel).description, base: base[channel])
            result.append(KeyframedLeaf(track: index, values: values))
            channels.append((channel, index))
        }
        register(Timeline.PropertyOutput(path: path, kind: .colour(base: base, channels: channels)))
        return result
    }

    /// Resolves a keyframed tween property at `start` and appends its segments. Returns the
    /// homeward parts (the keyframes travelled back) for a reversing parent.
    mutating func addKeyframes(_ property: TweenProperty, _ keyframes: TweenKeyframes, start: Double, timing: CycleTiming,
                               easing: Easing, reverseEasing: Easing?, blending: Blending)
        -> [(track: Int, curve: Curve, duration: Double, blending: Blending)] {
        guard let leaves = resolveKeyframes(path: property.path, pointer: property.pointer, values: keyframes.values, at: start),
              charge(leaves.count, weight: max(1, keyframes.values.count - 1), at: property.pointer + "/keyframes") else { return [] }
        let easings = keyframes.easings.map { $0 ?? easing }
        let back = KeyframeLeg.reversedTiming(offsets: keyframes.offsets, easings: easings, easing: reverseEasing)
        var homeward: [(track: Int, curve: Curve, duration: Double, blending: Blending)] = []
        for item in leaves {
            var values = item.values
            // An additive motion's start is rebased like a tween's `from` (docs/timing-and-events.md).
            values[0] = rebase(item.leaf, blending)
            let forward = KeyframeLeg(values: values, offsets: keyframes.offsets, easings: easings)
            // `forward.reversed(easing: reverseEasing)`, with the timing made once.
            let reverse = KeyframeLeg(values: values.reversed(), offsets: back.offsets, easings: back.easings)
            let curve = KeyframeCurve(forward: forward, reverse: reverse, timing: timing)
            append(.keyframes(curve), to: Leaf(track: item.track, from: values[0], to: values[values.count - 1]), at: start, blending)
            let back = KeyframeCurve(forward: reverse, reverse: reverse, timing: CycleTiming(legDuration: timing.legDuration))
            homeward.append((item.track, .keyframes(back), timing.legDuration, blending))
        }
        return homeward
    }
}
