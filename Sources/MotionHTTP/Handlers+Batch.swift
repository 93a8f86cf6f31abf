import MotionEngine

/// `POST /v1/timelines/batch` (docs/authoring.md) and conditional answers (docs/authoring.md).
extension Handlers {
    /// What a batch stopped for a client that left returns (never sent: the daemon closes
    /// the connection instead).
    static let stoppedBatch = ProblemDetails.unavailable(Cancellation.message)

    /// `{"documents": [document, …]}` → `{"results": [answer or problem, …]}` in order. Each
    /// document is compiled under the usual per-document limits; together they may hold at
    /// most `max-samples` samples (an additive layer counting as a track), `max-segments`
    /// curve segments and `max-response-bytes` of answer, and there may be at most
    /// `max-batch-documents` of them (422 naming the limit). One bad document is its
    /// own problem object (with its `status`) and does not fail the others. Each answer is
    /// the one `/v1/timelines` gives (with `output.simplify`, the reduced keyframes); the
    /// batch answers the `json` format only, and a document asking for another is its own
    /// 422 at `/output/format`.
    func batch(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refuseComputing(request) { return refusal.response }
        let json: JSON
        do {
            json = try DocumentDecoder.parse(request.body)
        } catch {
            return ProblemDetails.from(error).response
        }
        let revalidation = revalidate(request, json, kind: "batch")
        if let answer = revalidation.notModified { return answer }
        let diagnostics = Diagnostics()
        guard let reader = ObjectReader.expecting(json, at: "", diagnostics) else {
            return ProblemDetails.from(DocumentError(diagnostics)).response
        }
        let documents = reader.array("documents", required: true)
        reader.finish()
        if let documents, documents.isEmpty {
            diagnostics.invalid("/documents", "must hold at least one document")
        }
        if let documents, documents.count > configuration.maxBatchDocuments {
            diagnostics.invalid("/documents", "holds \(documents.count) documents, over the limit of \(configuration.maxBatchDocuments) (max-batch-documents)")
        }
        guard diagnostics.isEmpty, let documents else {
            return ProblemDetails.from(DocumentError(diagnostics)).response
        }

        let limits = configuration.limits
        var results: [[UInt8]] = []
        results.reserveCapacity(documents.count)
        var samples = 0
        var segments = 0
        // Keyframe reduction (`simplify`) spends at most one answer's evaluations in all.
        var evaluations = TimelineExport.maxTotalEvaluations
        var bytes = 0.0
        for (index, document) in documents.enumerated() {
            // Stopped for a client that left: the rest is not decoded, nor the tag kept.
            if Cancellation.isRequested { return Self.stoppedBatch.response }
            do throws(DocumentError) {
                let decoded = try DocumentDecoder(limits: limits).decode(document)
                if decoded.output.format != .json {
                    throw DocumentError([Problem(pointer: "/output/format", message: "a batch answers the json format only; POST this document to /v1/timelines for '\(decoded.output.format.rawValue)'", kind: .invalid)])
                }
                let timeline = try compiler.compile(decoded)
                let (count, overflow) = timeline.frameCount.multipliedReportingOverflow(by: max(1, timeline.layers))
                samples = overflow ? Int.max : samples.addingReportingOverflow(count).overflow ? Int.max : samples + count
                if samples > limits.maxSamples {
                    return ProblemDetails.from(DocumentError([Problem(pointer: JSONPointer.appending("/documents", index),
                        message: "documents 0…\(index) hold \(samples == Int.max ? "too many" : String(samples)) samples together, over the limit of \(limits.maxSamples) for a batch (max-samples)",
                        kind: .invalid)])).response
                }
                // The compiler's work, summed as the samples are: each document may reach
                // max-segments alone, so a batch stops within twice that (100 documents of
                // spring keyframes at the limit were 100 × 0.9 s of one pool thread).
                segments = segments.addingReportingOverflow(timeline.segments).overflow ? Int.max : segments + timeline.segments
                if segments > limits.maxSegments {
                    return ProblemDetails.from(DocumentError([Problem(pointer: JSONPointer.appending("/documents", index),
                        message: "documents 0…\(index) compile \(segments == Int.max ? "too many" : String(segments)) curve segments together, over the limit of \(limits.maxSegments) for a batch (max-segments)",
                        kind: .invalid)])).response
                }
                bytes += OutputSize.estimate(timeline, for: .response, limit: limits.maxResponseBytes) + 1
                if bytes > Double(limits.maxResponseBytes) {
                    return ProblemDetails.from(DocumentError([Problem(pointer: JSONPointer.appending("/documents", index),
                        message: "the answers of documents 0…\(index) would be up to about \(format(bytes.rounded(.up))) bytes together, over the limit of \(limits.maxResponseBytes) bytes (max-response-bytes)",
                        kind: .invalid)])).response
                }
                // As /v1/timelines encodes it: with `simplify`, the reduction (whose own limits
                // make a 422 for this document alone).
                if let simplify = timeline.options.simplify, timeline.options.layout == .tracks {
                    let reduced = try TimelineExport.reduce(timeline, tolerance: simplify.tolerance, interpolation: simplify.interpolation,
                                                            budget: &evaluations)
                    results.append(TimelineEncoder.encode(timeline, reduced: reduced))
                } else {
                    results.append(try TimelineExport.encode(timeline).body)
                }
            } catch {
                let problem = ProblemDetails.from(error).response.bodyBytes
                bytes += Double(problem.count + 1)
                results.append(problem)
            }
        }
        if Cancellation.current?.stoppedWork == true { return Self.stoppedBatch.response }
        let digest = revalidation.tag ?? RequestTag.digest(for: json, kind: "batch")
        validatedTags.insert(digest)
        let tag = digest.quotedHex
        if let answer = Self.notModified(request, tag: tag) { return answer }
        var body: [UInt8] = []
        body.reserveCapacity(min(Int(bytes), 1 << 24) + 16)
        body.append(contentsOf: Array(#"{"results":["#.utf8))
        for (index, result) in results.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: result)
        }
        body.append(contentsOf: Array("]}".utf8))
        return .json(200, body, headers: [("ETag", tag)])
    }

    /// Before computing a request that revalidates (`If-None-Match`): its body's tag, and the
    /// 304 when that tag is held (`ValidatedTags`). Both nil for a request that does not
    /// revalidate, whose tag is worked out only once it is computed (not for a document
    /// refused, nor twice for one a connection thread hands to the compute pool).
    func revalidate(_ request: HTTPRequest, _ json: JSON, kind: String) -> (tag: FNV1a128?, notModified: HTTPResponse?) {
        guard request.ifNoneMatch != nil else { return (nil, nil) }
        let tag = RequestTag.digest(for: json, kind: kind)
        return (tag, validatedTags.contains(tag) ? Self.notModified(request, tag: tag.quotedHex) : nil)
    }

    /// A 304 when `If-None-Match` matches. It carries the `ETag` the 200 would have carried
    /// (RFC 9110 §15.4.5): the compressed form of the tag when the client listed that form
    /// and would get that coding again (the same document compresses the same), else the plain one.
    static func notModified(_ request: HTTPRequest, tag: String) -> HTTPResponse? {
        guard let field = request.ifNoneMatch, let match = RequestTag.match(ifNoneMatch: field, tag: tag) else { return nil }
        var sent = tag
        if let coding = match.coding, ContentCoding.negotiate(request.acceptEncoding)?.rawValue == coding {
            sent = String(tag.dropLast()) + "-\(coding)\""
        }
        return HTTPResponse(status: 304, headers: [("ETag", sent)], body: [])
    }
}
