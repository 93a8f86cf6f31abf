/// One coordinate of a motion along a path: the point's `x` or `y`, or the tangent angle,
/// at the arc length the node's progress gives (docs/nodes.md#path-and-pathphysics). Lookups are O(log n) in the
/// path's table.
public struct PathCurve: Sendable {
    public enum Component: Sendable {
        case x, y, angle
    }

    /// How far along the path the point is over time.
    public enum Progress: Sendable {
        /// `path`: the fraction of the length, `start + (end − start)·E(u)` per leg.
        case fraction(TweenCurve)
        /// `pathPhysics`: the arc length, driven by the physics law.
        case distance(DynamicCurve)
    }

    /// What evaluating a path curve counts against the reduction budgets, in evaluations of a
    /// usual curve: finding the point at an arc length is a search and a Newton solve.
    /// Sampling a million instants (release build, 500,000 frames × x and y, encoding's share
    /// taken off) took 0.36–0.46 s along cubics, 0.12 s for a tween with `cubic-bezier(1,0,0,1)`
    /// and 0.02 s with `elastic.inOut`; counted as one, exports and plots of path tracks spent
    /// their 5,000,000 evaluations in about 3 s and an svg plot with its envelopes 8.6 s
    /// (found by an adversarial review).
    static let evaluationWeight = 4

    public let geometry: PathGeometry
    public let progress: Progress
    /// `contiguousEdges`: positions wrap around instead of stopping at the ends.
    public let wraps: Bool
    public let component: Component

    public init(geometry: PathGeometry, progress: Progress, wraps: Bool, component: Component) {
        self.geometry = geometry
        self.progress = progress
        self.wraps = wraps
        self.component = component
    }

    /// The arc length at local time τ, clamped (stopAtEdges) or wrapped (contiguousEdges).
    @inline(__always)
    public func arcLength(at tau: Double) -> Double {
        let length = geometry.length
        switch progress {
        case .fraction(let curve):
            let p = curve.value(at: tau)
            return Self.place(p, wraps: wraps) * length
        case .distance(let curve):
            guard length > 0 else { return 0 }
            return Self.place(curve.value(at: tau) / length, wraps: wraps) * length
        }
    }

    /// A fraction of the length on the path: clamped to [0, 1], or wrapped into [0, 1) with
    /// exactly 1 staying 1. Within 1e−12 of a whole number it snaps, so that rounding in the
    /// last bit (−1e−16 after travelling back to the start) cannot jump to the other end.
    @inline(__always)
    static func place(_ p: Double, wraps: Bool) -> Double {
        guard wraps else { return min(1, max(0, p)) }
        if p == 1 { return 1 }
        let whole = p.rounded()
        if abs(p - whole) < 1e-12 { return whole == 1 ? 1 : 0 }
        return p - p.rounded(.down)
    }

    @inline(__always)
    public func value(at tau: Double) -> Double {
        let s = arcLength(at: tau)
        switch component {
        case .x: return geometry.point(atDistance: s).x
        case .y: return geometry.point(atDistance: s).y
        case .angle: return geometry.tangentAngle(atDistance: s)
        }
    }
}
