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

/// The rest of the engine trap audit (docs/reliability.md, "Engine trap audit").
extension TrapAuditTests {
    // MARK: - Recursion depth

    func testPropertyPathsHaveASegmentLimit() {
        // 100,000 segments: walking and writing the path recursed once per segment and
        // overflowed the stack.
        let deep = Array(repeating: "a", count: 100_000).joined(separator: ".")
        expectInvalid(#"{"target":{},"motion":{"type":"tween","duration":1,"properties":[{"path":"\#(deep)","from":0,"to":1}]}}"#,
                      at: "/motion/properties/0/path", mentioning: "at most 256 segments")
        expectInvalid(#"{"target":{},"motion":{"type":"path","path":"M0 0 L1 0","duration":1,"output":"\#(deep)"}}"#,
                      at: "/motion/output", mentioning: "at most 256 segments")
        // 256 segments are fine, written as nested objects.
        let allowed = Array(repeating: "a", count: 256).joined(separator: ".")
        XCTAssertNoThrow(try compile(#"{"target":{},"motion":{"type":"tween","duration":1,"properties":[{"path":"\#(allowed)","from":0,"to":1}]}}"#))
        XCTAssertNil(PropertyPath(Array(repeating: "a", count: 257).joined(separator: ".")))
        XCTAssertEqual(PropertyPath(allowed)?.segments.count, 256)
    }

    // MARK: - Overflow to infinity

    func testDecayWithATinyRestVelocityEnds() throws {
        // |v0|/restVelocity overflowed to ∞: the decay never ended and the timeline silently
        // collapsed to a single frame at 0 with no `completed`.
        let timeline = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"decay","velocity":1e15,"restVelocity":1e-300,"properties":[{"path":"x"}]}}"#)
        let duration = try XCTUnwrap(timeline.duration)
        XCTAssertTrue(duration.isFinite && duration > 100, "\(duration)")
        XCTAssertEqual(timeline.events.last?.kind, .completed)
        let law = ExponentialLaw(position: 0, velocity: 1e15, lambda: ExponentialLaw.lambda(decayConstant: 0.998))
        XCTAssertEqual(law.restTime(restVelocity: 1e-300), (log(1e15) - log(1e-300)) / law.lambda, accuracy: 1e-9)
    }

    // MARK: - Narrowing conversions

    func testFrameIndexAcceptsAnyTime() throws {
        let timeline = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#)
        XCTAssertEqual(timeline.frameIndex(at: .infinity), timeline.frameCount - 1)
        XCTAssertEqual(timeline.frameIndex(at: 1e300), timeline.frameCount - 1)
        XCTAssertEqual(timeline.frameIndex(at: -.infinity), 0)
        XCTAssertEqual(timeline.frameIndex(at: -1e300), 0)
        XCTAssertEqual(timeline.frameIndex(at: .nan), 0)
        XCTAssertEqual(timeline.frameIndex(at: 0.5), 5)
    }

    // MARK: - Integer overflow

    func testSampleCountProductCannotOverflow() {
        // With a raised sample limit the Double pre-check (1% slack) let frames × tracks past
        // Int.max through to an Int multiplication.
        let compiler = TimelineCompiler(limits: EngineLimits(maxSamples: .max))
        XCTAssertThrowsError(try compiler.countFrames(window: TimeWindow(start: 0, end: 1e9), fps: 1000, tracks: 9_300_000)) { error in
            XCTAssertTrue((error as? DocumentError)?.problems.first?.message.contains("max-samples") ?? false, "\(error)")
        }
    }

    // MARK: - Preconditions

    func testOutOfOrderSegmentsAreSortedNotTrapped() {
        var track = Track(path: "x", base: 0)
        let curve = Curve.tween(TweenCurve(from: 0, to: 1, timing: CycleTiming(legDuration: 1), easing: .linear, reverseEasing: .linear))
        track.append(start: 2, curve: curve)
        track.append(start: 1, curve: curve)
        track.append(start: 3, curve: curve)
        XCTAssertEqual(track.segments.map(\.start), [1, 2, 3])
    }
}

extension TrapAuditTests {
    func testRaisedLimitsDoNotOverflow() throws {
        // `2 * maxEvents + 4` trapped for every repeating tween when max-events was near Int.max.
        let limits = EngineLimits(maxSamples: .max, maxEvents: .max, maxProperties: .max, maxResponseBytes: .max)
        let timeline = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":1,"repeat":3,"properties":[{"path":"x","to":1}]}}"#, limits: limits)
        XCTAssertEqual(timeline.events.filter { $0.kind == .repeated }.count, 3)
        XCTAssertFalse(TimelineEncoder.encode(timeline).isEmpty)
    }
}

extension TrapAuditTests {
    /// Checked, not changed: the session clock clamps every seek into the window and only
    /// divides `Double`s, so extreme speeds and seek times give clamped times, never a trap.
    func testSessionClockExtremes() throws {
        for speed in [5e-324, 1e-300, 1e6, 1e308] {
            var clock = SessionClock(start: 0, end: 10, speed: speed, wall: 100)
            for wall in [100.0, 100.5, 1e300, .infinity] {
                let t = clock.time(atWall: wall)
                XCTAssertTrue((0...10).contains(t), "speed \(speed) wall \(wall): \(t)")
            }
            for seek in [Double.nan, .infinity, -.infinity, 1e300, -1e300, 5] {
                var copy = clock
                try? copy.apply(.seek, time: seek, atWall: 100.25)  // a completed clock refuses (409)
                XCTAssertTrue((0...10).contains(copy.time(atWall: 100.25)), "seek \(seek)")
            }
            try? clock.apply(.reverse, atWall: 100.1)
            _ = clock.wall(atTime: 5)
            _ = clock.completionWall
        }
        let timeline = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"#)
        for t in [Double.nan, .infinity, -1e300, 1e300] {
            _ = timeline.document(at: t)
            _ = try? timeline.retargeting("x", to: .number(5), at: t)
        }
    }
}
