import MotionEngine
import Synchronization

/// The id of one request, for the access log, the `X-Request-Id` response header and the
/// `requestId` of problem bodies.
///
/// A client's (or proxy's) `X-Request-Id` is kept when it is 1…128 characters of
/// `A–Z a–z 0–9 . _ : -` (enough for UUIDs, W3C trace ids and nginx's `$request_id`);
/// anything else — too long, empty, other characters — is replaced by a generated id, so
/// what reaches logs and headers is always short and safe to write unquoted.
enum RequestID {
    static let maxLength = 128

    static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: ":"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }

    /// The client's id when valid, else a new one.
    static func accept(_ header: String?) -> String {
        if let header, isValid(header) { return header }
        return generate()
    }

    /// 32 hexadecimal digits (128 bits) that look random, written straight into the string's
    /// storage (no array of digits and bytes first).
    ///
    /// No system call an id: each is a serial number mixed with a random key drawn once per
    /// process, through a bijection (SplitMix64's finaliser), so no two ids of one process are
    /// equal (the first word alone is distinct for 2^64 ids) and every start draws a fresh
    /// key. `SystemRandomNumberGenerator` read the kernel's generator twice an id: two
    /// `getrandom` calls a request, a third of the small document's system calls (strace).
    static func generate() -> String {
        let serial = serials.add(1, ordering: .relaxed).newValue
        let words = (mix(serial &+ key.0), mix(serial ^ key.1))
        return String(unsafeUninitializedCapacity: 32) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for (start, value) in [(0, words.0), (16, words.1)] {
                var word = value
                for offset in 0..<16 {
                    buffer[start + offset] = digits.utf8Start[Int(word & 0xF)]
                    word >>= 4
                }
            }
            return 32
        }
    }

    private static let key: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()

    private static let serials = Atomic<UInt64>(0)

    /// SplitMix64's output function: a bijection on 64-bit words that spreads every input bit
    /// over the whole word.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

extension HTTPResponse {
    /// The answer carrying `id`: an `X-Request-Id` header and, in a problem+json body,
    /// `"requestId"` as its first member. Applied once (a response that already has the
    /// header is returned as it is).
    ///
    /// `consuming`, and `self` moved into the result after its last read: the header list is
    /// then appended to in place rather than copied (with `finished` and `withCORS` the same
    /// way, the small document of `make bench-instructions`: 193,039 → 190,862 instructions a request).
    consuming func tagged(requestID id: String) -> HTTPResponse {
        guard !headers.contains(where: { $0.0 == "X-Request-Id" }) else { return self }
        let problem = headers.contains(where: { $0.0 == "Content-Type" && $0.1 == "application/problem+json" })
        var tagged = self
        tagged.headers.append(("X-Request-Id", id))
        if problem, case .bytes(let body) = tagged.body, body.first == UInt8(ascii: "{") {
            var w = JSONWriter(capacity: body.count + id.utf8.count + 16)
            w.raw("{\"requestId\":")
            w.string(id)
            if body.count > 2 { w.byte(UInt8(ascii: ",")) }
            w.bytes.append(contentsOf: body.dropFirst())
            tagged.body = .bytes(w.bytes)
        }
        return tagged
    }
}
