import XCTest
@testable import MotionEngine

/// `Cancellation`: a computation whose client left stops at the compiler's next segment
/// charge and a reduction's next track; without a cancellation, or before it is cancelled,
/// nothing changes.
final class CancellationTests: XCTestCase {
    /// Spring keyframes staggered over 40 elements: a charge for each element's play.
    private let staggered: String = {
        let items = Array(repeating: #"{"o":0}"#, count: 40).joined(separator: ",")
        return #"{"fps":10,"target":{"items":[\#(items)]},"motion":{"type":"spring","response":0.3,"dampingRatio":0.5,"stagger":{"each":0.01},"properties":[{"path":"items.*.o","keyframes":[0,1,0]}]}}"#
    }()

    func testTheCurrentCancellationIsPerThreadAndPutBack() {
        XCTAssertNil(Cancellation.current)
        let outer = Cancellation(), inner = Cancellation()
        Cancellation.withCurrent(outer) {
            XCTAssertTrue(Cancellation.current === outer)
            Cancellation.withCurrent(inner) { XCTAssertTrue(Cancellation.current === inner) }
            XCTAssertTrue(Cancellation.current === outer)
            let other = Thread { XCTAssertNil(Cancellation.current) }
            other.start()
            while !other.isFinished { usleep(1_000) }
            XCTAssertFalse(Cancellation.isRequested)
            outer.cancel()
            XCTAssertTrue(Cancellation.isRequested)
        }
        XCTAssertNil(Cancellation.current)
        XCTAssertFalse(Cancellation.isRequested)
    }

    func testACancelledCompilationStopsAtItsNextCharge() throws {
        let whole = try compile(staggered)
        XCTAssertEqual(whole.tracks.count, 40)
        // Not cancelled: the same timeline.
        let running = Cancellation()
        let same = try Cancellation.withCurrent(running) { try compile(staggered) }
        XCTAssertFalse(running.stoppedWork)
        XCTAssertEqual(same.tracks.count, 40)
        XCTAssertEqual(same.tracks.map { $0.value(at: 0.35) }, whole.tracks.map { $0.value(at: 0.35) })

        let cancelled = Cancellation()
        cancelled.cancel()
        XCTAssertFalse(cancelled.stoppedWork, "not yet looked at")
        let error = Cancellation.withCurrent(cancelled) { problems(staggered) }
        XCTAssertEqual(error.problems.map(\.message), [Cancellation.message])
        XCTAssertTrue(cancelled.stoppedWork)
    }

    func testACancelledReductionThrowsBeforeItsNextTrack() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":0,"y":0},"motion":{"type":"tween","duration":1,"easing":"quadratic.inOut","properties":[{"path":"x","to":1},{"path":"y","to":2}]}}"#)
        XCTAssertEqual(try TimelineExport.reduce(timeline, tolerance: 0.001, interpolation: .linear).count, 2)
        let cancelled = Cancellation()
        cancelled.cancel()
        XCTAssertThrowsError(try Cancellation.withCurrent(cancelled) {
            try TimelineExport.reduce(timeline, tolerance: 0.001, interpolation: .linear)
        }) { error in
            XCTAssertEqual((error as? DocumentError)?.problems.map(\.message), [Cancellation.message])
        }
    }
    /// The exports reduce every channel (css, waapi, lottie) or track (svg) on their own
    /// paths: each looks before it.
    func testCancelledExportsThrowBeforeTheirNextChannel() throws {
        for format in ["css", "waapi", "lottie", "svg"] {
            let lottie = format == "lottie" ? #","lottie":{"width":100,"height":100,"layers":[{"position":["{x}","{y}"]}]}"# : ""
            let timeline = try compile(#"{"fps":60,"target":{"x":0,"y":0},"output":{"format":"\#(format)"\#(lottie)},"motion":{"type":"tween","duration":1,"easing":"quadratic.inOut","properties":[{"path":"x","to":1},{"path":"y","to":2}]}}"#)
            XCTAssertNoThrow(try TimelineExport.encode(timeline), format)
            let cancelled = Cancellation()
            cancelled.cancel()
            XCTAssertThrowsError(try Cancellation.withCurrent(cancelled) { try TimelineExport.encode(timeline) }, format) { error in
                XCTAssertEqual((error as? DocumentError)?.problems.map(\.message), [Cancellation.message], format)
            }
            XCTAssertTrue(cancelled.stoppedWork, format)
        }
    }
}
