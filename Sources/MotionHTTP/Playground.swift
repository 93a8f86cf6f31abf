import Foundation

/// The playground page (`GET /`) and its assets, compiled into the binary from
/// `Sources/MotionHTTP/Playground/` (plain HTML, CSS and JavaScript; docs/playground.md).
///
/// Caching: the page is `no-cache` (revalidated on every load, it is small), and it links its
/// assets by content version, `/playground/app.<hash>.js`. Under its current hash an asset
/// never changes, so it is cacheable for a year (`immutable`); under its plain name (or an
/// old hash) it is `no-cache`, so a new binary never pairs a fresh page with a stale script.
struct PlaygroundAssets: Sendable {
    struct Asset: Sendable {
        var contentType: String
        var body: StaticBody
        var version: String
    }

    let page: StaticBody
    let assets: [String: Asset]

    init() {
        var assets: [String: Asset] = [:]
        for (name, type, body) in [
            ("app.js", "text/javascript; charset=utf-8", PackageResources.app_js),
            ("tools.js", "text/javascript; charset=utf-8", PackageResources.tools_js),
            ("playground.css", "text/css; charset=utf-8", PackageResources.playground_css),
            ("examples.js", "text/javascript; charset=utf-8", PackageResources.examples_js),
        ] {
            assets[name] = Asset(contentType: type, body: StaticBody(body), version: Self.hash(body))
        }
        var html = String(decoding: PackageResources.index_html, as: UTF8.self)
        for (name, asset) in assets {
            html = html.replacingOccurrences(of: "/playground/\(name)\"", with: "/playground/\(Self.versioned(name, asset.version))\"")
        }
        self.page = StaticBody(Array(html.utf8))
        self.assets = assets
    }

    /// Headers every playground answer carries: the page may only load what the service serves.
    static let securityHeaders: [(String, String)] = [
        ("X-Content-Type-Options", "nosniff"),
        ("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
        ("Referrer-Policy", "no-referrer"),
    ]

    func pageResponse() -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")] + Self.securityHeaders, staticBody: page)
    }

    /// `app.js` under version `v`: `app.v.js`.
    static func versioned(_ name: String, _ version: String) -> String {
        guard let dot = name.lastIndex(of: ".") else { return name + "." + version }
        return name[..<dot] + "." + version + name[dot...]
    }

    /// `app.js` → (app.js, nil); `app.0123456789abcdef.js` → (app.js, 0123456789abcdef).
    static func unversioned(_ file: String) -> (name: String, version: Substring?) {
        let parts = file.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].utf8.count == 16, parts[1].utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            return (file, nil)
        }
        return (parts[0] + "." + parts[2], parts[1])
    }

    func assetResponse(_ request: HTTPRequest) -> HTTPResponse {
        guard let file = request.pathParameters["file"] else { return ProblemDetails.notFound(request.path).response }
        let (name, version) = Self.unversioned(file)
        guard let asset = assets[name] else { return ProblemDetails.notFound(request.path).response }
        let caching = version.map(String.init) == asset.version ? "public, max-age=31536000, immutable" : "no-cache"
        return HTTPResponse(status: 200, headers: [("Content-Type", asset.contentType), ("Cache-Control", caching), ("ETag", "\"\(asset.version)\"")] + Self.securityHeaders, staticBody: asset.body)
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
