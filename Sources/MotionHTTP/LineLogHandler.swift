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
    var metadata: Logger.Metadata = [:] {
        didSet { sortedMetadata = metadata.sorted { $0.key < $1.key } }
    }
    /// `metadata` in key order, kept for `logAccess` (set rarely, read for every request).
    private(set) var sortedMetadata: [(key: String, value: Logger.Metadata.Value)] = []

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
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { appendField(key, value, json: true, to: &w) }
        w.raw("}\n")
        return w.bytes
    }

    /// One metadata field of a line: `,"key":value` in JSON (a key that would collide with a
    /// fixed field as `metadata.KEY`), ` key=value` in text (`appendTextValue`).
    static func appendField(_ key: String, _ value: Logger.Metadata.Value, json: Bool, to w: inout JSONWriter) {
        if json {
            w.byte(UInt8(ascii: ","))
            w.key(reservedKeys.contains(key) ? "metadata.\(key)" : key)
            write(value, to: &w)
        } else {
            w.byte(UInt8(ascii: " "))
            w.bytes.append(contentsOf: key.utf8)
            w.byte(UInt8(ascii: "="))
            appendTextValue(value.description, to: &w.bytes)
        }
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
        var w = JSONWriter(capacity: 256)
        w.bytes.append(contentsOf: time.utf8)
        w.byte(UInt8(ascii: " "))
        w.bytes.append(contentsOf: level.rawValue.utf8)
        w.byte(UInt8(ascii: " "))
        w.bytes.append(contentsOf: message.utf8)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { appendField(key, value, json: false, to: &w) }
        w.byte(UInt8(ascii: "\n"))
        return w.bytes
    }

    /// UTC wall time with milliseconds, RFC 3339: `2026-11-25T16:00:00.123Z`.
    static func timestamp() -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.timestampBytes)
        appendTimestamp(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The length of a timestamp: `2026-11-25T16:00:00.123Z`.
    static let timestampBytes = 24

    /// Appends the current UTC wall time as `timestamp()` writes it.
    static func appendTimestamp(to bytes: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        appendTimestamp(seconds: Int64(now.tv_sec), milliseconds: Int(now.tv_nsec / 1_000_000), to: &bytes)
    }

    /// Appends `seconds` since the Unix epoch (0 … 253,402,300,799: years 1970 … 9999) and
    /// `milliseconds` as RFC 3339 UTC. The civil date is computed from the day number
    /// (Howard Hinnant's `civil_from_days`) and written digit by digit, with no `String` per
    /// field: about 1,000 instructions a line (callgrind).
    static func appendTimestamp(seconds: Int64, milliseconds: Int, to bytes: inout [UInt8]) {
        let clamped = min(max(seconds, 0), 253_402_300_799)
        let days = clamped / 86_400, secondOfDay = Int(clamped % 86_400)
        // Days since 0000-03-01, in 400-year eras of 146,097 days.
        let z = days + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1)
        let month = Int(shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9)
        let year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(year, 4); bytes.append(UInt8(ascii: "-"))
        digits(month, 2); bytes.append(UInt8(ascii: "-"))
        digits(day, 2); bytes.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3_600, 2); bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2); bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2); bytes.append(UInt8(ascii: "."))
        digits(min(max(milliseconds, 0), 999), 3); bytes.append(UInt8(ascii: "Z"))
    }
}

/// One request's access-log fields (`HTTPDaemon.logAccess`).
struct AccessRecord {
    var requestID: String
    var method: String
    var path: String
    var status: Int
    var bytes: Int
    /// Seconds, rounded to the microsecond.
    var duration: Double
    var client: String

    /// The fields as the metadata `logger.info("request", metadata:)` is given, for a
    /// handler other than `LineLogHandler` (and as the reference `LineLogHandler.accessLine`
    /// is tested against).
    var metadata: Logger.Metadata {
        ["requestId": .string(requestID), "method": .string(method), "path": .string(path),
         "status": .stringConvertible(status), "bytes": .stringConvertible(bytes),
         "duration": .stringConvertible(duration), "client": .string(client)]
    }
}

extension LineLogHandler {
    /// Writes the access line for `record`: the same bytes as
    /// `log(event:)` with the message "request" at level info and `record.metadata`, but
    /// written straight into one buffer, with no metadata dictionary to build, merge and
    /// sort. The access line is written for every request at the default level; through
    /// swift-log it cost about 85,000 user-space instructions a request, as much as the rest
    /// of the small document's request (callgrind, 2026-11-28: 260,400 → 184,700 a request
    /// with text lines, 225,200 → 185,400 with JSON; the rest of that gain is the client
    /// address kept per connection, `ConnectionGuard.Track.clientAddress`).
    func logAccess(_ record: AccessRecord) {
        output.write(accessLine(time: nil, record))
    }

    /// The access line with `time` (nil: now).
    func accessLine(time: String?, _ record: AccessRecord) -> [UInt8] {
        var w = JSONWriter(capacity: 256 + record.path.utf8.count)
        let json = format == .json
        if json { w.raw("{\"time\":\"") }
        if let time { w.bytes.append(contentsOf: time.utf8) } else { Self.appendTimestamp(to: &w.bytes) }
        if json {
            w.raw("\",\"level\":\"info\",\"logger\":")
            w.string(label)
            w.raw(",\"message\":\"request\"")
        } else {
            w.raw(" info request")
        }
        // The record's keys in order, merged with the handler's own (sorted) metadata; a
        // key in both is the record's, as in `log(event:)`'s merge.
        var own = sortedMetadata[...]
        func ownBefore(_ key: StaticString) {
            guard !own.isEmpty else { return }
            let name = key.description
            while let first = own.first, first.key <= name {
                own = own.dropFirst()
                if first.key == name { continue }
                Self.appendField(first.key, first.value, json: json, to: &w)
            }
        }
        ownBefore("bytes"); accessField("bytes", .integer(record.bytes), &w)
        ownBefore("client"); accessField("client", .text(record.client), &w)
        ownBefore("duration"); accessField("duration", .number(record.duration), &w)
        ownBefore("method"); accessField("method", .text(record.method), &w)
        ownBefore("path"); accessField("path", .text(record.path), &w)
        ownBefore("requestId"); accessField("requestId", .text(record.requestID), &w)
        ownBefore("status"); accessField("status", .integer(record.status), &w)
        for (key, value) in own { Self.appendField(key, value, json: json, to: &w) }
        if json { w.raw("}\n") } else { w.byte(UInt8(ascii: "\n")) }
        return w.bytes
    }

    private enum AccessValue {
        case text(String), integer(Int), number(Double)
    }

    private func accessField(_ key: StaticString, _ value: AccessValue, _ w: inout JSONWriter) {
        if format == .json {
            w.raw(",\"")
            w.raw(key)
            w.raw("\":")
            switch value {
            case .text(let text): w.string(text)
            case .integer(let n): w.integer(n)
            case .number(let n): if n.isFinite { w.number(n) } else { w.string(n.description) }
            }
        } else {
            w.byte(UInt8(ascii: " "))
            w.raw(key)
            w.byte(UInt8(ascii: "="))
            switch value {
            case .text(let text): Self.appendTextValue(text, to: &w.bytes)
            case .integer(let n): w.integer(n)
            case .number(let n): if n.isFinite { w.descriptionText(n) } else { Self.appendTextValue(n.description, to: &w.bytes) }
            }
        }
    }

    /// A value of a text line: bare, or in quotes with `\\`, `\"` and `\n` escaped when it is
    /// empty or holds a space, a quote, `=` or a line break (`Character.isNewline`).
    static func appendTextValue(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            guard !utf8.isEmpty, !needsQuotes(utf8) else {
                bytes.append(UInt8(ascii: "\""))
                for byte in utf8 {
                    switch byte {
                    case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
                    case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
                    case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
                    default: bytes.append(byte)
                    }
                }
                bytes.append(UInt8(ascii: "\""))
                return
            }
            bytes.append(contentsOf: utf8)
        }
    }

    /// A space, a quote, `=`, or one of `Character.isNewline`'s line breaks (LF, VT, FF, CR,
    /// NEL U+0085, LS U+2028, PS U+2029).
    private static func needsQuotes(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        for (i, byte) in utf8.enumerated() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\""), UInt8(ascii: "="), 0x0A...0x0D: return true
            case 0xC2: if i + 1 < utf8.count, utf8[i + 1] == 0x85 { return true }
            case 0xE2: if i + 2 < utf8.count, utf8[i + 1] == 0x80, utf8[i + 2] == 0xA8 || utf8[i + 2] == 0xA9 { return true }
            default: continue
            }
        }
        return false
    }
}
