import Foundation

/// The playground page (`GET /`) and its assets, compiled into the binary from
/// `Sources/MotionHTTP/Playground/` (plain HTML, CSS and JavaScript; docs/playground.md).
///
/// Caching: the page is `no-cache` (revalidated on every load, it is small), and it links its
/// assets as `/playground/<file>?v=<content hash>`. An asset asked for with the current hash
/// never changes, so it is cacheable for a year (`immutable`); asked for without it (or with
/// another) it is `no-cache`, so a new binary never serves a stale script to a fresh page.
struct PlaygroundAssets: Sendable {
    struct Asset: Sendable {
        var contentType: String
        var body: [UInt8]
        var version: String
    }

    let page: [UInt8]
    let assets: [String: Asset]

    init() {
        var assets: [String: Asset] = [:]
        for (name, type, body) in [
            ("app.js", "text/javascript; charset=utf-8", PackageResources.app_js),
            ("tools.js", "text/javascript; charset=utf-8", PackageResources.tools_js),
            ("playground.css", "text/css; charset=utf-8", PackageResources.playground_css),
            ("examples.js", "text/javascript; charset=utf-8", PackageResources.examples_js),
        ] {
            assets[name] = Asset(contentType: type, body: body, version: Self.hash(body))
        }
        var html = String(decoding: PackageResources.index_html, as: UTF8.self)
        for (name, asset) in assets {
            html = html.replacingOccurrences(of: "/playground/\(name)\"", with: "/playground/\(name)?v=\(asset.version)\"")
        }
        self.page = Array(html.utf8)
        self.assets = assets
    }

    /// Headers every playground answer carries: the page may only load what the service serves.
    static let securityHeaders: [(String, String)] = [
        ("X-Content-Type-Options", "nosniff"),
        ("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
        ("Referrer-Policy", "no-referrer"),
    ]

    func pageResponse() -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")] + Self.securityHeaders, body: page)
    }

    func assetResponse(_ request: HTTPRequest) -> HTTPResponse {
        guard let name = request.pathParameters["file"], let asset = assets[name] else {
            return ProblemDetails.notFound(request.path).response
        }
        let caching = request.query["v"] == asset.version ? "public, max-age=31536000, immutable" : "no-cache"
        return HTTPResponse(status: 200, headers: [("Content-Type", asset.contentType), ("Cache-Control", caching), ("ETag", "\"\(asset.version)\"")] + Self.securityHeaders, body: asset.body)
    }

    /// FNV-1a, 64 bits, in hex: a version tag for cache busting, not a security measure.
    static func hash(_ bytes: [UInt8]) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01b3
        }
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
