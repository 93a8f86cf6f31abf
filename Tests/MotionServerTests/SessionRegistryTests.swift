import XCTest
@testable import MotionEngine
@testable import MotionHTTP

/// The order `GET /v1/sessions` pages through (`SortedIDs`, `SessionRegistry.page`): ids kept
/// in `String` order as sessions come and go, against a sorted set rebuilt at every step.
final class SessionRegistryTests: XCTestCase {
    func testSortedIDsPageLikeASortedSet() {
        var generator = SystemRandomNumberGenerator()
        var ids = SortedIDs()
        var reference = Set<String>()
        // Short ids from a small alphabet, so that inserts repeat and removals hit.
        let alphabet = Array("aB0_-z9")
        func randomID() -> String {
            String((0..<Int.random(in: 1...3, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        for step in 0..<3_000 {
            let id = randomID()
            if Bool.random(using: &generator) {
                ids.insert(id); reference.insert(id)
            } else {
                ids.remove(id); reference.remove(id)
            }
            let sorted = reference.sorted()
            XCTAssertEqual(ids.ids, sorted, "step \(step)")
            let after: String? = Bool.random(using: &generator) ? nil : randomID()
            let limit = Int.random(in: 0...6, using: &generator)
            let following = sorted.filter { after == nil || $0 > after! }
            let page = ids.page(after: after, limit: limit)
            XCTAssertEqual(Array(page.ids), Array(following.prefix(limit)), "after \(after ?? "nil"), limit \(limit)")
            XCTAssertEqual(page.more, following.count > limit)
        }
    }

    private static let timeline = try! TimelineCompiler(limits: .default).compile(
        Array(#"{"fps":1,"motion":{"type":"tween","duration":1,"properties":[{"path":"x","from":0,"to":1}]}}"#.utf8))

    private static func session(_ id: String, wall: Double = 0) -> LiveSession {
        LiveSession(id: id, timeline: timeline, speed: 1, wall: wall, maxBacklogFrames: 1, maxBacklogEvents: 1, maxRetargets: 1)
    }

    /// Every id `page` gives, from the first page to the last, `limit` at a time.
    private static func walk(_ registry: SessionRegistry, pagesOf limit: Int) -> [String] {
        var walked: [String] = []
        var after: String?
        while true {
            let (page, more) = registry.page(after: after, limit: limit)
            walked += page.map(\.id)
            guard more, let last = page.last else { return walked }
            after = last.id
        }
    }

    /// Expiry reads the sessions a page at a time (`SessionRegistry.expiryPage`): over
    /// several pages it removes exactly the idle ones, wherever they fall.
    func testExpiryOverManyPagesRemovesExactlyTheIdle() {
        let registry = SessionRegistry(maxSessions: 10_000, idleTTL: 5, metrics: ServiceMetrics())
        let total = 2 * SessionRegistry.expiryPage + 345
        var idle = Set<String>()
        for index in 0..<total {
            // Every third made at wall 0 (idle 12 s at wall 12), the others at wall 10 (idle 2 s).
            let wall: Double = index % 3 == 0 ? 0 : 10
            guard let session = registry.create({ Self.session($0, wall: wall) }) else { return XCTFail("not created") }
            if wall == 0 { idle.insert(session.id) }
        }
        registry.expire(atWall: 12)
        XCTAssertEqual(registry.count, total - idle.count)
        let left = Self.walk(registry, pagesOf: 700)
        XCTAssertEqual(left.count, total - idle.count)
        XCTAssertTrue(idle.isDisjoint(with: left))
    }

    func testPagesWalkEverySessionOnceInOrder() {
        let metrics = ServiceMetrics()
        let registry = SessionRegistry(maxSessions: 10_000, idleTTL: 3600, metrics: metrics)
        XCTAssertEqual(registry.page(after: nil, limit: 10).sessions.count, 0)
        var chosen: [String] = []
        for index in 0..<250 {
            let id = "s\(1_000 - index)"
            guard case .created = registry.create(id: id, { Self.session($0) }) else { return XCTFail("not created: \(id)") }
            chosen.append(id)
            _ = registry.create { Self.session($0) }  // and one with a random id
        }
        guard case .exists = registry.create(id: "s1000", { Self.session($0) }) else { return XCTFail("s1000 made twice") }
        for id in chosen where id.hasSuffix("7") { XCTAssertTrue(registry.delete(id)) }
        XCTAssertFalse(registry.delete("s1000x"))
        let walked = Self.walk(registry, pagesOf: 64)
        XCTAssertEqual(walked.count, registry.count)
        XCTAssertEqual(walked, walked.sorted())
        XCTAssertEqual(Set(walked).count, walked.count)
        XCTAssertTrue(Set(walked).isSuperset(of: chosen.filter { !$0.hasSuffix("7") }))
        XCTAssertTrue(Set(walked).isDisjoint(with: chosen.filter { $0.hasSuffix("7") }))
    }

    /// The janitor reads idleness outside the registry's lock, from a copy of the sessions:
    /// it removes the idle ones it saw, and never a session made since under the same id.
    func testExpiryRemovesIdleSessionsAndNotTheirSuccessors() {
        let metrics = ServiceMetrics()
        let registry = SessionRegistry(maxSessions: 10, idleTTL: 5, metrics: metrics)
        // Made at wall 0 and unwatched since (`session` makes them at wall 0).
        guard case .created(let first) = registry.create(id: "a", { Self.session($0) }),
              case .created = registry.create(id: "b", { Self.session($0) }) else { return XCTFail("not created") }
        registry.expire(atWall: 4)
        XCTAssertEqual(registry.count, 2, "idle 4 s of 5")
        XCTAssertTrue(registry.delete("a"))
        guard case .created(let second) = registry.create(id: "a", { Self.session($0) }) else { return XCTFail("not made again") }
        XCTAssertFalse(registry.delete("a", only: first), "a later session under the same id")
        XCTAssertTrue(registry.session("a") === second)
        registry.expire(atWall: 6)
        XCTAssertEqual(registry.count, 0, "both idle 6 s")
        XCTAssertEqual(registry.page(after: nil, limit: 10).sessions.count, 0)
    }
}
