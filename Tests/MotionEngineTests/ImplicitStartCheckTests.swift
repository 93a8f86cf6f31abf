import XCTest
@testable import MotionEngine

/// `ImplicitStartCheck`: a property without `from` whose path is missing from `target` is
/// reported while the document is decoded, unless a motion could provide it: a `from` on the
/// same path, a prefix or an extension of it (with `*` matching any segment).
final class ImplicitStartCheckTests: XCTestCase {
    private func reported(_ properties: [String], target: String = #"{"w":[{"x":0},{"x":0}],"t":0}"#) -> [String] {
        let document = #"{"fps":1,"target":\#(target),"motion":{"type":"tween","duration":1,"properties":[\#(properties.joined(separator: ","))]}}"#
        return problems(document).problems.filter { $0.message.contains("and no 'from'") }.map(\.pointer)
    }

    func testProvidersArePathsTheirPrefixesAndExtensions() {
        let properties = [
            #"{"path":"a.b","from":0,"to":1}"#,      // 0: provides a.b
            #"{"path":"a","to":{"b":1}}"#,           // 1: extended by a.b
            #"{"path":"a.b.c","to":1}"#,             // 2: a.b is its prefix
            #"{"path":"a.c","to":1}"#,               // 3: nothing provides it
            #"{"path":"q","to":1}"#,                 // 4: nothing
            #"{"path":"w.*.y","from":0,"to":1}"#,    // 5: provides w.<any>.y
            #"{"path":"w.7.y.z","to":1}"#,           // 6: w.*.y is its prefix
            #"{"path":"t","to":1}"#,                 // 7: in target
        ]
        XCTAssertEqual(reported(properties), ["/motion/properties/3/path", "/motion/properties/4/path"])
    }

    /// Every candidate was compared with every provider: 20,000 properties with `from` and
    /// 30,000 without took 16 s before the 422 for `max-properties`. Providers without `*`
    /// are now a tree; those with `*` are compared with the candidates only while the pairs
    /// number at most a million, and beyond that taken to provide everything, leaving the
    /// start values to the compiler.
    func testManyWildcardProvidersLeaveTheCheckToTheCompiler() throws {
        XCTAssertEqual(reported([#"{"path":"w.*.x","from":0,"to":1}"#, #"{"path":"q","to":1}"#]), ["/motion/properties/1/path"])
        // 1,001 × 1,000 pairs: over the bound. The tween's easing is wrong too, so nothing
        // is compiled: what is reported is what the decoder found.
        let providers = Array(repeating: #"{"path":"w.*.x","from":0,"to":1}"#, count: 1_001)
        let candidates = Array(repeating: #"{"path":"q","to":1}"#, count: 1_000)
        let document = { (providers: [String]) in
            #"{"fps":1,"target":{"w":[{"x":0}]},"motion":{"type":"tween","duration":1,"easing":"nope","properties":[\#((providers + candidates).joined(separator: ","))]}}"#
        }
        let unchecked = problems(document(providers)).problems
        XCTAssertEqual(unchecked.map(\.pointer), ["/motion/easing"], "\(unchecked.prefix(2))")
        // 1,000 × 1,000: compared, and every candidate reported (counted; the first hundred
        // problems listed).
        let checked = problems(document(Array(providers.dropLast())))
        XCTAssertEqual(checked.count, 1_001)
        XCTAssertEqual(checked.problems.count, DocumentError.listed)
        XCTAssertEqual(checked.problems.last?.pointer, "/motion/properties/1098/path")
    }
}
