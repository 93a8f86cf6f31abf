import ArgumentParser
import Foundation
import Logging
import MotionEngine
import CMicroHTTPD

/// `motion-server`: parses flags (falling back to `MOTION_*` environment variables) and runs
/// the service until SIGTERM or SIGINT.
struct ServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "motion-server",
        abstract: "Animation timeline service: computes keyframes on a virtual clock and streams live frames.",
        discussion: "Every option can also be set with the environment variable shown in its help (flags win).",
        version: MotionServerVersion.current,
        subcommands: [RenderCommand.self, SpringsCommand.self]
    )

    @Option(help: "Address to bind (env MOTION_HOST).")
    var host: String?
    @Option(help: "TCP port; 0 picks a free one (env MOTION_PORT).")
    var port: UInt16?
    @Option(help: "Worker threads (env MOTION_THREADS; default: the CPUs the process may run on, by its affinity mask and cgroup quota).")
    var threads: Int?
    @Option(help: "Largest request body in bytes (env MOTION_MAX_BODY_BYTES; default 1048576).")
    var maxBodyBytes: Int?
    @Option(help: "Largest frames × tracks in one response or stream (env MOTION_MAX_SAMPLES; default 2000000).")
    var maxSamples: Int?
    @Option(help: "Largest fps, at most 1000 (env MOTION_MAX_FPS; default 1000).")
    var maxFps: Double?
    @Option(help: "Deepest nesting of groups and sequences (env MOTION_MAX_DEPTH; default 64).")
    var maxDepth: Int?
    @Option(help: "Most events in one response or stream (env MOTION_MAX_EVENTS; default 100000).")
    var maxEvents: Int?
    @Option(help: "Most property entries in one document (env MOTION_MAX_PROPERTIES; default 10000).")
    var maxProperties: Int?
    @Option(help: "Most curve segments compiled for one document: in every play, each element counts its keyframe segments (one without keyframes; a spring's 10 each; a physics body one more per bounce; a start read from a track with additive layers (no 'from') one more per layer on it; the document's paths 4 per drawn segment) (env MOTION_MAX_SEGMENTS; default 1000000).")
    var maxSegments: Int?
    @Option(help: "Largest answer in bytes, estimated before encoding: a whole timeline, one stream frame with its events, one session watcher read (env MOTION_MAX_RESPONSE_BYTES; default 67108864).")
    var maxResponseBytes: Int?
    @Option(help: "Documents in one /v1/timelines/batch request; their samples together are bounded by --max-samples, their curve segments by --max-segments and their answer by --max-response-bytes (env MOTION_MAX_BATCH_DOCUMENTS; default 100).")
    var maxBatchDocuments: Int?
    @Option(help: "Simultaneous streams (env MOTION_MAX_STREAMS; default 10000).")
    var maxStreams: Int?
    @Option(help: "Live sessions at once (env MOTION_MAX_SESSIONS; default 1000).")
    var maxSessions: Int?
    @Option(help: "Curve segments (as --max-segments counts them) held by open streams and live sessions together, their targets and events beyond 4 KB counting one for every 95 bytes, a retarget adding 10 for each track it redirects, a watched session's encoded events one for every 95 bytes; a stream, session or retarget that would pass it is refused with 503 (env MOTION_MAX_LIVE_SEGMENTS; default 10000000).")
    var maxLiveSegments: Int?
    @Option(help: "Watchers of one session, 1…100000 (env MOTION_MAX_WATCHERS; default 100).")
    var maxWatchers: Int?
    @Option(help: "Seconds a session may go unwatched before it is removed, positive and finite (env MOTION_SESSION_TTL; default 300).")
    var sessionTtl: Double?
    @Option(help: "Most frames sent at once to a session watcher that fell behind, 1…100000 (env MOTION_MAX_BACKLOG_FRAMES; default 120).")
    var maxBacklogFrames: Int?
    @Option(help: "Most command echoes (session events) waiting for one watcher; a watcher further behind is ended with \"interrupted\":\"backlog\"; 1…100000 (env MOTION_MAX_BACKLOG_EVENTS; default 1024).")
    var maxBacklogEvents: Int?
    @Option(help: "Most values one session's retargets may set, each number of a 'to' counting one, 0…1000000; 409 beyond (env MOTION_MAX_RETARGETS; default 10000).")
    var maxRetargets: Int?
    @Option(help: "Simultaneous connections (env MOTION_MAX_CONNECTIONS; default 10000).")
    var maxConnections: UInt32?
    @Option(help: "Idle seconds before a connection is closed (env MOTION_CONNECTION_TIMEOUT; default 30).")
    var connectionTimeout: UInt32?
    @Option(help: "Idle seconds before TCP keepalive probes a connection, 0 for none; a vanished client is found 30 s later (env MOTION_TCP_KEEPALIVE; default 60).")
    var tcpKeepalive: UInt32?
    @Option(help: "Simultaneous connections from one client address, 0 for no limit (env MOTION_MAX_CONNECTIONS_PER_ADDRESS; default 1000).")
    var maxConnectionsPerAddress: UInt32?
    @Option(help: "Seconds a request head may take from its first byte, 0 to turn off (env MOTION_HEADER_TIMEOUT; default 10).")
    var headerTimeout: Double?
    @Option(help: "Slowest average request body rate in bytes/s after the header timeout (env MOTION_MIN_BODY_RATE; default 1024).")
    var minBodyRate: Int?
    @Option(help: "Threads computing POST answers and the states of large sessions (env MOTION_COMPUTE_THREADS; default: the CPUs the process may run on).")
    var computeThreads: Int?
    @Option(help: "Requests (POSTs, and reads of large sessions) that may wait for a compute thread (env MOTION_MAX_QUEUED_COMPUTATIONS; default 64).")
    var maxQueuedComputations: Int?
    @Option(help: "Largest POST/PUT body computed at once on the connection thread rather than on a compute thread, 0 for never (env MOTION_INLINE_MAX_BODY_BYTES; default 1024).")
    var inlineMaxBodyBytes: Int?
    @Option(help: "Largest frames × tracks of a /v1/timelines answer, a stream or a session computed on the connection thread, and most tracks plus retargeted values (and names, 24 bytes a sample) of a session whose commands and state reads are; a session listing counts 16 a session (env MOTION_INLINE_MAX_SAMPLES; default 2048).")
    var inlineMaxSamples: Int?
    @Option(help: "Per-connection memory for the request head and buffers, bytes, 4096…1048576; a larger head is refused with 431 (env MOTION_CONNECTION_MEMORY; default 16384).")
    var connectionMemory: Int?
    @Option(help: "Bytes of answers held for clients that have not read them, and of stream writes over 64 KiB not yet taken (env MOTION_MAX_HELD_RESPONSE_BYTES; default 268435456).")
    var maxHeldResponseBytes: Int?
    @Option(help: "Bytes of request bodies being received, all connections together; a body that would pass it is refused with 503 and its connection closed (env MOTION_MAX_HELD_REQUEST_BYTES; default 268435456).")
    var maxHeldRequestBytes: Int?
    @Option(help: "How paced stream frames reach the socket: direct (written by the pacer while the connection is suspended) or libmicrohttpd (each frame resumes the connection) (env MOTION_STREAM_WRITES; default direct).")
    var streamWrites: String?
    @Option(help: "Seconds SIGTERM waits for open streams (env MOTION_DRAIN_TIMEOUT; default 10).")
    var drainTimeout: Double?
    @Option(help: "Browser origins allowed to call the service from another origin: * or origins separated by commas, e.g. https://app.example (env MOTION_CORS_ORIGIN; default none).")
    var corsOrigin: String?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (env MOTION_LOG_LEVEL; default info).")
    var logLevel: String?
    @Option(help: "Log format: json (one JSON object a line) or text (env MOTION_LOG_FORMAT; default text).")
    var logFormat: String?
    @Option(help: "Append logs to this file instead of standard error (env MOTION_LOG_FILE).")
    var logFile: String?
    @Option(help: "This replica's name, sent as X-Instance-Id on every answer and logged: 1…64 of A-Z a-z 0-9 . _ - (env MOTION_INSTANCE_ID; default none).")
    var instanceId: String?

    func validate() throws {
        let config = try resolve()
        if config.threads < 1 || config.threads > 1024 { throw ValidationError("--threads must be 1…1024") }
        if config.maxBodyBytes < 1 { throw ValidationError("--max-body-bytes must be positive") }
        if config.limits.maxSamples < 1 { throw ValidationError("--max-samples must be positive") }
        if !(1...1000).contains(config.limits.maxFPS) { throw ValidationError("--max-fps must be 1…1000") }
        if config.limits.maxDepth < 1 { throw ValidationError("--max-depth must be positive") }
        if config.limits.maxEvents < 1 { throw ValidationError("--max-events must be positive") }
        if config.limits.maxProperties < 1 { throw ValidationError("--max-properties must be positive") }
        if config.limits.maxSegments < 1 { throw ValidationError("--max-segments must be positive") }
        if config.maxBatchDocuments < 1 || config.maxBatchDocuments > 100_000 { throw ValidationError("--max-batch-documents must be from 1 to 100000") }
        if config.limits.maxResponseBytes < 1 { throw ValidationError("--max-response-bytes must be positive") }
        if config.maxStreams < 0 { throw ValidationError("--max-streams must not be negative") }
        if config.maxSessions < 0 { throw ValidationError("--max-sessions must not be negative") }
        if config.maxLiveSegments < 1 { throw ValidationError("--max-live-segments must be positive") }
        // Finite: `inf` would keep an unwatched session for ever, and NaN compares false.
        if !(config.sessionTTL > 0) || !config.sessionTTL.isFinite {
            throw ValidationError("--session-ttl must be a positive, finite number of seconds")
        }
        // Upper bounds for the per-session limits, so that one of them set to "unlimited"
        // is a start-up error rather than every session refused as too large (the backlog
        // counts in a session's answer size) or a stalled watcher holding gigabytes.
        if !(1...100_000).contains(config.maxWatchers) { throw ValidationError("--max-watchers must be 1…100000") }
        if !(1...100_000).contains(config.maxBacklogFrames) { throw ValidationError("--max-backlog-frames must be 1…100000") }
        if !(1...100_000).contains(config.maxBacklogEvents) { throw ValidationError("--max-backlog-events must be 1…100000") }
        if !(0...1_000_000).contains(config.maxRetargets) { throw ValidationError("--max-retargets must be 0…1000000") }
        if !(0...3600).contains(config.headerTimeout) { throw ValidationError("--header-timeout must be 0…3600") }
        if !ServerConfiguration.tcpKeepaliveRange.contains(config.tcpKeepalive) { throw ValidationError("--tcp-keepalive must be 0…32767") }
        if config.minBodyRate < 0 { throw ValidationError("--min-body-rate must not be negative") }
        if !(1...1024).contains(config.computeThreads) { throw ValidationError("--compute-threads must be 1…1024") }
        if config.maxQueuedComputations < 0 { throw ValidationError("--max-queued-computations must not be negative") }
        if !(0...(1 << 20)).contains(config.inlineMaxBodyBytes) { throw ValidationError("--inline-max-body-bytes must be 0…1048576") }
        if !(0...1_000_000).contains(config.inlineMaxSamples) { throw ValidationError("--inline-max-samples must be 0…1000000") }
        if !ServerConfiguration.connectionMemoryRange.contains(config.connectionMemoryBytes) {
            throw ValidationError("--connection-memory must be 4096…1048576")
        }
        if config.maxHeldResponseBytes < 0 { throw ValidationError("--max-held-response-bytes must not be negative") }
        if config.maxHeldRequestBytes < 0 { throw ValidationError("--max-held-request-bytes must not be negative") }
        // NaN compared false here and then made SIGTERM wait not at all; `inf` would wait for
        // ever on a stream that never ends.
        if !(config.drainTimeout >= 0) || !config.drainTimeout.isFinite {
            throw ValidationError("--drain-timeout must be a finite number of seconds, 0 or more")
        }
        if let cors = config.cors, let origin = cors.invalidOrigin {
            throw ValidationError("--cors-origin: '\(origin)' is not * or an origin such as https://app.example")
        }
        if Logger.Level(rawValue: resolvedLogLevel()) == nil { throw ValidationError("unknown --log-level '\(resolvedLogLevel())'") }
        if LineLogHandler.Format(rawValue: resolvedLogFormat()) == nil {
            throw ValidationError("unknown --log-format '\(resolvedLogFormat())'; expected json or text")
        }
        if let id = config.instanceID, !ServerConfiguration.isValidInstanceID(id) {
            throw ValidationError("--instance-id must be 1…64 characters of A-Z a-z 0-9 . _ -, not '\(id)'")
        }
    }

    func run() throws {
        let config = try resolve()
        let level = Logger.Level(rawValue: resolvedLogLevel()) ?? .info
        let format = LineLogHandler.Format(rawValue: resolvedLogFormat()) ?? .text
        let output: LogOutput
        do {
            output = try resolvedLogFile().map(LogOutput.appending(to:)) ?? .standardError
        } catch {
            throw ValidationError("\(error)")
        }
        LoggingSystem.bootstrap { label in
            LineLogHandler(label: label, format: format, output: output, level: level)
        }
        var logger = Logger(label: "motion-server")
        if let id = config.instanceID { logger[metadataKey: "instance"] = .string(id) }
        let service = MotionService(configuration: config, logger: logger)
        do {
            try service.run()
        } catch {
            FileHandle.standardError.write(Data("motion-server: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    /// Flags first, then environment, then defaults.
    func resolve() throws -> ServerConfiguration {
        let env = ProcessInfo.processInfo.environment
        func value<T: LosslessStringConvertible>(_ flag: T?, _ name: String) throws -> T? {
            if let flag { return flag }
            guard let text = env[name], !text.isEmpty else { return nil }
            guard let parsed = T(text) else { throw ValidationError("\(name)='\(text)' is not valid") }
            return parsed
        }
        var config = ServerConfiguration()
        if let v: String = try value(host, "MOTION_HOST") { config.host = v }
        if let v: UInt16 = try value(port, "MOTION_PORT") { config.port = v }
        if let v: Int = try value(threads, "MOTION_THREADS") { config.threads = v }
        if let v: Int = try value(maxBodyBytes, "MOTION_MAX_BODY_BYTES") { config.maxBodyBytes = v }
        if let v: Int = try value(maxSamples, "MOTION_MAX_SAMPLES") { config.limits.maxSamples = v }
        if let v: Double = try value(maxFps, "MOTION_MAX_FPS") { config.limits.maxFPS = v }
        if let v: Int = try value(maxDepth, "MOTION_MAX_DEPTH") { config.limits.maxDepth = v }
        if let v: Int = try value(maxEvents, "MOTION_MAX_EVENTS") { config.limits.maxEvents = v }
        if let v: Int = try value(maxProperties, "MOTION_MAX_PROPERTIES") { config.limits.maxProperties = v }
        if let v: Int = try value(maxSegments, "MOTION_MAX_SEGMENTS") { config.limits.maxSegments = v }
        if let v: Int = try value(maxResponseBytes, "MOTION_MAX_RESPONSE_BYTES") { config.limits.maxResponseBytes = v }
        if let v: Int = try value(maxBatchDocuments, "MOTION_MAX_BATCH_DOCUMENTS") { config.maxBatchDocuments = v }
        if let v: Int = try value(maxStreams, "MOTION_MAX_STREAMS") { config.maxStreams = v }
        if let v: Int = try value(maxSessions, "MOTION_MAX_SESSIONS") { config.maxSessions = v }
        if let v: Int = try value(maxLiveSegments, "MOTION_MAX_LIVE_SEGMENTS") { config.maxLiveSegments = v }
        if let v: Int = try value(maxWatchers, "MOTION_MAX_WATCHERS") { config.maxWatchers = v }
        if let v: Double = try value(sessionTtl, "MOTION_SESSION_TTL") { config.sessionTTL = v }
        if let v: Int = try value(maxBacklogFrames, "MOTION_MAX_BACKLOG_FRAMES") { config.maxBacklogFrames = v }
        if let v: Int = try value(maxBacklogEvents, "MOTION_MAX_BACKLOG_EVENTS") { config.maxBacklogEvents = v }
        if let v: Int = try value(maxRetargets, "MOTION_MAX_RETARGETS") { config.maxRetargets = v }
        if let v: UInt32 = try value(maxConnections, "MOTION_MAX_CONNECTIONS") { config.maxConnections = v }
        if let v: UInt32 = try value(connectionTimeout, "MOTION_CONNECTION_TIMEOUT") { config.connectionTimeout = v }
        if let v: UInt32 = try value(tcpKeepalive, "MOTION_TCP_KEEPALIVE") { config.tcpKeepalive = v }
        if let v: Double = try value(drainTimeout, "MOTION_DRAIN_TIMEOUT") { config.drainTimeout = v }
        if let v: UInt32 = try value(maxConnectionsPerAddress, "MOTION_MAX_CONNECTIONS_PER_ADDRESS") { config.maxConnectionsPerAddress = v }
        if let v: Double = try value(headerTimeout, "MOTION_HEADER_TIMEOUT") { config.headerTimeout = v }
        if let v: Int = try value(minBodyRate, "MOTION_MIN_BODY_RATE") { config.minBodyRate = v }
        if let v: Int = try value(computeThreads, "MOTION_COMPUTE_THREADS") { config.computeThreads = v }
        if let v: Int = try value(maxQueuedComputations, "MOTION_MAX_QUEUED_COMPUTATIONS") { config.maxQueuedComputations = v }
        if let v: Int = try value(inlineMaxBodyBytes, "MOTION_INLINE_MAX_BODY_BYTES") { config.inlineMaxBodyBytes = v }
        if let v: Int = try value(inlineMaxSamples, "MOTION_INLINE_MAX_SAMPLES") { config.inlineMaxSamples = v }
        if let v: Int = try value(connectionMemory, "MOTION_CONNECTION_MEMORY") { config.connectionMemoryBytes = v }
        if let v: Int = try value(maxHeldResponseBytes, "MOTION_MAX_HELD_RESPONSE_BYTES") { config.maxHeldResponseBytes = v }
        if let v: Int = try value(maxHeldRequestBytes, "MOTION_MAX_HELD_REQUEST_BYTES") { config.maxHeldRequestBytes = v }
        if let v: String = try value(streamWrites, "MOTION_STREAM_WRITES") {
            switch v {
            case "direct": config.streamDirectWrites = true
            case "libmicrohttpd": config.streamDirectWrites = false
            default: throw ValidationError("--stream-writes must be direct or libmicrohttpd")
            }
        }
        if let v: String = try value(instanceId, "MOTION_INSTANCE_ID") { config.instanceID = v }
        if let v: String = try value(corsOrigin, "MOTION_CORS_ORIGIN") { config.cors = CORSPolicy(v) }
        return config
    }

    private func resolvedLogLevel() -> String {
        logLevel ?? ProcessInfo.processInfo.environment["MOTION_LOG_LEVEL"] ?? "info"
    }

    private func resolvedLogFormat() -> String {
        logFormat ?? ProcessInfo.processInfo.environment["MOTION_LOG_FORMAT"].flatMap { $0.isEmpty ? nil : $0 } ?? "text"
    }

    /// nil: standard error (also for an empty value or `-`).
    private func resolvedLogFile() -> String? {
        let path = logFile ?? ProcessInfo.processInfo.environment["MOTION_LOG_FILE"] ?? ""
        return path.isEmpty || path == "-" ? nil : path
    }
}

/// The entry point of `motion-server`: parses the command line and runs until a signal.
///
/// A bad configuration (an unknown value, a file that cannot be opened, a port in use) is
/// one line on standard error, `motion-server: …`, and exit status 64 (usage) or 1; `--help`
/// prints the help.
public func runMotionServer() {
    // Before any thread starts (`cmhd_disable_fastbins`); an operator's own setting stands.
    if !(ProcessInfo.processInfo.environment["GLIBC_TUNABLES"] ?? "").contains("mxfast") {
        _ = cmhd_disable_fastbins()
    }
    do {
        var command = try ServerCommand.parseAsRoot()
        try command.run()
    } catch {
        let code = ServerCommand.exitCode(for: error)
        if code == .success {
            print(ServerCommand.fullMessage(for: error))
        } else {
            let message = ServerCommand.message(for: error).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            if !message.isEmpty {
                FileHandle.standardError.write(Data("motion-server: \(message.replacingOccurrences(of: "Error: ", with: ""))\n".utf8))
            }
        }
        exit(code.rawValue)
    }
}
