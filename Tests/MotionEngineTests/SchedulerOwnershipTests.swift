import XCTest
@testable import MotionEngine

/// A scheduling run that is aborted (a 422) must not leave its scheduler, its plays or
/// their completion closures alive: every request would leak them (issue #19).
final class SchedulerOwnershipTests: XCTestCase {
    /// 422: the spring would not rest within an hour, beside a tween in a group.
    static let unrestingSpring = #"{"target":{"x":0,"y":0},"motion":{"type":"group","children":[{"type":"tween","duration":1,"properties":[{"path":"y","to":1}]},{"type":"spring","response":0.5,"dampingRatio":0.00006,"properties":[{"path":"x","to":100}]}]}}"#
    /// 422 (max-events): a tween repeating 200,000 times beside a second child.
    static let tooManyRepeats = #"{"target":{"x":0,"y":0},"motion":{"type":"group","children":[{"type":"tween","duration":1,"repeat":200000,"properties":[{"path":"y","to":1}]},{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}]}}"#
    /// 200, but actions past the window's end are still queued when the run stops.
    static let endlessInWindow = #"{"target":{"x":0,"y":0},"window":{"start":0,"end":2},"motion":{"type":"group","repeat":"infinite","children":[{"type":"tween","duration":1,"properties":[{"path":"y","to":1}]},{"type":"sequence","steps":[{"type":"tween","duration":0.5,"properties":[{"path":"x","to":1}]}]}]}}"#

    /// Runs the scheduler as `TimelineCompiler` does and returns weak references to it and
    /// to its root play, plus whether the run was aborted.
    private func runScheduler(_ text: String) throws -> (scheduler: Scheduler?, play: Play?, aborted: Bool) {
        let document = try DocumentDecoder().decode(Array(text.utf8))
        let diagnostics = Diagnostics()
        let endless = TimelineCompiler.checkEndless(document.motion, diagnostics)
        weak var weakScheduler: Scheduler?
        weak var weakPlay: Play?
        var aborted = false
        do {
            let scheduler = Scheduler(target: document.target, diagnostics: diagnostics, limits: .default,
                                      horizon: endless ? document.window!.end : .infinity)
            _ = scheduler.run(document.motion)
            aborted = !diagnostics.isEmpty || scheduler.overflow != nil
            weakScheduler = scheduler
            weakPlay = scheduler.rootPlay
            XCTAssertGreaterThan(scheduler.playCount, 1)
        }
        return (weakScheduler, weakPlay, aborted)
    }

    func testAbortedSchedulesAreFreed() throws {
        for text in [Self.unrestingSpring, Self.tooManyRepeats] {
            for _ in 0..<20 {
                let (scheduler, play, aborted) = try runScheduler(text)
                XCTAssertTrue(aborted)
                XCTAssertNil(scheduler, "the scheduler of an aborted run is still alive")
                XCTAssertNil(play, "the root play of an aborted run is still alive")
            }
        }
    }

    func testWindowedEndlessScheduleIsFreed() throws {
        let (scheduler, play, aborted) = try runScheduler(Self.endlessInWindow)
        XCTAssertFalse(aborted)
        XCTAssertNil(scheduler)
        XCTAssertNil(play)
    }

    func testAbortedDocumentsStillReport422() {
        XCTAssertEqual(problems(Self.unrestingSpring).status, 422)
        let overflow = problems(Self.tooManyRepeats)
        XCTAssertEqual(overflow.status, 422)
        XCTAssertTrue(overflow.problems.first?.message.contains("max-events") ?? false, "\(overflow.problems)")
    }
}
