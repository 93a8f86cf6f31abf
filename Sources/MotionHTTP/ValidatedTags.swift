import Foundation
import MotionEngine

/// The tags of documents this process computed without a problem, so that a request
/// revalidating one of them (`If-None-Match` listing its tag) is answered 304 from its parsed
/// body and tag alone, without decoding and compiling the document again.
///
/// That answer is the one a full computation would give. A tag names the engine's version,
/// the endpoint and the canonical document (`RequestTag`), and within one process the limits
/// do not change, so a document that was computed without a problem once is computed
/// without one again: its 304 would have come after the compile anyway. A document never
/// computed here (another process's tag, or one the client made up) takes the full path,
/// which still refuses it if it has a problem.
///
/// A direct-mapped table of `capacity` slots (a power of two; by default 4,096 of 24 bytes,
/// 96 KiB): a tag's slot is picked by its own bits, and a later tag falling in the same slot
/// replaces it, so a tag is forgotten after about `capacity` other documents. Callgrind, the
/// small document: a 304 whose tag is held 144,199 → 85,551 instructions a request; a 200
/// pays 390 more to record its tag once the table is full (187,004 → 187,394). A `Set` with
/// first-in-first-out eviction cost 1,545 there (each removal rehashes its neighbours with
/// SipHash); the table allocates nothing after start-up.
final class ValidatedTags: @unchecked Sendable {
    static let defaultCapacity = 4096

    /// Slots: a power of two, 0 to hold nothing.
    let capacity: Int
    private let lock = InlineLock()
    private var slots: [FNV1a128?]

    /// `capacity` rounded up to a power of two (0 stays 0; at most 2^20 slots).
    init(capacity: Int = ValidatedTags.defaultCapacity) {
        let wanted = min(max(0, capacity), 1 << 20)
        var slots = wanted > 0 ? 1 : 0
        while slots < wanted { slots <<= 1 }
        self.capacity = slots
        self.slots = Array(repeating: nil, count: slots)
    }

    /// The slot `tag` lives in (`capacity` > 0).
    func slot(of tag: FNV1a128) -> Int {
        Int(truncatingIfNeeded: tag.high ^ tag.low) & (capacity - 1)
    }

    func contains(_ tag: FNV1a128) -> Bool {
        guard capacity > 0 else { return false }
        let index = slot(of: tag)
        return lock.withLock { slots[index] == tag }
    }

    /// Records `tag`, in place of whichever tag held its slot.
    func insert(_ tag: FNV1a128) {
        guard capacity > 0 else { return }
        let index = slot(of: tag)
        lock.withLock { slots[index] = tag }
    }

    /// Tags held.
    var count: Int {
        lock.withLock { slots.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }
    }
}
