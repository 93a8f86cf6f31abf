import ArgumentParser
import Foundation
import MotionEngine

/// `motion-server springs [FILE]`: answers one `POST /v1/springs` body read from FILE (or
/// stdin when FILE is `-` or absent) and prints exactly the body the endpoint would answer,
/// followed by a newline: the spring on success (exit 0), the problem+json otherwise (exit 1).
/// The body is limited to 1 MiB, as the endpoint's default `--max-body-bytes`.
struct SpringsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "springs",
        abstract: "Translate one spring (the body of POST /v1/springs) and print the endpoint's answer.",
        discussion: "Reads the JSON body from FILE, or from stdin when FILE is '-' or absent. Prints the answer body, or the problem body and exits 1."
    )

    @Argument(help: "The JSON body (a file path, or '-' for stdin).")
    var file: String = "-"

    static let maxBodyBytes = ServerConfiguration().maxBodyBytes

    func run() throws {
        let handle: FileHandle
        if file == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: file) else {
                FileHandle.standardError.write(Data("motion-server springs: cannot read '\(file)'\n".utf8))
                throw ExitCode.failure
            }
            handle = opened
        }
        // Read at most one byte more than the limit.
        var body: [UInt8] = []
        while body.count <= Self.maxBodyBytes {
            guard let chunk = try handle.read(upToCount: Self.maxBodyBytes + 1 - body.count), !chunk.isEmpty else { break }
            body.append(contentsOf: chunk)
        }
        let (status, answer) = body.count > Self.maxBodyBytes
            ? (413, ProblemDetails.payloadTooLarge(limit: Self.maxBodyBytes).response.bodyBytes)
            : Handlers.springAnswer(body)
        guard status == 200 else {
            // As `render` does: the problem readably on stderr, with its pointers.
            FileHandle.standardError.write(Data(RenderCommand.describeProblem(answer, source: file, command: "springs").utf8))
            throw ExitCode.failure
        }
        // The endpoint's bytes: JSON answers end with a newline.
        FileHandle.standardOutput.write(Data(answer + [UInt8(ascii: "\n")]))
    }
}
