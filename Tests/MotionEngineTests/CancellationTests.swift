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

    /// Within one property: a chain of spring keyframes looks before each target, and
    /// springs settled together every `springsPerLook`, when the compiler asks them to
    /// (`cancellable`); a session's retarget does not, and settles to the end.
    func testSpringChainsAndSettlingLookWithinOneProperty() throws {
        let parameters = SpringParameters(mass: 1, stiffness: 170, damping: 26)
        let values = (0..<3).map { leaf in [0.0, 1.0 + Double(leaf), 0.0, 2.0] }
        func chains(cancellable: Bool) throws(SpringSettling.Failure) -> Double {
            try SpringChain.build(parameters: parameters, values: values, velocities: [0, 0, 0], durations: nil,
                                  restDelta: 0.001, restSpeed: 0.001, cancellable: cancellable).end
        }
        let springs = (0..<300).map { SpringKernel(parameters: parameters, from: 0, to: Double($0 % 7), velocity: 0) }
        let whole = try chains(cancellable: true)
        let rest = try SpringSettling.settle(springs, restDelta: 0.001, restSpeed: 0.001, cancellable: true)
        XCTAssertGreaterThan(whole, 0)
        XCTAssertGreaterThan(rest, 0)

        let cancelled = Cancellation()
        cancelled.cancel()
        try Cancellation.withCurrent(cancelled) {
            XCTAssertEqual(try? chains(cancellable: false), whole, "not cancellable: built to the end")
            XCTAssertEqual(try? SpringSettling.settle(springs, restDelta: 0.001, restSpeed: 0.001), rest)
            XCTAssertFalse(cancelled.stoppedWork)
            XCTAssertThrowsError(try chains(cancellable: true)) { XCTAssertEqual($0 as? SpringSettling.Failure, .cancelled) }
            XCTAssertTrue(cancelled.stoppedWork)
            XCTAssertThrowsError(try SpringSettling.settle(springs, restDelta: 0.001, restSpeed: 0.001, cancellable: true)) {
                XCTAssertEqual($0 as? SpringSettling.Failure, .cancelled)
            }
            // Fewer springs than `springsPerLook`: no look, the rest time.
            XCTAssertNotNil(try? SpringSettling.settle(Array(springs.prefix(SpringSettling.springsPerLook - 1)),
                                                       restDelta: 0.001, restSpeed: 0.001, cancellable: true))
        }
        XCTAssertEqual(SpringSettling.Failure.cancelled.message, Cancellation.message)
    }

    /// The `json` format looks before each track's samples, its frames layout and `csv`
    /// every `samplesPerLook` samples: cut short when cancelled, and thrown away.
    func testCancelledSamplingIsCutShortAndThrown() throws {
        let tracks = try compile(#"{"fps":60,"target":{"x":0,"y":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1},{"path":"y","to":2}]}}"#)
        // 70,001 frames: past one look of the frames layout and of csv.
        let long = #"{"fps":1000,"target":{"x":0},%@"motion":{"type":"tween","duration":70,"properties":[{"path":"x","to":1}]}}"#
        let frames = try compile(long.replacingOccurrences(of: "%@", with: #""output":{"layout":"frames"},"#))
        let csv = try compile(long.replacingOccurrences(of: "%@", with: #""output":{"format":"csv"},"#))
        for (name, timeline) in [("tracks", tracks), ("frames", frames), ("csv", csv)] {
            let whole = try TimelineExport.encode(timeline).body
            if name != "csv" { XCTAssertEqual(TimelineEncoder.encode(timeline), whole, name) }
            let cancelled = Cancellation()
            cancelled.cancel()
            try Cancellation.withCurrent(cancelled) {
                if name != "csv" {
                    let cut = TimelineEncoder.encode(timeline)
                    XCTAssertLessThan(cut.count, whole.count * 3 / 4, "\(name): not cut short")
                }
                XCTAssertThrowsError(try TimelineExport.encode(timeline), name) { error in
                    XCTAssertEqual((error as? DocumentError)?.problems.map(\.message), [Cancellation.message], name)
                }
            }
            XCTAssertTrue(cancelled.stoppedWork, name)
        }
    }
}

