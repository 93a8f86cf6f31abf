import XCTest
@testable import MotionEngine

/// `EngineLimits.maxSegments` (`--max-segments`): the curve segments the compiler builds for one
/// document are counted as it builds them, so a small document can no longer ask for minutes
/// of compiling and gigabytes of segments (spring keyframes over a wildcard, a repeated group,
/// bouncing bodies). Each test puts a document exactly at the budget (compiled) and one
/// segment over it (refused at the property that crossed it).
final class SegmentBudgetTests: XCTestCase {
    private func limits(_ segments: Int) -> EngineLimits {
        var limits = EngineLimits.default
        limits.maxSegments = segments
        return limits
    }

    /// `count` zeros under `items`, for a wildcard path `items.*`.
    private func items(_ count: Int) -> String {
        "[" + Array(repeating: "0", count: count).joined(separator: ",") + "]"
    }

    private func keyframes(_ count: Int) -> String {
        "[" + (0..<count).map { String($0 % 2) }.joined(separator: ",") + "]"
    }

    private func assertOverBudget(_ error: DocumentError, at pointer: String, limit: Int,
                                  file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(error.problems.count, 1, "\(error.problems)", file: file, line: line)
        XCTAssertEqual(error.problems.first?.pointer, pointer, file: file, line: line)
        let message = error.problems.first?.message ?? ""
        XCTAssertTrue(message.contains("max-segments") && message.contains("\(limit) curve segments"), message, file: file, line: line)
    }

    func testTweenKeyframesCountOnePerSegmentOnEveryElement() throws {
        // 10 elements × 10 keyframe segments = 100.
        let document = { (elements: Int) in
            #"{"fps":1,"target":{"items":\#(self.items(elements))},"motion":{"type":"tween","duration":1,"properties":[{"path":"items.*","keyframes":\#(self.keyframes(11))}]}}"#
        }
        let timeline = try compile(document(10), limits: limits(100))
        XCTAssertEqual(timeline.tracks.count, 10)
        XCTAssertEqual(timeline.segments, 100, "the count the live budget reserves")
        assertOverBudget(problems(document(10), limits: limits(99)), at: "/motion/properties/0/keyframes", limit: 99)
        assertOverBudget(problems(document(11), limits: limits(100)), at: "/motion/properties/0/keyframes", limit: 100)
    }

    func testSpringSegmentsCountTenEach() throws {
        // 10 elements × 10 segments × 10.
        let keyed = #"{"fps":1,"target":{"items":\#(items(10))},"motion":{"type":"spring","response":0.3,"dampingRatio":0.5,"properties":[{"path":"items.*","keyframes":\#(keyframes(11))}]}}"#
        XCTAssertEqual(try compile(keyed, limits: limits(1000)).tracks.count, 10)
        assertOverBudget(problems(keyed, limits: limits(999)), at: "/motion/properties/0/keyframes", limit: 999)
        XCTAssertEqual(TrackBuilder.springSegmentWeight, 10)
        // Without keyframes a spring is one segment an element, ten units.
        let plain = #"{"fps":1,"target":{"items":\#(items(10))},"motion":{"type":"spring","response":0.3,"dampingRatio":0.5,"properties":[{"path":"items.*","to":1}]}}"#
        XCTAssertEqual(try compile(plain, limits: limits(100)).tracks.count, 10)
        assertOverBudget(problems(plain, limits: limits(99)), at: "/motion/properties/0", limit: 99)
        // A tween timed by a spring curve solves the same spring: ten units an element too.
        let timed = #"{"fps":1,"target":{"items":\#(items(10))},"motion":{"type":"tween","timing":{"duration":1,"curve":{"type":"spring","mass":1,"tension":100,"friction":10}},"properties":[{"path":"items.*","to":1}]}}"#
        XCTAssertEqual(try compile(timed, limits: limits(100)).tracks.count, 10)
        assertOverBudget(problems(timed, limits: limits(99)), at: "/motion/properties/0", limit: 99)
    }

    func testEveryPlayOfARepeatedGroupCounts() throws {
        // A group's children are compiled again in each of its cycles: 5 elements × 4 plays.
        let repeated = #"{"fps":1,"target":{"items":\#(items(5))},"motion":{"type":"group","repeat":3,"children":[{"type":"tween","duration":1,"properties":[{"path":"items.*","to":1}]}]}}"#
        XCTAssertEqual(try compile(repeated, limits: limits(20)).tracks.count, 5)
        let error = problems(repeated, limits: limits(19))
        assertOverBudget(error, at: "/motion/children/0/properties/0", limit: 19)
    }

    func testPhysicsBouncesCountOneEach() throws {
        // One segment for the element, then one per bounce forward and back: the reverse is
        // built whether or not the node reverses (a reversing parent may run it). With
        // `reverses` every one of those bounces is a `collided` event.
        let document = { (reverses: Bool) in
            #"{"fps":1,"target":{"x":0},"motion":{"type":"physics","reverses":\#(reverses),"velocity":1000,"friction":0.5,"restitution":0.9,"collisions":true,"properties":[{"path":"x","to":1}]}}"#
        }
        let bounces = try compile(document(true)).events.filter { $0.kind == .collided }.count
        let forward = try compile(document(false)).events.filter { $0.kind == .collided }.count
        XCTAssertGreaterThan(forward, 10)
        XCTAssertGreaterThan(bounces, forward)
        for reverses in [false, true] {
            XCTAssertNoThrow(try TimelineCompiler(limits: limits(1 + bounces)).compile(Array(document(reverses).utf8)))
            assertOverBudget(problems(document(reverses), limits: limits(bounces)), at: "/motion/properties/0", limit: bounces)
        }
    }

    func testDecayAndPathsCountTheirTracks() throws {
        let decay = #"{"fps":1,"target":{"items":\#(items(4))},"motion":{"type":"decay","velocity":100,"properties":[{"path":"items.*"}]}}"#
        XCTAssertEqual(try compile(decay, limits: limits(4)).tracks.count, 4)
        assertOverBudget(problems(decay, limits: limits(3)), at: "/motion/properties/0", limit: 3)
        // x, y and the rotation, after the path's one drawn segment (4).
        let path = #"{"fps":1,"target":{"p":{"x":0,"y":0},"r":0},"motion":{"type":"path","path":"M0 0 L100 0","duration":1,"output":"p","rotation":"r"}}"#
        XCTAssertEqual(try compile(path, limits: limits(7)).tracks.count, 3)
        XCTAssertEqual(try compile(path, limits: limits(7)).segments, 7)
        assertOverBudget(problems(path, limits: limits(6)), at: "/motion", limit: 6)
    }

    /// The paths of a document are charged together as they are decoded, 4 per drawn segment
    /// (an arc is drawn as up to 256 Bézier pieces): 150 path nodes of eccentric arcs in
    /// 945 KB made 15 million pieces, 18 s of measuring and 4.8 GB. Once over, no other path
    /// is built, and the compiler goes on from what the paths spent.
    func testPathsAreChargedTogetherPerDrawnSegment() throws {
        let arcs = String(repeating: "a1e9 1 0 1 1 2 0 ", count: 4)
        let geometry = try PathGeometry(svg: "M0 0 " + arcs)
        let pieces = geometry.segmentCount
        XCTAssertGreaterThan(pieces, 4 * 100, "eccentric arcs are drawn in many pieces")
        XCTAssertEqual(PathGeometry.segmentWeight, 4)
        // Their pieces take more than a usual cubic's table to measure: charged by the table.
        let charge = geometry.charge
        XCTAssertGreaterThanOrEqual(charge, 4 * pieces)
        XCTAssertEqual(try PathGeometry(svg: "M0 0 L1 1 C2 2 3 1 4 0 L5 5").charge, 3 * 4, "lines and a usual cubic: 4 each")
        let node = #"{"type":"path","path":"M0 0 \#(arcs)","duration":1,"output":"p"}"#
        let document = #"{"fps":1,"target":{"p":{"x":0,"y":0}},"motion":{"type":"group","children":[\#(node),\#(node),\#(node)]}}"#
        // Three paths, then their two tracks (x, y) in each of the three plays.
        let exact = 3 * charge + 6
        XCTAssertEqual(try compile(document, limits: limits(exact)).segments, exact, "the count the live budget reserves")
        assertOverBudget(problems(document, limits: limits(exact - 1)), at: "/motion/children/2", limit: exact - 1)
        // The third path goes over while it is decoded, and only it is reported.
        let error = problems(document, limits: limits(3 * charge - 1))
        XCTAssertEqual(error.problems.map(\.pointer), ["/motion/children/2/path"], "\(error.problems)")
        XCTAssertTrue(error.problems[0].message.contains("max-segments") && error.problems[0].message.contains("4"), error.problems[0].message)
        // Over with the first: the other two are not built, and not reported.
        XCTAssertEqual(problems(document, limits: limits(charge - 1)).problems.map(\.pointer), ["/motion/children/0/path"])
    }

    /// A cubic that turns back on itself is measured in about 105 table entries, not 9:
    /// 60,000 of them (900 KB) took 0.89 s to measure, charged as 240,000 segments. A path is
    /// charged by its table when that is more, and measuring stops once the path is over
    /// what the document has left.
    func testCurvesThatTakeLongToMeasureAreChargedForIt() throws {
        let kinked = "M0 0c" + String(repeating: " 21 0 -8 0 13 0", count: 1_000)
        let geometry = try PathGeometry(svg: kinked)
        XCTAssertEqual(geometry.segmentCount, 1_000)
        XCTAssertGreaterThan(geometry.charge, 10 * 4 * 1_000, "charged by the table, far over 4 a segment")
        // Stopped early: a fraction of the path, already over what it was allowed.
        let stopped = try PathGeometry(svg: kinked, maxCharge: 5_000)
        XCTAssertGreaterThan(stopped.charge, 5_000)
        XCTAssertLessThan(stopped.segmentCount, 100)
        let document = #"{"fps":1,"target":{"p":{"x":0,"y":0}},"motion":{"type":"path","path":"\#(kinked)","duration":1,"output":"p"}}"#
        XCTAssertEqual(try compile(document, limits: limits(geometry.charge + 2)).segments, geometry.charge + 2)
        let error = problems(document, limits: limits(geometry.charge - 1))
        XCTAssertEqual(error.problems.map(\.pointer), ["/motion/path"], "\(error.problems)")
        XCTAssertTrue(error.problems[0].message.contains("turn back on themselves"), error.problems[0].message)
    }

    /// An additive motion's play is charged one more for each additive layer already on its
    /// track (its start reads the track's value, which adds them all up): N plays of one
    /// additive tween cost N + N(N − 1)/2. 33,000 of them (234 bytes) compiled for 21 s.
    func testAdditiveLayersAreChargedAsTheyPileUp() throws {
        let document = #"{"fps":1,"target":{"x":0},"motion":{"type":"group","repeat":9,"children":[{"type":"tween","additive":true,"duration":1,"properties":[{"path":"x","to":1}]}]}}"#
        let timeline = try compile(document, limits: limits(55))
        XCTAssertEqual(timeline.segments, 55)
        XCTAssertEqual(timeline.tracks[0].additive.count, 10)
        XCTAssertEqual(timeline.layers, 11)
        assertOverBudget(problems(document, limits: limits(54)), at: "/motion/children/0/properties/0", limit: 54)
    }

    /// Every read of a track's value that adds up its additive layers is charged one a layer,
    /// not only an additive play's: 816 layers, then 660,000 plays of plain tweens on the same
    /// track starting from its value (a 115 KB document) compiled for 105 s within the budget
    /// when only the layers' own plays were charged. Ten layers (55), then five plain plays
    /// that each read them (1 + 10 each): a number, a null first keyframe, an array's element.
    func testEveryReadOfAdditiveLayersIsCharged() throws {
        let layers = #"{"type":"group","repeat":9,"children":[{"type":"tween","additive":true,"duration":1,"properties":[{"path":"p.0","to":1}]}]}"#
        // `field`: where keyframes' own segments are charged.
        for (property, field) in [(#"{"path":"p.0","to":5}"#, ""), (#"{"path":"p.0","keyframes":[null,5]}"#, "/keyframes"), (#"{"path":"p","to":[5,0]}"#, "")] {
            let reads = #"{"type":"group","repeat":4,"children":[{"type":"tween","duration":1,"properties":[\#(property)]}]}"#
            let document = #"{"fps":1,"target":{"p":[0,0]},"motion":{"type":"sequence","steps":[\#(layers),\#(reads)]}}"#
            // The array's second element does not change: it gets no track and no segment.
            let timeline = try compile(document, limits: limits(110))
            XCTAssertEqual(timeline.segments, 110, property)
            // 109: the last play's own segment goes over; 100: its read of the ten layers does
            // (one problem, not a second for the start it could not read).
            let at = "/motion/steps/1/children/0/properties/0"
            assertOverBudget(problems(document, limits: limits(109)), at: at + field, limit: 109)
            assertOverBudget(problems(document, limits: limits(100)), at: at, limit: 100)
        }
        // A colour's start reads every channel's layers: ten on red (55, each reading the
        // colour), then five plays to green reading them (10 each), the first moving two
        // channels, the others red alone (green is there): 55 + 12 + 4 × 11.
        let colourLayers = ##"{"type":"group","repeat":9,"children":[{"type":"tween","additive":true,"duration":1,"properties":[{"path":"c.red","to":1}]}]}"##
        let colourReads = ##"{"type":"group","repeat":4,"children":[{"type":"tween","duration":1,"properties":[{"path":"c","to":"#00ff00"}]}]}"##
        let colours = ##"{"fps":1,"target":{"c":"#000000"},"motion":{"type":"sequence","steps":[\##(colourLayers),\##(colourReads)]}}"##
        XCTAssertEqual(try compile(colours, limits: limits(111)).segments, 111)
        assertOverBudget(problems(colours, limits: limits(105)), at: "/motion/steps/1/children/0/properties/0", limit: 105)
        // With a `from`, nothing is read and nothing charged beyond the play's own segment.
        let given = #"{"fps":1,"target":{"p":[0,0]},"motion":{"type":"sequence","steps":[\#(layers),{"type":"group","repeat":4,"children":[{"type":"tween","duration":1,"properties":[{"path":"p.0","from":0,"to":5}]}]}]}}"#
        XCTAssertEqual(try compile(given, limits: limits(60)).segments, 60)
    }

    /// Each additive layer is evaluated at every frame, so frames × (tracks + layers) is what
    /// `maxSamples` bounds: 3,000 layers over 1,000,001 frames took 26 s when it counted tracks.
    func testAdditiveLayersCountAsSamples() throws {
        // 10 layers on one track over 11 frames (10 s at 1 fps): 11 × 11 = 121. (The estimate
        // checked before the frames are counted allows 1 % and two frames more: 12 × 11 ≤
        // 1.01 × 129 + 2.)
        let document = #"{"fps":1,"target":{"x":0},"motion":{"type":"group","repeat":9,"children":[{"type":"tween","additive":true,"duration":1,"properties":[{"path":"x","to":1}]}]}}"#
        var fits = EngineLimits.default
        fits.maxSamples = 129
        XCTAssertEqual(try compile(document, limits: fits).frameCount, 11)
        fits.maxSamples = 120
        let error = problems(document, limits: fits)
        let message = error.problems.first?.message ?? ""
        XCTAssertTrue(message.contains("max-samples") && message.contains("1 track with 10 additive layers"), message)
    }

    /// Once over, the compiler stops: one problem, not one for every later property or play.
    func testTheFirstPropertyOverTheBudgetStopsTheCompiler() {
        let document = #"{"fps":1,"target":{"a":\#(items(50)),"b":\#(items(50))},"motion":{"type":"group","repeat":1000,"children":[{"type":"tween","duration":1,"properties":[{"path":"a.*","to":1},{"path":"b.*","to":1}]}]}}"#
        let error = problems(document, limits: limits(120))
        // a (50), b (50), then a again: 150 > 120, in the second play.
        assertOverBudget(error, at: "/motion/children/0/properties/0", limit: 120)
    }

    /// The default, 1,000,000 (documented). A spring through 1,000 keyframes (the most a
    /// property may have) of 101 numbers each is 101 × 999 × 10 = 1,008,990 units: refused
    /// before any of its segments is solved.
    func testTheDefaultBudget() {
        XCTAssertEqual(EngineLimits.default.maxSegments, 1_000_000)
        let zeros = "[" + Array(repeating: "0", count: 101).joined(separator: ",") + "]"
        let ones = zeros.replacingOccurrences(of: "0", with: "1")
        let frames = "[" + (0..<1000).map { $0 % 2 == 0 ? zeros : ones }.joined(separator: ",") + "]"
        let document = #"{"fps":1,"target":{"x":\#(zeros)},"window":{"start":0,"end":1},"motion":{"type":"spring","response":0.3,"dampingRatio":0.5,"properties":[{"path":"x","keyframes":\#(frames)}]}}"#
        assertOverBudget(problems(document), at: "/motion/properties/0/keyframes", limit: 1_000_000)
    }
}
