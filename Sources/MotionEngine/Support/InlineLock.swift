import CSanitizerHooks
import Synchronization

/// A lock stored inside the object it guards: a `Mutex` (over one byte, see below), with the
/// shape of `NSLock.withLock`, for the locks every request takes.
///
/// `NSLock` is an object of its own holding a separately allocated `pthread_mutex_t`, and each
/// `lock()`/`unlock()` goes through a class method into `pthread_mutex_lock`. A request took
/// about fifteen such pairs (its in-flight count and held bytes, the connection guard's
/// phases, the inline budget, the metrics, the held tags, the frame-times text, its own
/// context) at about 130 instructions a pair, and allocated and freed one `NSLock` for its
/// context. `Mutex` locks with one atomic compare-and-swap when uncontended and sleeps on a
/// futex otherwise. Callgrind: a 304 for the small document 78,526 → 76,839 instructions a
/// request; Benchmarks/README.md, twelfth round.
///
/// Under ThreadSanitizer: `Mutex` hands a contended lock over inside the kernel (a
/// priority-inheriting futex), where the sanitizer cannot see it, so it took every access
/// the lock guards for a race (`make test-sanitize`: eight server processes reported
/// `ConnectionGuard`'s table, opened on one connection thread and closed on another).
/// `withLock` tells it where the lock is taken and given back (`CSanitizerHooks`); outside a
/// sanitizer build each of those is a test of a null symbol (callgrind, release: a 304 for
/// the small document 76,854 → 77,008 instructions, a distinct one 174,454 → 174,467, a
/// streamed frame 2,798 → 2,788, within the run-to-run spread).
public struct InlineLock: ~Copyable, Sendable {
    /// The value is a byte whose address, inside the lock, names it to the sanitizer.
    @usableFromInline let mutex = Mutex<UInt8>(0)

    public init() {}

    /// Runs `body` with the lock held. Inlinable, so that callers in other modules get it
    /// specialised: called as a generic function it looked up `Optional<Result>`'s metadata
    /// at run time on every call (about 700 instructions a lock, more than `NSLock`).
    @inlinable @inline(__always)
    public func withLock<Result>(_ body: () -> Result) -> Result {
        // Through a local rather than `Mutex.withLock`'s own result, which must be `sending`:
        // a generic result of the caller's closure cannot be proven so.
        var result: Result?
        mutex.withLock { place in
            motion_lock_acquired(&place)
            result = body()
            motion_lock_releasing(&place)
        }
        return result!
    }
}
