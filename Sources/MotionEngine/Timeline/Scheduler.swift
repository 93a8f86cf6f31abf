/// Lays the node tree out on absolute time (docs/timing-and-events.md).
///
/// A small discrete-event simulation: every node start and every hand-off is an action
/// processed in time order (ties: document order, then causal order), so a property without
/// `from` is resolved from the values that every earlier motion has produced by then, and a
/// node whose length depends on its resolved values (a spring's rest time) still schedules
/// what follows it exactly. The result is a set of tracks with absolute segments — sampling
/// does no tree walking — and the event list.
final class Scheduler {
    /// How much of a node's play to run.
    enum Part {
        /// Everything, with `completed` at the end.
        case full
        /// Its own play, leaving out `completed` when a homeward part will follow; used by
        /// reversing groups and contiguous sequences, which reverse their children themselves.
        case outward
    }

    private(set) var builder: TrackBuilder
    private(set) var events: [TimelineEvent] = []
    /// For each event: its node's pre-order position, and the index of the event at the same
    /// instant that caused it (−1 for none). `EventOrder` sorts by them (docs/timing-and-events.md).
    private(set) var eventOrders: [Int] = []
    private(set) var eventCauses: [Int] = []
    /// The time of the running action, and the last event in its causal chain (−1 for none).
    private var now = -Double.infinity
    private var context = -1
    let diagnostics: Diagnostics
    private let limits: EngineLimits
    /// Actions after this time are not run (the window end, for motions that never end).
    private let horizon: Double
    private var queue = ActionQueue()
    private(set) var playCount = 0
    private(set) var overflow: String?
    /// The root's play, for tests that check it is freed (weak: the scheduler owns no play).
    private(set) weak var rootPlay: Play?
    /// Every node's first start and first cycle end, and the timelines' labels (`output.schedule`).
    var schedule = ScheduleRecorder()
    /// Spring rest times found so far in this run: staggered elements and repeats settle the
    /// same springs again (`SpringSettling.Memo`).
    private lazy var settleMemo = SpringSettling.Memo()

    /// The properties `node` and its children name (a path node counts one): the tracks a
    /// run will usually make. Recursion is bounded by the decoder's nesting limit.
    static func propertyCount(_ node: MotionNode) -> Int {
        switch node {
        case .tween(let tween): return tween.properties.count
        case .physics(let physics): return physics.properties.count
        case .spring(let spring): return spring.properties.count
        case .decay(let decay): return decay.properties.count
        case .path: return 1
        case .group(let group): return group.children.reduce(0) { $0 &+ propertyCount($1) }
        case .sequence(let sequence): return sequence.steps.reduce(0) { $0 &+ propertyCount($1) }
        }
    }

    /// `root`: the motion the scheduler will run, to size its track tables (nil: unknown).
    /// `charged`: segments the document spent before the run (`TimelineDocument.pathSegments`).
    init(target: JSONObject, diagnostics: Diagnostics, limits: EngineLimits, horizon: Double, root: MotionNode? = nil,
         charged: Int = 0) {
        self.builder = TrackBuilder(target: target, diagnostics: diagnostics,
                                    expectedProperties: min(root.map(Self.propertyCount) ?? 0, limits.maxProperties),
                                    maxSegments: limits.maxSegments, charged: charged)
        self.diagnostics = diagnostics
        self.limits = limits
        self.horizon = horizon
    }

    /// Plays the root and runs every action; returns the end time (nil if it never ends).
    ///
    /// Pending actions hold closures that reference this scheduler and the plays; when the run
    /// stops early (a limit, a 422, the window's end) they are dropped here, so nothing of the
    /// run outlives it.
    func run(_ root: MotionNode) -> Double? {
        defer { queue = ActionQueue() }
        var end: Double?
        play(root, at: 0, part: .full) { time, _ in end = exactTime(time) }
        while overflow == nil, !builder.stopped, let action = queue.pop() {
            if action.time > horizon + timeEpsilon { break }
            now = action.time
            context = action.cause
            action.run()
        }
        return end
    }

    // MARK: - Scheduling primitives

    /// Runs `body` at `time`; an action at the running action's instant carries its causal chain.
    func at(_ time: Double, order: Int, _ body: @escaping () -> Void) {
        queue.push(time: time, order: order, cause: abs(time - now) < timeEpsilon ? context : -1, body)
    }

    /// Cycles a leaf's boundary walk may visit: twice the event limit and a few, saturating
    /// (a raised `maxEvents` near `Int.max` must not overflow).
    private var maxBoundarySteps: Int {
        let (doubled, overflow) = limits.maxEvents.multipliedReportingOverflow(by: 2)
        return overflow || doubled > Int.max - 4 ? Int.max : doubled + 4
    }

    private var eventsOverflow: String {
        "the timeline holds more than \(limits.maxEvents) events (max-events); sample a shorter window"
    }

    private static func farWindow(_ header: NodeHeader) -> String {
        "\(header.pointer) repeats more than \(format(CycleTiming.maxCycleIndex)) times before the window starts, too many to place its events exactly; sample a window nearer its start"
    }

    func emit(_ kind: TimelineEvent.Kind, _ node: NodeHeader, at time: Double, step: Int? = nil) {
        guard overflow == nil else { return }
        if events.count >= limits.maxEvents {
            overflow = eventsOverflow
            return
        }
        let cause = context >= 0 && abs(events[context].time - time) < timeEpsilon ? context : -1
        if events.isEmpty {
            // Room for a few events in each of the three lists at once (a tween has two):
            // grown from empty they were reallocated at the first and second event
            // (callgrind, the small document: 195,791 → 194,640 instructions a request).
            events.reserveCapacity(Self.usualEvents)
            eventOrders.reserveCapacity(Self.usualEvents)
            eventCauses.reserveCapacity(Self.usualEvents)
        }
        events.append(TimelineEvent(time: exactTime(time), kind: kind, motion: node.id, step: step))
        eventOrders.append(node.order)
        eventCauses.append(cause)
        if abs(time - now) < timeEpsilon { context = events.count - 1 }
        if schedule.enabled { schedule.note(kind, node, at: exactTime(time)) }
    }

    static let usualEvents = 4

    private func countPlay() -> Bool {
        playCount += 1
        if playCount > limits.maxEvents {
            overflow = "the timeline starts more than \(limits.maxEvents) node plays (max-events); sample a shorter window"
            return false
        }
        return true
    }

    /// Whether a node comes back to its start values by itself, so that a reversing parent
    /// has nothing left to reverse.
    static func returnsHome(_ node: MotionNode) -> Bool {
        switch node {
        case .tween, .physics, .spring, .decay, .path: return node.header.timing.reverses
        case .group(let group): return group.header.timing.reverses
        case .sequence(let sequence): return sequence.header.timing.reverses && sequence.reversingMode == .contiguous
        }
    }

    // MARK: - Plays

    /// Plays `node` from absolute time `t` (its delay still to come). `done` runs, as an
    /// action at the end time, with the end time and a handle for the homeward part.
    func play(_ node: MotionNode, at t: Double, part: Part, done: @escaping (Double, Play) -> Void) {
        guard countPlay() else { return }
        let play = Play(node: node)
        if rootPlay == nil { rootPlay = play }
        let suppressCompleted = part == .outward && !Self.returnsHome(node)
        let finish: (Double) -> Void = { [unowned self] end in
            if !suppressCompleted { emit(.completed, node.header, at: end) }
            done(end, play)
        }
        switch node {
        case .tween(let tween): playTween(tween, at: t, play: play, finish: finish)
        case .physics, .spring, .decay: playDynamic(node, at: t, play: play, finish: finish)
        case .path(let path): playPath(path, at: t, play: play, finish: finish)
        case .group(let group):
            if let layout = group.layout {
                playTimeline(group, layout, at: t, part: part, play: play, finish: finish)
            } else {
                playGroup(group, at: t, part: part, play: play, finish: finish)
            }
        case .sequence(let sequence): playSequence(sequence, at: t, part: part, play: play, finish: finish)
        }
    }

    /// The homeward part of a play that ran `.outward`: its values go back to where they
    /// began. Emits `reversed` at the start and `completed` at the end.
    func playHomeward(_ play: Play, at t: Double, done: @escaping (Double) -> Void) {
        let header = play.node.header
        if Self.returnsHome(play.node) {
            at(t, order: header.order) { done(t) }
            return
        }
        at(t, order: header.order) { [unowned self] in
            emit(.reversed, header, at: t)
            let finish: (Double) -> Void = { [unowned self] end in
                emit(.completed, header, at: end)
                done(end)
            }
            switch play.node {
            case .tween:
                var end = t
                for leg in play.legs {
                    builder.addReverseLeg(leg, at: t)
                    end = max(end, t + leg.duration)
                }
                for part in play.homeward {  // keyframed properties
                    builder.appendHomeward(part.curve, track: part.track, at: t, part.blending)
                    end = max(end, t + part.duration)
                }
                at(end, order: header.order) { finish(end) }
            case .physics, .spring, .decay, .path:
                var end = t
                for part in play.homeward {
                    builder.appendHomeward(part.curve, track: part.track, at: t, part.blending)
                    end = max(end, t + part.duration)
                }
                at(end, order: header.order) { finish(end) }
            case .group(let group) where group.layout != nil:
                mirror(play, at: t, order: header.order, done: finish)
            case .group:
                join(play.children.count, at: t, order: header.order, finish) { index, childDone in
                    self.playHomeward(play.children[index], at: t, done: childDone)
                }
            case .sequence(let sequence):
                // Retrace the plays in reverse order, handing off from one to the next.
                let plays = Array(play.children.reversed())
                func step(_ index: Int, _ time: Double) {
                    guard index < plays.count else { return finish(time) }
                    if index > 0, let stepIndex = sequence.steps.firstIndex(where: { $0.header.order == plays[index].node.header.order }) {
                        emit(.stepped, header, at: time, step: stepIndex)
                    }
                    playHomeward(plays[index], at: time) { end in step(index + 1, end) }
                }
                step(0, t)
            }
        }
    }

    /// Starts `count` things at once and calls `finish` with the last end.
    func join(_ count: Int, at t: Double, order: Int, _ finish: @escaping (Double) -> Void,
                      start: (Int, @escaping (Double) -> Void) -> Void) {
        guard count > 0 else { return at(t, order: order) { finish(t) } }
        var remaining = count
        var last = t
        for index in 0..<count {
            start(index) { end in
                last = max(last, end)
                remaining -= 1
                if remaining == 0 { finish(last) }
            }
        }
    }

    // MARK: Tween

    private func playTween(_ tween: TweenNode, at t: Double, play: Play, finish: @escaping (Double) -> Void) {
        let header = tween.header
        var starts: [Double] = []
        var timings: [CycleTiming] = []
        starts.reserveCapacity(tween.properties.count)
        timings.reserveCapacity(tween.properties.count)
        var end: Double? = t + header.timing.delay
        for property in tween.properties {
            let timing = CycleTiming(legDuration: property.duration ?? tween.duration ?? 0,
                                     reverses: header.timing.reverses,
                                     repetition: header.timing.repetition,
                                     repeatDelay: header.timing.repeatDelay,
                                     playLimit: header.timing.playLimit)
            let start = t + (property.delay ?? header.timing.delay)
            starts.append(start)
            timings.append(timing)
            if let active = timing.activeDuration, let current = end { end = max(current, start + active) } else { end = nil }
        }
        let nodeStart = starts.min() ?? t + header.timing.delay
        if let spec = tween.springTiming, case .spring(let curve) = spec.curve {
            return playSpringTimedTween(tween, spec: spec, curve: curve, starts: starts, nodeStart: nodeStart, play: play, finish: finish)
        }
        at(nodeStart, order: header.order) { [unowned self] in
            emit(.started, header, at: nodeStart)
            emitBoundaries(header, starts: starts, timings: timings)
        }
        for (index, property) in tween.properties.enumerated() {
            let easing = property.easing ?? tween.easing
            let reverseEasing = tween.reverseEasing ?? easing
            at(starts[index], order: header.order) { [unowned self] in
                let blending = TrackBuilder.Blending(additiveWeight: tween.additiveWeight, bounds: property.bounds)
                if let keyframes = property.keyframes {
                    play.homeward += builder.addKeyframes(property, keyframes, start: starts[index], timing: timings[index], easing: easing,
                                                          reverseEasing: tween.reverseEasing, blending: blending)
                    return
                }
                let legs = builder.add(property, start: starts[index], timing: timings[index], easing: easing,
                                       reverseEasing: reverseEasing, blending: blending)
                play.legs.append(contentsOf: legs)
            }
        }
        if let end { at(end, order: header.order) { finish(end) } }
    }

    /// A tween timed by a spring-curve spec: each property's legs last its own rest time, known
    /// when it is resolved; boundaries and the end follow once every property is.
    private func playSpringTimedTween(_ tween: TweenNode, spec: MotionSpec, curve: SpringCurve, starts: [Double],
                                      nodeStart: Double, play: Play, finish: @escaping (Double) -> Void) {
        let header = tween.header
        at(nodeStart, order: header.order) { [unowned self] in emit(.started, header, at: nodeStart) }
        var timings = [CycleTiming?](repeating: nil, count: tween.properties.count)
        var remaining = tween.properties.count
        for (index, property) in tween.properties.enumerated() {
            at(starts[index], order: header.order) { [unowned self] in
                let blending = TrackBuilder.Blending(additiveWeight: tween.additiveWeight, bounds: property.bounds)
                if let made = builder.addSpringTimed(property, spec: spec, curve: curve, start: starts[index],
                                                     node: header.timing, blending: blending) {
                    play.legs.append(contentsOf: made.legs)
                    timings[index] = made.timing
                }
                remaining -= 1
                guard remaining == 0 else { return }
                let resolved = zip(starts, timings).compactMap { start, timing in timing.map { (start, $0) } }
                guard resolved.count == timings.count else { return }  // a problem was reported
                emitBoundaries(header, starts: resolved.map(\.0), timings: resolved.map(\.1))
                var end: Double? = nodeStart
                for (start, timing) in resolved {
                    if let active = timing.activeDuration, let current = end { end = max(current, start + active) } else { end = nil }
                }
                if let end { at(end, order: header.order) { finish(end) } }
            }
        }
    }

    /// `reversed` and `repeated` of a leaf's own cycles, merged over its properties.
    private func emitBoundaries(_ header: NodeHeader, starts: [Double], timings: [CycleTiming]) {
        var boundaries: [(time: Double, cycle: Int, kind: CycleTiming.Boundary.Kind)] = []
        var seen: [(start: Double, timing: CycleTiming)] = []
        let limit = horizon.isFinite ? horizon : .greatestFiniteMagnitude
        for (start, timing) in zip(starts, timings) {
            if seen.contains(where: { $0.start == start && $0.timing == timing }) { continue }
            seen.append((start, timing))
            let finished = timing.forEachBoundary(from: windowStart - start, through: limit - start,
                                                  maxSteps: maxBoundarySteps) { boundary in
                boundaries.append((start + boundary.time, boundary.cycle, boundary.kind))
                return boundaries.count <= limits.maxEvents
            }
            if !finished {
                overflow = boundaries.count > limits.maxEvents ? eventsOverflow : Self.farWindow(header)
                return
            }
        }
        boundaries.sort { ($0.time, $0.cycle, $0.kind.rawValue) < ($1.time, $1.cycle, $1.kind.rawValue) }
        var previous: (time: Double, cycle: Int, kind: CycleTiming.Boundary.Kind)?
        for boundary in boundaries {
            if let previous, previous.cycle == boundary.cycle, previous.kind == boundary.kind,
               abs(previous.time - boundary.time) < timeEpsilon { continue }
            previous = boundary
            emit(boundary.kind == .reversed ? .reversed : .repeated, header, at: boundary.time)
        }
    }

    // MARK: Physics, spring, decay

    /// One leaf's kernels: the forward leg, and the reverse leg that starts where it rests.
    private struct DynamicLeaf {
        var leaf: TrackBuilder.Leaf
        var forward: DynamicCurve.Kernel
        var reverse: DynamicCurve.Kernel
        var contacts: (forward: [Double], reverse: [Double]) = ([], [])
        /// The property's `bounds`, or a spring's `clamp`.
        var bounds: Bounds?
    }

    private func playDynamic(_ node: MotionNode, at t: Double, play: Play, finish: @escaping (Double) -> Void) {
        let header = node.header
        let timing = header.timing
        let start = t + timing.delay
        at(start, order: header.order) { [unowned self] in
            emit(.started, header, at: start)
            guard let (leaves, blending, forwardLength, reverseLength) = resolveDynamic(node, at: start) else { return }
            var legsOf: [(DynamicCurve.Kernel, DynamicCurve.Kernel)] = []
            for item in leaves {
                var legs = [DynamicCurve.Leg(kernel: item.forward, duration: forwardLength)]
                if timing.reverses { legs.append(DynamicCurve.Leg(kernel: item.reverse, duration: reverseLength)) }
                let curve = DynamicCurve(legs: legs, repetition: timing.repetition, repeatDelay: timing.repeatDelay)
                var itemBlending = blending
                itemBlending.bounds = item.bounds
                builder.append(.dynamic(curve), to: item.leaf, at: start, itemBlending)
                let home = DynamicCurve(legs: [DynamicCurve.Leg(kernel: item.reverse, duration: reverseLength)])
                play.homeward.append((item.leaf.track, .dynamic(home), reverseLength, itemBlending))
                legsOf.append((item.forward, item.reverse))
            }
            var contactsForward = Set<Double>(), contactsReverse = Set<Double>()
            for item in leaves {
                contactsForward.formUnion(item.contacts.forward)
                contactsReverse.formUnion(item.contacts.reverse)
            }
            let end = emitLegEvents(header, start: start, forward: forwardLength, reverse: reverseLength,
                                    contacts: (contactsForward.sorted(), contactsReverse.sorted()))
            if let end { at(end, order: header.order) { finish(end) } }
        }
    }

    /// Emits the `collided`, `reversed` and `repeated` events of every cycle of a node whose
    /// legs last `forward` and `reverse` seconds; returns its end (nil if it never ends).
    private func emitLegEvents(_ header: NodeHeader, start: Double, forward: Double, reverse: Double,
                               contacts: (forward: [Double], reverse: [Double])) -> Double? {
        let timing = header.timing
        let cycle = forward + (timing.reverses ? reverse : 0)
        let period = cycle + timing.repeatDelay
        var index = 0
        // Cycles wholly before the window are skipped, not walked.
        if windowStart > start, period.isFinite, period > 0 {
            let first = ((windowStart - start) / period).rounded(.down) - 1
            guard first < CycleTiming.maxCycleIndex else {
                overflow = Self.farWindow(header)
                return nil
            }
            index = max(0, Int(first))
            if case .count(let n) = timing.repetition { index = min(index, n) }
        }
        while overflow == nil {
            let cycleStart = start + Double(index) * period
            if cycleStart > horizon + timeEpsilon { return nil }
            if index > 0 { emit(.repeated, header, at: cycleStart) }
            for contact in contacts.forward where contact <= forward { emit(.collided, header, at: cycleStart + contact) }
            if timing.reverses, forward.isFinite {
                emit(.reversed, header, at: cycleStart + forward)
                for contact in contacts.reverse where contact <= reverse { emit(.collided, header, at: cycleStart + forward + contact) }
            }
            if case .count(let n) = timing.repetition, index >= n {
                return cycle.isFinite ? cycleStart + cycle : nil
            }
            if !period.isFinite || period <= 0 { return nil }
            index += 1
        }
        return nil
    }

    // MARK: Paths

    private func playPath(_ node: PathNode, at t: Double, play: Play, finish: @escaping (Double) -> Void) {
        let header = node.header
        let timing = header.timing
        let start = t + timing.delay
        let wraps = node.edgeBehavior == .contiguousEdges
        at(start, order: header.order) { [unowned self] in
            emit(.started, header, at: start)
            let progress: PathCurve.Progress, homeward: PathCurve.Progress
            let homewardDuration: Double
            var end: Double?
            switch node.drive {
            case .eased(let duration, let easing, let reverseEasing):
                let cycle = CycleTiming(legDuration: duration, reverses: timing.reverses, repetition: timing.repetition,
                                        repeatDelay: timing.repeatDelay, playLimit: timing.playLimit)
                let back = reverseEasing ?? easing
                progress = .fraction(TweenCurve(from: node.startPosition, to: node.endPosition, timing: cycle, easing: easing, reverseEasing: back))
                homeward = .fraction(TweenCurve(from: node.endPosition, to: node.startPosition, timing: CycleTiming(legDuration: duration),
                                                easing: back, reverseEasing: back))
                homewardDuration = duration
                emitBoundaries(header, starts: [start], timings: [cycle])
                end = cycle.activeDuration.map { start + $0 }
            case .physics(let velocity, let friction, let restitution, let restVelocity):
                let length = node.geometry.length
                let from = node.startPosition * length, to = node.endPosition * length
                let walls = !wraps && from != to ? min(from, to)...max(from, to) : nil
                do throws(PhysicsKernel.Failure) {
                    let forward = try PhysicsKernel(position: from, velocity: velocity, friction: friction, restitution: restitution,
                                                    restVelocity: restVelocity, walls: walls)
                    let reverse = try PhysicsKernel(position: forward.restValue, velocity: -velocity, friction: friction,
                                                    restitution: restitution, restVelocity: restVelocity, walls: walls)
                    var legs = [DynamicCurve.Leg(kernel: .physics(forward), duration: forward.restTime)]
                    if timing.reverses { legs.append(DynamicCurve.Leg(kernel: .physics(reverse), duration: reverse.restTime)) }
                    progress = .distance(DynamicCurve(legs: legs, repetition: timing.repetition, repeatDelay: timing.repeatDelay))
                    homeward = .distance(DynamicCurve(legs: [DynamicCurve.Leg(kernel: .physics(reverse), duration: reverse.restTime)]))
                    homewardDuration = reverse.restTime
                    end = emitLegEvents(header, start: start, forward: forward.restTime, reverse: reverse.restTime,
                                        contacts: (forward.contactTimes, reverse.contactTimes))
                } catch {
                    diagnostics.invalid(header.pointer, error.message)
                    return
                }
            }
            let tracks = builder.addPath(output: node.output, rotation: node.rotation, at: start, pointer: header.pointer) { component in
                .path(PathCurve(geometry: node.geometry, progress: progress, wraps: wraps, component: component))
            }
            for (track, component) in tracks {
                let curve = Curve.path(PathCurve(geometry: node.geometry, progress: homeward, wraps: wraps, component: component))
                play.homeward.append((track, curve, homewardDuration, .replace))
            }
            if let end { at(end, order: header.order) { finish(end) } }
        }
    }

    /// Resolves a dynamic node's properties at its start and builds the kernels of every
    /// leaf; the legs last until the slowest leaf rests.
    private func resolveDynamic(_ node: MotionNode, at start: Double)
        -> (leaves: [DynamicLeaf], blending: TrackBuilder.Blending, forward: Double, reverse: Double)? {
        let properties: [DynamicProperty]
        let weight: Double?
        switch node {
        case .physics(let physics): (properties, weight) = (physics.properties, physics.additiveWeight)
        case .spring(let spring): (properties, weight) = (spring.properties, spring.additiveWeight)
        case .decay(let decay): (properties, weight) = (decay.properties, decay.additiveWeight)
        default: return nil
        }
        let pointer = node.header.pointer
        var leaves: [DynamicLeaf] = []
        var springs: [(kernel: SpringKernel, reverse: SpringKernel, crossing: Double?, leafIndex: Int)] = []
        var forwardLength = 0.0, reverseLength = 0.0
        var clamp: Bounds?
        if case .spring(let spring) = node, let range = spring.clamp {
            clamp = Bounds(min: range.lowerBound, max: range.upperBound, mode: .clamp)
        }
        for property in properties {
            let firstLeaf = leaves.count
            defer {
                // A property's own bounds win over a spring's clamp.
                for index in firstLeaf..<leaves.count { leaves[index].bounds = property.bounds ?? clamp }
            }
            if case .spring(let spring) = node, let keyframes = property.keyframes {
                guard let keyed = springKeyframeLeaves(spring, property, keyframes, at: start) else { return nil }
                leaves += keyed.leaves
                forwardLength = max(forwardLength, keyed.forward)
                reverseLength = max(reverseLength, keyed.reverse)
                continue
            }
            let shape = property.to ?? property.from ?? property.path.lookup(in: builder.target) ?? .number(0)
            guard let resolved = builder.resolve(path: property.path, pointer: property.pointer, from: property.from,
                                                 to: shape, at: start, keepAll: property.to == nil) else { return nil }
            let isSpring = if case .spring = node { true } else { false }
            guard builder.charge(resolved.count, weight: isSpring ? TrackBuilder.springSegmentWeight : 1, at: property.pointer) else { return nil }
            for leaf in resolved {
                switch node {
                case .physics(let physics):
                    do {
                        let forward = try PhysicsKernel(from: leaf.from, to: property.to == nil ? leaf.from : leaf.to,
                                                        velocity: physics.velocity, friction: physics.friction,
                                                        restitution: physics.restitution, restVelocity: physics.restVelocity,
                                                        collisions: physics.collisions)
                        let reverse = try PhysicsKernel(position: forward.restValue, velocity: -physics.velocity,
                                                        friction: physics.friction, restitution: physics.restitution,
                                                        restVelocity: physics.restVelocity, walls: forward.walls)
                        // Each bounce is a segment of the body's path: 10,000 bounces on each of
                        // 9,000 elements took 32 s and 10 GB before they were counted.
                        guard builder.charge(forward.contactTimes.count + reverse.contactTimes.count, at: property.pointer) else { return nil }
                        forwardLength = max(forwardLength, forward.restTime)
                        reverseLength = max(reverseLength, reverse.restTime)
                        leaves.append(DynamicLeaf(leaf: leaf, forward: .physics(forward), reverse: .physics(reverse),
                                                  contacts: (forward.contactTimes, reverse.contactTimes)))
                    } catch {
                        diagnostics.invalid(pointer, error.message)
                        return nil
                    }
                case .spring(let spring):
                    let velocity = property.velocity ?? spring.velocity
                    let kernel = SpringKernel(parameters: spring.parameters, from: leaf.from, to: leaf.to, velocity: velocity)
                    let reverse = SpringKernel(parameters: spring.parameters, from: leaf.to, to: leaf.from, velocity: -velocity)
                    let crossing = spring.stopAtTarget ? kernel.firstCrossing() : nil
                    springs.append((kernel, reverse, crossing, leaves.count))
                    leaves.append(DynamicLeaf(leaf: leaf, forward: .spring(kernel, settle: .infinity), reverse: .spring(reverse, settle: .infinity)))
                case .decay(let decay):
                    let forward: DecayKernel
                    if property.to != nil {
                        forward = DecayKernel(from: leaf.from, to: leaf.to, decayConstant: decay.decayConstant, restVelocity: decay.restVelocity)
                    } else {
                        forward = DecayKernel(from: leaf.from, velocity: decay.velocity ?? 0, decayConstant: decay.decayConstant,
                                              roundingFactor: decay.roundingFactor, restVelocity: decay.restVelocity)
                    }
                    let reverse = DecayKernel(from: forward.restingPoint, to: leaf.from, decayConstant: decay.decayConstant,
                                              restVelocity: decay.restVelocity)
                    forwardLength = max(forwardLength, forward.restTime)
                    reverseLength = max(reverseLength, reverse.restTime)
                    leaves.append(DynamicLeaf(leaf: leaf, forward: .decay(forward), reverse: .decay(reverse)))
                default:
                    return nil
                }
            }
        }
        if case .spring(let spring) = node {
            // Components that cross the target (stopAtTarget) hold it from their crossing; the
            // rest settle together on the 1 ms grid.
            let settling = springs.filter { $0.crossing == nil }
            var settle = 0.0, settleBack = 0.0
            do {
                if !settling.isEmpty {
                    settle = try SpringSettling.settle(settling.map(\.kernel), restDelta: spring.restDelta, restSpeed: spring.restSpeed,
                                                       cancellable: true, memo: settleMemo)
                }
                // Always: a reversing parent may run the reverse leg even when the node does not.
                settleBack = try SpringSettling.settle(springs.map(\.reverse), restDelta: spring.restDelta, restSpeed: spring.restSpeed,
                                                       cancellable: true, memo: settleMemo)
            } catch {
                if error == .cancelled {
                    _ = builder.stillWanted()
                    return nil
                }
                if case .tooMuchWork = error {
                    diagnostics.invalid(pointer, error.message)
                    return nil
                }
                if Self.isUndamped(spring) {
                    settle = .infinity
                    settleBack = .infinity
                } else {
                    diagnostics.invalid(pointer, error.message)
                    return nil
                }
            }
            forwardLength = max(forwardLength, settle, springs.compactMap(\.crossing).max() ?? 0)
            reverseLength = max(reverseLength, settleBack)
            for item in springs {
                leaves[item.leafIndex].forward = .spring(item.kernel, settle: item.crossing ?? settle)
                leaves[item.leafIndex].reverse = .spring(item.reverse, settle: settleBack)
            }
        }
        return (leaves, TrackBuilder.Blending(additiveWeight: weight, bounds: nil), forwardLength, reverseLength)
    }

    static func isUndamped(_ spring: SpringNode) -> Bool { spring.parameters.damping == 0 }

    /// A spring property with keyframes: every leaf's chain through the targets, and back
    /// (the keyframes in reverse order, the durations of the targets it heads for again,
    /// velocity −v0); with how long each way lasts. Nil after a problem (reported).
    private func springKeyframeLeaves(_ spring: SpringNode, _ property: DynamicProperty, _ keyframes: SpringKeyframes, at start: Double)
        -> (leaves: [DynamicLeaf], forward: Double, reverse: Double)? {
        guard let resolved = builder.resolveKeyframes(path: property.path, pointer: property.pointer, values: keyframes.values, at: start),
              builder.charge(resolved.count, weight: TrackBuilder.springSegmentWeight * max(1, keyframes.values.count - 1),
                             at: property.pointer + "/keyframes") else {
            return nil
        }
        let velocity = property.velocity ?? spring.velocity
        let values = resolved.map(\.values)
        let back = keyframes.durations.map { Array($0.dropLast().reversed()) + [nil] }
        do {
            let forward = try SpringChain.build(parameters: spring.parameters, values: values, velocities: values.map { _ in velocity },
                                                durations: keyframes.durations, restDelta: spring.restDelta, restSpeed: spring.restSpeed,
                                                cancellable: true, memo: settleMemo)
            let reverse = try SpringChain.build(parameters: spring.parameters, values: values.map { $0.reversed() },
                                                velocities: values.map { _ in -velocity }, durations: back,
                                                restDelta: spring.restDelta, restSpeed: spring.restSpeed, cancellable: true,
                                                memo: settleMemo)
            let leaves = zip(resolved, zip(forward.chains, reverse.chains)).map { item, chains in
                DynamicLeaf(leaf: item.leaf, forward: .springChain(chains.0), reverse: .springChain(chains.1))
            }
            return (leaves, forward.end, reverse.end)
        } catch {
            if error == .cancelled { _ = builder.stillWanted(); return nil }
            diagnostics.invalid(property.pointer + "/keyframes", error.message)
            return nil
        }
    }

    /// Events before this are not needed (set for windows far into an endless motion).
    var windowStart = -Double.infinity

    // MARK: Group

    private func playGroup(_ group: GroupNode, at t: Double, part: Part, play: Play, finish: @escaping (Double) -> Void) {
        let header = group.header
        let timing = header.timing
        let start = t + timing.delay
        let childPart: Part = timing.reverses || part == .outward ? .outward : .full
        var cycle = 0
        func runCycle(_ cycleStart: Double) {
            at(cycleStart, order: header.order) { [unowned self] in
                if cycle == 0 { emit(.started, header, at: cycleStart) } else { emit(.repeated, header, at: cycleStart) }
                // Placeholders until each child's play hands itself over; never `play` itself,
                // which would make the play own itself when a child never finishes.
                play.children = group.children.map { Play(node: $0) }
                let endCycle: (Double) -> Void = { end in
                    cycle += 1
                    if case .count(let n) = timing.repetition, cycle > n { return finish(end) }
                    runCycle(end + timing.repeatDelay)
                }
                if timing.reverses && group.syncsChildren {
                    join(group.children.count, at: cycleStart, order: header.order, { [unowned self] outwardEnd in
                        emit(.reversed, header, at: outwardEnd)
                        join(group.children.count, at: outwardEnd, order: header.order, endCycle) { index, childDone in
                            self.playHomeward(play.children[index], at: outwardEnd, done: childDone)
                        }
                    }) { index, childDone in
                        self.play(group.children[index], at: cycleStart, part: .outward) { end, childPlay in
                            play.children[index] = childPlay
                            childDone(end)
                        }
                    }
                } else {
                    join(group.children.count, at: cycleStart, order: header.order, endCycle) { index, childDone in
                        self.play(group.children[index], at: cycleStart, part: childPart) { end, childPlay in
                            play.children[index] = childPlay
                            if timing.reverses {
                                self.playHomeward(childPlay, at: end, done: childDone)
                            } else {
                                childDone(end)
                            }
                        }
                    }
                }
            }
        }
        runCycle(start)
    }

    // MARK: Sequence

    private func playSequence(_ sequence: SequenceNode, at t: Double, part: Part, play: Play, finish: @escaping (Double) -> Void) {
        let header = sequence.header
        let timing = header.timing
        let steps = sequence.steps
        let contiguous = timing.reverses && sequence.reversingMode == .contiguous
        let stepPart: Part = contiguous || part == .outward ? .outward : .full
        var cycle = 0

        func runCycle(_ cycleStart: Double) {
            at(cycleStart, order: header.order) { [unowned self] in
                if cycle == 0 { emit(.started, header, at: cycleStart) } else { emit(.repeated, header, at: cycleStart) }
                play.children = []
                var outwardPlays: [Play] = []
                let endCycle: (Double) -> Void = { end in
                    cycle += 1
                    if case .count(let n) = timing.repetition, cycle > n { return finish(end) }
                    runCycle(end + timing.repeatDelay)
                }
                // Steps `order` played forward one after another; `stepped` at each hand-off.
                func forward(_ order: [Int], _ position: Int, _ time: Double, then: @escaping (Double) -> Void) {
                    guard position < order.count else { return then(time) }
                    self.play(steps[order[position]], at: time, part: stepPart) { end, stepPlay in
                        play.children.append(stepPlay)
                        outwardPlays.append(stepPlay)
                        if position + 1 < order.count { self.emit(.stepped, header, at: end, step: order[position + 1]) }
                        forward(order, position + 1, end, then: then)
                    }
                }
                let outwardOrder = Array(steps.indices)
                forward(outwardOrder, 0, cycleStart) { [unowned self] turn in
                    guard timing.reverses else { return endCycle(turn) }
                    emit(.reversed, header, at: turn)
                    if !contiguous {
                        // The sequential turn: the last step hands off to its own replay.
                        emit(.stepped, header, at: turn, step: steps.count - 1)
                        return forward(Array(outwardOrder.reversed()), 0, turn, then: endCycle)
                    }
                    // Contiguous: the turn is not a hand-off (no `stepped`).
                    // Contiguous: the reverse legs run n−1 … 0.
                    let plays = outwardPlays
                    func homeward(_ index: Int, _ time: Double) {
                        guard index >= 0 else { return endCycle(time) }
                        self.playHomeward(plays[index], at: time) { end in
                            if index > 0 { self.emit(.stepped, header, at: end, step: index - 1) }
                            homeward(index - 1, end)
                        }
                    }
                    homeward(plays.count - 1, turn)
                }
            }
        }
        runCycle(t + timing.delay)
    }
}

/// One play of one node: what its homeward part needs to retrace it.
final class Play {
    let node: MotionNode
    /// Tween legs written by this play.
    var legs: [TrackBuilder.Leg] = []
    /// Reverse legs of a physics, spring, decay or path play, ready for its homeward part.
    var homeward: [(track: Int, curve: Curve, duration: Double, blending: TrackBuilder.Blending)] = []
    /// The child plays of the last cycle, in the order they played.
    var children: [Play] = []
    /// A timeline's children: where each started and ended, seconds from the cycle's start.
    var spans: [(start: Double, end: Double)] = []

    init(node: MotionNode) { self.node = node }
}

/// A min-queue of actions ordered by (time, document order, insertion).
///
/// Its own binary heap rather than `MinHeap<Action>` and a comparison closure: the order is
/// compared inline, and a popped `Action` is moved out rather than copied and destroyed
/// through generic value witnesses. The order is total (the insertion number is unique), so
/// actions come out exactly as before. (Small document: Scheduler.run 36,900 → 36,400
/// instructions a request; most of what is left is the closures' captures and TrackBuilder.)
struct ActionQueue {
    struct Action {
        var time: Double
        var order: Int
        var sequence: Int
        /// The event that caused it at the same instant, or −1.
        var cause: Int
        var run: () -> Void
    }

    private var items: [Action] = []
    private var nextSequence = 0

    @inline(__always)
    private static func precedes(_ a: Action, _ b: Action) -> Bool {
        if a.time != b.time { return a.time < b.time }
        if a.order != b.order { return a.order < b.order }
        return a.sequence < b.sequence
    }

    /// Room made at the first push: a tween pushes its start, one action a property and its
    /// end, and grown from empty the queue was reallocated twice for one (callgrind, the small
    /// document, with `playTween`'s lists sized: 175,436 → 174,538 instructions a request).
    static let usualActions = 8

    mutating func push(time: Double, order: Int, cause: Int = -1, _ run: @escaping () -> Void) {
        if items.capacity == 0 { items.reserveCapacity(Self.usualActions) }
        items.append(Action(time: time, order: order, sequence: nextSequence, cause: cause, run: run))
        nextSequence += 1
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Action? {
        guard items.count > 1 else { return items.popLast() }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var best = parent
            if left < items.count, Self.precedes(items[left], items[best]) { best = left }
            if right < items.count, Self.precedes(items[right], items[best]) { best = right }
            if best == parent { break }
            items.swapAt(parent, best)
            parent = best
        }
        return top
    }
}
