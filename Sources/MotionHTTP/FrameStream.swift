import MotionEngine

/// One `/v1/streams` response: the frames of a compiled timeline, released as they come due
/// on a clock running at wall time × `speed` from the moment the response starts (`speed` 0:
/// as fast as the client reads).
///
/// Frames are encoded when the socket can take them, up to `chunkBytes` at a time, so a slow
/// reader only delays them: nothing is dropped and memory stays bounded.
final class FrameStream: PacedStream, @unchecked Sendable {
    private var encoder: FrameStreamEncoder
    private let speed: Double
    private let chunkBytes: Int
    private var startNanos: UInt64?
    private let metrics: ServiceMetrics
    /// Phases of the grid a paced stream starts on (`StreamPacer.gridTick(atOrAfter:phases:)`).
    private let gridPhases: UInt64
    /// The timeline's share of `--max-live-segments`, given back when the stream is freed.
    var liveSegments: LiveSegmentBudget.Reservation?

    init(encoder: FrameStreamEncoder, speed: Double, chunkBytes: Int, metrics: ServiceMetrics, gridPhases: UInt64) {
        self.encoder = encoder
        self.speed = speed
        self.chunkBytes = chunkBytes
        self.metrics = metrics
        self.gridPhases = gridPhases
    }

    override func fill(now: UInt64, into bytes: inout [UInt8]) {
        // Paced streams start on a phase of the pacer's 60 Hz grid (at most 1/(60 × phases) s
        // from now), so that the frames of streams started at different times come due in
        // the same wake.
        if startNanos == nil { startNanos = speed == 0 ? now : StreamPacer.gridTick(atOrAfter: now, phases: gridPhases) }
        if draining {
            encoder.writeEnd(into: &bytes, interrupted: "shutdown")
            ended = true
            endReason = "shutdown"
            return
        }
        var frames = 0
        defer {
            metrics.framesSent(frames)
            framesSent += frames
        }
        let limit = bytes.count + chunkBytes
        while bytes.count < limit {
            if let t = encoder.nextFrameTime {
                guard let due = dueNanos(t), due <= now else {
                    quietUntil = dueNanos(t) ?? 0
                    return
                }
                encoder.writeNext(into: &bytes)
                frames += 1
            } else {
                encoder.writeNext(into: &bytes)
                ended = true
                return
            }
        }
    }

    override func dueIsHeavy(now: UInt64) -> Bool {
        encoder.eventsOnNextFrame > Self.heavyEvents
    }

    override func endUnread(into bytes: inout [UInt8]) {
        encoder.writeEnd(into: &bytes, interrupted: "unread")
    }

    /// At speed 0 the stream is not paced (as fast as the client reads): libmicrohttpd's pull.
    override var allowsDirectWrites: Bool { speed != 0 }

    override func nextWake(now: UInt64) -> UInt64? {
        dueNanos(encoder.nextFrameTime) ?? now
    }

    /// Monotonic time at which virtual time t is due; nil when nothing is left.
    private func dueNanos(_ t: Double?) -> UInt64? {
        guard let t, let start = startNanos else { return nil }
        if speed == 0 { return start }
        let offsetSeconds = max(0, (t - encoder.timeline.window.start) / speed)
        // Centuries away at a tiny speed: capped (the pacer wakes in steps anyway); a NaN
        // offset cannot occur for finite times, but must not trap if it did.
        guard offsetSeconds.isFinite else { return start + 9_000_000_000_000_000_000 }
        return start + UInt64(min(offsetSeconds * 1e9, 9e18))
    }
}
