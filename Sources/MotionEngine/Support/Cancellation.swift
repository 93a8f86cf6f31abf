import Glibc
import Synchronization

/// A request to stop a computation whose answer nobody will read (its client left).
///
/// The server sets one as the thread's current cancellation (`withCurrent`) while a compute
/// thread runs a request, and cancels it from another thread when it sees the client gone.
/// The engine looks at it where a document's work is divided: each curve-segment charge of
/// the compiler (`TrackBuilder.charge`: before each property is built in each play, a `*`
/// path making one property per element it reaches, and before a body's bounces); within
/// one property, before each target of a chain of spring keyframes, every 256 springs
/// settled together and every 4,096 checks of their rest grid (`SpringSettling.settle`,
/// `cancellable`); each track a reduction takes
/// up; each track the `json` format samples, and every 65,536 samples of its frames layout
/// and of `csv`; and every 256 KB the server's gzip writes. Once cancelled, the compiler
/// stops as it stops at `--max-segments`, a reduction or encoder throws, and a grid being
/// written is cut short; what any of them then returns is thrown away by the caller. Work
/// between two looks is not interrupted: decoding (about 0.04 s for a 1 MiB body of
/// keyframes), one property's tween keyframes (about 0.02 s at `--max-segments`), and the
/// sampling of one track (a track of 1,300,000 frames, as long as `--max-response-bytes`
/// allows, is 0.13 s; release build).
///
/// A look costs a thread-specific read and an atomic load when there is a cancellation, and
/// the thread-specific read when there is none (as on connection threads and in tests).
public final class Cancellation: Sendable {
    private let cancelled = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)

    public init() {}

    /// Asks the computation to stop; any thread.
    public func cancel() { cancelled.store(true, ordering: .relaxed) }

    public var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Whether the engine found this cancellation and stopped: what it returned is then
    /// the problem of a stopped computation, not an answer. A computation cancelled after
    /// its last look ran to its end, and its answer is whole (a stream or session it made
    /// exists, and must be closed like any other whose client left).
    public var stoppedWork: Bool { stopped.load(ordering: .relaxed) }

    /// The problem a stopped computation reports (the answer is never sent).
    public static let message = "the computation was cancelled: its client left"
    static let problem = Problem(pointer: "", message: message, kind: .invalid)

    // MARK: - The thread's current cancellation

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create")
        return key
    }()

    /// The cancellation of the computation this thread is running, if any.
    public static var current: Cancellation? {
        pthread_getspecific(key).map { Unmanaged<Cancellation>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Throws the problem of a stopped computation when this thread's has been asked to
    /// stop (`isRequested`): the look of a reduction, before each track or channel.
    static func check() throws(DocumentError) {
        if isRequested { throw stopped }
    }

    /// What a computation that found its cancellation throws.
    static var stopped: DocumentError { DocumentError([problem]) }

    /// Whether this thread's computation has been asked to stop; a look that answers true
    /// is one where the engine stops (`stoppedWork`).
    public static var isRequested: Bool {
        guard let current, current.isCancelled else { return false }
        current.stopped.store(true, ordering: .relaxed)
        return true
    }

    /// Runs `body` with `cancellation` as this thread's current one (it is kept alive by the
    /// caller for the call), then puts the previous one back.
    public static func withCurrent<Result>(_ cancellation: Cancellation?, _ body: () throws -> Result) rethrows -> Result {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, cancellation.map { UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()) })
        defer { pthread_setspecific(key, previous) }
        return try withExtendedLifetime(cancellation) { try body() }
    }
}

/// A look for the thread's cancellation every `every` units of work in a loop (samples
/// written, springs settled): the loop says how much it did, and the look comes each time
/// the count reaches `every`.
struct PeriodicLook {
    let every: Int
    private var since = 0

    init(every: Int) { self.every = every }

    /// Counts `work` more; true when this was a look and it found the cancellation.
    mutating func isRequested(after work: Int) -> Bool {
        since &+= work
        guard since >= every else { return false }
        since = 0
        return Cancellation.isRequested
    }
}
