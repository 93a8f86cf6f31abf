import Foundation
import MotionEngine

/// The HTTP endpoints, wired to the engine. Each handler runs on a libmicrohttpd worker.
struct Handlers: Sendable {
    let configuration: ServerConfiguration
    let state: ServiceState
    let streams: StreamRegistry
    let sessions: SessionRegistry
    let metrics: ServiceMetrics
    let easingCatalogue: StaticBody
    let openAPIDocument: StaticBody
    let playground: PlaygroundAssets
    /// Documents computed without a problem, for 304s without computing (`ValidatedTags`).
    let validatedTags = ValidatedTags()
    /// Segments held by open streams and live sessions (`--max-live-segments`).
    let liveSegments: LiveSegmentBudget

    init(configuration: ServerConfiguration, state: ServiceState, streams: StreamRegistry, sessions: SessionRegistry, metrics: ServiceMetrics) {
        self.configuration = configuration
        self.state = state
        self.streams = streams
        self.sessions = sessions
        self.metrics = metrics
        var catalogue = Easing.catalogue.serialized
        if catalogue.last != UInt8(ascii: "\n") { catalogue.append(UInt8(ascii: "\n")) }
        self.easingCatalogue = StaticBody(catalogue)
        self.openAPIDocument = StaticBody(PackageResources.openapi_yaml)
        self.playground = PlaygroundAssets()
        self.liveSegments = LiveSegmentBudget(limit: configuration.maxLiveSegments)
    }

    func router() -> Router {
        var router = Router()
        router.cors = configuration.cors
        router.add("POST", "/v1/timelines", inline: true, timelines)
        router.add("POST", "/v1/timelines/batch", batch)
        router.add("POST", "/v1/streams", query: ["speed"], inline: true, stream)
        router.add("POST", "/v1/sessions", query: ["speed"], inline: true, held: .checkedFirst, createSession)
        router.add("GET", "/v1/sessions", query: ["limit", "after"], listSessions)
        router.add("GET", "/v1/sessions/{id}", sessionState)
        router.add("PUT", "/v1/sessions/{id}", query: ["speed"], inline: true, held: .checkedFirst, putSession)
        router.add("DELETE", "/v1/sessions/{id}", held: .delivered, deleteSession)
        router.add("GET", "/v1/sessions/{id}/frames", watchSession)
        router.add("POST", "/v1/sessions/{id}/commands", inline: true, held: .checkedFirst, command)
        router.add("POST", "/v1/sessions/{id}/retarget", inline: true, held: .checkedFirst, retarget)
        router.add("POST", "/v1/springs", springs)
        router.add("GET", "/") { _ in playground.pageResponse() }
        router.add("GET", "/playground/{file}") { request in playground.assetResponse(request) }
        router.add("GET", "/v1/easings") { _ in HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], staticBody: easingCatalogue) }
        router.add("GET", "/healthz", held: .delivered) { _ in .json(200, Self.health) }
        router.add("GET", "/readyz", held: .delivered, readiness)
        router.add("GET", "/metrics", held: .delivered) { _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: metrics.render(liveSegments: liveSegments.current))
        }
        router.add("GET", "/openapi.yaml") { _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml")], staticBody: openAPIDocument)
        }
        router.add("GET", "/problems/{name}", problemPage)
        return router
    }

    /// `GET /healthz`: alive, and which version.
    static let health = Array("{\"status\":\"ok\",\"version\":\"\(MotionServerVersion.current)\"}\n".utf8)

    func problemPage(_ request: HTTPRequest) -> HTTPResponse {
        guard let name = request.pathParameters["name"], let page = ProblemPages.page(name) else {
            return ProblemDetails.notFound(request.path).response
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: ProblemPages.html(page))
    }

    /// Most sessions one `GET /v1/sessions` page lists, and the default.
    static let maxSessionPage = 1000
    static let defaultSessionPage = 100

    /// What one session of a listing counts for against the inline bound
    /// (`HTTPRequest.inlineSampleLimit`): a page of 1,000 sessions took about 0.4 ms to answer
    /// (release build), some 0.4 µs a session where a sample of the 100-track document takes
    /// about 0.03 µs. At the default bound (2,048) pages of up to 128 sessions (the default
    /// page is 100) are answered on the connection thread, larger ones on the pool: 16
    /// clients reading pages of 1,000 held `/healthz` at 5.7 ms p50 and 9.8 ms p99 on the
    /// connection threads, 0.1 ms and 2.0 ms with the pages on the pool (1,000 sessions,
    /// server on one core).
    static let sessionSummarySamples = 16

    /// `GET /v1/sessions?limit=N&after=ID`: the live sessions in id order, a page at a time;
    /// `next` is the link to the following page (null on the last).
    func listSessions(_ request: HTTPRequest) -> HTTPResponse {
        var limit = Self.defaultSessionPage
        if let text = request.query["limit"] {
            guard text.utf8.count <= 4, let value = Int(text), (1...Self.maxSessionPage).contains(value) else {
                let shown = text.count > 32 ? String(text.prefix(32)) + "…" : text
                return ProblemDetails.badRequest("limit must be an integer from 1 to \(Self.maxSessionPage), not '\(shown)'", parameter: "limit").response
            }
            limit = value
        }
        let after = request.query["after"]
        if let after, after.isEmpty || after.utf8.count > 64 {
            return ProblemDetails.badRequest("after must be a session id (1 to 64 characters)", parameter: "after").response
        }
        let (page, more) = sessions.page(after: after, limit: limit)
        if let bound = request.inlineSampleLimit, page.count * Self.sessionSummarySamples > bound { return .computeOnPool }
        let wall = MonotonicClock.seconds
        var w = JSONWriter(capacity: 64 + page.count * 96)
        w.raw("{\"sessions\":[")
        for (index, session) in page.enumerated() {
            if index > 0 { w.byte(UInt8(ascii: ",")) }
            session.writeSummary(atWall: wall, into: &w)
        }
        w.raw("],\"next\":")
        if more, let last = page.last {
            w.string("/v1/sessions?limit=\(limit)&after=\(last.id)")
        } else {
            w.raw("null")
        }
        w.raw("}")
        return .json(200, w.bytes)
    }

    var compiler: TimelineCompiler { TimelineCompiler(limits: configuration.limits) }

    /// The compiler for a connection thread (`request.inlineSampleLimit`): held to the inline
    /// bound (node plays count as events, curve segments as samples), so that it stops early
    /// on a document too large to compute there. At the default bound (2,048) a document of
    /// spring keyframes stops after about 2 ms: a 1,000-byte one of 200 elements with 200
    /// spring keyframes each took 0.4 s of a connection thread before segments were counted.
    func inlineCompiler(_ limit: Int) -> TimelineCompiler {
        var limits = configuration.limits
        limits.maxEvents = min(limits.maxEvents, max(1, limit))
        limits.maxSamples = min(limits.maxSamples, max(1, limit))
        limits.maxSegments = min(limits.maxSegments, max(1, limit))
        return TimelineCompiler(limits: limits)
    }

    /// Whether a timeline compiled by `inlineCompiler(limit)` is small enough to answer on
    /// the connection thread: frames × tracks plus events (they count as samples) within `limit`.
    static func fitsInline(_ timeline: Timeline, limit: Int) -> Bool {
        timeline.frameCount * max(1, timeline.layers) + timeline.events.count <= limit
    }

    func readiness(_ request: HTTPRequest) -> HTTPResponse {
        if state.isDraining {
            return ProblemDetails.unavailable("the server is shutting down").response
        }
        return .json(200, Array(#"{"status":"ready"}"#.utf8))
    }

    // MARK: - Timelines and streams

    func timelines(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refuseComputing(request) { return refusal.response }
        do {
            let json = try DocumentDecoder.parse(request.body)
            let revalidation = revalidate(request, json, kind: "timeline")
            if let answer = revalidation.notModified { return answer }
            let document = try DocumentDecoder(limits: configuration.limits).decode(json)
            let timeline: Timeline
            if let limit = request.inlineSampleLimit {
                // On a connection thread the compiler itself is held to the inline bound, so
                // that it stops early (a 1 KiB document can start 100,000 node plays: ~30 ms
                // to compile); whatever it refuses is compiled again on the pool with the real
                // limits, which also gives a real problem its answer.
                guard let compiled = try? inlineCompiler(limit).compile(document) else { return .computeOnPool }
                timeline = compiled
                // Too much to encode here, or a format other than plain json (css, waapi,
                // lottie and `simplify` reduce every track: up to millions of curve
                // evaluations for a few frames): to the pool.
                if !Self.fitsInline(timeline, limit: limit)
                    || timeline.options.format != .json || timeline.options.simplify != nil { return .computeOnPool }
            } else {
                timeline = try compiler.compile(document)
            }
            // Encoded before the tag is kept or matched: an export or a reduction can still
            // be a 422 here (its budgets, --max-response-bytes), and a 304 promises the
            // client a 200 it never had (found by an adversarial review: `If-None-Match: *`
            // on a css export over its budget, then its tag, answered 304 twice).
            let (contentType, body) = try TimelineExport.encode(timeline)
            let digest = revalidation.tag ?? RequestTag.digest(for: json, kind: "timeline")
            validatedTags.insert(digest)
            let tag = digest.quotedHex
            if let answer = Self.notModified(request, tag: tag) { return answer }
            if contentType == "application/json" { return .json(200, body, headers: [("ETag", tag)]) }
            return HTTPResponse(status: 200, headers: [("Content-Type", contentType), ("ETag", tag)], body: body)
        } catch {
            return ProblemDetails.from(error).response
        }
    }

    func stream(_ request: HTTPRequest) -> HTTPResponse {
        let timeline: Timeline, speed: Double
        switch compiledRequest(request, allowZeroSpeed: true, for: .stream) {
        case .success(let compiled): (timeline, speed) = compiled
        case .failure(let problem): return problem.response
        case nil: return .computeOnPool
        }
        let cost = LiveSegmentBudget.cost(of: timeline)
        guard let reservation = liveSegments.reserve(cost) else {
            return liveSegments.refusal("stream", segments: cost).response
        }
        let format = Self.streamFormat(request)
        let stream = FrameStream(encoder: FrameStreamEncoder(timeline: timeline, format: format),
                                 speed: speed, chunkBytes: configuration.streamChunkBytes, metrics: metrics,
                                 gridPhases: configuration.pacerPhases)
        stream.liveSegments = reservation
        guard streams.register(stream, limit: configuration.maxStreams) else {
            return ProblemDetails.unavailable("too many open streams (max-streams \(configuration.maxStreams))").response
        }
        return HTTPResponse(status: 200, headers: Self.streamHeaders(format), stream: stream)
    }

    /// What `/v1/streams` and `/v1/sessions` start with: the refusals (draining, not JSON),
    /// the `speed` parameter, then the compiled document — each problem before the next step.
    /// `use` says which output must fit `max-response-bytes` (one stream frame, one watcher read).
    ///
    /// nil: on a connection thread (`request.inlineSampleLimit` set, `/v1/streams`), the
    /// document is more than the inline bound allows, or has a problem: it is compiled again
    /// on the pool with the real limits, which also gives a problem its real answer. A burst
    /// of stream requests no longer fills the pool's queue (64 waiting, on threads below the
    /// pacer's priority) and gets 503s: on one core, of 500 streams requested at once 52–67 %
    /// were refused on the pool and none now; of 1,500 requested at 2,000 a second, 2–20 %
    /// and none (`HTTPDaemon.inlineBudgeted` false: direct writes, the pacer ahead; Benchmarks/README.md,
    /// "Stream starts on the connection thread").
    private func compiledRequest(_ request: HTTPRequest, allowZeroSpeed: Bool, for use: OutputSize.Use) -> Result<(Timeline, Double), ProblemDetails>? {
        if let refusal = refuseComputing(request) { return .failure(refusal) }
        if let full = liveSegments.refusalWhenFull(use == .stream ? "stream" : "session") { return .failure(full) }
        let speed: Double
        switch Self.speed(request, allowZero: allowZeroSpeed) {
        case .success(let value): speed = value
        case .failure(let problem): return .failure(problem)
        }
        if let limit = request.inlineSampleLimit {
            guard let timeline = try? inlineCompiler(limit).compile(request.body, for: use),
                  Self.timelinesOnly(timeline.options) == nil, Self.fitsInline(timeline, limit: limit) else { return nil }
            return .success((timeline, speed))
        }
        do throws(DocumentError) {
            let timeline = try compiler.compile(request.body, for: use)
            if let problem = Self.timelinesOnly(timeline.options) { throw problem }
            return .success((timeline, speed))
        } catch {
            return .failure(ProblemDetails.from(error))
        }
    }

    /// Output formats and reduction are for `POST /v1/timelines`: streams and sessions write
    /// frames (docs/streams-and-sessions.md), so they refuse a document that asks for another format.
    static func timelinesOnly(_ output: OutputOptions) -> DocumentError? {
        var problems: [Problem] = []
        if output.format != .json {
            problems.append(Problem(pointer: "/output/format", message: "applies to POST /v1/timelines only; streams and sessions write JSON frames", kind: .invalid))
        }
        for (field, present) in [("simplify", output.simplify != nil), ("css", output.css != nil), ("lottie", output.lottie != nil)] where present {
            problems.append(Problem(pointer: "/output/\(field)", message: "applies to POST /v1/timelines only; streams and sessions write every frame", kind: .invalid))
        }
        return problems.isEmpty ? nil : DocumentError(problems)
    }

    /// `POST /v1/springs`: one spring in any form, answered in every form with its metrics
    /// and a CSS `linear()` easing (docs/springs.md).
    func springs(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refuseComputing(request) { return refusal.response }
        let (status, body) = Self.springAnswer(request.body)
        return status == 200 ? .json(200, body) : HTTPResponse(status: status, headers: [("Content-Type", "application/problem+json")], body: body)
    }

    /// The status and body `POST /v1/springs` answers for a JSON body (also what
    /// `motion-server springs` prints).
    static func springAnswer(_ body: [UInt8]) -> (status: Int, body: [UInt8]) {
        do {
            return (200, try SpringTranslator.translate(body))
        } catch {
            var problem = ProblemDetails.from(error)
            problem.title = problem.status == 400 ? "Malformed spring" : "Invalid spring"
            return (problem.status, problem.response.bodyBytes)
        }
    }

    // MARK: - Sessions

    func createSession(_ request: HTTPRequest) -> HTTPResponse {
        startSession(request, id: nil)
    }

    /// `PUT /v1/sessions/{id}`: a session under an id the client chose (so that a proxy can
    /// route by it); 400 naming `id` when it is not 1…64 of `A–Z a–z 0–9 _ -`, 409 when a
    /// session with that id exists.
    func putSession(_ request: HTTPRequest) -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        guard SessionRegistry.isValidClientID(id) else {
            let shown = id.count > 80 ? String(id.prefix(80)) + "…" : id
            return ProblemDetails.badRequest("the session id must be 1 to 64 characters of A-Z a-z 0-9 _ -, not '\(shown)'",
                                             parameter: "id").response
        }
        if let existing = sessions.session(id) { return sessionExists(id, existing).response }
        return startSession(request, id: id)
    }

    /// 409 for a `PUT` on a taken id, with the existing session's `state` (absent only when
    /// that session ended between the two lookups of a racing `PUT`).
    private func sessionExists(_ id: String, _ existing: LiveSession?) -> ProblemDetails {
        .conflict("a session with id '\(id)' already exists; choose another id, or DELETE it first",
                         state: existing?.stateName(atWall: MonotonicClock.seconds))
    }

    private func startSession(_ request: HTTPRequest, id chosen: String?) -> HTTPResponse {
        let timeline: Timeline, speed: Double
        switch compiledRequest(request, allowZeroSpeed: false, for: .session(backlogFrames: configuration.maxBacklogFrames)) {
        case .success(let compiled): (timeline, speed) = compiled
        case .failure(let problem): return problem.response
        case nil: return .computeOnPool
        }
        // The clock starts on a phase of the pacer's 60 Hz grid (at most a quarter of a tick
        // from now with direct writes, one tick without), so that the frames of sessions
        // created at different times come due in the same pacer wake.
        let wall = Double(StreamPacer.gridTick(atOrAfter: MonotonicClock.now(), phases: configuration.pacerPhases)) / 1e9
        // Given back when the session is freed; a session the registry refuses frees it at once.
        let cost = LiveSegmentBudget.cost(of: timeline)
        guard let reservation = liveSegments.reserve(cost) else {
            return liveSegments.refusal("session", segments: cost).response
        }
        let make = { (id: String) in
            LiveSession(id: id, timeline: timeline, speed: speed, wall: wall, maxBacklogFrames: configuration.maxBacklogFrames,
                        maxBacklogEvents: configuration.maxBacklogEvents, maxRetargets: configuration.maxRetargets,
                        liveSegments: reservation)
        }
        let session: LiveSession
        switch chosen.map({ sessions.create(id: $0, make) }) ?? sessions.create(make).map(SessionRegistry.Creation.created) ?? .full {
        case .created(let created): session = created
        case .exists: return sessionExists(chosen ?? "", chosen.flatMap { sessions.session($0) }).response
        case .full:
            return ProblemDetails.unavailable("too many live sessions (max-sessions \(configuration.maxSessions)); delete one or wait for one to expire").response
        }
        return .json(201, session.stateDocument(atWall: wall), headers: [("Location", "/v1/sessions/\(session.id)")])
    }

    /// A session's state document. On a connection thread only while the session's tracks and
    /// retargeted values pass the inline bound (`LiveSession.fitsInline`): the state of 1,000
    /// tracks retargeted ten times is 237 KB, and 16 clients reading it, gzipped, on the
    /// connection threads held `/healthz` at 58–130 ms p50, 95–149 ms p99; on the pool,
    /// 0.1–0.2 ms p50 and 1.8–3.1 ms p99, with as many reads a second (about 160; release
    /// build, 2 cores).
    func sessionState(_ request: HTTPRequest) -> HTTPResponse {
        guard let session = lookup(request) else { return notFound(request) }
        if let limit = request.inlineSampleLimit, !session.fitsInline(limit: limit) { return .computeOnPool }
        return .json(200, session.stateDocument(atWall: MonotonicClock.seconds))
    }

    func deleteSession(_ request: HTTPRequest) -> HTTPResponse {
        guard let id = request.pathParameters["id"], sessions.delete(id) else { return notFound(request) }
        return HTTPResponse(status: 204, body: [])
    }

    func watchSession(_ request: HTTPRequest) -> HTTPResponse {
        guard let session = lookup(request) else { return notFound(request) }
        if state.isDraining { return ProblemDetails.unavailable("the server is shutting down").response }
        let format = Self.streamFormat(request)
        let watcher = SessionWatcher(session: session, format: format, metrics: metrics)
        guard session.addWatcher(watcher, limit: configuration.maxWatchers) else {
            return ProblemDetails.tooManyRequests("this session already has \(configuration.maxWatchers) watchers (max-watchers)").response
        }
        guard streams.register(watcher, limit: configuration.maxStreams) else {
            session.removeWatcher(watcher)
            return ProblemDetails.unavailable("too many open streams (max-streams \(configuration.maxStreams))").response
        }
        return HTTPResponse(status: 200, headers: Self.streamHeaders(format), stream: watcher)
    }

    func command(_ request: HTTPRequest) -> HTTPResponse {
        guard let session = lookup(request) else { return notFound(request) }
        if let refusal = refuseChange(request, to: session) { return refusal }
        let decoded = Self.decodeBody(request.body) { reader, diagnostics -> (SessionClock.Command, Double?)? in
            let name = reader.string("command", required: true)
            let time = reader.number("time")
            reader.finish()
            guard let name else { return nil }
            guard let command = SessionClock.Command(rawValue: name) else {
                diagnostics.malformed(reader.pointer("command"), "unknown command '\(name)'; expected pause, resume, stop, reverse or seek")
                return nil
            }
            if command == .seek, time == nil, !reader.has("time") {
                diagnostics.malformed(reader.pointer("time"), "is required for seek")
                return nil
            }
            if command != .seek, reader.has("time") {
                diagnostics.malformed(reader.pointer("time"), "applies to seek only")
                return nil
            }
            return (command, time)
        }
        guard case .success(let (command, time)) = decoded else {
            if case .failure(let problem) = decoded { return problem.response }
            return ProblemDetails.badRequest("invalid command").response
        }
        let wall = MonotonicClock.seconds
        do {
            try session.apply(command, time: time, atWall: wall)
        } catch {
            return Self.problem(error, pointer: "/command").response
        }
        return .json(200, session.stateDocument(atWall: wall))
    }

    func retarget(_ request: HTTPRequest) -> HTTPResponse {
        guard let session = lookup(request) else { return notFound(request) }
        if let refusal = refuseChange(request, to: session) { return refusal }
        let decoded = Self.decodeBody(request.body) { reader, diagnostics -> (String, JSON, SpringParameters, String)? in
            let path = reader.string("path", required: true)
            let to = reader.value("to", required: true)
            // The field a spring that never comes to rest is blamed on: its first, or `to`.
            let springField = SpringParameters.fieldNames.first(where: reader.has)
            let spring = springField != nil ? SpringParameters.decode(from: reader, diagnostics) : Timeline.defaultRetargetSpring
            reader.finish()
            guard let path, let to, let spring else { return nil }
            return (path, to, spring, springField ?? "to")
        }
        guard case .success(let (path, to, spring, springField)) = decoded else {
            if case .failure(let problem) = decoded { return problem.response }
            return ProblemDetails.badRequest("invalid retarget").response
        }
        let wall = MonotonicClock.seconds
        do {
            try session.retarget(path: path, to: to, spring: spring, atWall: wall)
        } catch {
            if case .invalid(let message, RetargetError.springField?) = error {
                return Self.problem(.invalid(message, field: springField), pointer: "/path").response
            }
            return Self.problem(error, pointer: "/path").response
        }
        return .json(200, session.stateDocument(atWall: wall))
    }

    /// What a command or retarget on `session` answers before its body is read:
    /// `computeOnPool` on a connection thread when the session's tracks (once more for each
    /// watcher) and retargeted values pass the inline bound (`LiveSession.commandFitsInline`),
    /// 415 unless the body is JSON.
    private func refuseChange(_ request: HTTPRequest, to session: LiveSession) -> HTTPResponse? {
        if let limit = request.inlineSampleLimit, !session.commandFitsInline(limit: limit) { return .computeOnPool }
        return Self.requireJSON(request)?.response
    }

    private func lookup(_ request: HTTPRequest) -> LiveSession? {
        request.pathParameters["id"].flatMap(sessions.session)
    }

    private func notFound(_ request: HTTPRequest) -> HTTPResponse {
        ProblemDetails.sessionNotFound(request.pathParameters["id"] ?? "").response
    }

    /// A refused command or retarget, pointing at the field at fault (`pointer`).
    private static func problem(_ error: LiveSession.CommandError, pointer: String) -> ProblemDetails {
        switch error {
        case .conflict(let conflict, let field):
            var problem = ProblemDetails.conflict(conflict.message, state: conflict.state.rawValue)
            problem.errors = [.init(pointer: field.map { "/" + $0 } ?? pointer, parameter: nil, message: conflict.message)]
            return problem
        case .invalid(let message, let field):
            return .invalidBody(DocumentError([Problem(pointer: field.map { "/" + $0 } ?? pointer, message: message, kind: .invalid)]))
        case .unavailable(let message):
            return .unavailable(message)
        }
    }

    /// Decodes a small JSON body with `ObjectReader`, turning problems into 400/422.
    private static func decodeBody<T>(_ body: [UInt8], _ decode: (ObjectReader, Diagnostics) -> T?) -> Result<T, ProblemDetails> {
        let json: JSON
        do {
            json = try JSONParser.parse(body)
        } catch {
            return .failure(.invalidBody(DocumentError([Problem(pointer: "", message: "malformed JSON at byte \(error.offset): \(error.message)", kind: .malformed)])))
        }
        let diagnostics = Diagnostics()
        guard let reader = ObjectReader.expecting(json, at: "", diagnostics) else {
            return .failure(.invalidBody(DocumentError(diagnostics)))
        }
        let value = decode(reader, diagnostics)
        if !diagnostics.isEmpty {
            return .failure(.invalidBody(DocumentError(diagnostics)))
        }
        guard let value else { return .failure(.badRequest("invalid body")) }
        return .success(value)
    }

    // MARK: - Shared checks

    /// 503 for a request that arrived while draining (one accepted before SIGTERM is still
    /// answered), 415 unless the body is JSON.
    func refuseComputing(_ request: HTTPRequest) -> ProblemDetails? {
        if request.arrivedWhileDraining ?? state.isDraining { return .unavailable("the server is shutting down") }
        return Self.requireJSON(request)
    }

    static func requireJSON(_ request: HTTPRequest) -> ProblemDetails? {
        guard let contentType = request.contentType, isJSON(contentType) else {
            return .unsupportedMediaType(request.contentType)
        }
        return nil
    }

    /// Slowest pace a client may ask for (a second of timeline then takes 11.6 days).
    static let minimumSpeed = 1e-6
    static let maximumSpeed = 1e6

    /// The `speed` query parameter: 0 (unpaced, streams only) or 0.000001 to 1,000,000,
    /// default 1, written as a JSON number (no hex floats, `inf` or `nan`).
    static func speed(_ request: HTTPRequest, allowZero: Bool) -> Result<Double, ProblemDetails> {
        guard let text = request.query["speed"] else { return .success(1) }
        let range = allowZero ? "0 (unpaced) or from 0.000001 to 1000000" : "from 0.000001 to 1000000"
        guard let value = decimalNumber(text),
              (allowZero && value == 0 && writesZero(text)) || (value >= minimumSpeed && value <= maximumSpeed) else {
            return .failure(.badRequest("speed must be a decimal number, \(range), not '\(text)'", parameter: "speed"))
        }
        return .success(value == 0 ? 0 : value)
    }

    /// Whether the digits of `text` before its exponent are all zeros (`0`, `-0.00`, `0e5`):
    /// a number that underflows to 0 (`1e-400`) is not a request for an unpaced stream.
    static func writesZero(_ text: String) -> Bool {
        for byte in text.utf8 {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { break }
            if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(byte) { return false }
        }
        return true
    }

    /// `text` as a number when it is written as JSON writes numbers (RFC 8259 §6), else nil.
    static func decimalNumber(_ text: String) -> Double? {
        var bytes = Array(text.utf8)[...]
        guard !bytes.isEmpty, bytes.count <= 64 else { return nil }
        func digits() -> Int {
            var count = 0
            while let byte = bytes.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                bytes.removeFirst()
                count += 1
            }
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes.removeFirst() }
        let leadingZero = bytes.first == UInt8(ascii: "0")
        let integer = digits()
        guard integer > 0, !(leadingZero && integer > 1) else { return nil }
        if bytes.first == UInt8(ascii: ".") {
            bytes.removeFirst()
            guard digits() > 0 else { return nil }
        }
        if let byte = bytes.first, byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            bytes.removeFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes.removeFirst() }
            guard digits() > 0 else { return nil }
        }
        guard bytes.isEmpty, let value = Double(text), value.isFinite else { return nil }
        return value
    }

    static func streamFormat(_ request: HTTPRequest) -> FrameStreamEncoder.Format {
        accepts(request.accept, "text/event-stream") ? .serverSentEvents : .ndjson
    }

    static func streamHeaders(_ format: FrameStreamEncoder.Format) -> [(String, String)] {
        [("Content-Type", format == .serverSentEvents ? "text/event-stream" : "application/x-ndjson"),
         ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no")]
    }

    /// `application/json` or `application/<something>+json`, parameters (charset) ignored.
    static func isJSON(_ contentType: String) -> Bool {
        if contentType == "application/json" { return true }
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
