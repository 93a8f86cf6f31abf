import Foundation
import MotionEngine

/// The HTTP endpoints, wired to the engine. Each handler runs on a libmicrohttpd worker.
struct Handlers: Sendable {
    let configuration: ServerConfiguration
    let state: ServiceState
    let streams: StreamRegistry
    let easingCatalogue: [UInt8]
    let openAPIDocument: [UInt8]

    init(configuration: ServerConfiguration, state: ServiceState, streams: StreamRegistry) {
        self.configuration = configuration
        self.state = state
        self.streams = streams
        self.easingCatalogue = Easing.catalogue.serialized
        self.openAPIDocument = PackageResources.openapi_yaml
    }

    func router() -> Router {
        var router = Router()
        router.add("POST", "/v1/timelines", timelines)
        router.add("POST", "/v1/streams", stream)
        router.add("GET", "/v1/easings") { _ in .json(200, easingCatalogue) }
        router.add("GET", "/healthz") { _ in .json(200, Array(#"{"status":"ok"}"#.utf8)) }
        router.add("GET", "/readyz", readiness)
        router.add("GET", "/openapi.yaml") { _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml")], body: openAPIDocument)
        }
        return router
    }

    var compiler: TimelineCompiler { TimelineCompiler(limits: configuration.limits) }

    func readiness(_ request: HTTPRequest) -> HTTPResponse {
        if state.isDraining {
            return ProblemDetails.unavailable("the server is shutting down").response
        }
        return .json(200, Array(#"{"status":"ready"}"#.utf8))
    }

    func timelines(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refuseComputing(request) { return refusal.response }
        do {
            let timeline = try compiler.compile(request.body)
            return .json(200, TimelineEncoder.encode(timeline))
        } catch {
            return ProblemDetails.from(error).response
        }
    }

    func stream(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refuseComputing(request) { return refusal.response }
        var speed = 1.0
        if let text = request.query["speed"] {
            guard let value = Double(text), value.isFinite, value >= 0, value <= 1_000_000 else {
                return ProblemDetails.badRequest("speed must be a number from 0 to 1000000 (0 = unpaced), not '\(text)'", parameter: "speed").response
            }
            speed = value
        }
        let timeline: Timeline
        do {
            timeline = try compiler.compile(request.body)
        } catch {
            return ProblemDetails.from(error).response
        }
        let sse = Self.accepts(request.accept, "text/event-stream")
        let stream = FrameStream(encoder: FrameStreamEncoder(timeline: timeline, format: sse ? .serverSentEvents : .ndjson),
                                 speed: speed, chunkBytes: configuration.streamChunkBytes, registry: streams)
        guard streams.register(stream, limit: configuration.maxStreams) else {
            return ProblemDetails.unavailable("too many open streams (max-streams \(configuration.maxStreams))").response
        }
        let contentType = sse ? "text/event-stream" : "application/x-ndjson"
        return HTTPResponse(status: 200, headers: [("Content-Type", contentType), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no")],
                            stream: stream)
    }

    /// 503 while draining, 415 unless the body is JSON.
    func refuseComputing(_ request: HTTPRequest) -> ProblemDetails? {
        if state.isDraining { return .unavailable("the server is shutting down") }
        guard let contentType = request.contentType, Self.isJSON(contentType) else {
            return .unsupportedMediaType(request.contentType)
        }
        return nil
    }

    /// `application/json` or `application/<something>+json`, parameters (charset) ignored.
    static func isJSON(_ contentType: String) -> Bool {
        let media = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return media == "application/json" || (media.hasPrefix("application/") && media.hasSuffix("+json"))
    }

    /// Whether an Accept header lists `media` (q=0 excluded).
    static func accepts(_ accept: String?, _ media: String) -> Bool {
        guard let accept else { return false }
        for item in accept.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == media else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return quality > 0
        }
        return false
    }
}
