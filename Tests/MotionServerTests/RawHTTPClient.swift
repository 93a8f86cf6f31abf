import Foundation
import Glibc

/// Reads a /proc file (their reported size is 0, so read until EOF).
func readProcFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0, errno == EINTR { continue }
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Seconds on a monotonic clock, for timestamps and deadlines.
func monotonicSeconds() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}

struct HTTPClientError: Error, CustomStringConvertible {
    var description: String
    /// True when a read gave up because nothing arrived in time.
    var isTimeout = false
    /// True when the peer closed (FIN) or reset the connection.
    var isClosed = false
}

/// A response as it came over the wire.
struct RawHTTPResponse {
    var version: String
    var status: Int
    var reason: String
    /// Every header line in order, repeated names kept.
    var headers: [(name: String, value: String)]
    /// The decoded body (chunks concatenated for a chunked body).
    var body: [UInt8]
    /// The chunks exactly as framed, for a chunked body; nil otherwise.
    var chunks: [[UInt8]]?
    /// Trailer lines of a chunked body.
    var trailers: [(name: String, value: String)] = []

    /// The first value of a header, case-insensitively.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of a (possibly repeated) header, case-insensitively.
    func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    var isChunked: Bool {
        header("Transfer-Encoding")?.lowercased().contains("chunked") ?? false
    }

    /// The media type of Content-Type without parameters, lower-cased.
    var mediaType: String? {
        header("Content-Type").map {
            $0.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        }
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    func json() throws -> JSONValue { try JSONValue.parse(body) }
}

/// A small blocking HTTP/1.1 client over one POSIX socket. Every read is bounded by
/// `SO_RCVTIMEO` (`readTimeout`) and by an overall deadline per operation, so a test can fail
/// but never hang. It sends exactly the bytes it is given, which makes malformed and
/// conflicting requests possible, and it can keep one connection for several requests.
final class RawHTTPClient {
    let host: String
    let port: UInt16
    /// Longest wait for any single `recv`.
    let readTimeout: TimeInterval
    /// Longest a whole response (or `readChunk`) may take.
    var operationTimeout: TimeInterval

    private var socketFD: Int32 = -1
    private var buffer: [UInt8] = []
    private var cursor = 0
    private var deadline = Double.infinity
    /// Whether the peer has closed its side (a read returned 0).
    private(set) var peerClosed = false

    var isOpen: Bool { socketFD >= 0 }

    /// `receiveBufferBytes` shrinks the socket's receive buffer (SO_RCVBUF, set before
    /// connecting), so that a client that stops reading soon stalls the server's writes.
    /// `sourceAddress`: the local IPv4 address to connect from (another loopback address,
    /// such as 127.0.0.2, stands for a second client machine).
    init(port: UInt16, host: String = "127.0.0.1", readTimeout: TimeInterval = 10, operationTimeout: TimeInterval = 30,
         receiveBufferBytes: Int32? = nil, sourceAddress: String? = nil) throws {
        self.host = host
        self.port = port
        self.readTimeout = readTimeout
        self.operationTimeout = operationTimeout
        try connect(receiveBufferBytes: receiveBufferBytes, sourceAddress: sourceAddress)
    }

    deinit { close() }

    private func connect(receiveBufferBytes: Int32?, sourceAddress: String?) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPClientError(description: "socket() failed: \(String(cString: strerror(errno)))") }
        var tv = timeval(tv_sec: Int(readTimeout), tv_usec: __suseconds_t((readTimeout - Double(Int(readTimeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if var size = receiveBufferBytes {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }

        if let sourceAddress {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, sourceAddress, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                Glibc.close(fd)
                throw HTTPClientError(description: "bind to \(sourceAddress) failed: \(String(cString: strerror(errno)))")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            Glibc.close(fd)
            throw HTTPClientError(description: "not an IPv4 address: \(host)")
        }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let message = String(cString: strerror(errno))
            Glibc.close(fd)
            throw HTTPClientError(description: "connect to \(host):\(port) failed: \(message)", isClosed: true)
        }
        socketFD = fd
    }

    /// Closes the connection with a FIN.
    func close() {
        guard socketFD >= 0 else { return }
        Glibc.close(socketFD)
        socketFD = -1
    }

    /// Closes the sending side only (a FIN; the answer can still be read).
    func shutdownWrite() {
        guard socketFD >= 0 else { return }
        shutdown(socketFD, Int32(SHUT_WR))
    }

    /// Closes the connection with a RST (SO_LINGER 0): the abrupt end of a client that died.
    func closeAbruptly() {
        guard socketFD >= 0 else { return }
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(socketFD, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        Glibc.close(socketFD)
        socketFD = -1
    }

    /// The local (client-side) port of the connection.
    var localPort: UInt16? {
        guard socketFD >= 0 else { return nil }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
        }
        return result == 0 ? UInt16(bigEndian: address.sin_port) : nil
    }

    /// The fields of the server's socket of this connection in Linux's /proc/net/tcp
    /// (`sl local rem st tx_queue:rx_queue tr:tm->when …`); nil if not found.
    private func serverSocketFields() -> [Substring]? {
        guard let client = localPort, let table = readProcFile("/proc/net/tcp") else { return nil }
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 5 else { continue }
            let local = fields[1].split(separator: ":"), remote = fields[2].split(separator: ":")
            guard local.count == 2, remote.count == 2,
                  UInt16(local[1], radix: 16) == port, UInt16(remote[1], radix: 16) == client else { continue }
            return fields
        }
        return nil
    }

    /// Bytes the server has written to this connection that the kernel has not delivered
    /// yet (the server socket's send queue); nil if not found.
    func serverSendQueueBytes() -> Int? {
        serverSocketFields()?[4].split(separator: ":").first.flatMap { Int($0, radix: 16) }
    }

    /// The timer running on the server's socket of this idle connection: `kind` 0 none,
    /// 1 retransmit, 2 keepalive (…), and the clock ticks until it fires; nil if not found.
    func serverSocketTimer() -> (kind: Int, ticks: Int)? {
        guard let timer = serverSocketFields()?[5].split(separator: ":"), timer.count == 2,
              let kind = Int(timer[0], radix: 16), let ticks = Int(timer[1], radix: 16) else { return nil }
        return (kind, ticks)
    }

    /// Waits until the server can write no more to this (unread) connection: its send queue
    /// is non-empty and has not changed for `quietPeriod`. False if that does not happen
    /// within `timeout`.
    func waitForServerToStall(quietPeriod: TimeInterval = 0.3, timeout: TimeInterval = 15) -> Bool {
        let end = monotonicSeconds() + timeout
        var last: Int?
        var since = monotonicSeconds()
        while monotonicSeconds() < end {
            let queued = serverSendQueueBytes()
            if queued != last {
                last = queued
                since = monotonicSeconds()
            } else if let queued, queued > 0, monotonicSeconds() - since >= quietPeriod {
                return true
            }
            usleep(20_000)
        }
        return false
    }

    // MARK: - Sending

    func send(_ bytes: [UInt8]) throws {
        guard socketFD >= 0 else { throw HTTPClientError(description: "send on a closed client", isClosed: true) }
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(socketFD, raw.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                throw HTTPClientError(description: "send failed: \(String(cString: strerror(code)))",
                                      isTimeout: code == EAGAIN || code == EWOULDBLOCK,
                                      isClosed: code == EPIPE || code == ECONNRESET)
            }
            sent += n
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Writes one request. `Host` is added unless given; `Content-Length` is added for a
    /// body unless a `Content-Length` or `Transfer-Encoding` header is given. With
    /// `chunks`, the body is sent with chunked transfer encoding, one chunk per element.
    func sendRequest(_ method: String, _ target: String, headers: [(String, String)] = [],
                     body: [UInt8]? = nil, chunks: [[UInt8]]? = nil) throws {
        var head = "\(method) \(target) HTTP/1.1\r\n"
        let names = Set(headers.map { $0.0.lowercased() })
        if !names.contains("host") { head += "Host: \(host):\(port)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        var payload: [UInt8] = []
        if let chunks {
            if !names.contains("transfer-encoding") { head += "Transfer-Encoding: chunked\r\n" }
            for chunk in chunks where !chunk.isEmpty {
                payload += Array(String(chunk.count, radix: 16).utf8) + [13, 10] + chunk + [13, 10]
            }
            payload += Array("0\r\n\r\n".utf8)
        } else if let body {
            if !names.contains("content-length"), !names.contains("transfer-encoding") {
                head += "Content-Length: \(body.count)\r\n"
            }
            payload = body
        }
        head += "\r\n"
        try send(Array(head.utf8) + payload)
    }

    /// Sends a request and reads its response.
    func request(_ method: String, _ target: String, headers: [(String, String)] = [],
                 body: [UInt8]? = nil, chunks: [[UInt8]]? = nil) throws -> RawHTTPResponse {
        try sendRequest(method, target, headers: headers, body: body, chunks: chunks)
        return try readResponse(isHead: method == "HEAD")
    }

    /// POSTs JSON text.
    func postJSON(_ target: String, _ json: String, headers: [(String, String)] = []) throws -> RawHTTPResponse {
        try request("POST", target, headers: [("Content-Type", "application/json")] + headers, body: Array(json.utf8))
    }

    // MARK: - Reading

    /// Reads one complete response (skipping interim 1xx responses).
    func readResponse(isHead: Bool = false) throws -> RawHTTPResponse {
        deadline = monotonicSeconds() + operationTimeout
        defer { deadline = .infinity }
        var response = try readHeadLocked()
        while (100..<200).contains(response.status) { response = try readHeadLocked() }
        if isHead || response.status == 204 || response.status == 304 { return response }
        if response.isChunked {
            var chunks: [[UInt8]] = []
            while let chunk = try readChunkLocked(trailers: &response.trailers) { chunks.append(chunk) }
            response.chunks = chunks
            response.body = chunks.flatMap { $0 }
        } else if let lengthText = response.header("Content-Length") {
            guard let length = Int(lengthText.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                throw HTTPClientError(description: "bad Content-Length in response: \(lengthText)")
            }
            response.body = try readExactly(length)
        } else {
            response.body = try readToEnd()
        }
        return response
    }

    /// Reads only the status line and headers (for streams: follow with `readChunk()`).
    func readResponseHead() throws -> RawHTTPResponse {
        deadline = monotonicSeconds() + operationTimeout
        defer { deadline = .infinity }
        var response = try readHeadLocked()
        while (100..<200).contains(response.status) { response = try readHeadLocked() }
        return response
    }

    /// The next chunk of a chunked body, or nil after the terminating zero-size chunk (and
    /// its trailers) has been read.
    func readChunk() throws -> [UInt8]? {
        deadline = monotonicSeconds() + operationTimeout
        defer { deadline = .infinity }
        var trailers: [(name: String, value: String)] = []
        return try readChunkLocked(trailers: &trailers)
    }

    /// Whether bytes already received but not consumed are waiting.
    var hasBufferedBytes: Bool { cursor < buffer.count }

    /// Waits up to `timeout` for the peer to close the connection; true if it did (EOF or
    /// reset), false if it stayed open. Data that arrives meanwhile is kept in the buffer.
    func waitForPeerClose(timeout: TimeInterval) -> Bool {
        let end = monotonicSeconds() + timeout
        while monotonicSeconds() < end {
            do {
                deadline = end
                if try !fill() { deadline = .infinity; return true }
            } catch let error as HTTPClientError {
                deadline = .infinity
                if error.isClosed { return true }
                if error.isTimeout { continue }
                return false
            } catch {
                return false
            }
        }
        deadline = .infinity
        return false
    }

    private func readHeadLocked() throws -> RawHTTPResponse {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw HTTPClientError(description: "bad status line: \(statusLine.debugDescription)")
        }
        var response = RawHTTPResponse(version: String(parts[0]), status: status,
                                       reason: parts.count > 2 ? String(parts[2]) : "",
                                       headers: [], body: [])
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else {
                throw HTTPClientError(description: "bad header line: \(line.debugDescription)")
            }
            response.headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return response
    }

    private func readChunkLocked(trailers: inout [(name: String, value: String)]) throws -> [UInt8]? {
        let sizeLine = try readLine()
        let sizeText = sizeLine.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard let size = Int(sizeText, radix: 16), size >= 0 else {
            throw HTTPClientError(description: "bad chunk size line: \(sizeLine.debugDescription)")
        }
        if size == 0 {
            while true {
                let line = try readLine()
                if line.isEmpty { return nil }
                if let colon = line.firstIndex(of: ":") {
                    trailers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
                }
            }
        }
        let data = try readExactly(size)
        let end = try readLine()
        guard end.isEmpty else { throw HTTPClientError(description: "chunk not followed by CRLF: \(end.debugDescription)") }
        return data
    }

    /// One CRLF-terminated line, without the CRLF.
    private func readLine() throws -> String {
        var searchFrom = cursor
        while true {
            if buffer.count - searchFrom >= 2 {
                for i in searchFrom..<(buffer.count - 1) where buffer[i] == 13 && buffer[i + 1] == 10 {
                    let line = String(decoding: buffer[cursor..<i], as: UTF8.self)
                    cursor = i + 2
                    compact()
                    return line
                }
                searchFrom = buffer.count - 1
            }
            guard try fill() else {
                throw HTTPClientError(description: "connection closed while reading a line (got \(String(decoding: buffer[cursor...], as: UTF8.self).debugDescription))", isClosed: true)
            }
        }
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count - cursor < count {
            guard try fill() else {
                throw HTTPClientError(description: "connection closed after \(buffer.count - cursor) of \(count) body bytes", isClosed: true)
            }
        }
        let bytes = Array(buffer[cursor..<(cursor + count)])
        cursor += count
        compact()
        return bytes
    }

    private func readToEnd() throws -> [UInt8] {
        while try fill() {}
        let bytes = Array(buffer[cursor...])
        cursor = buffer.count
        compact()
        return bytes
    }

    private func compact() {
        if cursor > 0, cursor == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            cursor = 0
        } else if cursor > 64 * 1024 {
            buffer.removeFirst(cursor)
            cursor = 0
        }
    }

    /// Receives more bytes; false at end of stream. Throws on timeout, reset or deadline.
    @discardableResult
    private func fill() throws -> Bool {
        guard socketFD >= 0 else { throw HTTPClientError(description: "read on a closed client", isClosed: true) }
        if peerClosed { return false }
        if monotonicSeconds() > deadline {
            throw HTTPClientError(description: "operation took longer than \(operationTimeout) s", isTimeout: true)
        }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.recv(socketFD, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0..<n])
                return true
            }
            if n == 0 {
                peerClosed = true
                return false
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                throw HTTPClientError(description: "no data from the server within \(readTimeout) s", isTimeout: true)
            }
            throw HTTPClientError(description: "recv failed: \(String(cString: strerror(code)))",
                                  isClosed: code == ECONNRESET || code == EPIPE)
        }
    }
}

/// One line of a streamed body with the moment it was received.
struct TimedLine {
    var text: String
    /// `monotonicSeconds()` when the chunk carrying the end of the line arrived.
    var receivedAt: Double

    func json() throws -> JSONValue { try JSONValue.parse(text) }
}

/// Reads a chunked response body incrementally, line by line (NDJSON, SSE), remembering the
/// raw chunks and whether the terminating zero-size chunk arrived.
final class ChunkedLineReader {
    let client: RawHTTPClient
    private(set) var chunks: [[UInt8]] = []
    private(set) var sawTerminatingChunk = false
    private var pending: [UInt8] = []
    /// For the bytes in `pending`: where each received chunk ends, and when it arrived.
    private var arrivals: [(end: Int, time: Double)] = []

    init(client: RawHTTPClient) { self.client = client }

    /// The next `\n`-terminated line (without the newline); nil once the body has ended.
    /// A final fragment without a newline is returned as a line of its own.
    func nextLine() throws -> TimedLine? {
        while true {
            if let newline = pending.firstIndex(of: 10) {
                return take(newline + 1, lineEnd: newline)
            }
            if sawTerminatingChunk {
                guard !pending.isEmpty else { return nil }
                return take(pending.count, lineEnd: pending.count)
            }
            if let chunk = try client.readChunk() {
                chunks.append(chunk)
                pending += chunk
                arrivals.append((pending.count, monotonicSeconds()))
            } else {
                sawTerminatingChunk = true
            }
        }
    }

    private func take(_ count: Int, lineEnd: Int) -> TimedLine {
        let text = String(decoding: pending[..<lineEnd], as: UTF8.self)
        let time = arrivals.first { $0.end >= count }?.time ?? monotonicSeconds()
        pending.removeFirst(count)
        arrivals = arrivals.compactMap { $0.end - count > 0 ? ($0.end - count, $0.time) : nil }
        return TimedLine(text: text, receivedAt: time)
    }

    /// Every remaining line until the end of the body.
    func remainingLines() throws -> [TimedLine] {
        var lines: [TimedLine] = []
        while let line = try nextLine() { lines.append(line) }
        return lines
    }
}
