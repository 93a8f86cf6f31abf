/// Bounds on the work one document may ask for. Exceeding one is a 422 that names the limit.
public struct EngineLimits: Sendable, Equatable {
    /// Maximum frames × tracks in one response or stream.
    public var maxSamples: Int
    /// Maximum `fps`.
    public var maxFPS: Double
    /// Maximum groups and sequences nested inside one another (the outermost counted).
    public var maxDepth: Int
    /// Maximum events in one response or stream.
    public var maxEvents: Int
    /// Maximum `properties` entries summed over all nodes.
    public var maxProperties: Int
    /// Maximum bytes of one answer, estimated from the compiled timeline before anything is
    /// encoded (`OutputSize`): a whole `/v1/timelines` body, one stream frame with its
    /// events, or one session watcher read.
    public var maxResponseBytes: Int

    public init(maxSamples: Int = 2_000_000, maxFPS: Double = 1000, maxDepth: Int = 64,
                maxEvents: Int = 100_000, maxProperties: Int = 10_000, maxResponseBytes: Int = 64 << 20) {
        self.maxSamples = maxSamples
        self.maxFPS = maxFPS
        self.maxDepth = maxDepth
        self.maxEvents = maxEvents
        self.maxProperties = maxProperties
        self.maxResponseBytes = maxResponseBytes
    }

    public static let `default` = EngineLimits()
}
