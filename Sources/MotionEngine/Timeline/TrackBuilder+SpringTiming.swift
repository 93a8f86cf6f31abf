/// A tween timed by a motion-interchange spec with a `spring` curve (docs/values.md): the
/// property's leg is the spring from its start to its end value, with
/// v0 = `initialVelocity` × (to − from), and lasts the spring node's rest time for it
/// (`restDelta` = `restSpeed` = 0.01 in the property's own units; all of a composite's
/// leaves settle together, as a spring node's do).
extension TrackBuilder {
    /// Rest-band defaults of a spring node, used for spring curves in specs.
    static let specRestDelta = 0.01
    static let specRestSpeed = 0.01

    /// Resolves a spring-timed property at `start`, appends its segments and returns its legs
    /// with the cycle timing it got; nil after a problem (reported).
    mutating func addSpringTimed(_ property: TweenProperty, spec: MotionSpec, curve: SpringCurve, start: Double,
                                 node: NodeTiming, blending: Blending) -> (legs: [Leg], timing: CycleTiming)? {
        guard var leaves = resolve(path: property.path, pointer: property.pointer, from: property.from, to: property.to, at: start),
              charge(leaves.count, weight: Self.springSegmentWeight, at: property.pointer) else {
            return nil
        }
        for index in leaves.indices { leaves[index].from = rebase(leaves[index], blending) }
        let kernels = leaves.map {
            SpringKernel(parameters: curve.parameters, from: $0.from, to: $0.to, velocity: curve.initialVelocity * ($0.to - $0.from))
        }
        let restTime: Double
        do {
            restTime = try SpringSettling.settle(kernels, restDelta: Self.specRestDelta, restSpeed: Self.specRestSpeed, cancellable: true)
        } catch {
            if error == .cancelled { _ = stillWanted(); return nil }
            diagnostics.invalid(property.pointer, error.message + " (the spring curve of its timing, in the property's units)")
            return nil
        }
        let timing = spec.timing(repeatDelay: node.repeatDelay, duration: restTime)
        let cycle = CycleTiming(legDuration: restTime, reverses: timing.reverses, repetition: timing.repetition,
                                repeatDelay: timing.repeatDelay, playLimit: timing.playLimit)
        let easing = Easing.spring(SpringCurve(parameters: curve.parameters, initialVelocity: curve.initialVelocity,
                                               restDelta: Self.specRestDelta, restSpeed: Self.specRestSpeed, restTime: restTime))
        var legs: [Leg] = []
        for leaf in leaves {
            let made = TweenCurve(from: leaf.from, to: leaf.to, timing: cycle, easing: easing, reverseEasing: easing)
            append(.tween(made), to: leaf, at: start, blending)
            legs.append(Leg(track: leaf.track, from: leaf.from, to: leaf.to, duration: restTime, reverseEasing: easing, blending: blending))
        }
        return (legs, cycle)
    }
}

extension SpringCurve {
    /// A spring curve with a rest time computed elsewhere (a spec's spring in property units):
    /// `E(u) = x(u·T)` for the spring from 0 to 1.
    init(parameters: SpringParameters, initialVelocity: Double, restDelta: Double, restSpeed: Double, restTime: Double) {
        self.parameters = parameters
        self.initialVelocity = initialVelocity
        self.restDelta = restDelta
        self.restSpeed = restSpeed
        self.restTime = restTime
        self.kernel = SpringKernel(parameters: parameters, from: 0, to: 1, velocity: initialVelocity)
    }
}
