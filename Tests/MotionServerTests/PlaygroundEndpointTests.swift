import Foundation
import XCTest

/// `GET /` and its assets (docs/playground.md): content types, fingerprinted caching, and
/// nothing but the playground's own files. The page itself is tested in a browser
/// (Tests/browser/test_playground.py).
final class PlaygroundEndpointTests: ServerTestCase {
    func testThePageLinksItsAssetsByVersionAndTheyAreServedWithTheirTypes() throws {
        let server = try startServer()
        let page = try get(server, "/")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertEqual(page.header("Cache-Control"), "no-cache")
        XCTAssertTrue(page.header("Content-Security-Policy")?.contains("default-src 'self'") ?? false)
        XCTAssertTrue(page.text.hasPrefix("<!doctype html>"))

        let linked = try NSRegularExpression(pattern: #"(?:src|href)="/playground/(\w+)\.([0-9a-f]{16})\.(js|css)""#)
        let matches = linked.matches(in: page.text, range: NSRange(page.text.startIndex..., in: page.text))
        let names = matches.map { match in (1...3).map { String(page.text[Range(match.range(at: $0), in: page.text)!]) } }
        XCTAssertEqual(Set(names.map { "\($0[0]).\($0[2])" }), ["playground.css", "examples.js", "app.js", "tools.js"])

        for name in names {
            let (base, version, ext) = (name[0], name[1], name[2])
            let current = try get(server, "/playground/\(base).\(version).\(ext)")
            XCTAssertEqual(current.status, 200)
            XCTAssertEqual(current.header("Content-Type"), ext == "js" ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8")
            XCTAssertEqual(current.header("Cache-Control"), "public, max-age=31536000, immutable")
            XCTAssertEqual(current.header("ETag"), "\"\(version)\"")
            XCTAssertFalse(current.body.isEmpty)
            for other in ["/playground/\(base).\(ext)", "/playground/\(base).\(String(repeating: "0", count: 16)).\(ext)"] {
                let plain = try get(server, other)
                XCTAssertEqual(plain.status, 200, other)
                XCTAssertEqual(plain.header("Cache-Control"), "no-cache", other)
                XCTAssertEqual(plain.body, current.body, other)
            }
        }
    }

    func testOnlyThePlaygroundsFilesAreServed() throws {
        let server = try startServer()
        for target in ["/playground/index.html", "/playground/app.js.map", "/playground/../openapi.yaml",
                       "/playground/", "/playground", "/index.html", "//"] {
            let response = try get(server, target)
            XCTAssertEqual(response.status, 404, target)
            XCTAssertEqual(response.mediaType, "application/problem+json", target)
        }
        let post = try send(server, "POST", "/")
        XCTAssertEqual(post.status, 405)
        let allowed = (post.header("Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertTrue(allowed.contains("GET") && allowed.contains("HEAD") && !allowed.contains("POST"), "\(allowed)")
        let head = try send(server, "HEAD", "/")
        XCTAssertEqual(head.status, 200)
    }
}
