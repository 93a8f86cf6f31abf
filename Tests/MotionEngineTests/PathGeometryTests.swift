import Foundation
import XCTest
@testable import MotionEngine

final class PathGeometryTests: XCTestCase {
    // MARK: - Helpers

    private func path(_ svg: String, file: StaticString = #filePath, line: UInt = #line) -> PathGeometry {
        do {
            return try PathGeometry(svg: svg)
        } catch {
            XCTFail("'\(svg)' rejected: \(error)", file: file, line: line)
            return try! PathGeometry(svg: "M0 0")
        }
    }

    private func elements(_ svg: String, file: StaticString = #filePath, line: UInt = #line) -> [PathElement] {
        do {
            return try SVGPathParser.parse(svg)
        } catch {
            XCTFail("'\(svg)' rejected: \(error)", file: file, line: line)
            return []
        }
    }

    private func syntaxError(_ svg: String, maxSegments: Int = PathGeometry.defaultMaxSegments,
                             file: StaticString = #filePath, line: UInt = #line) -> PathSyntaxError? {
        do {
            _ = try PathGeometry(svg: svg, maxSegments: maxSegments)
            XCTFail("'\(svg)' accepted", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// Expects a syntax error at `offset` whose message contains every fragment.
    private func expectError(_ svg: String, at offset: Int, _ fragments: String..., maxSegments: Int = PathGeometry.defaultMaxSegments,
                             file: StaticString = #filePath, line: UInt = #line) {
        guard let error = syntaxError(svg, maxSegments: maxSegments, file: file, line: line) else { return }
        XCTAssertEqual(error.offset, offset, "'\(svg)': \(error)", file: file, line: line)
        for fragment in fragments {
            XCTAssertTrue(error.message.contains(fragment), "'\(svg)': '\(error.message)' lacks '\(fragment)'", file: file, line: line)
        }
    }

    private func assertPoint(_ actual: (x: Double, y: Double), _ x: Double, _ y: Double, accuracy: Double = 1e-9,
                             _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        let distance = hypot(actual.x - x, actual.y - y)
        XCTAssertLessThanOrEqual(distance, accuracy, "\(message) got (\(actual.x), \(actual.y)), expected (\(x), \(y))", file: file, line: line)
    }

    private func p(_ x: Double, _ y: Double) -> PathPoint { PathPoint(x, y) }

    /// Independent arc-length oracle: a polyline through `samples + 1` points of `curve(u)`,
    /// u ∈ [0, 1], with cumulative chord lengths.
    private struct Polyline {
        var xs: [Double] = []
        var ys: [Double] = []
        var cumulative: [Double] = []

        init(samples: Int, _ curve: (Double) -> (x: Double, y: Double)) {
            xs.reserveCapacity(samples + 1)
            ys.reserveCapacity(samples + 1)
            cumulative.reserveCapacity(samples + 1)
            var total = 0.0
            var compensation = 0.0  // Kahan summation
            for i in 0...samples {
                let point = curve(Double(i) / Double(samples))
                if i > 0 {
                    let chord = hypot(point.x - xs[i - 1], point.y - ys[i - 1]) - compensation
                    let sum = total + chord
                    compensation = (sum - total) - chord
                    total = sum
                }
                xs.append(point.x)
                ys.append(point.y)
                cumulative.append(total)
            }
        }

        var length: Double { cumulative[cumulative.count - 1] }

        func point(atFraction f: Double) -> (x: Double, y: Double) {
            let target = f * length
            var lo = 0
            var hi = cumulative.count - 1
            while hi - lo > 1 {
                let mid = (lo + hi) / 2
                if cumulative[mid] <= target { lo = mid } else { hi = mid }
            }
            let span = cumulative[hi] - cumulative[lo]
            let u = span > 0 ? (target - cumulative[lo]) / span : 0
            return (xs[lo] + (xs[hi] - xs[lo]) * u, ys[lo] + (ys[hi] - ys[lo]) * u)
        }
    }

    private static let fractions = [0.0, 0.05, 0.1, 0.25, 0.3333, 0.5, 0.61, 0.75, 0.9, 0.999, 1.0]

    /// Compares a path with an oracle: total length and points at several fractions within
    /// 1e−6·L (docs/nodes.md#path-and-pathphysics). Returns the worst error relative to L.
    @discardableResult
    private func assertMatches(_ geometry: PathGeometry, _ oracle: Polyline, _ label: String,
                               file: StaticString = #filePath, line: UInt = #line) -> Double {
        let length = oracle.length
        var worst = abs(geometry.length - length) / length
        XCTAssertLessThanOrEqual(abs(geometry.length - length), 1e-6 * length,
                                 "\(label): length \(geometry.length) vs oracle \(length)", file: file, line: line)
        for f in Self.fractions {
            let expected = oracle.point(atFraction: f)
            let actual = geometry.point(atFraction: f)
            let error = hypot(actual.x - expected.x, actual.y - expected.y)
            worst = max(worst, error / length)
            XCTAssertLessThanOrEqual(error, 1e-6 * length,
                                     "\(label) at p=\(f): (\(actual.x), \(actual.y)) vs oracle (\(expected.x), \(expected.y))",
                                     file: file, line: line)
        }
        return worst
    }

    private func cubicOracle(_ p0: PathPoint, _ p1: PathPoint, _ p2: PathPoint, _ p3: PathPoint) -> Polyline {
        Polyline(samples: 1 << 20) { t in
            let m = 1 - t
            let a = m * m * m, b = 3 * m * m * t, c = 3 * m * t * t, d = t * t * t
            return (a * p0.x + b * p1.x + c * p2.x + d * p3.x, a * p0.y + b * p1.y + c * p2.y + d * p3.y)
        }
    }

    /// An ellipse given by its center parameterisation, written as an SVG arc, with an oracle
    /// that samples the true ellipse.
    private func ellipseArc(center: PathPoint, rx: Double, ry: Double, rotationDegrees: Double,
                            theta1 degrees1: Double, sweep degreesSweep: Double) -> (svg: String, oracle: Polyline) {
        let phi = rotationDegrees * .pi / 180
        let theta1 = degrees1 * .pi / 180
        let delta = degreesSweep * .pi / 180
        func point(_ theta: Double) -> (x: Double, y: Double) {
            (center.x + rx * cos(phi) * cos(theta) - ry * sin(phi) * sin(theta),
             center.y + rx * sin(phi) * cos(theta) + ry * cos(phi) * sin(theta))
        }
        let start = point(theta1)
        let end = point(theta1 + delta)
        let large = abs(delta) > .pi ? 1 : 0
        let sweep = delta > 0 ? 1 : 0
        let svg = "M\(start.x) \(start.y) A\(rx) \(ry) \(rotationDegrees) \(large) \(sweep) \(end.x) \(end.y)"
        return (svg, Polyline(samples: 1 << 20) { u in point(theta1 + u * delta) })
    }

    // MARK: - docs/nodes.md#path-and-pathphysics reference

    func testReferencePath() {
        let geometry = path("M0 0 L100 0 L100 100")
        XCTAssertEqual(geometry.length, 200, accuracy: 1e-12)
        assertPoint(geometry.point(atFraction: 0.25), 50, 0)
        assertPoint(geometry.point(atFraction: 0.75), 100, 50)
        XCTAssertEqual(geometry.tangentAngle(atFraction: 0.25), 0, accuracy: 1e-12)
        XCTAssertEqual(geometry.tangentAngle(atFraction: 0.75), 90, accuracy: 1e-12)
        assertPoint(geometry.point(atFraction: 0), 0, 0)
        assertPoint(geometry.point(atFraction: 1), 100, 100)
        // Clamped outside [0, 1]; NaN is the start.
        assertPoint(geometry.point(atFraction: -0.5), 0, 0)
        assertPoint(geometry.point(atFraction: 7), 100, 100)
        assertPoint(geometry.point(atDistance: .nan), 0, 0)
        assertPoint(geometry.point(atDistance: 150), 100, 50)
        let both = geometry.pointAndAngle(atDistance: 150)
        XCTAssertEqual(both.angle, 90, accuracy: 1e-12)
        assertPoint((both.x, both.y), 100, 50)
        // Right-continuous at the corner: the second segment's direction.
        XCTAssertEqual(geometry.tangentAngle(atFraction: 0.5), 90, accuracy: 1e-12)
        XCTAssertEqual(geometry.tangentAngle(atFraction: 0.5 - 1e-9), 0, accuracy: 1e-12)
    }

    func testTangentAngleDirections() {
        XCTAssertEqual(path("M10 0 L0 0").tangentAngle(atFraction: 0.5), 180, accuracy: 1e-12)
        XCTAssertEqual(path("M0 10 L0 0").tangentAngle(atFraction: 0.5), -90, accuracy: 1e-12)
        XCTAssertEqual(path("M0 0 L10 10").tangentAngle(atFraction: 0.5), 45, accuracy: 1e-12)
        // Exactly 0, not −0 (which would be written as "-0").
        XCTAssertEqual(path("M0 0 L10 -0").tangentAngle(atFraction: 0.5).sign, .plus)
    }

    // MARK: - Parsing: commands

    func testEveryAbsoluteCommand() {
        XCTAssertEqual(elements("M10 20 L30 40 H50 V60 C1 2 3 4 5 6 S7 8 9 10 Q11 12 13 14 T15 16 A5 5 0 0 1 25 16 Z"), [
            .move(to: p(10, 20)),
            .line(to: p(30, 40)),
            .line(to: p(50, 40)),
            .line(to: p(50, 60)),
            .cubic(control1: p(1, 2), control2: p(3, 4), to: p(5, 6)),
            .cubic(control1: p(7, 8), control2: p(7, 8), to: p(9, 10)),  // reflection of (3,4) through (5,6)
            .quad(control: p(11, 12), to: p(13, 14)),
            .quad(control: p(15, 16), to: p(15, 16)),  // reflection of (11,12) through (13,14)
        ] + arcElements(from: p(15, 16), rx: 5, ry: 5, large: false, sweep: true, to: p(25, 16)) + [.close])
    }

    func testEveryRelativeCommandMatchesAbsolute() {
        let absolute = elements("M10 20 L30 40 H50 V60 C51 62 53 64 55 66 S57 68 59 70 Q61 72 63 74 T65 76 A5 5 0 0 1 75 76 Z L0 0")
        let relative = elements("m10 20 l20 20 h20 v20 c1 2 3 4 5 6 s2 2 4 4 q2 2 4 4 t2 2 a5 5 0 0 1 10 0 z l-10 -20")
        XCTAssertEqual(relative, absolute)
        XCTAssertEqual(absolute.count, 10 + arcElements(from: p(65, 76), rx: 5, ry: 5, large: false, sweep: true, to: p(75, 76)).count)
    }

    private func arcElements(from start: PathPoint, rx: Double, ry: Double, large: Bool, sweep: Bool, to end: PathPoint) -> [PathElement] {
        guard case .arc(let arc) = EllipticalArc.make(from: start, rx: rx, ry: ry, rotationDegrees: 0,
                                                       largeArc: large, sweep: sweep, to: end) else {
            XCTFail("not an arc")
            return []
        }
        return (0..<arc.pieceCount).map { arc.piece($0, of: arc.pieceCount) }
    }

    func testImplicitRepeats() {
        XCTAssertEqual(elements("M0 0 10 0 10 10"), [.move(to: p(0, 0)), .line(to: p(10, 0)), .line(to: p(10, 10))])
        XCTAssertEqual(elements("m1 1 2 2 3 3"), [.move(to: p(1, 1)), .line(to: p(3, 3)), .line(to: p(6, 6))])
        XCTAssertEqual(elements("M0 0 L1 1, 2 2 3,3"), [.move(to: p(0, 0)), .line(to: p(1, 1)), .line(to: p(2, 2)), .line(to: p(3, 3))])
        XCTAssertEqual(elements("M0 0 h1 2 3 v1 1"), [
            .move(to: p(0, 0)), .line(to: p(1, 0)), .line(to: p(3, 0)), .line(to: p(6, 0)), .line(to: p(6, 1)), .line(to: p(6, 2)),
        ])
        XCTAssertEqual(elements("M0 0 c1 1 2 2 3 3 1 1 2 2 3 3"), [
            .move(to: p(0, 0)),
            .cubic(control1: p(1, 1), control2: p(2, 2), to: p(3, 3)),
            .cubic(control1: p(4, 4), control2: p(5, 5), to: p(6, 6)),
        ])
        XCTAssertEqual(elements("M0 0 Q1 1 2 0 3 -1 4 0"), [
            .move(to: p(0, 0)), .quad(control: p(1, 1), to: p(2, 0)), .quad(control: p(3, -1), to: p(4, 0)),
        ])
        // A relative moveto's implicit linetos are relative to the previous point.
        XCTAssertEqual(elements("M5 5 m1 1 1 0"), [.move(to: p(5, 5)), .move(to: p(6, 6)), .line(to: p(7, 6))])
    }

    func testNumbers() {
        XCTAssertEqual(elements("M1e1 2E-1L-1.5e+1,.5e1"), [.move(to: p(10, 0.2)), .line(to: p(-15, 5))])
        XCTAssertEqual(elements("M+1.25-0.75"), [.move(to: p(1.25, -0.75))])
        XCTAssertEqual(elements("M0,0L10-5"), [.move(to: p(0, 0)), .line(to: p(10, -5))])
        XCTAssertEqual(elements("M.5.5"), [.move(to: p(0.5, 0.5))])
        XCTAssertEqual(elements("M1.5.5-.5-1"), [.move(to: p(1.5, 0.5)), .line(to: p(-0.5, -1))])
        XCTAssertEqual(elements("M1e2.5"), [.move(to: p(100, 0.5))])
        XCTAssertEqual(elements("M0 0L1e-3 2e+2"), [.move(to: p(0, 0)), .line(to: p(0.001, 200))])
        // Whitespace of every kind, around commas and commands, leading and trailing.
        XCTAssertEqual(elements(" \t\nM 1 ,\r2\u{0C}L3 , 4 \n"), [.move(to: p(1, 2)), .line(to: p(3, 4))])
        XCTAssertEqual(elements("M1 2L3 4Z"), [.move(to: p(1, 2)), .line(to: p(3, 4)), .close])
    }

    func testArcFlagsWithoutSeparators() {
        let spaced = elements("M0 0 a1 1 0 0 0 1 1")
        XCTAssertEqual(elements("M0 0 a1 1 0 00 1 1"), spaced)
        XCTAssertEqual(elements("M0 0 a1 1 0 001 1"), spaced)
        XCTAssertEqual(elements("M0 0 a1,1,0,0,0,1,1"), spaced)
        XCTAssertEqual(elements("M0 0a1 1 0 0 1 1 1"), elements("M0 0 a1 1 0 01 1 1"))
        // svg.js/fonttools cases: flags packed into the end point's first number.
        XCTAssertEqual(elements("M0 0 a2.51 2.51 0 01.25.32"), elements("M0 0 a2.51 2.51 0 0 1 .25 .32"))
        XCTAssertEqual(elements("M0 0 A48 48 0 1148-48"), elements("M0 0 A48 48 0 1 1 48 -48"))
        XCTAssertEqual(spaced.count, 1 + arcElements(from: p(0, 0), rx: 1, ry: 1, large: false, sweep: false, to: p(1, 1)).count)
    }

    func testSmoothReflection() {
        // S after C/S reflects the previous second control point; T after Q/T likewise.
        XCTAssertEqual(elements("M0 0 C10 0 20 10 30 10 S50 20 60 10 s10 10 20 0"), [
            .move(to: p(0, 0)),
            .cubic(control1: p(10, 0), control2: p(20, 10), to: p(30, 10)),
            .cubic(control1: p(40, 10), control2: p(50, 20), to: p(60, 10)),
            .cubic(control1: p(70, 0), control2: p(70, 20), to: p(80, 10)),
        ])
        XCTAssertEqual(elements("M0 0 Q10 10 20 0 T40 0 t20 0"), [
            .move(to: p(0, 0)),
            .quad(control: p(10, 10), to: p(20, 0)),
            .quad(control: p(30, -10), to: p(40, 0)),
            .quad(control: p(50, 10), to: p(60, 0)),
        ])
        // Otherwise the control point is the current point.
        XCTAssertEqual(elements("M0 0 L10 10 S20 20 30 10"), [
            .move(to: p(0, 0)), .line(to: p(10, 10)), .cubic(control1: p(10, 10), control2: p(20, 20), to: p(30, 10)),
        ])
        XCTAssertEqual(elements("M0 0 Q5 5 10 0 S20 20 30 10"), [
            .move(to: p(0, 0)), .quad(control: p(5, 5), to: p(10, 0)), .cubic(control1: p(10, 0), control2: p(20, 20), to: p(30, 10)),
        ])
        XCTAssertEqual(elements("M0 0 C1 1 2 2 10 0 T20 0"), [
            .move(to: p(0, 0)), .cubic(control1: p(1, 1), control2: p(2, 2), to: p(10, 0)), .quad(control: p(10, 0), to: p(20, 0)),
        ])
        XCTAssertEqual(elements("M0 0 T20 0"), [.move(to: p(0, 0)), .quad(control: p(0, 0), to: p(20, 0))])
        // A close in between resets the reflection.
        XCTAssertEqual(elements("M0 0 C1 1 2 2 3 3 Z S5 5 6 6").last, .cubic(control1: p(0, 0), control2: p(5, 5), to: p(6, 6)))
    }

    func testClosePath() {
        XCTAssertEqual(elements("M10 10 L20 10 L20 20 Z L30 30 z m5 5 l1 0"), [
            .move(to: p(10, 10)), .line(to: p(20, 10)), .line(to: p(20, 20)), .close,
            .line(to: p(30, 30)),  // from the subpath's start (10, 10)
            .close,
            .move(to: p(15, 15)),  // relative to the subpath's start
            .line(to: p(16, 15)),
        ])
        let geometry = path("M10 10 L20 10 L20 20 Z L30 30")
        XCTAssertEqual(geometry.length, 10 + 10 + 200.0.squareRoot() + 800.0.squareRoot(), accuracy: 1e-12)
        // The closing line is drawn: 3/4 of the way round a square is on it.
        let square = path("M0 0 H10 V10 H0 Z")
        XCTAssertEqual(square.length, 40, accuracy: 1e-12)
        assertPoint(square.point(atFraction: 0.875), 0, 5)
        XCTAssertEqual(square.tangentAngle(atFraction: 0.875), -90, accuracy: 1e-12)
        assertPoint(square.point(atFraction: 1), 0, 0)
        // A close at the subpath's start adds nothing.
        XCTAssertEqual(path("M0 0 L10 0 L0 0 Z").length, 20, accuracy: 1e-12)
    }

    // MARK: - Moves, jumps, degenerate paths

    func testMovesAddNoLengthAndJumpRule() {
        let geometry = path("M0 0 L10 0 M100 100 L100 110")
        XCTAssertEqual(geometry.length, 20, accuracy: 1e-12)
        // Right-continuous: at the jump the point is already at the new subpath's start.
        assertPoint(geometry.point(atFraction: 0.5), 100, 100)
        XCTAssertEqual(geometry.tangentAngle(atFraction: 0.5), 90, accuracy: 1e-12)
        assertPoint(geometry.point(atDistance: 10 - 1e-9), 10, 0, accuracy: 1e-8)
        XCTAssertEqual(geometry.tangentAngle(atDistance: 10 - 1e-9), 0, accuracy: 1e-12)
        assertPoint(geometry.point(atFraction: 0.25), 5, 0)
        assertPoint(geometry.point(atFraction: 0.75), 100, 105)
        assertPoint(geometry.point(atFraction: 1), 100, 110)
        // Leading moves and trailing zero-length segments or moves are invisible.
        let padded = path("M5 5 M0 0 L10 0 L10 0 M50 50")
        XCTAssertEqual(padded.length, 10, accuracy: 1e-12)
        assertPoint(padded.point(atFraction: 0), 0, 0)
        assertPoint(padded.point(atFraction: 1), 10, 0)
        XCTAssertEqual(padded.tangentAngle(atFraction: 1), 0, accuracy: 1e-12)
        XCTAssertEqual(padded.segmentCount, 1)
    }

    func testZeroLengthPath() {
        for svg in ["M10 10", "M10 10 L10 10", "M10 10 Z", "M10 10 C10 10 10 10 10 10", "M10 10 A5 5 0 0 1 10 10"] {
            let geometry = path(svg)
            XCTAssertEqual(geometry.length, 0, svg)
            for f in [-1, 0, 0.5, 1, 2] {
                assertPoint(geometry.point(atFraction: f), 10, 10, svg)
                XCTAssertEqual(geometry.tangentAngle(atFraction: f), 0, svg)
            }
        }
    }

    func testTangentWhereTheDerivativeVanishes() {
        // Control points on the end points: B′(0) = B′(1) = 0; the direction is along the curve.
        let flat = path("M0 0 C0 0 100 0 100 0")
        XCTAssertEqual(flat.tangentAngle(atFraction: 0), 0, accuracy: 1e-9)
        XCTAssertEqual(flat.tangentAngle(atFraction: 1), 0, accuracy: 1e-9)
        XCTAssertEqual(flat.length, 100, accuracy: 1e-7)
        assertPoint(flat.point(atFraction: 0.5), 50, 0, accuracy: 1e-7)
        let turn = path("M0 0 C0 0 0 100 100 100")
        XCTAssertEqual(turn.tangentAngle(atFraction: 0), 90, accuracy: 1e-9)
        XCTAssertEqual(turn.tangentAngle(atFraction: 1), 0, accuracy: 1e-9)
        let arriving = path("M0 0 C0 100 100 100 100 100")
        XCTAssertEqual(arriving.tangentAngle(atFraction: 1), 0, accuracy: 1e-9)  // −B″(1) = (600, 0)
        let quad = path("M0 0 Q0 0 10 10")
        XCTAssertEqual(quad.tangentAngle(atFraction: 0), 45, accuracy: 1e-9)
    }

    // MARK: - Accuracy against independent oracles

    func testCubicsAgainstPolylineOracle() {
        let cases: [(PathPoint, PathPoint, PathPoint, PathPoint)] = [
            (p(0, 0), p(30, 120), p(170, -40), p(200, 60)),   // smooth S-curve
            (p(0, 0), p(100, 100), p(0, 100), p(100, 0)),     // cusp at t = 0.5 (B′ = 0)
            (p(0, 0), p(300, 200), p(-200, 200), p(100, 0)),  // loop
            (p(0, 0), p(0, 0), p(1000, 1), p(1000, 1)),       // very uneven speed
            rightPart(of: (p(0, 0), p(100, 100), p(0, 100), p(100, 0)), from: 0.3),  // cusp at t = 2/7
        ]
        for (p0, p1, p2, p3) in cases {
            let svg = "M\(p0.x) \(p0.y) C\(p1.x) \(p1.y) \(p2.x) \(p2.y) \(p3.x) \(p3.y)"
            let worst = assertMatches(path(svg), cubicOracle(p0, p1, p2, p3), svg)
            XCTAssertLessThan(worst, 1e-8, "\(svg): worst relative error \(worst)")
        }
        // A quadratic, via the element form, against its own Bernstein form.
        let quad = try! PathGeometry(elements: [.move(to: p(0, 0)), .quad(control: p(50, 200), to: p(100, 0))])
        let quadOracle = Polyline(samples: 1 << 20) { t in
            let m = 1 - t
            return (2 * m * t * 50 + t * t * 100, 2 * m * t * 200)
        }
        assertMatches(quad, quadOracle, "quad")
    }

    /// The part of a cubic from parameter `t` to 1 (de Casteljau), as a cubic of its own.
    private func rightPart(of c: (PathPoint, PathPoint, PathPoint, PathPoint), from t: Double) -> (PathPoint, PathPoint, PathPoint, PathPoint) {
        func lerp(_ a: PathPoint, _ b: PathPoint) -> PathPoint { p(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t) }
        let ab = lerp(c.0, c.1), bc = lerp(c.1, c.2), cd = lerp(c.2, c.3)
        let abc = lerp(ab, bc), bcd = lerp(bc, cd)
        return (lerp(abc, bcd), bcd, cd, c.3)
    }

    func testSeedChordMeasurementIsNotAccurateEnough() {
        // Guard that the oracle comparison can fail: a 5-chord length is off by far more than 1e−6·L.
        let (p0, p1, p2, p3) = (p(0, 0), p(30, 120), p(170, -40), p(200, 60))
        let oracle = cubicOracle(p0, p1, p2, p3)
        let coarse = Polyline(samples: 5) { t in
            let m = 1 - t
            let a = m * m * m, b = 3 * m * m * t, c = 3 * m * t * t, d = t * t * t
            return (a * p0.x + b * p1.x + c * p2.x + d * p3.x, a * p0.y + b * p1.y + c * p2.y + d * p3.y)
        }
        XCTAssertGreaterThan(abs(coarse.length - oracle.length), 1e-6 * oracle.length)
        XCTAssertEqual(path("M0 0 C30 120 170 -40 200 60").length, oracle.length, accuracy: 1e-6 * oracle.length)
    }

    func testArcsAgainstTrueEllipse() {
        let cases = [
            ellipseArc(center: p(40, 30), rx: 120, ry: 45, rotationDegrees: 25, theta1: 10, sweep: 250),
            ellipseArc(center: p(0, 0), rx: 50, ry: 50, rotationDegrees: 0, theta1: 0, sweep: -100),
            ellipseArc(center: p(-20, 5), rx: 200, ry: 10, rotationDegrees: -60, theta1: -80, sweep: 340),
            ellipseArc(center: p(3, 4), rx: 1, ry: 2, rotationDegrees: 90, theta1: 170, sweep: 5),
        ]
        for (svg, oracle) in cases {
            let worst = assertMatches(path(svg), oracle, svg)
            XCTAssertLessThan(worst, 1e-6, svg)
        }
    }

    func testArcRadiiCorrection() {
        // Radii too small are scaled up until the ellipse reaches the end: a half circle of r 50.
        let circle = path("M0 0 A10 10 0 0 1 100 0")
        XCTAssertEqual(circle.length, 50 * .pi, accuracy: 1e-6 * 50 * .pi)
        assertPoint(circle.point(atFraction: 0.5), 50, -50, accuracy: 1e-5)  // sweep 1: through negative y
        assertPoint(circle.point(atFraction: 1), 100, 0, accuracy: 0)
        XCTAssertEqual(circle.tangentAngle(atFraction: 0), -90, accuracy: 1e-6)
        assertPoint(path("M0 0 A10 10 0 0 0 100 0").point(atFraction: 0.5), 50, 50, accuracy: 1e-5)
        // Non-uniform: scaled by 2.5 to rx 50, ry 25; compared with the true half ellipse.
        let ellipse = path("M0 0 A20 10 0 1 1 100 0")
        let oracle = Polyline(samples: 1 << 20) { u in
            let theta = Double.pi + u * Double.pi
            return (50 + 50 * cos(theta), 25 * sin(theta))
        }
        assertMatches(ellipse, oracle, "scaled ellipse")
        assertPoint(ellipse.point(atFraction: 0.5), 50, -25, accuracy: 1e-5)
        // Negative radii are made positive.
        XCTAssertEqual(path("M0 0 A-10 -10 0 0 1 100 0").length, circle.length, accuracy: 1e-12)
        // Rotation only matters modulo 360.
        XCTAssertEqual(elements("M0 0 A30 10 400 0 1 40 20"), elements("M0 0 A30 10 40 0 1 40 20"))
    }

    func testDegenerateArcs() {
        // A zero radius makes a line; equal end points omit the arc.
        XCTAssertEqual(elements("M0 0 A0 10 0 0 1 30 40"), [.move(to: p(0, 0)), .line(to: p(30, 40))])
        XCTAssertEqual(elements("M0 0 A10 0 0 0 1 30 40"), [.move(to: p(0, 0)), .line(to: p(30, 40))])
        XCTAssertEqual(elements("M5 5 A10 10 0 0 1 5 5 L6 5"), [.move(to: p(5, 5)), .line(to: p(6, 5))])
        XCTAssertEqual(path("M0 0 a0 0 0 0 1 30 40").length, 50, accuracy: 1e-12)
        // A radius so large that the short arc is straight is a line; no precision is lost.
        XCTAssertEqual(elements("M0 0 A1e15 1e15 0 0 1 10 0"), [.move(to: p(0, 0)), .line(to: p(10, 0))])
        let huge = path("M0 0 A1e9 1e9 0 0 1 10 0")
        XCTAssertEqual(huge.length, 10, accuracy: 1e-9)
        assertPoint(huge.point(atFraction: 0.5), 5, 0, accuracy: 1e-6)
    }

    func testArcPiecesAreAtMostNinetyDegrees() {
        for svg in ["M0 0 A50 50 0 0 1 100 0", "M0 0 A50 50 0 1 0 1 1", "M0 0 A80 20 30 1 1 10 0"] {
            let parsed = elements(svg)
            let cubics = parsed.dropFirst()
            XCTAssertGreaterThanOrEqual(cubics.count, 2, svg)
            let a = arcArguments(svg)
            guard case .arc(let arc) = EllipticalArc.make(from: p(0, 0), rx: a.rx, ry: a.ry, rotationDegrees: a.rotation,
                                                          largeArc: a.large, sweep: a.sweep, to: a.to) else {
                XCTFail(svg)
                continue
            }
            XCTAssertEqual(cubics.count, arc.pieceCount, svg)
            XCTAssertLessThanOrEqual(abs(arc.deltaTheta) / Double(arc.pieceCount), .pi / 2 + 1e-12, svg)
            XCTAssertLessThanOrEqual(arc.pieceCount, EllipticalArc.maxPieces, svg)
        }
    }

    private func arcArguments(_ svg: String) -> (rx: Double, ry: Double, rotation: Double, large: Bool, sweep: Bool, to: PathPoint) {
        let numbers = svg.split(whereSeparator: { $0 == " " || $0 == "A" || $0 == "M" }).compactMap { Double($0) }
        return (numbers[2], numbers[3], numbers[4], numbers[5] == 1, numbers[6] == 1, p(numbers[7], numbers[8]))
    }

    // MARK: - Errors

    func testSyntaxErrors() {
        expectError("", at: 0, "empty")
        expectError("   \n", at: 4, "empty")
        expectError("L10 10", at: 0, "must begin with a moveto")
        expectError("  10 10", at: 2, "must begin with a moveto")
        expectError("M10", at: 3, "expected a number", "y of the moveto point", "the end of the path data")
        expectError("M10 10 L10 x", at: 11, "expected a number", "'x'")
        expectError("M10 10 L10 -x", at: 12, "expected a number", "'x'")
        expectError("M1. 2", at: 3, "expected a digit after '.'")
        expectError("M0 0 A1 1 0 2 1 5 5", at: 12, "expected an arc flag", "large-arc-flag")
        expectError("M0 0 A1 1 0 0 5 5 5", at: 14, "expected an arc flag", "sweep-flag")
        expectError("M0 0 L1 1,", at: 10, "expected a number after ','")
        expectError("M0 0 L1 1,,2 2", at: 10, "expected a number after ','")
        expectError("M0 0 L1,,1", at: 8, "expected a number")
        expectError("M,0 0", at: 1, "expected a number")
        expectError("M0 0 X", at: 5, "expected a command letter")
        expectError("M0 0 Z 5 5", at: 7, "expected a command letter")
        expectError("M0 0 L1e999 0", at: 6, "out of range")
        expectError("M0 0 L1 1é", at: 9, "non-ASCII")
        expectError("M0 0 L1 1 L", at: 11, "expected a number")
        expectError("M0 0 0x10 0", at: 6, "expected a number", "'x'")
        // Numbers are held to ±1e15 (so the length cannot overflow either).
        expectError("M0 0 L1e308 0 L-1e308 0", at: 6, "outside ±1e15")
    }

    func testSegmentLimit() {
        let svg = "M0 0" + String(repeating: " L1 1", count: 10)
        XCTAssertNoThrow(try PathGeometry(svg: svg, maxSegments: 11))
        // The 6th element (5th L) is over a limit of 5; the k-th L is at offset 5·k.
        expectError(svg, at: 25, "more than 5 segments", maxSegments: 5)
        // Implicit repeats count too, reported where the repeat starts.
        expectError("M0 0 1 1 2 2 3 3", at: 13, "more than 3 segments", maxSegments: 3)
        // An arc counts once per Bézier piece.
        let pieces = elements("M0 0 A50 50 0 0 1 100 0").count - 1
        XCTAssertNoThrow(try PathGeometry(svg: "M0 0 A50 50 0 0 1 100 0", maxSegments: pieces + 1))
        expectError("M0 0 A50 50 0 0 1 100 0", at: 5, "segments", maxSegments: pieces)
    }

    func testElementErrors() {
        XCTAssertThrowsError(try PathGeometry(elements: [])) { XCTAssertEqual(($0 as? PathElementError)?.index, 0) }
        XCTAssertThrowsError(try PathGeometry(elements: [.line(to: p(1, 1))])) {
            XCTAssertEqual(($0 as? PathElementError)?.message, "the first path element must be a move")
        }
        XCTAssertThrowsError(try PathGeometry(elements: [.move(to: p(0, 0)), .line(to: p(.infinity, 0))])) {
            XCTAssertEqual(($0 as? PathElementError)?.index, 1)
        }
    }

    // MARK: - Decoding

    private func decode(_ text: String, maxSegments: Int = PathGeometry.defaultMaxSegments) -> (PathGeometry?, [Problem]) {
        let json = try! JSONParser.parse(text)
        let diagnostics = Diagnostics()
        let geometry = PathElement.decode(json, at: "/motion/path", diagnostics, maxSegments: maxSegments)
        XCTAssertEqual(geometry == nil, !diagnostics.isEmpty, text)
        return (geometry, diagnostics.problems)
    }

    func testDecodeStringAndArray() {
        XCTAssertEqual(decode(#""M0 0 L100 0 L100 100""#).0?.length ?? 0, 200, accuracy: 1e-12)
        let (geometry, problems) = decode("""
            [{"op": "move", "to": [0, 0]}, {"op": "line", "to": [100, 0]},
             {"op": "quad", "control": [150, 0], "to": [150, 50]},
             {"op": "cubic", "control1": [150, 100], "control2": [100, 100], "to": [100, 150]},
             {"op": "close"}]
            """)
        XCTAssertEqual(problems, [])
        let svg = path("M0 0 L100 0 Q150 0 150 50 C150 100 100 100 100 150 Z")
        XCTAssertEqual(geometry, svg)
        XCTAssertEqual(geometry?.length ?? 0, svg.length, accuracy: 0)
    }

    func testDecodeSyntaxErrorIs422() {
        let (_, problems) = decode(#""M0 0 L10""#)
        XCTAssertEqual(problems.count, 1)
        XCTAssertEqual(problems.first?.kind, .invalid)
        XCTAssertEqual(problems.first?.pointer, "/motion/path")
        XCTAssertTrue(problems.first?.message.hasPrefix("invalid path data at character 8: expected a number") ?? false, "\(problems)")
        XCTAssertEqual(DocumentError(problems).status, 422)
        let empty = decode(#""""#).1
        XCTAssertEqual(empty.first?.message.hasPrefix("invalid path data at character 0: path data is empty"), true, "\(empty)")
    }

    func testDecodeWrongTypeIs400() {
        for text in ["3", "null", "{\"op\": \"move\"}", "true"] {
            let (_, problems) = decode(text)
            XCTAssertEqual(problems.map(\.kind), [.malformed], text)
            XCTAssertEqual(problems.first?.pointer, "/motion/path", text)
            XCTAssertEqual(DocumentError(problems).status, 400, text)
        }
    }

    func testDecodeElementProblems() {
        let (_, problems) = decode("""
            [{"op": "move", "to": [0, 0]},
             {"op": "line", "to": "x"},
             {"op": "cubic", "control1": [1], "control2": [2, 2], "to": [3, 3]},
             {"op": "quad", "to": [1, 1]},
             {"op": "close", "to": [1, 1]},
             {"op": "spiral", "to": [1, 1]},
             3,
             {"to": [1, 1]},
             {"op": "line", "to": [1, "a"]},
             {"op": 7},
             {"op": "line", "to": [1, 2, 3], "extra": 1}]
            """)
        let found = Set(problems.map { "\($0.pointer) \($0.kind == .malformed ? 400 : 422)" })
        XCTAssertEqual(found, [
            "/motion/path/1/to 400",
            "/motion/path/2/control1 422",
            "/motion/path/3/control 400",
            "/motion/path/4/to 400",
            "/motion/path/5/op 422",
            "/motion/path/6 400",
            "/motion/path/7/op 400",
            "/motion/path/8/to/1 400",
            "/motion/path/9/op 400",
            "/motion/path/10/to 422",
            "/motion/path/10/extra 400",
        ], "\(problems)")
        XCTAssertEqual(problems.count, found.count, "\(problems)")
        XCTAssertEqual(DocumentError(problems).status, 400)
    }

    func testDecodeElementStructureIs422() {
        let notMove = decode(#"[{"op": "line", "to": [1, 1]}]"#).1
        XCTAssertEqual(notMove.map(\.pointer), ["/motion/path/0/op"])
        XCTAssertEqual(notMove.map(\.kind), [.invalid])
        XCTAssertTrue(notMove.first?.message.contains("first path element must be a 'move'") ?? false)
        let empty = decode("[]").1
        XCTAssertEqual(empty.map(\.pointer), ["/motion/path"])
        XCTAssertEqual(empty.map(\.kind), [.invalid])
        let wrongCount = decode(#"[{"op": "move", "to": [1, 1, 1]}]"#).1
        XCTAssertEqual(wrongCount.map(\.pointer), ["/motion/path/0/to"])
        XCTAssertEqual(wrongCount.map(\.kind), [.invalid])
        XCTAssertTrue(wrongCount.first?.message.contains("exactly 2 coordinates") ?? false)
        let tooMany = decode(#"[{"op": "move", "to": [0, 0]}, {"op": "line", "to": [1, 1]}, {"op": "close"}]"#, maxSegments: 2).1
        XCTAssertEqual(tooMany.map(\.kind), [.invalid])
        let overflow = decode(#"[{"op": "move", "to": [0, 0]}, {"op": "line", "to": [1e308, 0]}, {"op": "line", "to": [-1e308, 0]}]"#).1
        XCTAssertEqual(overflow.map(\.pointer), ["/motion/path/1/to/0", "/motion/path/2/to/0"])
        XCTAssertEqual(overflow.map(\.kind), [.invalid, .invalid])
        XCTAssertTrue(overflow.first?.message.contains("±1e15") ?? false)
    }

    // MARK: - Complexity evidence (no timing)

    /// A path of `n` cubic "waves".
    private func waves(_ n: Int) -> PathGeometry {
        var svg = "M0 0"
        for _ in 0..<n { svg += " c10 20 30 -20 40 0" }
        return path(svg)
    }

    func testTableSizeIsLinearInSegments() {
        let small = waves(100)
        let large = waves(10_000)
        XCTAssertEqual(small.segmentCount, 100)
        XCTAssertEqual(large.segmentCount, 10_000)
        let perSegmentSmall = Double(small.tableEntryCount) / 100
        let perSegmentLarge = Double(large.tableEntryCount) / 10_000
        XCTAssertEqual(perSegmentSmall, perSegmentLarge, accuracy: 0.01)
        XCTAssertLessThanOrEqual(perSegmentLarge, 40)
        // Lines have no table.
        XCTAssertEqual(path("M0 0" + String(repeating: " l1 1", count: 1000)).tableEntryCount, 0)
    }

    func testLookupProbesAreLogarithmic() {
        for n in [16, 1024, 16_384] {
            let geometry = waves(n)
            let maxTable = geometry.segments.map(\.tableCount).max() ?? 0
            let bound = Int(log2(Double(n)).rounded(.up)) + 1 + Int(log2(Double(maxTable)).rounded(.up)) + 1
            var worst = 0
            for i in 0...1000 {
                var probes = 0
                _ = geometry.locate(geometry.length * Double(i) / 1000, probes: &probes)
                worst = max(worst, probes)
            }
            XCTAssertLessThanOrEqual(worst, bound, "n = \(n)")
            XCTAssertGreaterThanOrEqual(worst, Int(log2(Double(n))), "n = \(n)")  // it does search
        }
        // Lines: exactly the binary search over segments.
        let lines = path("M0 0" + String(repeating: " l1 0", count: 4096))
        var probes = 0
        let located = lines.locate(1234.5, probes: &probes)
        XCTAssertEqual(located?.0, 1234)
        XCTAssertEqual(located?.1 ?? 0, 0.5, accuracy: 1e-9)
        XCTAssertLessThanOrEqual(probes, 13)
    }

    func testLongPathPositionsStayAccurate() {
        // Cumulative lengths over many segments: the point at each segment boundary is exact.
        let geometry = waves(10_000)
        let one = waves(1).length
        XCTAssertEqual(geometry.length, 10_000 * one, accuracy: 1e-6 * geometry.length)
        for k in [0, 1, 2500, 9999] {
            assertPoint(geometry.point(atDistance: Double(k) * one), Double(k) * 40, 0, accuracy: 1e-6 * geometry.length)
        }
    }
}
