import Foundation
import Glibc
import Logging
import MotionEngine

/// Where log lines go: a file descriptor (stderr, or a file opened with `--log-file`), one
/// `write` per line under a lock, so lines from different threads never interleave.
final class LogOutput: @unchecked Sendable {
    private let lock = NSLock()
    private let fd: Int32
    private let capture: (@Sendable ([UInt8]) -> Void)?

    /// Standard error.
    static let standardError = LogOutput(fd: 2)

    init(fd: Int32) {
        self.fd = fd
        capture = nil
    }

    /// Lines handed to `capture` instead of a descriptor (tests).
    init(capture: @escaping @Sendable ([UInt8]) -> Void) {
        fd = -1
        self.capture = capture
    }

    struct OpenError: Error, CustomStringConvertible {
        var description: String
    }

    /// Opens `path` for appending (created 0644 when missing).
    static func appending(to path: String) throws -> LogOutput {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw OpenError(description: "cannot open log file '\(path)': \(String(cString: strerror(errno)))")
        }
        return LogOutput(fd: fd)
    }

    func write(_ line: [UInt8]) {
        if let capture { capture(line); return }
        lock.withLock {
            line.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if n < 0, errno == EINTR { continue }
                    if n <= 0 { return }  // a log that cannot be written is not worth stopping for
                    offset += n
                }
            }
        }
    }
}

/// A swift-log handler writing one line per message: JSON objects (`--log-format json`) for a
/// log pipeline, or `key=value` text for people.
///
/// JSON: `{"time":"2026-11-25T16:00:00.123Z","level":"info","logger":"motion-server",
/// "message":"request","requestId":"…","status":200,…}` — metadata as top-level fields after
/// the four fixed ones (a metadata key that would collide with one of them is written as
/// `metadata.KEY`); integers and doubles given as `.stringConvertible` are JSON numbers,
/// everything else a string (arrays and dictionaries as JSON arrays and objects).
struct LineLogHandler: LogHandler {
    enum Format: String, Sendable, CaseIterable {
        case json, text
    }

    let label: String
    let format: Format
    let output: LogOutput
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String, format: Format, output: LogOutput, level: Logger.Level = .info) {
        self.label = label
        self.format = format
        self.output = output
        self.logLevel = level
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let level = event.level, message = event.message
        var merged = metadata
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        output.write(format == .json
                     ? Self.jsonLine(time: Self.timestamp(), level: level, label: label, message: message.description, metadata: merged)
                     : Self.textLine(time: Self.timestamp(), level: level, message: message.description, metadata: merged))
    }

    static let reservedKeys: Set<String> = ["time", "level", "logger", "message"]

    static func jsonLine(time: String, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.raw("{\"time\":")
        w.string(time)
        w.raw(",\"level\":")
        w.string(level.rawValue)
        w.raw(",\"logger\":")
        w.string(label)
        w.raw(",\"message\":")
        w.string(message)
        // Sorted, so that a line's layout does not depend on the dictionary's order.
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            w.byte(UInt8(ascii: ","))
            w.key(reservedKeys.contains(key) ? "metadata.\(key)" : key)
            write(value, to: &w)
        }
        w.raw("}\n")
        return w.bytes
    }

    private static func write(_ value: Logger.Metadata.Value, to w: inout JSONWriter) {
        switch value {
        case .string(let text):
            w.string(text)
        case .stringConvertible(let item):
            if let number = item as? Int {
                w.integer(number)
            } else if let number = item as? Double, number.isFinite {
                w.number(number)
            } else if let flag = item as? Bool {
                w.bool(flag)
            } else {
                w.string(item.description)
            }
        case .array(let items):
            w.byte(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { w.byte(UInt8(ascii: ",")) }
                write(item, to: &w)
            }
            w.byte(UInt8(ascii: "]"))
        case .dictionary(let entries):
            w.byte(UInt8(ascii: "{"))
            for (index, (key, item)) in entries.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { w.byte(UInt8(ascii: ",")) }
                w.key(key)
                write(item, to: &w)
            }
            w.byte(UInt8(ascii: "}"))
        }
    }

    /// `TIME LEVEL MESSAGE key=value …`; values with spaces, quotes or `=` are quoted.
    static func textLine(time: String, level: Logger.Level, message: String, metadata: Logger.Metadata) -> [UInt8] {
        var text = "\(time) \(level.rawValue) \(message)"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            let plain = value.description
            let quoted = plain.isEmpty || plain.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline })
            text += " \(key)=" + (quoted ? "\"\(plain.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n"))\"" : plain)
        }
        return Array((text + "\n").utf8)
    }

    /// UTC wall time with milliseconds, RFC 3339: `2026-11-25T16:00:00.123Z`.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(now.tv_nsec / 1_000_000), 3))Z"
    }
}
