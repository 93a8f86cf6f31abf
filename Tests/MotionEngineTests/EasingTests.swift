import Foundation
import XCTest
@testable import MotionEngine

final class EasingTests: XCTestCase {
    // MARK: - Helpers

    private func easing(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Easing? {
        let json: JSON
        do {
            json = try JSONParser.parse(text)
        } catch {
            XCTFail("test JSON does not parse: \(text)", file: file, line: line)
            return nil
        }
        let diagnostics = Diagnostics()
        let result = Easing.decode(json, at: "/motion/easing", diagnostics)
        XCTAssertEqual(diagnostics.problems, [], "decoding \(text)", file: file, line: line)
        XCTAssertNotNil(result, "decoding \(text)", file: file, line: line)
        return result
    }

    private func named(_ name: String, file: StaticString = #filePath, line: UInt = #line) -> Easing {
        easing("\"\(name)\"", file: file, line: line) ?? .linear
    }

    /// Decodes JSON that must fail; returns the problems (and checks that nil came back).
    private func problems(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [Problem] {
        guard let json = try? JSONParser.parse(text) else {
            XCTFail("test JSON does not parse: \(text)", file: file, line: line)
            return []
        }
        let diagnostics = Diagnostics()
        let result = Easing.decode(json, at: "/motion/easing", diagnostics)
        XCTAssertNil(result, "decoding \(text) should fail", file: file, line: line)
        XCTAssertFalse(diagnostics.problems.isEmpty, "decoding \(text) should report a problem", file: file, line: line)
        return diagnostics.problems
    }

    /// Expects exactly one problem of `kind` at `pointer` whose message contains every fragment.
    private func expectProblem(
        _ text: String, _ kind: Problem.Kind, at pointer: String = "/motion/easing", _ fragments: String...,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let found = problems(text, file: file, line: line)
        XCTAssertEqual(found.count, 1, "\(text): \(found)", file: file, line: line)
        guard let problem = found.first else { return }
        XCTAssertEqual(problem.kind, kind, "\(text): \(problem)", file: file, line: line)
        XCTAssertEqual(problem.pointer, pointer, "\(text): \(problem)", file: file, line: line)
        for fragment in fragments {
            XCTAssertTrue(problem.message.contains(fragment), "\(text): '\(problem.message)' lacks '\(fragment)'", file: file, line: line)
        }
        XCTAssertEqual(DocumentError(found).status, kind == .malformed ? 400 : 422, file: file, line: line)
    }

    /// Every parameterless and default-parameter easing.
    private var allNamed: [(String, Easing)] {
        (["linear"] + Easing.pennerNames + Easing.cssKeywords).compactMap { name in
            Easing.named(name).map { (name, $0) }
        }
    }

    /// Independent oracle for cubic-bezier: Bernstein form, 200 bisection steps on t.
    private func bezierOracle(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, _ u: Double) -> Double {
        func b(_ p1: Double, _ p2: Double, _ t: Double) -> Double {
            let m = 1 - t
            return 3 * m * m * t * p1 + 3 * m * t * t * p2 + t * t * t
        }
        var lo = 0.0
        var hi = 1.0
        for _ in 0..<200 {
            let mid = (lo + hi) / 2
            if b(x1, x2, mid) < u { lo = mid } else { hi = mid }
        }
        return b(y1, y2, (lo + hi) / 2)
    }

    // MARK: - docs/easings.md reference values

    func testReferenceValues() {
        // (name, u, 100·E(u), accuracy implied by the digits given)
        let cases: [(String, Double, Double, Double)] = [
            ("quadratic.in", 0.25, 6.25, 1e-9),
            ("cubic.out", 0.25, 57.8125, 1e-9),
            ("sine.inOut", 0.25, 14.6447, 5e-5),
            ("expo.in", 0.5, 3.125, 1e-9),
            ("circular.out", 0.25, 66.14378, 5e-6),
            ("elastic.out", 0.5, 101.5625, 1e-9),
            ("back.in", 0.5, -8.76975, 5e-6),
            ("back.out", 0.25, 81.74097, 5e-6),
            ("bounce.out", 0.5, 76.5625, 1e-9),
            ("bounce.inOut", 0.25, 11.71875, 1e-9),
        ]
        for (name, u, expected, accuracy) in cases {
            XCTAssertEqual(100 * named(name)(u), expected, accuracy: accuracy, name)
        }
        // Not MotionMachine's bounce.inOut (38.28125).
        XCTAssertNotEqual(100 * named("bounce.inOut")(0.25), 38.28125, accuracy: 1)
    }

    func testFurtherFormulaValues() {
        let cases: [(String, Double, Double)] = [
            ("linear", 0.3, 0.3),
            ("quadratic.out", 0.25, 0.4375),
            ("quadratic.inOut", 0.25, 0.125),
            ("quadratic.inOut", 0.75, 0.875),
            ("cubic.in", 0.5, 0.125),
            ("cubic.inOut", 0.25, 0.0625),
            ("cubic.inOut", 0.75, 0.9375),
            ("quartic.in", 0.5, 0.0625),
            ("quartic.out", 0.5, 0.9375),
            ("quartic.inOut", 0.75, 0.96875),
            ("quintic.in", 0.5, 0.03125),
            ("quintic.out", 0.5, 0.96875),
            ("quintic.inOut", 0.25, 0.015625),
            ("sine.in", 0.5, 1 - cos(Double.pi / 4)),
            ("sine.out", 0.5, sin(Double.pi / 4)),
            ("expo.out", 0.5, 0.96875),
            ("expo.inOut", 0.25, 0.015625),
            ("expo.inOut", 0.75, 0.984375),
            ("circular.in", 0.5, 1 - 0.75.squareRoot()),
            ("circular.inOut", 0.25, (1 - 0.75.squareRoot()) / 2),
            ("circular.inOut", 0.75, (0.75.squareRoot() + 1) / 2),
            ("bounce.in", 0.5, 1 - 0.765625),
            ("bounce.out", 0.2, 7.5625 * 0.04),
            ("bounce.out", 0.9, 7.5625 * pow(0.9 - 2.25 / 2.75, 2) + 0.9375),
            ("bounce.out", 0.95, 7.5625 * pow(0.95 - 2.625 / 2.75, 2) + 0.984375),
            ("bounce.inOut", 0.75, (1 + 0.765625) / 2),
            ("elastic.in", 0.5, -0.015625),
            ("elastic.inOut", 0.25, 0.011969444423734025),
            ("back.inOut", 0.25, -0.09968184375),
        ]
        for (name, u, expected) in cases {
            XCTAssertEqual(named(name)(u), expected, accuracy: 1e-12, "\(name)(\(u))")
        }
    }

    func testParameters() {
        // overshoot 0.2 doubles k.
        XCTAssertEqual(Easing.back(.in, overshoot: 0.2)(0.5), -0.300395, accuracy: 1e-12)
        XCTAssertEqual(Easing.back(.in, overshoot: 0)(0.5), 0.125, accuracy: 1e-12)  // k = 0 is cubic
        // A = 2: σ = p/(2π)·asin(1/2) = 0.025; out(0.5) = 1 + 2·2⁻⁵·sin(2π·0.475/0.3) = 0.96875.
        XCTAssertEqual(Easing.elastic(.out, amplitude: 2, period: 0.3)(0.5), 0.96875, accuracy: 1e-12)
        // Amplitudes below 1 are raised to 1.
        XCTAssertEqual(Easing.elastic(.out, amplitude: 0.5, period: 0.3)(0.37),
                       Easing.elastic(.out, amplitude: 1, period: 0.3)(0.37))
        // Period 0.6, A = 1: out(0.5) = 1 + 2⁻⁵·sin(2π(0.5 − 0.15)/0.6).
        XCTAssertEqual(Easing.elastic(.out, amplitude: 1, period: 0.6)(0.5),
                       1 + pow(2, -5) * sin(2 * Double.pi * 0.35 / 0.6), accuracy: 1e-12)
        XCTAssertEqual(named("elastic.inOut"), .elastic(.inOut, amplitude: 1, period: 0.45))
        XCTAssertEqual(named("elastic.out"), .elastic(.out, amplitude: 1, period: 0.3))
        XCTAssertEqual(named("back.inOut"), .back(.inOut, overshoot: 0.1))
    }

    func testSymmetries() {
        let us = stride(from: 0.01, to: 1, by: 0.0325).map { $0 }
        for family in Easing.PennerFamily.allCases {
            let eIn = Easing.penner(family, .in), eOut = Easing.penner(family, .out), eInOut = Easing.penner(family, .inOut)
            for u in us {
                XCTAssertEqual(eOut(u), 1 - eIn(1 - u), accuracy: 1e-12, "\(family) out(\(u))")
                let half = u < 0.5 ? eIn(2 * u) / 2 : (1 + eOut(2 * u - 1)) / 2
                XCTAssertEqual(eInOut(u), half, accuracy: 1e-12, "\(family) inOut(\(u))")
            }
        }
        for u in us {
            XCTAssertEqual(named("back.out")(u), 1 - named("back.in")(1 - u), accuracy: 1e-12)
            XCTAssertEqual(named("elastic.out")(u), 1 - named("elastic.in")(1 - u), accuracy: 1e-12)
        }
    }

    // MARK: - Ends and clamping

    func testExactEnds() {
        var curves = allNamed.filter { name, _ in name != "step-start" }.map(\.1)
        for mode in Easing.EaseMode.allCases {
            curves += [
                .back(mode, overshoot: 0.37), .back(mode, overshoot: 3),
                .elastic(mode, amplitude: 1.7, period: 0.13), .elastic(mode, amplitude: 1, period: 2.5),
            ]
        }
        curves += [
            .cubicBezier(CubicBezier(x1: 0.1, y1: -2, x2: 0.9, y2: 3)),
            .steps(count: 5, position: .jumpEnd), .steps(count: 5, position: .jumpNone),
        ]
        XCTAssertGreaterThan(curves.count, 50)
        for curve in curves {
            XCTAssertEqual(curve(0), 0, "\(curve)")
            XCTAssertEqual(curve(1), 1, "\(curve)")
            XCTAssertEqual(curve(-3), 0, "\(curve)")
            XCTAssertEqual(curve(7), 1, "\(curve)")
            XCTAssertEqual(curve(.nan), 0, "\(curve)")
            XCTAssertEqual(curve(-.infinity), 0, "\(curve)")
            XCTAssertEqual(curve(.infinity), 1, "\(curve)")
        }
        // Near the ends the curves stay close to their end values (no end discontinuity).
        for family in Easing.PennerFamily.allCases where family != .expo {
            for mode in Easing.EaseMode.allCases {
                XCTAssertEqual(Easing.penner(family, mode)(1e-12), 0, accuracy: 1e-5, "\(family).\(mode)")
                XCTAssertEqual(Easing.penner(family, mode)(1 - 1e-12), 1, accuracy: 1e-5, "\(family).\(mode)")
            }
        }
    }

    // MARK: - cubic-bezier

    func testCSSKeywordsAgainstBisectionOracle() {
        XCTAssertEqual(named("ease")(0.5), 0.8024033877399112, accuracy: 1e-6)
        XCTAssertEqual(bezierOracle(0.25, 0.1, 0.25, 1, 0.5), 0.8024033877399112, accuracy: 1e-6)
        let keywords: [(String, [Double])] = [
            ("ease", [0.25, 0.1, 0.25, 1]), ("ease-in", [0.42, 0, 1, 1]),
            ("ease-out", [0, 0, 0.58, 1]), ("ease-in-out", [0.42, 0, 0.58, 1]),
        ]
        for (name, p) in keywords {
            let curve = named(name)
            XCTAssertEqual(curve, .cubicBezier(CubicBezier(x1: p[0], y1: p[1], x2: p[2], y2: p[3])))
            for i in 1..<100 {
                let u = Double(i) / 100
                XCTAssertEqual(curve(u), bezierOracle(p[0], p[1], p[2], p[3], u), accuracy: 1e-6, "\(name)(\(u))")
            }
        }
        XCTAssertEqual(named("ease-in")(0.5), 0.31535681257253945, accuracy: 1e-6)
        XCTAssertEqual(named("ease-out")(0.5), 0.6846431874274606, accuracy: 1e-6)
        XCTAssertEqual(named("ease-in-out")(0.25), 0.1291619310473198, accuracy: 1e-6)
    }

    func testCubicBezierHardCurvesMeetTolerance() {
        // Flat spots in X(t) (zero slope at an end or in the middle) force the bisection path.
        let curves: [[Double]] = [[0, 0, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0], [1, 0.5, 1, 0.5], [0.9, -1.5, 0.1, 2.5], [0, 0, 1, 1]]
        for p in curves {
            let curve = CubicBezier(x1: p[0], y1: p[1], x2: p[2], y2: p[3])
            for i in 1..<200 {
                let u = Double(i) / 200
                let t = curve.parameter(forX: u)
                let m = 1 - t
                let x = 3 * m * m * t * p[0] + 3 * m * t * t * p[2] + t * t * t
                XCTAssertLessThanOrEqual(abs(x - u), 1e-7, "\(p) at \(u)")
                XCTAssertTrue((0...1).contains(t))
                // Y error is at most |dY/dX|·1e-7; compare loosely where slopes are steep.
                XCTAssertEqual(curve.y(atX: u), bezierOracle(p[0], p[1], p[2], p[3], u), accuracy: 2e-4, "\(p) at \(u)")
            }
        }
        XCTAssertEqual(CubicBezier(x1: 0.3, y1: 0.3, x2: 0.7, y2: 0.7).y(atX: 0.123), 0.123)
    }

    // MARK: - steps

    func testSteps() {
        let us = [0, 0.1, 0.24, 0.25, 0.26, 0.5, 0.74, 0.75, 0.99, 1]
        let expected: [Easing.StepPosition: [Double]] = [
            .jumpEnd: [0, 0, 0, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1],
            .jumpStart: [0.25, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1, 1, 1],
            .jumpNone: [0, 0, 0, 1.0 / 3, 1.0 / 3, 2.0 / 3, 2.0 / 3, 1, 1, 1],
            .jumpBoth: [0.2, 0.2, 0.2, 0.4, 0.4, 0.6, 0.6, 0.8, 0.8, 1],
        ]
        for position in Easing.StepPosition.allCases {
            let curve = Easing.steps(count: 4, position: position)
            for (u, value) in zip(us, expected[position] ?? []) {
                XCTAssertEqual(curve(u), value, accuracy: 1e-15, "steps(4, \(position.rawValue)) at \(u)")
            }
        }
        for u in [0, 0.3, 0.999] { XCTAssertEqual(named("step-start")(u), 1) }
        for u in [0, 0.3, 0.999] { XCTAssertEqual(named("step-end")(u), 0) }
        XCTAssertEqual(named("step-end")(1), 1)
        XCTAssertEqual(Easing.steps(count: 2, position: .jumpNone)(0.5), 1)
        XCTAssertEqual(Easing.steps(count: 2, position: .jumpNone)(0.49), 0)
    }

    // MARK: - linear()

    func testLinearStops() throws {
        func curve(_ text: String) -> PiecewiseLinear? {
            guard case .piecewiseLinear(let c) = named(text) else {
                XCTFail("\(text) is not piecewise linear")
                return nil
            }
            return c
        }
        func xs(_ c: PiecewiseLinear?) -> [Double] { c?.points.map(\.x) ?? [] }
        func ys(_ c: PiecewiseLinear?) -> [Double] { c?.points.map(\.y) ?? [] }

        let a = curve("linear(0, 0.25 75%, 1)")
        XCTAssertEqual(xs(a), [0, 0.75, 1])
        XCTAssertEqual(ys(a), [0, 0.25, 1])
        let e = named("linear(0, 0.25 75%, 1)")
        XCTAssertEqual(e(0.375), 0.125, accuracy: 1e-15)
        XCTAssertEqual(e(0.875), 0.625, accuracy: 1e-15)
        XCTAssertEqual(e(0), 0)
        XCTAssertEqual(e(1), 1)

        // Missing percentages are spread evenly.
        XCTAssertEqual(xs(curve("linear(0, 0.25, 1)")), [0, 0.5, 1])
        let spread = xs(curve("linear(0, 0.1, 0.2, 0.9 80%, 1)"))
        XCTAssertEqual(spread.count, 5)
        for (x, want) in zip(spread, [0, 0.8 / 3, 1.6 / 3, 0.8, 1]) { XCTAssertEqual(x, want, accuracy: 1e-15) }
        XCTAssertEqual(named("linear(0, 0.1, 0.2, 0.9 80%, 1)")(0.4), 0.15, accuracy: 1e-12)

        // Two percentages make a flat segment; percentages may come first.
        let flat = named("linear(0, 0.5 25% 75%, 1)")
        XCTAssertEqual(xs(curve("linear(0, 0.5 25% 75%, 1)")), [0, 0.25, 0.75, 1])
        XCTAssertEqual(flat(0.125), 0.25, accuracy: 1e-15)
        XCTAssertEqual(flat(0.5), 0.5)
        XCTAssertEqual(flat(0.875), 0.75, accuracy: 1e-15)
        XCTAssertEqual(named("linear(0, 25% 75% 0.5, 1)"), flat)
        XCTAssertEqual(named("linear(0, 50% 0.8, 1)")(0.25), 0.4, accuracy: 1e-15)

        // Out-of-order positions are raised to the largest so far; at a tie the later y wins.
        let clamped = curve("linear(0, 0.5 60%, 0.7 40%, 1)")
        XCTAssertEqual(xs(clamped), [0, 0.6, 0.6, 1])
        let c = named("linear(0, 0.5 60%, 0.7 40%, 1)")
        XCTAssertEqual(c(0.3), 0.25, accuracy: 1e-15)
        XCTAssertEqual(c(0.6), 0.7)
        XCTAssertEqual(c(0.8), 0.85, accuracy: 1e-12)

        // A tie at the end: at x = 1 the later point's y.
        XCTAssertEqual(xs(curve("linear(0, 0.5 100%, 1)")), [0, 1, 1])
        XCTAssertEqual(named("linear(0, 0.5 100%, 1)")(1), 1)
        XCTAssertEqual(named("linear(0, 0.5 100%, 1)")(0.5), 0.25)

        // Outside the points the end segments are extended, as CSS does.
        XCTAssertEqual(xs(curve("linear(0 20%, 1)")), [0.2, 1])
        XCTAssertEqual(named("linear(0 20%, 1)")(0), -0.25, accuracy: 1e-15)
        XCTAssertEqual(xs(curve("linear(0, 0.5 120%, 1)")), [0, 1.2, 1.2])
        XCTAssertEqual(named("linear(0, 0.5 120%, 1)")(1), 0.5 / 1.2, accuracy: 1e-15)

        // Output may leave [0, 1]; CSS number syntax and whitespace are accepted.
        let overshoot = named("  LINEAR( 0 ,1.2e0   50% ,\\t+1 ) ")
        XCTAssertEqual(overshoot(0.5), 1.2)
        XCTAssertEqual(overshoot(0.75), 1.1, accuracy: 1e-15)

        // The builder itself.
        let built = try XCTUnwrap(PiecewiseLinear(css: [.init(0), .init(0.3, [0.1, 0.2]), .init(0.9), .init(1)]))
        XCTAssertEqual(built.points.map(\.x).count, 5)
        XCTAssertEqual(built.points.map(\.x)[3], 0.6, accuracy: 1e-15)
        XCTAssertNil(PiecewiseLinear(css: [.init(0)]))
        XCTAssertNil(PiecewiseLinear(points: [.init(x: 0, y: 0), .init(x: -0.1, y: 1)]))
    }

    func testPiecewiseLinearBinarySearchMatchesLinearScan() throws {
        var points: [PiecewiseLinear.Point] = [.init(x: 0, y: 0)]
        var x = 0.0
        for i in 1..<40 {
            x += Double(i % 3) * 0.01  // includes ties (step 0)
            points.append(.init(x: x, y: sin(Double(i))))
        }
        points.append(.init(x: 1, y: 1))
        let curve = try XCTUnwrap(PiecewiseLinear(points: points))
        for i in 0...400 {
            let u = Double(i) / 400
            var a = points.lastIndex { $0.x <= u } ?? 0
            if a == points.count - 1 { a -= 1 }
            let pa = points[a], pb = points[a + 1]
            let expected = pa.x == pb.x ? pb.y : pa.y + (u - pa.x) / (pb.x - pa.x) * (pb.y - pa.y)
            XCTAssertEqual(curve(u), expected, accuracy: 1e-12, "at \(u)")
        }
    }

    // MARK: - Decoding: accepted forms

    func testDecodeNames() {
        XCTAssertEqual(named("linear"), .linear)
        for family in Easing.PennerFamily.allCases {
            for mode in Easing.EaseMode.allCases {
                XCTAssertEqual(named("\(family.rawValue).\(mode.rawValue)"), .penner(family, mode))
            }
        }
        for mode in Easing.EaseMode.allCases {
            XCTAssertEqual(named("back.\(mode.rawValue)"), .back(mode, overshoot: 0.1))
            XCTAssertEqual(named("elastic.\(mode.rawValue)"),
                           .elastic(mode, amplitude: 1, period: mode == .inOut ? 0.45 : 0.3))
        }
        XCTAssertEqual(Easing.pennerNames.count, 30)
        XCTAssertEqual(named("ease"), .cubicBezier(.ease))
        XCTAssertEqual(named("ease-in"), .cubicBezier(.easeIn))
        XCTAssertEqual(named("ease-out"), .cubicBezier(.easeOut))
        XCTAssertEqual(named("ease-in-out"), .cubicBezier(.easeInOut))
        XCTAssertEqual(named("step-start"), .steps(count: 1, position: .jumpStart))
        XCTAssertEqual(named("step-end"), .steps(count: 1, position: .jumpEnd))
        XCTAssertEqual(named("Ease-In-Out"), .cubicBezier(.easeInOut))  // CSS keywords ignore case
        XCTAssertEqual(named(" quadratic.in "), .penner(.quadratic, .in))
    }

    func testDecodeCSSFunctions() {
        XCTAssertEqual(named("cubic-bezier(0.25, 0.1, 0.25, 1)"), .cubicBezier(.ease))
        XCTAssertEqual(named("cubic-bezier(.25,.1,.25,1)"), .cubicBezier(.ease))
        XCTAssertEqual(named(" CUBIC-BEZIER(  0.42 ,0 ,\\n1, 1.0 ) "), .cubicBezier(.easeIn))
        XCTAssertEqual(named("cubic-bezier(0, -1.5e0, 1, +2.5)"),
                       .cubicBezier(CubicBezier(x1: 0, y1: -1.5, x2: 1, y2: 2.5)))
        XCTAssertEqual(named("steps(4)"), .steps(count: 4, position: .jumpEnd))
        XCTAssertEqual(named("steps(4, jump-start)"), .steps(count: 4, position: .jumpStart))
        XCTAssertEqual(named("steps(4,jump-end)"), .steps(count: 4, position: .jumpEnd))
        XCTAssertEqual(named("steps(2, jump-none)"), .steps(count: 2, position: .jumpNone))
        XCTAssertEqual(named("steps( 3 , jump-both )"), .steps(count: 3, position: .jumpBoth))
        XCTAssertEqual(named("steps(5, start)"), .steps(count: 5, position: .jumpStart))
        XCTAssertEqual(named("steps(5, END)"), .steps(count: 5, position: .jumpEnd))
        XCTAssertEqual(named("steps(+7)"), .steps(count: 7, position: .jumpEnd))
        XCTAssertEqual(named("linear(0, 1)"),
                       .piecewiseLinear(PiecewiseLinear(points: [.init(x: 0, y: 0), .init(x: 1, y: 1)])!))
    }

    func testDecodeObjects() {
        XCTAssertEqual(easing(#"{"type":"cubicBezier","x1":0.25,"y1":0.1,"x2":0.25,"y2":1}"#), .cubicBezier(.ease))
        XCTAssertEqual(easing(#"{"type":"cubicBezier","x1":0,"y1":-3,"x2":1,"y2":4}"#),
                       .cubicBezier(CubicBezier(x1: 0, y1: -3, x2: 1, y2: 4)))
        XCTAssertEqual(easing(#"{"type":"steps","count":3}"#), .steps(count: 3, position: .jumpEnd))
        XCTAssertEqual(easing(#"{"type":"steps","count":3.0,"position":"start"}"#), .steps(count: 3, position: .jumpStart))
        XCTAssertEqual(easing(#"{"type":"steps","count":2,"position":"jump-none"}"#), .steps(count: 2, position: .jumpNone))
        XCTAssertEqual(easing(#"{"type":"back.out","overshoot":0.2}"#), .back(.out, overshoot: 0.2))
        XCTAssertEqual(easing(#"{"type":"back.inOut"}"#), .back(.inOut, overshoot: 0.1))
        XCTAssertEqual(easing(#"{"type":"elastic.out","amplitude":1.5,"period":0.4}"#),
                       .elastic(.out, amplitude: 1.5, period: 0.4))
        XCTAssertEqual(easing(#"{"type":"elastic.inOut"}"#), .elastic(.inOut, amplitude: 1, period: 0.45))
        XCTAssertEqual(easing(#"{"type":"elastic.in","amplitude":0.5}"#), .elastic(.in, amplitude: 1, period: 0.3))
        XCTAssertEqual(easing(#"{"type":"quadratic.in"}"#), .penner(.quadratic, .in))
        XCTAssertEqual(easing(#"{"type":"bounce.inOut"}"#), .penner(.bounce, .inOut))
        XCTAssertEqual(easing(#"{"type":"ease-out"}"#), .cubicBezier(.easeOut))
        XCTAssertEqual(easing(#"{"type":"linear"}"#), .linear)
        let points = easing(#"{"type":"linear","points":[[0,0],[0.5,0],[0.5,1],[1,1]]}"#)
        XCTAssertEqual(points?(0.25), 0)
        XCTAssertEqual(points?(0.5), 1)
        XCTAssertEqual(points?(0.75), 1)
        let ramp = easing(#"{"type":"linear","points":[[0,0],[0.8,1.2],[1,1]]}"#)
        XCTAssertEqual(ramp?(0.4) ?? .nan, 0.6, accuracy: 1e-15)
        XCTAssertEqual(ramp?(0.9) ?? .nan, 1.1, accuracy: 1e-15)
    }

    // MARK: - Decoding: errors

    func testDecodeWrongJSONTypes() {
        expectProblem("5", .malformed, "not a number")
        expectProblem("null", .malformed, "not null")
        expectProblem("[\"ease\"]", .malformed, "not an array")
        expectProblem(#"{"type":5}"#, .malformed, at: "/motion/easing/type", "must be a string")
        expectProblem(#"{"count":4}"#, .malformed, at: "/motion/easing/type", "is required")
        expectProblem(#"{"type":"cubicBezier","x1":"0","y1":0,"x2":1,"y2":1}"#, .malformed, at: "/motion/easing/x1", "must be a number")
        expectProblem(#"{"type":"cubicBezier","x1":0,"y1":0,"x2":1}"#, .malformed, at: "/motion/easing/y2", "is required")
        expectProblem(#"{"type":"steps","count":1.5}"#, .malformed, at: "/motion/easing/count", "integer")
        expectProblem(#"{"type":"steps","count":2,"position":2}"#, .malformed, at: "/motion/easing/position", "string")
        expectProblem(#"{"type":"back.in","overshoot":"big"}"#, .malformed, at: "/motion/easing/overshoot", "number")
        expectProblem(#"{"type":"linear","points":{}}"#, .malformed, at: "/motion/easing/points", "array")
        expectProblem(#"{"type":"linear","points":[[0,0],[0.5],[1,1]]}"#, .malformed, at: "/motion/easing/points/1", "[x, y]")
        expectProblem(#"{"type":"linear","points":[[0,0],5,[1,1]]}"#, .malformed, at: "/motion/easing/points/1", "[x, y]")
    }

    func testDecodeUnknownFields() {
        expectProblem(#"{"type":"quadratic.in","overshoot":1}"#, .malformed, at: "/motion/easing/overshoot", "unknown field")
        expectProblem(#"{"type":"cubicBezier","x1":0,"y1":0,"x2":1,"y2":1,"x3":1}"#, .malformed, at: "/motion/easing/x3", "unknown field 'x3'")
        expectProblem(#"{"type":"back.out","amplitude":1}"#, .malformed, at: "/motion/easing/amplitude", "unknown field")
        expectProblem(#"{"type":"steps","count":2,"jump":"start"}"#, .malformed, at: "/motion/easing/jump", "unknown field")
    }

    func testDecodeInvalidNames() {
        expectProblem(#""quadratic.sideways""#, .invalid, "'quadratic.sideways'", "in, out or inOut")
        expectProblem(#""quadratic.inout""#, .invalid, "'quadratic.inout'", "did you mean 'quadratic.inOut'")
        expectProblem(#""wobble""#, .invalid, "unknown easing 'wobble'", "quadratic.inOut", "cubic-bezier")
        expectProblem(#""""#, .invalid, "invalid easing ''")
        expectProblem(#""cubic-bezier""#, .invalid, "'cubic-bezier'", "arguments")
        expectProblem(#""bogus(1, 2)""#, .invalid, "'bogus(1, 2)'", "cubic-bezier(x1, y1, x2, y2)")
        expectProblem(#"{"type":"wobble.in"}"#, .invalid, at: "/motion/easing/type", "'wobble.in'")
        expectProblem(#"{"type":"cubic-bezier","x1":0}"#, .invalid, at: "/motion/easing/type", "did you mean 'cubicBezier'")
        expectProblem(#"{"type":"back.sideways"}"#, .invalid, at: "/motion/easing/type", "'back.sideways'")
        expectProblem(#"{"type":"steps(4)"}"#, .invalid, at: "/motion/easing/type", "'steps(4)'")
    }

    func testDecodeInvalidCSSStrings() {
        let cases: [(String, String)] = [
            ("cubic-bezier(1.5, 0, 1, 1)", "x1 must be between 0 and 1, not 1.5"),
            ("cubic-bezier(0, 0, -0.1, 1)", "x2 must be between 0 and 1, not -0.1"),
            ("cubic-bezier(0, 0, 1)", "takes 4 numbers"),
            ("cubic-bezier(0, 0, 1, 1, 1)", "takes 4 numbers"),
            ("cubic-bezier()", "takes 4 numbers"),
            ("cubic-bezier(0, 0, 1, 1", "expected ')'"),
            ("cubic-bezier(0, 0, 1, 1) x", "expected ')'"),
            ("cubic-bezier(0, 0, 1, abc)", "'abc' is not a number"),
            ("cubic-bezier(0, 0, 1, 5.)", "'5.' is not a number"),
            ("cubic-bezier(0, 0, 1, 1e)", "'1e' is not a number"),
            ("cubic-bezier(0, 0, 1, 1e999)", "'1e999' is not a number"),
            ("cubic-bezier(0,, 1, 1)", "argument 2 of cubic-bezier() is empty"),
            ("cubic-bezier(0 0, 1, 1)", "found 3 arguments"),
            ("cubic-bezier(0 0, 1, 1, 1)", "'0 0' is not a number"),
            ("steps(0)", "at least 1"),
            ("steps(-2, jump-start)", "at least 1"),
            ("steps(1, jump-none)", "at least 2 for jump-none"),
            ("steps(2.5)", "'2.5' is not an integer"),
            ("steps(1e1)", "not an integer"),
            ("steps(99999999999999999999)", "at most"),
            ("steps(3, middle)", "unknown step position 'middle'"),
            ("steps(3, jump-end, 1)", "found 3 arguments"),
            ("steps()", "step count"),
            ("linear(1)", "at least 2 stops"),
            ("linear()", "at least 2 stops"),
            ("linear(0, 50%, 1)", "'50%' is not a stop"),
            ("linear(0, 0.5 0.6, 1)", "'0.5 0.6' is not a stop"),
            ("linear(0, 0.5 10% 20% 30%, 1)", "is not a stop"),
            ("linear(0, 10% 0.5 20%, 1)", "is not a stop"),
            ("linear(0, 0.5 x%, 1)", "'x%' is not a percentage"),
            ("linear(0, 0.5 50 %, 1)", "is not a stop"),
            ("linear(0, (0.5), 1)", "parenthesis"),
        ]
        for (text, fragment) in cases {
            expectProblem("\"\(text)\"", .invalid, "'\(text)'", fragment)
        }
    }

    func testDecodeInvalidObjectValues() {
        expectProblem(#"{"type":"cubicBezier","x1":2,"y1":0,"x2":1,"y2":1}"#, .invalid, at: "/motion/easing/x1", "between 0 and 1, not 2")
        expectProblem(#"{"type":"steps","count":0}"#, .invalid, at: "/motion/easing/count", "at least 1")
        expectProblem(#"{"type":"steps","count":1,"position":"jump-none"}"#, .invalid, at: "/motion/easing/count", "at least 2 for jump-none")
        expectProblem(#"{"type":"steps","count":3,"position":"middle"}"#, .invalid, at: "/motion/easing/position", "'middle'")
        expectProblem(#"{"type":"back.out","overshoot":-1}"#, .invalid, at: "/motion/easing/overshoot", "negative")
        expectProblem(#"{"type":"elastic.in","period":0}"#, .invalid, at: "/motion/easing/period", "positive")
        expectProblem(#"{"type":"elastic.in","amplitude":-1}"#, .invalid, at: "/motion/easing/amplitude", "positive")
        expectProblem(#"{"type":"linear","points":[[0,0]]}"#, .invalid, at: "/motion/easing/points", "at least 2 points")
        expectProblem(#"{"type":"linear","points":[[0,0],[1.5,1]]}"#, .invalid, at: "/motion/easing/points/1", "between 0 and 1, not 1.5")
        expectProblem(#"{"type":"linear","points":[[0.1,0],[1,1]]}"#, .invalid, at: "/motion/easing/points/0", "first point's x must be 0")
        expectProblem(#"{"type":"linear","points":[[0,0],[0.9,1]]}"#, .invalid, at: "/motion/easing/points/1", "last point's x must be 1")
        expectProblem(#"{"type":"linear","points":[[0,0],[0.6,0.5],[0.4,0.7],[1,1]]}"#, .invalid, at: "/motion/easing/points/2", "previous point's x (0.6)")

        // Several problems in one object are all reported; a malformed one makes it a 400.
        let found = problems(#"{"type":"cubicBezier","x1":2,"y1":"a","x2":-1,"y2":1,"w":0}"#)
        XCTAssertEqual(found.map(\.pointer).sorted(),
                       ["/motion/easing/w", "/motion/easing/x1", "/motion/easing/x2", "/motion/easing/y1"])
        XCTAssertEqual(DocumentError(found).status, 400)
    }

    func testParseThrowsWithMessage() {
        XCTAssertThrowsError(try Easing.parse("steps(0)")) { error in
            XCTAssertEqual((error as? EasingSyntaxError)?.message.contains("'steps(0)'"), true)
        }
        XCTAssertEqual(try? Easing.parse("sine.out"), .penner(.sine, .out))
        XCTAssertNil(Easing.named("cubic-bezier(0, 0, 1, 1)"))
    }

    // MARK: - Catalogue

    func testCatalogueDecodesAndCoversEveryName() throws {
        guard case .object(let root) = Easing.catalogue, case .array(let entries)? = root["easings"] else {
            return XCTFail("catalogue must be {\"easings\": [...]}")
        }
        var names: [String] = []
        var examples = 0
        for entry in entries {
            let object = try XCTUnwrap(entry.objectValue)
            let name = try XCTUnwrap(object["name"]?.stringValue)
            names.append(name)
            XCTAssertFalse(object["description"]?.stringValue?.isEmpty ?? true, name)
            let parameters = try XCTUnwrap(object["parameters"]?.arrayValue, name)
            for parameter in parameters {
                XCTAssertNotNil(parameter.objectValue?["name"]?.stringValue, name)
                XCTAssertNotNil(parameter.objectValue?["type"]?.stringValue, name)
            }
            if object["form"] == nil {
                XCTAssertNotNil(Easing.named(name), "catalogue name \(name) must decode")
                _ = self.named(name)
            }
            for example in try XCTUnwrap(object["examples"]?.arrayValue, name) {
                let diagnostics = Diagnostics()
                XCTAssertNotNil(Easing.decode(example, at: "", diagnostics), "\(name) example \(example)")
                XCTAssertEqual(diagnostics.problems, [], "\(name) example \(example)")
                examples += 1
            }
        }
        XCTAssertEqual(Set(names).count, names.count, "names are unique")
        for name in ["linear"] + Easing.pennerNames + Easing.cssKeywords + ["cubic-bezier", "steps", "linear()"] {
            XCTAssertTrue(names.contains(name), "catalogue lacks \(name)")
        }
        XCTAssertGreaterThan(examples, names.count)

        // Parameters with defaults and ranges.
        func parameters(_ name: String) -> [JSONObject] {
            let entry = entries.compactMap(\.objectValue).first { $0["name"] == .string(name) }
            return entry?["parameters"]?.arrayValue?.compactMap(\.objectValue) ?? []
        }
        XCTAssertEqual(parameters("back.out").first?["name"], .string("overshoot"))
        XCTAssertEqual(parameters("back.out").first?["default"], .number(0.1))
        XCTAssertEqual(parameters("elastic.inOut").first { $0["name"] == .string("period") }?["default"], .number(0.45))
        XCTAssertEqual(parameters("elastic.in").first { $0["name"] == .string("period") }?["default"], .number(0.3))
        XCTAssertEqual(parameters("cubic-bezier").first?["maximum"], .number(1))
        XCTAssertEqual(parameters("steps").first { $0["name"] == .string("position") }?["default"], .string("jump-end"))
        XCTAssertEqual(parameters("quadratic.in").count, 0)

        // It serialises and parses back to the same value.
        var writer = JSONWriter()
        writer.value(Easing.catalogue)
        XCTAssertEqual(try JSONParser.parse(writer.bytes), Easing.catalogue)
    }
}
