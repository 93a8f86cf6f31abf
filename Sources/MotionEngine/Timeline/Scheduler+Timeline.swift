/// `timeline` nodes (docs/authoring.md): children placed by position and label.
extension Scheduler {
    /// Plays a timeline: each cycle places the children one after another by their positions,
    /// as soon as what a position refers to is known. A child's start and its labels are
    /// known when it is placed; its end at once when its length does not depend on the values
    /// it starts from (`staticLength`), else when it ends. A position that would fall before
    /// the moment its reference became known, or before the timeline's start, is a 422.
    /// With `reverses` the reverse leg mirrors the forward leg in time (`mirror`).
    func playTimeline(_ group: GroupNode, _ layout: TimelineLayout, at t: Double, part: Part, play: Play,
                      finish: @escaping (Double) -> Void) {
        let header = group.header
        let timing = header.timing
        let children = group.children
        let count = children.count
        let childPart: Part = timing.reverses || part == .outward ? .outward : .full
        var cycle = 0

        func runCycle(_ cycleStart: Double) {
            at(cycleStart, order: header.order) { [unowned self] in
                emit(cycle == 0 ? .started : .repeated, header, at: cycleStart)
                let records = cycle == 0 && schedule.enabled
                play.children = children.map { Play(node: $0) }
                play.spans = Array(repeating: (0, 0), count: count)
                var labels: [String: Double] = [:]
                for (name, time) in layout.labels {
                    labels[name] = time
                    if records { schedule.label(name, at: cycleStart + time) }
                }
                var starts = [Double](repeating: 0, count: count)
                var ends = [Double?](repeating: nil, count: count)
                var placed = 0, remaining = count
                var last = cycleStart
                let endCycle: (Double) -> Void = { end in
                    cycle += 1
                    if case .count(let n) = timing.repetition, cycle > n { return finish(end) }
                    runCycle(end + timing.repeatDelay)
                }
                let forwardDone: (Double) -> Void = { [unowned self] turn in
                    guard timing.reverses else { return endCycle(turn) }
                    emit(.reversed, header, at: turn)
                    mirror(play, at: turn, order: header.order, done: endCycle)
                }
                guard count > 0 else { return forwardDone(cycleStart) }

                func place(now: Double) {
                    while placed < count {
                        let index = placed
                        let position = layout.positions[index]
                        let pointer = layout.childPointers[index] + "/at"
                        let base: Double
                        switch position.anchor {
                        case .origin:
                            base = 0
                        case .previousStart:
                            base = index > 0 ? starts[index - 1] : 0
                        case .previousEnd:
                            guard index == 0 || ends[index - 1] != nil else { return }
                            base = index > 0 ? ends[index - 1]! : 0
                        case .everythingEnd:
                            guard !ends[..<index].contains(where: { $0 == nil }) else { return }
                            base = ends[..<index].map { $0! }.max() ?? 0
                        case .label(let name):
                            guard let time = labels[name] else {
                                diagnostics.invalid(pointer, "label '\(name)' is not defined by this child")
                                return
                            }
                            base = time
                        }
                        let at = base + position.offset
                        if at < -timeEpsilon {
                            diagnostics.invalid(pointer, "places this child at \(format(at)) s, before the timeline's start")
                            return
                        }
                        let start = cycleStart + max(0, at)
                        if start < now - timeEpsilon {
                            diagnostics.invalid(pointer, "places this child at \(format(at)) s, but what it is placed from ends at \(format(now - cycleStart)) s, a time known only when it gets there (its length depends on the values it starts from): place it at or after that end, or by a number or a label")
                            return
                        }
                        let child = children[index]
                        let delay = child.header.timing.delay
                        starts[index] = max(0, at) + delay
                        if let label = layout.childLabels[index] {
                            labels[label] = starts[index]
                            if records { schedule.label(label, at: cycleStart + starts[index]) }
                        }
                        if let length = Self.staticLength(child) { ends[index] = max(0, at) + length }
                        placed += 1
                        self.play(child, at: start, part: childPart) { end, childPlay in
                            play.children[index] = childPlay
                            play.spans[index] = (start - cycleStart + delay, end - cycleStart)
                            last = max(last, end)
                            if ends[index] == nil {
                                ends[index] = end - cycleStart
                                place(now: end)
                            }
                            remaining -= 1
                            if remaining == 0 { forwardDone(last) }
                        }
                    }
                }
                place(now: cycleStart)
            }
        }
        runCycle(t + timing.delay)
    }

    /// A timeline's reverse leg: its forward leg played backwards in time. A child that ran
    /// from s to e of a forward leg of length L plays its reverse leg (as a reversing group
    /// would play it) from L − e after the turn; the leg ends with the last of them.
    func mirror(_ play: Play, at turn: Double, order: Int, done: @escaping (Double) -> Void) {
        let length = max(0, play.spans.map(\.end).max() ?? 0)
        join(play.children.count, at: turn, order: order, done) { index, childDone in
            let end = index < play.spans.count ? play.spans[index].end : length
            self.playHomeward(play.children[index], at: turn + max(0, length - end), done: childDone)
        }
    }

    /// A node's length from its start (delay included) to its end, when that does not depend
    /// on the values it starts from: tweens, eased path motions, and groups, sequences and
    /// timelines of them that do not reverse. Nil otherwise, and for motions that never end.
    static func staticLength(_ node: MotionNode) -> Double? {
        let timing = node.header.timing
        func repeated(_ cycle: Double) -> Double? {
            CycleTiming(legDuration: cycle, repetition: timing.repetition, repeatDelay: timing.repeatDelay,
                        playLimit: timing.playLimit).activeDuration.map { timing.delay + $0 }
        }
        switch node {
        case .tween(let tween):
            var end = timing.delay
            for property in tween.properties {
                let cycle = CycleTiming(legDuration: property.duration ?? tween.duration ?? 0, reverses: timing.reverses,
                                        repetition: timing.repetition, repeatDelay: timing.repeatDelay, playLimit: timing.playLimit)
                guard let active = cycle.activeDuration else { return nil }
                end = max(end, (property.delay ?? timing.delay) + active)
            }
            return end
        case .path(let path):
            guard case .eased(let duration, _, _) = path.drive else { return nil }
            return CycleTiming(legDuration: duration, reverses: timing.reverses, repetition: timing.repetition,
                               repeatDelay: timing.repeatDelay, playLimit: timing.playLimit).activeDuration.map { timing.delay + $0 }
        case .physics, .spring, .decay:
            return nil
        case .group(let group):
            guard !timing.reverses else { return nil }
            var lengths: [Double] = []
            for child in group.children {
                guard let length = staticLength(child) else { return nil }
                lengths.append(length)
            }
            if let layout = group.layout {
                guard let length = TimelineLayout.staticLength(layout, lengths: lengths, delays: group.children.map(\.header.timing.delay)) else { return nil }
                return repeated(length)
            }
            return repeated(lengths.max() ?? 0)
        case .sequence(let sequence):
            guard !timing.reverses else { return nil }
            var total = 0.0
            for step in sequence.steps {
                guard let length = staticLength(step) else { return nil }
                total += length
            }
            return repeated(total)
        }
    }
}

extension TimelineLayout {
    /// The forward length of a timeline whose children all have static lengths (nil when a
    /// position is invalid: the run reports it).
    static func staticLength(_ layout: TimelineLayout, lengths: [Double], delays: [Double]) -> Double? {
        var labels: [String: Double] = [:]
        for (name, time) in layout.labels { labels[name] = time }
        var starts: [Double] = [], ends: [Double] = []
        for index in lengths.indices {
            let position = layout.positions[index]
            let base: Double
            switch position.anchor {
            case .origin: base = 0
            case .previousStart: base = index > 0 ? starts[index - 1] : 0
            case .previousEnd: base = index > 0 ? ends[index - 1] : 0
            case .everythingEnd: base = ends.max() ?? 0
            case .label(let name):
                guard let time = labels[name] else { return nil }
                base = time
            }
            let at = base + position.offset
            guard at >= -timeEpsilon else { return nil }
            starts.append(max(0, at) + delays[index])
            ends.append(max(0, at) + lengths[index])
            if let label = layout.childLabels[index] { labels[label] = starts[index] }
        }
        return max(0, ends.max() ?? 0)
    }
}

/// What `output.schedule` reports: every node's first start and the end of its first cycle,
/// and every timeline label's time (its timeline's first cycle).
struct ScheduleRecorder {
    struct Entry {
        var id: String
        var start: Double
        var end: Double?
        var endless: Bool
    }

    var enabled = false
    private(set) var entries: [Int: Entry] = [:]
    private(set) var labels: [(name: String, time: Double)] = []
    private var labelNames = Set<String>()

    mutating func note(_ kind: TimelineEvent.Kind, _ node: NodeHeader, at time: Double) {
        switch kind {
        case .started:
            if entries[node.order] == nil {
                entries[node.order] = Entry(id: node.id, start: time, end: nil, endless: node.timing.isEndless)
            }
        case .repeated:
            if var entry = entries[node.order], entry.end == nil {
                entry.end = time - node.timing.repeatDelay
                entries[node.order] = entry
            }
        case .completed:
            if var entry = entries[node.order], entry.end == nil {
                entry.end = time
                entries[node.order] = entry
            }
        default:
            break
        }
    }

    /// The first definition of a name wins (a name used by several timelines).
    mutating func label(_ name: String, at time: Double) {
        guard labelNames.insert(name).inserted else { return }
        labels.append((name, time))
    }

    /// Entries in document order.
    var output: Timeline.Schedule {
        let nodes = entries.sorted { $0.key < $1.key }.map { entry in
            (motion: entry.value.id, start: entry.value.start, end: entry.value.endless ? nil : entry.value.end)
        }
        return Timeline.Schedule(nodes: nodes, labels: labels)
    }
}

extension Timeline {
    /// The resolved schedule (`output.schedule`, docs/authoring.md).
    public struct Schedule: Sendable {
        public var nodes: [(motion: String, start: Double, end: Double?)]
        public var labels: [(name: String, time: Double)]
    }
}

extension TimelineLayout {
    /// Reports children placed from the end of a child that never ends: they never start.
    func checkNeverStarts(endless: [Bool], _ diagnostics: Diagnostics) {
        for index in positions.indices where index > 0 {
            let waitsForever: Bool
            switch positions[index].anchor {
            case .previousEnd: waitsForever = endless[index - 1]
            case .everythingEnd: waitsForever = endless[..<index].contains(true)
            default: waitsForever = false
            }
            if waitsForever {
                diagnostics.invalid(childPointers[index] + "/at", "this child never starts: it is placed from the end of a child that never ends")
            }
        }
    }
}
