import XCTest
@testable import MotionEngine

/// Client input that used to trap the process (issues #11, #19): each is now a 422 naming the
/// field, or sane output.
final class TrapAuditTests: XCTestCase {
    func expectInvalid(_ document: String, at pointer: String, mentioning text: String, file: StaticString = #filePath, line: UInt = #line) {
        let error = problems(document, file: file, line: line)
        XCTAssertEqual(error.status, 422, "\(error.problems)", file: file, line: line)
        XCTAssertEqual(error.problems.first?.pointer, pointer, "\(error.problems)", file: file, line: line)
        XCTAssertTrue(error.problems.first?.message.contains(text) ?? false, "\(error.problems)", file: file, line: line)
    }

    private func pathDocument(_ svg: String) -> String {
        #"{"fps":10,"target":{},"motion":{"type":"path","path":"\#(svg)","duration":1,"output":"dot"}}"#
    }

    /// Every sample of every track is finite.
    private func assertFinite(_ timeline: Timeline, file: StaticString = #filePath, line: UInt = #line) {
        for track in timeline.tracks {
            for k in 0..<timeline.frameCount {
                let value = track.value(at: timeline.time(ofFrame: k))
                XCTAssertTrue(value.isFinite, "\(track.path) at frame \(k): \(value)", file: file, line: line)
            }
        }
    }

    // MARK: - SVG arcs and path numbers

    func testArcWithHugeRadiusIsRefusedNotTrapped() {
        // Used to trap converting ~1e62 pieces to Int.
        expectInvalid(pathDocument("M0 0 A50 1.7976931348623157e308 0 0 1 100 0"), at: "/motion/path", mentioning: "outside ±1e15")
    }

    func testArcWithTinyRadiusBesideALargerOneIsRefused() {
        // rx 1e-100 would be scaled up to rx 50, ry 5e101: far beyond the value range.
        expectInvalid(pathDocument("M0 0 A1e-100 1 0 0 1 100 0"), at: "/motion/path", mentioning: "over 1e16")
        expectInvalid(pathDocument("M0 0 A5e-324 1 0 0 1 100 0"), at: "/motion/path", mentioning: "over 1e16")
    }

    func testArcWithSubnormalMinorRadiusIsFinite() throws {
        // The radius ratio overflows to infinity (NaN/∞ piece count before): the piece count
        // is clamped and the flat half ellipse lies on the chord.
        let timeline = try compile(pathDocument("M0 0 A50 2.2250738585072014e-308 0 0 1 100 0"))
        assertFinite(timeline)
        let x = timeline.values(of: "dot.x"), y = timeline.values(of: "dot.y")
        XCTAssertEqual(x.last ?? .nan, 100, accuracy: 1e-9)
        for value in y { XCTAssertEqual(value, 0, accuracy: 1e-9) }
        let arcs = try SVGPathParser.parse("M0 0 A50 2.2250738585072014e-308 0 0 1 100 0")
        XCTAssertLessThanOrEqual(arcs.count, 1 + EllipticalArc.maxPieces)
    }

    func testTinyCircleRadiiAreScaledUpWithoutOverflow() throws {
        // Λ = (x1/rx)² overflowed to ∞ and the arc silently became a line; now a half circle of r 50.
        for radius in ["1e-300", "5e-324", "1e-10"] {
            let geometry = try PathGeometry(svg: "M0 0 A\(radius) \(radius) 0 0 1 100 0")
            XCTAssertEqual(geometry.length, 50 * .pi, accuracy: 1e-6 * 50 * .pi, radius)
        }
    }

    func testLargeArcOnAHugeEllipseStaysFinite() throws {
        let geometry = try PathGeometry(svg: "M0 0 A1e15 1e15 0 1 1 1e-3 0")
        XCTAssertTrue(geometry.length.isFinite)
        XCTAssertEqual(geometry.length, 2 * .pi * 1e15, accuracy: 1e-6 * 2 * .pi * 1e15)
    }

    func testPieceCountIsClampedForEveryArc() {
        let start = PathPoint(0, 0)
        for (rx, ry) in [(50.0, 1e15), (1e-300, 1.0), (50, 5e-324), (1, 1)] {
            if case .arc(let arc) = EllipticalArc.make(from: start, rx: rx, ry: ry, rotationDegrees: 30, largeArc: true,
                                                         sweep: false, to: PathPoint(100, 3)) {
                XCTAssertTrue((1...EllipticalArc.maxPieces).contains(arc.pieceCount), "\(rx) \(ry)")
            }
        }
    }

    func testSVGPathNumbersAreBounded() {
        expectInvalid(pathDocument("M0 0 L1e16 0"), at: "/motion/path", mentioning: "outside ±1e15")
        expectInvalid(pathDocument("M0 0 A10 10 1e300 0 1 100 0"), at: "/motion/path", mentioning: "outside ±1e15")
        // Relative coordinates add up: the absolute point is bounded too.
        expectInvalid(pathDocument("M1e15 0 l1e15 0"), at: "/motion/path", mentioning: "outside ±1e15")
        XCTAssertNoThrow(try compile(pathDocument("M-1e15 0 L1e15 0")))
        // The element-array form holds its coordinates to the same bound.
        expectInvalid(#"{"target":{},"motion":{"type":"path","path":[{"op":"move","to":[0,0]},{"op":"line","to":[1e300,0]}],"duration":1,"output":"dot"}}"#,
                      at: "/motion/path/1/to/0", mentioning: "±1e15")
    }
}
