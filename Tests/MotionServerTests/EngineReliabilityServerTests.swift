import Foundation
import XCTest

/// Server-level checks for engine reliability fixes (issues #11, #19): documents that used to
/// trap the process, leak per request, or ask for unbounded output.
final class EngineReliabilityServerTests: ServerTestCase {
    /// 422: the spring would not rest within an hour.
    static let unrestingSpring = #"{"target":{"x":0,"y":0},"motion":{"type":"group","children":[{"type":"tween","duration":1,"properties":[{"path":"y","to":1}]},{"type":"spring","response":0.5,"dampingRatio":0.00006,"properties":[{"path":"x","to":100}]}]}}"#
    /// 422 (max-events): a tween repeating 200,000 times beside a second child.
    static let tooManyRepeats = #"{"target":{"x":0,"y":0},"motion":{"type":"group","children":[{"type":"tween","duration":1,"repeat":200000,"properties":[{"path":"y","to":1}]},{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}]}}"#

    private func residentKilobytes(_ pid: pid_t) -> Int? {
        guard let status = readProcFile("/proc/\(pid)/status") else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) }
    }

    /// Aborted group schedules used to keep their plays (and, when the run stopped with actions
    /// still queued, the whole scheduler) alive: memory grew with every 422.
    func testAbortedSchedulesDoNotLeak() throws {
        let server = try startServer()
        let client = try server.client(readTimeout: 30)
        defer { client.close() }
        let documents = [Self.unrestingSpring, Self.tooManyRepeats]
        func replay(_ count: Int) throws {
            for index in 0..<count {
                let response = try client.postJSON("/v1/timelines", documents[index % documents.count])
                guard response.status == 422 else {
                    throw TestServerError(description: "expected 422, got \(response.status): \(response.text)")
                }
            }
        }
        try replay(500)
        let before = try XCTUnwrap(residentKilobytes(server.pid))
        try replay(5_000)
        let after = try XCTUnwrap(residentKilobytes(server.pid))
        print("RSS after 500 aborted documents: \(before) kB; after 5,000 more: \(after) kB")
        XCTAssertLessThan(after - before, 5_000, "RSS grew by \(after - before) kB over 5,000 aborted documents")
        assertHealthy(server)
    }

    /// These SVG arcs used to trap the process in `EllipticalArc.pieceCount` (Double → Int
    /// overflow, NaN piece count); now each is answered and the server stays up.
    func testExtremeArcsAreAnsweredAndTheServerSurvives() throws {
        let server = try startServer()
        func document(_ svg: String) -> String {
            #"{"fps":10,"target":{},"motion":{"type":"path","path":"\#(svg)","duration":1,"output":"dot"}}"#
        }
        for svg in ["M0 0 A50 1.7976931348623157e308 0 0 1 100 0", "M0 0 A1e-100 1 0 0 1 100 0"] {
            let body = try assertProblem(try post(server, "/v1/timelines", document(svg)), status: 422)
            XCTAssertEqual(problemEntries(body).map(\.pointer), ["/motion/path"], svg)
            assertHealthy(server)
        }
        let flat = try timeline(server, document("M0 0 A50 2.2250738585072014e-308 0 0 1 100 0"))
        XCTAssertEqual(flat["frameCount"]?.int, 11)
        assertHealthy(server)
    }
}
