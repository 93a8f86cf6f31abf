import Foundation
import XCTest
@testable import MotionEngine

/// Error-bounded keyframe reduction (docs/exports.md): the bound is checked here on a grid far
/// denser than the reducer's own, offset from it, and around every event, independently of
/// the reducer's bookkeeping.
final class KeyframeReducerTests: XCTestCase {
    /// The largest |reduced − exact| over `samples` points offset from any even grid the
    /// reducer uses, plus points at 1 µs … 1 ms on both sides of `extra` times. Instants
    /// within 2 ns of a jump in `jumps` are skipped (the jump itself).
    func denseDeviation(_ reduced: ReducedTrack, _ f: (Double) -> Double, window: TimeWindow,
                        samples: Int = 200_000, extra: [Double] = [], jumps: [Double] = []) -> (deviation: Double, at: Double) {
        var worst = (deviation: 0.0, at: window.start)
        func check(_ t: Double) {
            guard t >= window.start, t <= window.end, !jumps.contains(where: { abs($0 - t) < 2e-9 }) else { return }
            let d = abs(reduced.value(at: t) - f(t))
            if d > worst.deviation { worst = (d, t) }
        }
        let length = window.end - window.start
        for k in 0...samples { check(window.start + length * (Double(k) + 0.318_309_886) / Double(samples + 1)) }
        for t in extra {
            for offset in [1e-6, 1e-5, 1e-4, 1e-3] {
                check(t - offset)
                check(t + offset)
            }
            check(t)
        }
        check(window.start)
        check(window.end)
        return worst
    }

    /// The fewest evenly spaced samples (both ends included) whose linear interpolation is
    /// within ε of `f` on the dense grid: what a frame grid needs for the same error.
    func uniformSampleCount(_ f: (Double) -> Double, window: TimeWindow, tolerance: Double, extra: [Double] = []) -> Int {
        func fits(_ n: Int) -> Bool {
            let times = (0...n).map { window.start + (window.end - window.start) * Double($0) / Double(n) }
            let track = ReducedTrack(times: times, values: times.map(f), slopes: nil, error: 0, evaluations: 0)
            return denseDeviation(track, f, window: window, samples: 20_000, extra: extra).deviation <= tolerance
        }
        var high = 1
        while !fits(high) { high *= 2; if high > 1 << 22 { return high } }
        var low = high / 2
        while high - low > 1 {
            let mid = (low + high) / 2
            if fits(mid) { high = mid } else { low = mid }
        }
        return high + 1
    }

    func reduce(_ timeline: Timeline, _ path: String, tolerance: Double,
                _ interpolation: SimplifyOptions.Interpolation = .linear) throws -> (ReducedTrack, Track) {
        let track = try XCTUnwrap(timeline.tracks.first { $0.path == path })
        return (try KeyframeReducer.reduce(track: track, in: timeline, tolerance: tolerance, interpolation: interpolation), track)
    }

    // MARK: - Exact cases

    func testLinearTweenIsTwoKeyframes() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":20},"motion":{"type":"tween","duration":1.5,"easing":"linear","properties":[{"path":"x","to":200}]}}"#)
        for interpolation in [SimplifyOptions.Interpolation.linear, .cubic] {
            let (reduced, _) = try reduce(timeline, "x", tolerance: 1e-6, interpolation)
            XCTAssertEqual(reduced.times, [0, 1.5], "\(interpolation)")
            XCTAssertEqual(reduced.values, [20, 200], "\(interpolation)")
            XCTAssertLessThanOrEqual(reduced.error, 1e-6)
            if interpolation == .cubic {
                let slopes = try XCTUnwrap(reduced.slopes)
                for slope in slopes {
                    XCTAssertEqual(slope.incoming, 120, accuracy: 1e-4)
                    XCTAssertEqual(slope.outgoing, 120, accuracy: 1e-4)
                }
            }
        }
    }

    func testStepsAreExactJumps() throws {
        let timeline = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":"steps(4, jump-end)","properties":[{"path":"x","to":100}]}}"#)
        let (reduced, track) = try reduce(timeline, "x", tolerance: 0.01)
        // Flat steps: each jump two keyframes at one time; the last step lands at the end.
        XCTAssertEqual(reduced.times, [0, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1, 1])
        XCTAssertEqual(reduced.values, [0, 0, 25, 25, 50, 50, 75, 75, 100])
        XCTAssertEqual(reduced.error, 0)
        let dense = denseDeviation(reduced, { track.value(at: $0) }, window: timeline.window, jumps: [0.25, 0.5, 0.75, 1])
        XCTAssertLessThanOrEqual(dense.deviation, 0.01, "at t = \(dense.at)")
    }

    /// Steps whose jumps fall between round times: `steps(3)` over 10 s jumps at 3.3333…,
    /// written 3.3333333334 (a round time within the engine's `timeEpsilon` after the
    /// jump's bracket). The check held the instants between the jump and that time to the
    /// value before it and refused the reduction, a whole step off (found by an adversarial
    /// review: 7 of 77 step counts and durations, in every format).
    func testStepsBetweenRoundTimesAreExactJumps() throws {
        for (steps, duration) in [(3, 10.0), (3, 20.0), (3, 100.0), (20, 0.3), (50, 10.0), (50, 20.0), (50, 100.0), (7, 1.0), (4, 1.0)] {
            let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":\#(duration),"easing":"steps(\#(steps), jump-end)","properties":[{"path":"x","to":1000}]}}"#)
            let jumps = (1...steps).map { duration * Double($0) / Double(steps) }
            for interpolation in [SimplifyOptions.Interpolation.linear, .cubic] {
                let label = "steps(\(steps)) over \(duration) s, \(interpolation)"
                let (reduced, track) = try reduce(timeline, "x", tolerance: 0.01, interpolation)
                // Two keyframes at each jump, within the engine's instant of it.
                var pairs = 0
                for k in 1..<reduced.times.count where reduced.times[k] == reduced.times[k - 1] {
                    pairs += 1
                    XCTAssertTrue(jumps.contains { abs($0 - reduced.times[k]) <= timeEpsilon + 1e-10 }, "\(label): a jump at \(reduced.times[k])")
                }
                XCTAssertEqual(pairs, steps, label)
                let dense = denseDeviation(reduced, { track.value(at: $0) }, window: timeline.window, samples: 50_000, extra: jumps, jumps: jumps)
                XCTAssertLessThanOrEqual(dense.deviation, 0.01, "\(label) at t = \(dense.at)")
            }
        }
    }

    func testInstantSetIsAnExactJump() throws {
        // 0 → 50 over 0.5 s, set to 200 at once, then 200 → 0 over 0.5 s.
        let timeline = try compile(#"""
        {"fps":30,"target":{"x":0},"motion":{"type":"sequence","steps":[
          {"type":"tween","duration":0.5,"easing":"quadratic.out","properties":[{"path":"x","to":50}]},
          {"type":"tween","duration":0,"properties":[{"path":"x","to":200}]},
          {"type":"tween","duration":0.5,"easing":"sine.inOut","properties":[{"path":"x","to":0}]}]}}
        """#)
        for interpolation in [SimplifyOptions.Interpolation.linear, .cubic] {
            let (reduced, track) = try reduce(timeline, "x", tolerance: 0.05, interpolation)
            let at = try XCTUnwrap(reduced.times.firstIndex(of: 0.5), "\(reduced.times)")
            XCTAssertEqual(reduced.times[at + 1], 0.5, "two keyframes at the jump")
            XCTAssertEqual(reduced.values[at], 50, accuracy: 1e-6)
            XCTAssertEqual(reduced.values[at + 1], 200)
            let dense = denseDeviation(reduced, { track.value(at: $0) }, window: timeline.window, extra: [0.5], jumps: [0.5])
            XCTAssertLessThanOrEqual(dense.deviation, 0.05, "\(interpolation) at t = \(dense.at)")
            XCTAssertLessThanOrEqual(reduced.error, 0.05)
        }
    }

    // MARK: - Far fewer keyframes than a frame grid at the same error

    /// Reduces `path`, checks the bound densely (also around every event), and compares the
    /// count with the evenly spaced samples the same error needs.
    func assertFarFewer(_ name: String, _ document: String, path: String, tolerance: Double,
                        factor: Double, file: StaticString = #filePath, line: UInt = #line) throws {
        let timeline = try compile(document)
        let events = timeline.events.map(\.time)
        var counts: [SimplifyOptions.Interpolation: Int] = [:]
        for interpolation in [SimplifyOptions.Interpolation.linear, .cubic] {
            let (reduced, track) = try reduce(timeline, path, tolerance: tolerance, interpolation)
            let f = { track.value(at: $0) }
            let dense = denseDeviation(reduced, f, window: timeline.window, extra: events + reduced.times)
            XCTAssertLessThanOrEqual(dense.deviation, tolerance, "\(name) \(interpolation): off by \(dense.deviation) at t = \(dense.at)", file: file, line: line)
            XCTAssertLessThanOrEqual(reduced.error, tolerance, file: file, line: line)
            XCTAssertGreaterThan(reduced.error, 0, file: file, line: line)
            XCTAssertEqual(reduced.times.first, timeline.window.start, file: file, line: line)
            XCTAssertEqual(reduced.times.last, timeline.window.end, file: file, line: line)
            XCTAssertEqual(reduced.values.last, track.value(at: timeline.window.end), file: file, line: line)
            counts[interpolation] = reduced.times.count
        }
        let track = try XCTUnwrap(timeline.tracks.first { $0.path == path })
        let uniform = uniformSampleCount({ track.value(at: $0) }, window: timeline.window, tolerance: tolerance, extra: events)
        let linear = counts[.linear]!, cubic = counts[.cubic]!
        print("reduction \(name), ε = \(tolerance): uniform sampling needs \(uniform) samples; linear keyframes \(linear), cubic \(cubic)")
        XCTAssertLessThanOrEqual(Double(linear) * factor, Double(uniform), "\(name): \(linear) linear keyframes vs \(uniform) uniform samples", file: file, line: line)
        XCTAssertLessThan(cubic, linear, "\(name): cubic segments should need fewer keyframes", file: file, line: line)
    }

    func testSpringNeedsFarFewerKeyframes() throws {
        try assertFarFewer("spring", #"{"fps":60,"target":{"x":0},"motion":{"type":"spring","response":0.6,"dampingRatio":0.3,"properties":[{"path":"x","to":100}]}}"#,
                           path: "x", tolerance: 0.05, factor: 3)
    }

    func testBouncingPhysicsNeedsFarFewerKeyframes() throws {
        try assertFarFewer("bouncing physics", #"{"fps":60,"target":{"ball":0},"motion":{"type":"physics","velocity":900,"friction":0.3,"restitution":0.8,"collisions":true,"properties":[{"path":"ball","from":0,"to":100}]}}"#,
                           path: "ball", tolerance: 0.05, factor: 3)
    }

    func testElasticEasingNeedsFarFewerKeyframes() throws {
        try assertFarFewer("elastic.out", #"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":2,"easing":"elastic.out","properties":[{"path":"x","to":100}]}}"#,
                           path: "x", tolerance: 0.05, factor: 3)
    }

    func testCollisionTurningPointsHoldBetweenFrames() throws {
        // At 10 fps the frames miss the walls; the reduced curve must not.
        let timeline = try compile(#"{"fps":10,"target":{"ball":0},"motion":{"type":"physics","velocity":1000,"friction":0.5,"restitution":0.9,"collisions":true,"properties":[{"path":"ball","from":0,"to":100}]}}"#)
        let collisions = timeline.events.filter { $0.kind == .collided }.map(\.time)
        XCTAssertGreaterThan(collisions.count, 3)
        let (reduced, track) = try reduce(timeline, "ball", tolerance: 0.01)
        for t in collisions {
            let wall = track.value(at: t)
            XCTAssertTrue(abs(wall) < 1e-6 || abs(wall - 100) < 1e-6, "the ball is at a wall at \(t): \(wall)")
            XCTAssertEqual(reduced.value(at: t), wall, accuracy: 0.01, "the reduced curve reaches the wall at \(t)")
        }
        let dense = denseDeviation(reduced, { track.value(at: $0) }, window: timeline.window, extra: collisions)
        XCTAssertLessThanOrEqual(dense.deviation, 0.01, "at t = \(dense.at)")
    }

    func testSpringPeakIsKept() throws {
        let timeline = try compile(#"{"fps":10,"target":{"x":0},"motion":{"type":"spring","response":1,"dampingRatio":0.5,"properties":[{"path":"x","to":100}]}}"#)
        let track = timeline.tracks[0]
        // The first peak, found by a fine scan.
        let peak = stride(from: 0.0, through: 2, by: 1e-5).max { track.value(at: $0) < track.value(at: $1) }!
        let (reduced, _) = try reduce(timeline, "x", tolerance: 0.02, .cubic)
        XCTAssertEqual(reduced.value(at: peak), track.value(at: peak), accuracy: 0.02)
        let dense = denseDeviation(reduced, { track.value(at: $0) }, window: timeline.window, extra: [peak])
        XCTAssertLessThanOrEqual(dense.deviation, 0.02, "at t = \(dense.at)")
    }

    func testHueWrapIsAJump() throws {
        // Hue 300° → 60° the short way, through 360°/0°: the track wraps, a jump at the crossing.
        let timeline = try compile(##"{"fps":30,"target":{"tint":"#ff00ff"},"motion":{"type":"tween","duration":1,"properties":[{"path":"tint.hue","to":60}]}}"##)
        let (reduced, track) = try reduce(timeline, "tint.hue", tolerance: 0.01)
        let jumps = zip(reduced.times, reduced.times.dropFirst()).enumerated().filter { $0.element.0 == $0.element.1 }.map(\.offset)
        XCTAssertEqual(jumps.count, 1, "\(reduced.times) \(reduced.values)")
        if let j = jumps.first {
            XCTAssertEqual(reduced.values[j], 360, accuracy: 0.02)
            XCTAssertEqual(reduced.values[j + 1], 0, accuracy: 0.02)
            let dense = denseDeviation(reduced, { track.value(at: $0) }, window: timeline.window, jumps: [reduced.times[j]])
            XCTAssertLessThanOrEqual(dense.deviation, 0.01, "at t = \(dense.at)")
        }
    }

    // MARK: - Odd windows

    func testWindowsFarFromZeroAndOfZeroLength() throws {
        // An endlessly repeating elastic tween sampled a long way in: times near 1e8 s have
        // ulps of 1.5e-8 s, above the reducer's 1e-10 s resolution.
        let far = try compile(#"{"fps":60,"window":{"start":100000000,"end":100000002},"target":{"x":0},"motion":{"type":"tween","duration":0.5,"easing":"elastic.out","repeat":"infinite","reverses":true,"properties":[{"path":"x","to":100}]}}"#)
        for interpolation in [SimplifyOptions.Interpolation.linear, .cubic] {
            let (reduced, track) = try reduce(far, "x", tolerance: 0.1, interpolation)
            XCTAssertEqual(reduced.times.first, 100_000_000)
            XCTAssertEqual(reduced.times.last, 100_000_002)
            XCTAssertEqual(zip(reduced.times, reduced.times.dropFirst()).filter { $0 > $1 }.count, 0, "times ascend")
            let dense = denseDeviation(reduced, { track.value(at: $0) }, window: far.window, samples: 50_000)
            XCTAssertLessThanOrEqual(dense.deviation, 0.1 * 1.001, "\(interpolation) at t = \(dense.at)")
        }
        let point = try compile(#"{"fps":60,"window":{"start":0.25,"end":0.25},"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":100}]}}"#)
        let (single, track) = try reduce(point, "x", tolerance: 0.1, .cubic)
        XCTAssertEqual(single.times, [0.25])
        XCTAssertEqual(single.values, [track.value(at: 0.25)])
        for format in ["svg", "csv"] {
            let document = #"{"fps":60,"window":{"start":0.25,"end":0.25},"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":100}]},"output":{"format":"\#(format)"}}"#
            let body = try TimelineExport.encode(try compile(document)).body
            XCTAssertFalse(body.isEmpty, format)
        }
    }

    // MARK: - Bounded work

    func testWorkIsBounded() throws {
        let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":100,"easing":"elastic.inOut","repeat":50,"properties":[{"path":"x","to":1000000}]}}"#)
        let track = timeline.tracks[0]
        let started = Date()
        XCTAssertThrowsError(try KeyframeReducer.reduce(track: track, in: timeline, tolerance: 1e-12, interpolation: .linear)) { error in
            XCTAssertTrue([.tooManyKeyframes(limit: 10_000), .tooManyEvaluations(limit: 1_000_000)].contains(error as? KeyframeReducer.ReductionError), "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
        let limits = KeyframeReducer.Limits(maxKeyframes: 10, maxEvaluations: 1_000_000)
        XCTAssertThrowsError(try KeyframeReducer.reduce(track: track, in: timeline, tolerance: 1, interpolation: .cubic, limits: limits)) { error in
            XCTAssertEqual(error as? KeyframeReducer.ReductionError, .tooManyKeyframes(limit: 10))
        }
    }

    /// A batch shares one reduction budget among its documents (`TimelineExport.reduce(…,
    /// budget:)`): a reduction spends from it, one that needs more than is left is refused
    /// saying so, and evaluations of a track with additive layers cost one more per layer.
    func testReductionSpendsFromASharedBudget() throws {
        let jagged = "linear(" + (0..<20).map { $0 % 2 == 0 ? "0" : "1" }.joined(separator: ",") + ")"
        let timeline = try compile(#"{"fps":1,"target":{"x":0},"output":{"simplify":{"tolerance":0.01}},"motion":{"type":"tween","duration":1,"easing":"\#(jagged)","properties":[{"path":"x","to":100}]}}"#)
        var budget = TimelineExport.maxTotalEvaluations
        let alone = try TimelineExport.reduce(timeline, tolerance: 0.01, interpolation: .linear, budget: &budget)
        let spent = TimelineExport.maxTotalEvaluations - budget
        XCTAssertEqual(spent, alone.reduce(0) { $0 + $1.evaluations })
        XCTAssertGreaterThan(spent, 1000)
        var exact = spent
        XCTAssertEqual(try TimelineExport.reduce(timeline, tolerance: 0.01, interpolation: .linear, budget: &exact).map(\.times), alone.map(\.times))
        XCTAssertEqual(exact, 0)
        var short = spent - 1
        do {
            _ = try TimelineExport.reduce(timeline, tolerance: 0.01, interpolation: .linear, budget: &short)
            XCTFail("reduced with less than it needs")
        } catch {
            XCTAssertEqual(error.problems.first?.pointer, "/output/simplify/tolerance")
            XCTAssertTrue(error.problems.first?.message.contains("what is left of its batch's 5000000") ?? false, "\(error.problems)")
        }
        // A failed reduction is charged what it evaluated: the batch's documents after it
        // find the budget spent, and are told so.
        XCTAssertEqual(short, 0)
        do {
            _ = try TimelineExport.reduce(timeline, tolerance: 0.01, interpolation: .linear, budget: &short)
            XCTFail("reduced with nothing left")
        } catch {
            XCTAssertTrue(error.problems.first?.message.contains("its batch's 5000000 curve evaluations for reductions were spent") ?? false, "\(error.problems)")
        }
        // The same curve added on itself ten times: each evaluation adds up ten layers.
        let layered = try compile(#"{"fps":1,"target":{"x":0},"motion":{"type":"group","repeat":9,"children":[{"type":"tween","additive":true,"duration":1,"easing":"\#(jagged)","properties":[{"path":"x","to":100}]}]}}"#)
        XCTAssertEqual(layered.tracks[0].evaluationCost, 11)
        var layeredBudget = TimelineExport.maxTotalEvaluations
        let reduced = try TimelineExport.reduce(layered, tolerance: 0.01, interpolation: .linear, budget: &layeredBudget)
        XCTAssertEqual(TimelineExport.maxTotalEvaluations - layeredBudget, 11 * reduced.reduce(0) { $0 + $1.evaluations })
    }

}
