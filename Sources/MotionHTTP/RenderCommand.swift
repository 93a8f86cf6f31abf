import ArgumentParser
import Foundation
import MotionEngine

/// `motion-server render [FILE|-] [--format F] [--output FILE]`: what `POST /v1/timelines`
/// answers for the document, without a server — the same bytes, computed by the same handler
/// through the same router. Problems go to stderr, one line each with its JSON pointer, and
/// the exit status is 1.
struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Print what POST /v1/timelines answers for a document, without a server.",
        discussion: """
        Reads the timeline document from FILE (or standard input with - or no FILE) and writes \
        exactly the body POST /v1/timelines would answer to standard output (or --output). \
        Problems are printed to standard error with their JSON pointers, and the exit status is 1. \
        The engine limits are the server's defaults.
        """
    )

    @Argument(help: "The document (JSON); - or nothing for standard input.")
    var file: String?

    @Option(help: "Output format, set as the document's output.format (json is the default; others as the server supports).")
    var format: String?

    @Option(name: .shortAndLong, help: "Write the answer to this file instead of standard output.")
    var output: String?

    /// Largest document read, as the server's default body limit.
    static let maxDocumentBytes = ServerConfiguration().maxBodyBytes

    func run() throws {
        let document: [UInt8]
        do {
            document = try Self.read(file)
        } catch let error as RenderError {
            FileHandle.standardError.write(Data("motion-server render: \(error.message)\n".utf8))
            throw ExitCode.failure
        }
        let (status, body) = Self.render(document, format: format)
        guard status < 400 else {
            FileHandle.standardError.write(Data(Self.describeProblem(body, source: file ?? "-").utf8))
            throw ExitCode.failure
        }
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: Data(body)) else {
                FileHandle.standardError.write(Data("motion-server render: cannot write \(output)\n".utf8))
                throw ExitCode.failure
            }
        } else {
            FileHandle.standardOutput.write(Data(body))
        }
    }

    struct RenderError: Error { var message: String }

    static func read(_ file: String?) throws -> [UInt8] {
        let handle: FileHandle
        if let file, file != "-" {
            guard let opened = FileHandle(forReadingAtPath: file) else { throw RenderError(message: "cannot read \(file)") }
            handle = opened
        } else {
            handle = FileHandle.standardInput
        }
        defer { if file != nil && file != "-" { try? handle.close() } }
        var bytes: [UInt8] = []
        while true {
            let chunk = handle.readData(ofLength: 64 * 1024)
            if chunk.isEmpty { break }
            bytes.append(contentsOf: chunk)
            if bytes.count > maxDocumentBytes {
                throw RenderError(message: "the document is larger than \(maxDocumentBytes) bytes (the server's max-body-bytes)")
            }
        }
        return bytes
    }

    /// The status and body `POST /v1/timelines` answers for `document`, with `format` (when
    /// given) set as `output.format`.
    static func render(_ document: [UInt8], format: String?) -> (Int, [UInt8]) {
        let configuration = ServerConfiguration()
        let metrics = ServiceMetrics()
        let handlers = Handlers(configuration: configuration, state: ServiceState(), streams: StreamRegistry { _ in },
                                sessions: SessionRegistry(maxSessions: 0, idleTTL: 1, metrics: metrics), metrics: metrics)
        var body = document
        if let format { body = withFormat(document, format) }
        let request = HTTPRequest(method: "POST", path: "/v1/timelines", query: [:], contentType: "application/json",
                                  accept: nil, body: body)
        let (response, _) = handlers.router().handle(request)
        return (response.status, response.bodyBytes)
    }

    /// The document with `output.format` set; unchanged when it is not an object whose
    /// `output` (if any) is an object, so that the server's own problem is reported.
    static func withFormat(_ document: [UInt8], _ format: String) -> [UInt8] {
        guard case .object(var root)? = try? JSONParser.parse(document) else { return document }
        var output = JSONObject()
        if let existing = root["output"] {
            guard case .object(let object) = existing else { return document }
            output = object
        }
        output["format"] = .string(format)
        root["output"] = .object(output)
        var w = JSONWriter(capacity: document.count + 32)
        w.value(.object(root))
        return w.bytes
    }

    /// A problem+json body as lines a person reads: the title and detail, then each problem
    /// with its pointer.
    static func describeProblem(_ body: [UInt8], source: String, command: String = "render") -> String {
        guard case .object(let problem)? = try? JSONParser.parse(body) else {
            return "motion-server \(command): \(String(decoding: body, as: UTF8.self))\n"
        }
        func text(_ key: String, in object: JSONObject) -> String? {
            if case .string(let s)? = object[key] { return s }
            return nil
        }
        var status = ""
        if case .number(let n)? = problem["status"] { status = " (\(Int(n)))" }
        var lines = ["motion-server \(command): \(source): \(text("title", in: problem) ?? "error")\(status): \(text("detail", in: problem) ?? "")"]
        if case .array(let errors)? = problem["errors"] {
            for case .object(let entry) in errors {
                let place = text("pointer", in: entry).map { $0.isEmpty ? "(document)" : $0 } ?? text("parameter", in: entry) ?? ""
                lines.append("  \(place): \(text("message", in: entry) ?? "")")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
