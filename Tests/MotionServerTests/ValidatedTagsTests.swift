import XCTest
import MotionEngine
@testable import MotionHTTP

/// The memo of computed documents' tags that answers a revalidation without computing
/// (`ValidatedTags`), through the handlers themselves.
final class ValidatedTagsTests: XCTestCase {
    private func digest(_ text: String, kind: String = "timeline") throws -> FNV1a128 {
        RequestTag.digest(for: try JSONParser.parse(Array(text.utf8)), kind: kind)
    }

    func testATagIsHeldUntilALaterOneTakesItsSlot() throws {
        let memo = ValidatedTags(capacity: 3)
        XCTAssertEqual(memo.capacity, 4, "a power of two")
        // Documents until two share a slot and two others have slots of their own.
        var bySlot: [Int: [FNV1a128]] = [:]
        var n = 0
        while bySlot.values.map(\.count).max() ?? 0 < 2 || bySlot.count < 3 {
            let tag = try digest(#"{"n":\#(n)}"#)
            bySlot[memo.slot(of: tag), default: []].append(tag)
            n += 1
        }
        let shared = try XCTUnwrap(bySlot.values.first { $0.count >= 2 })
        let others = bySlot.values.filter { $0[0] != shared[0] }.map { $0[0] }
        memo.insert(shared[0])
        for tag in others { memo.insert(tag) }
        XCTAssertTrue(memo.contains(shared[0]))
        XCTAssertFalse(memo.contains(shared[1]), "never inserted")
        XCTAssertEqual(memo.count, 1 + others.count)
        memo.insert(shared[1])
        XCTAssertFalse(memo.contains(shared[0]), "its slot was taken")
        XCTAssertTrue(memo.contains(shared[1]))
        for tag in others { XCTAssertTrue(memo.contains(tag), "other slots keep theirs") }
        XCTAssertEqual(memo.count, 1 + others.count)

        let none = ValidatedTags(capacity: 0)
        none.insert(shared[0])
        XCTAssertFalse(none.contains(shared[0]))
        XCTAssertEqual(none.count, 0)
        XCTAssertEqual(ValidatedTags(capacity: Int.max).capacity, 1 << 20)
        XCTAssertEqual(ValidatedTags().capacity, 4096)
    }

    private func makeHandlers() -> Handlers {
        let metrics = ServiceMetrics()
        return Handlers(configuration: ServerConfiguration(), state: ServiceState(), streams: StreamRegistry { _ in },
                        sessions: SessionRegistry(maxSessions: 0, idleTTL: 1, metrics: metrics), metrics: metrics)
    }

    private func post(_ handlers: Handlers, _ path: String, _ body: String, ifNoneMatch: String? = nil) -> HTTPResponse {
        var request = HTTPRequest(method: "POST", path: path, query: [:], contentType: "application/json", accept: nil,
                                  body: Array(body.utf8))
        request.ifNoneMatch = ifNoneMatch
        return handlers.router().handle(request).0
    }

    func testAComputedDocumentIsHeldAndARefusedOneIsNot() throws {
        let handlers = makeHandlers()
        let good = #"{"fps":10,"target":{"x":0},"motion":{"type":"tween","duration":0.5,"properties":[{"path":"x","to":1}]}}"#
        let bad = #"{"motion":{"type":"tween","duration":-1,"properties":[{"path":"x","from":0,"to":1}]}}"#
        XCTAssertFalse(handlers.validatedTags.contains(try digest(good)))

        // A tag the server never computed (another process's, or made up) takes the full
        // path: a good document is computed and answered 304, a bad one gets its problem.
        let goodTag = try digest(good).quotedHex
        XCTAssertEqual(post(handlers, "/v1/timelines", good, ifNoneMatch: goodTag).status, 304)
        XCTAssertTrue(handlers.validatedTags.contains(try digest(good)), "computed: held")
        XCTAssertEqual(post(handlers, "/v1/timelines", bad, ifNoneMatch: try digest(bad).quotedHex).status, 422)
        XCTAssertEqual(post(handlers, "/v1/timelines", bad, ifNoneMatch: "*").status, 422)
        XCTAssertFalse(handlers.validatedTags.contains(try digest(bad)), "refused: not held")

        // A plain 200 records its tag too, under its endpoint's kind.
        let other = #"{"fps":20,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":5}]}}"#
        let answered = post(handlers, "/v1/timelines", other)
        XCTAssertEqual(answered.status, 200)
        XCTAssertEqual(answered.header("ETag"), try digest(other).quotedHex)
        XCTAssertTrue(handlers.validatedTags.contains(try digest(other)))
        XCTAssertFalse(handlers.validatedTags.contains(try digest(other, kind: "batch")))

        let batch = #"{"documents":[\#(good),\#(bad)]}"#
        let batchAnswer = post(handlers, "/v1/timelines/batch", batch)
        XCTAssertEqual(batchAnswer.status, 200, "one bad document is its own problem object")
        XCTAssertTrue(handlers.validatedTags.contains(try digest(batch, kind: "batch")))
        XCTAssertEqual(post(handlers, "/v1/timelines/batch", batch, ifNoneMatch: try digest(batch, kind: "batch").quotedHex).status, 304)
        let tooMany = #"{"documents":[]}"#
        XCTAssertEqual(post(handlers, "/v1/timelines/batch", tooMany, ifNoneMatch: "*").status, 422)
        XCTAssertFalse(handlers.validatedTags.contains(try digest(tooMany, kind: "batch")))
    }

    /// The short cut itself: a held tag is answered from the parsed body and its tag, with no
    /// decoding. The server never holds a refused document's tag (above); holding one here
    /// by hand is how the test sees that nothing after the tag ran.
    func testAHeldTagIsAnsweredWithoutDecoding() throws {
        let handlers = makeHandlers()
        let bad = #"{"motion":{"type":"tween","duration":-1,"properties":[{"path":"x","from":0,"to":1}]}}"#
        let tag = try digest(bad)
        handlers.validatedTags.insert(tag)
        let answer = post(handlers, "/v1/timelines", bad, ifNoneMatch: tag.quotedHex)
        XCTAssertEqual(answer.status, 304)
        XCTAssertEqual(answer.header("ETag"), tag.quotedHex)
        // Without If-None-Match the document is computed as ever.
        XCTAssertEqual(post(handlers, "/v1/timelines", bad).status, 422)
        // Still parsed first: a body that is not JSON is a 400 whatever the field says.
        XCTAssertEqual(post(handlers, "/v1/timelines", "{", ifNoneMatch: "*").status, 400)
    }
}
