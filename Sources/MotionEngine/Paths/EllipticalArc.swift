import Foundation

/// An SVG elliptical arc in center parameterisation, and its approximation by cubic Béziers.
///
/// Follows the SVG 2 implementation notes (endpoint → center conversion, out-of-range radii
/// correction): negative radii are made positive, the rotation is taken modulo 360°, and radii
/// too small to reach the end point are scaled up uniformly until they just do (the center is
/// then the chord's midpoint). The arc is split into equal pieces, each approximated by the
/// cubic with control arms `4/3·tan(δ/4)` (exact at both ends and the middle). Pieces are at
/// most about 20° (fewer degrees the more eccentric the ellipse: `0.35 rad · (rmax/rmin)^(−1/5)`),
/// which keeps the Béziers within about 1e−7 of the arc's length from the true ellipse, so
/// arc-length positions on the path match the true arc to the path's 1e−6·L accuracy.
///
/// Points are computed as offsets from the start point (using `cos a − cos b = −2 sin((a+b)/2)
/// sin((a−b)/2)`), so arcs on huge ellipses stay accurate near their end points.
struct EllipticalArc: Sendable, Equatable {
    enum Conversion: Equatable {
        /// The end point equals the start point: the arc is omitted.
        case omitted
        /// A radius is 0 (or the ellipse is so large that the arc is straight to 1e−12): a line.
        case line
        case arc(EllipticalArc)
        /// Radii too small to reach the end point would have to be scaled up to a radius over
        /// `maxScaledRadius` (a tiny radius beside a larger one): refused.
        case tooLarge(radius: Double)
    }

    let start: PathPoint
    let end: PathPoint
    /// Radii after the correction.
    let rx: Double
    let ry: Double
    let cosPhi: Double
    let sinPhi: Double
    /// Start angle and signed sweep, in radians, of the unit-circle parameter.
    let theta1: Double
    let deltaTheta: Double

    /// Most pieces for one arc (reached only for extremely eccentric ellipses).
    static let maxPieces = 256

    /// The largest radius an arc may be scaled up to (radii too small to reach the end point are
    /// scaled up uniformly; with a tiny radius beside a larger one that can be astronomically
    /// large). Input coordinates and radii are within ±1e15, so every circle between two points
    /// of the path fits; beyond this the arc's samples would leave the engine's value range.
    static let maxScaledRadius = 1e16  // messages say "1e16"

    static func make(from start: PathPoint, rx: Double, ry: Double, rotationDegrees: Double,
                     largeArc: Bool, sweep: Bool, to end: PathPoint) -> Conversion {
        if start == end { return .omitted }
        var rx = abs(rx)
        var ry = abs(ry)
        if rx == 0 || ry == 0 { return .line }
        guard rx.isFinite, ry.isFinite, rotationDegrees.isFinite else { return .line }
        let phi = rotationDegrees.truncatingRemainder(dividingBy: 360) * .pi / 180
        let cosPhi = cos(phi)
        let sinPhi = sin(phi)
        // Step 1: the start point in the ellipse's axes, relative to the chord's midpoint.
        let dx = (start.x - end.x) / 2
        let dy = (start.y - end.y) / 2
        let x1 = cosPhi * dx + sinPhi * dy
        let y1 = -sinPhi * dx + cosPhi * dy
        // Out-of-range radii: Λ = (x1/rx)² + (y1/ry)²; when Λ > 1 the radii are scaled by √Λ so
        // that the ellipse just reaches the end point. √Λ is computed on radii normalised to a
        // largest radius of 1 (`fit` is the largest radius that just reaches), so tiny radii
        // neither overflow Λ nor lose their ratio.
        let largest = Swift.max(rx, ry)
        let fit = hypot(x1 / (rx / largest), y1 / (ry / largest))
        let reach = fit / largest  // √Λ; may be +∞ when the radii are tiny
        guard !reach.isNaN else { return .line }
        if reach > 1 {
            guard fit <= maxScaledRadius else { return .tooLarge(radius: fit) }
            rx = rx / largest * fit
            ry = ry / largest * fit
        }
        // An ellipse so large that the short arc is straight to 1e−12 of its chord (or whose
        // computation would underflow) is a line.
        if reach == 0 || (!largeArc && reach < 1e-12) { return .line }
        // Step 2: the center in the ellipse's axes: ±√((1 − Λ)/Λ) · (rx·y1/ry, −ry·x1/rx), written
        // with (y1/ry)/√Λ and (x1/rx)/√Λ (each at most 1), so no product overflows.
        let sign: Double = largeArc != sweep ? 1 : -1
        let root = reach >= 1 ? 0 : sign * Swift.max(0, 1 - reach * reach).squareRoot()
        let cx = reach >= 1 ? 0 : root * rx * (y1 / ry / reach)
        let cy = reach >= 1 ? 0 : -root * ry * (x1 / rx / reach)
        // Step 4: angles. u is the start on the unit circle, w = v − u the chord to the end.
        let ux = (x1 - cx) / rx
        let uy = (y1 - cy) / ry
        let wx = -2 * x1 / rx
        let wy = -2 * y1 / ry
        let theta1 = atan2(uy, ux)
        var delta = atan2(ux * wy - uy * wx, ux * ux + uy * uy + ux * wx + uy * wy)
        if !sweep && delta > 0 { delta -= 2 * .pi }
        if sweep && delta < 0 { delta += 2 * .pi }
        guard theta1.isFinite, delta.isFinite, rx.isFinite, ry.isFinite else { return .line }
        return .arc(EllipticalArc(start: start, end: end, rx: rx, ry: ry, cosPhi: cosPhi, sinPhi: sinPhi,
                                  theta1: theta1, deltaTheta: delta))
    }

    /// The largest sweep of one piece, in radians.
    var maxPieceSweep: Double {
        let eccentricity = Swift.max(rx, ry) / Swift.min(rx, ry)
        return Swift.min(.pi / 2, 0.35 * pow(eccentricity, -0.2))
    }

    /// Equal pieces of at most `maxPieceSweep`, 1 … `maxPieces`. The count is clamped as a
    /// `Double` before it becomes an `Int`: an extremely eccentric ellipse (a radius ratio that
    /// overflows) asks for infinitely many.
    var pieceCount: Int {
        let pieces = (abs(deltaTheta) / maxPieceSweep * (1 - 1e-12)).rounded(.up)
        guard pieces.isFinite else { return EllipticalArc.maxPieces }
        return Int(Swift.min(Double(EllipticalArc.maxPieces), Swift.max(1, pieces)))
    }

    /// The point at unit-circle angle `theta1 + offset` on the true ellipse.
    func point(atAngleOffset offset: Double) -> PathPoint {
        let half = offset / 2
        let s = sin(half)
        let mid = theta1 + half
        // cos θ − cos θ1 and sin θ − sin θ1 without cancellation.
        let ex = rx * (-2 * sin(mid) * s)
        let ey = ry * (2 * cos(mid) * s)
        return PathPoint(start.x + cosPhi * ex - sinPhi * ey, start.y + sinPhi * ex + cosPhi * ey)
    }

    /// d/dθ of the ellipse point at angle `theta1 + offset`.
    func derivative(atAngleOffset offset: Double) -> PathPoint {
        let theta = theta1 + offset
        let ex = -rx * sin(theta)
        let ey = ry * cos(theta)
        return PathPoint(cosPhi * ex - sinPhi * ey, sinPhi * ex + cosPhi * ey)
    }

    /// Piece `index` of `count` equal pieces, as a cubic from the previous piece's end.
    func piece(_ index: Int, of count: Int) -> PathElement {
        let step = deltaTheta / Double(count)
        let a = Double(index) * step
        let b = index == count - 1 ? deltaTheta : Double(index + 1) * step
        let arm = 4.0 / 3.0 * tan((b - a) / 4)
        let p0 = index == 0 ? start : point(atAngleOffset: a)
        let p3 = index == count - 1 ? end : point(atAngleOffset: b)
        let d0 = derivative(atAngleOffset: a)
        let d3 = derivative(atAngleOffset: b)
        return .cubic(control1: PathPoint(p0.x + arm * d0.x, p0.y + arm * d0.y),
                      control2: PathPoint(p3.x - arm * d3.x, p3.y - arm * d3.y),
                      to: p3)
    }
}
