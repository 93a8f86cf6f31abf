import Foundation
import XCTest
@testable import MotionEngine

/// Inputs found by the libFuzzer targets (Fuzz/, docs/fuzzing.md), minimized. Each is also in
/// the seed corpus of the target that found it.
final class FuzzRegressionTests: XCTestCase {
    /// FuzzSVGPath: arcs on ellipses whose radius ratio is beyond about 1e90 (finite radii)
    /// trap in `EllipticalArc.pieceCount` (`Int(pieces)` of an infinite or > Int.max piece
    /// count; the sweep per piece shrinks with the ratio) — the site of the arc crash of issue
    /// #19, reached with finite radii. Such arcs are now drawn or refused (422).
    func testExtremelyEccentricArcsDoNotTrap() throws {
        for svg in ["M0 0 A1 1e-95 0 0 1 1 0",               // ratio 1e95: pieces > Int.max
                    "M0 0 A1e60 1e-40 0 0 1 1e60 0",          // ratio 1e100
                    "M0 0 A1e300 1e-300 0 0 1 1e300 0"] {     // ratio overflows to +inf: pieces = inf
            do {
                let geometry = try PathGeometry(svg: svg)
                XCTAssertTrue(geometry.length.isFinite, svg)
            } catch {
                // Refusing such an arc is as good as drawing it.
            }
        }
    }
}
